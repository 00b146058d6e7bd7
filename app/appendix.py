"""The printed appendices: configuration tables, storage layout, diagram, methodology, results.

`build_appendix(bed)` assembles the content as a list of blocks (headings, tables from
`app/report_tables.py`, methodology steps, the diagram).  The same blocks render three
ways: `to_html` (a standalone page for a browser, diagram embedded), `to_markdown`, and
PDF/printer output through `paint`/`write_pdf`.

PDF pagination is done here rather than by QTextDocument's own paged layout, because
that one cuts table rows in half at page ends.  Each block becomes a small QTextDocument
laid out at the page width; the paginator cuts only between table rows or text lines,
repeats a table's header row on the continuation page, keeps headings with what follows
them, and draws a running head and "Page N of M" on every page.  QtGui only: it runs
offscreen, in the CLI as in the GUI's print preview.
"""
from __future__ import annotations

import base64
import datetime as _dt
import html as _html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from app import report_tables as rt

BODY_FONT = "DejaVu Sans"
MONO_FONT = "DejaVu Sans Mono"
MISSING_MARK = "[not set]"
# Tables are drawn with collapsed borders: real strokes stay visible at any zoom.  (Rules made
# of the table background showing through 1 px cell spacing draw twice as fast in Qt, but
# vanish in viewers zoomed out below 100 %.)
_MISSING_IN_TEXT = re.compile(r"«missing:[^»]*»")


def esc(text: Any) -> str:
    return _html.escape(str(text), quote=True)


# =========================================================================== blocks

@dataclass
class Block:
    keep_with_next: bool = False
    page_break: bool = False
    space_before_pt: float = 4.0

    def html(self) -> str:  # pragma: no cover - every block overrides
        raise NotImplementedError

    def markdown(self) -> str:  # pragma: no cover
        raise NotImplementedError


@dataclass
class Heading(Block):
    text: str = ""
    level: int = 1
    anchor: str = ""

    def __post_init__(self) -> None:
        self.keep_with_next = True
        self.page_break = self.page_break or self.level == 1
        self.space_before_pt = {1: 0.0, 2: 12.0}.get(self.level, 8.0)

    def html(self) -> str:
        return f'<h{self.level} id="{esc(self.anchor)}">{esc(self.text)}</h{self.level}>'

    def markdown(self) -> str:
        return f"{'#' * self.level} {self.text}"


@dataclass
class Para(Block):
    text: str = ""
    css: str = ""          # class: note, intro, small

    def html(self) -> str:
        cls = f' class="{self.css}"' if self.css else ""
        return f"<p{cls}>{mark_missing(esc(self.text))}</p>"

    def markdown(self) -> str:
        return f"*{self.text}*" if self.css == "note" else self.text


@dataclass
class TableBlock(Block):
    table: rt.Table | None = None
    label: str = ""        # "Table A.1"

    def html(self) -> str:
        return table_html(self.table, self.label)

    def markdown(self) -> str:
        return table_markdown(self.table, self.label)


@dataclass
class StepsBlock(Block):
    """A run of methodology steps.  Printed as one document: hundreds of steps would
    otherwise cost a document each (half the time of a long appendix)."""
    steps: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.space_before_pt = 2.0

    def html(self) -> str:
        return "".join(step_html(s) for s in self.steps)

    def markdown(self) -> str:
        return "\n\n".join(step_markdown(s) for s in self.steps)


STEPS_PER_BLOCK = 40


def steps_blocks(steps: list) -> list[StepsBlock]:
    return [StepsBlock(steps=steps[i:i + STEPS_PER_BLOCK]) for i in range(0, len(steps), STEPS_PER_BLOCK)]


@dataclass
class ImageBlock(Block):
    caption: str = ""
    key: str = "diagram"
    chart: Any = None          # an app.metrics.report.Chart; None: the bed's diagram

    def html(self) -> str:     # the browser page embeds the image itself (see to_html)
        return f'<p class="caption">{esc(self.caption)}</p>'

    def markdown(self) -> str:
        return f"**{self.caption}**"


@dataclass
class TitleBlock(Block):
    title: str = ""
    subtitle: str = ""
    lines: list[tuple[str, str]] = field(default_factory=list)

    def html(self) -> str:
        rows = "".join(f'<tr><td class="tl">{esc(k)}</td><td class="tv">{esc(v)}</td></tr>' for k, v in self.lines)
        return (f'<p class="doctitle">{esc(self.title)}</p><p class="docsub">{esc(self.subtitle)}</p>'
                f'<table class="titleinfo" width="100%" cellspacing="0" cellpadding="2">{rows}</table>')

    def markdown(self) -> str:
        out = [f"# {self.title}", "", f"**{self.subtitle}**", ""]
        out += [f"- **{k}:** {v}" for k, v in self.lines]
        return "\n".join(out)


@dataclass
class FindingsBlock(Block):
    findings: list = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    accepted: int = 0
    limit: int = 40

    def _shown(self) -> list:
        return [f for f in self.findings if not f.accepted and f.severity in ("error", "warning")][: self.limit]

    def _headline(self) -> str:
        more = len([f for f in self.findings if not f.accepted and f.severity in ("error", "warning")]) - self.limit
        text = (f"Design review: this test bed has {self.errors} error(s) and {self.warnings} warning(s). "
                f"Values the bed does not give are marked {MISSING_MARK} or «missing» in the tables and steps below.")
        if more > 0:
            text += f" The first {self.limit} findings are listed; {more} more are not shown."
        if self.accepted:
            text += f" {self.accepted} finding(s) are accepted as documented exceptions."
        return text

    def html(self) -> str:
        rows = []
        for f in self._shown():
            cls = "sev-error" if f.severity == "error" else "sev-warning"
            rows.append(f'<tr><td class="{cls}">{esc(f.severity.upper())}</td><td>{esc(f.code)}</td>'
                        f'<td>{esc(", ".join(f.subjects[:4]))}</td><td>{esc(f.message)}</td></tr>')
        return (f'<table class="alert" width="100%" cellspacing="1" cellpadding="6" bgcolor="#c94c4c"><tr><td class="alertbox">'
                f'<p class="alerthead">{esc(self._headline())}</p></td></tr></table>'
                f'<table class="grid small" width="100%" border="1" cellspacing="0" cellpadding="3">'
                f'<thead><tr><th width="11%">Severity</th><th width="10%">Code</th><th width="21%">Components</th>'
                f'<th width="58%">Finding</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')

    def markdown(self) -> str:
        out = [f"> **{self._headline()}**", "", "| Severity | Code | Components | Finding |", "|---|---|---|---|"]
        for f in self._shown():
            out.append(f"| {f.severity.upper()} | {f.code} | {md_cell(', '.join(f.subjects[:4]))} | {md_cell(f.message)} |")
        return "\n".join(out)


