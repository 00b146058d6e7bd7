"""The keyboard in a form field, as in any desktop editor:

* Ctrl+Z / Ctrl+Shift+Z in a field with no pending text edit undo and redo the document
  (a committed field value is a document edit; the field's own text undo has nothing left);
  with a pending edit they stay the field's own text undo.
* Escape puts the stored value back: it drops a pending edit or a refused entry and its message.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QComboBox, QLineEdit, QPlainTextEdit, QWidget


def _shown_text(editor: QWidget) -> str | None:
    if isinstance(editor, QPlainTextEdit):
        return editor.toPlainText()
    if isinstance(editor, QComboBox):
        return editor.currentText()
    text = getattr(editor, "text", None)
    return text() if callable(text) else None


def pending(editor: QWidget) -> bool:
    """The field holds text the model does not (typed and not committed, or refused)."""
    if editor.property("invalid"):
        return True
    shown = getattr(editor, "_shown", None)
    current = _shown_text(editor)
    return shown is not None and current is not None and current != shown


class FieldKeys(QObject):
    def __init__(self, binding: Any, undo_stack: Any, parent: QObject | None = None):
        super().__init__(parent)
        self.binding = binding
        self.stack = undo_stack

    def _step(self, event: QKeyEvent) -> str:
        if event.matches(QKeySequence.StandardKey.Undo):
            return "undo"
        if event.matches(QKeySequence.StandardKey.Redo):
            return "redo"
        return ""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        editor = self.binding.editor
        if event.key() == Qt.Key.Key_Escape:
            if not pending(editor):
                return False
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()              # Escape is ours here, not a dialog's or a dock's
                return True
            self.binding.load()             # the stored value again, its message gone
            return True
        step = self._step(event)
        if not step or pending(editor):
            return False                    # the field's own text undo, or not ours at all
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()                  # deliver it as a key press to this field ...
            return True
        # ... which undoes the document (after this event: the form may be rebuilt by it)
        QTimer.singleShot(0, self.stack.undo if step == "undo" else self.stack.redo)
        return True


def watch_keys(binding: Any, undo_stack: Any) -> None:
    editor = binding.editor
    keys = FieldKeys(binding, undo_stack, editor)
    editor.installEventFilter(keys)
    line = editor if isinstance(editor, QLineEdit) else getattr(editor, "lineEdit", lambda: None)()
    if line is not None and line is not editor:
        line.installEventFilter(keys)
