"""Workers let go of a big bed's working structures a piece at a time (issues 32 and 33: after an
edit of the 5,000-device bed, the end of a validation freed its index and caches in one C call that
held the interpreter lock for 60-80 ms, and the window could not repaint meanwhile).

Counted, not timed: a probe records, for each object freed, how many times this thread had run
Python code by then.  Objects freed in one C call (one drop of a structure) share that count; the
interpreter can hand its lock to another thread only between such counts."""
from __future__ import annotations

import gc
import sys
import weakref

import pytest

import topology.letting_go as letting_go
from app.live_validation import _kept
from topology.letting_go import let_go
from topology.synthetic import generate
from topology.validation.registry import Finding


class Leaf:
    """A stand-in for one of the many small objects of an index (a port reference, a finding)."""
    __slots__ = ("__weakref__", "payload")

    def __init__(self) -> None:
        self.payload = [0]


class _Probe:
    """For each object watched, how many times this thread had run Python code when it was freed."""

    def __init__(self) -> None:
        self.ticks, self.sizes, self.refs = 0, {}, []

    def _gone(self, _ref) -> None:
        self.sizes[self.ticks] = self.sizes.get(self.ticks, 0) + 1

    def watch(self, objects) -> None:
        self.refs += [weakref.ref(x, self._gone) for x in objects]

    def pieces(self, action) -> list[int]:
        """How many of the watched objects each uninterrupted free let go of while `action()` ran."""
        own = _Probe._gone.__code__

        def tick(frame, _event, _arg) -> None:
            if frame.f_code is not own:      # the count itself is no turn of this thread's Python
                self.ticks += 1
        sys.setprofile(tick)
        try:
            action()
        finally:
            sys.setprofile(None)
        assert self.refs and all(r() is None for r in self.refs), "everything let go of is freed"
        return sorted(self.sizes.values(), reverse=True)


def _pieces(action, watched: list) -> list[int]:
    """The pieces `action` frees `watched` in (the caller hands `watched` over: it is emptied)."""
    probe = _Probe()
    probe.watch(watched)
    watched.clear()
    return probe.pieces(action)


def test_a_big_structure_is_freed_in_pieces_and_whole():
    leaves = [Leaf() for _ in range(20000)]
    structure = {"table": {f"k{i}": leaf for i, leaf in enumerate(leaves[:12000])},
                 "rows": [[leaf] for leaf in leaves[12000:18000]],
                 "nested": {"deeper": {"list": leaves[18000:]}}}
    scraps = [structure]
    del structure
    pieces = _pieces(lambda: let_go(scraps), leaves)
    assert sum(pieces) == 20000
    assert pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]


class _Fields:
    """An object with many small fields and one big table among them (an index, a context)."""

    def __init__(self, big: list) -> None:
        for n in range(12):
            setattr(self, f"small{n}", [n])
        self.table = big
        for n in range(12):
            setattr(self, f"other{n}", (n, str(n)))


def test_a_big_field_among_small_ones_is_taken_apart_too():
    leaves = [Leaf() for _ in range(6000)]
    scraps = [_Fields([[leaf] for leaf in leaves])]
    pieces = _pieces(lambda: let_go(scraps), leaves)
    assert sum(pieces) == 6000 and pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]


def test_what_is_still_referred_to_or_in_a_cycle_is_left_as_it_is():
    kept, shared = Leaf(), [Leaf() for _ in range(100)]
    looped = {"leaf": Leaf()}
    looped["self"] = looped                 # a cycle: the collector's, as it was
    freed = [Leaf() for _ in range(100)]
    scraps = [{"kept": kept, "shared": shared, "looped": looped, "freed": list(freed)}]
    loop_ref, freed_refs = weakref.ref(looped["leaf"]), [weakref.ref(x) for x in freed]
    del looped, freed
    let_go(scraps)
    assert scraps == []
    assert len(shared) == 100 and all(isinstance(x, Leaf) for x in shared) and kept.payload == [0]
    assert loop_ref() is not None, "the cycle is left to the collector"
    assert all(r() is None for r in freed_refs)
    gc.collect()
    assert loop_ref() is None


class _Bulky(_Probe):
    """Gives each index made during a test a bulk of its own (the tables of a big bed's index)."""

    def __init__(self, monkeypatch, module) -> None:
        super().__init__()
        base, probe = module.BedIndex, self

        class BulkyIndex(base):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.bulk = {f"port{i}": Leaf() for i in range(3000)}
                probe.watch(self.bulk.values())
        monkeypatch.setattr(module, "BedIndex", BulkyIndex)


@pytest.fixture(scope="module")
def bed():
    return generate(hosts=6, vms=6, arrays=1, disks=8)


def test_a_validation_lets_go_of_its_index_in_pieces(monkeypatch, bed):
    import topology.validation.runner as runner
    from topology.validation import validate
    pieces = _Bulky(monkeypatch, runner).pieces(lambda: validate(bed))
    assert sum(pieces) == 3000 and pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]


def test_a_procedure_lets_go_of_its_index_in_pieces(monkeypatch, bed):
    import topology.methodology.context as context
    from topology.methodology.generation import generate as procedure
    pieces = _Bulky(monkeypatch, context).pieces(lambda: procedure(bed, findings=[]))
    assert sum(pieces) == 3000 and pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]


def test_the_path_view_lets_go_of_its_index_in_pieces(monkeypatch, bed):
    import topology.validation.context as context
    from topology.path_explain import survey
    pieces = _Bulky(monkeypatch, context).pieces(lambda: survey(bed))
    assert sum(pieces) == 3000 and pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]


def test_a_procedure_lets_go_of_the_findings_it_validated_in_pieces(monkeypatch, bed):
    import topology.validation as validation
    from topology.methodology.generation import generate as procedure
    probe, real = _Probe(), validation.validate

    def validate(*args, **kwargs):
        extra = [_finding(i) for i in range(3000)]
        probe.watch(extra)
        return real(*args, **kwargs) + extra
    monkeypatch.setattr(validation, "validate", validate)
    pieces = probe.pieces(lambda: procedure(bed))
    assert sum(pieces) == 3000 and pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]


def _finding(i: int) -> Finding:
    return Finding("NET-007", "error", (f"h{i}",), f"case {i}", "reason", "source", "hint")


def test_findings_that_came_back_equal_are_let_go_of_in_pieces():
    shown = [_finding(i) for i in range(3000)]
    handed = [[_finding(i) for i in range(3000)]]     # the worker's new list, equal to the one shown
    watched = list(handed[0])
    kept: list = []
    pieces = _pieces(lambda: kept.append(_kept(shown, (handed.pop(), {}))), watched)
    assert kept[0][0] is shown
    assert sum(pieces) == 3000 and pieces[0] <= letting_go.LONGEST_RUN, pieces[:5]
