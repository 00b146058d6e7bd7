"""Connect…: cable a device from a dialog (the keyboard way to do what dragging port to port does).

The lists offer the device's free ports and, on the other side, every other device's free
ports and every switch (a switch takes a new port).  The cable is `operations.connect`, one
undoable step; a refusal is shown in the dialog, which stays open to pick again.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel

from app.diagram.geometry import device_ports
from topology import operations
from topology.ids import DEVICE_COLLECTIONS, components, port_ref
from topology.model import Switch
from topology.operations import Refused


def free_ends(bed: Any, device: Any) -> list[str]:
    used = {end for link in bed.links for end in (link.a, link.b)}
    ends = [port_ref(device.id, p.name) for p, _ in device_ports(device)]
    ends = [e for e in ends if e not in used]
    if isinstance(device, Switch):
        ends.append(device.id)             # the switch itself: a new port on it
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
        for word, comp in components(bed, DEVICE_COLLECTIONS):
            for end in free_ends(bed, comp) if hasattr(comp, "id") and word != "VM" else []:
                (self.source if comp.id == device_id else self.target).addItem(
                    end if end != comp.id else f"{end} (a new port on the switch)", end)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Connect")
        buttons.accepted.connect(self.connect_chosen)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("From:", self.source)
        form.addRow("To:", self.target)
        form.addRow(self.error)
        form.addRow(buttons)
        if not self.source.count():
            self.error.setText(f"{device_id} has no free port to cable.")

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
