"""The bed's components as a tree: servers and their ports, switches, arrays with
controllers, enclosures, disk groups, pools and volumes, VMs, clusters.

`outline(bed)` is plain data (no Qt), so it is cheap to test; `ComponentTree` shows it.
Each node carries the component id the validator uses in a finding's subjects
(DEVICE, DEVICE:PORT, ARRAY:VOLUME, ARRAY:group:NAME, ARRAY:pool:NAME), so a finding
can select what it is about.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from topology.index import parse_slot_range

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


def _num(v: float | None, unit: str) -> str:
    return "" if v is None else f"{v:g} {unit}"


def _port(owner: str, p: Any) -> Node:
    mtu = f"MTU {p.mtu}" if getattr(p, "mtu", None) else ""
    speed = _num(getattr(p, "speed_gbps", None), "Gb/s")
    return Node(p.name, f"{p.kind} port", _join(", ".join(p.roles), p.address, speed, mtu, p.label),
                f"{owner}:{p.name}")


def _server(s: Any) -> Node:
    cpu = s.cpu and f"{s.cpu.sockets}×{s.cpu.cores_per_socket} cores"
    node = Node(s.id, s.role, _join(s.model, cpu, _num(s.memory_gb, "GB RAM"), s.hypervisor or s.os), s.id)
    for ad in s.adapters:
        node.children += [_port(s.id, p) for p in ad.ports]
    return node


def _array(a: Any) -> Node:
    aid = a.id
    node = Node(aid, "storage array", _join(a.model, a.connectivity), aid)
    for c in a.controllers:
        cn = Node(c.name, "controller", _join(c.mode, _num(c.cache_gb, "GB cache")), f"{aid}:{c.name}")
        cn.children = [_port(aid, p) for p in c.ports]
        node.children.append(cn)
    for e in a.enclosures:
        disks = sum(len(_slots(d.slots)) for d in e.disks)
        node.children.append(Node(e.name, "enclosure", _join(e.model, f"{e.slots} slots", f"{disks} disks"),
                                  f"{aid}:{e.name}"))
    for g in a.disk_groups:
        node.children.append(Node(g.name, "disk group", _join(g.raid.upper(), g.geometry, ", ".join(g.members),
                                                              g.owner and f"owner {g.owner}"), f"{aid}:group:{g.name}"))
    if a.spares:
        node.children.append(Node("hot spares", "spares", ", ".join(a.spares), aid))
    for p in a.pools:
        node.children.append(Node(p.name, "pool", _join(p.provisioning, p.raid.upper()), f"{aid}:pool:{p.name}"))
    for v in a.volumes:
        node.children.append(Node(v.name, "volume", _join(_num(v.size_gb, "GB"), v.group or v.pool,
                                                          ", ".join(v.purpose), v.drive), f"{aid}:{v.name}"))
    return node


def _slots(text: str) -> range:
    try:
        return parse_slot_range(text)
    except ValueError:
        return range(0)


def outline(bed: Any) -> list[Node]:
    """Top-level sections with their components; empty sections are left out."""
    sections = [
        ("Servers", [_server(s) for s in bed.servers]),
        ("Switches", [Node(w.id, f"{w.kind} switch", _join(w.model, w.port_count and f"{w.port_count} ports",
                                                           w.mtu and f"MTU {w.mtu}"), w.id,
                           [_port(w.id, p) for p in w.ports]) for w in bed.switches]),
        ("Networks", [Node(n.id, f"{n.role} network", _join(n.cidr, n.vlan and f"VLAN {n.vlan}"), n.id)
                      for n in bed.networks]),
        ("Storage arrays", [_array(a) for a in bed.arrays]),
        ("Virtual machines", [Node(v.id, "VM", _join(v.role, f"{v.vcpu} vCPU", _num(v.memory_gb, "GB"),
                                                     v.host and f"on {v.host}"), v.id) for v in bed.vms]),
        ("Clusters", [Node(c.id, "cluster", _join(", ".join(c.nodes), c.quorum), c.id,
                           [Node(n, "node", id=n) for n in c.nodes]) for c in bed.clusters]),
        ("Workloads", [Node(w.id, "workload", _join(w.tool, ", ".join(w.targets)), w.id) for w in bed.workloads]),
    ]
    return [Node(f"{title} ({len(items)})", "", "", "", items) for title, items in sections if items]


class ComponentTree(QTreeWidget):
    """Redraws from the document; selecting a row selects the component everywhere."""

    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.setColumnCount(3)
        self.setHeaderLabels(["Component", "Kind", "Details"])
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self._syncing = False
        self._refresh = QTimer(self, singleShot=True, interval=150, timeout=self._redraw)
        document.reset.connect(self._redraw)
        document.changed.connect(lambda _ids: self._refresh.start())
        selection.changed.connect(self._follow_selection)
        self.itemSelectionChanged.connect(self._publish_selection)
        self._redraw()

    def _redraw(self) -> None:
        self._syncing = True
        try:
            self.show_bed(self.document.bed)
            self.select_ids(set(self.selection.ids))
        finally:
            self._syncing = False

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

    def show_bed(self, bed: Any) -> None:
        self.clear()
        for section in outline(bed):
            self._add(self.invisibleRootItem(), section).setExpanded(True)
        for col in (0, 1):
            self.resizeColumnToContents(col)

    def show_message(self, text: str) -> None:
        self.clear()
        QTreeWidgetItem(self, [text])

    def component_count(self) -> int:
        count, stack = 0, [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            item = stack.pop()
            count += bool(item.data(0, ID_ROLE))
            stack += [item.child(i) for i in range(item.childCount())]
        return count

    def select_ids(self, ids: set[str]) -> None:
        self.clearSelection()
        first = None
        stack = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            item = stack.pop(0)
            if item.data(0, ID_ROLE) in ids:
                item.setSelected(True)
                first = first or item
            stack += [item.child(i) for i in range(item.childCount())]
        if first is not None:
            self.scrollToItem(first)

    def _add(self, parent: QTreeWidgetItem, node: Node) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [node.label, node.kind.replace("_", " "), node.detail])
        item.setData(0, ID_ROLE, node.id)
        item.setToolTip(2, node.detail)
        for child in node.children:
            self._add(item, child)
        return item
