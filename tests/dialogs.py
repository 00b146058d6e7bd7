"""Answering modal dialogs in GUI tests as the person in front of them would (click a
button, type a file name), without blocking the test on a dialog nobody answers."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox, QWidget


@dataclass
class Seen:
    """What a dialog showed (the dialog itself is gone once answered)."""
    kind: type
    title: str
    text: str
    informative: str


class Answer(list):
    """What the answered dialog showed (empty until one came); cancel() stops waiting for it."""
    live: list[Answer] = []

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = False
        Answer.live.append(self)

    def cancel(self) -> None:
        self.cancelled = True


def answer_modal(action: Callable[[QWidget], None], timeout_s: float = 10.0) -> Answer:
    """Do `action` to the next modal dialog once it shows, as the person in front of it would."""
    answer = Answer()
    deadline = time.monotonic() + timeout_s

    def poll() -> None:
        if answer.cancelled:
            return
        dialog = QApplication.activeModalWidget()
        if dialog is not None and dialog.isVisible():
            if isinstance(dialog, QMessageBox):
                text, informative = dialog.text(), dialog.informativeText()
            else:  # a file dialog: the file it suggests
                text, informative = "\n".join(getattr(dialog, "selectedFiles", list)()), ""
            answer.append(Seen(type(dialog), dialog.windowTitle(), text, informative))
            action(dialog)
        elif time.monotonic() < deadline:
            QTimer.singleShot(20, poll)
    QTimer.singleShot(0, poll)
    return answer


def click(text: str) -> Callable[[QWidget], None]:
    def act(box: QWidget) -> None:
        buttons = {b.text().replace("&", ""): b for b in box.buttons()} if isinstance(box, QMessageBox) else {}
        if text not in buttons:
            box.reject()  # fail the test, not hang it on a dialog nobody answers
            raise AssertionError(f"expected a message box with {text!r}, got {box!r} with {sorted(buttons)}")
        QTest.mouseClick(buttons[text], Qt.MouseButton.LeftButton)
    return act


def type_file_name(path: Path) -> Callable[[QWidget], None]:
    def act(dialog: QWidget) -> None:
        if not isinstance(dialog, QFileDialog):
            dialog.reject()
            raise AssertionError(f"expected a file dialog, got {dialog!r}")
        edit = dialog.findChild(QLineEdit, "fileNameEdit")
        edit.setText(str(path))
        QTest.keyClick(edit, Qt.Key.Key_Return)
    return act


def cancel_dialog(dialog: QWidget) -> None:
    QTest.keyClick(dialog, Qt.Key.Key_Escape)


def shown_title(window: QWidget) -> str:
    """The title as the window system shows it: Qt puts '*' where '[*]' is while modified."""
    return window.windowHandle().title()


def forget_changes(window: QWidget) -> None:
    """At teardown nobody is there to answer "save changes?"."""
    window.document.undo_stack.setClean()
