"""Ring-buffered time series for the live dashboard: one fixed-size buffer per (source,
metric), so memory is set by the capacity and never grows over a long run.

Ingest runs on worker threads, reads on the GUI thread; one lock, held only for array
copies.  Each series carries a revision so a view redraws only what changed.
"""
from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Container, Iterable, Sequence
from datetime import datetime

import numpy as np

from app.metrics.sample import Sample

DEFAULT_CAPACITY = 3600        # one hour at one sample a second
GAP_FACTOR = 2.5               # no sample for this many intervals is a gap (app.metrics.coverage)


class _Ring:
    __slots__ = ("t", "v", "head", "count", "revision", "unit", "newest", "step")

    def __init__(self, capacity: int, unit: str):
        self.t = np.full(capacity, np.nan)
        self.v = np.full(capacity, np.nan)
        self.head = 0          # next write position
        self.count = 0
        self.revision = 0
        self.unit = unit
        # the newest timestamp held and the interval before it (NaN when unknown), as plain
        # floats: a collector's one sample a second is checked for a gap without reading the arrays
        self.newest = np.nan
        self.step = np.nan

    def _ends_a_gap(self, t: float) -> bool:
        """Nothing came for a while before t (the driver was down, a collector stopped): a gap,
        to be drawn as one rather than as a line across."""
        return self.step > 0 and t - self.newest > GAP_FACTOR * self.step

    def append(self, t: float, v: float) -> None:
        """One sample: the common case of a collector's one-second batch."""
        if self._ends_a_gap(t):
            self._put((self.newest + t) / 2, np.nan)
        self._put(t, v)
        self.revision += 1

    def _put(self, t: float, v: float) -> None:
        self.t[self.head] = t
        self.v[self.head] = v
        self.step = t - self.newest if self.count else np.nan
        self.newest = t
        self.head = (self.head + 1) % self.t.shape[0]
        self.count = min(self.t.shape[0], self.count + 1)

    def extend(self, t: np.ndarray, v: np.ndarray) -> None:
        if t.shape[0] and self._ends_a_gap(float(t[0])):
            t, v = np.concatenate(([(self.newest + t[0]) / 2], t)), np.concatenate(([np.nan], v))
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
        if n:
            before = float(t[-2]) if n > 1 else (self.newest if self.count else np.nan)
            self.newest = float(t[-1])
            self.step = self.newest - before
        self.head = (self.head + n) % cap
        self.count = min(cap, self.count + n)
        self.revision += 1

    def ordered(self) -> tuple[np.ndarray, np.ndarray]:
        cap = self.t.shape[0]
        if self.count < cap:
            return self.t[:self.count].copy(), self.v[:self.count].copy()
        return (np.concatenate((self.t[self.head:], self.t[:self.head])),
                np.concatenate((self.v[self.head:], self.v[:self.head])))


