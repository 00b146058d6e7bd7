"""The Hosts & mappings tab: map a volume to a host or host group at a LUN, make host groups and
put hosts in them, and the array's mappings and hosts."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QSplitter,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from topology import storage_ops as ops
from widgets.storage.page_parts import ID_ROLE, button, columns, named
from widgets.storage.page_parts import tree as make_tree


class MappingsTab(QWidget):
    def __init__(self, host):
        super().__init__()
        self.host = host            # the StorageEditor: array, document, messages
        lay, right = columns(self)
        new = QGroupBox("Map a volume")
        form = QFormLayout(new)
        self.map_volume_combo = named(QComboBox(), "mapVolumeCombo")
        form.addRow("Volume:", self.map_volume_combo)
        self.map_to_combo = named(QComboBox(), "mapToCombo")
        self.map_to_combo.currentIndexChanged.connect(lambda _: self._suggest_lun())
        form.addRow("To:", self.map_to_combo)
        self.lun_spin = named(QSpinBox(), "lunSpin")
        self.lun_spin.setRange(-1, 4095)
        self.lun_spin.setSpecialValueText("not set")
        form.addRow("LUN:", self.lun_spin)
        form.addRow(button("Map volume", self.map_volume, "mapVolume"))
        lay.addWidget(new)
        hosts = QGroupBox("Host groups")
        hl = QVBoxLayout(hosts)
        row = QHBoxLayout()
        self.host_group_name = named(QLineEdit(), "hostGroupName")
        self.host_group_name.setPlaceholderText("host group name")
        row.addWidget(self.host_group_name, 1)
        row.addWidget(button("Create host group", self.create_host_group, "createHostGroup"))
        hl.addLayout(row)
        row = QHBoxLayout()
        self.member_combo = named(QComboBox(), "memberCombo")
        self.member_group_combo = named(QComboBox(), "memberGroupCombo")
        row.addWidget(self.member_combo, 1)
        row.addWidget(QLabel("into"))
        row.addWidget(self.member_group_combo, 1)
        row.addWidget(button("Add", self.add_to_group, "addToGroup"))
        hl.addLayout(row)
        lay.addWidget(hosts)
        lay.addStretch(1)
        inner = QSplitter(Qt.Orientation.Horizontal)
        box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        self.mappings = named(make_tree(["Volume", "Mapped to", "LUN"]), "mappingsTree")
        bl.addWidget(self.mappings, 1)
        row = QHBoxLayout()
        row.addWidget(button("Unmap", self.unmap, "unmap"))
        row.addStretch(1)
        bl.addLayout(row)
        self.hosts = named(make_tree(["Host / group", "Stands for", "Host group", "Host type"]), "hostsTree")
        inner.addWidget(box)
        inner.addWidget(self.hosts)
        right.addWidget(inner, 1)

    # ================================================================= model -> view
    def clear(self) -> None:
        self.mappings.clear()
        self.hosts.clear()

    def fill(self, array) -> None:
        self.mappings.clear()
        for m in array.mappings:
            item = QTreeWidgetItem(self.mappings, [m.volume, m.to, "" if m.lun is None else str(m.lun)])
            item.setData(0, ID_ROLE, (m.volume, m.to))
        self.hosts.clear()
        for g in array.host_groups:
            members = [h.name for h in array.hosts if h.host_group == g.name]
            item = QTreeWidgetItem(self.hosts, [g.name, "host group: " + (", ".join(members) or "no hosts"), "", ""])
            f = item.font(0)
            f.setBold(True)
            item.setFont(0, f)
        for h in array.hosts:
            QTreeWidgetItem(self.hosts, [h.name, h.server, h.host_group, h.host_type])
        bed = self.host.document.bed
        keep_vol = self.map_volume_combo.currentData()
        self.map_volume_combo.clear()
        for v in array.volumes:
            self.map_volume_combo.addItem(v.name, v.name)
        i = self.map_volume_combo.findData(keep_vol)
        if i >= 0:
            self.map_volume_combo.setCurrentIndex(i)
        keep_to = self.map_to_combo.currentData()
        self.map_to_combo.blockSignals(True)
        self.map_to_combo.clear()
        for g in array.host_groups:
            self.map_to_combo.addItem(f"{g.name} (host group)", g.name)
        for h in array.hosts:
            self.map_to_combo.addItem(f"{h.name} (host)", h.name)
        stands = {h.server for h in array.hosts} | {h.name for h in array.hosts}
        for s in bed.servers:
            if s.id not in stands:
                self.map_to_combo.addItem(f"{s.id} (server: new array host)", s.id)
        for v in bed.vms:
            if v.id not in stands:
                self.map_to_combo.addItem(f"{v.id} (VM: new array host)", v.id)
        i = self.map_to_combo.findData(keep_to)
        self.map_to_combo.setCurrentIndex(max(i, 0))
        self.map_to_combo.blockSignals(False)
        self._suggest_lun()
        keep_member = self.member_combo.currentData()
        self.member_combo.clear()
        for h in array.hosts:
            self.member_combo.addItem(h.name, h.name)
        for s in bed.servers:
            if s.id not in stands:
                self.member_combo.addItem(f"{s.id} (new array host)", s.id)
        i = self.member_combo.findData(keep_member)
        if i >= 0:
            self.member_combo.setCurrentIndex(i)
        self.member_group_combo.clear()
        for g in array.host_groups:
            self.member_group_combo.addItem(g.name, g.name)

    def _suggest_lun(self) -> None:
        to = self.map_to_combo.currentData()
        if self.host.array is None or not to:
            self.lun_spin.setValue(-1)
            return
        self.lun_spin.setValue(ops.next_free_lun(self.host.document.bed, self.host.array.id, to))

    def choose_volume(self, name: str) -> None:
        i = self.map_volume_combo.findData(name)
        if i >= 0:
            self.map_volume_combo.setCurrentIndex(i)

    # ================================================================= actions
    def map_volume(self) -> None:
        host = self.host
        volume = self.map_volume_combo.currentData()
        to = self.map_to_combo.currentData()
        if not volume:
            host.say("Create a volume first.", error=True)
            return
        lun = self.lun_spin.value()
        host.run(lambda: ops.map_volume(host.document.bed, host.array.id, volume, to,
                                        lun=None if lun < 0 else lun))

    def unmap(self) -> None:
        host = self.host
        items = self.mappings.selectedItems()
        if not items:
            host.say("Select a mapping in the list first.", error=True)
            return
        volume, to = items[0].data(0, ID_ROLE)
        host.run(lambda: ops.unmap(host.document.bed, host.array.id, volume, to))

    def create_host_group(self) -> None:
        host = self.host
        name = self.host_group_name.text()
        if host.run(lambda: ops.create_host_group(host.document.bed, host.array.id, name)):
            self.host_group_name.clear()

    def add_to_group(self) -> None:
        host = self.host
        member = self.member_combo.currentData()
        group = self.member_group_combo.currentData()
        if not member or not group:
            host.say("Choose a host and a host group (create the group first).", error=True)
            return
        host.run(lambda: ops.add_host_to_group(host.document.bed, host.array.id, member, group))
