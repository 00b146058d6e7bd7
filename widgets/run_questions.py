"""The questions a run asks a person in the Run tab: before a new run, save the bed and run it
despite its errors; during it, trust an unknown SSH host key, a password, and what to do with
a step a dead driver left running.  The session asks the latter from its worker thread; they
are answered here on the GUI thread."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from widgets.lifetimes import exec_once

ERRORS_LISTED = 6


def confirm_run_start(parent: QWidget, document: Any, save: Callable[[], bool] | None) -> bool:
    """Before a new run: the bed on disk must be the bed on screen (the run records the file and
    its steps are made from it), and errors are run only when the person says so."""
    if not confirm_saved(parent, document, save):
        return False
    errors = _open_errors(document)
    return not errors or _ask_run_with_errors(parent, errors)


def confirm_saved(parent: QWidget, document: Any, save: Callable[[], bool] | None) -> bool:
    """The bed on disk is the bed on screen (saved now if the person agrees); False otherwise."""
    path = document.path
    if document.dirty or path is None or not path.exists():
        return _ask_save_first(parent, document, save)
    return True


def _ask_save_first(parent: QWidget, document: Any, save: Callable[[], bool] | None) -> bool:
    never_saved = document.path is None or not document.path.exists()
    box = QMessageBox(QMessageBox.Icon.Question, "Save before the run",
                      "The bed has not been saved yet." if never_saved else
                      f"“{document.title}” has unsaved changes.", parent=parent)
    box.setObjectName("saveBeforeRun")
    box.setInformativeText("A run records the project file on disk and makes its steps from it. Save first, so "
                           "that what runs on the hosts is what you see here.")
    if not _go_ahead(box, "Save and Continue", default_is_go=True):
        return False
    if save is None:
        if never_saved:
            return False
        document.save()
        return True
    return bool(save()) and not document.dirty


def _open_errors(document: Any) -> list:
    """The reference configuration's errors, not accepted as exceptions."""
    return [f for f in document.validation.current_findings()
            if f.severity == "error" and not f.accepted and f.scenario is None]


def _ask_run_with_errors(parent: QWidget, errors: list) -> bool:
    n = len(errors)
    box = QMessageBox(QMessageBox.Icon.Warning, "Run a bed with errors",
                      f"The bed has {n} error{'s' if n != 1 else ''}. Run it anyway?", parent=parent)
    box.setObjectName("runWithErrors")
    listed = [f"{f.code}: {f.message}" for f in errors[:ERRORS_LISTED]]
    if n > ERRORS_LISTED:
        listed.append(f"… and {n - ERRORS_LISTED} more (the Validation panel lists them all)")
    box.setInformativeText("\n".join(listed) + "\n\nSteps made from a bed with errors can set the hosts up "
                           "wrongly. Fix them, or accept the expected ones as documented exceptions, first.")
    return _go_ahead(box, "Run Anyway", default_is_go=False)


def _go_ahead(box: QMessageBox, go: str, *, default_is_go: bool) -> bool:
    """The box with `go` and Cancel (Escape cancels); True when the person clicked `go`."""
    go_button = box.addButton(go, QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(go_button if default_is_go else cancel)
    box.setEscapeButton(cancel)
    exec_once(box)
    return box.clickedButton() is go_button


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
    exec_once(box)
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
    exec_once(box)
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
    if exec_once(dialog) == QDialog.DialogCode.Accepted and field.text():
        return E.PasswordAnswer(field.text(), remember=remember.isChecked())
    return None
