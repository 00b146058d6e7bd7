"""Cables and dashed paths on the canvas: their items, filed under the devices they join, rerouted
once per event when a device they touch moves, and found under the mouse.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF

from app import diagram
from widgets.canvas.items import LinkItem


class LinkRouting:
    """Canvas part: link items follow their devices."""

    def _add_link(self, obj: Any, dashed: bool = False) -> LinkItem:
        item = LinkItem(obj, dashed, thin=len(self.devices) > diagram.ROUTED_MAX)
        (self.paths if dashed else self.links)[id(obj)] = item
        self._route(item)       # also files the item under its two devices
        self.scene().addItem(item)
        return item

    def _remove_link(self, key: int, dashed: bool = False) -> None:
        item = (self.paths if dashed else self.links).pop(key)
        for dev in item.ends:
            keys = self._links_at.get(dev)
            if keys is not None:
                keys.discard(key)
        self.scene().removeItem(item)

    def _link_item(self, key: int) -> LinkItem | None:
        return self.links.get(key) or self.paths.get(key)

    def _route(self, item: LinkItem) -> None:
        obj = item.model_obj
        a, b = (obj.initiator, obj.target) if item.dashed else (obj.a, obj.b)
        ends = (self._split(a)[0], self._split(b)[0])
        if ends != item.ends:   # an end was re-pointed (a rename, the property editor)
            key = id(obj)
            for dev in item.ends:
                self._links_at.get(dev, set()).discard(key)
            for dev in ends:
                self._links_at.setdefault(dev, set()).add(key)
            item.ends = ends
        rects, marks = {}, {}
        for ref in (a, b):
            dev = self._split(ref)[0]
            d = self.devices.get(dev)
            if d is None:
                item.hide()
                return
            pos = d.pos()
            rects[dev], marks[dev] = (pos.x(), pos.y(), d.w, d.h), d.marks
        obstacles = () if item.dashed else self._obstacle_rects()
        geometry = diagram.link_geometry(a, b, self.objects, rects, marks, obstacles)
        if geometry is None:
            item.hide()
            return
        item.set_geometry(*geometry)
        item.show()

    def _obstacle_rects(self) -> list[tuple[float, float, float, float]]:
        """Device bodies links route around (small beds only: the detour search is per link)."""
        if self._obstacles is None:
            self._obstacles = ([(d.pos().x(), d.pos().y(), d.w, d.h) for d in self.devices.values()]
                               if len(self.devices) <= diagram.ROUTED_MAX else [])
        return self._obstacles

    def device_moved(self, ident: str) -> None:
        """A device item moved (drag, undo, refresh): its links follow when the event is done."""
        self._obstacles = None
        item = self.devices.get(ident)
        if item is not None:
            self.far_changed(item.sceneBoundingRect())     # where it is now (its mover reported where it was)
        self._moved.add(ident)
        self._dirty_links |= self._links_at.get(ident, set())

    def _flush_links(self) -> None:
        dirty, self._dirty_links = self._dirty_links, set()
        moved, self._moved = self._moved, set()
        if moved and len(self.devices) <= diagram.ROUTED_MAX:
            # links that pass under a device's new place, or detoured around its old one, reroute
            for ident in moved:
                item = self.devices.get(ident)
                if item is not None:
                    for other in self.scene().items(item.body):
                        if isinstance(other, LinkItem) and not other.dashed:
                            dirty.add(id(other.model_obj))
            dirty |= {k for k, it in self.links.items() if it.polyline.count() > 4}
        for key in dirty:
            item = self._link_item(key)
            if item is not None:
                self._route(item)
        if dirty or moved:
            self._follow_paths()

    def _link_at(self, scene_pos: QPointF) -> LinkItem | None:
        tolerance = 5.0 / max(self.zoom(), 0.05)
        probe = QRectF(scene_pos.x() - tolerance, scene_pos.y() - tolerance, 2 * tolerance, 2 * tolerance)
        best, best_d = None, tolerance
        for item in self.scene().items(probe):
            if isinstance(item, LinkItem) and not item.dashed and item.isVisible():
                d = item.distance_to(scene_pos)
                if d <= best_d:
                    best, best_d = item, d
        return best
