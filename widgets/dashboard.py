"""Live IOPS, latency and throughput while the workloads run, against the pass criteria.

Samples go into a SeriesStore (ring buffers) from any thread; a timer redraws, touching only
the curves whose series changed since the last redraw: never one redraw per sample.  Each
plot shows one curve per host and, thick, all hosts together (sum of IOPS and MB/s, mean
latency).  A pass criterion is a dashed line labelled with the time spent on its wrong side;
the data sets the value scale, and a criterion far above it is named at the plot's top edge
instead of squashing the curves (app.metrics.criterion_scale).  The time axis shows the whole
run by default, sized to the workloads' stated duration, so a 60 s run fills the plot.  "Place:"
shows the whole test or one place in it (configuration, phase, level, run) as `results` tables it
(widgets/dashboard_places.py).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFontMetrics, QPen, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGraphicsRectItem,
    QGraphicsSimpleTextItem,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.metrics import sample as M
from app.metrics.chart import PALETTE  # a host has the same colour on screen and in print
from app.metrics.criterion_scale import criterion_scale
from app.metrics.kept_decimation import KeptDecimation
from app.metrics.peak_buckets import bucket_width
from app.metrics.series import SeriesStore, is_host_series, time_beyond
from topology.vocabulary import UNITS
from widgets.series_layer import SeriesLayer

REDRAW_MS = 250
ALL_HOSTS = "all hosts"
# plot key, metric, title, unit, how hosts combine
PLOTS = (("iops", M.IOPS, "IOPS", UNITS["iops"], "sum"),
         ("read", M.READ_LATENCY_MS, "Read latency", UNITS["ms"], "mean"),
         ("write", M.WRITE_LATENCY_MS, "Write latency", UNITS["ms"], "mean"),
         ("throughput", M.THROUGHPUT_MBPS, "Throughput", UNITS["mbps"], "sum"))
WHOLE_RUN = 0
WINDOWS = (("Whole run", WHOLE_RUN), ("Last minute", 60), ("Last 5 minutes", 300), ("Last 15 minutes", 900),
           ("Last hour", 3600))
FOLLOW_STEP = 0.01              # the followed view moves by this share of its width, the margin it keeps
SHORTEST_SPAN_S = 10            # the whole-run view of a run's first seconds is not stretched thinner
# the plots never shrink below this (the page scrolls instead): a plot must stay readable
PLOT_MIN_W, PLOT_MIN_H = 300, 170
CRITERION_RED = "#c00000"
VALUE_AXIS_W = 56               # room for "250000" or "0.025" at the default font


@dataclass(frozen=True)
class Threshold:
    plot: str            # "iops" | "read" | "write" | "throughput"
    comparison: str      # the criterion: "<" = must stay below
    value: float
    label: str


def thresholds_from_bed(bed) -> list[Threshold]:
    from app.metrics.results import threshold_lines
    plot_of = {metric: key for key, metric, _t, _u, _h in PLOTS}
    return [Threshold(plot_of[metric], comparison, value, label)
            for metric, comparison, value, label in threshold_lines(bed)]


class MetricsDashboard(QWidget):
    def __init__(self, parent=None, store: SeriesStore | None = None):
        super().__init__(parent)
        import pyqtgraph as pg  # ~1 s to import: only when a dashboard is built
        self.pg = pg
        self.store = store or SeriesStore()       # what the plots draw: every sample, or one place's
        self.all_store = self.store                 # every sample of the run
        self.paused = False
        self.window_s = WHOLE_RUN
        self.run_length_s: float | None = None     # the run's stated load time: the whole-run view's width
        self.thresholds: list[Threshold] = []
        self._curves: dict[tuple[str, str], object] = {}
        self._drawn: dict[tuple[str, str], int] = {}
        self._lines: dict[Threshold, object] = {}
        self._hidden: set[str] = set()
        self._colours: dict[str, str] = {}
        self._last_store_revision = -1
        self._decimation = KeptDecimation()       # each curve's points, the buckets kept between ticks
        self._line_texts: dict[Threshold, str] = {}       # the full label of each criterion line
        self._elided: dict[Threshold, tuple[str, int]] = {}    # what its label shows, at which width
        self._off_scale: dict[str, QGraphicsSimpleTextItem] = {}
        self._off_texts: dict[str, tuple[str, int]] = {}
        self._series_actions: dict[str, QAction] = {}
        self._x_range: tuple[float, float] | None = None
        self._y_tops: dict[str, float] = {}
        self._plot_key_of = {metric: key for key, metric, _t, _u, _h in PLOTS}
        self._view_moved = False          # the user panned or zoomed: cut and decimate again
        self._setting_range = False
        self._followed_range: tuple[float, ...] = ()      # the x range the follow last set
        self.redraws = 0
        self.kind = "host"                # which series the plots show: hosts, volumes, groups, pools, VMs
        self.storage_map = None           # app.metrics.storage_series.StorageMap of the bed being run
        self._build()
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        self._timer.start()

    # ---------------------------------------------------------------- layout

    def _build(self) -> None:
        pg = self.pg
        # before the plots: their view-change handlers read it
        self.follow = QCheckBox("Follow the latest", self)
        self.follow.setChecked(True)
        self.follow.setToolTip("Keep the newest second at the right edge; zooming or panning turns this off")
        self.follow.toggled.connect(self._follow_toggled)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.pause_button = QPushButton("Pause", self)
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self.set_paused)
        self.window_combo = QComboBox(self)
        for text, seconds in WINDOWS:
            self.window_combo.addItem(text, seconds)
        self.window_combo.setToolTip("Whole run: from the first second to the end of the longest workload the "
                                     "bed states (or the latest second, when later)")
        self.window_combo.currentIndexChanged.connect(lambda _i: self._set_window(self.window_combo.currentData()))
        self.series_button = QToolButton(self)
        self.series_button.setText("Series")
        self.series_button.setToolTip("Show or hide a host's curves (all hosts: the sum or mean of those shown)")
        self.series_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.series_menu = QMenu(self.series_button)
        self.series_button.setMenu(self.series_menu)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        bar.addWidget(self.pause_button)
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.window_combo)
        from app.metrics.storage_series import KIND_TITLES, KINDS
        self.kind_combo = QComboBox(self)
        self.kind_combo.setObjectName("seriesKind")
        for kind in KINDS:
            self.kind_combo.addItem(KIND_TITLES[kind], kind)
        self.kind_combo.setToolTip("Plot per host, or per volume, disk group, pool or VM of the bed (the hosts' "
                                   "disks mapped through each volume's drive)")
        self.kind_combo.currentIndexChanged.connect(lambda _i: self.show_kind(self.kind_combo.currentData()))
        bar.addWidget(QLabel("Per:"))
        bar.addWidget(self.kind_combo)
        from widgets.dashboard_places import PlaceChooser
        self.places = PlaceChooser(self, self._place_chosen)
        bar.addWidget(self.places.label)
        bar.addWidget(self.places.combo)
        bar.addWidget(self.series_button)
        bar.addWidget(self.follow)
        bar.addWidget(self.status, 1)
        outer.addLayout(bar)
        self.graphics = pg.GraphicsLayoutWidget(self)
        self.graphics.setBackground("w")
        self.graphics.setMinimumSize(2 * PLOT_MIN_W, 2 * PLOT_MIN_H + 40)
        self.plots: dict[str, object] = {}
        self.layers: dict[str, SeriesLayer] = {}
        first = None
        for i, (key, _metric, title, unit, _how) in enumerate(PLOTS):
            axis = pg.DateAxisItem(orientation="bottom")
            plot = self.graphics.addPlot(row=i // 2, col=i % 2, axisItems={"bottom": axis})
            # the unit in the title: a rotated axis label took 20 px of every plot's width
            plot.setTitle(f"{title} ({unit})", color="#202020", size="10pt")
            # no "(x0.001)" scale note: sub-millisecond latency reads as 0.35, with its unit in the title
            plot.getAxis("left").enableAutoSIPrefix(False)
            # one width for every value axis: the two columns' time axes line up
            plot.getAxis("left").setWidth(VALUE_AXIS_W)
            if i // 2 == 0:
                # time labels under the lower plots only: the x axes are linked, and laying
                # out dates again as the view scrolls cost ~2 ms a frame per axis
                plot.getAxis("bottom").setStyle(showValues=False)
            # an opaque light grid at the labelled ticks: a translucent one cost 8 ms a frame
            plot.showGrid(x=True, y=True, alpha=1.0)
            plot.disableAutoRange()           # the dashboard sets both ranges itself
            layer = SeriesLayer()
            plot.addItem(layer)
            self.layers[key] = layer
            plot.vb.sigXRangeChanged.connect(self._view_changed)
            plot.vb.sigRangeChangedManually.connect(self._user_moved_view)
            plot.vb.sigResized.connect(self._view_resized)
            for ax in ("left", "bottom"):
                plot.getAxis(ax).setTextPen("#202020")
                plot.getAxis(ax).setPen("#808080")
                plot.getAxis(ax).setStyle(tickAlpha=255, maxTickLevel=1)
                plot.getAxis(ax).setZValue(-100)      # the grid under the curves, not over them
                plot.getAxis(ax).setTickPen("#e4e4e4")
            # pinned to the view's corner, not to the data; on a white card so a curve under it stays apart
            card = QGraphicsRectItem(plot.vb)
            card.setBrush(QColor(255, 255, 255, 225))
            card.setPen(QPen(Qt.PenStyle.NoPen))
            card.setPos(4, 2)
            card.setZValue(100)
            note = QGraphicsSimpleTextItem(card)
            note.setBrush(QColor(CRITERION_RED))
            note.setPos(2, 1)
            self._off_scale[key] = note
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            self.plots[key] = plot
        # one legend for the four plots (a host has one colour everywhere), in a row of its
        # own so it never hides a curve
        self.legend = pg.LegendItem(labelTextColor="#202020", colCount=8)
        self.graphics.addItem(self.legend, row=2, col=0, colspan=2)
        outer.addWidget(self.graphics, 1)
        self.problems = QPlainTextEdit(self)
        self.problems.setReadOnly(True)
        self.problems.setMaximumBlockCount(500)
        self.problems.setPlaceholderText("Messages from the collectors")
        self.problems.setMaximumHeight(self.problems.fontMetrics().lineSpacing() * 4 + 12)
        self.problems.hide()              # shown with the first message: the plots keep the room till then
        outer.addWidget(self.problems)

    # ---------------------------------------------------------------- input

    def ingest(self, samples) -> None:
        """From any thread: samples only go into the ring buffers (with the volume, group, pool
        and VM series they make, when the bed's storage map is set)."""
        storage = self.storage_map
        if storage is not None:
            samples = list(samples)
            samples += storage.derive(samples)
        self.all_store.ingest(samples)

    def show_history(self, run_dir) -> int:
        """A recorded run opened again: its whole history from metrics.jsonl replaces what the
        plots hold (samples that come live afterwards follow on), each gap drawn as a gap and
        named under the plots.  Returns the number of samples read."""
        from app.metrics.history import gaps_of, load_series, loads_of
        from app.metrics.series import gap_text
        series = load_series(run_dir)
        self.clear()
        self.all_store.load(series)
        self.places.set_run(run_dir, self.all_store)     # the places it reached: the "Place:" chooser
        self._view_moved = True
        gaps = gaps_of(series, loads_of(run_dir))
        if gaps:
            self.add_problem(f"{gap_text(gaps)}: nothing was collected then (the run's driver was down, or a "
                             "collector stopped); drawn as a gap")
        self.redraw()
        return sum(s.t.size for s in series)

    def set_storage_map(self, storage) -> None:
        self.storage_map = storage

    def show_kind(self, kind: str) -> None:
        """Plot another kind of series (the store keeps them all)."""
        self.kind = kind
        self._forget_curves()
        self.redraw()

    def clear(self) -> None:
        """Forget every series (a new run starts)."""
        self.places.forget()
        self.store = self.all_store
        self.all_store.clear()
        self._forget_curves()
        self._x_range = None
        self.problems.clear()
        self.problems.hide()

    def _forget_curves(self) -> None:
        for layer in self.layers.values():
            layer.remove_all()
        self.legend.clear()
        for line in self._curves.values():
            sample = getattr(line, "sample", None)
            if sample is not None:
                sample.deleteLater()
        self._curves.clear()
        self._drawn.clear()
        self._decimation.clear()
        self._y_tops.clear()
        self.series_menu.clear()
        self._series_actions.clear()
        self._last_store_revision = -1

    def add_problem(self, text: str) -> None:
        self.problems.appendPlainText(time.strftime("%H:%M:%S ") + text)
        self.problems.show()

    def set_run_length(self, seconds: float | None) -> None:
        """The run's stated load time: the whole-run view spans it from the first second."""
        self.run_length_s = seconds if seconds and seconds > 0 else None
        self._view_moved = True

    def set_thresholds(self, thresholds: list[Threshold]) -> None:
        if list(thresholds) == self.thresholds and all(th in self._lines for th in thresholds):
            self._y_tops.clear()
            self._last_store_revision = -1
            return          # the same criteria (a run of the same bed): the lines stay as they are
        for th, line in self._lines.items():
            self.plots[th.plot].removeItem(line)
            line.deleteLater()      # ended here, on the GUI thread, not by a collection on some worker
        self._lines.clear()
        self._line_texts.clear()
        self._elided.clear()
        self._y_tops.clear()
        self._last_store_revision = -1
        self.thresholds = list(thresholds)
        for th in self.thresholds:
            # the label starts inside the plot's left edge and is cut to its width with "…" in the
            # middle (the workload and the limit both stay readable)
            line = self.pg.InfiniteLine(pos=th.value, angle=0, movable=False,
                                        pen=self.pg.mkPen(CRITERION_RED, width=2, style=Qt.PenStyle.DashLine),
                                        label="", labelOpts={"position": 0.01, "color": CRITERION_RED,
                                                             "fill": (255, 255, 255, 230),
                                                             "anchors": [(0, 1), (0, 1)]})
            self.plots[th.plot].addItem(line)
            self._lines[th] = line
            self._set_line_text(th, th.label)

    def _set_line_text(self, th: Threshold, text: str) -> None:
        self._line_texts[th] = text
        width = int(self.plots[th.plot].vb.width()) - 16
        if self._elided.get(th) == (text, width):
            return          # re-laying out a label costs more than comparing
        self._elided[th] = (text, width)
        line = self._lines[th]
        shown = QFontMetrics(line.label.textItem.font()).elidedText(text, Qt.TextElideMode.ElideMiddle,
                                                                     max(width, 40))
        line.label.setFormat(shown.replace("{", "{{").replace("}", "}}"))    # a format string: braces are data
        line.label.setToolTip(text)

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_button.setText("Resume" if paused else "Pause")
        if not paused:
            self.redraw()

    def series_action(self, source: str) -> QAction | None:
        """The Series menu's entry for a host (or ALL_HOSTS): checked while its curves show."""
        return self._series_actions.get(source)

    def _series_toggled(self, source: str, shown: bool) -> None:
        if shown:
            self._hidden.discard(source)
        else:
            self._hidden.add(source)
        for key in self._curves:
            self.layers[self._plot_key_of[key[1]]].set_visible(key, key[0] not in self._hidden)
        self._drawn.clear()
        self._y_tops.clear()
        self._last_store_revision = -1
        self.redraw()

    # ---------------------------------------------------------------- drawing

    def _colour(self, source: str) -> str:
        if source not in self._colours:
            self._colours[source] = PALETTE[len(self._colours) % len(PALETTE)]
        return self._colours[source]

    def _curve(self, source: str, plot_key: str, metric: str):
        key = (source, metric)
        line = self._curves.get(key)
        if line is None:
            # 1-pixel lines take Qt's fast path (1.3 px made painting 4 x slower); the
            # all-hosts line stands out drawn bold
            pen = self.pg.mkPen("#000000" if source == ALL_HOSTS else self._colour(source), width=1)
            line = self._curves[key] = self.layers[plot_key].line(key, pen, bold=source == ALL_HOSTS)
            line.visible = source not in self._hidden
            if plot_key == PLOTS[0][0]:
                line.sample = self.pg.PlotDataItem(pen=self.pg.mkPen(pen.color(), width=2 if line.bold else 1))
                self.legend.addItem(line.sample, source)
        return line

    def _sync_series_list(self, sources: list[str]) -> None:
        for src in [ALL_HOSTS, *sources]:
            if src in self._series_actions:
                continue
            swatch = QPixmap(12, 12)
            swatch.fill(QColor("#000000" if src == ALL_HOSTS else self._colour(src)))
            action = self.series_menu.addAction(swatch, src)
            action.setCheckable(True)
            action.setChecked(src not in self._hidden)
            action.toggled.connect(lambda shown, src=src: self._series_toggled(src, shown))
            self._series_actions[src] = action

    def host_sources(self) -> list[str]:
        # the chosen kind only: "HOST/job" and "HOST/device" series stay out of the plots
        if self.kind == "host":
            return [s for s in self.store.sources() if is_host_series(s)]
        from app.metrics.storage_series import of_kind
        return of_kind(self.store.sources(), self.kind)

    def redraw(self) -> None:
        """Runs on the timer.  A series is cut to the window and decimated to the plot's
        width only when it changed or the view moved; the all-hosts series are computed once
        per plot and reused for the threshold times."""
        if not self.paused:
            self._follow_place()
        view_moved = self._view_moved
        if self.paused or (self.store.revision == self._last_store_revision and not view_moved):
            return
        self._last_store_revision = self.store.revision
        self._view_moved = False
        sources = self.host_sources()
        self._sync_series_list(sources)
        visible = [s for s in sources if s not in self._hidden]
        x0, x1 = self._window()
        if (x0, x1) != self._x_range:
            view_moved = True
            self._x_range = (x0, x1)
        combined: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        shown: dict[tuple[str, str], int] = {}          # the series in the plots: their revisions
        changed: set[tuple[str, str]] = set()            # those to draw again
        pixels_of: dict[tuple[str, str], int] = {}      # each series' plot width
        for plot_key, metric, _title, _unit, how in PLOTS:
            pixels = max(int(self.plots[plot_key].vb.width()), 100)
            revisions = self.store.series_revisions(metric, sources)
            for src, rev in zip(sources, revisions):
                if rev < 0 or src in self._hidden:
                    continue
                shown[(src, metric)] = rev
                pixels_of[(src, metric)] = pixels
                if self._drawn.get((src, metric)) != rev or view_moved:
                    self._curve(src, plot_key, metric)          # made in this order: the legend's and the paint's
                    changed.add((src, metric))
            if len(visible) == 1:
                combined[plot_key] = self.store.series(visible[0], metric)
            elif visible:
                combined[plot_key] = (self.store.all_hosts(metric, how)
                                      if len(visible) == len(sources) and self.kind == "host"
                                      else self.store.aggregate(metric, visible, how))
                if ALL_HOSTS not in self._hidden and combined[plot_key][0].size:
                    self._draw(ALL_HOSTS, plot_key, metric, *combined[plot_key], x0, x1, pixels)
        # the series sharing a time axis are cut and decimated in one numpy pass; a group is every shown
        # series on that axis, changed or not, so it stays the same from tick to tick and keeps its buckets
        for keys, t, values in self.store.shared_axes(shown, changed):
            for part, dt, dv in self._decimation.by_width(keys, t, values, x0, x1, pixels_of):
                for metric in dict.fromkeys(m for _src, m in part):          # each plot's rows to its layer
                    rows = [row for row, key in enumerate(part) if key[1] == metric]
                    self.layers[self._plot_key_of[metric]].set_rows(
                        [part[r] for r in rows], dt, dv if len(rows) == len(part) else dv[rows])
            for key in keys:
                self._drawn[key] = shown[key]
        self._decimation.end_redraw()
        for layer in self.layers.values():
            layer.commit()
        self._update_threshold_labels(combined)
        self._fit_y()
        self.redraws += 1

    def _place_chosen(self) -> None:
        self._forget_curves()             # another place has other series and other times
        self._view_moved = True
        self.redraw()

    def _follow_place(self) -> None:
        store, remade = self.places.store_for(self.all_store)
        if store is not self.store or remade:
            self.store = store
            self._drawn.clear()           # the place's rings are new: their revisions start again
            self._last_store_revision = -1

    def _window(self) -> tuple[float, float]:
        """The time range to draw: the latest window when following, else what the user shows."""
        plot = self.plots[PLOTS[0][0]]
        if not self.follow.isChecked():
            (x0, x1), _ = plot.vb.viewRange()
            return float(x0), float(x1)
        first, last = self.store.time_span()
        if last is None:
            (x0, x1), _ = plot.vb.viewRange()
            return float(x0), float(x1)
        if self.window_s == WHOLE_RUN:
            x0 = first
            last = max(last, first + (self.run_length_s or 0.0), first + SHORTEST_SPAN_S)
        else:
            x0 = last - self.window_s
        if x0 >= last:
            x0 = last - 1
        # the right edge steps by the view's own right margin (1 %, whole buckets): the view stays
        # put while the newest second lands inside that margin, so the axes and all but the
        # newest bucket of every curve are reused; moving the whole view each second cost a
        # full repaint every tick (python -m bench.dashboard)
        bucket = bucket_width(last - x0, max(int(plot.vb.width()), 100))
        step = bucket * max(1, math.floor(FOLLOW_STEP * (last - x0) / bucket)) if bucket > 0 else 0.0
        if step > 0:
            right = math.ceil(last / step) * step
            x0, last = (x0 if self.window_s == WHOLE_RUN else x0 + right - last), right
        if (x0, last) != self._x_range:
            self._setting_range = True
            try:
                plot.setXRange(x0, last, padding=FOLLOW_STEP)
            finally:
                self._setting_range = False
            self._followed_range = tuple(plot.vb.viewRange()[0])
            for each in self.plots.values():
                # the new transforms now, not at the next paint: pyqtgraph applies them while painting
                # and the axes' repaint that follows lands on the next tick, a second full frame
                each.vb.updateMatrix()
        return x0, last

    def _view_changed(self, _vb=None, x_range=None) -> None:
        # the linked plots take the range the follow set a moment later: that is no move
        if not self._setting_range and (x_range is None or tuple(x_range) != self._followed_range):
            self._view_moved = True       # cut and decimate for the new range
            self._x_range = None          # and the next follow sets its range again

    def _user_moved_view(self, *_args) -> None:
        # a person zooms or pans (wheel, drag): stop jumping to the latest second under them
        self._view_moved = True
        if self.follow.isChecked():
            self.follow.setChecked(False)

    def _follow_toggled(self, on: bool) -> None:
        if on:
            self._view_moved = True
            self.redraw()

    def _view_resized(self, *_args) -> None:
        self._view_moved = True           # more or fewer pixels: decimate again
        self._off_texts.clear()           # and cut the labels to the new width
        for th, text in list(self._line_texts.items()):
            self._set_line_text(th, text)

    def _draw(self, source, plot_key, metric, t, v, x0, x1, pixels) -> None:
        line = self._curve(source, plot_key, metric)
        # the all-hosts sum of a second changes until every host's sample of it is in
        dt, dv = self._decimation.one(line.key, t, v, x0, x1, pixels, settle=30.0 if source == ALL_HOSTS else 0.0)
        self.layers[plot_key].set_data(line.key, dt, dv)

    def _update_threshold_labels(self, combined: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        notes = []
        for th in self._lines:
            t, v = combined.get(th.plot, (np.empty(0), np.empty(0)))
            over = time_beyond(t, v, th.value, th.comparison)
            text = f"{th.label} — over the line {over:.0f} s" if over else th.label
            self._set_line_text(th, text)
            if over:
                notes.append(f"{th.label}: {over:.0f} s beyond")
        self.status.setText("; ".join(notes) if notes else ("no pass criterion crossed" if self._lines else ""))

    def _set_window(self, seconds: int) -> None:
        self.window_s = seconds
        self._view_moved = True
        self.redraw()

    def _fit_y(self) -> None:
        # from 0 to the data's peak; a criterion near it is drawn as its line, one far above is
        # named at the top edge instead (a 20 ms line must not flatten 0.3 ms of latency)
        for key, _metric, _t, _u, _h in PLOTS:
            # the highest value drawn of each curve shown
            peak = max((line.top for (src, _m), line in self.layers[key].lines.items() if src not in self._hidden),
                       default=0.0)
            lines = [th for th in self._lines if th.plot == key]
            scale = criterion_scale(peak, [th.value for th in lines])
            off = [th for th in lines if th.value in scale.off_scale]
            for th in lines:
                self._lines[th].setVisible(th not in off)
            self._show_off_scale(key, off)
            top = scale.top
            if off and peak > 0:
                # the note takes the top rows of the plot: the curves stay below it
                height = max(self.plots[key].vb.height(), 1.0)
                taken = min((self._off_scale[key].parentItem().rect().height() + 12) / height, 0.5)
                top = max(top, peak / (1 - taken) * 1.02)
            if self._y_tops.get(key) != top:
                self.plots[key].setYRange(0, top, padding=0)
                self._y_tops[key] = top

    def _show_off_scale(self, key: str, off: list[Threshold]) -> None:
        note = self._off_scale[key]
        unit = next(u for k, _m, _t, u, _h in PLOTS if k == key)
        limits = dict.fromkeys(f"{th.comparison} {th.value:g} {unit}" for th in sorted(off, key=lambda th: th.value))
        text = f"▲ above the scale: {', '.join(limits)}" if off else ""
        width = int(self.plots[key].vb.width()) - 12
        if self._off_texts.get(key) == (text, width):
            return
        self._off_texts[key] = (text, width)
        note.setText(QFontMetrics(note.font()).elidedText(text, Qt.TextElideMode.ElideRight, max(width, 40)))
        card = note.parentItem()
        card.setRect(note.boundingRect().adjusted(0, 0, 4, 2))
        card.setVisible(bool(text))
        note.setToolTip("\n".join(self._line_texts.get(th, th.label) for th in off))

    def off_scale_text(self, plot_key: str) -> str:
        """What the plot's top edge says of the criteria off its scale ("" when none is)."""
        return self._off_texts.get(plot_key, ("", 0))[0]

    def shutdown(self) -> None:
        self._timer.stop()
        self.places.shutdown()
