"""The canvas's scene items.  Each holds only the id of what it shows (a link item holds
the model's Link object, which has no id) and paints it from the model through
app/diagram/, so the screen, the exported image and the printed diagram agree.

Bounding rectangles and link shapes stay in C++ (QGraphicsRectItem / QGraphicsPathItem):
the scene's BSP index asks for them constantly, and a Python override would cost a call
per item per query on a bed of thousands of devices.  Only `paint` (visible items only)
and `itemChange` (moves) are Python.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem

from app import diagram
from topology import layout
from topology.device_face import chassis_face
from topology.layout import drawn_size
from topology.model import ArrayGroup, Chassis, Server

if TYPE_CHECKING:  # pragma: no cover
    from widgets.canvas.view import Canvas

M = diagram.MARGIN + 4   # room around the body: selection halo, port markers, badge
PORT_GRAB = 4.0          # a port marker is this much easier to hit than it looks


class DeviceItem(QGraphicsRectItem):
    """A server, switch, storage array or blade chassis."""

    def __init__(self, canvas: Canvas, ident: str):
        super().__init__()
        self.canvas = canvas
        self.ident = ident
        self.w = self.h = 0.0
        self.marks: Mapping[str, diagram.PortMark] = {}
        self.expanded = False       # a switch's port strip at full size (selected, or a cable over it)
        self.setPen(QPen(Qt.PenStyle.NoPen))
        # not ItemIsMovable: the canvas moves the selection itself (see Editing._drag_to)
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        # text is the costly part of a device: paint it once per zoom level, then blit
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def refresh(self, dev: Any, contents: int) -> None:
        """Take the size and port markers from the model (contents: hosted VMs or chassis blades)."""
        w, h = drawn_size(dev, contents if isinstance(dev, Server) else 0, expanded=self.expanded)
        if (w, h) != (self.w, self.h):
            was = self.sceneBoundingRect()
            self.w, self.h = w, h
            self.setRect(QRectF(-M, -M, w + 2 * M, h + 2 * M))
            self.canvas.far_changed(was)        # the area it took before (after the change: see far_changed)
        self.marks = diagram.port_marks(dev, w, h, self.expanded)
        self.update()

    def update(self, *rect) -> None:
        """Repainted (a badge, a new look): far away the view draws it (widgets/canvas/far_drawing.py)."""
        super().update(*rect)
        self.canvas.far_changed(self.sceneBoundingRect())   # after Qt's own update: see far_changed

    @property
    def body(self) -> QRectF:
        """The device body in scene coordinates."""
        p = self.pos()
        return QRectF(p.x(), p.y(), self.w, self.h)

    def paint(self, painter, option, widget=None) -> None:
        canvas = self.canvas
        dev = canvas.objects.get(self.ident)
        if dev is None:
            return
        dev = canvas.shown(self.ident, dev)            # as the chosen configuration has it
        if self.ident in canvas.excluded_ids:
            painter.setOpacity(0.35)                    # not in use in the chosen configuration
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        contents = canvas.blades_of.get(self.ident, ()) if isinstance(dev, Chassis) else \
            canvas.vms_of.get(self.ident, ())
        diagram.paint_device(painter, dev, self.w, self.h, vms=contents, selected=self.isSelected(),
                             highlight=canvas.highlight, badge=canvas.badges.get(self.ident),
                             cabled=canvas.cabled.get(self.ident, ()), lod=lod, marks=self.marks,
                             expanded=self.expanded)

    def port_at(self, local: QPointF) -> str | None:
        """The port marker under a point (the nearest, where the grab margins of small markers overlap)."""
        best, best_d = None, float("inf")
        for name, m in self.marks.items():
            r = m.rect
            grab = min(PORT_GRAB, max(1.0, (r.width() - 4) / 2)) if r.width() < 8 else PORT_GRAB
            if r.adjusted(-grab, -grab, grab, grab).contains(local):
                d = (r.center() - local).manhattanLength()
                if d < best_d:
                    best, best_d = name, d
        return best

    def bay_at(self, local: QPointF) -> Any:
        """The chassis bay under a point that holds a blade or I/O module (a BayTile), else None."""
        dev = self.canvas.objects.get(self.ident)
        contents = self.canvas.blades_of.get(self.ident)
        if not contents or not isinstance(dev, Chassis):
            return None
        face = chassis_face(dev, contents, self.w, self.h)
        return next((t for t in face.blades + face.io
                     if t.occupants and QRectF(t.x, t.y, t.w, t.h).contains(local)), None)

    def vm_at(self, local: QPointF) -> str | None:
        vms = self.canvas.vms_of.get(self.ident, ())
        if not vms:
            return None
        rects = diagram.vm_chip_rects(self.w - 8, len(vms))
        for i, r in enumerate(rects):
            if r.contains(local):
                if i == len(rects) - 1 and len(vms) > len(rects):
                    return None   # the "+N more" chip: the host itself
                return vms[i].id
        return None


class ChipItem(QGraphicsRectItem):
    """A network, or a VM no host holds: chips in a strip above the drawing (the model gives
    them no position, so they are selectable but not movable)."""

    def __init__(self, canvas: Canvas, ident: str):
        super().__init__()
        self.canvas = canvas
        self.ident = ident
        self.w = self.h = 0.0
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)

    def set_box(self, x: float, y: float, w: float, h: float) -> None:
        if (w, h) != (self.w, self.h):
            self.w, self.h = w, h
            self.setRect(QRectF(-4, -12, w + 16, h + 16))
        self.setPos(x, y)
        self.update()

    def paint(self, painter, option, widget=None) -> None:
        obj = self.canvas.objects.get(self.ident)
        if obj is not None:
            if self.ident in self.canvas.excluded_ids:
                painter.setOpacity(0.35)
            members: tuple | list = ()
            if isinstance(obj, ArrayGroup):
                obj = self.canvas.shown(self.ident, obj)       # the chosen configuration's volumes
                members = layout.group_member_ids(self.canvas.bed, self.ident)
            diagram.paint_chip(painter, obj, self.w, self.h, selected=self.isSelected(),
                               badge=self.canvas.badges.get(self.ident), members=members)


class LinkItem(QGraphicsPathItem):
    """A cable (solid) or a path whose cabling the bed does not give (dashed).  Painted by Qt
    itself from the path and pen: a big bed shows thousands of these at once."""

    def __init__(self, model_obj: Any, dashed: bool = False, thin: bool = False):
        super().__init__()
        self.model_obj = model_obj
        self.dashed = dashed
        self.thin = thin            # hair lines: the raster engine's fast path, for big beds
        self.role = ""
        self.ends: tuple[str, str] = ("", "")
        self.selected = False
        self.polyline = QPolygonF()
        self.setZValue(-2 if dashed else -1)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    @property
    def kind(self) -> str:
        return getattr(self.model_obj, "kind", "cable") if not self.dashed else "path"

    def set_geometry(self, polyline: QPolygonF, role: str) -> None:
        self.polyline = polyline
        path = QPainterPath()
        path.addPolygon(polyline)
        self.setPath(path)
        if role != self.role:
            self.role = role
            self._restyle()

    def set_selected(self, on: bool) -> None:
        if on != self.selected:
            self.selected = on
            self._restyle()

    def _restyle(self) -> None:
        if self.selected:
            pen = QPen(diagram.SELECT, 4.0)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        else:
            pen = diagram.link_pen(self.role or "lan", "cable" if self.dashed else self.kind, self.dashed)
            if self.thin:
                pen = QPen(pen)
                pen.setWidthF(0 if pen.widthF() < 2 else 2)
                pen.setCosmetic(True)
        self.setPen(pen)

    def distance_to(self, p: QPointF) -> float:
        """Distance from a scene point to the drawn line (clicks select a link within a few pixels)."""
        best = float("inf")
        pts = [self.polyline.at(i) for i in range(self.polyline.count())]
        for a, b in zip(pts, pts[1:]):
            dx, dy = b.x() - a.x(), b.y() - a.y()
            length2 = dx * dx + dy * dy
            t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p.x() - a.x()) * dx + (p.y() - a.y()) * dy) / length2))
            cx, cy = a.x() + t * dx - p.x(), a.y() + t * dy - p.y()
            best = min(best, (cx * cx + cy * cy) ** 0.5)
        return best
