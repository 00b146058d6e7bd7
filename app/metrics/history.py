"""A run's recorded samples read back as arrays, for a view that opens the run again.

metrics.jsonl holds one `[timestamp, source, metric, value, unit]` per line; an hour at 64
series is a quarter of a million lines.  They are grouped per series as text and turned into
numbers by numpy a series at a time, never one Python object per sample (a JSON parse of the
whole file took 1.6 s here); a torn or foreign line is left out.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.metrics.coverage import find_gaps
from app.metrics.record import METRICS_FILE
from app.metrics.series import GAP_FACTOR


@dataclass
class Series:
    source: str
    metric: str
    unit: str
    t: np.ndarray
    v: np.ndarray            # NaN where the series recorded a gap


def _row(line: str):
    """One line as [t, source, metric, value, unit], or None for a line that is not one."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None         # a line torn by a crash
    return row if isinstance(row, list) and len(row) == 5 else None


def _grouped(text: str) -> dict[tuple[str, str], tuple[str, list[str], list[str]]]:
    """(source, metric) -> (unit, timestamps, values) as the text writes them.  The recorder's
    lines are `[T, "SOURCE", "METRIC", V, "UNIT"]`: split at their quotes (C speed, no object per
    number); a line that does not split that way (an escaped quote in a name, a torn line) is
    read as JSON on its own."""
    groups: dict[tuple[str, str], tuple[str, list[str], list[str]]] = {}
    for line in text.split("\n"):
        parts = line.split('"')
        if len(parts) == 7 and "\\" not in line and parts[0][:1] == "[" and parts[6] == "]":
            t, source, metric, v, unit = parts[0][1:-2], parts[1], parts[3], parts[4][2:-2], parts[5]
        else:
            row = _row(line) if line.strip() else None
            if row is None or not isinstance(row[1], str) or not isinstance(row[2], str):
                continue
            t, source, metric, v, unit = (json.dumps(row[0]), row[1], row[2], json.dumps(row[3]),
                                          row[4] if isinstance(row[4], str) else "")
        group = groups.get((source, metric))
        if group is None:
            group = groups[(source, metric)] = (unit, [], [])
        group[1].append(t)
        group[2].append(v)
    return groups


def _numbers(texts: list[str]) -> np.ndarray:
    try:
        return np.array(texts, dtype=float)
    except ValueError:      # a null (a gap), or a torn number: one at a time
        out = np.empty(len(texts))
        for i, x in enumerate(texts):
            try:
                out[i] = float(x)
            except ValueError:
                out[i] = np.nan
        return out


def load_series(run_dir: Path) -> list[Series]:
    """Every series the run recorded, each in time order: from the record's binary index
    (app.metrics.record) when it has one, else from its text."""
    from app.metrics.record import read_index
    indexed = read_index(run_dir)
    if indexed is not None:
        keys, t, v, k = indexed
        order = np.lexsort((t, k))
        t, v, k = t[order], v[order], k[order]
        bounds = np.searchsorted(k, np.arange(len(keys) + 1))
        return [Series(source, metric, unit, t[bounds[i]:bounds[i + 1]], v[bounds[i]:bounds[i + 1]])
                for i, (source, metric, unit) in enumerate(keys) if bounds[i + 1] > bounds[i]]
    try:
        text = (Path(run_dir) / METRICS_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for (source, metric), (unit, ts, vs) in _grouped(text).items():
        t, v = _numbers(ts), _numbers(vs)
        known = np.isfinite(t)
        t, v = t[known], v[known]
        if not t.size:
            continue
        order = np.argsort(t, kind="stable")
        out.append(Series(source, metric, unit, t[order], v[order]))
    return out


def loads_of(run_dir: Path) -> dict[str, list[tuple[float, float]]] | None:
    """Each host's load steps in the run's journal (app.metrics.coverage.load_windows); None when
    the journal cannot be read (then every stretch without samples is named)."""
    from app.metrics.coverage import load_windows
    from app.run.journal import read_journal
    try:
        return load_windows(read_journal(Path(run_dir)).records)
    except (OSError, ValueError):
        return None


def gaps_of(series: list[Series], loads: dict[str, list[tuple[float, float]]] | None = None
            ) -> list[tuple[float, float]]:
    """The stretches where the host series have no sample (merged over the hosts' series).  With
    `loads` (each host's load steps, start and end: app.metrics.coverage.load_windows), only what
    lies inside a load of that host: between two loads nothing is collected because nothing runs
    (the manual steps of a failover between its runs), and that was named as the driver down."""
    found: list[tuple[float, float]] = []
    for s in series:
        if "/" not in s.source:
            t = np.sort(s.t[np.isfinite(s.v)] if s.v.size else s.t)
            interval = float(np.median(np.diff(t))) or 1.0 if t.size > 1 else 1.0
            gaps = find_gaps(t, interval, ordered=True)
            windows = (loads or {}).get(s.source)
            if windows and gaps:
                # the part inside a load, when it is still longer than a gap (a load's last sample
                # comes up to an interval before its step's end)
                gaps = [(max(a, start), min(b, end)) for a, b in gaps for start, end in windows
                        if min(b, end) - max(a, start) > GAP_FACTOR * interval]
            found += gaps
    merged: list[tuple[float, float]] = []
    for a, b in sorted(found):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged
