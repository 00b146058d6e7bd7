"""The colour legend drawn over the canvas."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from app import diagram


class LegendOverlay(QWidget):
    """The colour legend over the canvas's lower right corner; a click folds it away.
    A child of the view (not of its viewport), so scrolling the drawing does not drag it along."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.folded = False
        self.touched = False          # the user folded or unfolded it: leave it so
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._resize()

    def _resize(self) -> None:
        w, h = diagram.legend_size()
        self.setFixedSize(QSize(86, 26) if self.folded else QSize(int(w) + 2, int(h) + 2))
        self.setToolTip("Show the colour legend" if self.folded
                        else "Hide the legend (click it; click again to show it)")

    def sizeHint(self) -> QSize:
        w, h = diagram.legend_size()
        return QSize(int(w) + 2, int(h) + 2)

    def mousePressEvent(self, event) -> None:
        self.folded = not self.folded
        self.touched = True
        self._resize()
        self.parent().place_overlays()
        event.accept()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.folded:
            painter.setPen(QPen(QColor("#b0b7c0"), 1.0))
            painter.setBrush(QColor(255, 255, 255, 235))
            painter.drawRoundedRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1), 6, 6)
            painter.setPen(diagram.TEXT)
            painter.setFont(diagram.font(11, True))
            painter.drawText(QRectF(self.rect()), int(Qt.AlignmentFlag.AlignCenter), "Legend ▴")
        else:
            diagram.paint_legend(painter, QPointF(1, 1))
            painter.setPen(diagram.SUBTLE)    # say that it folds away, where the eye reads the title
            painter.setFont(diagram.font(9))
            painter.drawText(QRectF(0, 4, self.width() - 8, 16),
                             int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), "hide ▾")
        painter.end()
