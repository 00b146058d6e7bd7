"""The live dashboard fed by a real fio run on this machine (the same parser the run wizard
uses on remote hosts), checked against fio's own final report."""
from __future__ import annotations

import math
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from app.metrics import sample as M
from app.metrics.sample import Sample
from app.metrics.streams import FioStatusParser, fio_final_summary
from widgets.dashboard import ALL_HOSTS, MetricsDashboard, Threshold, thresholds_from_bed


@pytest.fixture
def dashboard(qtbot):
    d = MetricsDashboard()
    qtbot.addWidget(d)
    d.resize(1100, 720)
    d.show()
    yield d
    d.shutdown()


def _fio_stream(tmp_path: Path, seconds: int = 4) -> subprocess.Popen:
    return subprocess.Popen(["fio", "--name=dash", f"--filename={tmp_path / 'fio.dat'}", "--size=16m",
                             "--rw=randrw", "--rwmixread=70", "--bs=4k", f"--runtime={seconds}", "--time_based",
                             "--output-format=json", "--status-interval=1"],
                            stdout=subprocess.PIPE, text=True)


def test_real_fio_feeds_the_plots_and_matches_fios_own_report(qtbot, dashboard, tmp_path):
    parser = FioStatusParser("c1")
    proc = _fio_stream(tmp_path)

    def pump():          # the collector thread: ingest happens off the GUI thread
        for line in proc.stdout:
            dashboard.ingest(parser.feed(line))
        dashboard.ingest(parser.close())

    reader = threading.Thread(target=pump)
    reader.start()
    qtbot.waitUntil(lambda: not reader.is_alive(), timeout=30000)
    reader.join()
    assert proc.wait(10) == 0 and parser.problems == []
    qtbot.wait(400)             # at least one timer-driven redraw
    curve = dashboard._curves[("c1", M.IOPS)]
    t, v = curve.getData()
    st, sv = dashboard.store.series("c1", M.IOPS)
    assert np.array_equal(t, st) and np.array_equal(v, sv) and len(v) >= 4
    fio = fio_final_summary(parser.final_report)
    # the per-second figures are differences of fio's cumulative reports, the last interval
    # being a fraction of a second: their time-weighted mean is fio's whole-run IOPS
    weights = np.diff(np.concatenate([[st[0] - 1], st]))
    plotted = float((sv * weights).sum() / weights.sum())
    assert plotted == pytest.approx(fio["iops"], rel=0.05)
    t_lat, v_lat = dashboard._curves[("c1", M.READ_LATENCY_MS)].getData()
    assert np.nanmean(v_lat) == pytest.approx(fio["read_latency_ms"], rel=0.25)


def test_threshold_lines_come_from_the_bed_and_show_the_time_beyond(qtbot, dashboard):
    from resources import example_path
    from topology.fileformat import load
    lines = thresholds_from_bed(load(example_path("ams2500-exchange-esrp")))
    assert any(th.plot == "read" and th.value == 20 for th in lines)
    assert any(th.plot == "write" and th.value == 10 for th in lines)
    dashboard.set_thresholds([Threshold("read", "<", 20.0, "DB read < 20 ms")])
    values = [5, 8, 25, 30, 9, 6]
    dashboard.ingest([Sample(1000 + i, "h1", M.READ_LATENCY_MS, v, "ms") for i, v in enumerate(values)])
    dashboard.ingest([Sample(1000 + i, "h1", M.IOPS, 100.0, "IO/s") for i in range(6)])
    qtbot.waitUntil(lambda: "over the line 2 s" in dashboard._lines[dashboard.thresholds[0]].label.format, timeout=3000)
    assert "DB read < 20 ms: 2 s beyond" in dashboard.status.text()
    line = dashboard._lines[dashboard.thresholds[0]]
    assert line.value() == 20.0


def test_pause_freezes_the_view_while_ingest_goes_on_and_resume_catches_up(qtbot, dashboard):
    dashboard.ingest([Sample(1000 + i, "h1", M.IOPS, 10.0, "IO/s") for i in range(5)])
    qtbot.waitUntil(lambda: ("h1", M.IOPS) in dashboard._curves, timeout=3000)
    dashboard.pause_button.click()
    dashboard.ingest([Sample(1005 + i, "h1", M.IOPS, 20.0, "IO/s") for i in range(5)])
    qtbot.wait(600)
    assert len(dashboard._curves[("h1", M.IOPS)].getData()[1]) == 5
    dashboard.pause_button.click()
    qtbot.waitUntil(lambda: len(dashboard._curves[("h1", M.IOPS)].getData()[1]) == 10, timeout=3000)


