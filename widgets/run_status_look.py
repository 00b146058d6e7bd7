"""How a run step's status looks in the Run tab: a dot of its colour, its word in the tooltip."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from app.run import events as E
from app.run.standing import STATUS_WORDS

# status -> (colour, label); the icon is a dot of that colour, the label is in the tooltip
_COLOURS = {
    E.PENDING: "#b0b0b0", E.RUNNING: "#1e6fd9", E.OK: "#2e9e44", E.DONE: "#2e9e44", E.SKIPPED: "#8a63c9",
    E.FAILED: "#d0312d", E.TIMEOUT: "#e07b00", E.CANCELLED: "#e07b00", E.LOST: "#e07b00", E.INTERRUPTED: "#e07b00",
    E.UNREACHABLE: "#d0312d", E.AUTH_FAILED: "#d0312d", E.HOST_KEY: "#d0312d",
}
STATUS_LOOK = {status: (colour, STATUS_WORDS[status]) for status, colour in _COLOURS.items()}
_ICONS: dict[str, QIcon] = {}


def status_icon(status: str) -> QIcon:
    if status not in _ICONS:
        pm = QPixmap(14, 14)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setBrush(QColor(STATUS_LOOK.get(status, ("#b0b0b0", ""))[0]))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(1, 1, 12, 12)
        p.end()
        _ICONS[status] = QIcon(pm)
    return _ICONS[status]
