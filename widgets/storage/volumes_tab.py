"""The Volumes & pools tab: a new volume in a disk group or pool (size or the remainder, purpose),
the array's volumes with what they are mapped to, and its pools with their free space."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTreeWidgetItem,
    QWidget,
)

from topology import storage_ops as ops
from topology.model import VOLUME_PURPOSES
from widgets.storage.page_parts import ID_ROLE, button, columns, gb_text, named, picked_ids, select_rows
from widgets.storage.page_parts import tree as make_tree


class VolumesTab(QWidget):
    volume_created = Signal(str)     # its name: the Map a volume form offers it next

    def __init__(self, host):
        super().__init__()
        self.host = host            # the StorageEditor: array, document, messages
        lay, right = columns(self)
        new = QGroupBox("New volume")
        form = QFormLayout(new)
        self.container_combo = named(QComboBox(), "containerCombo")
        form.addRow("In:", self.container_combo)
        self.volume_name = named(QLineEdit(), "volumeName")
        form.addRow("Name:", self.volume_name)
        size_row = QHBoxLayout()
        self.volume_size = named(QDoubleSpinBox(), "volumeSize")
        self.volume_size.setRange(0.0, 10_000_000.0)
        self.volume_size.setDecimals(0)
        self.volume_size.setSuffix(" GB")
        self.volume_size.setValue(100)
        self.volume_remainder = named(QCheckBox("take the remainder"), "volumeRemainder")
        self.volume_remainder.toggled.connect(lambda on: self.volume_size.setEnabled(not on))
        size_row.addWidget(self.volume_size, 1)
        size_row.addWidget(self.volume_remainder)
        form.addRow("Size:", size_row)
        self.purpose_combo = named(QComboBox(), "purposeCombo")
        self.purpose_combo.addItem("(none)", "")
        for p in VOLUME_PURPOSES:
            self.purpose_combo.addItem(p.replace("_", " "), p)
        form.addRow("Purpose:", self.purpose_combo)
        form.addRow(button("Create volume", self.create_volume, "createVolume"))
        lay.addWidget(new)
        lay.addStretch(1)
        lay = right
        self.volumes = named(make_tree(["Volume", "In", "Size GB", "Purpose", "Mapped to"]), "volumesTree")
        self.volumes.itemSelectionChanged.connect(lambda: self._rows_picked(self.volumes))
        lay.addWidget(self.volumes, 2)
        row = QHBoxLayout()
        row.addWidget(button("Delete volume", self.delete_volume, "deleteVolume"))
        row.addStretch(1)
        lay.addLayout(row)
        self.pools = named(make_tree(["Pool", "Provisioning", "Groups", "Usable GB", "Allocated GB", "Free GB"]),
                           "poolsTree")
        self.pools.itemSelectionChanged.connect(lambda: self._rows_picked(self.pools))
        lay.addWidget(QLabel("Pools"))
        lay.addWidget(self.pools, 1)

    # ================================================================= model -> view
    def clear(self) -> None:
        self.volumes.clear()
        self.pools.clear()

    def fill(self, array, use) -> None:
        self.volumes.clear()
        mapped: dict[str, list[str]] = {}
        for m in array.mappings:
            mapped.setdefault(m.volume, []).append(m.to + (f" (LUN {m.lun})" if m.lun is not None else ""))
        for v in array.volumes:
            size = ops.volume_size(self.host.document.bed, array.id, v.name, use)
            where = f"group {v.group}" if v.group else f"pool {v.pool}"
            size_text = gb_text(size) + (" (remainder)" if v.remainder and v.size_gb is None else "")
            item = QTreeWidgetItem(self.volumes, [v.name, where, size_text, ", ".join(v.purpose),
                                                  ", ".join(mapped.get(v.name, []))])
            item.setData(0, ID_ROLE, ops.volume_id(array.id, v.name))
        self.pools.clear()
        for p in array.pools:
            u = use[("pool", p.name)]
            groups = [g.name for g in array.disk_groups if g.pool == p.name]
            free = u.usable_gb - u.allocated_gb
            free_text = "0 (remainder vol.)" if u.remainder else (gb_text(free) if u.known else "?")
            if u.known and free < 0:
                free_text = f"overcommitted {u.allocated_gb / u.usable_gb:.2f}:1"
            item = QTreeWidgetItem(self.pools, [p.name, p.provisioning, str(len(groups)),
                                                gb_text(u.usable_gb) if u.known else "?", gb_text(u.allocated_gb),
                                                free_text])
            item.setToolTip(2, ", ".join(groups))
            item.setData(0, ID_ROLE, ops.pool_id(array.id, p.name))
        previous = self.container_combo.currentData()
        self.container_combo.clear()
        for g in array.disk_groups:
            if g.pool:
                continue
            u = use[("group", g.name)]
            free = "full (remainder vol.)" if u.remainder else (
                f"{gb_text(u.free_gb)} GB free" if u.known else "size unknown")
            self.container_combo.addItem(f"group {g.name} — {free}", ("group", g.name))
        for p in array.pools:
            u = use[("pool", p.name)]
            free = f"{gb_text(u.usable_gb - u.allocated_gb)} GB free" if u.known else "size unknown"
            self.container_combo.addItem(f"pool {p.name} ({p.provisioning}) — {free}", ("pool", p.name))
        keys = [self.container_combo.itemData(i) for i in range(self.container_combo.count())]
        if previous in keys:
            self.container_combo.setCurrentIndex(keys.index(previous))

    # ================================================================= selection
    def _rows_picked(self, tree) -> None:
        if self.host.busy():
            return
        self.host.rows_picked(picked_ids(tree))

    def select_rows(self, ids) -> None:
        select_rows(self.volumes, ids)
        select_rows(self.pools, ids)

    # ================================================================= actions
    def create_volume(self) -> None:
        host = self.host
        key = self.container_combo.currentData()
        if not key:
            host.say("Create a disk group or pool first: a volume lives in one.", error=True)
            return
        kind, container = key
        remainder = self.volume_remainder.isChecked()
        size = None if remainder else self.volume_size.value()
        purpose = self.purpose_combo.currentData() or ()
        name = self.volume_name.text()
        if host.run(lambda: ops.create_volume(host.document.bed, host.array.id, name,
                                              group=container if kind == "group" else "",
                                              pool=container if kind == "pool" else "",
                                              size_gb=size, remainder=remainder, purpose=purpose)):
            self.volume_name.clear()
            self.volume_created.emit(name.strip())

    def delete_volume(self) -> None:
        host = self.host
        items = self.volumes.selectedItems()
        if not items:
            host.say("Select a volume in the list first.", error=True)
            return
        name = items[0].text(0)
        host.run(lambda: ops.delete_volume(host.document.bed, host.array.id, name))
