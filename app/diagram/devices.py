"""One device painted at the origin (server with its VMs, switch, array with its
enclosures, blade chassis), its port markers, a network or VM chip, a findings badge:
red with the count when any error is open, amber for warnings only."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from app.diagram.geometry import PortMark, port_marks, vm_chip_rects
from app.diagram.style import (
    BADGE_R,
    ERROR,
    SELECT,
    SUBTLE,
    TEXT,
    WARNING,
    body_style,
    colour,
    draw_text,
    elide,
    font,
    metrics,
)
from topology.device_face import (
    GROUP_HEAD_H,
    GROUP_LINE_H,
    GROUP_VOLUMES_SHOWN,
    array_line,
    chassis_face,
    group_card_lines,
    server_lines,
    switch_line,
    switch_strip,
)
from topology.index import shown_slots
from topology.layout import network_label
from topology.model import VM, ArrayGroup, Chassis, Network, Server, StorageArray, Switch


@dataclass
class Badge:
    severity: str                       # "error" or "warning"
    count: int
    messages: tuple[str, ...] = ()


def paint_device(painter: QPainter, dev: Any, w: float, h: float, *, vms: Sequence[VM] = (),
                 selected: bool = False, highlight: Iterable[str] = (), badge: Badge | None = None,
                 cabled: Iterable[str] = (), lod: float = 1.0, marks: Mapping[str, PortMark] | None = None,
                 expanded: bool = False) -> None:
    """One device at the origin, w x h.  `highlight` names ports and VMs shown as selected;
    `expanded`: a switch's port strip at full size with the ports' names."""
    fill, border = body_style(dev)
    body = QRectF(0, 0, w, h)
    if selected:
        halo = QColor(SELECT)
        halo.setAlpha(70)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(halo)
        painter.drawRoundedRect(body.adjusted(-5, -5, 5, 5), 9, 9)
    painter.setBrush(fill)
    painter.setPen(QPen(SELECT if selected else border, 2.2 if selected else 1.2))
    if lod < 0.3:  # far away: the shape, its colour and its name where there is room on screen for it
        painter.drawRect(body)
        _far_name(painter, dev.id, w, h, lod)
        if badge is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(far_badge_colour(badge))
            painter.drawRect(far_badge_rect(0, 0, w))
        return
    painter.drawRoundedRect(body, 6, 6)
    highlight = set(highlight)
    if isinstance(dev, Server):
        _paint_server(painter, dev, w, h, vms, highlight, lod)
    elif isinstance(dev, Switch):
        _paint_switch(painter, dev, w, h, border, expanded)
    elif isinstance(dev, StorageArray):
        _paint_array(painter, dev, w, h, border, marks or port_marks(dev, w, h))
    elif isinstance(dev, Chassis):
        _paint_chassis(painter, dev, w, h, vms, border)
    if marks is None:
        marks = port_marks(dev, w, h, expanded)
    _paint_ports(painter, dev, marks, set(cabled), highlight, lod)
    if isinstance(dev, Switch) and dev.ports:
        # expanded, the strip has a row for its names; compact and close up, they go above it
        _paint_port_names(painter, marks, 7 if expanded else 5, expanded or lod >= 2.5, above=not expanded)
    elif lod >= 1.6:      # close up there is room for the port names
        _paint_port_names(painter, marks, 7, True)
    if badge is not None:
        paint_badge(painter, QPointF(w - 2, 2), badge)


def far_badge_rect(x: float, y: float, w: float) -> QRectF:
    """Far away a device's badge is a block of its colour in the body's top right corner."""
    return QRectF(x + w - 24, y, 24, 16)


def far_badge_colour(badge: Badge) -> QColor:
    return ERROR if badge.severity == "error" else WARNING


FAR_NAME_SCREEN_PX = 11      # a far device's name is this tall on screen, whatever the zoom
FAR_NAME_MIN_SCREEN_W = 30   # ... when the device is at least this wide on screen


def _far_name(painter: QPainter, text: str, w: float, h: float, lod: float) -> None:
    """The name of a device drawn small (a big bed fitted to the window): the details are gone,
    the name stays readable while the device is wide enough on screen for a few letters."""
    if w * lod < FAR_NAME_MIN_SCREEN_W:
        return
    px = min(int(h * 0.7), int(FAR_NAME_SCREEN_PX / lod) // 4 * 4 + 4)    # steps of 4: few fonts made
    if px * lod < 7:
        return
    draw_text(painter, 3, max(0.0, (h - px - 5) / 2), w - 6, text, px, bold=True)


def _title(painter: QPainter, x: float, y: float, w: float, text: str) -> None:
    """The device's id, bold; a long id steps down in size before it is elided."""
    px = 13
    while px > 10 and metrics(px, True).horizontalAdvance(text) > w:
        px -= 1
    draw_text(painter, x, y, w, text, px, bold=True)