class _PerSecond:
    """Per whole second of every host-level series of one metric, the sum of each host's mean in
    that second and how many hosts have a value, kept as samples arrive (on the collectors'
    threads) so a redraw reads the all-hosts line instead of recomputing it from every ring.
    A host counts once per second: fio's last status report and its final one often land in the
    same second, and adding both drew twice the host's IOPS at the end of every load.

    A host's samples come in time order, so only its newest second can still change: that second's
    sum and count are all that is kept per host (a table per host and second held 40 MB for 64
    hosts and two hours), and a batch of every host's samples is one pass of array operations (a
    pass per host cut the ingest of 64 series to 44,000 samples/s)."""

    def __init__(self, capacity: int):
        self.second = np.full(capacity, -1, dtype=np.int64)
        self.total = np.zeros(capacity)                      # the hosts' means added up
        self.count = np.zeros(capacity, dtype=np.int64)      # hosts with a finite value
        self.seen = np.zeros(capacity, dtype=np.int64)       # any value, a gap included
        self.newest = -1
        self._row: dict[str, int] = {}                       # a host's place in the arrays below
        self._last = np.full(0, -1, dtype=np.int64)          # each host's newest second ...
        self._last_sum = np.zeros(0)                         # ... its finite values' sum there
        self._last_count = np.zeros(0, dtype=np.int64)       # ... and how many

    def rows(self, sources: list[str]) -> np.ndarray:
        """The rows of `sources`, new hosts given one."""
        row = self._row
        for source in dict.fromkeys(sources):
            if source not in row:
                row[source] = len(row)
        if len(row) > self._last.shape[0]:
            grow = len(row) - self._last.shape[0]
            self._last = np.concatenate((self._last, np.full(grow, -1, dtype=np.int64)))
            self._last_sum = np.concatenate((self._last_sum, np.zeros(grow)))
            self._last_count = np.concatenate((self._last_count, np.zeros(grow, dtype=np.int64)))
        return np.array([row[source] for source in sources], dtype=np.int64)

    def add(self, row: np.ndarray, t: np.ndarray, v: np.ndarray) -> None:
        """Samples (`t`, `v`) of the hosts in `row` (one row number per sample)."""
        cap = self.second.shape[0]
        sec = np.floor(t).astype(np.int64)
        self.newest = max(self.newest, int(sec.max()))
        keep = sec > self.newest - cap                    # older than the window: forgotten anyway
        sec, v, row = sec[keep], v[keep], row[keep]
        if not sec.size:
            return
        slot = sec % cap
        stale = self.second[slot] != sec
        if stale.any():
            reuse = slot[stale]
            self.second[reuse] = sec[stale]
            self.total[reuse] = 0.0
            self.count[reuse] = 0
            self.seen[reuse] = 0
        np.add.at(self.seen, slot, 1)
        # each host in each second of the batch: its finite values' sum and count
        base = int(sec.min())
        span = int(sec.max()) - base + 1
        cells, where = np.unique(row * span + (sec - base), return_inverse=True)
        finite = np.isfinite(v)
        c_sum = np.bincount(where, weights=np.where(finite, v, 0.0), minlength=cells.size)
        c_count = np.bincount(where, weights=finite, minlength=cells.size).astype(np.int64)
        c_row, c_sec = cells // span, cells % span + base
        # the host's newest second goes on: what it already added there is taken back, then its mean
        # over all its values there is added (a second before it, out of order, is added as it is)
        going_on = c_sec == self._last[c_row]
        before = np.zeros(cells.size)
        had = np.zeros(cells.size, dtype=bool)
        if going_on.any():
            r = c_row[going_on]
            prior = self._last_count[r]
            had[going_on] = prior > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                before[going_on] = np.where(prior > 0, self._last_sum[r] / prior, 0.0)
            c_sum[going_on] += self._last_sum[r]
            c_count[going_on] += prior
        has = c_count > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            after = np.where(has, c_sum / np.maximum(c_count, 1), 0.0)
        c_slot = c_sec % cap
        np.add.at(self.total, c_slot, after - before)
        np.add.at(self.count, c_slot, has.astype(np.int64) - had.astype(np.int64))
        # each host's newest second of the batch becomes its newest (cells are sorted by row, then second)
        newest = np.flatnonzero(np.r_[c_row[1:] != c_row[:-1], True])
        n_row = c_row[newest]
        later = c_sec[newest] >= self._last[n_row]
        self._last[n_row[later]] = c_sec[newest][later]
        self._last_sum[n_row[later]] = c_sum[newest][later]
        self._last_count[n_row[later]] = c_count[newest][later]

    def read(self, how: str) -> tuple[np.ndarray, np.ndarray]:
        cap = self.second.shape[0]
        held = (self.second > self.newest - cap) & (self.seen > 0)
        # a second's slot is its number modulo the capacity: from the slot after the newest
        # second's round the ring, the seconds held come oldest first (no sort on every redraw)
        start = (self.newest + 1) % cap
        used = np.concatenate((np.flatnonzero(held[start:]) + start, np.flatnonzero(held[:start])))
        count = self.count[used]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = self.total[used] / count if how == "mean" else self.total[used].copy()
        values[count == 0] = np.nan
        return with_gaps(self.second[used].astype(float), values, ordered=True)