@dataclass
class TocBlock(Block):
    entries: list[tuple[str, str]] = field(default_factory=list)   # (text, anchor)
    pages: dict[str, int] = field(default_factory=dict)             # anchor -> page, once paginated

    def html(self) -> str:
        rows = "".join(f'<tr><td class="toc"><a href="#{esc(a)}">{esc(t)}</a></td>'
                       f'<td class="tocpage" align="right">{self.pages.get(a, "") if self.pages else "000"}</td></tr>'
                       for t, a in self.entries)
        return (f'<p class="tochead">Contents</p><table class="tocs" width="100%" cellspacing="0" '
                f'cellpadding="2">{rows}</table>')

    def markdown(self) -> str:
        return "**Contents**\n\n" + "\n".join(f"- [{t}](#{a})" for t, a in self.entries)


@dataclass
class Appendix:
    bed: Any
    title: str
    blocks: list[Block]
    findings: list = field(default_factory=list)
    methodology: Any = None
    running_head: str = ""


# =========================================================================== HTML pieces

def mark_missing(escaped: str) -> str:
    """Wrap «missing: ...» markers of generated text so they stand out."""
    return _MISSING_IN_TEXT.sub(lambda m: f'<span class="miss">{m.group(0)}</span>', escaped)


def cell_html(c: rt.Cell, tag: str = "td", width: str = "") -> str:
    classes = []
    attrs = f' width="{width}"' if width else ""
    if c.missing:
        classes.append("missing")
        text = MISSING_MARK
    else:
        text = esc(c.text).replace("\n", "<br/>")
    if c.mono:
        classes.append("mono")
    if c.bold:
        text = f"<b>{text}</b>"
    if c.fill:
        attrs += f' style="background-color: {c.fill}"'
    if classes:
        attrs += f' class="{" ".join(classes)}"'
    return f"<{tag}{attrs}>{text}</{tag}>"


def table_html(t: rt.Table, label: str = "") -> str:
    ncols = len(t.columns)
    css = {"keyvalue": "grid kv", "slotmap": "grid slots"}.get(t.kind, "grid")
    if t.compact:
        css += " small"
    widths = t.widths or ([] if t.kind != "slotmap" else [7] + [93 / max(ncols - 1, 1)] * (ncols - 1))
    head_cells = []
    for i, name in enumerate(t.columns):
        w = f"{widths[i]:g}%" if i < len(widths) else ""
        head_cells.append(f'<th{f" width={chr(34)}{w}{chr(34)}" if w else ""}>{esc(name)}</th>')
    body = []
    for row in t.rows:
        if row.group:
            body.append(f'<tr><td class="grp" colspan="{ncols}">{esc(row.group)}</td></tr>')
            continue
        cells = [cell_html(c, width=f"{widths[i]:.2f}%" if t.kind == "slotmap" and i < len(widths) else "")
                 for i, c in enumerate(row.cells)]
        if t.kind == "slotmap":
            cells = [cells[0]] + [re.sub(r"^<td", '<td align="center"', x) for x in cells[1:]]
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"{label}: {t.title}" if label else t.title
    note = f'<p class="note">{esc(t.note)}</p>' if t.note else ""
    head = "" if t.kind == "slotmap" and not any(t.columns[1:]) else f'<thead><tr>{"".join(head_cells)}</tr></thead>'
    if t.kind == "slotmap":
        head = f'<thead><tr>{"".join(head_cells[:1])}<th colspan="{ncols - 1}">Drive slots (slot number, disk group)</th></tr></thead>'
    return (f'<p class="caption" id="{esc(t.key)}">{esc(caption)}</p>'
            f'<table class="{css}" width="100%" border="1" cellspacing="0" cellpadding="3">'
            f'{head}<tbody>{"".join(body)}</tbody></table>{note}')


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", "<br>")


def table_markdown(t: rt.Table, label: str = "") -> str:
    caption = f"{label}: {t.title}" if label else t.title
    cols = list(t.columns)
    if t.kind == "slotmap":
        cols = ["Enclosure", "Drive slots (number, group, drive)"] + [" "] * (len(cols) - 2)
    out = [f"**{caption}**", "", "| " + " | ".join(md_cell(c) or " " for c in cols) + " |",
           "|" + "---|" * len(cols)]
    for row in t.rows:
        if row.group:
            out.append("| **" + md_cell(row.group) + "** |" + " |" * (len(cols) - 1))
            continue
        cells = []
        for c in row.cells:
            if c.missing:
                cells.append(f"**{MISSING_MARK}**")
            elif c.bold and c.text:
                cells.append(f"**{md_cell(c.text)}**")
            elif c.mono and c.text:
                cells.append(f"`{md_cell(c.text)}`")
            else:
                cells.append(md_cell(c.text))
        out.append("| " + " | ".join(cells) + " |")
    if t.note:
        out += ["", f"*{t.note}*"]
    return "\n".join(out)


_SHELL_NAMES = {"powershell": "PowerShell", "bash": "bash", "vendor-cli": "Vendor CLI", "cmd": "Command prompt"}
_MD_LANG = {"powershell": "powershell", "bash": "bash", "vendor-cli": "text"}


