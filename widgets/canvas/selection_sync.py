"""The canvas and the shared selection: what is selected in the scene is published once per
change, and a selection made elsewhere (tree, findings, storage) is shown here.
"""
from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath, QTransform

from app import diagram
from widgets.canvas.items import ChipItem, DeviceItem

FIND_MARGIN = 120          # scene units around a match Find zooms to
FIND_PORT_ZOOM = 1.6       # the zoom at which a device draws its ports' names (app/diagram/devices.py)


class SelectionSync:
    """Canvas part: scene selection <-> app.selection.Selection."""

    def selected_ids(self) -> list[str]:
        out = [i.ident for i in self.scene().selectedItems() if isinstance(i, (DeviceItem, ChipItem))]
        out += [i for i in self.highlight if i in {v.id for vms in self.vms_of.values() for v in vms}]
        return out

    def _scene_selection_changed(self) -> None:
        # the scene reports every single change (5,000 of them for Select All): publish once
        if not self._syncing:
            self._publish_timer.start()

    def _publish_selection(self) -> None:
        self._publish_timer.stop()
        ids = frozenset(i.ident for i in self.scene().selectedItems() if isinstance(i, (DeviceItem, ChipItem)))
        self._published = ids
        self._set_highlight(frozenset())
        self._sync_expanded()
        self.selection.set(ids)

    def _follow_selection(self, ids: Iterable[str]) -> None:
        ids = frozenset(ids)
        if ids == self._published and not self._syncing:
            return
        self._published = None
        wanted = {i for i in ids if i in self.devices or i in self.chips}
        self._syncing = True
        try:
            for item in self.scene().selectedItems():
                if getattr(item, "ident", None) not in wanted:
                    item.setSelected(False)
            for ident in wanted:
                item = self.devices.get(ident) or self.chips.get(ident)
                if not item.isSelected():
                    item.setSelected(True)
        finally:
            self._syncing = False
        self._set_highlight(frozenset(i for i in ids if i not in wanted))
        self._sync_expanded()

    def _set_highlight(self, ids: frozenset[str]) -> None:
        """Ports and VMs drawn as selected inside their device."""
        if ids == self.highlight:
            return
        changed = ids ^ self.highlight
        self.highlight = ids
        vm_hosts = {vm.id: host for host, vms in self.vms_of.items() for vm in vms}
        for ident in changed:
            dev = diagram.device_of_subject(ident, self.devices, vm_hosts)
            if dev is not None:
                self.devices[dev].update()

    def _select_vm(self, vm_id: str) -> None:
        self._syncing = True
        try:
            self.scene().clearSelection()
        finally:
            self._syncing = False
        self._published = frozenset({vm_id})
        self._set_highlight(frozenset({vm_id}))
        self.selection.set({vm_id})

    def _scene_rect_of(self, ids: Iterable[str]) -> QRectF:
        vm_hosts = {vm.id: host for host, vms in self.vms_of.items() for vm in vms}
        rect = QRectF()
        for ident in ids:
            dev = diagram.device_of_subject(ident, {**self.devices, **self.chips}, vm_hosts)
            item = self.devices.get(dev) or self.chips.get(dev) if dev else None
            if item is not None:
                rect = rect.united(item.sceneBoundingRect())
        return rect

    def centre_on(self, ids: Iterable[str]) -> None:
        """Bring these components into sight (a finding was clicked, say) and select them.  What is
        already wholly in sight stays where it is: the drawing does not move under the pointer."""
        self.finish_build()
        ids = list(ids)
        rect = self._scene_rect_of(ids)
        if not rect.isNull():
            visible = self.mapToScene(self.viewport().rect()).boundingRect()
            if not visible.contains(rect):
                if rect.width() > visible.width() or rect.height() > visible.height():
                    self.fitInView(rect.adjusted(-60, -60, 60, 60), Qt.AspectRatioMode.KeepAspectRatio)
                self.centerOn(rect.center())
        if set(ids) != set(self.selection.ids):
            self._follow_selection(ids)

    def zoom_to(self, ids: Iterable[str]) -> None:
        """Find's jump: the match centred at a zoom where it reads — 100 % for a device, port names'
        zoom for a port — or for a device the zoom that shows all of it; a closer zoom already there is kept."""
        self.finish_build()
        ids = list(ids)
        rect = self._scene_rect_of(ids)
        if rect.isNull():
            return
        port = any(":" in i and i.partition(":")[0] in self.devices for i in ids)
        view = self.viewport().rect()
        fits = min(view.width() / (rect.width() + FIND_MARGIN), view.height() / (rect.height() + FIND_MARGIN))
        readable = FIND_PORT_ZOOM if port else 1.0
        now = self.zoom()
        if port:        # a port's name reads at one zoom whatever the size of its device: centred there
            target = max(now, readable)
        else:
            target = min(fits, max(now, readable)) if now <= fits else fits
        self.setTransform(QTransform.fromScale(target, target))
        self.centerOn(rect.center())

    def select_all(self) -> None:
        area = QPainterPath()
        area.addRect(self.scene().sceneRect())
        self._syncing = True
        try:
            self.scene().setSelectionArea(area, Qt.ItemSelectionOperation.ReplaceSelection,
                                          Qt.ItemSelectionMode.IntersectsItemBoundingRect)
        finally:
            self._syncing = False
        self._publish_selection()

    def _clear_link_selection(self) -> None:
        for item in self.links.values():
            item.set_selected(False)
