"""The storage editor: one array at a time — its controllers and ports, the drive-slot map,
and the disk groups, pools, volumes, hosts and mappings built on it.

The user selects disks in the slot map and creates a disk group (RAID level, name, owning
controller), marks hot spares, creates volumes in a group or pool and maps them to hosts or
host groups.  Each action is one `document.apply(edit)` built by `topology.storage_ops`;
a request that cannot work is refused with the reason under the map.  The editor redraws
from the model on `document.changed` / `reset`, follows the shared selection (selecting
``MD3000i:group:SQL`` anywhere highlights its slots) and publishes what the user picks here
(slots, groups, pools, volumes).
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMainWindow,
                               QPushButton, QScrollArea, QSpinBox, QSplitter, QTabWidget, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from topology import capacity as cap
from topology import storage_ops as ops
from topology.model import RAID_LEVELS, VOLUME_PURPOSES
from widgets.slot_map import SlotMap

ID_ROLE = Qt.ItemDataRole.UserRole
ERROR_STYLE = "color: #b3261e;"
OK_STYLE = "color: #1b5e20;"


def _gb(value: float | None) -> str:
    return "?" if value is None else f"{value:,.0f}"


def _tree(headers: list[str], multi: bool = False) -> QTreeWidget:
    t = QTreeWidget()
    t.setHeaderLabels(headers)
    t.setRootIsDecorated(False)
    t.setUniformRowHeights(True)
    t.setAlternatingRowColors(True)
    t.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection if multi
                       else QAbstractItemView.SelectionMode.SingleSelection)
    t.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.header().setStretchLastSection(True)
    return t


def _swatch(colour: QColor) -> QIcon:
    pm = QPixmap(14, 14)
    pm.fill(colour)
    return QIcon(pm)


class StorageEditor(QWidget):
    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self._stale = True
        self._publishing = False
        self._filling = False

        self.array_combo = QComboBox()
        self.array_combo.setObjectName("arrayCombo")
        self.array_combo.setMinimumContentsLength(16)
        self.array_combo.currentIndexChanged.connect(self._array_chosen)
        self.summary = QLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(QLabel("Array:"))
        top.addWidget(self.array_combo)
        top.addWidget(self.summary, 1)

        self.controllers = _tree(["Controller / port", "Kind", "Speed", "Address", "Roles", "MTU", "Label"])
        self.controllers.setObjectName("controllersTree")
        self.controllers.setRootIsDecorated(True)
        self.controllers.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.slot_map = SlotMap(document)
        self.slot_map.setObjectName("slotMap")
        self.slot_map.slots_selected.connect(self._slots_picked)
        self.slot_map.height_changed.connect(lambda _h: self._fit_split())
        self.map_scroll = QScrollArea()
        self.map_scroll.setWidgetResizable(True)
        self.map_scroll.setWidget(self.slot_map)

        self.tabs = QTabWidget()
        self.tabs.addTab(self._scrolling(self._groups_tab()), "Disk groups")
        self.tabs.addTab(self._scrolling(self._volumes_tab()), "Volumes && pools")
        self.tabs.addTab(self._scrolling(self._mapping_tab()), "Hosts && mappings")
        self.tabs.addTab(self.controllers, "Controllers && ports")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self._boxed("Drive slots — click, Ctrl+click, Shift+click or drag a rectangle to "
                                    "select disks", self.map_scroll))
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        self.tabs.setMinimumHeight(230)
        self.map_scroll.setMinimumHeight(150)
        split.splitterMoved.connect(lambda *_: setattr(self, "_split_by_user", True))
        self.split = split
        self._split_by_user = False

        self.message = QLabel()
        self.message.setObjectName("storageMessage")
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.message)

        document.changed.connect(lambda _ids: self._model_changed())
        document.reset.connect(self._model_changed)
        selection.changed.connect(self._follow_selection)
        # drawn when first shown: a hidden tab costs nothing at start-up

    # ================================================================= building
    @staticmethod
    def _boxed(title: str, widget: QWidget) -> QGroupBox:
        box = QGroupBox(title)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(widget)
        return box

    @staticmethod
    def _scrolling(page: QWidget) -> QScrollArea:
        """A tab page that scrolls in a short window instead of squeezing the slot map."""
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setFrameShape(QScrollArea.Shape.NoFrame)
        area.setWidget(page)
        return area

    @staticmethod
    def _button(text: str, slot: Callable[[], Any], name: str) -> QPushButton:
        b = QPushButton(text)
        b.setObjectName(name)
        b.clicked.connect(slot)
        return b

    @staticmethod
    def _columns() -> tuple[QWidget, QVBoxLayout, QVBoxLayout]:
        """A tab page: a form column on the left, lists on the right."""
        page = QWidget()
        row = QHBoxLayout(page)
        left, right = QVBoxLayout(), QVBoxLayout()
        holder = QWidget()
        holder.setLayout(left)
        holder.setMaximumWidth(430)
        holder.setMinimumWidth(340)
        row.addWidget(holder)
        row.addLayout(right, 1)
        return page, left, right

    def _groups_tab(self) -> QWidget:
        page, lay, right = self._columns()
        new = QGroupBox("New disk group from the selected disks")
        form = QFormLayout(new)
        self.pick_info = QLabel()
        self.pick_info.setWordWrap(True)
        form.addRow(self.pick_info)
        self.raid_combo = QComboBox()
        self.raid_combo.setObjectName("raidCombo")
        for level in RAID_LEVELS:
            self.raid_combo.addItem(cap.LEVEL_NAMES[level], level)
        self.raid_combo.setCurrentIndex(RAID_LEVELS.index("raid10"))
        self.raid_combo.currentIndexChanged.connect(lambda _: self._update_pick_info())
        form.addRow("RAID level:", self.raid_combo)
        self.group_name = QLineEdit()
        self.group_name.setObjectName("groupName")
        form.addRow("Name:", self.group_name)
        self.owner_combo = QComboBox()
        self.owner_combo.setObjectName("ownerCombo")
        form.addRow("Owner:", self.owner_combo)
        form.addRow(self._button("Create disk group", self.create_group, "createGroup"))
        lay.addWidget(new)
        spares = QGroupBox("Hot spares")
        row = QHBoxLayout(spares)
        row.addWidget(self._button("Mark selected as hot spare", self.mark_spare, "markSpare"))
        row.addWidget(self._button("Release", self.unmark_spare, "unmarkSpare"))
        lay.addWidget(spares)
        lay.addStretch(1)

        self.groups = _tree(["Group", "RAID", "Disks", "Members", "Usable GB", "Free GB", "Owner", "Pool"],
                            multi=True)
        self.groups.setObjectName("groupsTree")
        self.groups.itemSelectionChanged.connect(self._groups_picked)
        right.addWidget(self.groups, 1)
        lay = right
        row = QHBoxLayout()
        self.level_combo = QComboBox()
        for level in RAID_LEVELS:
            self.level_combo.addItem(cap.LEVEL_NAMES[level], level)
        row.addWidget(QLabel("Selected group:"))
        row.addWidget(self.level_combo)
        row.addWidget(self._button("Set RAID level", self.set_level, "setLevel"))
        row.addWidget(self._button("Delete group", self.delete_group, "deleteGroup"))
        row.addStretch(1)
        lay.addLayout(row)
        row = QHBoxLayout()
        self.pool_name = QLineEdit()
        self.pool_name.setPlaceholderText("pool name")
        self.pool_name.setObjectName("poolName")
        self.pool_thin = QComboBox()
        self.pool_thin.addItems(["thick", "thin"])
        row.addWidget(self.pool_name, 1)
        row.addWidget(self.pool_thin)
        row.addWidget(self._button("Create pool from selected groups", self.create_pool, "createPool"))
        lay.addLayout(row)
        return page

    def _volumes_tab(self) -> QWidget:
        page, lay, right = self._columns()
        new = QGroupBox("New volume")
        form = QFormLayout(new)
        self.container_combo = QComboBox()
        self.container_combo.setObjectName("containerCombo")
        form.addRow("In:", self.container_combo)
        self.volume_name = QLineEdit()
        self.volume_name.setObjectName("volumeName")
        form.addRow("Name:", self.volume_name)
        size_row = QHBoxLayout()
        self.volume_size = QDoubleSpinBox()
        self.volume_size.setObjectName("volumeSize")
        self.volume_size.setRange(0.0, 10_000_000.0)
        self.volume_size.setDecimals(0)
        self.volume_size.setSuffix(" GB")
        self.volume_size.setValue(100)
        self.volume_remainder = QCheckBox("take the remainder")
        self.volume_remainder.setObjectName("volumeRemainder")
        self.volume_remainder.toggled.connect(lambda on: self.volume_size.setEnabled(not on))
        size_row.addWidget(self.volume_size, 1)
        size_row.addWidget(self.volume_remainder)
        form.addRow("Size:", size_row)
        self.purpose_combo = QComboBox()
        self.purpose_combo.setObjectName("purposeCombo")
        self.purpose_combo.addItem("(none)", "")
        for p in VOLUME_PURPOSES:
            self.purpose_combo.addItem(p.replace("_", " "), p)
        form.addRow("Purpose:", self.purpose_combo)
        form.addRow(self._button("Create volume", self.create_volume, "createVolume"))
        lay.addWidget(new)
        lay.addStretch(1)
        lay = right
        self.volumes = _tree(["Volume", "In", "Size GB", "Purpose", "Mapped to"])
        self.volumes.setObjectName("volumesTree")
        self.volumes.itemSelectionChanged.connect(self._volumes_picked)
        lay.addWidget(self.volumes, 2)
        row = QHBoxLayout()
        row.addWidget(self._button("Delete volume", self.delete_volume, "deleteVolume"))
        row.addStretch(1)
        lay.addLayout(row)
        self.pools = _tree(["Pool", "Provisioning", "Groups", "Usable GB", "Allocated GB", "Free GB"])
        self.pools.setObjectName("poolsTree")
        self.pools.itemSelectionChanged.connect(self._pools_picked)
        lay.addWidget(QLabel("Pools"))
        lay.addWidget(self.pools, 1)
        return page

    def _mapping_tab(self) -> QWidget:
        page, lay, right = self._columns()
        new = QGroupBox("Map a volume")
        form = QFormLayout(new)
        self.map_volume_combo = QComboBox()
        self.map_volume_combo.setObjectName("mapVolumeCombo")
        form.addRow("Volume:", self.map_volume_combo)
        self.map_to_combo = QComboBox()
        self.map_to_combo.setObjectName("mapToCombo")
        self.map_to_combo.currentIndexChanged.connect(lambda _: self._suggest_lun())
        form.addRow("To:", self.map_to_combo)
        self.lun_spin = QSpinBox()
        self.lun_spin.setObjectName("lunSpin")
        self.lun_spin.setRange(-1, 4095)
        self.lun_spin.setSpecialValueText("not set")
        form.addRow("LUN:", self.lun_spin)
        form.addRow(self._button("Map volume", self.map_volume, "mapVolume"))
        lay.addWidget(new)
        hosts = QGroupBox("Host groups")
        hl = QVBoxLayout(hosts)
        row = QHBoxLayout()
        self.host_group_name = QLineEdit()
        self.host_group_name.setPlaceholderText("host group name")
        self.host_group_name.setObjectName("hostGroupName")
        row.addWidget(self.host_group_name, 1)
        row.addWidget(self._button("Create host group", self.create_host_group, "createHostGroup"))
        hl.addLayout(row)
        row = QHBoxLayout()
        self.member_combo = QComboBox()
        self.member_combo.setObjectName("memberCombo")
        self.member_group_combo = QComboBox()
        self.member_group_combo.setObjectName("memberGroupCombo")
        row.addWidget(self.member_combo, 1)
        row.addWidget(QLabel("into"))
        row.addWidget(self.member_group_combo, 1)
        row.addWidget(self._button("Add", self.add_to_group, "addToGroup"))
        hl.addLayout(row)
        lay.addWidget(hosts)
        lay.addStretch(1)
        inner = QSplitter(Qt.Orientation.Horizontal)
        box = QWidget()
        bl = QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        self.mappings = _tree(["Volume", "Mapped to", "LUN"])
        self.mappings.setObjectName("mappingsTree")
        bl.addWidget(self.mappings, 1)
        row = QHBoxLayout()
        row.addWidget(self._button("Unmap", self.unmap, "unmap"))
        row.addStretch(1)
        bl.addLayout(row)
        self.hosts = _tree(["Host / group", "Stands for", "Host group", "Host type"])
        self.hosts.setObjectName("hostsTree")
        inner.addWidget(box)
        inner.addWidget(self.hosts)
        right.addWidget(inner, 1)
        return page

    # ================================================================= model -> view
    @property
    def array_id(self) -> str | None:
        return self.array_combo.currentData()

    @property
    def array(self):
        return next((a for a in self.document.bed.arrays if a.id == self.array_id), None)

    def _model_changed(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True    # hidden tab: redraw when it is shown

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        self._stale = False
        self._filling = True
        try:
            current = self.array_id
            self.array_combo.blockSignals(True)
            self.array_combo.clear()
            for a in self.document.bed.arrays:
                label = a.id + (" (simulated)" if a.simulated else "")
                self.array_combo.addItem(label, a.id)
            ids = [a.id for a in self.document.bed.arrays]
            chosen = self._array_in_selection() or current
            self.array_combo.setCurrentIndex(ids.index(chosen) if chosen in ids else (0 if ids else -1))
            self.array_combo.blockSignals(False)
            self._fill_all()
        finally:
            self._filling = False

    def _array_in_selection(self) -> str | None:
        for ident in self.selection.ids:
            subject = ops.parse_subject(self.document.bed, ident)
            if subject is not None:
                return subject.array
        return None

    def _array_chosen(self, _index: int) -> None:
        if self._filling:
            return
        self._filling = True
        try:
            self.slot_map.set_selected(())
            self._fill_all()
        finally:
            self._filling = False

    def _fit_split(self) -> None:
        """Give the slot map the room it needs, up to 60 % of the height, until the user drags the splitter."""
        total = sum(self.split.sizes())
        if self._split_by_user or total <= 0:
            return
        want = min(max(self.slot_map.minimumHeight() + 48, 150), int(total * 0.6))
        self.split.setSizes([want, total - want])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_split()

    def _fill_all(self) -> None:
        array = self.array
        self.slot_map.show_array(array.id if array else None)
        self._fit_split()
        self._fill_summary(array)
        self._fill_controllers(array)
        if array is None:
            for t in (self.groups, self.volumes, self.pools, self.mappings, self.hosts):
                t.clear()
            self._update_pick_info()
            return
        scope = ops.array_scope(self.document.bed, array.id)
        use = ops.usage(self.document.bed, array.id, scope)
        self._fill_groups(array, use)
        self._fill_volumes(array, use)
        self._fill_mappings(array)
        self._update_pick_info()
        self._show_selection(self.selection.ids)

    def _fill_summary(self, array) -> None:
        if array is None:
            self.summary.setText("No storage array in this bed.")
            return
        disks = sum(len(ops.expand([f"{e.name}:{ds.slots}"])) for e in array.enclosures for ds in e.disks)
        slots = sum(e.slots for e in array.enclosures)
        parts = [array.model or "array", f"firmware {array.firmware}" if array.firmware else "",
                 array.connectivity.upper() if array.connectivity else "",
                 f"{disks} disks in {slots} slots", f"{len(array.disk_groups)} disk groups",
                 f"{len(ops.expand(array.spares))} hot spares",
                 "simulated: exists only as a setting" if array.simulated else ""]
        self.summary.setText(" · ".join(p for p in parts if p))

    def _fill_controllers(self, array) -> None:
        self.controllers.clear()
        if array is None:
            return
        owned: dict[str, int] = {}
        for g in array.disk_groups:
            owned[g.owner] = owned.get(g.owner, 0) + 1
        for c in array.controllers:
            bits = [f"{c.cache_gb:g} GB cache" if c.cache_gb is not None else "cache not stated", c.mode,
                    f"owns {owned.get(c.name, 0)} group(s)"]
            top = QTreeWidgetItem(self.controllers, [f"{c.name} — {' · '.join(bits)}"])
            top.setFirstColumnSpanned(True)
            for p in c.ports:
                speed = f"{p.speed_gbps:g} Gb/s" if p.speed_gbps else ""
                QTreeWidgetItem(top, [p.name, p.kind, speed, p.address or p.wwpn, ", ".join(p.roles),
                                      str(p.mtu) if p.mtu else "", p.label])
            top.setExpanded(True)
        for i in range(self.controllers.columnCount()):
            self.controllers.resizeColumnToContents(i)
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

    def _fill_groups(self, array, use) -> None:
        self.groups.clear()
        for g in array.disk_groups:
            u = use[("group", g.name)]
            members = ops.expand(g.members)
            free = "in pool" if g.pool else ("0 (remainder vol.)" if u.remainder else _gb(u.free_gb) if u.known else "?")
            item = QTreeWidgetItem(self.groups, [g.name, cap.LEVEL_NAMES.get(g.raid, g.raid), str(len(members)),
                                                 ", ".join(g.members), _gb(u.usable_gb) if u.known else "?",
                                                 free, g.owner, g.pool])
            item.setData(0, ID_ROLE, ops.group_id(array.id, g.name))
            item.setIcon(0, _swatch(self.slot_map.colours.get(g.name, QColor("white"))))
            problem = cap.member_problem(g.raid, len(members))
            if problem:
                item.setForeground(1, QColor("#b3261e"))
                item.setToolTip(1, problem)
        self.pool_name.setPlaceholderText(f"pool name, e.g. Pool {len(array.pools)}")
        self.group_name.setPlaceholderText(ops.next_group_name(array))

    def _fill_volumes(self, array, use) -> None:
        self.volumes.clear()
        mapped: dict[str, list[str]] = {}
        for m in array.mappings:
            mapped.setdefault(m.volume, []).append(m.to + (f" (LUN {m.lun})" if m.lun is not None else ""))
        for v in array.volumes:
            size = ops.volume_size(self.document.bed, array.id, v.name, use)
            where = f"group {v.group}" if v.group else f"pool {v.pool}"
            size_text = _gb(size) + (" (remainder)" if v.remainder and v.size_gb is None else "")
            item = QTreeWidgetItem(self.volumes, [v.name, where, size_text, ", ".join(v.purpose),
                                                  ", ".join(mapped.get(v.name, []))])
            item.setData(0, ID_ROLE, ops.volume_id(array.id, v.name))
        self.pools.clear()
        for p in array.pools:
            u = use[("pool", p.name)]
            groups = [g.name for g in array.disk_groups if g.pool == p.name]
            free = u.usable_gb - u.allocated_gb
            free_text = "0 (remainder vol.)" if u.remainder else (_gb(free) if u.known else "?")
            if u.known and free < 0:
                free_text = f"overcommitted {u.allocated_gb / u.usable_gb:.2f}:1"
            item = QTreeWidgetItem(self.pools, [p.name, p.provisioning, str(len(groups)),
                                                _gb(u.usable_gb) if u.known else "?", _gb(u.allocated_gb), free_text])
            item.setToolTip(2, ", ".join(groups))
            item.setData(0, ID_ROLE, ops.pool_id(array.id, p.name))
        previous = self.container_combo.currentData()
        self.container_combo.clear()
        for g in array.disk_groups:
            if g.pool:
                continue
            u = use[("group", g.name)]
            free = "full (remainder vol.)" if u.remainder else (f"{_gb(u.free_gb)} GB free" if u.known else "size unknown")
            self.container_combo.addItem(f"group {g.name} — {free}", ("group", g.name))
        for p in array.pools:
            u = use[("pool", p.name)]
            free = f"{_gb(u.usable_gb - u.allocated_gb)} GB free" if u.known else "size unknown"
            self.container_combo.addItem(f"pool {p.name} ({p.provisioning}) — {free}", ("pool", p.name))
        keys = [self.container_combo.itemData(i) for i in range(self.container_combo.count())]
        if previous in keys:
            self.container_combo.setCurrentIndex(keys.index(previous))

    def _fill_mappings(self, array) -> None:
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
        bed = self.document.bed
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
        if self.array is None or not to:
            self.lun_spin.setValue(-1)
            return
        self.lun_spin.setValue(ops.next_free_lun(self.document.bed, self.array.id, to))

    def _update_pick_info(self) -> None:
        array = self.array
        slots = self.slot_map.selected_slots()
        if array is None or not slots:
            self.pick_info.setText("Select free disks in the slot map: click, Ctrl+click, or drag a rectangle.")
            self.pick_info.setStyleSheet("")
            return
        users = ops.slot_users(array)
        cells = [self.slot_map.cell(s) for s in slots]
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
    def _publish(self, ids) -> None:
        self._publishing = True
        try:
            self.selection.set(ids)
        finally:
            self._publishing = False

    def _slots_picked(self, slots: list) -> None:
        self._update_pick_info()
        array = self.array
        if array is not None:
            self._publish([ops.slot_id(array.id, s) for s in slots])

    def _picked_ids(self, tree: QTreeWidget) -> list[str]:
        return [i.data(0, ID_ROLE) for i in tree.selectedItems() if i.data(0, ID_ROLE)]

    def _groups_picked(self) -> None:
        if self._filling or self._publishing:
            return
        ids = self._picked_ids(self.groups)
        self._sync_level_combo()
        if ids:
            self._highlight(ids)
            self._publish(ids)

    def _volumes_picked(self) -> None:
        if self._filling or self._publishing:
            return
        ids = self._picked_ids(self.volumes)
        if ids:
            self._highlight(ids)
            self._publish(ids)

    def _pools_picked(self) -> None:
        if self._filling or self._publishing:
            return
        ids = self._picked_ids(self.pools)
        if ids:
            self._highlight(ids)
            self._publish(ids)

    def _follow_selection(self, ids) -> None:
        if self._publishing or self._filling:
            return
        if not self.isVisible():
            self._stale = True     # shown later: refresh() picks the selection up
            return
        subjects = [s for s in (ops.parse_subject(self.document.bed, i) for i in ids) if s is not None]
        if not subjects:
            return
        array_id = subjects[0].array
        if array_id != self.array_id:
            index = self.array_combo.findData(array_id)
            if index >= 0:
                self.array_combo.setCurrentIndex(index)
        self._show_selection(ids)

    def _show_selection(self, ids) -> None:
        """Highlight the slots behind the selected storage subjects and their list rows."""
        self._highlight(ids)
        self._filling = True
        try:
            for tree in (self.groups, self.volumes, self.pools):
                tree.blockSignals(True)
                for i in range(tree.topLevelItemCount()):
                    item = tree.topLevelItem(i)
                    item.setSelected(item.data(0, ID_ROLE) in ids)
                tree.blockSignals(False)
        finally:
            self._filling = False
        self._sync_level_combo()

    def _highlight(self, ids) -> None:
        array = self.array
        if array is None:
            return
        slots: list = []
        for ident in ids:
            s = ops.parse_subject(self.document.bed, ident)
            if s is None or s.array != array.id:
                continue
            if s.kind == "slot":
                slots.append(s.slot)
            elif s.kind == "group":
                slots += self._group_slots(array, s.name)
            elif s.kind == "pool":
                for g in array.disk_groups:
                    if g.pool == s.name:
                        slots += ops.expand(g.members)
            elif s.kind == "volume":
                v = next((v for v in array.volumes if v.name == s.name), None)
                if v is not None and v.group:
                    slots += self._group_slots(array, v.group)
                elif v is not None:
                    for g in array.disk_groups:
                        if g.pool == v.pool:
                            slots += ops.expand(g.members)
        if slots or any(ops.parse_subject(self.document.bed, i) for i in ids):
            self.slot_map.set_selected(slots)
            self._update_pick_info()
            if slots:
                first = self.slot_map.slot_rect(slots[0]) if self.slot_map.cell(slots[0]) else None
                if first is not None:
                    self.map_scroll.ensureVisible(first.center().x(), first.center().y(), 60, 60)

    def _sync_level_combo(self) -> None:
        """The level box shows the selected group's level, and is off while no group is selected."""
        group = self._selected_group()
        self.level_combo.setEnabled(group is not None)
        if group is not None:
            self.level_combo.setCurrentIndex(max(self.level_combo.findData(group.raid), 0))

    @staticmethod
    def _group_slots(array, name: str) -> list:
        g = next((g for g in array.disk_groups if g.name == name), None)
        return ops.expand(g.members) if g else []

    def _selected_group(self):
        array = self.array
        items = self.groups.selectedItems()
        if array is None or not items:
            return None
        name = items[0].text(0)
        return next((g for g in array.disk_groups if g.name == name), None)

    # ================================================================= actions
    def say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(ERROR_STYLE if error else OK_STYLE)
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, 8000)

    def _run(self, build: Callable[[], Any]) -> bool:
        if self.array is None:
            self.say("This bed has no storage array: add one on the Diagram tab first.", error=True)
            return False
        try:
            edit = build()
        except ops.StorageEditRefused as exc:
            self.say(f"Not done: {exc}.", error=True)
            return False
        self.document.apply(edit)
        self.say(f"Done: {edit.text}.")
        return True

    def create_group(self) -> None:
        array = self.array
        name = self.group_name.text().strip() or None
        slots = self.slot_map.selected_slots()
        if self._run(lambda: ops.create_disk_group(self.document.bed, array.id, slots,
                                                   self.raid_combo.currentData(), name=name,
                                                   owner=self.owner_combo.currentData() or None)):
            self.group_name.clear()
            made = array.disk_groups[-1].name
            self._publish([ops.group_id(array.id, made)])
            self._show_selection(self.selection.ids)

    def mark_spare(self) -> None:
        slots = self.slot_map.selected_slots()
        self._run(lambda: ops.mark_spares(self.document.bed, self.array.id, slots))

    def unmark_spare(self) -> None:
        slots = self.slot_map.selected_slots()
        self._run(lambda: ops.unmark_spares(self.document.bed, self.array.id, slots))

    def set_level(self) -> None:
        group = self._selected_group()
        if group is None:
            self.say("Select a disk group in the list first.", error=True)
            return
        self._run(lambda: ops.set_raid_level(self.document.bed, self.array.id, group.name,
                                             self.level_combo.currentData()))

    def delete_group(self) -> None:
        group = self._selected_group()
        if group is None:
            self.say("Select a disk group in the list first.", error=True)
            return
        self._run(lambda: ops.delete_disk_group(self.document.bed, self.array.id, group.name))

    def create_pool(self) -> None:
        names = [i.text(0) for i in self.groups.selectedItems()]
        name = self.pool_name.text().strip() or f"Pool {len(self.array.pools) if self.array else 0}"
        if self._run(lambda: ops.create_pool(self.document.bed, self.array.id, name, names,
                                             self.pool_thin.currentText())):
            self.pool_name.clear()

    def create_volume(self) -> None:
        key = self.container_combo.currentData()
        if not key:
            self.say("Create a disk group or pool first: a volume lives in one.", error=True)
            return
        kind, container = key
        remainder = self.volume_remainder.isChecked()
        size = None if remainder else self.volume_size.value()
        purpose = self.purpose_combo.currentData() or ()
        name = self.volume_name.text()
        if self._run(lambda: ops.create_volume(self.document.bed, self.array.id, name,
                                               group=container if kind == "group" else "",
                                               pool=container if kind == "pool" else "",
                                               size_gb=size, remainder=remainder, purpose=purpose)):
            self.volume_name.clear()
            i = self.map_volume_combo.findData(name.strip())
            if i >= 0:
                self.map_volume_combo.setCurrentIndex(i)

    def delete_volume(self) -> None:
        items = self.volumes.selectedItems()
        if not items:
            self.say("Select a volume in the list first.", error=True)
            return
        name = items[0].text(0)
        self._run(lambda: ops.delete_volume(self.document.bed, self.array.id, name))

    def map_volume(self) -> None:
        volume = self.map_volume_combo.currentData()
        to = self.map_to_combo.currentData()
        if not volume:
            self.say("Create a volume first.", error=True)
            return
        lun = self.lun_spin.value()
        self._run(lambda: ops.map_volume(self.document.bed, self.array.id, volume, to,
                                         lun=None if lun < 0 else lun))

    def unmap(self) -> None:
        items = self.mappings.selectedItems()
        if not items:
            self.say("Select a mapping in the list first.", error=True)
            return
        volume, to = items[0].data(0, ID_ROLE)
        self._run(lambda: ops.unmap(self.document.bed, self.array.id, volume, to))

    def create_host_group(self) -> None:
        name = self.host_group_name.text()
        if self._run(lambda: ops.create_host_group(self.document.bed, self.array.id, name)):
            self.host_group_name.clear()

    def add_to_group(self) -> None:
        host = self.member_combo.currentData()
        group = self.member_group_combo.currentData()
        if not host or not group:
            self.say("Choose a host and a host group (create the group first).", error=True)
            return
        self._run(lambda: ops.add_host_to_group(self.document.bed, self.array.id, host, group))