def step_targets(step: Any) -> list[str]:
    """Hosts a step is done on: its target and any per-command target."""
    out = []
    target = getattr(step, "target", "") or ""
    if isinstance(target, str):
        if target:
            out.append(target)
    else:
        out += [t for t in target if t]
    for cmd in getattr(step, "automation", None) or []:
        t = getattr(cmd, "target", "")
        if t and t not in out:
            out.append(t)
    return out


_PLATFORM_NAMES = {"windows": "Windows", "linux": "Linux", "esxi": "ESXi", "array": "storage array"}


def command_label(cmd: Any) -> str:
    shell = _SHELL_NAMES.get(getattr(cmd, "shell", ""), getattr(cmd, "shell", "") or "Command")
    platform = getattr(cmd, "platform", "")
    target = getattr(cmd, "target", "")
    label = shell + (f" · {_PLATFORM_NAMES.get(platform, platform)}" if platform else "")
    return label + (f" on {target}" if target else "")


def step_html(step: Any) -> str:
    number = esc(getattr(step, "number", ""))
    text = mark_missing(esc(getattr(step, "text", "")))
    targets = step_targets(step)
    tags = list(targets) + ([] if getattr(step, "automation", None) else ["manual"])
    where = f' <span class="target">[{esc(" · ".join(tags))}]</span>' if tags else ""
    parts = [f'<p class="step"><b>{number}.</b> {text}{where}</p>']
    unresolved = [str(u) for u in getattr(step, "unresolved", None) or []]
    if unresolved:
        parts.append(f'<p class="unresolved">Unresolved: {esc(", ".join(unresolved))}. '
                     f'Set these in the bed before running this step.</p>')
    for cmd in getattr(step, "automation", None) or []:
        inner = f'<p class="codelabel">{esc(command_label(cmd))}</p><pre>{mark_missing(esc(cmd.script))}</pre>'
        if getattr(cmd, "verify", None):
            inner += f'<p class="codelabel">Verify</p><pre>{mark_missing(esc(cmd.verify))}</pre>'
        if getattr(cmd, "note", ""):
            inner += f'<p class="codenote">{esc(cmd.note)}</p>'
        parts.append(f'<table class="code" width="100%" cellspacing="1" cellpadding="5" border="0" bgcolor="#c3c8cf">'
                     f'<tr><td class="codebox">{inner}</td></tr></table>')
    return "".join(parts)


def step_markdown(step: Any) -> str:
    targets = step_targets(step)
    out = [f"**{step.number}.** {step.text}" + (f" *[{', '.join(targets)}]*" if targets else "")]
    unresolved = [str(u) for u in getattr(step, "unresolved", None) or []]
    if unresolved:
        out += ["", f"> **Unresolved:** {', '.join(unresolved)}"]
    for cmd in getattr(step, "automation", None) or []:
        lang = _MD_LANG.get(cmd.shell, "")
        out += ["", f"*{command_label(cmd)}:*", "", f"```{lang}", cmd.script, "```"]
        if getattr(cmd, "verify", None):
            out += ["", "*Verify:*", "", f"```{lang}", cmd.verify, "```"]
    if not getattr(step, "automation", None):
        out += ["", "*Manual step.*"]
    return "\n".join(out)


# =========================================================================== assembling

def _generate_methodology(bed: Any) -> tuple[Any, str]:
    try:
        from topology import methodology as mod
    except ImportError:
        return None, "The methodology generator is not part of this build."
    generate = getattr(mod, "generate", None)
    if generate is None:
        return None, "The methodology generator is not available yet."
    try:
        return generate(bed), ""
    except Exception as exc:  # noqa: BLE001 - a broken bed still prints its other appendices
        return None, f"The methodology could not be generated: {exc}"


def _validate(bed: Any) -> list:
    try:
        from topology.validation import validate
        return validate(bed)
    except Exception:  # noqa: BLE001 - findings are an extra; the tables still print
        return []


def _run_summary_table(run: Any) -> rt.Table:
    from app.metrics.report import summary_rows
    t = rt.Table(f"run-{rt.slug(run.run_id)}-summary", f"Measured per host: run {run.run_id}",
                 ["Host", "Metric", "Average", "95th percentile", "Range", "Seconds", "Gaps (s)"], compact=True)
    previous = ""
    for host, *rest in summary_rows(run):
        t.add(rt.Cell(host if host != previous else "", ref=host), *rest[:1], rt.Cell(rest[1], bold=True), *rest[2:])
        previous = host
    return t


def _run_verdict_table(run: Any) -> rt.Table | None:
    if not run.verdicts:
        return None
    t = rt.Table(f"run-{rt.slug(run.run_id)}-criteria", f"Pass criteria: run {run.run_id}",
                 ["Workload", "Criterion", "Result", "Measured"], compact=True)
    for v in run.verdicts:
        t.add(v.workload, v.criterion, rt.Cell("PASS" if v.passed else "FAIL", bold=True,
                                               fill="#dff0d8" if v.passed else "#f8d7da"), v.reason)
    return t


