"""The model rows of `make bench` time a region with the collection of what it made, and nothing that
earlier work left: on the 4x bed a walk of the reference pass's 10^6 objects landed inside the
scenario pass in some runs and not in others (0.06 -> 0.52 s a scenario, "NOT LINEAR")."""
from __future__ import annotations

import gc

import pytest

from bench import model_rows


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def _young() -> int:
    return len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))


@pytest.mark.parametrize("count", [False, True], ids=["timed", "counted"])
def test_a_region_starts_with_nothing_left_to_collect_and_ends_with_its_own_objects_walked(collector_on, count):
    gc.disable()
    earlier = [[i] for i in range(200_000)]      # what a paused bulk job left: young, never walked
    gc.enable()
    young_at_entry: list[int] = []

    def region() -> list:
        young_at_entry.append(_young())
        gc.disable()                               # as topology.gc_pause pauses it for a bulk job
        made = [[i] for i in range(100_000)]
        gc.enable()
        return made

    took, made = model_rows._timed(region, count)
    assert young_at_entry[0] < 10_000, "the earlier job's objects were still to be walked inside the region"
    assert _young() < 10_000, "the region's own objects were left for whatever is timed next"
    assert len(made) == 100_000 and len(earlier) == 200_000
    assert count or (took["cpu"] >= 0 and took["wall"] > 0)
