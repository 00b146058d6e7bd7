"""Component notes in the procedure: the generator's shortcuts (each source resolved once, a bed
without notes skipped) place every note where the straightforward resolution does — with a note
on one object of any kind alone in a bed, so no kind of component can be missed."""
from __future__ import annotations

import dataclasses
import random

import pytest

from resources import example_names, example_path
from topology.fileformat import load
from topology.index import BedIndex
from topology.methodology import generate
from topology.methodology.step_notes import _lookup


def _objects_with_a_note_field(obj, seen=None):
    """Every dataclass instance in the bed that can carry a `note`."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if any(f.name == "note" for f in dataclasses.fields(obj)):
            yield obj
        for f in dataclasses.fields(obj):
            yield from _objects_with_a_note_field(getattr(obj, f.name), seen)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _objects_with_a_note_field(x, seen)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _objects_with_a_note_field(x, seen)


def _reference_notes(steps, idx: BedIndex) -> list[list[str]]:
    """The straightforward placement: each step's sources, longest leading part that names a
    component, that component's note at the first step using it."""
    printed: set[str] = set()
    out = []
    for step in steps:
        notes = []
        for source in step.sources.values():
            ref, obj = source, None
            while ref:
                obj = _lookup(idx, ref)
                if obj is not None:
                    break
                head, dot, _ = ref.rpartition(".")
                if not dot:
                    ref = ""
                    break
                ref = head
            note = getattr(obj, "note", "") if obj is not None else ""
            if not note or ref in printed:
                continue
            printed.add(ref)
            notes.append(f"{ref}: {' '.join(str(note).split())}")
        out.append(notes)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", example_names())
def test_a_note_on_any_one_object_is_placed_as_the_straightforward_resolution_places_it(name):
    bed = load(example_path(name))
    objects = list(_objects_with_a_note_field(bed))
    for obj in objects:
        obj.note = ""
    # one object of each type, and a few more at random
    by_type: dict[type, object] = {}
    for obj in objects:
        by_type.setdefault(type(obj), obj)
    chosen = list(by_type.values()) + random.Random(name).sample(objects, min(6, len(objects)))
    placed = 0
    for obj in chosen:
        obj.note = "  the lab's   note\n on this "
        meth = generate(bed, findings=[])
        steps = list(meth.steps())
        expected = _reference_notes(steps, BedIndex(bed))
        assert [s.notes for s in steps] == expected, type(obj).__name__
        placed += sum(1 for notes in expected if notes)
        obj.note = ""
    assert placed >= 3     # notes of servers, ports, volumes ... do reach steps
    assert all(not s.notes for s in generate(bed, findings=[]).steps())
