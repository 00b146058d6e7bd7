"""The bed's diagram as an image for the appendix: drawn by app/diagram/scene.render_bed and
cropped to the drawing; a QImage for the PDF, PNG bytes for HTML and Markdown."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from app.diagram.scene import render_bed
from app.report.qt_app import ensure_gui_app

PNG_DPI = 150
PNG_WIDTH_IN = 7.0


def render_diagram(bed: Any, painter: QPainter, rect: QRectF, findings: list | None = None) -> QRectF:
    """Paint the bed into `rect`.  Returns the part of `rect` the drawing covers."""
    drawn = render_bed(bed, painter, rect, findings=findings)
    return _fitted(rect, drawn.width(), drawn.height()) if drawn is not None and drawn.width() > 0 else rect


def _fitted(rect: QRectF, w: float, h: float) -> QRectF:
    """The rectangle a w x h drawing takes when scaled into `rect` with its aspect kept, centred."""
    scale = min(rect.width() / w, rect.height() / h)
    fw, fh = w * scale, h * scale
    return QRectF(rect.left() + (rect.width() - fw) / 2, rect.top() + (rect.height() - fh) / 2, fw, fh)


def diagram_image(bed: Any, width_px: int, height_px: int, findings: list | None = None) -> QImage:
    """The diagram drawn once into at most width x height pixels, cropped to the drawing
    (no empty bands whatever its shape)."""
    image = QImage(max(1, width_px), max(1, height_px), QImage.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    try:
        used = render_diagram(bed, painter, QRectF(0, 0, width_px, height_px), findings)
    finally:
        painter.end()
    crop = used.toAlignedRect().intersected(image.rect())
    return image.copy(crop) if crop.isValid() and not crop.isEmpty() else image


def diagram_png(bed: Any, *, findings: list | None = None) -> bytes:
    ensure_gui_app()
    w = int(PNG_WIDTH_IN * PNG_DPI)
    image = diagram_image(bed, w, int(w * 1.3), findings)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    image.save(buf, "PNG")
    buf.close()
    return bytes(data.data())
