"""Component notes in the procedure: a bed's note on a component (what the source says, what was
assumed) is printed with the first step that uses one of that component's values."""
from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import Any

from topology.ids import SEP, parse_array_part
from topology.index import BedIndex
from topology.methodology.steps import Step


def attach_notes(steps: Iterable[Step], idx: BedIndex) -> None:
    """Give each step the notes of the components its values come from, each note once, at the
    first step (in document order) that uses the component."""
    if not _any_note(idx):
        return
    printed: set[str] = set()
    noted: dict[str, tuple[str, str | None]] = {}   # source -> (component id, its note on one line or None)
    for step in steps:
        for source in step.sources.values():
            hit = noted.get(source)
            if hit is None:
                hit = noted[source] = _note_of(idx, source, noted)
            ref, note = hit
            if note is None or ref in printed:   # a note marked `not stated` says nothing worth a line
                continue
            printed.add(ref)
            step.notes.append(f"{ref}: {note}")


def _note_of(idx: BedIndex, source: str, known: dict[str, tuple[str, str | None]]) -> tuple[str, str | None]:
    """(id, note) of the component a value's source ('R710-1:SAN1.address', 'MD3000i:group:SQL.members')
    names: the longest leading part of it that is a component (`known` holds earlier answers, for
    every part tried: sources of one component share their leading parts)."""
    tried: list[str] = []
    ref = source
    answer: tuple[str, str | None] = ("", None)
    while ref:
        hit = known.get(ref)
        if hit is not None:
            answer = hit
            break
        tried.append(ref)
        obj = _lookup(idx, ref)
        if obj is not None:
            note = getattr(obj, "note", "")
            answer = (ref, " ".join(str(note).split()) if note else None)
            break
        head, dot, _ = ref.rpartition(".")
        if not dot:
            break
        ref = head
    for t in tried:
        known[t] = answer
    return answer


def _any_note(idx: BedIndex) -> bool:
    """Whether any component `_lookup` can name has a note (a bed without one has nothing to place)."""
    objects = chain(idx.components.values(), (v for _, v in idx.volumes.values()),
                    (pr.port for pr in idx.ports.values()),
                    *((*s.groups.values(), *s.pools.values(), *s.controllers.values(), *s.enclosures.values())
                      for s in idx.scopes.values()))
    return any(getattr(obj, "note", "") for obj in objects)


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
