"""A comparison drawn as the reports draw it: a bar per configuration (or run) for each host or
VM, and the totals in a panel of their own beside them (a total is several times a VM's figure:
on one axis the VMs' bars would shrink to nothing).  Each bar carries its value; the legend
names the sides, the baseline marked.  QPainter on a QImage (QtGui only), for the PDF, HTML,
Markdown and the Compare view alike."""
from __future__ import annotations

import math

from app.metrics.chart import FONT, PALETTE, _label, nice_ticks
from app.metrics.comparison import ComparisonTable


def _value_text(v: float) -> str:
    return _label(round(v, 1))


def bar_chart_layout(table: ComparisonTable, width: int, height: int, fm, unit_px: float) -> dict:
    """Where everything of the chart goes, worked out before anything is drawn: the panels, each
    bar, and each value label's box.  A label wider than its bar is turned upright, and the axis
    leaves room above the tallest bar for it, so no label covers another or leaves the image
    (`label_boxes`, tests/test_compare_chart.py)."""
    from PySide6.QtCore import QRectF
    subjects = [r for r in table.rows if not r.is_total]
    totals = [r for r in table.rows if r.is_total]
    title_h = fm.height() * 1.7
    legend_h = fm.height() * 1.8
    bottom_h = fm.height() * 2.0
    margin = 10 * unit_px
    area = QRectF(margin, title_h, width - 2 * margin, height - title_h - legend_h - bottom_h)
    if totals and subjects:
        share = max(0.22, 1.0 / (len(subjects) + 1))
        boxes = [(subjects, QRectF(area.left(), area.top(), area.width() * (1 - share) - margin, area.height())),
                 (totals, QRectF(area.left() + area.width() * (1 - share) + margin, area.top(),
                                 area.width() * share - margin, area.height()))]
    else:
        boxes = [(subjects or totals, area)]
    panels = []
    pad = 3 * unit_px
    for rows, box in boxes:
        values = [v for r in rows for v in r.values if math.isfinite(v)]
        vmax = max(values) if values else 1.0
        texts = [_value_text(v) for v in values] or ["0"]
        group_w = 1.0 if not rows else None
        # the plot's width first (the tick labels' room depends on the axis top: two passes settle it)
        top = vmax * 1.15 or 1.0
        for _ in range(3):
            ticks = nice_ticks(0.0, top)
            left = fm.horizontalAdvance(max((_label(v) for v in ticks), key=len)) + 8 * unit_px
            plot = QRectF(box.left() + left, box.top() + fm.height() * 0.5, box.width() - left,
                          box.height() - fm.height())
            group_w = plot.width() / max(1, len(rows))
            bar_w = group_w * 0.8 / max(1, len(table.sides))
            upright = any(fm.horizontalAdvance(t) > bar_w * 0.92 for t in texts)
            need = (max(fm.horizontalAdvance(t) for t in texts) if upright else fm.height()) + 2 * pad
            room = plot.height() - need
            wanted = vmax * plot.height() / room if room > plot.height() * 0.2 else vmax * 5
            top = max(vmax * 1.15, wanted) or 1.0
        ticks = nice_ticks(0.0, top)
        bars = []
        for g, row in enumerate(rows):
            x0 = plot.left() + g * group_w + group_w * 0.1
            for i, v in enumerate(row.values):
                if not math.isfinite(v):
                    continue
                y = plot.bottom() - plot.height() * v / top
                bar = QRectF(x0 + i * bar_w, y, bar_w * 0.92, plot.bottom() - y)
                text = _value_text(v)
                tw = fm.horizontalAdvance(text)
                if upright:
                    label = QRectF(bar.center().x() - fm.height() / 2, bar.top() - pad - tw, fm.height(), tw)
                else:
                    label = QRectF(bar.center().x() - tw / 2, bar.top() - pad - fm.height(), tw, fm.height())
                bars.append((i, bar, text, label))
        panels.append({"rows": rows, "plot": plot, "top": top, "ticks": ticks, "left": left, "box": box,
                       "group_w": group_w, "bars": bars, "upright": upright})
    return {"title_h": title_h, "legend_h": legend_h, "area": area, "panels": panels, "totals": bool(totals)}


def label_boxes(table: ComparisonTable, width: int, height: int) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(text, (x, y, w, h)) of every value label as the chart draws it, for the tests."""
    from PySide6.QtGui import QFont, QFontMetricsF
    unit_px = height / 260.0
    font = QFont(FONT)
    font.setPixelSize(max(8, int(10 * unit_px)))
    layout = bar_chart_layout(table, width, height, QFontMetricsF(font), unit_px)
    return [(text, (r.x(), r.y(), r.width(), r.height())) for panel in layout["panels"]
            for _, _, text, r in panel["bars"]]


def bar_chart_image(table: ComparisonTable, width: int, height: int):
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen

    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#ffffff"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    unit_px = height / 260.0
    font = QFont(FONT)
    font.setPixelSize(max(8, int(10 * unit_px)))
    p.setFont(font)
    fm = QFontMetricsF(font)
    text_pen = QColor("#202020")
    layout = bar_chart_layout(table, width, height, fm, unit_px)
    title_h, legend_h, area = layout["title_h"], layout["legend_h"], layout["area"]

    title_font = QFont(font)
    title_font.setBold(True)
    p.setFont(title_font)
    p.setPen(QColor("#1f3a60"))
    p.drawText(QRectF(0, 0, width, title_h), Qt.AlignmentFlag.AlignCenter,
               f"{table.heading} per host/VM" + (" and in total" if layout["totals"] else ""))
    p.setFont(font)

    for panel in layout["panels"]:
        plot, top, box, left = panel["plot"], panel["top"], panel["box"], panel["left"]

        def y_of(v: float, plot=plot, top=top) -> float:
            return plot.bottom() - plot.height() * v / top
        grid = QPen(QColor("#e4e4e4"))
        grid.setWidthF(max(1.0, 0.8 * unit_px))
        for v in panel["ticks"]:
            p.setPen(grid)
            p.drawLine(QPointF(plot.left(), y_of(v)), QPointF(plot.right(), y_of(v)))
            p.setPen(text_pen)
            p.drawText(QRectF(box.left(), y_of(v) - fm.height() / 2, left - 4 * unit_px, fm.height()),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, _label(v))
        p.setPen(QPen(QColor("#808080"), max(1.0, unit_px)))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        for i, bar, text, label in panel["bars"]:
            p.fillRect(bar, QColor(PALETTE[i % len(PALETTE)]))
            p.setPen(text_pen)
            if panel["upright"]:
                p.save()
                p.translate(label.center())
                p.rotate(-90)
                p.drawText(QRectF(-label.height() / 2, -label.width() / 2, label.height(), label.width()),
                           Qt.AlignmentFlag.AlignCenter, text)
                p.restore()
            else:
                p.drawText(label, Qt.AlignmentFlag.AlignCenter, text)
        group_w = panel["group_w"]
        for g, row in enumerate(panel["rows"]):
            p.setPen(text_pen)
            p.drawText(QRectF(plot.left() + g * group_w, plot.bottom() + 2 * unit_px, group_w, fm.height() * 1.2),
                       Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                       fm.elidedText(row.subject, Qt.TextElideMode.ElideMiddle, group_w))

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
