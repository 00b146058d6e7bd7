"""The reason for a documented exception, asked before anything is recorded.

Accept stays greyed out until there is a reason (it is saved in the bed and printed with the
findings), and a refusal of the edit is shown in the dialog, which stays open: nothing closes
without either recording the exception or the person cancelling.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget


class ExceptionReasonDialog(QDialog):
    def __init__(self, question: str, record: Callable[[str], Any], parent: QWidget | None = None):
        """`record(reason)` makes the edit, raising ValueError (with the reason why) when it cannot."""
        super().__init__(parent)
        self.setWindowTitle("Accept as documented exception")
        self.setObjectName("exceptionReasonDialog")
        self._record = record
        self.edit: Any = None
        layout = QVBoxLayout(self)
        prompt = QLabel(question, self)
        prompt.setWordWrap(True)
        layout.addWidget(prompt)
        self.reason = QPlainTextEdit(self)
        self.reason.setPlaceholderText("e.g. the report tests one controller on purpose (section 5.2)")
        self.reason.setTabChangesFocus(True)
        layout.addWidget(self.reason)
        self.problem = QLabel("A reason is needed: it is saved in the bed and printed with the findings.", self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #8a5300;")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.accept_button = self.buttons.addButton("Accept", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.reason.textChanged.connect(self._reason_changed)
        self._reason_changed()
        self.resize(460, 240)

    def _reason_changed(self) -> None:
        has_reason = bool(self.reason.toPlainText().strip())
        self.accept_button.setEnabled(has_reason)
        self.problem.setStyleSheet("color: #8a5300;")
        self.problem.setText("" if has_reason else
                             "A reason is needed: it is saved in the bed and printed with the findings.")

    def accept(self) -> None:
        reason = self.reason.toPlainText().strip()
        if not reason:
            return          # Enter with no reason: the dialog stays, saying what it needs
        try:
            self.edit = self._record(reason)
        except ValueError as exc:
            self.problem.setStyleSheet("color: #b3261e;")
            self.problem.setText(f"Nothing recorded: {exc}.")
            return
        super().accept()
