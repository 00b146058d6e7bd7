"""Canvas part: devices seen from far away (a big bed fitted to the window) drawn in one pass.

Close up, each device item paints itself (and caches its picture).  Far away a device is its
shape, its colour, its badge and, where it is wide enough on screen, its name
(`diagram.paint_device` at a small level of detail), and 5,000 items each called from C++ into
Python cost far more than the drawing: every call takes the interpreter lock back from the
validation and methodology workers that start with the bed (about 1 ms each, 4-5 s for the
5,000-device bed's first frame).  So below FAR_ZOOM the items are marked as having no
contents (they stay for selection, hit tests and tool tips) and the view draws them all in
its foreground pass, in one Python call per frame, with the same painting code.
"""
from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from app import diagram
from app.diagram.devices import FAR_NAME_MIN_SCREEN_W
from topology.model import Chassis, Server, StorageArray, Switch

FAR_ZOOM = 0.3          # app/diagram/devices.py draws a device as its shape and name below this
NO_CONTENTS = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
DRAWN = (Server, Switch, StorageArray, Chassis)


class FarDrawing:
    """Mixed into Canvas (devices, objects, shown, badges, excluded_ids, vms_of, blades_of)."""

    far_drawn = False       # the device items are drawn here, not by themselves

    def follow_far_zoom(self) -> None:
        """Before the items are drawn: hand the devices to the one-pass drawing below FAR_ZOOM,
        back to their own painting above it."""
        far = self.transform().m11() < FAR_ZOOM
        if far != self.far_drawn:
            self.far_drawn = far
            for item in self.devices.values():
                item.setFlag(NO_CONTENTS, far)

    def mark_far(self, item: QGraphicsItem) -> None:
        """A device item made while the view is far away starts drawn by the view."""
        if self.far_drawn:
            item.setFlag(NO_CONTENTS, True)

    def draw_far_devices(self, painter: QPainter, exposed: QRectF) -> None:
        """Every device in `exposed` (scene coordinates), as its item would paint it this far away:
        the plain bodies in one drawRects per colour; a device selected, out of use, with a badge
        or wide enough on screen for its name one by one, as its item paints it."""
        if not self.far_drawn:
            return
        self._draw_devices(painter, exposed, ((ident, item.x(), item.y(), item.w, item.h, item.marks, item.expanded)
                                              for ident, item in self.devices.items()))

    def draw_preview(self, painter: QPainter, exposed: QRectF) -> None:
        """While a big bed is built (widgets/canvas/building.py): the devices that have no item yet,
        from the model and the layout, as their items will paint them (names where wide enough)."""
        if not (self.building and self.previewing):
            return
        made, boxes = self.devices, []
        for ident, obj in self.objects.items():
            if ident not in made and isinstance(obj, DRAWN):
                box = self._position_box(ident, obj)
                boxes.append((ident, box.x, box.y, box.w, box.h, {}, False))
        self._draw_devices(painter, exposed, boxes)

    def _draw_devices(self, painter: QPainter, exposed: QRectF, devices: Iterable[tuple]) -> None:
        lod = painter.worldTransform().m11()
        left, top, right, bottom = exposed.left(), exposed.top(), exposed.right(), exposed.bottom()
        objects, shown, excluded, badges = self.objects, self.shown, self.excluded_ids, self.badges
        selected = {getattr(i, "ident", None) for i in self.scene().selectedItems()}
        named_from = FAR_NAME_MIN_SCREEN_W / lod if lod > 0 else float("inf")
        plain: dict[tuple, list[QRectF]] = {}
        styles: dict[tuple, tuple] = {}
        one_by_one = []
        for ident, x, y, w, h, marks, expanded in devices:
            if x > right or y > bottom or x + w < left or y + h < top:
                continue
            dev = objects.get(ident)
            if dev is None:
                continue
            dev = shown(ident, dev)
            if ident in selected or ident in excluded or ident in badges or w >= named_from:
                one_by_one.append((ident, dev, x, y, w, h, marks, expanded))
                continue
            key = (type(dev), getattr(dev, "role", None), getattr(dev, "kind", None))
            if key not in styles:
                styles[key] = diagram.body_style(dev)
            plain.setdefault(key, []).append(QRectF(x, y, w, h))
        for key, rects in plain.items():
            fill, border = styles[key]
            painter.setBrush(fill)
            painter.setPen(QPen(border, 1.2))
            painter.drawRects(rects)
        for ident, dev, x, y, w, h, marks, expanded in one_by_one:
            painter.save()
            painter.translate(x, y)
            if ident in excluded:
                painter.setOpacity(0.35)
            contents = self.blades_of.get(ident, ()) if isinstance(dev, Chassis) else self.vms_of.get(ident, ())
            diagram.paint_device(painter, dev, w, h, vms=contents, selected=ident in selected,
                                 badge=badges.get(ident), lod=lod, marks=marks, expanded=expanded)
            painter.restore()
