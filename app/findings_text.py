"""Findings as the command line prints them: one block per fact, with every case it groups,
where it holds and the findings its cause explains; and the severity filter (`--min-severity`)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topology.validation import SEVERITY_ORDER

_INDENT = " " * 19
_CASES_SHOWN = 12      # the components line names every subject; the JSON keeps every case


def at_least(findings: Iterable[Any], severity: str) -> list[Any]:
    """The findings of `severity` or worse (error < warning < info)."""
    limit = SEVERITY_ORDER[severity]
    return [f for f in findings if SEVERITY_ORDER[f.severity] <= limit]


def format_findings(name: str, findings: list, *, hidden: int = 0, min_severity: str = "info") -> str:
    counts = {s: sum(1 for f in findings if f.severity == s and not f.accepted) for s in ("error", "warning", "info")}
    accepted = sum(1 for f in findings if f.accepted)
    cases = sum(f.count for f in findings)
    head = (f"{name}: {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} note(s)"
            + (f", {accepted} accepted as documented exceptions" if accepted else "")
            + (f" ({cases} cases)" if cases != len(findings) else ""))
    if hidden:
        head += f"; {hidden} finding(s) below {min_severity} not shown"
    lines = [head]
    for f in findings:
        lines.append("")
        lines += finding_lines(f)
    if not findings:
        lines.append("no findings")
    return "\n".join(lines)


def finding_lines(f: Any, indent: str = "") -> list[str]:
    tag = "ACCEPTED" if f.accepted else f.severity.upper()
    pad = indent + _INDENT
    lines = [f"{indent}{tag:<9}{f.code:<10}{f.message}",
             f"{pad}holds in: {f.holds_in or 'the reference configuration'}",
             f"{pad}components ({len(f.subjects)}): {', '.join(f.subjects)}" if len(f.subjects) > 1 else
             f"{pad}components: {', '.join(f.subjects)}"]
    if f.members:
        lines.append(f"{pad}cases ({len(f.members)}):")
        lines += [f"{pad}  - {c.message}" + _where(c.where, f.where) for c in f.members[:_CASES_SHOWN]]
        if len(f.members) > _CASES_SHOWN:
            lines.append(f"{pad}  - and {len(f.members) - _CASES_SHOWN} more (every case: --format json)")
    lines += [f"{pad}why: {f.reason}", f"{pad}source: {f.source}", f"{pad}fix: {f.hint}"]
    if f.accepted:
        lines.append(f"{pad}accepted because: {f.exception_reason}")
    if f.consequences:
        n = sum(c.count for c in f.consequences)
        lines.append(f"{pad}explains {n} other case(s), listed here instead of beside it:")
        lines += [f"{pad}  - {c.code} {c.severity}: {c.message}" for c in f.consequences]
    return lines


def _where(case: tuple, finding: tuple) -> str:
    """A case's places, when they are not the finding's own."""
    if not case or tuple(case) == tuple(finding):
        return ""
    from topology.validation.grouping import holds_in
    configured = any(c is not None for c, _ in case)
    return f" [{holds_in(case, configured)}]"
