"""Every curve of one dashboard plot in a single graphics item.

pyqtgraph's PlotDataItem does its own clipping, downsampling and bounds for each curve on
every data change and every view change; with 16 hosts on 4 plots that per-curve work, not
the drawing, took most of a redraw (python -m bench.dashboard).  Here the
dashboard hands over points already cut to the window and decimated to the plot's width
(app.metrics.series.peak_decimate), and this item keeps one painter path per curve.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPen, QPolygonF
from shiboken6 import VoidPtr as voidptr


class Line:
    """One curve: what the tests and the legend see of it."""

    __slots__ = ("key", "pen", "bold", "x", "y", "polylines", "visible", "rect", "top", "sample")

    def __init__(self, key, pen: QPen, bold: bool = False):
        self.key = key
        self.pen = pen
        self.bold = bold              # drawn 2 px wide
        self.x = self.y = np.empty(0)
        self.polylines: list[QPolygonF] | None = []      # None: not made since the points changed
        self.visible = True
        self.rect = QRectF()
        self.top = 0.0                # the highest value drawn
        self.sample = None            # the legend's stand-in item, if the line is in the legend

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        return self.x, self.y

    def isVisible(self) -> bool:
        return self.visible


class SeriesLayer(pg.GraphicsObject):
    def __init__(self):
        super().__init__()
        # paint() is told the exposed rect and draws only the points in it: a live tick repaints
        # the newest column of each plot, not every point of every curve
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self.lines: dict[object, Line] = {}
        self._bounds = QRectF()
        self._dirty: list[tuple[float, float]] | None = []     # x spans changed since commit (None: all)
        self._rows: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}    # (times, values) of lines set together

    def line(self, key, pen: QPen, bold: bool = False) -> Line:
        found = self.lines.get(key)
        if found is None:
            found = self.lines[key] = Line(key, pen, bold)
        return found

    def set_data(self, key, x: np.ndarray, y: np.ndarray) -> None:
        """Call commit() once the lines of this redraw are set."""
        line = self.lines[key]
        self._mark_dirty(_changed_spans(line.x, line.y, x, y) if line.visible else [])
        line.x, line.y = x, y
        line.polylines = None             # made when a paint needs the whole line: a live tick paints a few columns
        lo, hi = (y.min(), y.max()) if y.shape[0] else (np.inf, -np.inf)
        if lo != lo or hi != hi:          # a gap in view: NaN
            lo, hi = np.nanmin(y, initial=np.inf), np.nanmax(y, initial=-np.inf)
        self._set_bounds(line, lo, hi)

    def _mark_dirty(self, spans) -> None:
        """Columns to repaint; None: the whole plot (then it stays whole until the commit)."""
        if spans is None or self._dirty is None:
            self._dirty = None
        else:
            self._dirty.extend(spans)

    def set_rows(self, keys, x: np.ndarray, ys: np.ndarray) -> None:
        """set_data for lines sharing the points' times `x`, a row of `ys` each: their value
        ranges come from one pass over all rows."""
        if not x.shape[0]:
            for key, y in zip(keys, ys):
                self.set_data(key, x, y)
            return
        los, his = np.fmin.reduce(ys, axis=1), np.fmax.reduce(ys, axis=1)     # fmin/fmax: a gap (NaN) is passed over
        group = tuple(keys)
        before = self._rows.get(group)
        lines = [self.lines[key] for key in keys]
        # the same rows set together last time and shown since: compared as one block
        spans = _changed_spans(*before, x, ys) \
            if before is not None and all(line.visible and line.x is before[0] for line in lines) else False
        self._rows[group] = (x, ys)
        if spans is not False:
            self._mark_dirty(spans)
        for line, y, lo, hi in zip(lines, ys, los.tolist(), his.tolist()):
            if spans is False:
                self._mark_dirty(_changed_spans(line.x, line.y, x, y) if line.visible else [])
            line.x, line.y = x, y
            line.polylines = None
            self._set_bounds(line, lo, hi)

    @staticmethod
    def _set_bounds(line: Line, lo: float, hi: float) -> None:
        x = line.x
        line.rect = QRectF(float(x[0]), float(lo), float(x[-1] - x[0]), float(hi - lo)) if hi >= lo else QRectF()
        line.top = float(hi) if hi >= lo else 0.0

    def set_visible(self, key, visible: bool) -> None:
        line = self.lines.get(key)
        if line is not None and line.visible != visible:
            line.visible = visible
            self._dirty = None
            self.commit()

    def remove_all(self) -> None:
        self.lines.clear()
        self._rows.clear()
        self._dirty = None
        self.commit()

    def commit(self) -> None:
        rect = QRectF()
        for line in self.lines.values():
            if line.visible and not line.rect.isNull():
                rect = line.rect if rect.isNull() else rect.united(line.rect)
        if not rect.isNull():
            # room for the pen and for a flat line (a zero-height rect would never be painted)
            pad = max(rect.height() * 0.02, abs(rect.y()) * 1e-3, 1e-6)
            rect = rect.adjusted(0, -pad, 0, pad)
        dirty, self._dirty = self._dirty, []
        if rect.isNull() or self._bounds.isNull() or not self._bounds.contains(rect) \
                or self._bounds.width() > 4 * rect.width() or self._bounds.height() > 4 * rect.height():
            # a new bounding rect repaints the whole plot: it is made a little bigger than the
            # lines (room for a minute of new samples), so a live tick seldom changes it
            if not rect.isNull():
                rect = rect.adjusted(0, -rect.height() * 0.1, max(rect.width() * 0.1, 60.0), rect.height() * 0.1)
            if rect != self._bounds:
                self.prepareGeometryChange()
                self._bounds = rect
            dirty = None
        if dirty is None:
            self.update()
            return
        # a live tick in a still view changes a curve's first and newest buckets only: repaint
        # those columns, not the whole plot (python -m bench.dashboard)
        pad = self._bounds.width() * 0.01
        for x0, x1 in dirty:
            self.update(QRectF(x0 - pad, self._bounds.top(), x1 - x0 + 2 * pad, self._bounds.height()))

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter, option=None, *_args) -> None:
        painter.setRenderHint(painter.RenderHint.Antialiasing, False)     # 4 x faster on noisy lines
        # A bold line is the 1-px line drawn again one device pixel right and one down:
        # Qt strokes a 2-px pen through its general path stroker, 5 x slower on 900 points.
        m = painter.transform()
        px = (1 / m.m11() if m.m11() else 0.0, 1 / m.m22() if m.m22() else 0.0)
        exposed = option.exposedRect if option is not None else self._bounds
        columns = _exposed_columns(painter, exposed, self._bounds.width())
        cuts: dict[int, list[tuple[int, int]]] = {}       # lines sharing their times share the cuts
        for line in self.lines.values():
            if not line.visible or line.x.shape[0] < 2:
                continue
            if columns:
                # the points inside the exposed columns, and one each side so the segments reach out
                cut = cuts.get(id(line.x))
                if cut is None:
                    cut = cuts[id(line.x)] = [
                        (max(int(np.searchsorted(line.x, left - abs(px[0]) * 2, "left")) - 1, 0),
                         int(np.searchsorted(line.x, right + abs(px[0]) * 2, "right")) + 1) for left, right in columns]
                polylines = [p for a, b in cut for p in _polylines(line.x[a:b], line.y[a:b])]
            else:
                if line.polylines is None:
                    line.polylines = _polylines(line.x, line.y)
                polylines = line.polylines
            if not polylines:
                continue
            painter.setPen(line.pen)
            for dx, dy in ((0, 0), (px[0], 0), (0, px[1])) if line.bold else ((0, 0),):
                if dx or dy:
                    painter.translate(dx, dy)
                for polyline in polylines:
                    painter.drawPolyline(polyline)
                if dx or dy:
                    painter.translate(-dx, -dy)


def _exposed_columns(painter, exposed: QRectF, width: float) -> list[tuple[float, float]]:
    """The x spans a paint must draw, when they are under half the item's width; else [] (draw
    every point).  A live tick repaints a narrow column at the right of each plot; an item is
    told the bounding rect of every column of the view, which for the right-hand plots is their
    whole width (from the left-hand plots' column on), so the columns are read from the
    paint's own region (the system clip, in device coordinates)."""
    if exposed.width() < 0.5 * width:
        return [(exposed.left(), exposed.right())]
    engine = painter.paintEngine()
    region = engine.systemClip() if engine is not None else None
    m = painter.deviceTransform()
    if region is None or region.isEmpty() or m.m12() or m.m21() or not m.m11():
        return []
    spans: list[tuple[float, float]] = []
    for rect in region:
        a, b = sorted(((rect.left() - m.dx()) / m.m11(), (rect.left() + rect.width() - m.dx()) / m.m11()))
        a, b = max(a, exposed.left()), min(b, exposed.right())
        if b > a:
            spans.append((a, b))
    merged: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged if merged and sum(b - a for a, b in merged) < 0.5 * width else []


def _polylines(x: np.ndarray, y: np.ndarray) -> list[QPolygonF]:
    """One polyline per run of finite points: a NaN is a gap in the line."""
    if math.isfinite(y.sum()):          # one pass over the points in the usual case, no gap in view
        runs = [(0, x.shape[0])]
    else:
        finite = np.isfinite(y) & np.isfinite(x)
        edges = np.flatnonzero(np.diff(np.concatenate(([0], finite.view(np.int8), [0]))))
        runs = list(zip(edges[0::2], edges[1::2]))
    out = []
    for a, b in runs:
        if b - a < 2:
            continue
        polygon = QPolygonF()
        polygon.resize(b - a)
        points = np.frombuffer(voidptr(polygon.data(), (b - a) * 16, True), dtype=np.float64).reshape((-1, 2))
        points[:, 0], points[:, 1] = x[a:b], y[a:b]
        out.append(polygon)
    return out


_EDGE = 2          # points of a curve's first bucket (the ring drops its oldest samples)
_TAIL = 4          # points that may change at the newest end (the newest bucket, the one before it)


def _changed_spans(ox: np.ndarray, oy: np.ndarray, nx: np.ndarray, ny: np.ndarray):
    """The x spans that differ between a curve's old and new points, when all but its first
    bucket and its newest end are the same points (the old first bucket may have left, so the
    rest are compared two points along); None when more changed (repaint the whole plot).
    oy and ny may hold several curves on the times ox and nx, a row each: the spans of all."""
    m = nx.shape[0]
    middle = m - _EDGE - _TAIL
    if middle < 2 or ox.shape[0] < 2 or oy.shape[:-1] != ny.shape[:-1]:
        return None
    for shift in (0, _EDGE):
        a, b = _EDGE + shift, _EDGE + shift + middle
        # compared as bytes: one memcmp, and a gap (NaN) equals the same gap
        if b <= ox.shape[0] and ox[a:b].tobytes() == nx[_EDGE:m - _TAIL].tobytes() \
                and oy[..., a:b].tobytes() == ny[..., _EDGE:m - _TAIL].tobytes():
            spans = [(float(nx[m - _TAIL - 1]), float(max(ox[-1], nx[-1])))]
            if shift or ox[:_EDGE].tobytes() != nx[:_EDGE].tobytes() \
                    or oy[..., :_EDGE].tobytes() != ny[..., :_EDGE].tobytes():
                spans.append((float(min(ox[0], nx[0])), float(nx[_EDGE])))
            return spans
    return None
