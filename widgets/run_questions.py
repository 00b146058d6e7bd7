"""The questions a run asks a person in the Run tab: trust an unknown SSH host key, a password,
and what to do with a step a dead driver left running.  The session asks them from its worker
thread; they are answered here on the GUI thread."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from app.run import events as E


def answer_question(parent: QWidget, question: E.Question, reply) -> None:
    """Ask the person on the GUI thread; the session's worker waits on `reply.answered`."""
    try:
        if isinstance(question, E.TrustHostKey):
            reply.value = _ask_host_key(parent, question)
        elif isinstance(question, E.PasswordNeeded):
            reply.value = _ask_password(parent, question)
        elif isinstance(question, E.StillRunning):
            reply.value = _ask_still_running(parent, question)
    finally:
        reply.answered.set()

def _ask_host_key(parent: QWidget, question: E.TrustHostKey) -> bool:
    box = QMessageBox(QMessageBox.Icon.Warning, "Unknown host key",
                      f"The SSH host key of {question.host} ({question.address}) is not known yet.\n\n"
                      f"{question.key_type}\n{question.fingerprint}\n\n"
                      "Compare it with the key shown on the host's own console before you trust it.",
                      parent=parent)
    trust = box.addButton("Trust and remember", QMessageBox.ButtonRole.AcceptRole)
    refuse = box.addButton("Refuse", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(refuse)
    box.setEscapeButton(refuse)
    box.exec()
    return box.clickedButton() is trust

def _ask_still_running(parent: QWidget, question: E.StillRunning) -> str | None:
    box = QMessageBox(QMessageBox.Icon.Warning, "A step is still running",
                      f"Step {question.step} is still running on {question.host} (process group "
                      f"{question.pid}), left by a run that died.\n\nAdopt it (wait for it and take its "
                      "result), or stop it and run it again?", parent=parent)
    adopt = box.addButton("Adopt", QMessageBox.ButtonRole.AcceptRole)
    stop = box.addButton("Stop and run again", QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton("Cancel", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    box.exec()
    return {adopt: "adopt", stop: "stop"}.get(box.clickedButton())

def _ask_password(parent: QWidget, question: E.PasswordNeeded) -> E.PasswordAnswer | None:
    """The answer goes back to the session, which keeps it (and stores it when asked to)."""
    dialog = QDialog(parent)
    dialog.setWindowTitle("Password")
    layout = QVBoxLayout(dialog)
    layout.addWidget(QLabel(f"Password for {question.user or 'the user'} on {question.host}"
                            + (f" (shared entry {question.credential!r})" if question.credential else "")))
    field = QLineEdit(dialog)
    field.setEchoMode(QLineEdit.EchoMode.Password)
    layout.addWidget(field)
    remember = QCheckBox("Remember it in the system keyring", dialog)
    remember.setChecked(True)
    layout.addWidget(remember)
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    box.accepted.connect(dialog.accept)
    box.rejected.connect(dialog.reject)
    layout.addWidget(box)
    if dialog.exec() == QDialog.DialogCode.Accepted and field.text():
        return E.PasswordAnswer(field.text(), remember=remember.isChecked())
    return None
