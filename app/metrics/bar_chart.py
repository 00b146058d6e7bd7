"""A comparison drawn as the reports draw it: a bar per configuration (or run) for each host or
VM, and the totals in a panel of their own beside them (a total is several times a VM's figure:
on one axis the VMs' bars would shrink to nothing).  Each bar carries its value; the legend
names the sides, the baseline marked.  QPainter on a QImage (QtGui only), for the PDF, HTML,
Markdown and the Compare view alike."""
from __future__ import annotations

import math

from app.metrics.chart import FONT, PALETTE, _label, nice_ticks
from app.metrics.comparison import ComparisonTable


def bar_chart_image(table: ComparisonTable, width: int, height: int):
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen

    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#ffffff"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    unit_px = height / 260.0
    font = QFont(FONT)
    font.setPixelSize(max(8, int(10 * unit_px)))
    p.setFont(font)
    fm = p.fontMetrics()
    text_pen = QColor("#202020")

    subjects = [r for r in table.rows if not r.is_total]
    totals = [r for r in table.rows if r.is_total]
    better = "higher is better" if table.higher_is_better else "lower is better"
    title_h = fm.height() * 1.7
    title_font = QFont(font)
    title_font.setBold(True)
    p.setFont(title_font)
    p.setPen(QColor("#1f3a60"))
    p.drawText(QRectF(0, 0, width, title_h), Qt.AlignmentFlag.AlignCenter,
               f"{table.title} ({table.unit}, {better}) per host/VM" + (" and in total" if totals else ""))
    p.setFont(font)

    legend_h = fm.height() * 1.8
    bottom_h = fm.height() * 2.0
    margin = 10 * unit_px
    area = QRectF(margin, title_h, width - 2 * margin, height - title_h - legend_h - bottom_h)
    if totals:
        share = max(0.22, 1.0 / (len(subjects) + 1))
        panels = [(subjects, QRectF(area.left(), area.top(), area.width() * (1 - share) - margin, area.height())),
                  (totals, QRectF(area.left() + area.width() * (1 - share) + margin, area.top(),
                                  area.width() * share - margin, area.height()))]
    else:
        panels = [(subjects, area)]

    for rows, box in panels:
        values = [v for r in rows for v in r.values if math.isfinite(v)]
        top = (max(values) if values else 1.0) * 1.15 or 1.0
        ticks = nice_ticks(0.0, top)
        left = fm.horizontalAdvance(max((_label(v) for v in ticks), key=len)) + 8 * unit_px
        plot = QRectF(box.left() + left, box.top() + fm.height() * 0.5, box.width() - left, box.height() - fm.height())

        def y_of(v: float, plot=plot, top=top) -> float:
            return plot.bottom() - plot.height() * v / top
        grid = QPen(QColor("#e4e4e4"))
        grid.setWidthF(max(1.0, 0.8 * unit_px))
        for v in ticks:
            p.setPen(grid)
            p.drawLine(QPointF(plot.left(), y_of(v)), QPointF(plot.right(), y_of(v)))
            p.setPen(text_pen)
            p.drawText(QRectF(box.left(), y_of(v) - fm.height() / 2, left - 4 * unit_px, fm.height()),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, _label(v))
        p.setPen(QPen(QColor("#808080"), max(1.0, unit_px)))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        group_w = plot.width() / max(1, len(rows))
        bar_w = group_w * 0.8 / max(1, len(table.sides))
        for g, row in enumerate(rows):
            x0 = plot.left() + g * group_w + group_w * 0.1
            for i, v in enumerate(row.values):
                if not math.isfinite(v):
                    continue
                bar = QRectF(x0 + i * bar_w, y_of(v), bar_w * 0.92, plot.bottom() - y_of(v))
                p.fillRect(bar, QColor(PALETTE[i % len(PALETTE)]))
                p.setPen(text_pen)
                p.drawText(QRectF(bar.center().x() - bar_w, bar.top() - fm.height(), 2 * bar_w, fm.height()),
                           Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom, _label(round(v, 1)))
            p.setPen(text_pen)
            p.drawText(QRectF(plot.left() + g * group_w, plot.bottom() + 2 * unit_px, group_w, fm.height() * 1.2),
                       Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                       fm.elidedText(row.subject, Qt.TextElideMode.ElideMiddle, int(group_w)))

    x = area.left()
    y = height - legend_h + fm.height() * 0.3
    for i, name in enumerate(table.names):
        swatch = QRectF(x, y + fm.height() * 0.15, 14 * unit_px, fm.height() * 0.7)
        p.fillRect(swatch, QColor(PALETTE[i % len(PALETTE)]))
        label = name + (" (baseline)" if name == table.baseline else "")
        p.setPen(text_pen)
        p.drawText(QPointF(x + 18 * unit_px, y + fm.ascent()), label)
        x += 18 * unit_px + fm.horizontalAdvance(label) + 20 * unit_px
    p.end()
    return image
