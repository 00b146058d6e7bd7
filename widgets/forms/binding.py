"""A form row tied to a model object: the editor of one field with its message line (input the
model cannot take tints the text and says why), and a nested record that can be added or
cleared as a whole.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QGroupBox, QLabel, QLineEdit, QPushButton, QToolButton, QWidget

from topology.unknown import MARKER, NOT_STATED

_EMPTY: dict[str, Any] = {"int": None, "float": None, "bool": None, "list": []}


class FieldBinding:
    """One field of one model object on the form: its editor and its message line."""

    def __init__(self, holder: Callable[[], Any], fp: Any, editor: QWidget, message: QLabel, label: str,
                 unit: str, path: str):
        self.holder, self.fp, self.editor, self.message = holder, fp, editor, message
        self.label, self.unit, self.path = label, unit, path
        self.is_name = False
        self.marker: QAction | None = None   # the 'not stated' state, for fields that take it
        part = self._text_part()
        self._placeholder = part.placeholderText() if part is not None else ""

    @property
    def attr(self) -> str:
        return self.fp.attr

    def load(self) -> None:
        obj = self.holder()
        if obj is None:
            return
        value = getattr(obj, self.attr)
        marked = value is NOT_STATED
        self.editor.blockSignals(True)
        try:   # a value the source does not state: the editor empty, the toggle on
            shown = _EMPTY.get(self.fp.kind, "") if marked else value
            if marked and isinstance(self.editor, QComboBox) and not self.editor.isEditable():
                shown = MARKER               # a choice reads "not stated", not "(not set)"
            self.editor.show_value(shown)
        finally:
            self.editor.blockSignals(False)
        if self.marker is not None:
            self.marker.setChecked(marked)
        part = self._text_part()
        if part is not None and self.marker is not None:
            part.setPlaceholderText(MARKER if marked else self._placeholder)
        self.clear_error()

    def text_part(self) -> QWidget | None:
        return self._text_part()

    def _text_part(self) -> QWidget | None:
        if isinstance(self.editor, QLineEdit):
            return self.editor
        line = getattr(self.editor, "lineEdit", None)
        return line() if callable(line) else None

    def show_error(self, text: str) -> None:
        self.message.setText(text)
        # the form sits in a scroll area, which sizes rows by their one-line hint: claim the
        # wrapped height, or the message is drawn over the next field
        width = max(self.editor.width(), 120)
        self.message.setMinimumHeight(self.message.heightForWidth(width))
        self.message.show()
        self.editor.setProperty("invalid", True)
        part = self._text_part()
        if part is not None:               # tint only the text: the widget keeps its native frame and arrows
            part.setStyleSheet("background: #fdecea;")

    def clear_error(self) -> None:
        if self.editor.property("invalid"):
            self.editor.setProperty("invalid", False)
            part = self._text_part()
            if part is not None:
                part.setStyleSheet("")
        self.message.hide()
        self.message.clear()


class NestedRecord:
    """A nested record (CPU, dynamic memory, policy) shown as a group box."""

    def __init__(self, holder: Callable[[], Any], fp: Any, box: QGroupBox, add: QPushButton,
                 remove: QToolButton | None, body: QWidget):
        self.holder, self.fp, self.box, self.add, self.remove, self.body = holder, fp, box, add, remove, body

    def load(self) -> None:
        parent = self.holder()
        value = getattr(parent, self.fp.attr) if parent is not None else None
        self.body.setVisible(value is not None)
        self.add.setVisible(value is None)
        if self.remove is not None:
            self.remove.setVisible(value is not None)
