"""Live IOPS, latency and throughput while the workloads run, against the pass criteria.

Samples go into a SeriesStore (ring buffers) from any thread; a timer redraws, touching only
the curves whose series changed since the last redraw: never one redraw per sample.  Each
plot shows one curve per host and, thick, all hosts together (sum of IOPS and MB/s, mean
latency).  A pass criterion is a dashed line labelled with the time spent on its wrong side.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QPlainTextEdit, QPushButton, QSplitter, QVBoxLayout, QWidget)

from app.metrics import sample as M
from app.metrics.series import SeriesStore, time_beyond

REDRAW_MS = 250
ALL_HOSTS = "all hosts"
# plot key, metric, title, unit, how hosts combine
PLOTS = (("iops", M.IOPS, "IOPS", "IO/s", "sum"),
         ("read", M.READ_LATENCY_MS, "Read latency", "ms", "mean"),
         ("write", M.WRITE_LATENCY_MS, "Write latency", "ms", "mean"),
         ("throughput", M.THROUGHPUT_MBPS, "Throughput", "MB/s", "sum"))
WINDOWS = (("Last minute", 60), ("Last 5 minutes", 300), ("Last 15 minutes", 900), ("Last hour", 3600),
           ("Everything", 0))
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


@dataclass(frozen=True)
class Threshold:
    plot: str            # "iops" | "read" | "write" | "throughput"
    comparison: str      # the criterion: "<" = must stay below
    value: float
    label: str


def plot_for_metric(name: str) -> str | None:
    n = name.lower()
    if "lat" in n or n.endswith("_ms"):
        return "write" if "write" in n or "log" in n else "read"
    if "iops" in n or "transfers" in n or "io/s" in n:
        return "iops"
    if "mb" in n or "throughput" in n:
        return "throughput"
    return None


def thresholds_from_bed(bed) -> list[Threshold]:
    out: list[Threshold] = []
    for w in bed.workloads:
        for c in w.criteria:
            plot = plot_for_metric(c.metric + "_" + c.unit)
            if plot is None or c.comparison not in ("<", "<=", ">", ">="):
                continue
            unit = f" {c.unit}" if c.unit else ""
            out.append(Threshold(plot, c.comparison, float(c.threshold),
                                 f"{w.id}: {c.metric.replace('_', ' ')} {c.comparison} {c.threshold:g}{unit}"))
    return out


class MetricsDashboard(QWidget):
    def __init__(self, parent=None, store: SeriesStore | None = None):
        super().__init__(parent)
        import pyqtgraph as pg      # ~1 s to import: only when a dashboard is built
        self.pg = pg
        self.store = store or SeriesStore()
        self.paused = False
        self.window_s = 300
        self.thresholds: list[Threshold] = []
        self._curves: dict[tuple[str, str], object] = {}
        self._drawn: dict[tuple[str, str], int] = {}
        self._lines: dict[Threshold, object] = {}
        self._hidden: set[str] = set()
        self._colours: dict[str, str] = {}
        self._last_store_revision = -1
        self.redraws = 0
        self._build()
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        self._timer.start()

    # ---------------------------------------------------------------- layout

    def _build(self) -> None:
        pg = self.pg
        outer = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.pause_button = QPushButton("Pause", self)
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self.set_paused)
        self.window_combo = QComboBox(self)
        for text, seconds in WINDOWS:
            self.window_combo.addItem(text, seconds)
        self.window_combo.setCurrentIndex(1)
        self.window_combo.currentIndexChanged.connect(lambda _i: self._set_window(self.window_combo.currentData()))
        self.status = QLabel(self)
        bar.addWidget(self.pause_button)
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.window_combo)
        bar.addWidget(self.status, 1)
        outer.addLayout(bar)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        self.graphics = pg.GraphicsLayoutWidget(split)
        self.graphics.setBackground("w")
        self.plots: dict[str, object] = {}
        first = None
        for i, (key, _metric, title, unit, _how) in enumerate(PLOTS):
            axis = pg.DateAxisItem(orientation="bottom")
            plot = self.graphics.addPlot(row=i // 2, col=i % 2, axisItems={"bottom": axis})
            plot.setTitle(title, color="#202020", size="11pt")
            plot.setLabel("left", title, units=None, **{"color": "#202020"})
            plot.getAxis("left").setLabel(f"{title} ({unit})")
            plot.getAxis("bottom").setLabel("time")
            plot.showGrid(x=True, y=True, alpha=0.25)
            if i == 0:      # one legend: the colours are the same host in every plot
                plot.addLegend(offset=(-8, 8), labelTextColor="#202020", brush=pg.mkBrush(255, 255, 255, 230),
                               pen=pg.mkPen("#c0c0c0"))
            plot.setClipToView(True)
            plot.setDownsampling(auto=True, mode="peak")
            for ax in ("left", "bottom"):
                plot.getAxis(ax).setTextPen("#202020")
                plot.getAxis(ax).setPen("#808080")
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            self.plots[key] = plot
        side = QWidget(split)
        sl = QVBoxLayout(side)
        sl.setContentsMargins(4, 0, 0, 0)
        sl.addWidget(QLabel("Series:"))
        self.series_list = QListWidget(side)
        self.series_list.itemChanged.connect(self._series_toggled)
        sl.addWidget(self.series_list, 2)
        sl.addWidget(QLabel("Messages:"))
        self.problems = QPlainTextEdit(side)
        self.problems.setReadOnly(True)
        self.problems.setMaximumBlockCount(500)
        sl.addWidget(self.problems, 1)
        split.setStretchFactor(0, 1)
        split.setSizes([900, 220])
        outer.addWidget(split, 1)
        self.follow = QCheckBox("Follow the latest", self)
        self.follow.setChecked(True)
        bar.addWidget(self.follow)

    # ---------------------------------------------------------------- input

    def ingest(self, samples) -> None:
        """From any thread: samples only go into the ring buffers."""
        self.store.ingest(samples)

    def clear(self) -> None:
        """Forget every series (a new run starts)."""
        self.store.clear()
        for (src, metric), curve in self._curves.items():
            for plot in self.plots.values():
                if curve in plot.listDataItems():
                    plot.removeItem(curve)
                    legend = plot.legend
                    if legend is not None:
                        legend.removeItem(curve)
        self._curves.clear()
        self._drawn.clear()
        self.series_list.clear()
        self.problems.clear()
        self._last_store_revision = -1

    def add_problem(self, text: str) -> None:
        self.problems.appendPlainText(time.strftime("%H:%M:%S ") + text)

    def set_thresholds(self, thresholds: list[Threshold]) -> None:
        for line in self._lines.values():
            line.getViewBox() and self.plots[self._plot_of(line)].removeItem(line)
        self._lines.clear()
        self.thresholds = list(thresholds)
        for th in self.thresholds:
            line = self.pg.InfiniteLine(pos=th.value, angle=0, movable=False,
                                        pen=self.pg.mkPen("#c00000", width=2, style=Qt.PenStyle.DashLine),
                                        label=th.label, labelOpts={"position": 0.98, "color": "#c00000",
                                                                   "fill": (255, 255, 255, 230),
                                                                   "anchors": [(1, 1), (1, 1)]})
            line._plot_key = th.plot
            self.plots[th.plot].addItem(line)
            self._lines[th] = line

    @staticmethod
    def _plot_of(line) -> str:
        return line._plot_key

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_button.setText("Resume" if paused else "Pause")
        if not paused:
            self.redraw()

    def _set_window(self, seconds: int) -> None:
        self.window_s = seconds
        self._follow_view(force=True)

    def _series_toggled(self, item: QListWidgetItem) -> None:
        source = item.text()
        if item.checkState() == Qt.CheckState.Checked:
            self._hidden.discard(source)
        else:
            self._hidden.add(source)
        for (src, metric), curve in self._curves.items():
            curve.setVisible(src not in self._hidden)
        self._drawn.clear()
        self.redraw()

    # ---------------------------------------------------------------- drawing

    def _colour(self, source: str) -> str:
        if source not in self._colours:
            self._colours[source] = PALETTE[len(self._colours) % len(PALETTE)]
        return self._colours[source]

    def _curve(self, source: str, plot_key: str, metric: str):
        key = (source, metric)
        curve = self._curves.get(key)
        if curve is None:
            if source == ALL_HOSTS:
                pen = self.pg.mkPen("#000000", width=2.5)
            else:
                pen = self.pg.mkPen(self._colour(source), width=1.3)
            curve = self.plots[plot_key].plot(name=source, pen=pen, connect="finite")
            self._curves[key] = curve
        return curve

    def _sync_series_list(self, sources: list[str]) -> None:
        known = {self.series_list.item(i).text() for i in range(self.series_list.count())}
        for src in [ALL_HOSTS, *sources]:
            if src not in known:
                item = QListWidgetItem(src)
                item.setForeground(QColor("#000000" if src == ALL_HOSTS else self._colour(src)))
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked)
                self.series_list.addItem(item)

    def host_sources(self) -> list[str]:
        # per-host series only: "HOST/job" and "HOST/device" series stay out of the plots
        return [s for s in self.store.sources() if "/" not in s]

    def redraw(self) -> None:
        if self.paused or self.store.revision == self._last_store_revision:
            return
        self._last_store_revision = self.store.revision
        sources = self.host_sources()
        self._sync_series_list(sources)
        visible = [s for s in sources if s not in self._hidden]
        for plot_key, metric, _title, _unit, how in PLOTS:
            for src in sources:
                rev = self.store.series_revision(src, metric)
                if rev < 0 or src in self._hidden or self._drawn.get((src, metric)) == rev:
                    continue
                t, v = self.store.series(src, metric)
                self._curve(src, plot_key, metric).setData(t, v, connect="finite")
                self._drawn[(src, metric)] = rev
            if len(visible) > 1 and ALL_HOSTS not in self._hidden:
                t, v = self.store.aggregate(metric, visible, how)
                if t.size:
                    self._curve(ALL_HOSTS, plot_key, metric).setData(t, v, connect="finite")
        self._update_threshold_labels(visible)
        self._follow_view()
        self.redraws += 1

    def _update_threshold_labels(self, visible: list[str]) -> None:
        notes = []
        metric_of = {key: (metric, how) for key, metric, _t, _u, how in PLOTS}
        for th, line in self._lines.items():
            metric, how = metric_of[th.plot]
            t, v = self.store.aggregate(metric, visible, how) if len(visible) != 1 else self.store.series(visible[0], metric)
            over = time_beyond(t, v, th.value, th.comparison)
            line.label.setFormat(f"{th.label} — over the line {over:.0f} s" if over else th.label)
            if over:
                notes.append(f"{th.label}: {over:.0f} s beyond")
        self.status.setText("; ".join(notes) if notes else ("no pass criterion crossed" if self._lines else ""))

    def _follow_view(self, force: bool = False) -> None:
        if not self.follow.isChecked() and not force:
            return
        last = None
        for (src, metric) in self._drawn:
            t, _ = self.store.series(src, metric)
            if t.size:
                last = t[-1] if last is None else max(last, t[-1])
        if last is None:
            return
        first_plot = self.plots[PLOTS[0][0]]
        if self.window_s:
            first_plot.setXRange(last - self.window_s, last, padding=0.01)
        else:
            first_plot.enableAutoRange(axis="x")
        self._fit_y()

    def _fit_y(self) -> None:
        # a pass criterion's line stays in view with room for its label, even when every
        # value is far below it
        lines_by_plot: dict[str, list[float]] = {}
        for th in self._lines:
            lines_by_plot.setdefault(th.plot, []).append(th.value)
        for key, plot in self.plots.items():
            if key not in lines_by_plot:
                plot.enableAutoRange(axis="y")
                continue
            top = max(lines_by_plot[key])
            for (src, metric), curve in self._curves.items():
                if curve.isVisible() and curve in plot.listDataItems():
                    _t, v = curve.getData()
                    if v is not None and np.isfinite(v).any():
                        top = max(top, float(np.nanmax(v)))
            plot.setYRange(0, top * 1.15, padding=0)

    def shutdown(self) -> None:
        self._timer.stop()
