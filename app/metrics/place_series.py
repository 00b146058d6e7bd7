"""A run's plotted series cut to one place in the test (configuration, phase, scenario, level,
repetition), for the dashboard: the same places, in the same order, and each sample at the same
place as `results RUN` puts it (app.metrics.by_place: the step that ran on the sample's host when it
was measured, the latest to begin when steps overlap, else the nearest within the clock slack, else
outside the test).  Whole arrays at a time: a re-opened hour-long run is a quarter of a million
samples, never one Python call each."""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from app.metrics.by_place import CLOCK_SLACK_S, OUTSIDE, place_key, place_label, step_windows
from app.run.positions import read_positions

Window = tuple[float, float, tuple]


@dataclass
class _Steps:
    """One host's step windows as arrays, made once per reading of the journal."""
    place: np.ndarray        # per window: its place's index in the keys
    starts: np.ndarray
    ends: np.ndarray
    run_end: np.ndarray      # the latest end among the windows so far
    run_arg: np.ndarray      # the first window that reached it

    @classmethod
    def of(cls, windows: Sequence[Window], keys: list[tuple]) -> _Steps:
        index = {key: k for k, key in enumerate(keys)}
        ends = np.array([e for _s, e, _k in windows], dtype=float)
        run_end, run_arg = np.empty(ends.shape[0]), np.empty(ends.shape[0], dtype=np.int64)
        best, arg = -math.inf, -1
        for w, end in enumerate(ends):
            if end > best:
                best, arg = end, w
            run_end[w], run_arg[w] = best, arg
        return cls(np.array([index.get(key, -1) for _s, _e, key in windows], dtype=np.int64),
                   np.array([s for s, _e, _k in windows], dtype=float), ends, run_end, run_arg)


def places_at(t: np.ndarray, windows: Sequence[Window] | _Steps, keys: list[tuple]) -> np.ndarray:
    """For each time in `t`, the index in `keys` of its place on a host with these step windows
    (sorted as app.metrics.by_place.step_windows gives them); -1 outside the test's steps.  The
    same answer as by_place's `_place_at`, by binary search: the latest window to begin at or before
    a time holds it unless it ended before; then an earlier, longer one may (looked at one by one,
    rare), else the nearest edge within the clock slack: the latest end before or the next start."""
    n = t.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    if not n or not len(windows if not isinstance(windows, _Steps) else windows.starts):
        return out
    steps = windows if isinstance(windows, _Steps) else _Steps.of(windows, keys)
    starts, ends, count = steps.starts, steps.ends, steps.starts.shape[0]
    latest = np.searchsorted(starts, t, "right") - 1
    begun = latest >= 0
    at = np.where(begun, latest, 0)
    with np.errstate(invalid="ignore"):
        inside = begun & (ends[at] >= t)
        nested = begun & ~inside & (steps.run_end[at] >= t)
    out[inside] = steps.place[at[inside]]
    for p in np.flatnonzero(nested):            # a step that began earlier and ends later holds t
        held = [w for w in range(int(latest[p]) + 1) if starts[w] <= t[p] <= ends[w]]
        out[p] = steps.place[held[-1]]
    rest = ~inside & ~nested & np.isfinite(t)
    if rest.any():
        following = np.minimum(latest + 1, count - 1)
        with np.errstate(invalid="ignore"):
            to_end = np.where(begun, t - steps.run_end[at], math.inf)
            to_next = np.where(latest + 1 < count, starts[following] - t, math.inf)
            by_end = to_end <= to_next          # a tie goes to the earlier window, as min() keeps the first
            distance = np.where(by_end, to_end, to_next)
            near = rest & (distance <= CLOCK_SLACK_S)
        window = np.where(by_end, steps.run_arg[at], following)
        out[near] = steps.place[window[near]]
    return out


@dataclass
class RunPlaces:
    """The places of one run's steps and, per host, when each ran (read from its journal)."""
    keys: list[tuple]                                   # in the run section's order
    windows: dict[str, list[Window]]
    _prepared: dict[str, _Steps] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, run_dir: Path) -> RunPlaces:
        from app.run import journal as J
        positions = read_positions(Path(run_dir))
        if not positions:
            return cls([], {})
        try:
            configuration = J.open_run(str(run_dir)).configuration      # as `results` reads it
        except ValueError:
            configuration = ""
        windows = step_windows(Path(run_dir), positions)
        # ordered as `results` orders its tables (by_place.placed_report)
        order = {place_key(p, configuration): k for k, p in enumerate(positions.values())}
        keys = sorted({*order, *(w[2] for ws in windows.values() for w in ws)},
                      key=lambda key: (order.get(key, len(order)), key))
        return cls(keys, windows)

    def label(self, key: tuple) -> str:
        return place_label(key)

    def mask(self, source: str, t: np.ndarray, key: tuple) -> np.ndarray:
        """Which of a series' times lie at `key`.  A host's series ("HOST", "HOST/job") by that
        host's steps; a series of no host of the run (a volume, group or VM the bed's storage map
        adds up from several hosts) by the steps of any host."""
        host = source.partition("/")[0]
        hosts = [host] if host in self.windows else list(self.windows)
        if not hosts:
            return np.full(t.shape[0], key == OUTSIDE)
        wanted = self.keys.index(key) if key in self.keys else -2
        found = [places_at(t, self.steps_of(h), self.keys) for h in hosts]
        if key == OUTSIDE:
            return np.logical_and.reduce([at < 0 for at in found])
        return np.logical_or.reduce([at == wanted for at in found])

    def steps_of(self, host: str) -> _Steps:
        steps = self._prepared.get(host)
        if steps is None:
            steps = self._prepared[host] = _Steps.of(self.windows[host], self.keys)
        return steps


def journal_stamp(run_dir: Path | None) -> tuple:
    """What changes when a step starts or ends: the journal's size and time (cheap to ask often)."""
    if run_dir is None:
        return ()
    try:
        st = os.stat(Path(run_dir) / "journal.jsonl")
        positions = os.stat(Path(run_dir) / "positions.json")
    except OSError:
        return (math.nan,)
    return (st.st_size, st.st_mtime_ns, positions.st_mtime_ns)
