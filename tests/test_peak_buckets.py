"""The dashboard's kept decimation (app.metrics.peak_buckets): a curve updated tick by tick,
its ring dropping the oldest seconds, draws what the same samples drawn whole would."""
from __future__ import annotations

import numpy as np

from app.metrics.peak_buckets import PeakBuckets, bucket_width
from app.metrics.sample import Sample
from app.metrics.series import SeriesStore


def _live(store: SeriesStore, values, t0: float, settle: float = 0.0, span: float = 600.0, pixels: int = 150):
    """Feed `values` one second at a time, drawing after each; yields (kept, whole) windows."""
    kept = PeakBuckets(settle)
    for i, value in enumerate(values):
        store.ingest([Sample(t0 + i, "h1", "iops", float(value), "IO/s")])
        t, v = store.series("h1", "iops")
        x1 = t[-1]
        width = bucket_width(span, pixels)
        kept.update(t, v, width)
        whole = PeakBuckets(settle)
        whole.update(t, v, width)
        wt, wv = whole.window(x1 - span, x1)
        if not kept.head_whole:
            # the ring has begun to drop the first bucket: the live curve leaves it out (it
            # would change at the left edge every second), the curve drawn afresh cannot know
            wt, wv = wt[2:], wv[2:]
        yield kept.window(x1 - span, x1), (wt, wv)


def test_a_live_curve_is_the_curve_drawn_whole_as_the_ring_wraps():
    rng = np.random.default_rng(5)
    values = 100 + 10 * rng.standard_normal(1500)
    values[700] = 5000.0            # a one-second spike
    values[900:903] = np.nan        # a gap
    store = SeriesStore(capacity=600)     # wraps after 600 s: the oldest buckets leave
    for n, ((kt, kv), (wt, wv)) in enumerate(_live(store, values, 1.7e9 + 0.25)):
        assert np.array_equal(kt, wt) and np.array_equal(kv, wv, equal_nan=True), f"tick {n}"
        if n > 700:     # the live curve starts at most a bucket after the ring's oldest second
            assert kt[0] - store.series("h1", "iops")[0][0] <= bucket_width(600.0, 150)
    # the spike and the gap are drawn while they are in view
    store = SeriesStore(capacity=600)
    for n, ((kt, kv), _whole) in enumerate(_live(store, values[:950], 1.7e9)):
        if n == 949:
            assert np.nanmax(kv) == 5000.0 and np.isnan(kv).any()
            assert kt.size <= 2 * 150 * 2          # about two points per pixel, not one per second


def test_buckets_stay_put_as_the_view_follows():
    """A bucket is fixed in time: a second later the same seconds make the same points."""
    rng = np.random.default_rng(6)
    t = 1.7e9 + np.arange(3600.0)
    v = rng.random(3600)
    width = bucket_width(3600, 560)
    a, b = PeakBuckets(), PeakBuckets()
    a.update(t[:-1], v[:-1], width)
    b.update(t[1:], v[1:], width)
    at, _ = a.window(t[0], t[-2])
    bt, _ = b.window(t[1], t[-1])
    shared = np.intersect1d(at, bt)
    assert shared.size > 0.9 * min(at.size, bt.size)


def test_a_sum_still_changing_is_not_kept_before_it_settles():
    """The all-hosts sum of a second grows while late hosts' samples for it come in: with a
    settle time the kept curve follows the later value, as drawing it whole would."""
    t = 1.7e9 + np.arange(200.0)
    v = np.full(200, 10.0)
    kept = PeakBuckets(settle=30.0)
    width = bucket_width(200, 50)
    kept.update(t, v, width)
    v2 = v.copy()
    v2[190] = 99.0                  # a late host's sample for a second 10 s ago
    kept.update(t, v2, width)
    whole = PeakBuckets(settle=30.0)
    whole.update(t, v2, width)
    assert np.array_equal(kept.window(t[0], t[-1])[1], whole.window(t[0], t[-1])[1])
    assert 99.0 in kept.window(t[0], t[-1])[1]


def test_series_sharing_a_time_axis_draw_together_what_each_draws_alone():
    """The dashboard decimates the series that share a time axis in one pass, a row each
    (app.metrics.kept_decimation): each row is the curve its series draws alone, tick by tick
    as the ring wraps, a spike and a gap in one row and not the others included."""
    from app.metrics.kept_decimation import KeptDecimation
    rng = np.random.default_rng(8)
    rows = 100 + 10 * rng.standard_normal((3, 900))
    rows[1, 500] = 5000.0
    rows[2, 610:613] = np.nan
    store = SeriesStore(capacity=600)
    together, alone = KeptDecimation(), KeptDecimation()
    keys = [(f"h{i}", "iops") for i in range(3)]
    t0 = 1.7e9 + 0.25
    for i in range(900):
        store.ingest([Sample(t0 + i, src, metric, float(rows[r, i]), "IO/s") for r, (src, metric) in enumerate(keys)])
        [(grouped, t, values)] = store.shared_axes(keys, keys)
        assert grouped == keys and values.shape == (3, t.shape[0])
        x1 = t[-1]
        dt, dv = together.rows(keys, t, values, x1 - 600.0, x1, 150)
        for r, (src, metric) in enumerate(keys):
            at, av = alone.one((src, metric), *store.series(src, metric), x1 - 600.0, x1, 150)
            assert np.array_equal(dt, at) and np.array_equal(dv[r], av, equal_nan=True), f"tick {i}, row {r}"
        together.end_redraw()
        alone.end_redraw()
    assert together._buckets and dt.shape[0] < 2 * 2 * 150       # the kept buckets drew the last ticks


def test_series_on_other_times_are_not_put_on_one_axis():
    store = SeriesStore()
    t = 1.7e9 + np.arange(100.0)
    store.ingest_arrays("a", "iops", "IO/s", t, np.ones(100))
    store.ingest_arrays("a", "read", "ms", t, np.ones(100))          # the same report's times
    store.ingest_arrays("b", "iops", "IO/s", t + 0.013, np.ones(100))   # another host's clock
    shifted = t.copy()
    shifted[50] += 0.5                                                   # the same ends, another time between
    store.ingest_arrays("c", "iops", "IO/s", shifted, np.ones(100))
    keys = [("a", "iops"), ("a", "read"), ("b", "iops"), ("c", "iops")]
    groups = sorted(g for g, _t, _v in store.shared_axes(keys, keys))
    assert groups == [[("a", "iops"), ("a", "read")], [("b", "iops")], [("c", "iops")]]
    # only the groups holding a series asked for
    assert [g for g, _t, _v in store.shared_axes(keys, {("b", "iops")})] == [[("b", "iops")]]