def _paint_server(painter: QPainter, s: Server, w: float, h: float, vms: Sequence[VM], highlight: set[str],
                  lod: float) -> None:
    _title(painter, 8, 3, w - 28, s.id)
    first, system = server_lines(s)
    draw_text(painter, 8, 20, w - 16, first, 10, colour_=SUBTLE)
    draw_text(painter, 8, 33, w - 16, system, 10, colour_=SUBTLE)
    if vms:
        paint_vm_chips(painter, QRectF(4, 50, w - 8, h - 50), vms, highlight)


def paint_vm_chips(painter: QPainter, area: QRectF, vms: Sequence[VM], highlight: set[str]) -> None:
    rects = vm_chip_rects(area.width(), len(vms), area.top(), area.left())
    overflow = len(vms) - len(rects)
    painter.setFont(font(9))
    for i, r in enumerate(rects):
        more = overflow > 0 and i == len(rects) - 1
        vm = vms[i]
        on = not more and vm.id in highlight
        painter.setPen(QPen(SELECT if on else QColor("#8796a8"), 1.6 if on else 0.8))
        painter.setBrush(QColor("#d6e9fb") if on else QColor("#ffffff"))
        painter.drawRoundedRect(r, 3, 3)
        painter.setPen(TEXT)
        label = f"+{overflow + 1} more" if more else vm.id
        painter.drawText(r.adjusted(3, 0, -2, 0), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         elide(label, 9, r.width() - 5))


