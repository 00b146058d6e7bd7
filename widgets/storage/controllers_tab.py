"""The Controllers & ports tab: each controller of the array (cache, mode, how many disk groups
it owns) with its ports."""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem

from widgets.storage.page_parts import style_list


class ControllersTab(QTreeWidget):
    def __init__(self):
        super().__init__()
        style_list(self, ["Controller / port", "Kind", "Speed", "Address", "Roles", "MTU", "Label"])
        self.setObjectName("controllersTree")
        self.setRootIsDecorated(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)

    def fill(self, array) -> None:
        self.clear()
        if array is None:
            return
        owned: dict[str, int] = {}
        for g in array.disk_groups:
            owned[g.owner] = owned.get(g.owner, 0) + 1
        for c in array.controllers:
            bits = [f"{c.cache_gb:g} GB cache" if c.cache_gb is not None else "cache not stated", c.mode,
                    f"owns {owned.get(c.name, 0)} group(s)"]
            top = QTreeWidgetItem(self, [f"{c.name} — {' · '.join(bits)}"])
            top.setFirstColumnSpanned(True)
            for p in c.ports:
                speed = f"{p.speed_gbps:g} Gb/s" if p.speed_gbps else ""
                QTreeWidgetItem(top, [p.name, p.kind, speed, p.address or p.wwpn, ", ".join(p.roles),
                                      str(p.mtu) if p.mtu else "", p.label])
            top.setExpanded(True)
        for i in range(self.columnCount()):
            self.resizeColumnToContents(i)
