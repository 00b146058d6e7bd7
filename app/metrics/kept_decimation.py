"""What each dashboard curve draws of its series: the points between the window's edges,
decimated to the plot's width, with the buckets kept from one redraw to the next
(app.metrics.peak_buckets) once the window holds more than two points a pixel.

Series that share a time axis (the rings hold the very same times: a host's metrics from one
report, or hosts sampled on the same seconds) are cut and decimated together, a row each, in
one numpy pass: per-curve Python work was most of a live tick (python -m bench.dashboard).
"""
from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence

import numpy as np

from app.metrics.peak_buckets import PeakBuckets, bucket_width
from app.metrics.series import peak_decimate

IDLE_REDRAWS = 8        # a group's buckets unused this many redraws are dropped


def _many(t: np.ndarray, x0: float, x1: float, pixels: int) -> bool:
    """More than two points a pixel in the window: worth keeping buckets for."""
    return t.shape[0] > 2 * pixels and \
        int(np.searchsorted(t, x1, "right")) - int(np.searchsorted(t, x0, "left")) > 2 * pixels


class KeptDecimation:
    def __init__(self):
        self._buckets: dict[Hashable, PeakBuckets] = {}
        self._used: set[Hashable] = set()
        self._idle: dict[Hashable, int] = {}
        self._origins: dict[Hashable, float] = {}     # the oldest time each series has held

    def clear(self) -> None:
        self._buckets.clear()
        self._used.clear()
        self._idle.clear()
        self._origins.clear()

    def one(self, key: Hashable, t: np.ndarray, v: np.ndarray, x0: float, x1: float, pixels: int,
            settle: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """The points of one series (`settle`: PeakBuckets' settle, for a sum over hosts)."""
        if not _many(t, x0, x1, pixels):
            return peak_decimate(t, v, x0, x1, pixels)        # few enough to draw every point
        buckets = self._buckets.get(key)
        if buckets is None:
            buckets = self._buckets[key] = PeakBuckets(settle=settle)
        buckets.update(t, v, bucket_width(x1 - x0, pixels))
        self._used.add(key)
        return buckets.window(x0, x1)

    def rows(self, keys: Sequence[Hashable], t: np.ndarray, values: np.ndarray, x0: float, x1: float,
             pixels: int) -> tuple[np.ndarray, np.ndarray]:
        """The points of the series `keys` on the time axis `t`, a row of `values` each: one
        time axis for the points, a row of values each."""
        if not _many(t, x0, x1, pixels):
            return peak_decimate(t, values, x0, x1, pixels)
        group = tuple(keys)
        buckets = self._buckets.get(group)
        if buckets is None:
            buckets = self._buckets[group] = PeakBuckets()
        # the oldest time each series has held: a group made anew still knows its ring drops samples
        oldest = float(t[0])
        origins = self._origins
        for key in keys:
            origins[key] = min(origins.get(key, oldest), oldest)
        buckets.update(t, values, bucket_width(x1 - x0, pixels), origin=min(origins[key] for key in keys))
        self._used.add(group)
        return buckets.window(x0, x1)

    def by_width(self, keys: Sequence[Hashable], t: np.ndarray, values: np.ndarray, x0: float, x1: float,
                 width_of: dict) -> Iterator[tuple[list, np.ndarray, np.ndarray]]:
        """rows() for each plot width among the series (`width_of[key]`): (keys, times, values)."""
        widths: dict[int, list[int]] = {}
        for row, key in enumerate(keys):
            widths.setdefault(width_of[key], []).append(row)
        for pixels, rows in widths.items():
            if len(rows) == len(keys):
                yield list(keys), *self.rows(keys, t, values, x0, x1, pixels)
            else:
                part = [keys[r] for r in rows]
                yield part, *self.rows(part, t, values[rows], x0, x1, pixels)

    def end_redraw(self) -> None:
        """A shared axis that splits for a tick (one host's sample late) leaves its group's buckets
        behind: those not used for IDLE_REDRAWS redraws are dropped."""
        self._idle = {key: 0 if key in self._used else self._idle.get(key, 0) + 1 for key in self._buckets}
        for key, idle in self._idle.items():
            if idle > IDLE_REDRAWS:
                del self._buckets[key]
        self._used = set()
