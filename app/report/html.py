"""HTML of the appendix's pieces: escaped text, tables, methodology steps, the page around them."""
from __future__ import annotations

import html as _html
import re
from typing import Any

from app.report.steps import command_label, step_targets
from app.report.style import BROWSER_CSS
from app.report.tables.model import MISSING_MARK, Cell, Table
from topology.methodology.guards import folded

# Tables are drawn with collapsed borders: real strokes stay visible at any zoom.  (Rules made
# of the table background showing through 1 px cell spacing draw twice as fast in Qt, but
# vanish in viewers zoomed out below 100 %.)


_MISSING_IN_TEXT = re.compile(r"«missing:[^»]*»")


# Qt lays out a word it cannot break in time that grows with the square of its length (a
# 100,000-character name took minutes): a run of LONG_WORD characters without a space is printed
# as its head and tail with how much was left out, so a page lays out in bounded time
LONG_WORD = 1000
_LONG_WORD = re.compile(rf"\S{{{LONG_WORD},}}")


def _elide_word(m: re.Match) -> str:
    word = m.group()
    return f"{word[:200]} … ({len(word) - 240:,} characters left out) … {word[-40:]}"


def esc(text: Any) -> str:
    return _html.escape(_LONG_WORD.sub(_elide_word, str(text)), quote=True)


def mark_missing(escaped: str) -> str:
    """Wrap «missing: ...» markers of generated text so they stand out."""
    return _MISSING_IN_TEXT.sub(lambda m: f'<span class="miss">{m.group(0)}</span>', escaped)


def cell_html(c: Cell, tag: str = "td", width: str = "") -> str:
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


def table_html(t: Table, label: str = "") -> str:
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
        head = (f'<thead><tr>{"".join(head_cells[:1])}'
                f'<th colspan="{ncols - 1}">Drive slots (slot number, disk group)</th></tr></thead>')
    return (f'<p class="caption" id="{esc(t.key)}">{esc(caption)}</p>'
            f'<table class="{css}" width="100%" border="1" cellspacing="0" cellpadding="3">'
            f'{head}<tbody>{"".join(body)}</tbody></table>{note}')


def step_html(step: Any) -> str:
    number = esc(getattr(step, "number", ""))
    text = mark_missing(esc(getattr(step, "text", "")))
    targets = step_targets(step)
    reason = getattr(step, "manual_reason", "")
    # why a step is by hand rides in its tag: one line per step, however many say it
    manual = f"manual: {reason.removesuffix(': done by hand')}" if reason else "manual"
    tags = list(targets) + ([] if getattr(step, "automation", None) else [manual])
    where = f' <span class="target">[{esc(" · ".join(tags))}]</span>' if tags else ""
    parts = [f'<p class="step"><b>{number}.</b> {text}{where}</p>']
    parts += [f'<p class="stepnote">Note — {esc(n)}</p>' for n in getattr(step, "notes", None) or []]
    table = getattr(step, "table", None)
    if table is not None:   # one row per item the step gathers (BIOS settings, workload parameters)
        header, rows = table
        head = "".join(f"<th>{esc(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{mark_missing(esc(c))}</td>" for c in r) + "</tr>" for r in rows)
        parts.append(f'<table class="grid small" width="100%" border="1" cellspacing="0" cellpadding="3">'
                     f'{f"<thead><tr>{head}</tr></thead>" if head else ""}<tbody>{body}</tbody></table>')
    unresolved = [str(u) for u in getattr(step, "unresolved", None) or []]
    if unresolved:
        parts.append(f'<p class="unresolved">Unresolved: {esc(", ".join(unresolved))}. '
                     f'Set these in the bed before running this step.</p>')
    for cmd in getattr(step, "automation", None) or []:
        shown = folded(cmd.script)[0]        # a disk guard is printed once, after the procedure
        inner = f'<p class="codelabel">{esc(command_label(cmd))}</p><pre>{mark_missing(esc(shown))}</pre>'
        if getattr(cmd, "verify", None):
            inner += f'<p class="codelabel">Verify</p><pre>{mark_missing(esc(cmd.verify))}</pre>'
        if getattr(cmd, "note", ""):
            inner += f'<p class="codenote">{esc(cmd.note)}</p>'
        parts.append(f'<table class="code" width="100%" cellspacing="1" cellpadding="5" border="0" bgcolor="#c3c8cf">'
                     f'<tr><td class="codebox">{inner}</td></tr></table>')
    return "".join(parts)


def page_html(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/><title>{esc(title)}</title>'
            f"<style>{BROWSER_CSS}</style></head>\n<body>\n{body}\n</body></html>\n")
