"""The live dashboard by place in the test (issue 29): a run of the run section holds every
repetition, phase and level; the dashboard's "Place:" chooser shows one place's samples on their
own, the same places and the same samples as `results RUN` tables them (app.metrics.by_place)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from app.metrics import sample as M
from app.metrics.by_place import placed_report
from app.metrics.results import load_samples
from app.metrics.sample import Sample
from app.run import journal as J
from app.run.positions import write_positions
from widgets.dashboard import MetricsDashboard

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "screenshots"


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    """A real run of the run section on this machine (the local transport, real fio), its load
    repeated twice by the run plan: two places in the test, "run 1" and "run 2"."""
    if shutil.which("fio") is None:
        pytest.skip("needs fio (installed by .ci/setup.sh)")
    from tests.run_beds import write_fio_bed
    tmp = tmp_path_factory.mktemp("dash-places")
    bed = write_fio_bed(tmp / "fio.yaml", "lc1", tmp / "lc1.dat", access={"transport": "local"}, minutes=0.05)
    doc = yaml.safe_load(bed.read_text())
    doc["run_plan"]["repetitions"] = 2
    bed.write_text(yaml.safe_dump(doc, sort_keys=False))
    env = os.environ | {"TESTBED_STUDIO_STATE_DIR": str(tmp / "state")}
    r = subprocess.run([sys.executable, "-m", "app.cli", "run", str(bed), "--steps", "3", "--skip-manual"],
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    (run_dir,) = (tmp / "state" / "runs").iterdir()
    return run_dir


@pytest.fixture
def dashboard(qtbot):
    d = MetricsDashboard()
    qtbot.addWidget(d)
    d.resize(1100, 720)
    d.show()
    yield d
    d.shutdown()


def _drawn_times(dashboard, source: str, metric: str = M.IOPS) -> list[float]:
    line = dashboard.layers["iops"].lines.get((source, metric))
    if line is None:
        return []
    return sorted(float(t) for t, v in zip(line.x, line.y, strict=True) if np.isfinite(v))


def _place_times(place, source: str, metric: str = M.IOPS) -> list[float]:
    return sorted(s.timestamp for s in place.samples if s.source == source and s.metric == metric
                  and np.isfinite(s.value))


@pytest.mark.slow
def test_a_finished_run_opened_again_shows_each_place_on_its_own_as_results_tables_it(qtbot, dashboard,
                                                                                      recorded_run):
    report = placed_report(recorded_run, load_samples(recorded_run))
    assert report is not None and [p.label for p in report.places] == ["run 1", "run 2"]
    dashboard.show_history(recorded_run)
    chooser = dashboard.places
    assert chooser.combo.isVisible()
    assert chooser.place_labels() == [p.label for p in report.places]
    # the whole test marks where each place begins: its first sample, as results places it
    assert chooser.markers() == [(min(s.timestamp for s in p.samples if s.source == "lc1"), p.label)
                                 for p in report.places]
    every = _drawn_times(dashboard, "lc1")
    assert len(every) == sum(len(_place_times(p, "lc1")) for p in report.places)
    for place in report.places:
        assert chooser.choose(place.key)
        dashboard.redraw()
        shown = _drawn_times(dashboard, "lc1")
        assert shown and shown == _place_times(place, "lc1"), place.label
        # nothing of the other repetition: its seconds are not drawn
        others = [t for p in report.places if p is not place for t in _place_times(p, "lc1")]
        assert not set(shown) & set(others)
        assert chooser.samples_shown() == sum(1 for s in place.samples if np.isfinite(s.value))
        assert chooser.markers() == []          # one place on its own: nothing to mark
    dashboard.window_combo.setCurrentIndex(0)
    qtbot.wait(400)
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert dashboard.grab().save(str(SHOTS / "dashboard-by-place.png"))
    assert chooser.choose(None)
    dashboard.redraw()
    assert _drawn_times(dashboard, "lc1") == every and len(chooser.markers()) == 2
    qtbot.wait(300)
    assert dashboard.grab().save(str(SHOTS / "dashboard-whole-test-places.png"))


def test_the_run_tab_opening_a_finished_run_plots_each_place_on_its_own(qtbot, recorded_run, monkeypatch):
    from app.document import Document
    from widgets.run_wizard import RunWizard
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(recorded_run.parent.parent))
    report = placed_report(recorded_run, load_samples(recorded_run))
    document = Document()
    document.open(recorded_run.parent.parent.parent / "fio.yaml")
    w = RunWizard(document)
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    try:
        w.resume(recorded_run.name)
        assert w.session is not None and w.session.run_id == recorded_run.name
        w.pages.setCurrentWidget(w.metrics_page)
        chooser = w.dashboard.places
        assert chooser.place_labels() == ["run 1", "run 2"]
        second = report.places[1]
        chooser.combo.setCurrentIndex(2)                # as a person picks "run 2" in the list
        qtbot.waitUntil(lambda: _drawn_times(w.dashboard, "lc1") == _place_times(second, "lc1"), timeout=3000)
        qtbot.wait(300)
        SHOTS.mkdir(parents=True, exist_ok=True)
        assert w.grab().save(str(SHOTS / "run-tab-dashboard-by-place.png"))
    finally:
        w.shutdown()


def _step(number: str, repetition: str):
    task = SimpleNamespace(position={"phase": "oltp", "level": "4 cells", "repetition": repetition})
    return SimpleNamespace(number=number, tasks=[task])


def _second(host: str, t: float, iops: float) -> list[Sample]:
    return [Sample(t, host, M.IOPS, iops, "IO/s"), Sample(t, host, M.READ_LATENCY_MS, 2.0, "ms")]


def test_a_live_run_lists_each_place_as_its_steps_start_and_keeps_them_apart(qtbot, dashboard, tmp_path):
    info = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path)
    write_positions(info.dir, [_step("7.1", "1"), _step("7.2", "2")])
    dashboard.show_history(info.dir)            # as the Run tab does when a run starts
    chooser = dashboard.places
    assert not chooser.combo.isVisible()        # no step of the test has run yet
    with J.Journal(info.dir) as journal:
        journal.record("start", step="7.1", host="hv1")
        first = time.time() + 0.01
        dashboard.ingest([s for i in range(3) for s in _second("hv1", first + i * 0.01, 1000.0)])
        time.sleep(0.1)
        journal.record("end", step="7.1", host="hv1", status="ok")
        qtbot.waitUntil(lambda: chooser.place_labels() == ["oltp, 4 cells, run 1"], timeout=5000)
        journal.record("start", step="7.2", host="hv1")
        second = time.time() + 0.01
        dashboard.ingest([s for i in range(4) for s in _second("hv1", second + i * 0.01, 3000.0)])
        qtbot.waitUntil(lambda: chooser.place_labels() == ["oltp, 4 cells, run 1", "oltp, 4 cells, run 2"],
                        timeout=5000)
        qtbot.waitUntil(lambda: [label for _t, label in chooser.markers()] == ["oltp, 4 cells, run 1",
                                                                             "oltp, 4 cells, run 2"], timeout=5000)
        assert chooser.markers()[1][0] == pytest.approx(second)        # run 2 begins at its first sample
        assert chooser.choose(chooser.place_keys()[0])
        dashboard.redraw()
        assert len(_drawn_times(dashboard, "hv1")) == 3
        assert chooser.choose(chooser.place_keys()[1])
        dashboard.redraw()
        assert len(_drawn_times(dashboard, "hv1")) == 4
        # the running place follows the samples that come in
        dashboard.ingest(_second("hv1", time.time(), 3000.0))
        qtbot.waitUntil(lambda: len(_drawn_times(dashboard, "hv1")) == 5, timeout=3000)
        line = dashboard.layers["iops"].lines[("hv1", M.IOPS)]
        assert set(line.y[np.isfinite(line.y)]) == {3000.0}


def test_each_sample_is_at_the_place_results_puts_it_overlaps_nesting_clock_skew_and_running_steps():
    """The dashboard's whole-array placing against `results`' own, sample by sample, on step windows
    that overlap, nest, leave gaps shorter and longer than the clock slack, and one still running."""
    import math

    from app.metrics.by_place import _place_at
    from app.metrics.place_series import places_at
    rng = np.random.default_rng(29)
    for _case in range(40):
        keys = [("", "phase", "", f"{k} cells", str(r)) for k in range(1, 4) for r in (1, 2)]
        windows = []
        start = 1_800_000_000.0
        for _ in range(int(rng.integers(1, 12))):
            start += float(rng.choice([0.0, 5.0, 20.0, 45.0, 90.0]) + rng.random() * 10)
            length = float(rng.choice([1.0, 15.0, 60.0, 200.0]))
            windows.append((start, start + length, keys[int(rng.integers(len(keys)))]))
        if rng.random() < 0.3:
            windows.append((start + 30.0, math.inf, keys[0]))            # a step still running
        windows.sort()
        t = np.sort(rng.uniform(windows[0][0] - 60, windows[-1][0] + 400, 400))
        got = places_at(t, windows, keys)
        want = [_place_at(float(x), windows) for x in t]
        assert [keys[i] if i >= 0 else None for i in got] == [None if w[-1] == "outside" else w for w in want]
