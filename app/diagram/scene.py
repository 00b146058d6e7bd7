"""The whole bed drawn into one rectangle: links, paths without cabling, devices, chips,
findings badges, title and legend."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF

from app.diagram.devices import Badge, paint_badge, paint_chip, paint_device
from app.diagram.findings import badges
from app.diagram.geometry import PortMark, Rect, content_rect, link_geometry, port_marks, ref_parts, uncabled_paths
from app.diagram.style import LEGEND_KEYS, ROLE_LABELS, ROUTED_MAX, colour, draw_text, link_pen
from topology.layout import Box, chassis_contents, drawn_groups, group_member_ids, layout, vms_by_host
from topology.model import ArrayGroup, Chassis


def paint_link(painter: QPainter, line: QPolygonF, role: str, kind: str = "cable", *, dashed: bool = False) -> None:
    painter.setPen(link_pen(role, kind, dashed))
    painter.drawPolyline(line)


def legend_size() -> tuple[float, float]:
    return 190.0, 26.0 + 17.0 * (len(LEGEND_KEYS) + 3)


def paint_legend(painter: QPainter, origin: QPointF) -> QRectF:
    w, h = legend_size()
    box = QRectF(origin.x(), origin.y(), w, h)
    painter.setPen(QPen(QColor("#b0b7c0"), 1.0))
    painter.setBrush(QColor(255, 255, 255, 235))
    painter.drawRoundedRect(box, 6, 6)
    draw_text(painter, box.left() + 10, box.top() + 5, w - 20, "Legend", 11, bold=True)
    y = box.top() + 27
    for key in LEGEND_KEYS:
        painter.setPen(link_pen(key, "isl" if key == "isl" else "cable"))
        painter.drawLine(QLineF(box.left() + 10, y + 7, box.left() + 38, y + 7))
        painter.setPen(QPen(colour(key).darker(130), 1.0))
        painter.setBrush(colour(key))
        if key != "isl":
            painter.drawRect(QRectF(box.left() + 19, y + 2, 10, 10))
        draw_text(painter, box.left() + 46, y, w - 56, ROLE_LABELS[key], 10)
        y += 17
    painter.setPen(link_pen("iscsi", "cable", dashed=True))
    painter.drawLine(QLineF(box.left() + 10, y + 7, box.left() + 38, y + 7))
    draw_text(painter, box.left() + 46, y, w - 56, "Path (cabling not drawn)", 10)
    y += 17
    for sev, label in (("error", "Errors found"), ("warning", "Warnings only")):
        paint_badge(painter, QPointF(box.left() + 24, y + 7), Badge(sev, 2))
        draw_text(painter, box.left() + 46, y, w - 56, label, 10)
        y += 17
    return box


def render_bed(bed: Any, painter: QPainter, target_rect: QRectF, findings: Iterable[Any] | None = None, *,
               positions: dict[str, Box] | None = None, legend: bool = True, title: bool = True) -> QRectF:
    """Draw the whole bed scaled into `target_rect` (aspect kept, centred).

    Positions come from the model's x/y, else from the automatic layout (or from
    `positions`, which the canvas passes so an export matches the screen).  Returns the
    scene rectangle that was drawn.
    """
    boxes = positions if positions is not None else layout(bed)
    hosted = vms_by_host(bed)
    devices = {d.id: d for d in (*bed.servers, *bed.switches, *bed.arrays, *bed.chassis)}
    chips = {n.id: n for n in bed.networks}
    chips.update({v.id: v for v in bed.vms if v.host not in devices})
    chips.update({g.name: g for g in drawn_groups(bed)})
    vm_hosts = {v.id: v.host for v in bed.vms if v.host in devices}
    scene = content_rect({k: b for k, b in boxes.items() if k in devices or k in chips})
    lw, lh = legend_size()
    header = 34.0 if title else 0.0
    drawn = QRectF(scene.left() - 30, scene.top() - 30 - header, scene.width() + 60 + (lw + 30 if legend else 0),
                   max(scene.height(), lh) + 60 + header)
    scale = min(target_rect.width() / drawn.width(), target_rect.height() / drawn.height())
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    painter.translate(target_rect.center())
    painter.scale(scale, scale)
    painter.translate(-drawn.center())
    if title:
        draw_text(painter, drawn.left() + 30, drawn.top() + 16, drawn.width() - 60, bed.bed.name, 16, bold=True)
    marks: dict[str, Mapping[str, PortMark]] = {}
    rects: dict[str, Rect] = {}
    for ident, dev in devices.items():
        b = boxes.get(ident)
        if b is None:
            continue
        rects[ident] = (b.x, b.y, b.w, b.h)
        marks[ident] = port_marks(dev, b.w, b.h)
    cabled: dict[str, set[str]] = {}
    obstacles = list(rects.values()) if len(rects) <= ROUTED_MAX else []
    for link in bed.links:
        line = link_geometry(link.a, link.b, devices, rects, marks, obstacles)
        if line is None:
            continue
        poly, role = line
        for ref in (link.a, link.b):
            d, p = ref_parts(ref, devices)
            if p:
                cabled.setdefault(d, set()).add(p)
        paint_link(painter, poly, role, link.kind)
    for path in uncabled_paths(bed, devices):
        line = link_geometry(path.initiator, path.target, devices, rects, marks)  # logical: through the switches
        if line is not None:
            paint_link(painter, line[0], line[1], dashed=True)
    found = badges(findings or (), {**devices, **chips}, vm_hosts)
    for ident, dev in devices.items():
        r = rects.get(ident)
        if r is None:
            continue
        painter.save()
        painter.translate(r[0], r[1])
        blades = chassis_contents(bed, ident) if isinstance(dev, Chassis) else hosted.get(ident, ())
        paint_device(painter, dev, r[2], r[3], vms=blades, badge=found.get(ident),
                     cabled=cabled.get(ident, ()), marks=marks[ident])
        painter.restore()
    for ident, item in chips.items():
        b = boxes.get(ident)
        if b is None:
            continue
        painter.save()
        painter.translate(b.x, b.y)
        members = group_member_ids(bed, ident) if isinstance(item, ArrayGroup) else ()
        paint_chip(painter, item, b.w, b.h, badge=found.get(ident), members=members)
        painter.restore()
    if legend:
        paint_legend(painter, QPointF(scene.right() + 30, scene.top()))
    painter.restore()
    return drawn