def build_appendix(bed: Any, *, findings: list | None = None, methodology: Any = None,
                   source: str = "", with_methodology: bool = True, runs: Iterable[Any] = ()) -> Appendix:
    """All appendices of a bed as blocks, in the order the seed reports print them."""
    findings = _validate(bed) if findings is None else findings
    note = ""
    if methodology is None and with_methodology:
        methodology, note = _generate_methodology(bed)
    info = bed.bed
    blocks: list[Block] = []
    errors = sum(1 for f in findings if f.severity == "error" and not f.accepted)
    warnings = sum(1 for f in findings if f.severity == "warning" and not f.accepted)
    accepted = sum(1 for f in findings if f.accepted)
    lines = [(k, v) for k, v in (("Description", rt.flat(info.description)), ("Source report", rt.flat(info.source)),
                                 ("Publisher", info.publisher), ("Date", info.date), ("Domain", info.domain),
                                 ("Project file", source)) if v]
    codes = sorted({f.code for f in findings if not f.accepted and f.severity in ("error", "warning")})
    lines.append(("Validation", f"{errors} error(s), {warnings} warning(s)"
                  + (f" ({', '.join(codes[:12])}{' ...' if len(codes) > 12 else ''})" if codes else "")
                  + (f"; {accepted} accepted exception(s)" if accepted else "")))
    lines.append(("Generated", f"{_dt.date.today().isoformat()} by Testbed Studio"))
    blocks.append(TitleBlock(title="Test-bed appendices", subtitle=info.name or "untitled test bed", lines=lines))
    if errors:
        blocks.append(FindingsBlock(findings=findings, errors=errors, warnings=warnings, accepted=accepted))
    toc = TocBlock()
    blocks.append(toc)

    def appendix(letter: str, title: str) -> None:
        anchor = f"appendix-{letter.lower()}"
        blocks.append(Heading(text=f"Appendix {letter}: {title}", level=1, anchor=anchor))
        toc.entries.append((f"Appendix {letter}: {title}", anchor))

    counters: dict[str, int] = {}

    def tables(letter: str, items: Iterable[rt.Table | None]) -> int:
        n = 0
        for t in items:
            if t is None:
                continue
            counters[letter] = counters.get(letter, 0) + 1
            blocks.append(TableBlock(table=t, label=f"Table {letter}.{counters[letter]}"))
            n += 1
        return n

    def sub(text: str, anchor: str) -> None:
        blocks.append(Heading(text=text, level=2, anchor=anchor))

    appendix("A", "System configuration")
    blocks.append(Para(text="Configuration of every server in the test bed, one table per server model. Values shared by "
                            "all servers of a model are printed once; values that differ are listed per server.",
                       css="intro"))
    if not tables("A", rt.server_tables(bed)):
        blocks.append(Para(text="The bed has no servers.", css="note"))
    if bed.vms or bed.clusters:
        sub("Virtual machines and clusters", "appendix-a-vms")
        tables("A", [rt.vm_table(bed), rt.cluster_table(bed)])

    appendix("B", "Switches and networks")
    if not tables("B", rt.switch_tables(bed)):
        blocks.append(Para(text="The bed has no switches.", css="note"))
    tables("B", [rt.network_table(bed), rt.connection_table(bed)])
    sub("Address table", "appendix-b-addresses")
    addresses = rt.address_table(bed)
    if addresses.rows:
        tables("B", [addresses])
    else:
        blocks.append(Para(text="No port in the bed carries an IP address or WWPN.", css="note"))

    appendix("C", "Test-bed diagram")
    blocks.append(ImageBlock(caption="Figure C.1: Connection diagram of all components, drawn from the bed",
                             keep_with_next=False))

    appendix("D", "Storage configuration")
    if not tables("D", rt.storage_tables(bed)):
        blocks.append(Para(text="The bed has no storage arrays.", css="note"))

    appendix("E", "Storage layout")
    blocks.append(Para(text="Drive slots of every enclosure, coloured by disk group; the legend gives each group's RAID "
                            "level, drives, owning controller and contents.", css="intro"))
    if not tables("E", rt.slot_map_tables(bed)):
        blocks.append(Para(text="No enclosures with drive slots are described.", css="note"))

    appendix("F", "Test methodology")
    workload = rt.workload_tables(bed)
    if workload:
        sub("Workload definitions", "appendix-f-workloads")
        tables("F", workload)
    plan = rt.scenario_tables(bed)
    if plan:
        sub("Scenarios and run plan", "appendix-f-plan")
        tables("F", plan)
    if methodology is None:
        blocks.append(Para(text=note or "No methodology.", css="note"))
    else:
        for section in methodology.sections:
            sub(f"{section.number}. {section.title}", f"appendix-f-{rt.slug(str(section.number))}")
            blocks.extend(steps_blocks(list(section.steps)))

    results = rt.results_tables(bed)
    runs = list(runs)
    if results or runs:
        appendix("G", "Results")
        rp = bed.run_plan
        if results and rp and rp.repetitions and rp.repetitions > 1:
            blocks.append(Para(text=f"Each test ran {rp.repetitions} times; the {rp.score or 'median'} run is reported.",
                               css="intro"))
        tables("G", results)
        figures = 0
        for run in runs:
            sub(f"Measured in run {run.run_id}", f"appendix-g-run-{rt.slug(run.run_id)}")
            blocks.append(Para(text=f"Recorded by Testbed Studio while the run's workload steps ran (started "
                                    f"{run.started}): one sample per host and metric per second. Averages and 95th "
                                    "percentiles are over the seconds measured; seconds without a value are gaps "
                                    "(a collector stopped or a counter disappeared) and are left out.", css="intro"))
            tables("G", [_run_summary_table(run), _run_verdict_table(run)])
            for chart in run.charts(bed):
                figures += 1
                blocks.append(ImageBlock(caption=f"Figure G.{figures}: {chart.title} per host, run {run.run_id}",
                                         key=f"chart-g{figures}", chart=chart, keep_with_next=False))
    return Appendix(bed=bed, title="Test-bed appendices", blocks=blocks, findings=findings, methodology=methodology,
                    running_head=info.name or "Test-bed appendices")


# =========================================================================== browser HTML and Markdown

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


def to_html(appendix: Appendix, *, image_dpi: int = 150, embed_diagram: bool = True) -> str:
    """A standalone HTML page; the diagram is embedded as a PNG data URI."""
    parts = []
    for block in appendix.blocks:
        if isinstance(block, ImageBlock) and block.chart is not None:
            from app.metrics.chart import chart_png
            ensure_gui_app()
            data = base64.b64encode(chart_png(block.chart)).decode("ascii")
            parts.append(f'<p><img class="chart" alt="{esc(block.caption)}" src="data:image/png;base64,{data}"/></p>')
        elif isinstance(block, ImageBlock) and embed_diagram:
            png = diagram_png(appendix.bed, dpi=image_dpi, findings=appendix.findings)
            if png:
                data = base64.b64encode(png).decode("ascii")
                parts.append(f'<p><img class="diagram" alt="{esc(block.caption)}" '
                             f'src="data:image/png;base64,{data}"/></p>')
        parts.append(block.html())
    return page_html(appendix.title + " - " + appendix.running_head, "\n".join(parts))


