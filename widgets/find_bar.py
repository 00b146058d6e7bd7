"""Find (Ctrl+F): ids, names, addresses and notes anywhere in the bed, with jump-to.

Enter (or the arrows) goes to the next (previous) match: it is selected in every view, and
the diagram zooms to it (close enough to read its name, or its port's) and centres it.  A port
is found as the application prints it, `DEVICE:PORT`.  The search itself is topology/search.py; this is its bar.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QLineEdit, QToolBar, QToolButton

from topology.search import Match, find_in_bed


class FindBar(QToolBar):
    def __init__(self, window: Any):
        super().__init__("Find", window)
        self.setObjectName("findBar")
        self.window_ = window
        self.setMovable(False)
        self.matches: list[Match] = []
        self.current = -1
        self.field = QLineEdit(self)
        self.field.setObjectName("findField")
        self.field.setPlaceholderText("Find: id, name, address or note")
        self.field.setClearButtonEnabled(True)
        self.field.setMinimumWidth(260)
        self.field.returnPressed.connect(self._enter)
        self._timer = QTimer(self, singleShot=True, interval=150, timeout=self.search)
        self.field.textChanged.connect(lambda _t: self._timer.start())
        self.addWidget(self.field)
        for text, tip, step in (("▲", "Previous match (Shift+Enter)", -1), ("▼", "Next match (Enter)", 1)):
            button = QToolButton(self, text=text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _=False, s=step: self.go(s))
            self.addWidget(button)
        self.result = QLabel(self)
        self.result.setObjectName("findResult")
        self.result.setContentsMargins(8, 0, 8, 0)
        self.addWidget(self.result)
        close = QToolButton(self, text="✕")
        close.setToolTip("Close (Esc)")
        close.clicked.connect(self.close_bar)
        self.addWidget(close)
        window.document.reset.connect(self._forget)
        self.hide()

    def open_bar(self) -> None:
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.window_.canvas.setFocus()

    def _forget(self) -> None:
        self.matches, self.current = [], -1
        self.result.clear()
        if self.field.text():
            self._timer.start()

    def search(self) -> list[Match]:
        self._timer.stop()
        self.matches = find_in_bed(self.window_.document.bed, self.field.text())
        self.current = -1
        text = self.field.text().strip()
        self.result.setText("" if not text else f"{len(self.matches)} found — Enter goes to the first"
                            if self.matches else "Nothing matches")
        return self.matches

    def _enter(self) -> None:
        from PySide6.QtWidgets import QApplication
        back = QApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier
        self.go(-1 if back else 1)

    def go(self, step: int) -> Match | None:
        """Select and centre the next (step 1) or previous (-1) match."""
        if self._timer.isActive() or (self.field.text().strip() and not self.matches):
            self.search()
        if not self.matches:
            return None
        self.current = (self.current + step) % len(self.matches)
        match = self.matches[self.current]
        window = self.window_
        window.tabs.setCurrentWidget(window.canvas)
        window.selection.focus([match.subject])
        window.canvas.zoom_to([match.subject])      # near enough to read it, not only centred
        self.result.setText(f"{self.current + 1} of {len(self.matches)}: {match.describe()}")
        self.result.setToolTip(match.describe())
        return match

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
            event.accept()
            return
        super().keyPressEvent(event)
