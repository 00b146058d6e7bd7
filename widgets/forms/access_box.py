"""How a run reaches the component on the form: its `access:` entry as a group of fields
(transport, address, port, user, key file, keyring entry ...), added and removed as one undoable
edit each, with "Set password…" (the system keyring, never the file) and "Test connection"
(pre-flight of this host alone, through the run's own code path, on a worker:
`app.run.host_check`)."""
from __future__ import annotations

import pickle
from typing import Any

from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.background import BackgroundJob, Outcome
from topology.edits import InsertItem, RemoveItem
from topology.model import HostAccess
from widgets.lifetimes import exec_once

ACCESS_HIDDEN = {"host"}          # the component the form shows


def access_of(bed: Any, host: str) -> HostAccess | None:
    return next((a for a in bed.access if a.host == host), None)


def _test(snapshot: bytes, host: str, configuration: str | None, trusted: tuple[str, ...]) -> Any:
    from app.run.host_check import test_connection
    return test_connection(pickle.loads(snapshot), host, configuration=configuration, trusted=trusted)


class AccessBox(QGroupBox):
    """Built by the property editor, which lays out the entry's fields in `fields` (one binding each)."""

    def __init__(self, document: Any, host: Any, parent: QWidget | None = None):
        super().__init__("Access — how a run reaches it", parent)
        self.setObjectName("accessBox")
        self.document, self.host = document, host          # host(): the component id now
        self._trusted: list[str] = []
        self.add = QPushButton("Add access entry", self)
        self.add.setObjectName("addAccess")
        self.add.setToolTip("Say how the Run tab reaches this machine (SSH, WinRM, or this workstation)")
        self.add.clicked.connect(self.add_entry)
        self.body = QWidget(self)
        self.fields = QFormLayout(self.body)
        self.fields.setContentsMargins(0, 0, 0, 0)
        self.test_button = QPushButton("Test connection", self)
        self.test_button.setObjectName("testConnection")
        self.test_button.setToolTip("Pre-flight of this host alone: connect, log in, look for the programs its "
                                    "steps call (changes nothing)")
        self.test_button.clicked.connect(self.test)
        self.password_button = QPushButton("Set password…", self)
        self.password_button.setToolTip("Keep the password in the system keyring (never in the bed's file)")
        self.password_button.clicked.connect(self.set_password)
        self.trust_button = QPushButton(self)
        self.trust_button.hide()
        self.trust_button.clicked.connect(self._trust_and_test)
        self.remove = QPushButton("Remove access entry", self)
        self.remove.clicked.connect(self.remove_entry)
        self.result = QLabel(self)
        self.result.setObjectName("connectionResult")
        self.result.setWordWrap(True)
        buttons = QHBoxLayout()                 # two short rows: the side panel is narrow at 1366x768
        for b in (self.test_button, self.password_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        second = QHBoxLayout()
        second.addStretch(1)
        second.addWidget(self.remove)
        column = QVBoxLayout(self)
        column.addWidget(self.add)
        column.addWidget(self.body)
        column.addLayout(buttons)
        column.addLayout(second)
        column.addWidget(self.trust_button)
        column.addWidget(self.result)
        self._job = BackgroundJob(self, name="test-connection")
        self._job.result.connect(self._tested)
        self._job.busy_changed.connect(lambda busy: self.test_button.setEnabled(not busy))

    def entry(self) -> HostAccess | None:
        return access_of(self.document.bed, self.host())

    def load(self) -> None:
        there = self.entry() is not None
        self.add.setVisible(not there)
        for w in (self.body, self.test_button, self.password_button, self.remove):
            w.setVisible(there)
        if not there:
            self.result.clear()
            self.trust_button.hide()

    def add_entry(self) -> None:
        host = self.host()
        self.document.apply(InsertItem(self.document.bed.access, HostAccess(host=host), owner=host,
                                       text=f"Add an access entry for {host}"))

    def remove_entry(self) -> None:
        entry, host = self.entry(), self.host()
        if entry is not None:
            self.document.apply(RemoveItem(self.document.bed.access, entry, owner=host,
                                           text=f"Remove the access entry of {host}"))

    def set_password(self) -> bool:
        entry = self.entry()
        if entry is None:
            return False
        from app.run.host_check import password_entry, store_password
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Password")
        dialog.setLabelText(f"Password of {entry.user or 'the user'} on {entry.host} (kept in the system keyring "
                            f"under {password_entry(entry)!r}, never in the bed's file):")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
        if not exec_once(dialog):
            return False
        ok = store_password(entry, dialog.textValue())
        self.result.setText("Password kept in the system keyring." if ok else
                            "The system keyring refused the password: nothing was kept.")
        return ok

    def test(self) -> bool:
        from app.configuration_choice import ConfigurationChoice
        host = self.host()
        snapshot = pickle.dumps(self.document.bed, pickle.HIGHEST_PROTOCOL)
        configuration = ConfigurationChoice.of(self.document).name
        trusted = tuple(self._trusted)
        self.result.setText(f"Testing the connection to {host}…")
        self.trust_button.hide()
        return self._job.start(self.document.revision, lambda: _test(snapshot, host, configuration, trusted))

    def _trust_and_test(self) -> None:
        self._trusted.append(self.trust_button.property("fingerprint"))
        self.test()

    def _tested(self, outcome: Outcome) -> None:
        if outcome.error:
            self.result.setText(f"<span style='color:#c62828'>The test could not run: {outcome.error}</span>")
            return
        tested = outcome.value
        check = tested.check
        colour = "#2e7d32" if check.ok else "#c62828"
        self.result.setText(f"<span style='color:{colour}'>{'OK' if check.ok else 'Failed'}: {check.message}</span>")
        if tested.unknown_key:
            self.trust_button.setText(f"The host key {tested.key_type} {tested.unknown_key} is not known yet: trust "
                                      "it and test again (compare it with the host's own first)")
            self.trust_button.setProperty("fingerprint", tested.unknown_key)
            self.trust_button.show()

    @property
    def last_result(self) -> str:
        return self.result.text()

    def shutdown(self) -> None:
        self._job.shutdown()