def test_the_series_picker_hides_a_host_and_gaps_stay_gaps(qtbot, dashboard):
    for host in ("h1", "h2"):
        dashboard.ingest([Sample(1000 + i, host, M.IOPS, math.nan if i == 2 else 50.0, "IO/s") for i in range(5)])
    qtbot.waitUntil(lambda: len(dashboard.series_menu.actions()) == 3, timeout=3000)
    t, v = dashboard._curves[(ALL_HOSTS, M.IOPS)].getData()
    assert v[0] == 100.0 and math.isnan(v[2])          # both hosts missing that second: a gap, not 0
    assert [a.text() for a in dashboard.series_menu.actions()] == [ALL_HOSTS, "h1", "h2"]
    dashboard.series_action("h2").trigger()              # the person unticks h2 in the Series menu
    assert not dashboard._curves[("h2", M.IOPS)].isVisible()
    assert not dashboard.problems.isVisible()             # no room taken before there is something to say
    dashboard.add_problem("fio on h2: collector stopped - gap from 10:02:13")
    assert "collector stopped" in dashboard.problems.toPlainText()


def test_hundreds_of_redraws_do_not_crash(qtbot, dashboard):
    """PySide6 6.12.0 was seen to crash pyqtgraph after a few hundred redraws: the pin stays
    only while this passes."""
    for k in range(400):
        dashboard.ingest([Sample(1000 + k, f"h{i}", M.IOPS, float(k + i), "IO/s") for i in range(8)])
        dashboard.redraw()
    assert dashboard.redraws >= 400


def test_the_dashboard_screenshot(qtbot, dashboard):
    dashboard.set_thresholds([Threshold("read", "<", 20.0, "DB read < 20 ms"),
                              Threshold("write", "<", 10.0, "log write < 10 ms")])
    rng = np.random.default_rng(7)
    samples = []
    for i in range(300):
        for h, base in (("hv1", 1800), ("hv2", 1500), ("hv3", 1650)):
            samples += [Sample(1_795_600_000 + i, h, M.IOPS, base + rng.normal(0, 80), "IO/s"),
                        Sample(1_795_600_000 + i, h, M.READ_LATENCY_MS,
                               12 + rng.normal(0, 3) + (9 if 200 < i < 215 else 0), "ms"),
                        Sample(1_795_600_000 + i, h, M.WRITE_LATENCY_MS, 4 + rng.normal(0, 1), "ms"),
                        Sample(1_795_600_000 + i, h, M.THROUGHPUT_MBPS, base * 0.032 + rng.normal(0, 2), "MB/s")]
    dashboard.ingest(samples)
    qtbot.wait(600)
    out = Path(__file__).parent.parent / "build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    assert dashboard.grab().save(str(out / "dashboard.png"))


def test_zooming_back_in_time_stops_following_and_shows_the_full_detail_there(qtbot, dashboard):
    t0 = 1_800_000_000.0
    # an hour of one host, a spike at minute 10 that decimation must keep at every zoom
    values = [100.0] * 3600
    values[600] = 900.0
    dashboard.window_combo.setCurrentIndex(dashboard.window_combo.findData(3600))     # the last hour
    dashboard.ingest([Sample(t0 + i, "h1", M.IOPS, v, "IO/s") for i, v in enumerate(values)])
    qtbot.waitUntil(lambda: ("h1", M.IOPS) in dashboard._curves, timeout=3000)
    t, v = dashboard._curves[("h1", M.IOPS)].getData()
    assert len(t) < 3600 / 2 and np.nanmax(v) == 900.0            # decimated to the plot's width, spike kept
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtCore import Qt as QtNs
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication
    view, vb = dashboard.graphics, dashboard.plots["iops"].vb
    at = view.mapFromScene(vb.mapToScene(vb.boundingRect().center()))
    wheel = QWheelEvent(QPointF(at), QPointF(view.viewport().mapToGlobal(at)), QPoint(0, 0), QPoint(0, 120),
                        QtNs.MouseButton.NoButton, QtNs.KeyboardModifier.NoModifier,
                        QtNs.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), wheel)                  # the mouse wheel zooms in
    assert not dashboard.follow.isChecked()
    vb.setXRange(t0 + 590, t0 + 620, padding=0)
    qtbot.waitUntil(lambda: dashboard._curves[("h1", M.IOPS)].getData()[0][0] >= t0 + 580, timeout=3000)
    t, v = dashboard._curves[("h1", M.IOPS)].getData()
    assert list(t) == [t0 + i for i in range(589, 622)] and v[600 - 589] == 900.0   # every second in the zoom
    dashboard.ingest([Sample(t0 + 3600 + i, "h1", M.IOPS, 100.0, "IO/s") for i in range(5)])
    qtbot.wait(400)
    (x0, x1), _ = dashboard.plots["iops"].vb.viewRange()
    assert x1 < t0 + 700                                             # new seconds do not pull the view away
    dashboard.follow.setChecked(True)
    qtbot.waitUntil(lambda: dashboard.plots["iops"].vb.viewRange()[0][1] >= t0 + 3604, timeout=3000)
