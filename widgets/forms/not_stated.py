"""'Not stated' as the state of a field, not a button beside it: an empty field that the source
leaves open reads "not stated" in grey (its placeholder), and the field's own right-click menu
and Ctrl+Shift+U mark it so or take the mark away.  Typing a value states it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLineEdit, QMenu, QPlainTextEdit, QWidget

from widgets.lifetimes import exec_once

SHORTCUT = "Ctrl+Shift+U"
TIP = ("Not stated in the source ({key}): mark it so rather than guess (rules then say they could not "
       "judge it); typing a value states it")


class _MenuWithMarker(QObject):
    """The field's usual right-click menu, with the 'not stated' entry below it."""

    def __init__(self, action: QAction, parent: QObject):
        super().__init__(parent)
        self.action = action

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ContextMenu or not isinstance(obj, QWidget):
            return False
        standard = getattr(obj, "createStandardContextMenu", None)
        menu = standard() if isinstance(obj, (QLineEdit, QPlainTextEdit)) and standard else QMenu(obj)
        if not menu.isEmpty():
            menu.addSeparator()
        menu.addAction(self.action)
        exec_once(menu, event.globalPos())
        return True


def install_marker(editor: QWidget, text_part: QWidget | None, toggled: Callable[[bool], Any]) -> QAction:
    """The checkable 'not stated' action of one field: in its right-click menu and on its shortcut."""
    action = QAction("Not stated in the source", editor, checkable=True)
    action.setShortcut(QKeySequence(SHORTCUT))
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.setToolTip(TIP.format(key=SHORTCUT))
    action.triggered.connect(toggled)
    editor.addAction(action)
    menu_filter = _MenuWithMarker(action, editor)
    for widget in {editor, text_part} - {None}:
        widget.installEventFilter(menu_filter)
    return action
