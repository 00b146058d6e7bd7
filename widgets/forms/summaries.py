"""Summaries of a component's parts on its form: each part a link to its own form."""
from __future__ import annotations

from html import escape
from typing import Any

from topology.rename_ops import locate
from widgets.forms.values import format_number


def summary_html(bed: Any, loc: Any, items: list[Any]) -> str:
    """A list of parts as links to each part's own form ('NIC1: SAN1, SAN2')."""
    out = []
    for item in items:
        text = escape(item_name(item))
        subject = subject_of_child(bed, loc, item)
        if subject:
            text = f'<a href="{escape(subject)}">{text}</a>'
        ports = getattr(item, "ports", None)
        if ports:               # an adapter's ports, or the port names a mapping presents its LUN on
            names = [p if isinstance(p, str) else p.name for p in ports]
            links = [f'<a href="{escape(loc.device.id + ":" + n)}">{escape(n)}</a>' for n in names]
            text += ": " + ", ".join(links)
        out.append(text)
    sep = "<br>" if any(getattr(i, "ports", None) for i in items) else ", "
    return sep.join(out)


def subject_of_child(bed: Any, loc: Any, item: Any) -> str:
    """The subject id of one part of the component shown, or '' when it has none of its own."""
    dev = loc.device.id
    name = getattr(item, "name", None)
    candidates = []
    if isinstance(name, str):
        candidates += [f"{dev}:{name}", f"{dev}:group:{name}", f"{dev}:pool:{name}"]
    slots = getattr(item, "slots", None)
    if isinstance(slots, str) and getattr(loc.obj, "name", None) and loc.kind == "enclosure":
        first = slots.split("-")[0].strip()
        candidates.append(f"{dev}:{loc.obj.name}:{first}")
    for c in candidates:
        hit = locate(bed, c)
        if hit is not None and hit.obj is item:
            return c
    return ""


def item_name(item: Any) -> str:
    """How one part of a component reads in a summary."""
    for attr in ("id", "name"):
        v = getattr(item, attr, None)
        if isinstance(v, str) and v:
            return v
    if hasattr(item, "slots"):
        size = format_number(getattr(item, "size_gb", None))
        return f"slots {item.slots}" + (f" ({size} GB {getattr(item, 'media', '')})" if size else "")
    if hasattr(item, "volume") and hasattr(item, "to"):
        lun = f" as LUN {item.lun}" if getattr(item, "lun", None) is not None else ""
        return f"{item.volume} → {item.to}{lun}"
    if hasattr(item, "count") and hasattr(item, "model"):
        return f"{item.count} × {item.model or 'disk'}"
    if hasattr(item, "metric"):
        return f"{item.metric} {getattr(item, 'comparison', '')} {format_number(getattr(item, 'threshold', ''))}"
    return type(item).__name__