def page_html(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/><title>{esc(title)}</title>'
            f"<style>{BROWSER_CSS}</style></head>\n<body>\n{body}\n</body></html>\n")


def to_markdown(appendix: Appendix, *, image_ref: str | None = None, chart_refs: dict | None = None) -> str:
    """`image_ref`: the diagram's file; `chart_refs`: chart block key -> its file."""
    out = []
    for block in appendix.blocks:
        if isinstance(block, ImageBlock) and block.chart is not None:
            ref = (chart_refs or {}).get(block.key)
            if ref:
                out.append(f"![{block.caption}]({ref})")
            out.append(block.markdown())
        elif isinstance(block, ImageBlock):
            if image_ref:
                out.append(f"![{block.caption}]({image_ref})")
            out.append(block.markdown())
        elif isinstance(block, Heading) and block.level == 1:
            out.append(f'<a id="{block.anchor}"></a>\n\n' + block.markdown())
        else:
            out.append(block.markdown())
    return "\n\n".join(out) + "\n"


def methodology_blocks(methodology: Any) -> list[Block]:
    blocks: list[Block] = []
    for section in methodology.sections:
        blocks.append(Heading(text=f"{section.number}. {section.title}", level=2,
                              anchor=f"section-{rt.slug(str(section.number))}"))
        blocks.extend(steps_blocks(list(section.steps)))
    return blocks


def methodology_html(methodology: Any) -> str:
    """The procedure alone as a standalone HTML page (for `testbed-studio methodology`)."""
    head = [f'<p class="doctitle">Test methodology</p><p class="docsub">{esc(methodology.bed_name)}</p>']
    summary = list(getattr(methodology, "findings_summary", None) or [])
    if summary:
        items = "".join(f"<li>{esc(s)}</li>" for s in summary)
        head.append(f'<table class="alert" width="100%" cellspacing="1" cellpadding="6" bgcolor="#c94c4c"><tr>'
                    f'<td class="alertbox"><p class="alerthead">'
                    f'Findings on this bed; unresolved values are marked «missing»</p><ul>{items}</ul></td></tr></table>')
    body = "\n".join(head + [b.html() for b in methodology_blocks(methodology)])
    return page_html(f"Test methodology - {methodology.bed_name}", body)


# =========================================================================== the diagram

def render_diagram(bed: Any, painter: Any, rect: Any, findings: list | None = None) -> Any:
    """Paint the bed into `rect` with app/diagram.render_bed (a plain tiered sketch when that
    module is not available).  Returns the part of `rect` the drawing covers."""
    try:
        from app.diagram import render_bed
    except ImportError:
        return _sketch_diagram(bed, painter, rect)
    drawn = render_bed(bed, painter, rect, findings=findings)
    return _fitted(rect, drawn.width(), drawn.height()) if drawn is not None and drawn.width() > 0 else rect


def _fitted(rect: Any, w: float, h: float) -> Any:
    """The rectangle a w x h drawing takes when scaled into `rect` with its aspect kept, centred."""
    from PySide6.QtCore import QRectF
    scale = min(rect.width() / w, rect.height() / h)
    fw, fh = w * scale, h * scale
    return QRectF(rect.left() + (rect.width() - fw) / 2, rect.top() + (rect.height() - fh) / 2, fw, fh)


def _sketch_diagram(bed: Any, painter: Any, rect: Any) -> Any:
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QPen

    from topology.index import BedIndex
    from topology.layout import auto_layout
    boxes = auto_layout(bed)
    painter.save()
    if not boxes:
        painter.drawText(rect, Qt.AlignCenter, "The bed has no devices to draw.")
        painter.restore()
        return rect
    x0 = min(b.x for b in boxes.values()) - 20
    y0 = min(b.y for b in boxes.values()) - 20
    w = max(b.x + b.w for b in boxes.values()) - x0 + 20
    h = max(b.y + b.h for b in boxes.values()) - y0 + 20
    area = _fitted(rect, w, h)
    scale = area.width() / w

    def box(b):
        return QRectF(area.left() + (b.x - x0) * scale, area.top() + (b.y - y0) * scale, b.w * scale, b.h * scale)
    idx = BedIndex(bed)
    painter.setPen(QPen(QColor("#6b7785"), max(1.0, scale * 1.2)))
    for link in bed.links:
        a, b = idx.endpoint_device(link.a), idx.endpoint_device(link.b)
        if a is None or b is None or a.id not in boxes or b.id not in boxes:
            continue
        ra, rb = box(boxes[a.id]), box(boxes[b.id])
        painter.drawLine(QPointF(ra.center().x(), ra.bottom()), QPointF(rb.center().x(), rb.top()))
    colours = {"server": "#dfe9f6", "switch": "#e3f1df", "array": "#f6e7d2"}
    font = QFont(BODY_FONT)
    font.setPixelSize(max(6, int(11 * scale)))
    painter.setFont(font)
    for ident, b in boxes.items():
        kind = idx.kind_of.get(ident, "server")
        r = box(b)
        painter.setPen(QPen(QColor("#33414f"), max(1.0, scale)))
        painter.setBrush(QColor(colours.get(kind, "#eeeeee")))
        painter.drawRoundedRect(r, 4 * scale, 4 * scale)
        dev = idx.components.get(ident)
        label = ident + (f"\n{dev.model}" if getattr(dev, "model", "") else "")
        painter.drawText(r, Qt.AlignCenter | Qt.TextWordWrap, label)
    painter.restore()
    return area


