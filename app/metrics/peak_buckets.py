"""The lowest and highest value per time-aligned bucket of a live series, kept from one
redraw to the next.

`series.peak_decimate` groups a window's points by their index: each second the window
slides, every group shifts, the whole curve is computed again and a noisy line shimmers.
Here a bucket is fixed in time (bucket k holds the points with floor(t / width) == k), so a
new sample changes only the newest bucket, the others are reused, and a peak stays where it
was drawn.  The values may be one series or a 2-D array of series sharing one time axis (a row
each: the metrics of one report, or hosts sampled on the same seconds), bucketed together in one
numpy pass; the dashboard keeps one PeakBuckets per shared axis (python -m bench.dashboard).
"""
from __future__ import annotations

import math

import numpy as np

_EMPTY = np.empty(0)
_NO_IDS = np.empty(0, dtype=np.int64)


def bucket_width(span: float, pixels: int) -> float:
    """Seconds per bucket for a view `span` seconds wide on `pixels` pixels: the power of two
    nearest one pixel, so every redraw of a view of that span has the same bucket edges."""
    raw = span / max(pixels, 1)
    if not (raw > 0 and math.isfinite(raw)):
        return 0.0
    return 2.0 ** round(math.log2(raw))


def _points(t: np.ndarray, v: np.ndarray, width: float):
    """(bucket ids, times, values) of the points' buckets, two points per bucket: its lowest
    value at its first time, its highest at its last (values: one row per series, the last
    axis is time).  A bucket holding a gap (NaN) is NaN, so the gap stays drawn as a gap.  One
    bucket, the usual case each tick, takes the short way."""
    n = t.shape[0]
    if not n:
        return _NO_IDS, _EMPTY, np.empty(v.shape[:-1] + (0,))
    first = math.floor(t[0] / width)
    if first == math.floor(t[-1] / width):
        return np.array([first]), np.array([t[0], t[-1]]), np.stack((v.min(axis=-1), v.max(axis=-1)), axis=-1)
    ids = np.floor(t / width).astype(np.int64)
    starts = np.concatenate(([0], np.flatnonzero(ids[1:] != ids[:-1]) + 1))
    ends = np.concatenate((starts[1:], [n]))
    pt = np.empty(2 * starts.shape[0])
    pv = np.empty(v.shape[:-1] + pt.shape)
    pt[0::2], pt[1::2] = t[starts], t[ends - 1]
    pv[..., 0::2] = np.minimum.reduceat(v, starts, axis=-1)
    pv[..., 1::2] = np.maximum.reduceat(v, starts, axis=-1)
    return ids[starts], pt, pv


class PeakBuckets:
    """Buckets of one series.  update() takes the whole series each time (as SeriesStore
    returns it, oldest first) and recomputes only the first bucket (the ring may have dropped
    part of it) and those from the newest banked one on; points only ever arrive at the end.
    A bucket is banked once its last point is `settle` seconds older than the newest point
    (a sum over hosts still changes while a late host's sample for that second comes in)."""

    __slots__ = ("width", "settle", "rows", "ids", "pt", "pv", "head", "tail", "origin", "head_whole")

    def __init__(self, settle: float = 0.0):
        self.settle = settle
        self._reset(0.0, ())

    def _reset(self, width: float, rows: tuple) -> None:
        self.width = width
        self.rows = rows              # the values' leading shape: () for one series, (k,) for k
        self.ids = _NO_IDS            # banked buckets, oldest first
        self.pt = _EMPTY              # their points, two per bucket
        self.pv = np.empty(rows + (0,))
        self.head = self.tail = (_NO_IDS, _EMPTY, self.pv)    # the first bucket; those not banked yet
        self.origin = math.inf        # the oldest time seen: later first times mean the ring drops samples
        self.head_whole = True        # the first bucket still holds every sample it had

    def update(self, t: np.ndarray, v: np.ndarray, width: float, origin: float = math.inf) -> None:
        """`origin`: the oldest time the series has held, when known from before these buckets."""
        n = t.shape[0]
        if width != self.width or not n or not width > 0 or v.shape[:-1] != self.rows:
            self._reset(width, v.shape[:-1])
        if not n or not width > 0:
            return
        first = math.floor(t[0] / width)
        head_end = int(np.searchsorted(t, (first + 1) * width, "left"))
        tail_from = head_end
        if self.ids.shape[0]:
            banked_to = self.pt[-1]
            j = int(np.searchsorted(t, banked_to, "right"))
            if j == 0 or t[j - 1] != banked_to:
                self._reset(width, self.rows)     # not the series the buckets were made from
            else:
                if self.ids[0] <= first:    # buckets the ring has left, and the one it is leaving
                    keep = int(np.searchsorted(self.ids, first, "right"))
                    self.ids, self.pt, self.pv = self.ids[keep:], self.pt[2 * keep:], self.pv[..., 2 * keep:]
                if self.ids.shape[0]:
                    tail_from = max(j, head_end)
        self.head = _points(t[:head_end], v[..., :head_end], width)
        self.origin = min(self.origin, origin, float(t[0]))
        self.head_whole = float(t[0]) <= self.origin
        ids, pt, pv = _points(t[tail_from:], v[..., tail_from:], width)
        if self.settle:
            bank = int(np.searchsorted(pt[1::2], t[-1] - self.settle, "left"))
        else:
            bank = ids.shape[0] - 1             # all but the newest bucket, which is still filling
        if bank > 0:
            self.ids = np.concatenate((self.ids, ids[:bank]))
            self.pt = np.concatenate((self.pt, pt[:2 * bank]))
            self.pv = np.concatenate((self.pv, pv[..., :2 * bank]), axis=-1)
            ids, pt, pv = ids[bank:], pt[2 * bank:], pv[..., 2 * bank:]
        self.tail = (ids, pt, pv)

    def window(self, x0: float, x1: float) -> tuple[np.ndarray, np.ndarray]:
        """Points to draw between x0 and x1, and one bucket on each side so the line reaches
        the edges."""
        nb = self.ids.shape[0]
        a = max(int(np.searchsorted(self.pt[1::2], x0, "left")) - 1, 0)
        b = min(int(np.searchsorted(self.pt[0::2], x1, "right")) + 1, nb)
        ts, vs = [self.pt[2 * a:2 * b]], [self.pv[..., 2 * a:2 * b]]
        if a == 0 and self.head_whole:
            # a first bucket the ring has begun to drop is left out: it changes every second at
            # the plot's left edge (a repaint of the whole width) for under a pixel of the oldest data
            ts.insert(0, self.head[1])
            vs.insert(0, self.head[2])
        if b == nb:
            ts.append(self.tail[1])
            vs.append(self.tail[2])
        return np.concatenate(ts), np.concatenate(vs, axis=-1)
