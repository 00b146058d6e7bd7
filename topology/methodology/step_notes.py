"""Component notes in the procedure: a bed's note on a component (what the source says, what was
assumed) is printed with the first step that uses one of that component's values."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topology.ids import SEP, parse_array_part
from topology.index import BedIndex
from topology.methodology.steps import Step


def attach_notes(steps: Iterable[Step], idx: BedIndex) -> None:
    """Give each step the notes of the components its values come from, each note once, at the
    first step (in document order) that uses the component."""
    printed: set[str] = set()
    for step in steps:
        for source in step.sources.values():
            ref, obj = _component_of(idx, source)
            note = getattr(obj, "note", "") if obj is not None else ""
            if not note or ref in printed:   # a note marked `not stated` says nothing worth a line
                continue
            printed.add(ref)
            step.notes.append(f"{ref}: {' '.join(str(note).split())}")


def _component_of(idx: BedIndex, source: str) -> tuple[str, Any]:
    """(id, component) a value's source ('R710-1:SAN1.address', 'MD3000i:group:SQL.members') names."""
    ref = source
    while ref:
        obj = _lookup(idx, ref)
        if obj is not None:
            return ref, obj
        head, dot, _ = ref.rpartition(".")
        if not dot:
            break
        ref = head
    return "", None


def _lookup(idx: BedIndex, ref: str) -> Any:
    if ref in idx.components:
        return idx.components[ref]
    if ref in idx.volumes:
        return idx.volumes[ref][1]
    pr = idx.ports.get(ref)
    if pr is not None:
        return pr.port
    array_id, sep, rest = ref.partition(SEP)
    scope = idx.scopes.get(array_id) if sep else None
    if scope is None or not rest:
        return None
    part = parse_array_part(rest)
    if part.kind == "group":
        return scope.groups.get(part.name)
    if part.kind == "pool":
        return scope.pools.get(part.name)
    return scope.controllers.get(rest) or scope.enclosures.get(rest)