def diagram_image(bed: Any, width_px: int, height_px: int, findings: list | None = None):
    """The diagram drawn once into at most width x height pixels, cropped to the drawing
    (no empty bands whatever its shape)."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    image = QImage(max(1, width_px), max(1, height_px), QImage.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    try:
        used = render_diagram(bed, painter, QRectF(0, 0, width_px, height_px), findings)
    finally:
        painter.end()
    crop = used.toAlignedRect().intersected(image.rect())
    return image.copy(crop) if crop.isValid() and not crop.isEmpty() else image


def diagram_png(bed: Any, *, dpi: int = 150, width_in: float = 7.0, findings: list | None = None) -> bytes:
    ensure_gui_app()
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    w = int(width_in * dpi)
    image = diagram_image(bed, w, int(w * 1.3), findings)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    image.save(buf, "PNG")
    buf.close()
    return bytes(data.data())


# =========================================================================== Qt: documents per block

_APP = None


def ensure_gui_app() -> None:
    """A QGuiApplication for painting text; offscreen when there is no display."""
    global _APP
    from PySide6.QtGui import QGuiApplication
    if QGuiApplication.instance() is not None:
        return
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _APP = QGuiApplication([])


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


def _new_document(html: str, width: float, device: Any):
    from PySide6.QtGui import QFont, QTextDocument, QTextOption
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(device)
    font = QFont(BODY_FONT)
    font.setPointSizeF(9.0)
    doc.setDefaultFont(font)
    doc.setDefaultStyleSheet(QT_CSS)
    doc.setDocumentMargin(0)
    option = doc.defaultTextOption()
    option.setWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    doc.setHtml(html)
    doc.setTextWidth(width)
    return doc


@dataclass
class _TableSpan:
    top: float            # where the table (or its caption) begins: a cut here moves it whole
    header_top: float
    header_bottom: float
    bottom: float


@dataclass
class Flow:
    """One block laid out at the page width, with the places it may be cut."""
    block: Any
    height: float
    doc: Any = None
    image: Any = None
    breaks: list[float] = field(default_factory=list)      # good cuts, ascending
    fallback: list[float] = field(default_factory=list)    # any line bottom (a row taller than a page)
    tables: list[_TableSpan] = field(default_factory=list)
    image_size: tuple[float, float] = (0.0, 0.0)     # on the page, device pixels

    def header_for(self, pos: float) -> _TableSpan | None:
        for t in self.tables:
            if t.header_bottom <= pos < t.bottom and t.header_bottom > t.header_top:
                return t
        return None


def _cuts(doc: Any, keep_px: float = 0.0) -> tuple[list[float], list[float], list[_TableSpan]]:
    """Cut positions of a laid-out document: between text lines outside tables, between
    table rows (never inside one, never right after the header row)."""
    from PySide6.QtGui import QTextCursor
    layout = doc.documentLayout()
    good: set[float] = {0.0}
    fallback: set[float] = set()
    rows: dict[Any, dict[int, list[float]]] = {}
    tables: dict[Any, Any] = {}
    block = doc.begin()
    while block.isValid():
        rect = layout.blockBoundingRect(block)
        tl = block.layout()
        table = QTextCursor(block).currentTable()
        lines = [rect.top() + tl.lineAt(i).y() + tl.lineAt(i).height() for i in range(tl.lineCount())]
        fallback.update(lines)
        if table is None:
            if lines:
                good.update(lines[:-1])
                good.add(rect.bottom())
        else:
            outer = table
            while outer.parentFrame() is not None and outer.parentFrame() is not doc.rootFrame():
                parent = outer.parentFrame()
                if hasattr(parent, "cellAt"):
                    outer = parent
                else:
                    break
            key = outer.firstPosition()
            tables[key] = outer
            cell = outer.cellAt(QTextCursor(block))
            r = cell.row() if cell.isValid() else 0
            span = rows.setdefault(key, {}).setdefault(r, [rect.top(), rect.bottom()])
            span[0] = min(span[0], rect.top())
            span[1] = max(span[1], rect.bottom())
        block = block.next()
    spans = []
    for key, by_row in rows.items():
        table = tables[key]
        frame = layout.frameBoundingRect(table)
        order = sorted(by_row)
        header_rows = table.format().headerRowCount()
        cuts = []
        for a, b in zip(order, order[1:]):
            cuts.append((a, (by_row[a][1] + by_row[b][0]) / 2))
        first_body = header_rows if header_rows < len(order) else 0
        for row, cut in cuts:
            if row >= first_body:      # at least one body row stays with the header
                good.add(cut)
        good.add(frame.bottom())
        # the line just above a table (a caption, a step's text) stays with it
        good = {g for g in good if not (frame.top() - keep_px < g <= frame.top() + 0.5) or g <= 0}
        header_bottom = cuts[header_rows - 1][1] if 0 < header_rows <= len(cuts) else frame.top()
        spans.append(_TableSpan(frame.top(), frame.top(), header_bottom, frame.bottom()))
    height = doc.size().height()
    good = {g for g in good if 0 <= g <= height}
    good.add(height)
    return sorted(good), sorted(fallback), spans


def _caption_cuts(flow: Flow) -> None:
    """A table block's caption never ends a page alone: no cut between it and the table."""
    if flow.tables:
        first = flow.tables[0].top
        flow.breaks = [b for b in flow.breaks if b <= 0 or b > first + 1]


@dataclass
class _Slice:
    flow: Flow
    top: float
    bottom: float
    y: float
    header: _TableSpan | None = None


@dataclass
class _Page:
    slices: list[_Slice] = field(default_factory=list)
    section: str = ""


