"""The look of the printed appendix: fonts and the style sheets for a browser and for Qt."""
from __future__ import annotations

BODY_FONT = "DejaVu Sans"


MONO_FONT = "DejaVu Sans Mono"


BROWSER_CSS = f"""
body {{ font-family: "{BODY_FONT}", Arial, sans-serif; font-size: 10pt; color: #1b1b1b; max-width: 62em;
        margin: 2em auto; padding: 0 1em; line-height: 1.35; }}
h1 {{ font-size: 17pt; color: #1f3a60; border-bottom: 2px solid #1f3a60; padding-bottom: 3px;
      margin-top: 2em; page-break-before: always; }}
h2 {{ font-size: 13pt; color: #1f3a60; margin-top: 1.4em; }}
p.doctitle {{ font-size: 24pt; font-weight: bold; color: #1f3a60; margin: 0; }}
p.docsub {{ font-size: 14pt; margin: .2em 0 1em 0; }}
table.titleinfo td.tl {{ width: 9em; font-weight: bold; vertical-align: top; }}
p.caption {{ font-weight: bold; color: #1f3a60; margin: 1em 0 .25em 0; }}
p.note, p.intro {{ color: #444; }}
p.note {{ font-size: 8.5pt; font-style: italic; }}
table.grid {{ border-collapse: collapse; width: 100%; margin-bottom: .8em; }}
table.grid th, table.grid td {{ border: 1px solid #9aa4b1; padding: 3px 5px; vertical-align: top; text-align: left;
                                background: #ffffff; }}
table.grid thead th {{ background: #dfe6ef; }}
table.grid tr {{ page-break-inside: avoid; }}
table.small {{ font-size: 8.5pt; }}
table.slots td {{ text-align: center; font-size: 7.5pt; }}
table.grid td.grp {{ background: #eef1f5; font-weight: bold; color: #1f3a60; }}
table.grid td.missing, span.miss {{ background: #fff1c2; color: #9c1c1c; font-weight: bold; }}
td.mono {{ font-family: "{MONO_FONT}", monospace; }}
table.code {{ border-collapse: collapse; border: 1px solid #c3c8cf; margin: .2em 0 .6em 1.6em; width: 96%; }}
td.codebox {{ background: #f3f4f6; padding: 4px 8px; }}
table.code pre {{ font-family: "{MONO_FONT}", monospace; font-size: 8.5pt; white-space: pre-wrap; margin: 0; }}
p.codelabel {{ font-size: 8pt; font-weight: bold; color: #555; margin: .3em 0 .1em 0; }}
p.step {{ margin: .6em 0 .2em 0; }}
span.target {{ color: #555; font-size: 8.5pt; }}
p.unresolved {{ color: #9c1c1c; font-weight: bold; margin-left: 1.6em; }}
p.stepnote {{ font-size: 8.5pt; font-style: italic; color: #444; margin-left: 1.6em; }}
p.manual {{ color: #555; font-style: italic; font-size: 8.5pt; margin-left: 1.6em; }}
table.alert {{ border-collapse: collapse; border: 1px solid #c94c4c; margin-bottom: .5em; }}
td.alertbox {{ background: #fbe3e3; }}
p.alerthead {{ font-weight: bold; color: #7a1414; margin: 0; }}
td.sev-error {{ color: #9c1c1c; font-weight: bold; }}
td.sev-warning {{ color: #8a5a00; font-weight: bold; }}
p.tochead {{ font-size: 13pt; font-weight: bold; color: #1f3a60; margin-top: 1.2em; }}
img.diagram {{ max-width: 100%; border: 1px solid #c3c8cf; }}
img.chart {{ width: 100%; border: 1px solid #c3c8cf; }}
@page {{ size: letter; margin: 0.75in; }}
"""


QT_CSS = f"""
h1 {{ font-size: 16pt; font-weight: bold; color: #1f3a60; }}
h2 {{ font-size: 12.5pt; font-weight: bold; color: #1f3a60; }}
h3 {{ font-size: 11pt; font-weight: bold; color: #1f3a60; }}
p.doctitle {{ font-size: 22pt; font-weight: bold; color: #1f3a60; }}
p.docsub {{ font-size: 13pt; }}
td.tl {{ font-weight: bold; color: #1f3a60; }}
p.caption {{ font-weight: bold; color: #1f3a60; }}
p.intro {{ color: #333333; }}
p.note {{ font-size: 7.5pt; font-style: italic; color: #444444; }}
table.grid {{ border-collapse: collapse; border-color: #9aa4b1; border-style: solid; }}
th {{ background-color: #dfe6ef; font-weight: bold; }}
td.codebox {{ background-color: #f3f4f6; }}
table.small {{ font-size: 7.5pt; }}
table.slots {{ font-size: 6.5pt; }}
td.grp {{ background-color: #eef1f5; font-weight: bold; color: #1f3a60; }}
td.missing {{ background-color: #fff1c2; color: #9c1c1c; font-weight: bold; }}
span.miss {{ background-color: #fff1c2; color: #9c1c1c; font-weight: bold; }}
td.mono {{ font-family: '{MONO_FONT}'; }}
table.code {{ margin-left: 18px; }}
pre {{ font-family: '{MONO_FONT}'; font-size: 7.5pt; white-space: pre-wrap; margin-top: 0px; margin-bottom: 2px; }}
p.codelabel {{ font-size: 7pt; font-weight: bold; color: #555555; margin-top: 1px; margin-bottom: 1px; }}
p.codenote {{ font-size: 7pt; font-style: italic; color: #555555; }}
span.target {{ color: #555555; font-size: 7.5pt; }}
p.step {{ margin-top: 7px; margin-bottom: 2px; }}
p.unresolved {{ color: #9c1c1c; font-weight: bold; margin-left: 18px; }}
p.stepnote {{ font-size: 7.5pt; font-style: italic; color: #444444; margin-left: 18px; }}
p.manual {{ color: #555555; font-style: italic; font-size: 7.5pt; margin-left: 18px; }}
td.alertbox {{ background-color: #fbe3e3; }}
p.alerthead {{ font-weight: bold; color: #7a1414; }}
td.sev-error {{ color: #9c1c1c; font-weight: bold; }}
td.sev-warning {{ color: #8a5a00; font-weight: bold; }}
p.tochead {{ font-size: 12.5pt; font-weight: bold; color: #1f3a60; }}
td.toc {{ font-size: 10pt; }}
td.tocpage {{ font-size: 10pt; }}
a {{ color: #1b1b1b; text-decoration: none; }}
"""
