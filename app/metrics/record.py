"""A run's samples as they are recorded: metrics.jsonl, and a binary index beside it.

metrics.jsonl is the record (one `[timestamp, source, metric, value, unit]` per line, appended
and flushed as samples arrive; `results`, the CSV and the appendix read it).  Reading an hour
of 64 series back from it means parsing a quarter of a million lines; a view that opens the
run again reads the index instead:

    metrics.idx          per sample: timestamp and value (float64), series number (int32), 0
    metrics.keys.jsonl   per series number, in order: [source, metric, unit]
    metrics.idx.covers   how many bytes of metrics.jsonl the index holds (20 digits)

The index is written after the line it repeats; a crash between the two leaves lines the index
does not cover, which a reader parses from the text (only those).  A run recorded before the
index existed gets one on its next append, or is read from its text.
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from app.metrics.sample import Sample
from topology.project_save import fsync_dir

METRICS_FILE = "metrics.jsonl"
INDEX_FILE = "metrics.idx"
KEYS_FILE = "metrics.keys.jsonl"
COVERS_FILE = "metrics.idx.covers"
# the samples a power cut can take while a load runs: at most this many seconds' (a step's end syncs at once)
SYNC_EVERY_S = 5.0
ROW = np.dtype([("t", "<f8"), ("v", "<f8"), ("k", "<i4"), ("pad", "<i4")])


def line_of(s: Sample) -> str:
    # a value that is not finite is no measurement: a gap (JSON has no Infinity)
    return json.dumps([s.timestamp, s.source, s.metric, s.value if math.isfinite(s.value) else None, s.unit]) + "\n"


class MetricsRecorder:
    """Thread-safe append of samples to a run's metrics file.  A sample no newer than the
    newest one its series holds is not written again: a driver that adopts a step after a
    crash and reads its output on never counts a second twice."""

    def __init__(self, run_dir: Path):
        self.dir = Path(run_dir)
        self.path = self.dir / METRICS_FILE
        self._lock = threading.Lock()
        self._fh = open(self.path, "ab")
        self._index = None
        self._keys: dict[tuple[str, str], int] = {}
        self._newest: dict[tuple[str, str], float] | None = None     # read on the first append
        self._synced, self._dirty, self._dir_synced = time.monotonic(), False, False

    def _start(self) -> None:
        """On the first append (a worker thread): where the record stands, and its index."""
        arrays = read_index(self.dir)
        if arrays is None:                 # no index, or one that does not fit: made again from the text
            arrays = _rebuild_index(self.dir)
        keys, t, _v, k = arrays
        self._keys = {(s, m): i for i, (s, m, _u) in enumerate(keys)}
        self._newest = {}
        if t.size:
            order = np.lexsort((t, k))
            last = np.flatnonzero(np.r_[k[order][1:] != k[order][:-1], True])
            for i in last:
                source, metric, _u = keys[int(k[order][i])]
                self._newest[(source, metric)] = float(t[order][i])
        self._index = open(self.dir / INDEX_FILE, "ab")
        self._keys_fh = open(self.dir / KEYS_FILE, "a", encoding="utf-8")
        self._covers = os.open(self.dir / COVERS_FILE, os.O_WRONLY | os.O_CREAT, 0o600)

    def append(self, samples: Iterable[Sample]) -> None:
        with self._lock:
            if self._fh.closed:       # a collector's last words after the run closed: nothing to keep them in
                return
            if self._newest is None:
                self._start()
            newest = self._newest
            kept = []
            for s in samples:
                key = (s.source, s.metric)
                if s.timestamp > newest.get(key, -math.inf):
                    newest[key] = s.timestamp
                    kept.append(s)
            if not kept:
                return
            self._fh.write("".join(line_of(s) for s in kept).encode())
            self._fh.flush()
            rows = np.zeros(len(kept), dtype=ROW)
            for i, s in enumerate(kept):
                key = (s.source, s.metric)
                number = self._keys.get(key)
                if number is None:
                    number = self._keys[key] = len(self._keys)
                    self._keys_fh.write(json.dumps([s.source, s.metric, s.unit]) + "\n")
                    self._keys_fh.flush()
                rows[i] = (s.timestamp, s.value, number, 0)
            self._index.write(rows.tobytes())
            self._index.flush()
            os.pwrite(self._covers, f"{self._fh.tell():020d}".encode(), 0)
            self._dirty = True
            if time.monotonic() - self._synced >= SYNC_EVERY_S:
                self._sync()

    def sync(self) -> None:
        """Everything appended so far on disk (a power cut keeps it), the index after the record."""
        with self._lock:
            if not self._fh.closed:
                self._sync()

    def _sync(self) -> None:
        if not self._dirty:
            return
        if not self._dir_synced:     # the record's own name in its folder, once
            fsync_dir(self.dir)
            self._dir_synced = True
        os.fsync(self._fh.fileno())
        if self._index is not None:
            for f in (self._keys_fh, self._index):
                f.flush()
                os.fsync(f.fileno())
            os.fsync(self._covers)
        self._synced, self._dirty = time.monotonic(), False

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._sync()
            self._fh.close()
            if self._index is not None:
                self._index.close()
                self._keys_fh.close()
                os.close(self._covers)
                self._index = None


def read_index(run_dir: Path):
    """(keys [(source, metric, unit)], t, v, series numbers) from the index and the lines of
    metrics.jsonl it does not cover; None when there is no usable index."""
    run_dir = Path(run_dir)
    try:
        covers = int((run_dir / COVERS_FILE).read_bytes()[:20] or b"0")
        raw = (run_dir / INDEX_FILE).read_bytes()
        key_lines = (run_dir / KEYS_FILE).read_text(encoding="utf-8").splitlines()
        size = (run_dir / METRICS_FILE).stat().st_size
    except (OSError, ValueError):
        return None
    try:
        keys = [tuple(json.loads(line)) for line in key_lines]
    except ValueError:
        return None
    whole = len(raw) // ROW.itemsize * ROW.itemsize
    rows = np.frombuffer(raw[:whole], dtype=ROW)
    if covers > size or (rows.size and int(rows["k"].max()) >= len(keys)):
        return None
    t, v, k = rows["t"].copy(), rows["v"].copy(), rows["k"].astype(np.int64)
    if covers < size:          # lines written after the index was (a crash between the two)
        with open(run_dir / METRICS_FILE, "rb") as fh:
            fh.seek(covers)
            tail = fh.read().decode("utf-8", "replace")
        numbers = {(s, m): i for i, (s, m, _u) in enumerate(keys)}
        # the index may already hold some of these lines (written after `covers` was read): a
        # series' timestamps only grow, so a line no newer than the index's newest is one of them
        newest = np.full(len(keys), -np.inf)
        np.maximum.at(newest, k, t)
        extra_t, extra_v, extra_k = [], [], []
        for line in tail.splitlines():
            try:
                ts, source, metric, value, unit = json.loads(line)
                ts, value = float(ts), (math.nan if value is None else float(value))
            except (ValueError, TypeError, RecursionError, OverflowError):
                continue        # a torn line, or one no run wrote
            if not (isinstance(source, str) and isinstance(metric, str) and math.isfinite(ts)):
                continue
            n = numbers.get((source, metric))
            if n is not None and n < newest.size and ts <= newest[n]:
                continue
            if n is None:
                n = numbers[(source, metric)] = len(keys)
                keys.append((source, metric, unit if isinstance(unit, str) else ""))
            extra_t.append(ts)
            extra_v.append(value)
            extra_k.append(n)
        t, v = np.concatenate((t, extra_t)), np.concatenate((v, extra_v))
        k = np.concatenate((k, np.asarray(extra_k, dtype=np.int64)))
    return keys, t, v, k


def _rebuild_index(run_dir: Path):
    """The index made from metrics.jsonl (a run recorded before there was one, or whose index
    does not fit its text)."""
    from app.metrics.results import load_samples
    samples = load_samples(run_dir)
    keys: list[tuple[str, str, str]] = []
    numbers: dict[tuple[str, str], int] = {}
    rows = np.zeros(len(samples), dtype=ROW)
    for i, s in enumerate(samples):
        n = numbers.get((s.source, s.metric))
        if n is None:
            n = numbers[(s.source, s.metric)] = len(keys)
            keys.append((s.source, s.metric, s.unit))
        rows[i] = (s.timestamp, s.value, n, 0)
    (run_dir / INDEX_FILE).write_bytes(rows.tobytes())
    (run_dir / KEYS_FILE).write_text("".join(json.dumps(list(k)) + "\n" for k in keys), encoding="utf-8")
    size = (run_dir / METRICS_FILE).stat().st_size if (run_dir / METRICS_FILE).exists() else 0
    (run_dir / COVERS_FILE).write_bytes(f"{size:020d}".encode())
    return keys, rows["t"].copy(), rows["v"].copy(), rows["k"].astype(np.int64)