class Layout:
    """The appendix laid out for one paint device: flows, pages, running heads."""

    def __init__(self, appendix: Appendix | None, device: Any, flows_html: list[str] | None = None,
                 running_head: str = ""):
        self.appendix = appendix
        self.device = device
        self.dpi = device.logicalDpiY()
        page_layout = device.pageLayout() if hasattr(device, "pageLayout") else None
        res = device.resolution() if hasattr(device, "resolution") else self.dpi
        if page_layout is not None:
            # painting coordinates start at the corner of the paint rect (inside the margins)
            paint = page_layout.paintRectPixels(res)
            self.paint_w, self.paint_h = paint.width(), paint.height()
        else:
            self.paint_w, self.paint_h = device.width(), device.height()
        self.px_per_pt = self.dpi / 72.0
        self.head_h = 24 * self.px_per_pt
        self.foot_h = 22 * self.px_per_pt
        self.body_x = 0.0
        self.body_y = self.head_h
        self.body_w = float(self.paint_w)
        self.body_h = float(self.paint_h) - self.head_h - self.foot_h
        self.running_head = running_head or (appendix.running_head if appendix else "")
        self.flows: list[Flow] = []
        self.toc_flow: Flow | None = None
        if appendix is not None:
            for block in appendix.blocks:
                self.flows.append(self._flow(block))
        else:
            for h in flows_html or []:
                self.flows.append(self._html_flow(h, None))
        self.pages = self._paginate()
        self._fill_toc()

    # ---------------------------------------------------------------- flows
    def _html_flow(self, html: str, block: Any) -> Flow:
        doc = _new_document(html, self.body_w, self.device)
        breaks, fallback, tables = _cuts(doc, keep_px=8 * self.px_per_pt)
        flow = Flow(block=block, height=doc.size().height(), doc=doc, breaks=breaks, fallback=fallback, tables=tables)
        if isinstance(block, TableBlock):
            _caption_cuts(flow)
        return flow

    def _flow(self, block: Block) -> Flow:
        if isinstance(block, ImageBlock):
            # pixels at no more than 300 dpi: a 1200-dpi printer would otherwise get a 300 MB image
            shrink = min(1.0, 300.0 / self.dpi)
            if block.chart is not None:
                from app.metrics.chart import chart_image
                image = chart_image(block.chart, int(self.body_w * shrink), int(self.body_w * 0.36 * shrink))
            else:
                image = diagram_image(self.appendix.bed, int(self.body_w * shrink), int(self.body_h * 0.85 * shrink),
                                      self.appendix.findings)
            w, h = image.width() / shrink, image.height() / shrink
            caption = _new_document(block.html(), self.body_w, self.device)
            height = h + 6 * self.px_per_pt + caption.size().height()
            flow = Flow(block=block, height=height, image=image, doc=caption, breaks=[0.0, height])
            flow.image_size = (w, h)
            return flow
        flow = self._html_flow(block.html(), block)
        if isinstance(block, TocBlock):
            self.toc_flow = flow
        return flow

    # ---------------------------------------------------------------- pagination
    def _paginate(self) -> list[_Page]:
        pages = [_Page()]
        y = 0.0
        section = ""
        flows = self.flows
        for i, flow in enumerate(flows):
            block = flow.block
            if isinstance(block, Heading) and block.level == 1:
                section = block.text
            if block is not None and block.page_break and y > 0:
                pages.append(_Page(section=section))
                y = 0.0
            if not pages[-1].section:
                pages[-1].section = section
            gap = (block.space_before_pt if block is not None else 0) * self.px_per_pt if y > 0 else 0.0
            if block is not None and block.keep_with_next and i + 1 < len(flows) and y > 0:
                nxt = flows[i + 1]
                first = next((b for b in nxt.breaks if b > 0), nxt.height)
                need = gap + flow.height + nxt.block.space_before_pt * self.px_per_pt + first
                if y + need > self.body_h and need <= self.body_h:
                    pages.append(_Page(section=section))
                    y, gap = 0.0, 0.0
            pos = 0.0
            while pos < flow.height - 0.5:
                header = flow.header_for(pos) if pos > 0 else None
                header_h = (header.header_bottom - header.header_top) if header else 0.0
                if header_h > self.body_h / 2:      # a header that fills the page is not repeated
                    header, header_h = None, 0.0
                avail = self.body_h - y - gap - header_h
                if flow.height - pos <= avail:
                    cut = flow.height
                else:
                    fits = [b for b in flow.breaks if pos < b <= pos + avail]
                    cut = fits[-1] if fits else None
                    if cut is None:
                        if y > 0:
                            pages.append(_Page(section=section))
                            y, gap = 0.0, 0.0
                            continue
                        # nothing fits on an empty page: cut at a line, as a last resort anywhere
                        lines = [b for b in flow.fallback if pos < b <= pos + avail]
                        cut = lines[-1] if lines else pos + max(avail, 1.0)
                pages[-1].slices.append(_Slice(flow, pos, cut, y + gap, header))
                y += gap + header_h + (cut - pos)
                gap = 0.0
                pos = cut
                if pos < flow.height - 0.5:
                    pages.append(_Page(section=section))
                    y = 0.0
        if not pages[-1].slices and len(pages) > 1:
            pages.pop()
        return pages

    def _fill_toc(self) -> None:
        if self.toc_flow is None:
            return
        block = self.toc_flow.block
        anchors = {a for _, a in block.entries}
        for n, page in enumerate(self.pages, 1):
            for s in page.slices:
                b = s.flow.block
                if isinstance(b, Heading) and b.anchor in anchors and b.anchor not in block.pages:
                    block.pages[b.anchor] = n
        self.toc_flow.doc = _new_document(block.html(), self.body_w, self.device)

    # ---------------------------------------------------------------- painting
    def paint(self, painter: Any, new_page) -> int:
        from PySide6.QtCore import QRectF, Qt
        from PySide6.QtGui import QColor, QFont, QPen
        total = len(self.pages)
        small = QFont(BODY_FONT)
        small.setPointSizeF(7.5)
        for n, page in enumerate(self.pages, 1):
            if n > 1:
                new_page()
            painter.save()
            painter.setFont(small)
            painter.setPen(QColor("#555555"))
            if n > 1:
                head = QRectF(self.body_x, 0, self.body_w, self.head_h - 8 * self.px_per_pt)
                painter.drawText(head, Qt.AlignLeft | Qt.AlignBottom, _elide(self.running_head, 80))
                painter.drawText(head, Qt.AlignRight | Qt.AlignBottom, page.section)
                painter.setPen(QPen(QColor("#9aa4b1"), max(1.0, 0.5 * self.px_per_pt)))
                line_y = self.head_h - 5 * self.px_per_pt
                painter.drawLine(int(self.body_x), int(line_y), int(self.body_x + self.body_w), int(line_y))
                painter.setPen(QColor("#555555"))
            foot = QRectF(self.body_x, self.body_y + self.body_h + 6 * self.px_per_pt, self.body_w,
                          self.foot_h - 6 * self.px_per_pt)
            painter.drawText(foot, Qt.AlignRight | Qt.AlignVCenter, f"Page {n} of {total}")
            painter.drawText(foot, Qt.AlignLeft | Qt.AlignVCenter, "Testbed Studio")
            painter.restore()
            for s in page.slices:
                y = self.body_y + s.y
                if s.header is not None:
                    self._draw_region(painter, s.flow, s.header.header_top, s.header.header_bottom, y)
                    y += s.header.header_bottom - s.header.header_top
                if s.flow.image is not None:
                    self._draw_image(painter, s.flow, y)
                else:
                    self._draw_region(painter, s.flow, s.top, s.bottom, y)
        return total

    def _draw_region(self, painter: Any, flow: Flow, top: float, bottom: float, y: float) -> None:
        from PySide6.QtCore import QRectF
        painter.save()
        painter.translate(self.body_x, y - top)
        # a hair more than the slice so a row's bottom rule is not clipped
        extra = 0.6 * self.px_per_pt if any(t.top < bottom <= t.bottom + 1 for t in flow.tables) else 0.0
        flow.doc.drawContents(painter, QRectF(0, top, self.body_w, bottom - top + extra))
        painter.restore()

    def _draw_image(self, painter: Any, flow: Flow, y: float) -> None:
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QColor, QPen
        img = flow.image
        w, h = flow.image_size
        x = self.body_x + (self.body_w - w) / 2
        target = QRectF(x, y, w, h)
        painter.drawImage(target, img)
        painter.save()
        painter.setPen(QPen(QColor("#9aa4b1"), max(1.0, 0.5 * self.px_per_pt)))
        painter.drawRect(target)
        painter.restore()
        self._draw_region(painter, flow, 0, flow.doc.size().height(), y + h + 6 * self.px_per_pt)


