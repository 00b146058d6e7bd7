"""Ring-buffered time series for the live dashboard: one fixed-size buffer per (source,
metric), so memory is set by the capacity and never grows over a long run.

Ingest runs on worker threads, reads on the GUI thread; one lock, held only for array
copies.  Each series carries a revision so a view redraws only what changed.
"""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import Iterable

import numpy as np

from app.metrics.sample import Sample

DEFAULT_CAPACITY = 3600        # one hour at one sample a second


class _Ring:
    __slots__ = ("t", "v", "head", "count", "revision", "unit")

    def __init__(self, capacity: int, unit: str):
        self.t = np.full(capacity, np.nan)
        self.v = np.full(capacity, np.nan)
        self.head = 0          # next write position
        self.count = 0
        self.revision = 0
        self.unit = unit

    def extend(self, t: np.ndarray, v: np.ndarray) -> None:
        cap = self.t.shape[0]
        if t.shape[0] >= cap:
            t, v = t[-cap:], v[-cap:]
        n = t.shape[0]
        first = min(n, cap - self.head)
        self.t[self.head:self.head + first] = t[:first]
        self.v[self.head:self.head + first] = v[:first]
        if n > first:
            self.t[:n - first] = t[first:]
            self.v[:n - first] = v[first:]
        self.head = (self.head + n) % cap
        self.count = min(cap, self.count + n)
        self.revision += 1

    def ordered(self) -> tuple[np.ndarray, np.ndarray]:
        cap = self.t.shape[0]
        if self.count < cap:
            return self.t[:self.count].copy(), self.v[:self.count].copy()
        return np.roll(self.t, -self.head), np.roll(self.v, -self.head)


class SeriesStore:
    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.capacity = capacity
        self._rings: dict[tuple[str, str], _Ring] = {}
        self._lock = threading.Lock()
        self.revision = 0

    def ingest(self, samples: Iterable[Sample]) -> int:
        grouped: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        units: dict[tuple[str, str], str] = {}
        n = 0
        for s in samples:
            key = (s.source, s.metric)
            grouped[key].append((s.timestamp, s.value))
            units[key] = s.unit
            n += 1
        if not n:
            return 0
        arrays = {k: np.asarray(v, dtype=float) for k, v in grouped.items()}
        with self._lock:
            for key, arr in arrays.items():
                ring = self._rings.get(key)
                if ring is None:
                    ring = self._rings[key] = _Ring(self.capacity, units[key])
                ring.extend(arr[:, 0], arr[:, 1])
            self.revision += 1
        return n

    def ingest_arrays(self, source: str, metric: str, unit: str, t: np.ndarray, v: np.ndarray) -> None:
        """The fast path for a collector that already holds arrays."""
        with self._lock:
            ring = self._rings.get((source, metric))
            if ring is None:
                ring = self._rings[(source, metric)] = _Ring(self.capacity, unit)
            ring.extend(np.asarray(t, dtype=float), np.asarray(v, dtype=float))
            self.revision += 1

    def clear(self) -> None:
        with self._lock:
            self._rings.clear()
            self.revision += 1

    def keys(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._rings)

    def sources(self) -> list[str]:
        return sorted({s for s, _ in self.keys()})

    def unit(self, source: str, metric: str) -> str:
        with self._lock:
            ring = self._rings.get((source, metric))
            return ring.unit if ring else ""

    def series_revision(self, source: str, metric: str) -> int:
        with self._lock:
            ring = self._rings.get((source, metric))
            return ring.revision if ring else -1

    def series(self, source: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            ring = self._rings.get((source, metric))
            if ring is None:
                return np.empty(0), np.empty(0)
            return ring.ordered()

    def aggregate(self, metric: str, sources: Iterable[str], how: str = "sum") -> tuple[np.ndarray, np.ndarray]:
        """Per whole second across `sources`: the sum (IOPS, throughput) or the mean (latency).
        A second where every source is a gap stays a gap."""
        ts, vs = [], []
        for src in sources:
            t, v = self.series(src, metric)
            if t.size:
                ts.append(t)
                vs.append(v)
        if not ts:
            return np.empty(0), np.empty(0)
        t = np.floor(np.concatenate(ts))
        v = np.concatenate(vs)
        seconds, index = np.unique(t, return_inverse=True)
        finite = np.isfinite(v)
        total = np.zeros(seconds.shape[0])
        count = np.zeros(seconds.shape[0])
        np.add.at(total, index[finite], v[finite])
        np.add.at(count, index[finite], 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = total / count if how == "mean" else np.where(count > 0, total, np.nan)
        out[count == 0] = np.nan
        return seconds, out

    def time_over(self, source: str, metric: str, threshold: float, comparison: str = "<") -> float:
        """Seconds the series spent on the wrong side of a pass criterion (`comparison` is the
        criterion: '<' means values must stay below `threshold`)."""
        t, v = self.series(source, metric)
        return time_beyond(t, v, threshold, comparison)


def time_beyond(t: np.ndarray, v: np.ndarray, threshold: float, comparison: str) -> float:
    if t.size < 1:
        return 0.0
    finite = np.isfinite(v)
    if comparison in ("<", "<="):
        bad = (v >= threshold) if comparison == "<" else (v > threshold)
    elif comparison in (">", ">="):
        bad = (v <= threshold) if comparison == ">" else (v < threshold)
    else:
        return 0.0
    bad &= finite
    step = float(np.median(np.diff(t))) if t.size > 1 else 1.0
    return float(bad.sum() * step)
