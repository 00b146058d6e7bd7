"""The detail pane's account of a grouped finding: its cases, one line each, and the findings
its cause explains (listed there instead of beside it)."""
from __future__ import annotations

from html import escape
from typing import Any

_CASES_SHOWN = 50


def cases_html(f: Any) -> list[str]:
    """A grouped finding's cases, one line each, and the findings its cause explains."""
    out = []
    members = getattr(f, "members", ())
    if members:
        items = "".join(f"<li>{escape(c.message)}</li>" for c in members[:_CASES_SHOWN])
        more = f"<li>and {len(members) - _CASES_SHOWN} more</li>" if len(members) > _CASES_SHOWN else ""
        out.append(f"<p><b>{len(members)} cases:</b></p><ul>{items}{more}</ul>")
    consequences = getattr(f, "consequences", ())
    if consequences:
        n = sum(c.count for c in consequences)
        items = "".join(f"<li><b>{escape(c.code)}</b> {escape(c.severity)}: {escape(c.message)}</li>"
                        for c in consequences)
        out.append(f"<p><b>Explains {n} other case(s)</b> (listed here instead of beside it):</p><ul>{items}</ul>")
    return out
