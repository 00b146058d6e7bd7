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


def _measured(rows: dict[str, float]) -> tuple[dict, dict, dict]:
    """What model_rows.measure returns, with the 4x figure of each row `rows` times the 1x one."""
    one = {"took": {name: {"instructions": 1e9, "cpu": 1.0, "wall": 1.0} for name, *_ in model_rows.ROWS},
           "peak_rss_mb": 400.0, "scenarios": 2, "hosts": 2000, "vms": 20000, "arrays": 100}
    big = {**one, "took": {name: {k: v * rows.get(name, 4.0) for k, v in one["took"][name].items()}
                           for name in one["took"]}, "peak_rss_mb": 600.0, "hosts": 8000}
    return {"mb_1": 7.0, "mb_4": 28.0}, one, big


def test_a_row_faster_in_cpu_time_only_is_counted_and_passes_and_one_faster_in_its_count_fails(monkeypatch, capsys):
    import bench.instructions
    monkeypatch.setattr(bench.instructions, "available", lambda: True)
    monkeypatch.setattr(model_rows, "measure", lambda scale, repeat, factor, instructions: _measured({}))
    assert model_rows.count_to_judge(1.0, 4, ["validation, per scenario: 6.45x"]) == []
    assert "every row linear in instructions" in capsys.readouterr().out
    monkeypatch.setattr(model_rows, "measure",
                        lambda scale, repeat, factor, instructions: _measured({"scenario_pass": 16.0}))
    still = model_rows.count_to_judge(1.0, 4, ["validation, per scenario: 6.45x"])
    assert still == ["validation, per scenario (scenario pass on its own): 16.00x"]


def test_without_valgrind_the_cpu_verdict_stands(monkeypatch, capsys):
    import bench.instructions
    monkeypatch.setattr(bench.instructions, "available", lambda: False)
    assert model_rows.count_to_judge(1.0, 4, ["save: 4.6x"]) == ["save: 4.6x"]
    assert "valgrind not installed" in capsys.readouterr().out
