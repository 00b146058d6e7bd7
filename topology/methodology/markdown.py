"""The methodology as Markdown: what `testbed-studio methodology` prints unless asked for HTML or PDF."""
from __future__ import annotations

import re

from topology.methodology.guards import GUARDS, GUARDS_TITLE, folded, guard_library, guard_purpose, guards_in
from topology.methodology.steps import Methodology, Step

_FENCE_LANG = {"powershell": "powershell", "bash": "bash", "vendor-cli": "text"}
_SHELL_LABEL = {"powershell": "PowerShell", "bash": "bash", "vendor-cli": "vendor CLI"}


def _fence(code: str, lang: str) -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}{lang}\n{code}\n{ticks}"


def _md_escape(text: str) -> str:
    """Stop values from turning into markup (a name like *x*, <b> or [link]) while keeping Windows
    paths and snake_case names readable: only what CommonMark would interpret is escaped."""
    text = re.sub(r"\\(?=[!-/:-@\[-`{-~])", r"\\\\", text)
    text = re.sub(r"[*`<\[\]]", lambda m: "\\" + m.group(0), text)
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)


def manual_note(step: Step) -> str:
    """What a step without a command says: that it is manual, and why when a template exists elsewhere."""
    reason = step.manual_reason
    return f"Manual step: {reason}." if reason else "Manual step."


def table_markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    width = max([len(header)] + [len(r) for r in rows])
    head = header or [""] * width

    def cell(text: str) -> str:
        return _md_escape(text).replace("|", "\\|") or " "
    out = ["| " + " | ".join(cell(h) for h in head) + " |", "|" + "---|" * width]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return out


def to_markdown(m: Methodology) -> str:
    """The `methodology` command's Markdown: findings first, then the numbered sections."""
    lines = [f"# Test methodology: {_md_escape(m.bed_name)}", ""]
    if m.banner():
        lines += [f"> **{_md_escape(m.banner())}**"]
        if m.findings_summary:
            lines.append(">")
        lines += [f"> - {_md_escape(f)}" for f in m.findings_summary]
        lines.append("")
    if m.incomplete_note:
        lines += [f"> {_md_escape(m.incomplete_note)}", ""]
    total = sum(len(s.steps) for s in m.sections)
    auto = sum(1 for s in m.steps() if s.automation)
    lines += [f"{total} steps in {len(m.sections)} sections; {auto} with automation, {total - auto} manual.", ""]
    for sec in m.sections:
        lines += [f"## {sec.number}. {_md_escape(sec.title)}", ""]
        for st in sec.steps:
            if st.heading:
                lines += [f"### {_md_escape(st.heading)}", ""]
            where = f" *(on {_md_escape(st.target)})*" if st.target else ""
            lines.append(f"**{st.number}** {_md_escape(st.text)}{where}")
            lines.append("")
            lines += [f"> Note — {_md_escape(n)}" for n in st.notes] + ([""] if st.notes else [])
            if st.table is not None:
                lines += table_markdown(*st.table) + [""]
            if not st.automation:
                lines += [f"*{_md_escape(manual_note(st))}*", ""]
            for c in st.automation:
                label = _SHELL_LABEL.get(c.shell, c.shell)
                head = f"{label}" + (f" on {_md_escape(c.target)}" if c.target else "")
                if c.note:
                    head += f" — {_md_escape(c.note)}"
                lines += [f"{head}:", "", _fence(folded(c.script)[0], _FENCE_LANG.get(c.shell, "text")), ""]
                if c.verify:
                    lines += ["Verify:", "", _fence(c.verify, _FENCE_LANG.get(c.shell, "text")), ""]
    guards = guards_in(m.steps())
    lines += [f"## {GUARDS_TITLE}", ""] if guards else []
    for name in guards:
        lines += [f"### Disk guard {name}", "", guard_purpose(name), "",
                  _fence(guard_library(name), _FENCE_LANG.get(GUARDS[name][0], "text")), ""]
    return "\n".join(lines).rstrip() + "\n"

