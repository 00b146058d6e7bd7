"""How a bed's value reads in a report cell: names, numbers, sizes, settings, lists."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from app.report.tables.model import Cell, Table, missing
from topology.unknown import MARKER, NOT_STATED
from topology.vocabulary import ROLE_NAMES, humanize

ADDRESSED_ROLES = {"iscsi", "lan", "heartbeat", "live_migration", "management", "replication"}


def number(value: Any) -> str:
    if value is NOT_STATED:
        return MARKER
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float):
        if value.is_integer():
            value = int(value)
        else:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 1000 else str(value)
    return str(value)


def gb(value: float | None) -> str:
    if value is None:
        return ""
    if value is NOT_STATED:
        return MARKER
    if value and value < 1:
        return f"{number(value * 1024)} MB"
    return f"{number(float(value))} GB"


def rpm(value: int | None) -> str:
    if value is NOT_STATED:
        return MARKER
    return f"{value:,} RPM" if value else ""


def setting(value: Any) -> str:
    """Settings read as a report prints them: booleans become Enabled / Disabled."""
    if isinstance(value, bool):
        return "Enabled" if value else "Disabled"
    return flat(value)   # the marker reads "not stated"


def flat(value: Any) -> str:
    """Any parameter value as one line of text (lists joined, small mappings inlined)."""
    if value is None:
        return ""
    if value is NOT_STATED:
        return MARKER
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(flat(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{humanize(k)}: {flat(v)}" for k, v in value.items())
    return " ".join(str(value).split())


def roles(values: Iterable[str]) -> str:
    if values is NOT_STATED:
        return MARKER
    return ", ".join(ROLE_NAMES.get(r, r) for r in values)


def natural(text: str) -> list:
    """Sort key: host2 before host10."""
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", str(text))]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def value_cell(value: Any, ref: str = "", required: bool = False, fmt=None) -> Cell | None:
    """A cell for a value; None for an optional value the bed leaves out."""
    if value is NOT_STATED:
        return Cell(MARKER, ref=ref)
    empty = value is None or value == "" or value == [] or value == {}
    if empty:
        return missing(ref) if required else None
    return Cell(fmt(value) if fmt else flat(value), ref=ref)


def compress_names(names: list[str]) -> str:
    """RG1, RG2, ..., RG48 -> 'RG1-RG48 (48)': long group lists stay readable."""
    if len(names) <= 6:
        return ", ".join(names)
    return f"{names[0]} ... {names[-1]} ({len(names)} groups)"


def humanize_metric(metric: str) -> str:
    text = metric
    for suffix, unit in (("_per_s", "/s"), ("_pct", " (%)"), ("_ms", " (ms)"), ("_mbytes", " (MB)"),
                         ("_bytes", " (bytes)"), ("_s", " (s)")):
        if text.endswith(suffix):
            return humanize(text[: -len(suffix)]) + unit
    return humanize(text)


def notes_text(items: Iterable[tuple[str, Any]]) -> str:
    """'Notes. ID: note. ID: note.' for the (id, component) pairs whose `note` is set: the caveats
    a bed records about its values (what the source says, what was assumed) print with their table."""
    parts = []
    for ref, obj in items:
        note = getattr(obj, "note", "")
        if note:    # a note marked `not stated` says nothing worth a line
            text = " ".join(str(note).split()).rstrip(".")
            parts.append(f"{ref}: {text}.")
    return ("Notes. " + " ".join(parts)) if parts else ""


def add_notes(t: Table, items: Iterable[tuple[str, Any]]) -> Table:
    """The table with its components' notes below it (after a note it already has)."""
    text = notes_text(items)
    if text:
        t.note = f"{t.note} {text}".strip() if t.note else text
    return t
