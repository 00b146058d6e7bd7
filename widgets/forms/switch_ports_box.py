"""A switch's ports on its property form: how many, cabled and free, with a link to each (a
click opens the port's own form: speed, MTU, VLAN, flow control, edge, LAG), and a row that
adds many ports at once ("add 24 ports at 10 Gb/s for iSCSI") as one undoable step.

A switch that states only a port count says so, and the same row describes its ports one by
one (the count is offered as the number to add).
"""
from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from topology import switch_ports
from topology.model import PORT_ROLES, Switch
from topology.vocabulary import ROLE_NAMES

LINKS_SHOWN = 96          # a director's 384 ports are not all listed on the form


class SwitchPortsBox(QWidget):
    """The ports row of a switch's form."""

    subject_clicked = Signal(str)

    def __init__(self, document: Any, switch: Callable[[], Switch | None], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("switchPorts")
        self.document = document
        self.switch = switch
        self.summary = QLabel(self)
        self.summary.setObjectName("switchPortsSummary")
        self.summary.setWordWrap(True)
        self.links = QLabel(self)
        self.links.setWordWrap(True)
        self.links.setTextFormat(Qt.TextFormat.RichText)
        self.links.setToolTip("Click a port to edit it: speed, MTU, VLAN, flow control, edge, LAG")
        self.links.linkActivated.connect(self.subject_clicked.emit)

        self.count = QSpinBox(self)
        self.count.setObjectName("addPortsCount")
        self.count.setRange(1, switch_ports.MAX_ADDED)
        self.count.setValue(24)
        self.count.setSuffix(" ports")
        self.speed = QDoubleSpinBox(self)
        self.speed.setObjectName("addPortsSpeed")
        self.speed.setRange(0, 800)
        self.speed.setDecimals(1)
        self.speed.setSpecialValueText("speed not stated")
        self.speed.setSuffix(" Gb/s")
        self.speed.setToolTip("Leave at 'speed not stated' when the report does not give it")
        self.role = QComboBox(self)
        self.role.setObjectName("addPortsRole")
        self.role.addItem("any traffic", "")
        for r in PORT_ROLES:
            if r != "unused":
                self.role.addItem(ROLE_NAMES.get(r, r), r)
        self.add = QPushButton("Add", self)
        self.add.setObjectName("addPortsButton")
        self.add.setToolTip("Add these ports to the switch (one step: Undo takes them all back)")
        self.add.clicked.connect(self.add_ports)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        self.message.hide()

        # two short rows: the properties panel is narrow
        first, second = QHBoxLayout(), QHBoxLayout()
        first.setContentsMargins(0, 0, 0, 0)
        second.setContentsMargins(0, 0, 0, 0)
        first.addWidget(self.count, 1)
        first.addWidget(self.speed, 1)
        second.addWidget(self.role, 1)
        second.addWidget(self.add)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(3)
        column.addWidget(self.summary)
        column.addWidget(self.links)
        column.addLayout(first)
        column.addLayout(second)
        column.addWidget(self.message)

    def load(self) -> None:
        sw = self.switch()
        if sw is None:
            return
        bed = self.document.bed
        self.summary.setText(switch_ports.describe_all(bed, sw))
        cabled = switch_ports.cabled_names(bed, sw)
        shown = sw.ports[:LINKS_SHOWN]
        links = [f'<a href="{escape(sw.id)}:{escape(p.name)}">{"<b>" if p.name in cabled else ""}'
                 f'{escape(p.name)}{"</b>" if p.name in cabled else ""}</a>' for p in shown]
        more = len(sw.ports) - len(shown)
        self.links.setText(", ".join(links) + (f" … and {more} more (in the component tree)" if more > 0 else ""))
        self.links.setVisible(bool(shown))
        undescribed = (sw.port_count or 0) - len(sw.ports)
        self.add.setText("Describe" if not sw.ports and undescribed > 0 else "Add")
        if undescribed > 0 and not self.count.hasFocus():
            self.count.setValue(undescribed)

    def add_ports(self) -> bool:
        sw = self.switch()
        if sw is None:
            return False
        speed = self.speed.value() or None
        role = self.role.currentData()
        try:
            edit = switch_ports.add_ports(self.document.bed, sw, self.count.value(), speed_gbps=speed,
                                          roles=[role] if role else [])
        except ValueError as exc:
            self.message.setText(str(exc))
            self.message.show()
            return False
        self.message.hide()
        self.document.apply(edit)
        return True
