"""A notice over the top of the drawing: where the user's eyes are when a cable or a placement
is refused, when the canvas chose something for them (the switch port a cable took), and while
a palette kind is armed ("Adding servers: click on the diagram").

A refusal stays a few seconds (or until the next one); the armed notice stays until the
kind is disarmed.  A click on the notice dismisses a refusal.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

REFUSAL_MS = 7000
_STYLES = {
    "refusal": "background: #fff4e5; color: #6d3a00; border: 1px solid #f0b46a; border-radius: 5px; padding: 5px 10px;",
    "armed": "background: #e8f0fe; color: #123a73; border: 1px solid #8ab0f0; border-radius: 5px; padding: 5px 10px;",
    "info": "background: #e9f6ec; color: #1b4d2b; border: 1px solid #86c79a; border-radius: 5px; padding: 5px 10px;",
}


class CanvasNotice(QLabel):
    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("canvasNotice")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.armed_text = ""
        self.kind = ""
        self._timer = QTimer(self, singleShot=True, interval=REFUSAL_MS, timeout=self._expire)
        self.hide()

    def show_text(self, text: str, kind: str = "refusal") -> None:
        """A refusal (or "info": what an action chose, such as the port a cable took): shown now,
        gone after REFUSAL_MS (the armed notice, if any, comes back)."""
        if not text:
            return
        self._show(kind, text)
        self._timer.start()

    def show_armed(self, text: str) -> None:
        self.armed_text = text
        if not self._timer.isActive():
            self._show("armed", text)

    def hide_armed(self) -> None:
        self.armed_text = ""
        if self.kind == "armed":
            self.hide()

    def hide(self) -> None:
        self._timer.stop()
        self.kind = ""
        super().hide()

    def _expire(self) -> None:
        if self.armed_text:
            self._show("armed", self.armed_text)
        else:
            self.hide()

    def _show(self, kind: str, text: str) -> None:
        self.kind = kind
        self.setStyleSheet(_STYLES[kind])
        self.setText(text)
        self.setToolTip(text)
        self.show()
        self.raise_()
        view = self.parent()
        place = getattr(view, "place_overlays", None)
        if place is not None:
            place()

    def place(self, viewport: QRect) -> None:
        if self.isHidden():
            return
        width = min(max(viewport.width() - 40, 120), 640)
        self.setFixedWidth(width)
        self.setFixedHeight(self.heightForWidth(width) if self.hasHeightForWidth() else self.sizeHint().height())
        self.move(viewport.left() + (viewport.width() - width) // 2, viewport.top() + 10)

    def mousePressEvent(self, event) -> None:
        if self.kind in ("refusal", "info"):
            self._expire()
        event.accept()
