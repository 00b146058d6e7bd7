"""The dashboard's "Place:" chooser: the whole test, or one place in it (configuration, phase,
scenario, level, run) with only the samples measured there, as `results RUN` tables them
(app.metrics.place_series).  A live run's places are read again from its journal when a step
starts or ends; a finished run opened again lists every place it reached."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from app.metrics.by_place import OUTSIDE
from app.metrics.history import Series
from app.metrics.place_series import RunPlaces, journal_stamp, places_at
from app.metrics.series import SeriesStore, is_host_series

WHOLE_TEST = "Whole test"
REREAD_MS = 1000            # how often a live run's journal is looked at (a stat, unless it changed)
REBUILD_S = 1.0             # a chosen place takes in a live run's new samples at most this often
MARKERS_MAX = 24            # the whole test marks where each place begins, up to this many places


class PlaceChooser(QObject):
    def __init__(self, parent: QWidget, changed):
        super().__init__(parent)
        self._changed = changed                     # the dashboard's: forget the curves, draw again
        self.label = QLabel("Place:", parent)
        self.combo = QComboBox(parent)
        self.combo.setObjectName("placeChooser")
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.setToolTip("The whole test, or one place in it (configuration, phase, level, run): only the "
                              "samples measured while that place's steps ran, as `results` tables them")
        self.combo.currentIndexChanged.connect(self._chosen)
        self.run_dir: Path | None = None
        self.source = SeriesStore()                 # the dashboard's store of every sample
        self.places = RunPlaces([], {})
        self.key: tuple | None = None               # None: the whole test
        self._keys: list[tuple] = []                # the chooser's places, in its order
        self._stamp: tuple = ()
        self._store = SeriesStore()
        self._built: tuple = ()                     # (source revision, stamp, key) the place store holds
        self._built_at = 0.0
        self._filling = False
        self._markers: list[tuple[object, object]] = []     # (plot, the line where a place begins)
        self._marked: set[tuple] = set()                     # the places marked
        self._marked_revision = -1                           # the samples they were marked from
        self._show(False)
        self._timer = QTimer(self)
        self._timer.setInterval(REREAD_MS)
        self._timer.timeout.connect(self.refresh)

    # ------------------------------------------------------------ the run

    def set_run(self, run_dir, source: SeriesStore) -> None:
        self.run_dir, self.source = Path(run_dir), source
        self._stamp = ()
        self.refresh()
        self._timer.start()

    def forget(self) -> None:
        self._timer.stop()
        self.run_dir, self.places, self._stamp, self._built = None, RunPlaces([], {}), (), ()
        self._store.clear()
        self._fill([], None)

    def refresh(self) -> None:
        """Read the run's places again when its journal changed (a step started or ended)."""
        stamp = journal_stamp(self.run_dir)
        if self.run_dir is None:
            return
        if stamp == self._stamp:
            if (self.key is None and len(self._marked) < len(self._keys) <= MARKERS_MAX
                    and self.source.revision != self._marked_revision):
                self._draw_markers()        # a place's first samples may have come in since
            return
        self._stamp = stamp
        self.places = RunPlaces.read(self.run_dir)
        ran = {w[2] for ws in self.places.windows.values() for w in ws}
        keys = [k for k in self.places.keys if k in ran]
        if keys and self._has_outside(self.source):
            keys.append(OUTSIDE)
        self._fill(keys, self.key)

    def _has_outside(self, source: SeriesStore) -> bool:
        for src, metric in source.keys():
            if is_host_series(src):
                t, _v = source.series(src, metric)
                if self.places.mask(src, t, OUTSIDE).any():
                    return True
        return False

    # ------------------------------------------------------------ the choice

    def _fill(self, keys: list[tuple], keep: tuple | None) -> None:
        self._filling = True
        try:
            self.combo.clear()
            self.combo.addItem(WHOLE_TEST)
            for key in keys:            # a tuple in a QVariant comes back as a list: found by index instead
                self.combo.addItem(self.places.label(key))
            self._keys = list(keys)
            self.combo.setCurrentIndex(keys.index(keep) + 1 if keep in keys else 0)
        finally:
            self._filling = False
        self._show(bool(keys))
        if keep is not None and keep not in keys:
            self._chosen()          # the place chosen is gone (another run): the whole test again
        else:
            self._draw_markers()

    def _show(self, shown: bool) -> None:
        self.label.setVisible(shown)
        self.combo.setVisible(shown)

    def _chosen(self, *_args) -> None:
        if self._filling:
            return
        index = self.combo.currentIndex()
        self.key = self._keys[index - 1] if 0 < index <= len(self._keys) else None
        self._built = ()
        self._draw_markers()
        self._changed()

    def _draw_markers(self) -> None:
        """On the whole test, a dashed line at each place's first sample (placed as `results` places
        it), named on the first plot; none while one place is shown, or when there are too many."""
        dash = self.parent()
        for plot, line in self._markers:
            plot.removeItem(line)
            line.deleteLater()
        self._markers = []
        if self.key is not None or not self._keys or len(self._keys) > MARKERS_MAX:
            return
        firsts = self._first_samples()
        self._marked_revision = self.source.revision
        self._marked = set(firsts)
        pen = dash.pg.mkPen("#8a8a8a", width=1, style=Qt.PenStyle.DashLine)
        for n, plot in enumerate(dash.plots.values()):
            for key in self._keys:
                if key not in firsts:
                    continue
                line = dash.pg.InfiniteLine(pos=firsts[key], angle=90, movable=False, pen=pen,
                                            label=self.places.label(key) if n == 0 else None,
                                            labelOpts={"position": 0.96, "color": "#404040",
                                                       "anchors": [(0, 0), (0, 0)]})
                line.setZValue(-50)             # under the curves
                plot.addItem(line)
                self._markers.append((plot, line))

    def _first_samples(self) -> dict[tuple, float]:
        """Each place's first host sample (a place with none yet has no mark)."""
        first = np.full(len(self._keys), np.inf)
        to_shown = np.array([self._keys.index(k) if k in self._keys else -1 for k in self.places.keys] + [-1])
        for src, metric in self.source.keys():
            host = src.partition("/")[0]
            if not is_host_series(src) or host not in self.places.windows:
                continue
            t, _v = self.source.series(src, metric)
            at = to_shown[places_at(t, self.places.steps_of(host), self.places.keys)]
            known = at >= 0
            np.minimum.at(first, at[known], t[known])
        return {key: float(first[k]) for k, key in enumerate(self._keys) if np.isfinite(first[k])}

    def markers(self) -> list[tuple[float, str]]:
        """Where the first plot marks each place's beginning, and what it names it."""
        first = next(iter(self.parent().plots.values()), None)
        return [(float(line.value()), line.label.format if line.label is not None else "")
                for plot, line in self._markers if plot is first]

    def choose(self, key: tuple | None) -> bool:
        """Show one place (None: the whole test); False when the run has no such place."""
        if key is not None and tuple(key) not in self._keys:
            return False
        self.combo.setCurrentIndex(self._keys.index(tuple(key)) + 1 if key is not None else 0)
        return True

    def place_keys(self) -> list[tuple]:
        return list(self._keys)

    def place_labels(self) -> list[str]:
        return [self.combo.itemText(i) for i in range(1, self.combo.count())]

    # ------------------------------------------------------------ what the plots draw

    def store_for(self, source: SeriesStore) -> tuple[SeriesStore, bool]:
        """The store the plots draw from, and whether it was made again since the last call."""
        if self.key is None:
            return source, False
        built = (source.revision, self._stamp, self.key)
        if built == self._built:
            return self._store, False
        if self._built[1:] == built[1:] and time.monotonic() - self._built_at < REBUILD_S:
            return self._store, False       # new samples of the same place: taken in at most once a second
        self._built, self._built_at = built, time.monotonic()
        series = []
        masks: dict[tuple, np.ndarray] = {}         # a host's series mostly share their seconds
        for src, metric in source.keys():
            t, v = source.series(src, metric)
            seen = (src.partition("/")[0], t.size, hash(t.tobytes()))
            keep = masks.get(seen)
            if keep is None:
                keep = masks[seen] = self.places.mask(src, t, self.key)
            if keep.any():
                series.append(Series(src, metric, source.unit(src, metric), t[keep], v[keep]))
        self._store.load(series)
        return self._store, True

    def samples_shown(self) -> int:
        """How many samples the chosen place holds (every series, the gaps' markers left out)."""
        store = self._store if self.key is not None else None
        if store is None:
            return -1
        return sum(int(np.isfinite(store.series(s, m)[1]).sum()) for s, m in store.keys())

    def shutdown(self) -> None:
        self._timer.stop()

