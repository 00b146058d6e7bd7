"""The QGuiApplication the appendix paints text with."""
from __future__ import annotations

import os

_APP = None


def ensure_gui_app() -> None:
    """A QGuiApplication for painting text; offscreen when there is no display."""
    global _APP
    from PySide6.QtGui import QGuiApplication
    if QGuiApplication.instance() is not None:
        return
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _APP = QGuiApplication([])
