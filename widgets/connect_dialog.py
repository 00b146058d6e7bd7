"""Connect…: cable a device from a dialog (the keyboard way to do what dragging port to port does).

The first list offers the device's free ports (and, for a switch, the switch itself: its next
free port that fits); the second lists only the ends a cable from the chosen port may go to —
free ports that fit it and the switches that would take it, each saying which port it would
take (`topology.cabling.cable_ends`, the same rules as dragging).  The cable is
`operations.connect`, one undoable step; a refusal is shown in the dialog, which stays open.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel

from topology import operations
from topology.cabling import cable_ends
from topology.ids import DEVICE_COLLECTIONS, find, port_ref
from topology.model import Server, StorageArray, Switch
from topology.operations import Refused


def free_ends(bed: Any, device: Any) -> list[str]:
    """The device's ports no cable takes yet (and a switch's own body)."""
    used = {end for link in bed.links for end in (link.a, link.b)}
    if isinstance(device, Server):
        ports = [p for ad in device.adapters for p in ad.ports]
    elif isinstance(device, StorageArray):
        ports = [p for c in device.controllers for p in c.ports]
    elif isinstance(device, Switch):
        ports = list(device.ports)
    else:
        ports = []
    ends = [e for e in (port_ref(device.id, p.name) for p in ports) if e not in used]
    if isinstance(device, Switch):
        ends.append(device.id)             # the switch itself: its next free port that fits
    return ends


class ConnectDialog(QDialog):
    def __init__(self, document: Any, device_id: str, parent: Any = None):
        super().__init__(parent)
        self.setObjectName("connectDialog")
        self.setWindowTitle(f"Connect {device_id}")
        self.document = document
        bed = document.bed
        self.source = QComboBox(self)
        self.target = QComboBox(self)
        self.target.setMinimumContentsLength(36)
        device = find(bed, device_id, DEVICE_COLLECTIONS)
        for end in free_ends(bed, device) if device is not None else []:
            self.source.addItem(end if end != device_id else f"{end} (its next free port that fits)", end)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Connect")
        buttons.accepted.connect(self.connect_chosen)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("From:", self.source)
        form.addRow("To:", self.target)
        form.addRow(self.error)
        form.addRow(buttons)
        self.source.currentIndexChanged.connect(lambda _i: self._fill_targets())
        if not self.source.count():
            self.error.setText(f"{device_id} has no free port to cable.")
        self._fill_targets()

    def _fill_targets(self) -> None:
        """Only the ends the chosen port may be cabled to."""
        self.target.clear()
        source = self.source.currentData()
        if not source:
            self.ok.setEnabled(False)
            return
        try:
            ends = cable_ends(self.document.bed, source)
        except Refused as exc:
            ends = []
            self.error.setText(str(exc))
        for ref, words in ends:
            self.target.addItem(words, ref)
        self.ok.setEnabled(bool(ends))
        if ends:
            self.error.clear()
        elif not self.error.text():
            self.error.setText(f"No free port in the bed fits {source}: add ports or free one.")

    def connect_chosen(self) -> bool:
        a, b = self.source.currentData(), self.target.currentData()
        if not a or not b:
            self.error.setText("Pick both ends.")
            return False
        try:
            edit = operations.connect(self.document.bed, a, b)
        except Refused as exc:
            self.error.setText(str(exc))
            return False
        self.document.apply(edit)
        self.accept()
        return True
