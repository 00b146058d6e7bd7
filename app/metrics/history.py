"""A run's recorded samples read back as arrays, for a view that opens the run again.

metrics.jsonl holds one `[timestamp, source, metric, value, unit]` per line; an hour at 64
series is a quarter of a million lines.  They are read in one JSON parse (the lines joined as
one array) and grouped per series with numpy, not one Python object per sample; a file with a
torn or foreign line falls back to reading line by line (the bad lines left out).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.metrics.coverage import find_gaps
from app.metrics.results import METRICS_FILE


@dataclass
class Series:
    source: str
    metric: str
    unit: str
    t: np.ndarray
    v: np.ndarray            # NaN where the series recorded a gap


def _rows(text: str) -> list:
    body = text.strip()
    if not body:
        return []
    try:
        rows = json.loads("[" + body.replace("\n", ",") + "]")
        if all(isinstance(r, list) and len(r) == 5 for r in rows):
            return rows
    except (ValueError, RecursionError):
        pass
    rows = []
    for line in body.splitlines():
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            continue        # a line torn by a crash
        if isinstance(row, list) and len(row) == 5:
            rows.append(row)
    return rows


def load_series(run_dir: Path) -> list[Series]:
    """Every series the run recorded, each in time order."""
    try:
        text = (Path(run_dir) / METRICS_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rows = _rows(text)
    if not rows:
        return []
    keys: dict[tuple[str, str], int] = {}
    units: list[str] = []
    index = np.empty(len(rows), dtype=np.int64)
    t = np.empty(len(rows))
    v = np.empty(len(rows))
    kept = 0
    for row in rows:
        ts, source, metric, value, unit = row
        if not isinstance(source, str) or not isinstance(metric, str):
            continue
        try:
            t[kept] = ts
            v[kept] = np.nan if value is None else value
        except (TypeError, ValueError):
            continue
        key = (source, metric)
        k = keys.get(key)
        if k is None:
            k = keys[key] = len(units)
            units.append(unit if isinstance(unit, str) else "")
        index[kept] = k
        kept += 1
    index, t, v = index[:kept], t[:kept], v[:kept]
    order = np.lexsort((t, index))
    index, t, v = index[order], t[order], v[order]
    bounds = np.searchsorted(index, np.arange(len(units) + 1))
    return [Series(source, metric, units[k], t[bounds[k]:bounds[k + 1]], v[bounds[k]:bounds[k + 1]])
            for (source, metric), k in keys.items()]


def gaps_of(series: list[Series]) -> list[tuple[float, float]]:
    """The stretches where the host series have no sample (merged over the hosts' series)."""
    found: list[tuple[float, float]] = []
    for s in series:
        if "/" not in s.source:
            found += find_gaps(s.t[np.isfinite(s.v)] if s.v.size else s.t)
    merged: list[tuple[float, float]] = []
    for a, b in sorted(found):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged
