"""Calls back once, at the first paint of a canvas that shows its bed: what a test notes then
(the order of the frame and other events, how many items exist at that frame)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject


class FrameWatch(QObject):
    def __init__(self, canvas: Any, at_first_frame: Callable[[], Any]):
        super().__init__()
        self.canvas, self.at_first_frame, self.fired = canvas, at_first_frame, False
        canvas.viewport().installEventFilter(self)

    def eventFilter(self, _obj: Any, event: Any) -> bool:
        if not self.fired and event.type() == QEvent.Type.Paint and self.canvas.shows_bed:
            self.fired = True
            self.at_first_frame()
        return False
