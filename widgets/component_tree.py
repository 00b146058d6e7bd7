"""The bed's components as a tree: servers and their ports, switches, arrays with
controllers, enclosures, disk groups, pools and volumes, VMs, clusters.

`outline(bed)` is plain data (no Qt), so it is cheap to test; `ComponentTree` shows it.
Each node carries the component id the validator uses in a finding's subjects
(DEVICE, DEVICE:PORT, ARRAY:VOLUME, ARRAY:group:NAME, ARRAY:pool:NAME), so a finding
can select what it is about, and the tree marks the rows that have findings.

The tree follows the document by reconciling: it rebuilds the outline of the touched
components only (all of them on reset or an edit of unknown extent) and updates the
rows in place, so expansion, selection and scroll position survive every edit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QStyle, QTreeWidget, QTreeWidgetItem

from topology.ids import owner_of
from topology.index import parse_slot_range
from topology.unknown import is_not_stated
from topology.vocabulary import raid_name
from widgets.tree_filling import TreeFilling
from widgets.tree_markers import FindingMarkers

ID_ROLE = Qt.ItemDataRole.UserRole


@dataclass
class Node:
    label: str
    kind: str = ""
    detail: str = ""
    id: str = ""
    children: list[Node] = field(default_factory=list)


def _join(*parts: Any) -> str:
    return " · ".join(str(p) for p in parts if p)


def _num(v: float | None, unit: str, what: str = "") -> str:
    """'48 GB RAM'; a value the source does not state says so ('memory not stated'), never a number."""
    if v is None:
        return ""
    return f"{what or unit} not stated" if is_not_stated(v) else f"{v:g} {unit}"


def _port(owner: str, p: Any) -> Node:
    mtu = f"MTU {p.mtu}" if getattr(p, "mtu", None) else ""
    speed = _num(getattr(p, "speed_gbps", None), "Gb/s", "speed")
    return Node(p.name, f"{p.kind} port", _join(", ".join(p.roles), p.address, speed, mtu, p.label),
                f"{owner}:{p.name}")


def _server(s: Any) -> Node:
    cpu = s.cpu and f"{s.cpu.sockets}×{s.cpu.cores_per_socket} cores"
    node = Node(s.id, s.role, _join(s.model, cpu, _num(s.memory_gb, "GB RAM", "memory"), s.hypervisor or s.os), s.id)
    for ad in s.adapters:
        node.children += [_port(s.id, p) for p in ad.ports]
    return node


def _array(a: Any) -> Node:
    aid = a.id
    node = Node(aid, "storage array", _join(a.model, a.connectivity), aid)
    for c in a.controllers:
        cn = Node(c.name, "controller", _join(c.mode, _num(c.cache_gb, "GB cache", "cache")), f"{aid}:{c.name}")
        cn.children = [_port(aid, p) for p in c.ports]
        node.children.append(cn)
    for e in a.enclosures:
        disks = sum(len(_slots(d.slots)) for d in e.disks)
        node.children.append(Node(e.name, "enclosure", _join(e.model, f"{e.slots} slots", f"{disks} disks"),
                                  f"{aid}:{e.name}"))
    for g in a.disk_groups:
        node.children.append(Node(g.name, "disk group", _join(raid_name(g.raid), g.geometry, ", ".join(g.members),
                                                              g.owner and f"owner {g.owner}"), f"{aid}:group:{g.name}"))
    if a.spares:
        node.children.append(Node("hot spares", "spares", ", ".join(a.spares)))   # no id: selects nothing twice
    for p in a.pools:
        node.children.append(Node(p.name, "pool", _join(p.provisioning, raid_name(p.raid)), f"{aid}:pool:{p.name}"))
    for v in a.volumes:
        node.children.append(Node(v.name, "volume", _join(_num(v.size_gb, "GB", "size"), v.group or v.pool,
                                                          ", ".join(v.purpose), v.drive), f"{aid}:{v.name}"))
    return node


def _group(g: Any) -> Node:
    """An array group (picked, its form opens), its pools and its volumes (GROUP:pool:NAME, GROUP:VOLUME)."""
    gid = g.name
    node = Node(gid, "array group", _join(g.model, g.address and f"address {g.address}"), gid)
    node.children += [Node(p.name, "pool", _join(raid_name(p.raid), p.members and "members " + (
        ", ".join(p.members) if isinstance(p.members, list) else str(p.members))), f"{gid}:pool:{p.name}")
        for p in g.pools]
    node.children += [Node(v.name, "volume", _join(_num(v.size_gb, "GB", "size"), v.pool, ", ".join(v.purpose)),
                           f"{gid}:{v.name}") for v in g.volumes]
    return node


def _slots(text: str) -> range:
    try:
        return parse_slot_range(text)
    except ValueError:
        return range(0)


# Top-level sections: title, bed collection, how one component becomes a node.
SECTIONS: tuple[tuple[str, str, Any], ...] = (
    ("Servers", "servers", lambda s: _server(s)),
    ("Switches", "switches", lambda w: Node(w.id, f"{w.kind} switch", _join(
        w.model, w.port_count and f"{w.port_count} ports", w.mtu and f"MTU {w.mtu}"), w.id,
        [_port(w.id, p) for p in w.ports])),
    ("Networks", "networks", lambda n: Node(n.id, f"{n.role} network", _join(n.cidr, n.vlan and f"VLAN {n.vlan}"),
                                            n.id)),
    ("Storage arrays", "arrays", lambda a: _array(a)),
    ("Array groups", "array_groups", lambda g: _group(g)),
    ("Virtual machines", "vms", lambda v: Node(v.id, "VM", _join(v.role, f"{v.vcpu} vCPU",
                                                                  _num(v.memory_gb, "GB", "memory"),
                                                                  v.host and f"on {v.host}"), v.id,
                                               [Node(n.name, "virtual NIC", _join(n.role, n.address),
                                                     f"{v.id}:{n.name}") for n in v.nics])),
    ("Clusters", "clusters", lambda c: Node(c.id, "cluster", _join(", ".join(c.nodes), c.quorum), c.id,
                                            [Node(n, "node", id=n) for n in c.nodes])),
    ("Workloads", "workloads", lambda w: Node(w.id, "workload", _join(w.tool, ", ".join(w.targets)), w.id)),
)
STORAGE_KINDS = {"storage array", "controller", "enclosure", "disk group", "pool", "volume", "spares"}


def outline(bed: Any) -> list[Node]:
    """Top-level sections with their components; empty sections are left out."""
    out = []
    for title, attr, build in SECTIONS:
        items = [build(c) for c in getattr(bed, attr)]
        if items:
            out.append(Node(f"{title} ({len(items)})", "section", "", "", items))
    return out


def worst_severity(findings: list[Any]) -> dict[str, str]:
    """Subject id -> the worst severity of the open (not accepted) findings naming it."""
    rank = {"error": 0, "warning": 1, "info": 2}
    out: dict[str, str] = {}
    for f in findings:
        if getattr(f, "accepted", False):
            continue
        for subject in f.subjects:
            if subject not in out or rank[f.severity] < rank[out[subject]]:
                out[subject] = f.severity
    return out


_MARKER_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
                 "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
                 "info": QStyle.StandardPixmap.SP_MessageBoxInformation}
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
UNBUILT_ROLE = Qt.ItemDataRole.UserRole + 3      # a component row whose children are made when it opens
SECTION_ROLE = Qt.ItemDataRole.UserRole + 4      # the bed collection a section row lists
CONFIGURED_ROLE = Qt.ItemDataRole.UserRole + 5   # greyed: not in use in the chosen configuration


class ComponentTree(TreeFilling, FindingMarkers, QTreeWidget):
    """Redraws from the document; selecting a row selects the component everywhere.

    `storage_view_requested(ids)` says the person asked for the storage view (the window
    brings that tab forward; the selection has already moved).

    Large beds stay quick: a component's rows below it (ports, controllers, volumes) are
    made when it is first opened or something inside it is selected, an edit redraws only
    the components it touched, and finding markers change only on the rows whose marker
    changed."""

    storage_view_requested = Signal(list)
    SECTIONS = SECTIONS

    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.setColumnCount(3)
        self.setHeaderLabels(["Component", "Kind", "Details"])
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self.itemExpanded.connect(self._build_children)
        self._syncing = False
        self._created = False
        self._sections: dict[str, QTreeWidgetItem] = {}
        self._items: dict[str, list[QTreeWidgetItem]] = {}   # id -> rows, cluster-node rows included
        self._rows: dict[str, list[QTreeWidgetItem]] = {}    # id -> the component's own rows
        self._pending: set[str] | None = None    # touched ids since the last redraw; None = everything
        self._by_subject: dict[str, tuple[str, list[str]]] = {}
        self._findings: list[Any] = []          # the findings the markers show
        self._section_ids: dict[str, list[str]] = {}    # a section's component ids, in its rows' order
        self._configured_shown = False          # a configuration greyed rows or changed their details
        self._marks: dict[int, tuple[QTreeWidgetItem, str, str]] = {}
        self._blank = QIcon(self._blank_pixmap())
        self._icons = {k: self.style().standardIcon(v) for k, v in _MARKER_ICONS.items()}
        self._refresh = QTimer(self, singleShot=True, interval=150, timeout=self._redraw)
        document.reset.connect(self._redraw_all)
        document.changed.connect(self._touched)
        document.validation.findings_changed.connect(self.show_findings)
        from app.configuration_choice import ConfigurationChoice
        self.configuration = ConfigurationChoice.of(document)
        self.configuration.changed.connect(lambda _name: self._redraw_all())
        selection.changed.connect(self._follow_selection)
        self.itemSelectionChanged.connect(self._publish_selection)
        self._redraw_all()
        if document.validation.revision_shown == document.revision:
            self.show_findings(document.validation.findings)

    @staticmethod
    def _blank_pixmap() -> QPixmap:
        pix = QPixmap(16, 16)
        pix.fill(QColor(0, 0, 0, 0))
        return pix

    # ------------------------------------------------------------------ following the document
    def _touched(self, ids: set) -> None:
        if self._pending is not None:
            if ids:
                self._pending |= set(ids)
            else:
                self._pending = None
        self._refresh.start()

    def _redraw_all(self) -> None:
        self._pending = None
        if self._wait_for_drawing():    # a bed is opening, or a big one's diagram is drawn: that comes first
            return
        self._redraw()

    def _redraw(self) -> None:
        self._refresh.stop()
        if self.filling:        # an edit while the rows are listed: all of them now
            self._stop_filling()
            self._pending = None
        pending, self._pending = self._pending, set()
        touched = None if pending is None else {owner_of(i) for i in pending}
        self._syncing = True
        try:
            first = not self._sections
            self._created = False
            self._reconcile(self.document.bed, touched)
            if first:
                for col in (0, 1):
                    self.resizeColumnToContents(col)
                self.setColumnWidth(0, self.columnWidth(0) + 24)   # room for the finding marker
            if self._created or touched is None:
                self._apply_markers()        # rows kept from before keep their markers
            self._show_configuration()
            self.select_ids(set(self.selection.ids), scroll=False)
        finally:
            self._syncing = False

    def _show_configuration(self, *_: Any) -> None:
        """The chosen configuration: what it takes out of use greyed, what it changes on a server
        (its OS, hypervisor) in the Details column as it has it."""
        choice = self.configuration
        name = choice.name if choice is not None else None
        if name is None and not self._configured_shown:
            return          # the bed as drawn, and no row shows a configuration: nothing to visit
        self._configured_shown = name is not None
        excluded = choice.excluded() if choice is not None else frozenset()
        view = choice.view() if choice is not None else None
        servers = {s.id: s for s in view.servers} if view is not None else {}
        grey = self.palette().color(self.palette().ColorGroup.Disabled, self.palette().ColorRole.Text)
        for ident, rows in self._rows.items():
            out = ident in excluded
            configured = servers.get(ident) if ident in self._configured_ids() else None
            for row in rows:
                if out or row.data(0, CONFIGURED_ROLE):
                    for col in range(3):
                        row.setData(col, Qt.ItemDataRole.ForegroundRole, grey if out else None)
                    row.setToolTip(0, f"not in use in configuration {name}" if out else "")
                    row.setData(0, CONFIGURED_ROLE, out)
                if configured is not None:
                    detail = _server(configured).detail
                    row.setText(2, detail)
                    row.setToolTip(2, f"{detail} (as configuration {name} has it)")

    def _configured_ids(self) -> set[str]:
        choice = self.configuration
        cfg = next((c for c in self.document.bed.configurations if choice is not None and c.id == choice.name), None)
        return set(cfg.overrides) if cfg is not None else set()

    def _reconcile(self, bed: Any, touched: set[str] | None) -> None:
        """Bring the rows in line with the bed; components outside `touched` (None = all)
        keep their rows untouched unless they were added, removed or moved."""
        wanted = [(title, attr, build) for title, attr, build in SECTIONS if getattr(bed, attr)]
        for attr in [a for a in self._sections if a not in {w[1] for w in wanted}]:
            self._section_ids.pop(attr, None)
            section = self._sections.pop(attr)
            self.takeTopLevelItem(self.indexOfTopLevelItem(section))
            self._forget(section)
        root = self.invisibleRootItem()
        rows = []
        for title, attr, build in wanted:
            section = self._sections.get(attr)
            if section is None:
                section = self._new_section(attr)
                rows.append((section, True))
            else:
                rows.append((section, False))
            comps = getattr(bed, attr)
            section.setText(0, f"{title} ({len(comps)})")
            self._reconcile_section(section, comps, build, touched)
        self._arrange(root, rows)
        for section, new in rows:
            if new:
                section.setExpanded(True)

    def _new_section(self, attr: str) -> QTreeWidgetItem:
        section = QTreeWidgetItem()
        section.setData(0, KIND_ROLE, "section")
        section.setData(0, SECTION_ROLE, attr)
        section.setIcon(0, self._blank)
        self._sections[attr] = section
        return section

    def _reconcile_section(self, section: QTreeWidgetItem, comps: list, build: Any,
                           touched: set[str] | None) -> None:
        attr = section.data(0, SECTION_ROLE)
        ids = [c.id for c in comps]
        if touched is not None and self._section_ids.get(attr) == ids and self._refill_touched(section, comps,
                                                                                                 build, touched):
            return      # nothing added, removed or moved here: thousands of rows left unvisited
        self._section_ids.pop(attr, None)
        existing: dict[str, list[QTreeWidgetItem]] = {}
        for i in range(section.childCount()):
            child = section.child(i)
            existing.setdefault(child.data(0, ID_ROLE), []).append(child)
        rows = []
        for comp in comps:
            reuse = existing.get(comp.id)
            item = reuse.pop(0) if reuse else None
            if item is None:
                rows.append((self._create(build(comp), lazy=True), True))
                continue
            if touched is None or comp.id in touched:
                self._refill(item, build(comp))
            rows.append((item, False))
        self._arrange(section, rows)
        if len(set(ids)) == len(ids):
            self._section_ids[attr] = ids

    def _refill(self, item: QTreeWidgetItem, node: Node) -> None:
        self._fill(item, node)
        if item.data(0, UNBUILT_ROLE):
            self._set_unbuilt(item, bool(node.children))
        else:
            self._sync_children(item, node.children)

    def _refill_touched(self, section: QTreeWidgetItem, comps: list, build: Any, touched: set[str]) -> bool:
        """The section's rows are the components as they were: refill the touched ones' rows only
        (False, nothing done, when one of them has no row of its own under the section)."""
        changed = [(c, self._own_row(section, c.id)) for c in comps if c.id in touched]
        if any(item is None for _c, item in changed):
            return False
        for comp, item in changed:
            self._refill(item, build(comp))
        return True

    def _own_row(self, section: QTreeWidgetItem, ident: str) -> QTreeWidgetItem | None:
        return next((r for r in self._rows.get(ident, ()) if r.parent() is section), None)

    def _arrange(self, parent: QTreeWidgetItem, rows: list[tuple[QTreeWidgetItem, bool]]) -> None:
        """Make `parent`'s children exactly `rows` (item, is_new), moving as few as possible."""
        count = parent.childCount()
        if count == 0:
            parent.addChildren([item for item, _ in rows])
            return
        if count == len(rows) and all(parent.child(i) is item for i, (item, _) in enumerate(rows)):
            return
        kept = {id(item) for item, new in rows if not new}
        for i in reversed(range(count)):
            child = parent.child(i)
            if id(child) not in kept:
                parent.takeChild(i)
                self._forget(child)
        for i, (item, new) in enumerate(rows):
            if i < parent.childCount() and parent.child(i) is item:
                continue
            if not new:                      # moved: keep it open if it was
                was_open = item.isExpanded()
                parent.takeChild(parent.indexOfChild(item))
                parent.insertChild(i, item)
                item.setExpanded(was_open)
            else:
                parent.insertChild(i, item)

    def _sync_children(self, parent: QTreeWidgetItem, nodes: list[Node]) -> None:
        existing: dict[tuple, list[QTreeWidgetItem]] = {}
        for i in range(parent.childCount()):
            child = parent.child(i)
            existing.setdefault(self._key_of(child), []).append(child)
        rows = []
        for node in nodes:
            reuse = existing.get(self._node_key(node))
            item = reuse.pop(0) if reuse else None
            if item is None:
                rows.append((self._create(node, lazy=False), True))
            else:
                self._fill(item, node)
                self._sync_children(item, node.children)
                rows.append((item, False))
        self._arrange(parent, rows)

    def _create(self, node: Node, *, lazy: bool) -> QTreeWidgetItem:
        self._created = True
        item = QTreeWidgetItem()
        item.setIcon(0, self._blank)
        self._fill(item, node)
        self._remember(item)
        if lazy:
            self._set_unbuilt(item, bool(node.children))
        else:
            item.addChildren([self._create(child, lazy=False) for child in node.children])
        return item

    def _set_unbuilt(self, item: QTreeWidgetItem, has_children: bool) -> None:
        item.setData(0, UNBUILT_ROLE, has_children)
        item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator if has_children else
                                     QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)

    def _build_children(self, item: QTreeWidgetItem) -> None:
        if not item.data(0, UNBUILT_ROLE):
            return
        section = item.parent()
        attr = section.data(0, SECTION_ROLE) if section is not None else None
        build = next((b for _t, a, b in SECTIONS if a == attr), None)
        comp = next((c for c in getattr(self.document.bed, attr or "", []) if c.id == item.data(0, ID_ROLE)), None)
        item.setData(0, UNBUILT_ROLE, False)
        item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)
        if build is None or comp is None:
            return
        self._sync_children(item, build(comp).children)
        self._apply_markers()

    def _ensure_rows(self, ident: str) -> None:
        """Make the rows under a component so `ident` (a port, a volume ...) has a row."""
        device = owner_of(ident)
        for item in self._rows.get(device, []):
            if item.data(0, UNBUILT_ROLE):
                self._build_children(item)

    @staticmethod
    def _key_of(item: QTreeWidgetItem) -> tuple:
        ident = item.data(0, ID_ROLE) or ""
        return ident, item.data(0, KIND_ROLE) or "", "" if ident else item.text(0)

    @staticmethod
    def _node_key(node: Node) -> tuple:
        return node.id, node.kind, "" if node.id else node.label

    def _fill(self, item: QTreeWidgetItem, node: Node) -> None:
        texts = (node.label, node.kind.replace("_", " "), node.detail)
        for col, text in enumerate(texts):
            if item.text(col) != text:
                item.setText(col, text)
                if col == 2:
                    item.setToolTip(2, text)
        if item.data(0, ID_ROLE) != node.id:
            item.setData(0, ID_ROLE, node.id)
        if item.data(0, KIND_ROLE) != node.kind:
            item.setData(0, KIND_ROLE, node.kind)

    def _remember(self, item: QTreeWidgetItem) -> None:
        ident = item.data(0, ID_ROLE)
        if ident:
            self._items.setdefault(ident, []).append(item)
            if item.data(0, KIND_ROLE) != "node":
                self._rows.setdefault(ident, []).append(item)

    def _forget(self, item: QTreeWidgetItem) -> None:
        """Drop a removed row and everything under it from the id index and the markers."""
        stack = [item]
        while stack:
            it = stack.pop()
            self._marks.pop(id(it), None)
            ident = it.data(0, ID_ROLE)
            for table in (self._items, self._rows):
                rows = table.get(ident)
                if rows is not None:
                    rows[:] = [r for r in rows if r is not it]
                    if not rows:
                        del table[ident]
            stack += [it.child(i) for i in range(it.childCount())]

    def show_bed(self, bed: Any) -> None:
        """Show `bed` from scratch (also what a reset does)."""
        self._pending = None
        self._redraw()

    def items_for(self, ident: str) -> list[QTreeWidgetItem]:
        return list(self._items.get(ident, []))

    # ------------------------------------------------------------------ selection, both ways
    def _follow_selection(self, ids) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            self.select_ids(set(ids))
        finally:
            self._syncing = False

    def _publish_selection(self) -> None:
        if self._syncing:
            return
        ids = [i.data(0, ID_ROLE) for i in self.selectedItems() if i.data(0, ID_ROLE)]
        self._syncing = True
        try:
            self.selection.set(ids)
        finally:
            self._syncing = False

    def show_message(self, text: str) -> None:
        self.clear()
        self._sections, self._items, self._rows, self._marks = {}, {}, {}, {}
        QTreeWidgetItem(self, [text])

    def component_count(self) -> int:
        """Components listed (the rows directly under the sections)."""
        return sum(section.childCount() for section in self._sections.values())

    def select_ids(self, ids: set[str], *, scroll: bool = True) -> None:
        for ident in ids:
            if ident not in self._rows and ":" in ident:
                self._ensure_rows(ident)
        wanted = [i for ident in ids for i in self._rows.get(ident, [])]
        if {id(i) for i in self.selectedItems()} == {id(i) for i in wanted}:
            return
        self.clearSelection()
        for item in wanted:
            item.setSelected(True)
        if wanted and scroll:
            for item in wanted:              # every selected row in sight, not just the first
                parent = item.parent()
                while parent is not None:
                    if not parent.isExpanded():
                        parent.setExpanded(True)
                    parent = parent.parent()
            self.scrollToItem(wanted[0])

    # ------------------------------------------------------------------ context menu
    def _context_menu(self, pos: Any) -> None:
        item = self.itemAt(pos)
        ident = item.data(0, ID_ROLE) if item is not None else None
        if not ident:
            return
        if not item.isSelected():            # a menu on an unselected row is about that row alone
            self.clearSelection()
            item.setSelected(True)
        ids = [i.data(0, ID_ROLE) for i in self.selectedItems() if i.data(0, ID_ROLE)] or [ident]
        from widgets.context_menus import exec_at, tree_menu
        exec_at(tree_menu(self, ids, (item.data(0, KIND_ROLE) or "") in STORAGE_KINDS), self.viewport(), pos)

    def _show_in_storage(self, ids: list[str]) -> None:
        self.selection.focus(ids)
        self.storage_view_requested.emit(list(ids))

    def _collapse_to_sections(self) -> None:
        self.collapseAll()
        for i in range(self.topLevelItemCount()):
            self.topLevelItem(i).setExpanded(True)
