"""The Disk groups tab: a new RAID group from the disks selected in the slot map (level, name,
owning controller), hot spares, and the array's groups with their level, pool and deletion."""
from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTreeWidgetItem,
    QWidget,
)

from topology import capacity as cap
from topology import storage_ops as ops
from topology.model import RAID_LEVELS
from widgets.storage.page_parts import (
    ERROR_STYLE,
    ID_ROLE,
    button,
    columns,
    gb_text,
    named,
    picked_ids,
    select_rows,
    swatch,
)
from widgets.storage.page_parts import tree as make_tree


class DiskGroupsTab(QWidget):
    def __init__(self, host):
        super().__init__()
        self.host = host            # the StorageEditor: array, slot map, document, messages
        lay, right = columns(self)
        new = QGroupBox("New disk group from the selected disks")
        form = QFormLayout(new)
        self.pick_info = QLabel()
        self.pick_info.setWordWrap(True)
        form.addRow(self.pick_info)
        self.raid_combo = named(QComboBox(), "raidCombo")
        for level in RAID_LEVELS:
            self.raid_combo.addItem(cap.LEVEL_NAMES[level], level)
        self.raid_combo.setCurrentIndex(RAID_LEVELS.index("raid10"))
        self.raid_combo.currentIndexChanged.connect(lambda _: self.update_pick_info())
        form.addRow("RAID level:", self.raid_combo)
        self.group_name = named(QLineEdit(), "groupName")
        form.addRow("Name:", self.group_name)
        self.owner_combo = named(QComboBox(), "ownerCombo")
        form.addRow("Owner:", self.owner_combo)
        form.addRow(button("Create disk group", self.create_group, "createGroup"))
        lay.addWidget(new)
        spares = QGroupBox("Hot spares")
        row = QHBoxLayout(spares)
        row.addWidget(button("Mark selected as hot spare", self.mark_spare, "markSpare"))
        row.addWidget(button("Release", self.unmark_spare, "unmarkSpare"))
        lay.addWidget(spares)
        lay.addStretch(1)

        self.groups = named(make_tree(["Group", "RAID", "Disks", "Members", "Usable GB", "Free GB", "Owner", "Pool"],
                                      multi=True), "groupsTree")
        self.groups.itemSelectionChanged.connect(self._groups_picked)
        right.addWidget(self.groups, 1)
        lay = right
        row = QHBoxLayout()
        self.level_combo = QComboBox()
        for level in RAID_LEVELS:
            self.level_combo.addItem(cap.LEVEL_NAMES[level], level)
        row.addWidget(QLabel("Selected group:"))
        row.addWidget(self.level_combo)
        row.addWidget(button("Set RAID level", self.set_level, "setLevel"))
        row.addWidget(button("Delete group", self.delete_group, "deleteGroup"))
        row.addStretch(1)
        lay.addLayout(row)
        row = QHBoxLayout()
        self.pool_name = named(QLineEdit(), "poolName")
        self.pool_name.setPlaceholderText("pool name")
        self.pool_thin = QComboBox()
        self.pool_thin.addItems(["thick", "thin"])
        row.addWidget(self.pool_name, 1)
        row.addWidget(self.pool_thin)
        row.addWidget(button("Create pool from selected groups", self.create_pool, "createPool"))
        lay.addLayout(row)

    # ================================================================= model -> view
    def clear(self) -> None:
        self.groups.clear()

    def fill_owners(self, array) -> None:
        owned: dict[str, int] = {}
        for g in array.disk_groups:
            owned[g.owner] = owned.get(g.owner, 0) + 1
        owners = [self.owner_combo.itemData(i) for i in range(self.owner_combo.count())]
        names = [""] + [c.name for c in array.controllers]
        if owners != names:
            self.owner_combo.clear()
            self.owner_combo.addItem("(none)", "")
            for c in array.controllers:
                self.owner_combo.addItem(c.name, c.name)
        # the controller that owns fewest groups: new groups keep the load balanced (RAID-008);
        # proposed again only when the groups change, so an owner the user picked stays put
        key = (array.id, len(array.disk_groups))
        if array.controllers and key != getattr(self, "_owner_proposed_for", None):
            self._owner_proposed_for = key
            least = min(array.controllers, key=lambda c: (owned.get(c.name, 0), array.controllers.index(c)))
            self.owner_combo.setCurrentIndex(names.index(least.name))

    def fill(self, array, use) -> None:
        self.groups.clear()
        for g in array.disk_groups:
            u = use[("group", g.name)]
            members = ops.expand(g.members)
            free = "in pool" if g.pool else (
                "0 (remainder vol.)" if u.remainder else gb_text(u.free_gb) if u.known else "?")
            item = QTreeWidgetItem(self.groups, [g.name, cap.LEVEL_NAMES.get(g.raid, g.raid), str(len(members)),
                                                 ", ".join(g.members), gb_text(u.usable_gb) if u.known else "?",
                                                 free, g.owner, g.pool])
            item.setData(0, ID_ROLE, ops.group_id(array.id, g.name))
            item.setIcon(0, swatch(self.host.slot_map.colours.get(g.name, QColor("white"))))
            problem = cap.member_problem(g.raid, len(members))
            if problem:
                item.setForeground(1, QColor("#b3261e"))
                item.setToolTip(1, problem)
        self.pool_name.setPlaceholderText(f"pool name, e.g. Pool {len(array.pools)}")
        self.group_name.setPlaceholderText(ops.next_group_name(array))

    def update_pick_info(self) -> None:
        array = self.host.array
        slots = self.host.slot_map.selected_slots()
        if array is None or not slots:
            self.pick_info.setText("Select free disks in the slot map: click, Ctrl+click, or drag a rectangle.")
            self.pick_info.setStyleSheet("")
            return
        users = ops.slot_users(array)
        cells = [self.host.slot_map.cell(s) for s in slots]
        disks = [c.disk for c in cells if c is not None and c.disk is not None]
        busy = [s for s in slots if s in users]
        empty = len(slots) - len(disks)
        kinds: dict[tuple, int] = {}
        for d in disks:
            key = (d.size_gb, d.rpm, d.interface)
            kinds[key] = kinds.get(key, 0) + 1
        text = f"{len(slots)} slot(s) selected: " + ", ".join(
            f"{n} × {k[0]:g} GB" + (f" {k[1] / 1000:g}K" if k[1] else "") + (f" {k[2].upper()}" if k[2] else "")
            for k, n in kinds.items())
        notes = []
        if empty:
            notes.append(f"{empty} empty")
        if busy:
            notes.append(f"{len(busy)} already in a group or spare")
        owners = {users[s] for s in slots if s in users}
        if len(busy) == len(slots) and len(owners) == 1:
            # the user picked an existing group (or the spares): say what it is, not why it cannot be a new group
            owner = owners.pop()
            what = f"disk group {owner}" if owner else "the hot spares"
            self.pick_info.setText(f"{len(slots)} slot(s) of {what} selected: {text.split(': ', 1)[1]}. "
                                   "Select free disks to build a new group.")
            self.pick_info.setStyleSheet("")
            return
        level = self.raid_combo.currentData()
        problem = cap.member_problem(level, len(slots))
        if problem:
            notes.append(problem)
        elif disks and not empty and not busy:
            usable = cap.usable_gb(level, [d.size_gb for d in disks])
            notes.append(f"{cap.LEVEL_NAMES[level]} gives {usable:,.0f} GB usable")
        if len(kinds) > 1:
            notes.append("mixed disks (RAID-002)")
        self.pick_info.setText(text + (" — " + "; ".join(notes) if notes else ""))
        self.pick_info.setStyleSheet(ERROR_STYLE if (problem or empty or busy) else "")

    # ================================================================= selection
    def _groups_picked(self) -> None:
        if self.host.busy():
            return
        ids = picked_ids(self.groups)
        self.sync_level_combo()
        self.host.rows_picked(ids)

    def select_rows(self, ids) -> None:
        select_rows(self.groups, ids)

    def sync_level_combo(self) -> None:
        """The level box shows the selected group's level, and is off while no group is selected."""
        group = self._selected_group()
        self.level_combo.setEnabled(group is not None)
        if group is not None:
            self.level_combo.setCurrentIndex(max(self.level_combo.findData(group.raid), 0))

    def _selected_group(self):
        array = self.host.array
        items = self.groups.selectedItems()
        if array is None or not items:
            return None
        name = items[0].text(0)
        return next((g for g in array.disk_groups if g.name == name), None)

    # ================================================================= actions
    def create_group(self) -> None:
        host = self.host
        array = host.array
        name = self.group_name.text().strip() or None
        slots = host.slot_map.selected_slots()
        if host.run(lambda: ops.create_disk_group(host.document.bed, array.id, slots,
                                                  self.raid_combo.currentData(), name=name,
                                                  owner=self.owner_combo.currentData() or None)):
            self.group_name.clear()
            made = array.disk_groups[-1].name
            host.publish([ops.group_id(array.id, made)])
            host.show_selection(host.selection.ids)

    def mark_spare(self) -> None:
        host = self.host
        slots = host.slot_map.selected_slots()
        host.run(lambda: ops.mark_spares(host.document.bed, host.array.id, slots))

    def unmark_spare(self) -> None:
        host = self.host
        slots = host.slot_map.selected_slots()
        host.run(lambda: ops.unmark_spares(host.document.bed, host.array.id, slots))

    def set_level(self) -> None:
        host = self.host
        group = self._selected_group()
        if group is None:
            host.say("Select a disk group in the list first.", error=True)
            return
        host.run(lambda: ops.set_raid_level(host.document.bed, host.array.id, group.name,
                                            self.level_combo.currentData()))

    def delete_group(self) -> None:
        host = self.host
        group = self._selected_group()
        if group is None:
            host.say("Select a disk group in the list first.", error=True)
            return
        host.run(lambda: ops.delete_disk_group(host.document.bed, host.array.id, group.name))

    def create_pool(self) -> None:
        host = self.host
        names = [i.text(0) for i in self.groups.selectedItems()]
        name = self.pool_name.text().strip() or f"Pool {len(host.array.pools) if host.array else 0}"
        if host.run(lambda: ops.create_pool(host.document.bed, host.array.id, name, names,
                                            self.pool_thin.currentText())):
            self.pool_name.clear()