def _paint_switch(painter: QPainter, sw: Switch, w: float, h: float, border: QColor, expanded: bool) -> None:
    below = switch_strip(len(sw.ports), expanded, w).depth if sw.ports else 0.0
    _title(painter, 8, 4 + below, w - 28, sw.id)
    draw_text(painter, 8, 21 + below, w - 16, switch_line(sw), 10, colour_=SUBTLE)
    if sw.ports:
        return          # its own ports are drawn: no need for the placeholder slots
    # a row of little port slots: reads as a switch at a glance
    painter.setPen(Qt.PenStyle.NoPen)
    slot = QColor(border)
    slot.setAlpha(60)
    painter.setBrush(slot)
    n = int((w - 16) // 8)
    for i in range(n):
        painter.drawRect(QRectF(8 + i * 8, h - 8, 5, 4))


def _paint_array(painter: QPainter, a: StorageArray, w: float, h: float, border: QColor,
                 marks: Mapping[str, PortMark]) -> None:
    by_ctrl: dict[str, list[PortMark]] = {}
    for m in marks.values():
        by_ctrl.setdefault(m.controller, []).append(m)
    ctrl_fill = QColor("#fbf8f4")
    for name, ms in by_ctrl.items():
        left = min(m.rect.left() for m in ms) - 3
        right = max(m.rect.right() for m in ms) + 3
        r = QRectF(left, 9, right - left, 19)
        painter.setPen(QPen(border, 0.8))
        painter.setBrush(ctrl_fill)
        painter.drawRoundedRect(r, 3, 3)
        draw_text(painter, r.left() + 1, r.top() + 4, r.width() - 2, name, 9, colour_=SUBTLE,
              align=Qt.AlignmentFlag.AlignHCenter)
    _title(painter, 8, 31, w - 28, a.id)
    draw_text(painter, 8, 47, w - 16, array_line(a), 10, colour_=SUBTLE)
    _paint_enclosures(painter, a, QRectF(8, 64, w - 16, h - 68))


def _paint_enclosures(painter: QPainter, a: StorageArray, area: QRectF) -> None:
    from topology.index import parse_slot_range
    if not a.enclosures:
        if a.max_disks:
            draw_text(painter, area.left(), area.top(), area.width(), f"up to {a.max_disks} disks", 9, colour_=SUBTLE)
        return
    enc = a.enclosures[0]
    filled: dict[int, str] = {}
    total = 0
    for e in a.enclosures:
        for ds in e.disks:
            try:
                slots = parse_slot_range(ds.slots)
            except ValueError:
                continue
            total += len(slots)
            if e is enc:
                for s in slots:
                    filled[s] = ds.media
    label_w = 0.0
    if len(a.enclosures) > 1:
        label = f"{enc.name} +{len(a.enclosures) - 1} · {total} disks"
    else:
        label = f"{enc.name} · {total} disks"
    label_w = min(metrics(9).horizontalAdvance(label) + 6, area.width() * 0.55)
    slots = max(shown_slots(enc), 1)
    slot_w = min(9.0, (area.width() - label_w) / slots)
    painter.setPen(QPen(QColor("#8d7b68"), 0.6))
    for s in range(slots):
        media = filled.get(s)
        painter.setBrush(QColor("#ffffff") if media is None else
                         QColor("#3aa39a") if media in ("ssd", "nvme") else QColor("#6d5c4b"))
        painter.drawRect(QRectF(area.left() + s * slot_w, area.top() + 2, max(slot_w - 1.5, 1), 12))
    draw_text(painter, area.left() + slots * slot_w + 4, area.top(), label_w, label, 9, colour_=SUBTLE)


def _paint_chassis(painter: QPainter, c: Chassis, w: float, h: float, contents: Sequence[Any],
                   border: QColor) -> None:
    """The chassis with its blades and I/O modules drawn in the bays they state (topology.device_face
    places them; one whose bay is not stated is named in a note, never put in an assumed bay)."""
    _title(painter, 8, 4, w - 28, c.id)
    draw_text(painter, 8, 21, w - 16, c.model or "blade chassis", 10, colour_=SUBTLE)
    face = chassis_face(c, contents, w, h)
    for tile in face.blades:
        r = QRectF(tile.x, tile.y, tile.w, tile.h)
        painter.setPen(QPen(border, 0.7))
        painter.setBrush(QColor("#9fa8da") if tile.occupants else QColor("#ffffff"))
        painter.drawRect(r)
        painter.setFont(font(8))
        painter.setPen(SUBTLE if not tile.occupants else TEXT)
        number = QRectF(r.left(), r.bottom() - 12, r.width(), 11)
        painter.drawText(number, int(Qt.AlignmentFlag.AlignCenter), str(tile.bay))
        if tile.occupants and r.height() > 24:
            # the blade's name up the bay, as the blade stands in it
            painter.save()
            painter.translate(r.left() + r.width() / 2 + 4, r.bottom() - 14)
            painter.rotate(-90)
            room = r.height() - 16
            painter.setFont(font(9 if r.width() >= 14 else 8))
            painter.drawText(QRectF(0, -6, room, 12), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             elide(", ".join(tile.occupants), 9, room))
            painter.restore()
    for tile in face.io:
        r = QRectF(tile.x, tile.y, tile.w, tile.h)
        painter.setPen(QPen(border, 0.8))
        painter.setBrush(QColor("#c5cae9"))
        painter.drawRoundedRect(r, 2, 2)
        draw_text(painter, r.left() + 3, r.top() + (r.height() - 13) / 2, r.width() - 5,
                  f"I/O {tile.bay} · " + ", ".join(tile.occupants), 8)
    if face.notes:
        draw_text(painter, 8, h - 16, w - 16, "; ".join(face.notes), 9, colour_=SUBTLE)


def _paint_ports(painter: QPainter, dev: Any, marks: Mapping[str, PortMark], cabled: set[str], highlight: set[str],
                 lod: float) -> None:
    dev_id = getattr(dev, "id", "")
    for m in marks.values():
        c = colour(m.role)
        on = f"{dev_id}:{m.name}" in highlight
        if on:
            painter.setPen(QPen(SELECT, 2.4))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(m.rect.adjusted(-3, -3, 3, 3))
        painter.setPen(QPen(c.darker(130), 1.0))
        # a cabled port is filled; an open one shows its colour as a ring (a switch port with no
        # role of its own is an empty box until a cable takes it)
        cabled_here = m.name in cabled
        painter.setBrush(c if cabled_here or m.role == "unused" else QColor("#ffffff"))
        if m.role == "unused":
            painter.setBrush(QColor("#eeeeee"))
        painter.drawRect(m.rect)
        if not cabled_here and m.role not in ("unused", "open") and m.size > 6:
            painter.setBrush(c)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawRect(m.rect.adjusted(2.5, 2.5, -2.5, -2.5))


def _paint_port_names(painter: QPainter, marks: Mapping[str, PortMark], px: int, shown: bool,
                      above: bool = False) -> None:
    if not shown or not marks:
        return
    painter.setFont(font(px))
    painter.setPen(SUBTLE)
    for m in marks.values():
        r = m.rect
        room = max(r.width() + 6, 18 if px > 5 else 8)
        y = r.top() - px - 3 if m.side > 0 or above else r.bottom() + 1
        painter.drawText(QRectF(r.center().x() - room / 2, y, room, px + 2), int(Qt.AlignmentFlag.AlignCenter),
                         elide(m.name, px, room))


def paint_badge(painter: QPainter, centre: QPointF, badge: Badge) -> None:
    fill = ERROR if badge.severity == "error" else WARNING
    text = str(badge.count) if badge.count < 100 else "99+"
    r = BADGE_R if len(text) < 2 else BADGE_R + 2
    painter.setPen(QPen(QColor("#ffffff"), 1.5))
    painter.setBrush(fill)
    painter.drawEllipse(centre, r, r)
    painter.setFont(font(10, True))
    painter.setPen(QColor("#ffffff") if badge.severity == "error" else QColor("#222222"))
    painter.drawText(QRectF(centre.x() - r, centre.y() - r, 2 * r, 2 * r), int(Qt.AlignmentFlag.AlignCenter), text)


def paint_chip(painter: QPainter, item: Any, w: float, h: float, *, selected: bool = False,
               badge: Badge | None = None, members: Sequence[str] = ()) -> None:
    """A network (pill with its role colour), a VM that no host holds, or an array group's card of
    its volumes (`members`: the arrays that name the group)."""
    body = QRectF(0, 0, w, h)
    if isinstance(item, ArrayGroup):
        _paint_group_card(painter, item, w, h, selected, list(members))
    elif isinstance(item, Network):
        painter.setPen(QPen(SELECT if selected else colour(item.role).darker(120), 2.0 if selected else 1.0))
        painter.setBrush(QColor("#ffffff"))
        painter.drawRoundedRect(body, h / 2, h / 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour(item.role))
        painter.drawEllipse(QRectF(6, h / 2 - 5, 10, 10))
        draw_text(painter, 20, (h - 15) / 2, w - 26, network_label(item), 10)
    else:
        painter.setPen(QPen(SELECT if selected else QColor("#8796a8"), 2.0 if selected else 1.0))
        painter.setBrush(QColor("#d6e9fb") if selected else QColor("#ffffff"))
        painter.setPen(QPen(SELECT if selected else QColor("#8796a8"), 2.0 if selected else 1.0,
                            Qt.PenStyle.DashLine))
        painter.drawRoundedRect(body, 4, 4)
        draw_text(painter, 6, (h - 15) / 2, w - 12, f"{item.id} (no host)", 10)
    if badge is not None:
        paint_badge(painter, QPointF(w - 2, 2), badge)


def _paint_group_card(painter: QPainter, g: ArrayGroup, w: float, h: float, selected: bool,
                      members: list[str]) -> None:
    """An array group: its name, discovery address and members, and a row per volume of the group
    (a volume lives in a pool that spans members, so it is drawn on the group, not on one array)."""
    fill, border = body_style(StorageArray(id=g.name))
    painter.setBrush(fill)
    painter.setPen(QPen(SELECT if selected else border, 2.2 if selected else 1.2, Qt.PenStyle.DashLine))
    painter.drawRoundedRect(QRectF(0, 0, w, h), 6, 6)
    _title(painter, 8, 4, w - 28, g.name)
    head, rows = group_card_lines(g, members)
    draw_text(painter, 8, 20, w - 16, "array group" + (f" · {g.model}" if g.model else ""), 9, colour_=SUBTLE)
    draw_text(painter, 8, 32, w - 16, head, 9, colour_=SUBTLE)
    volume = colour("iscsi")
    for i, text in enumerate(rows):
        y = GROUP_HEAD_H + i * GROUP_LINE_H
        if i < min(len(g.volumes), GROUP_VOLUMES_SHOWN):
            painter.setPen(QPen(volume.darker(130), 0.8))
            painter.setBrush(volume)
            painter.drawRoundedRect(QRectF(10, y + 3, 7, 8), 2, 2)
        draw_text(painter, 22, y, w - 30, text, 9)
