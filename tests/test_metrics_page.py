"""The live metrics page read as a person reads it (issue 15 item 11): plots sized to the window,
the time axis spanning the run, pass criteria that never flatten the data, labels not cut."""
from __future__ import annotations

import numpy as np
import pytest

from app.metrics import sample as M
from app.metrics.criterion_scale import criterion_scale
from app.metrics.sample import Sample
from tests.dialogs import forget_changes
from tests.test_dashboard import dashboard  # noqa: F401 - the fixture
from widgets.dashboard import PLOTS, MetricsDashboard, Threshold

T0 = 1_800_000_000.0


def _feed(dash: MetricsDashboard, seconds: int, hosts=("c1", "c2"), read_ms: float = 0.35) -> None:
    rng = np.random.default_rng(5)
    for h in hosts:
        dash.ingest([s for i in range(seconds) for s in (
            Sample(T0 + i, h, M.IOPS, 5000 + 200 * rng.standard_normal(), "IO/s"),
            Sample(T0 + i, h, M.READ_LATENCY_MS, read_ms * (1 + 0.1 * rng.standard_normal()), "ms"),
            Sample(T0 + i, h, M.WRITE_LATENCY_MS, 0.5 * (1 + 0.1 * rng.standard_normal()), "ms"),
            Sample(T0 + i, h, M.THROUGHPUT_MBPS, 20 + rng.standard_normal(), "MB/s"))])


@pytest.fixture
def dash(dashboard):
    dashboard.resize(1200, 760)
    return dashboard


def _drawn_span(dash, key="c1", metric=M.IOPS) -> float:
    t, _v = dash._curves[(key, metric)].getData()
    return float(t[-1] - t[0])


def _view_span(dash, plot="iops") -> tuple[float, float]:
    (x0, x1), _ = dash.plots[plot].vb.viewRange()
    return float(x0), float(x1)


@pytest.mark.parametrize("size, least", [((1366, 768), (560, 150)), ((1920, 1080), (850, 250))])
def test_the_plots_take_the_window_in_the_main_window(qtbot, size, least):
    import resources
    from widgets.main_window import MainWindow
    window = MainWindow()
    qtbot.addWidget(window)
    window.setGeometry(0, 0, *size)
    window.show()
    window.open_path(resources.example_path("ams2500-exchange-esrp"))
    window.tabs.setCurrentWidget(window.run)
    window.run.pages.setCurrentWidget(window.run.metrics_page)
    dash = window.run.ensure_dashboard()
    _feed(dash, 60)
    qtbot.waitUntil(lambda: ("c1", M.IOPS) in dash._curves, timeout=3000)
    qtbot.wait(100)
    for key, plot in dash.plots.items():
        w, h = plot.vb.width(), plot.vb.height()
        assert w >= least[0] and h >= least[1], f"{key} plot is {w:.0f}×{h:.0f} px at {size}"
    # the drawing docks make room while the run is shown, and come back with the drawing
    assert not any(d.isVisible() for d in window.docks.values())
    window.tabs.setCurrentWidget(window.canvas)
    assert window.docks["properties"].isVisible() and window.docks["findings"].isVisible()
    window.tabs.setCurrentWidget(window.run)
    assert not window.docks["properties"].isVisible()
    window.run.shutdown()
    forget_changes(window)


def test_a_60_second_run_fills_the_plot_and_the_view_spans_the_stated_run_length(qtbot, dash):
    dash.set_run_length(60)
    _feed(dash, 20)
    qtbot.waitUntil(lambda: ("c1", M.IOPS) in dash._curves, timeout=3000)
    qtbot.wait(300)
    x0, x1 = _view_span(dash)
    assert x1 - x0 == pytest.approx(60, rel=0.03)        # a third of the way in: the whole run is in view
    assert x0 == pytest.approx(T0, abs=1)
    _feed(dash, 60)
    qtbot.wait(400)
    x0, x1 = _view_span(dash)
    assert _drawn_span(dash) / (x1 - x0) > 0.95           # the finished run fills the plot


def test_without_a_stated_length_the_whole_run_still_fills_the_plot(qtbot, dash):
    _feed(dash, 45)
    qtbot.waitUntil(lambda: ("c1", M.IOPS) in dash._curves, timeout=3000)
    qtbot.wait(300)
    x0, x1 = _view_span(dash)
    assert dash.window_combo.currentText() == "Whole run"
    assert _drawn_span(dash) / (x1 - x0) > 0.95


def test_a_far_criterion_is_named_at_the_edge_and_never_flattens_the_data(qtbot, dash):
    far = Threshold("read", "<", 20.0, "oltp: DB read latency avg < 20 ms")
    near = Threshold("write", "<", 0.8, "oltp: log write latency avg < 0.8 ms")
    dash.set_thresholds([far, near])
    _feed(dash, 60, read_ms=0.35)
    qtbot.waitUntil(lambda: ("c1", M.READ_LATENCY_MS) in dash._curves, timeout=3000)
    qtbot.wait(300)
    (_, _), (y0, y1) = dash.plots["read"].vb.viewRange()
    peak = float(np.nanmax(dash._curves[("c1", M.READ_LATENCY_MS)].getData()[1]))
    assert y1 < 1.0 and peak / y1 > 0.7                   # the data uses most of the height
    assert not dash._lines[far].isVisible()
    assert dash.off_scale_text("read") == "▲ above the scale: < 20 ms"
    # a criterion near the data is drawn as its line, inside the range
    (_, _), (_, w1) = dash.plots["write"].vb.viewRange()
    assert dash._lines[near].isVisible() and 0.8 < w1 < 1.2
    assert dash.off_scale_text("write") == ""


def test_criterion_labels_and_axes_are_never_cut(qtbot, dash):
    long = Threshold("read", "<", 0.5, "JETSTRESS-SUN168: DB read latency avg during the stress phase < 0.5 ms")
    dash.set_thresholds([long])
    _feed(dash, 60)
    dash.resize(760, 560)
    qtbot.wait(400)
    label = dash._lines[long].label
    vb = dash.plots["read"].vb
    box = label.mapRectToItem(vb, label.boundingRect())
    assert box.left() >= 0 and box.right() <= vb.width() + 1      # inside the plot, not cut by its edge
    shown = label.toPlainText()
    assert "…" in shown and shown.startswith("JETSTRESS-SUN168") and shown.endswith("0.5 ms")
    assert label.toolTip() == long.label
    for key, *_ in PLOTS:
        axis = dash.plots[key].getAxis("left")
        assert not axis.autoSIPrefix and "x0.001" not in axis.labelString()
    assert dash.plots["read"].titleLabel.text == "Read latency (ms)"


@pytest.mark.parametrize("peak, lines, top, in_range, off", [
    (0.35, [20.0], 0.35 * 1.15, (), (20.0,)),
    (0.35, [0.5], 0.5 * 1.15, (0.5,), ()),
    (5000.0, [459.0], 5000 * 1.15, (459.0,), ()),
    (None, [20.0, 10.0], 20 * 1.15, (20.0, 10.0), ()),        # no data yet: show where the lines are
    (0.0, [], 1.15, (), ()),
])
def test_the_scale_follows_the_data_not_the_criteria(peak, lines, top, in_range, off):
    s = criterion_scale(peak, lines)
    assert s.top == pytest.approx(top) and s.in_range == in_range and s.off_scale == off
