"""A list of problems in a dialog that never grows past the screen: the list scrolls.

Used for a file with broken references (open it to repair, or not), for saving a bed that
still has them (drop them and save, or not), and for any error longer than a few lines.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QListWidget, QPushButton, QVBoxLayout

from widgets.lifetimes import exec_once

SCREEN_SHARE = 0.8                 # of the available height, at most


class ProblemsDialog(QDialog):
    def __init__(self, parent: Any, title: str, intro: str, items: Sequence[str],
                 choices: Sequence[tuple[str, str]]):
        super().__init__(parent)
        self.setObjectName("problemsDialog")
        self.setWindowTitle(title)
        self.choice = choices[-1][0] if choices else ""
        label = QLabel(intro, self)
        label.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setObjectName("problemsList")
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.addItems(list(items))
        row = QHBoxLayout()
        row.addStretch(1)
        self.buttons: dict[str, QPushButton] = {}
        for key, text in choices:
            button = QPushButton(text, self)
            button.clicked.connect(lambda _=False, k=key: self._choose(k))
            row.addWidget(button)
            self.buttons[key] = button
        if choices:
            self.buttons[choices[0][0]].setDefault(True)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.list, 1)
        layout.addLayout(row)
        screen = (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
        tallest = int(screen.availableGeometry().height() * SCREEN_SHARE) if screen is not None else 600
        self.setMaximumHeight(tallest)
        self.resize(min(760, screen.availableGeometry().width() - 40) if screen else 760,
                    min(tallest, 160 + 22 * max(3, len(items))))

    def _choose(self, key: str) -> None:
        self.choice = key
        self.accept()


def show_problems(parent: Any, title: str, intro: str, items: Sequence[str],
                  choices: Sequence[tuple[str, str]]) -> str:
    """Show the dialog; the key of the choice made (the last choice when it is closed)."""
    dialog = ProblemsDialog(parent, title, intro, items, choices)
    exec_once(dialog)
    return dialog.choice


def split_problems(text: str) -> list[str]:
    """The loader's text, one entry per problem (its 'how to fix' lines kept with it)."""
    items: list[str] = []
    for line in text.splitlines():
        if line.startswith((" ", "\t")) and items:
            items[-1] += "\n" + line.strip()
        elif line.strip():
            items.append(line)
    return items
