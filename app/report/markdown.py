"""Markdown of the appendix's pieces: table cells, tables, methodology steps."""
from __future__ import annotations

from typing import Any

from app.report.steps import command_label, step_targets
from app.report.tables.model import MISSING_MARK, Table
from topology.methodology.guards import folded
from topology.methodology.markdown import table_markdown as step_table_markdown

_MD_LANG = {"powershell": "powershell", "bash": "bash", "vendor-cli": "text"}


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", "<br>")


def table_markdown(t: Table, label: str = "") -> str:
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


def step_markdown(step: Any) -> str:
    targets = step_targets(step)
    out = [f"**{step.number}.** {step.text}" + (f" *[{', '.join(targets)}]*" if targets else "")]
    out += [f"> *Note — {n}*" for n in getattr(step, "notes", None) or []]
    table = getattr(step, "table", None)
    if table is not None:   # one row per item the step gathers (BIOS settings, workload parameters)
        out += [""] + step_table_markdown(*table)
    unresolved = [str(u) for u in getattr(step, "unresolved", None) or []]
    if unresolved:
        out += ["", f"> **Unresolved:** {', '.join(unresolved)}"]
    for cmd in getattr(step, "automation", None) or []:
        lang = _MD_LANG.get(cmd.shell, "")
        out += ["", f"*{command_label(cmd)}:*", "", f"```{lang}", folded(cmd.script)[0], "```"]
        if getattr(cmd, "verify", None):
            out += ["", "*Verify:*", "", f"```{lang}", cmd.verify, "```"]
    if not getattr(step, "automation", None):
        reason = getattr(step, "manual_reason", "")
        out += ["", f"*Manual step: {reason}.*" if reason else "*Manual step.*"]
    return "\n".join(out)