def _elide(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# =========================================================================== output

def _pdf_writer(path: str | Path, title: str):
    from PySide6.QtCore import QMarginsF
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter
    writer = QPdfWriter(str(path))
    writer.setResolution(300)
    writer.setTitle(title)
    writer.setCreator("Testbed Studio")
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.Letter), QPageLayout.Portrait,
                                     QMarginsF(0.75, 0.6, 0.75, 0.6), QPageLayout.Inch))
    return writer


def paint(appendix: Appendix, device: Any) -> int:
    """Lay out and paint the appendix on a QPdfWriter or QPrinter.  Returns the page count."""
    from PySide6.QtGui import QPainter
    ensure_gui_app()
    layout = Layout(appendix, device)
    painter = QPainter()
    if not painter.begin(device):
        raise OSError("cannot start painting (is the output writable?)")
    try:
        return layout.paint(painter, device.newPage)
    finally:
        painter.end()


def pdf_layout(appendix: Appendix, path: str | Path, *, title: str = "") -> Layout:
    """Write the appendix as a PDF and return its layout (pages, flows, cuts)."""
    from PySide6.QtGui import QPainter
    ensure_gui_app()
    path = Path(path)
    if not path.parent.is_dir():
        raise OSError(f"folder {path.parent} does not exist")
    writer = _pdf_writer(path, title or appendix.running_head)
    layout = Layout(appendix, writer)
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write {path}")
    try:
        layout.paint(painter, writer.newPage)
    finally:
        painter.end()
    del writer     # QPdfWriter finishes the file when it goes away
    if not path.exists():
        raise OSError(f"cannot write {path}")
    return layout


def write_pdf(content: Any, path: str | Path, *, title: str = "") -> int:
    """Write a PDF from an Appendix, an HTML string or a QTextDocument.  Returns pages."""
    ensure_gui_app()
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise OSError(f"folder {path.parent} does not exist")
    if isinstance(content, Appendix):
        return len(pdf_layout(content, path, title=title).pages)
    else:
        from PySide6.QtGui import QPainter, QTextDocument
        html = content.toHtml() if isinstance(content, QTextDocument) else str(content)
        m = re.search(r"<title>(.*?)</title>", html, re.S | re.I)
        head = title or (_html.unescape(m.group(1)) if m else "")
        writer = _pdf_writer(path, head)
        layout = Layout(None, writer, flows_html=[html], running_head=head)
        painter = QPainter()
        if not painter.begin(writer):
            raise OSError(f"cannot write {path}")
        try:
            pages = layout.paint(painter, writer.newPage)
        finally:
            painter.end()
    del writer     # QPdfWriter finishes the file when it goes away
    if not path.exists():
        raise OSError(f"cannot write {path}")
    return pages


def write(bed: Any, out: str | Path, fmt: str = "pdf", *, source: str = "", findings: list | None = None,
          methodology: Any = None, runs: Iterable[Any] = ()) -> dict:
    """The `appendix` command's work: build and write one format.  Returns figures for the caller."""
    out = Path(out)
    if fmt not in ("pdf", "html", "md"):
        raise ValueError(f"unknown format {fmt!r}: use pdf, html or md")
    if not out.parent.is_dir():
        raise OSError(f"folder {out.parent} does not exist")
    appendix = build_appendix(bed, findings=findings, methodology=methodology, source=source, runs=runs)
    result: dict[str, Any] = {"path": str(out), "format": fmt}
    if fmt == "pdf":
        result["pages"] = write_pdf(appendix, out)
    elif fmt == "html":
        out.write_text(to_html(appendix), encoding="utf-8")
    elif fmt == "md":
        image = out.with_name(out.stem + "-diagram.png")
        image.write_bytes(diagram_png(bed, findings=appendix.findings))
        result["image"] = str(image)
        chart_refs = {}
        for block in appendix.blocks:
            if isinstance(block, ImageBlock) and block.chart is not None:
                from app.metrics.chart import chart_png
                chart_file = out.with_name(f"{out.stem}-{block.key}.png")
                chart_file.write_bytes(chart_png(block.chart))
                chart_refs[block.key] = chart_file.name
        if chart_refs:
            result["charts"] = len(chart_refs)
        out.write_text(to_markdown(appendix, image_ref=image.name, chart_refs=chart_refs), encoding="utf-8")
    else:
        raise ValueError(f"unknown format {fmt!r}: use pdf, html or md")
    return result
