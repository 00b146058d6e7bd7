"""A printed chart of one metric over a run: a line per host against elapsed time, the pass
criteria as dashed lines with their labels, a legend under the plot.  Drawn with QPainter on
a QImage (QtGui only), so the PDF, HTML and Markdown appendices carry the same figure.
"""
from __future__ import annotations

import math

from app.metrics.report import Chart

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
FONT = "DejaVu Sans"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    ticks, v = [], first
    while v <= high + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


def _label(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 or v == int(v) else f"{v:g}"


def chart_image(chart, width: int, height: int):
    """The chart as a QImage of width x height pixels (text scaled to the image); a comparison
    (app.metrics.comparison) is drawn as bars (app.metrics.bar_chart)."""
    if not isinstance(chart, Chart):
        from app.metrics.bar_chart import bar_chart_image
        return bar_chart_image(chart, width, height)
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QPolygonF

    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#ffffff"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    unit_px = height / 260.0                 # layout in units of a 260-pixel-high chart
    font = QFont(FONT)
    font.setPixelSize(max(8, int(11 * unit_px)))
    p.setFont(font)
    fm = p.fontMetrics()

    ends = [v for _h, (_t, vs) in chart.series.items() for v in vs if math.isfinite(v)]
    top = max(ends + [th for th, _ in chart.thresholds] + [0.0]) * 1.12 or 1.0
    t_end = max((ts[-1] for ts, _v in chart.series.values() if ts), default=1.0) or 1.0
    y_ticks = nice_ticks(0.0, top)
    x_ticks = nice_ticks(0.0, t_end, 6)

    legend_rows = 1 + (len(chart.series) - 1) // 6
    left = fm.horizontalAdvance(max((_label(v) for v in y_ticks), key=len)) + 30 * unit_px
    title_h = fm.height() * 1.6
    bottom_h = fm.height() * (2.4 + 1.3 * legend_rows)
    plot = QRectF(left, title_h, width - left - 14 * unit_px, height - title_h - bottom_h)

    def x_of(t: float) -> float:
        return plot.left() + plot.width() * t / t_end

    def y_of(v: float) -> float:
        return plot.bottom() - plot.height() * v / top

    title_font = QFont(font)
    title_font.setBold(True)
    p.setFont(title_font)
    p.setPen(QColor("#1f3a60"))
    p.drawText(QRectF(0, 0, width, title_h), Qt.AlignmentFlag.AlignCenter, f"{chart.title} ({chart.unit})")
    p.setFont(font)

    grid = QPen(QColor("#e4e4e4"))
    grid.setWidthF(max(1.0, unit_px * 0.8))
    text = QColor("#202020")
    for v in y_ticks:
        y = y_of(v)
        p.setPen(grid)
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        p.setPen(text)
        p.drawText(QRectF(0, y - fm.height() / 2, plot.left() - 6 * unit_px, fm.height()),
                   Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, _label(v))
    for t in x_ticks:
        x = x_of(t)
        p.setPen(grid)
        p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        p.setPen(text)
        p.drawText(QRectF(x - 40 * unit_px, plot.bottom() + 3 * unit_px, 80 * unit_px, fm.height()),
                   Qt.AlignmentFlag.AlignHCenter, _clock(t))
    p.drawText(QRectF(plot.left(), plot.bottom() + fm.height() * 1.1, plot.width(), fm.height()),
               Qt.AlignmentFlag.AlignHCenter, "time since the first sample (min:s)")
    p.setPen(QPen(QColor("#808080"), max(1.0, unit_px)))
    p.drawRect(plot)

    p.setClipRect(plot)
    for i, (ts, vs) in enumerate(chart.series.values()):
        pen = QPen(QColor(PALETTE[i % len(PALETTE)]))
        pen.setWidthF(max(1.0, 1.4 * unit_px))
        p.setPen(pen)
        run: list = []
        for t, v in list(zip(ts, vs)) + [(math.nan, math.nan)]:
            if math.isfinite(v):
                run.append(QPointF(x_of(t), y_of(v)))
                continue
            if len(run) > 1:                    # a gap ends the line; it resumes after it
                p.drawPolyline(QPolygonF(run))
            elif run:
                p.drawPoint(run[0])
            run = []
    for value, label in chart.thresholds:
        pen = QPen(QColor("#c00000"))
        pen.setWidthF(max(1.0, 1.6 * unit_px))
        pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        y = y_of(value)
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        box = QRectF(plot.right() - fm.horizontalAdvance(label) - 12 * unit_px, y - fm.height() - 2 * unit_px,
                     fm.horizontalAdvance(label) + 8 * unit_px, fm.height())
        p.fillRect(box, QColor(255, 255, 255, 230))
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
    p.setClipping(False)

    y = plot.bottom() + fm.height() * 2.4
    x = plot.left()
    for i, host in enumerate(chart.series):
        if i and i % 6 == 0:
            x, y = plot.left(), y + fm.height() * 1.3
        pen = QPen(QColor(PALETTE[i % len(PALETTE)]))
        pen.setWidthF(max(1.0, 2 * unit_px))
        p.setPen(pen)
        p.drawLine(QPointF(x, y + fm.height() / 2), QPointF(x + 18 * unit_px, y + fm.height() / 2))
        p.setPen(text)
        p.drawText(QPointF(x + 23 * unit_px, y + fm.ascent()), host)
        x += 23 * unit_px + fm.horizontalAdvance(host) + 22 * unit_px
    p.end()
    return image


def chart_png(chart, width: int = 975, height: int = 330) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    chart_image(chart, width, height).save(buf, "PNG")
    buf.close()
    return bytes(data)
