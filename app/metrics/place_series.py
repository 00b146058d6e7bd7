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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.metrics.by_place import CLOCK_SLACK_S, OUTSIDE, place_key, place_label, step_windows
from app.run.positions import read_positions

Window = tuple[float, float, tuple]


def places_at(t: np.ndarray, windows: Sequence[Window], keys: list[tuple]) -> np.ndarray:
    """For each time in `t`, the index in `keys` of its place on a host with these step windows
    (sorted as app.metrics.by_place.step_windows gives them); -1 outside the test's steps."""
    out = np.full(t.shape[0], -1, dtype=np.int64)
    if not windows or not t.size:
        return out
    index = {key: k for k, key in enumerate(keys)}
    of_window = np.array([index.get(key, -1) for _s, _e, key in windows], dtype=np.int64)
    inside = np.zeros(t.shape[0], dtype=bool)
    for w, (start, end, _key) in enumerate(windows):     # a later start wins where steps overlap
        hit = (t >= start) & (t <= end)
        out[hit] = of_window[w]
        inside |= hit
    rest = np.flatnonzero(~inside)
    if rest.size:
        tt = t[rest]
        starts = np.array([s for s, _e, _k in windows])[:, None]
        ends = np.array([e for _s, e, _k in windows])[:, None]
        with np.errstate(invalid="ignore"):
            distance = np.minimum(np.abs(tt - starts), np.abs(tt - ends))
            nearest = np.argmin(np.where(np.isnan(distance), np.inf, distance), axis=0)
            near = distance[nearest, np.arange(rest.size)] <= CLOCK_SLACK_S
        out[rest] = np.where(near, of_window[nearest], -1)
    return out


@dataclass
class RunPlaces:
    """The places of one run's steps and, per host, when each ran (read from its journal)."""
    keys: list[tuple]                                   # in the run section's order
    windows: dict[str, list[Window]]

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
        if key == OUTSIDE:
            keys = self.keys
        else:
            keys = [key]
        host = source.partition("/")[0]
        windows = self.windows.get(host)
        if windows is not None:
            at = places_at(t, windows, keys)
            return at < 0 if key == OUTSIDE else at == 0
        every = [places_at(t, ws, keys) for ws in self.windows.values()]
        if not every:
            return np.full(t.shape[0], key == OUTSIDE)
        if key == OUTSIDE:
            return np.logical_and.reduce([at < 0 for at in every])
        return np.logical_or.reduce([at == 0 for at in every])


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
