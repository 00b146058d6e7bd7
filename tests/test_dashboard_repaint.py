"""A live tick repaints only the columns that changed (widgets/series_layer.py): what the
window shows after many such ticks, the view stepping along as it follows, is exactly what
painting the whole window afresh gives (no stale pixel of an older curve is left behind)."""
from __future__ import annotations

import numpy as np
import pytest

from app.metrics import sample as M
from app.metrics.sample import Sample
from widgets.dashboard import MetricsDashboard, Threshold

HOSTS = 6
METRICS = ((M.IOPS, "IO/s", 5000.0), (M.READ_LATENCY_MS, "ms", 4.0), (M.WRITE_LATENCY_MS, "ms", 2.0),
           (M.THROUGHPUT_MBPS, "MB/s", 40.0))


def _grid(image) -> np.ndarray:
    return np.array([[image.pixel(x, y) for x in range(image.width())] for y in range(image.height())])


@pytest.mark.parametrize("window_s,capacity", [(3600, 3600), (0, 7200)])
def test_what_a_live_tick_leaves_on_screen_is_the_whole_window_painted_afresh(qtbot, window_s, capacity):
    from app.metrics.series import SeriesStore
    dash = MetricsDashboard(store=SeriesStore(capacity))
    qtbot.addWidget(dash)
    dash.resize(900, 600)
    dash._timer.stop()              # the test ticks itself, as the timer would
    dash.set_thresholds([Threshold("read", "<", 20.0, "db read < 20 ms")])
    dash.window_combo.setCurrentIndex(dash.window_combo.findData(window_s))
    rng = np.random.default_rng(11)
    t0 = 1.8e9
    for metric, unit, base in METRICS:        # an hour held: the last-hour view's ring is full
        for h in range(HOSTS):
            dash.store.ingest_arrays(f"host{h}", metric, unit, t0 + np.arange(3600.0),
                                     base * (1 + 0.25 * rng.standard_normal(3600)))
    dash.show()
    qtbot.waitExposed(dash)
    dash.redraw()
    qtbot.wait(10)
    for i in range(40):             # the view steps along meanwhile (by 1 % of the hour: 36 s)
        dash.ingest([Sample(t0 + 3600 + i, f"host{h}", metric, base * (1 + 0.25 * rng.standard_normal()), unit)
                     for h in range(HOSTS) for metric, unit, base in METRICS])
        dash.redraw()
        qtbot.wait(5)
    on_screen = dash.screen().grabWindow(dash.winId()).toImage()
    afresh = dash.grab().toImage().convertToFormat(on_screen.format())
    stale = np.argwhere(_grid(on_screen) != _grid(afresh))
    assert stale.size == 0, f"{len(stale)} pixels differ from a fresh paint, first at (y, x) {stale[:3].tolist()}"
    dash.shutdown()