def _number(value) -> float:
    """A sample's value as the arrays hold it: None (a collector that read nothing) is a gap."""
    return np.nan if value is None else float(value)


def is_host_series(source: str) -> bool:
    """"HOST" rather than "HOST/device" or "HOST/job": the series the all-hosts line adds up."""
    return "/" not in source


class SeriesStore:
    def __init__(self, capacity: int = DEFAULT_CAPACITY):
        self.capacity = capacity
        self._rings: dict[tuple[str, str], _Ring] = {}
        self._per_second: dict[str, _PerSecond] = {}
        self._lock = threading.Lock()
        self.revision = 0

    def _count_per_second(self, sources: list[str], metric: str, t: np.ndarray, v: np.ndarray) -> None:
        """`sources`: each sample's host (host-level series only)."""
        if t.size:
            acc = self._per_second.get(metric)
            if acc is None:
                acc = self._per_second[metric] = _PerSecond(self.capacity + 60)
            acc.add(acc.rows(sources), t, v)

    def all_hosts(self, metric: str, how: str = "sum") -> tuple[np.ndarray, np.ndarray]:
        """aggregate(metric, every host series, how), kept up to date as samples arrive."""
        with self._lock:
            acc = self._per_second.get(metric)
            if acc is None:
                return np.empty(0), np.empty(0)
            return acc.read(how)

    def ingest(self, samples: Iterable[Sample]) -> int:
        grouped: dict[tuple[str, str], tuple[list[float], list[float], str]] = {}
        n = 0
        for s in samples:
            key = (s.source, s.metric)
            entry = grouped.get(key)
            if entry is None:
                entry = grouped[key] = ([], [], s.unit)
            entry[0].append(s.timestamp)
            entry[1].append(s.value)
            n += 1
        if not n:
            return 0
        host_times: dict[str, list[float]] = defaultdict(list)         # per metric, every host's
        host_values: dict[str, list[float]] = defaultdict(list)
        host_of: dict[str, list[str]] = defaultdict(list)
        with self._lock:
            for key, (times, values, unit) in grouped.items():
                ring = self._rings.get(key)
                if ring is None:
                    ring = self._rings[key] = _Ring(self.capacity, unit)
                if len(times) == 1:
                    ring.append(_number(times[0]), _number(values[0]))
                else:
                    ring.extend(np.asarray(times, dtype=float), np.asarray(values, dtype=float))
                if is_host_series(key[0]):
                    host_times[key[1]] += times
                    host_values[key[1]] += values
                    host_of[key[1]] += [key[0]] * len(times)
            for metric, times in host_times.items():
                self._count_per_second(host_of[metric], metric, np.asarray(times, dtype=float),
                                       np.asarray(host_values[metric], dtype=float))
            self.revision += 1
        return n

    def ingest_arrays(self, source: str, metric: str, unit: str, t: np.ndarray, v: np.ndarray) -> None:
        """The fast path for a collector that already holds arrays."""
        with self._lock:
            ring = self._rings.get((source, metric))
            if ring is None:
                ring = self._rings[(source, metric)] = _Ring(self.capacity, unit)
            t, v = np.asarray(t, dtype=float), np.asarray(v, dtype=float)
            ring.extend(t, v)
            if is_host_series(source):
                self._count_per_second([source] * t.size, metric, t, v)
            self.revision += 1

    def clear(self) -> None:
        with self._lock:
            self._rings.clear()
            self._per_second.clear()
            self.revision += 1

    def load(self, series: Iterable) -> None:
        """A recorded run's whole history (app.metrics.history.Series), replacing what the store
        held: the capacity grows to hold the longest series whole, with room for the run to go
        on live; each gap gets a NaN so it is drawn as a gap."""
        series = [(s, *with_gaps(s.t, s.v)) for s in series]
        longest = max((t.size for _s, t, _v in series), default=0)
        with self._lock:
            self.capacity = max(self.capacity, longest + DEFAULT_CAPACITY)
            self._rings.clear()
            self._per_second.clear()
        for s, t, v in series:
            self.ingest_arrays(s.source, s.metric, s.unit, t, v)

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

    def series_revisions(self, metric: str, sources: Sequence[str]) -> list[int]:
        """series_revision of each source's `metric` series, under one hold of the lock."""
        with self._lock:
            rings = self._rings
            return [ring.revision if (ring := rings.get((src, metric))) is not None else -1 for src in sources]

    def series(self, source: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            ring = self._rings.get((source, metric))
            if ring is None:
                return np.empty(0), np.empty(0)
            return ring.ordered()

    def shared_axes(self, keys: Iterable[tuple[str, str]], wanted: Container[tuple[str, str]]
                    ) -> list[tuple[list[tuple[str, str]], np.ndarray, np.ndarray]]:
        """The (source, metric) series of `keys`, oldest first, grouped by time axis: series whose
        rings hold the very same times (the metrics of one report, hosts sampled on the same
        seconds) come back as one t and a 2-D array of their values, a row each, so a view
        cuts and decimates them in one pass instead of one per curve.  Only the groups holding
        a `wanted` series are returned."""
        groups: dict[tuple, tuple[_Ring, list[tuple[str, str]], list[_Ring]]] = {}
        with self._lock:
            for key in keys:
                ring = self._rings.get(key)
                if ring is None or not ring.count:
                    continue
                cap = ring.t.shape[0]
                # a cheap look first (where the ring stands, its newest and oldest times), then all times
                oldest = ring.head if ring.count == cap else 0
                look = (cap, ring.head, ring.count, float(ring.t[oldest]), float(ring.t[(ring.head - 1) % cap]))
                found = groups.get(look)
                while found is not None and not np.array_equal(found[0].t[:ring.count], ring.t[:ring.count]):
                    look = (*look, None)        # same ends, other times between: a group of its own
                    found = groups.get(look)
                if found is None:
                    groups[look] = (ring, [key], [ring])
                else:
                    found[1].append(key)
                    found[2].append(ring)
            out = []
            for first, group_keys, rings in groups.values():
                if not any(key in wanted for key in group_keys):
                    continue
                t = first.ordered()[0]
                values = np.empty((len(rings), t.shape[0]))
                cap, head = first.t.shape[0], first.head
                for row, ring in zip(values, rings):
                    if ring.count < cap:
                        row[:] = ring.v[:ring.count]
                    else:
                        row[:cap - head], row[cap - head:] = ring.v[head:], ring.v[:head]
                out.append((group_keys, t, values))
        return out

    def aggregate(self, metric: str, sources: Iterable[str], how: str = "sum") -> tuple[np.ndarray, np.ndarray]:
        """Per whole second across `sources`: the sum (IOPS, throughput) or the mean (latency) of
        each source's mean in that second (a source counts once however many samples it sent).
        A second where every source is a gap stays a gap."""
        # the rings as they lie (a sum per second does not care about order), one copy each
        with self._lock:
            rings = [self._rings.get((src, metric)) for src in sources]
            rings = [r for r in rings if r is not None and r.count]
            if not rings:
                return np.empty(0), np.empty(0)
            t = np.concatenate([r.t[:r.count] for r in rings])
            v = np.concatenate([r.v[:r.count] for r in rings])
        owner = np.repeat(np.arange(len(rings)), [r.count for r in rings])
        if not np.isfinite(t).all():
            known = np.isfinite(t)
            t, v, owner = t[known], v[known], owner[known]
            if not t.size:
                return np.empty(0), np.empty(0)
        # whole seconds as offsets from the first: a bincount, not a sort (this runs on every redraw)
        first = np.floor(t.min())
        index = (t - first).astype(np.int64)
        length = int(index.max()) + 1
        present = np.bincount(index, minlength=length)
        finite = np.isfinite(v)
        cell = owner * length + index                      # one source in one second
        cell_sum = np.bincount(cell, weights=np.where(finite, v, 0.0), minlength=len(rings) * length)
        cell_count = np.bincount(cell, weights=finite, minlength=len(rings) * length)
        has = cell_count > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            cell_mean = np.where(has, cell_sum / cell_count, 0.0)
        total = cell_mean.reshape(len(rings), length).sum(axis=0)
        count = has.reshape(len(rings), length).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = total / count if how == "mean" else total
        out[count == 0] = np.nan
        seconds = np.flatnonzero(present)
        return with_gaps(first + seconds.astype(float), out[seconds])

    def time_span(self) -> tuple[float | None, float | None]:
        """The oldest and the newest timestamp held in any series (the edges of a view that
        shows everything)."""
        with self._lock:
            ends = [(ring.t[ring.head if ring.count == ring.t.shape[0] else 0],
                     ring.t[(ring.head - 1) % ring.t.shape[0]])
                    for ring in self._rings.values() if ring.count]
        firsts = [a for a, _ in ends if np.isfinite(a)]
        lasts = [b for _, b in ends if np.isfinite(b)]
        return (min(firsts) if firsts else None), (max(lasts) if lasts else None)


def gap_text(gaps: Sequence[tuple[float, float]]) -> str:
    def clock(t: float) -> str:
        return datetime.fromtimestamp(t).strftime("%H:%M:%S")
    shown = ", ".join(f"between {clock(a)} and {clock(b)} ({b - a:.0f} s)" for a, b in gaps[:3])
    more = f" and {len(gaps) - 3} more" if len(gaps) > 3 else ""
    return f"no samples {shown}{more}"


def find_gaps(t: np.ndarray, interval: float | None = None, ordered: bool = False) -> list[tuple[float, float]]:
    """Stretches between consecutive samples longer than GAP_FACTOR intervals (the median one
    unless given): (last sample before, first sample after).  ordered: `t` is sorted already."""
    t = np.asarray(t, dtype=float) if ordered else np.sort(np.asarray(t, dtype=float))
    if t.size < 2:
        return []
    steps = np.diff(t)
    step = interval or float(np.median(steps)) or 1.0
    where = np.flatnonzero(steps > GAP_FACTOR * step)
    return [(float(t[i]), float(t[i + 1])) for i in where]


def with_gaps(t: np.ndarray, v: np.ndarray, ordered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(t, v) with a NaN inside every gap, so a line is broken there instead of drawn across."""
    gaps = find_gaps(t, ordered=ordered)
    if not gaps:
        return t, v
    cut_t = np.array([(a + b) / 2 for a, b in gaps])
    order = np.argsort(np.concatenate((t, cut_t)), kind="stable")
    return (np.concatenate((t, cut_t))[order], np.concatenate((v, np.full(cut_t.size, np.nan)))[order])


def peak_decimate(t: np.ndarray, v: np.ndarray, x0: float, x1: float, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The points a plot `buckets` pixels wide needs to show (t, v) between x0 and x1: the
    points in that window (and one on each side, so the line reaches the edges); when there
    are more than two per pixel, the lowest and highest of each run of points, so a spike
    stays visible.  A run holding a gap is a gap, so the gap stays visible too.  `v` may hold
    several series on the time axis `t`, one per row: all are decimated in one pass."""
    n = t.shape[0]
    if n == 0:
        return t, v
    i0 = max(int(np.searchsorted(t, x0, "left")) - 1, 0)
    i1 = min(int(np.searchsorted(t, x1, "right")) + 1, n)
    t, v = t[i0:i1], v[..., i0:i1]
    n = t.shape[0]
    if buckets < 1 or n <= 2 * buckets:
        return t, v
    k = -(-n // buckets)
    m = n // k * k
    tb, vb = t[:m].reshape(-1, k), v[..., :m].reshape(v.shape[:-1] + (-1, k))
    lo = vb.min(axis=-1)            # NaN propagates: a run holding a gap is drawn as a gap
    hi = vb.max(axis=-1)
    pairs = 2 * tb.shape[0]
    out_t = np.empty(pairs + n - m)
    out_v = np.empty(v.shape[:-1] + out_t.shape)
    out_t[0:pairs:2], out_t[1:pairs:2] = tb[:, 0], tb[:, -1]
    out_v[..., 0:pairs:2], out_v[..., 1:pairs:2] = lo, hi
    out_t[pairs:], out_v[..., pairs:] = t[m:], v[..., m:]
    return out_t, out_v


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
