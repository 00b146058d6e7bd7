"""Where things go, in scene units: port markers on a device, VM chips in a host, the
line of a link from port to port (routed around devices in the way), the drawn area."""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPolygonF

from app.diagram.style import PORT_PITCH, PORT_W, STUB, link_role, port_role
from topology.device_face import switch_strip
from topology.layout import VM_CHIP_H, Box, vm_grid
from topology.model import Port, Server, StorageArray, Switch


class PortMark:
    """A port marker on a device, local coordinates.  Plain floats: a big bed has 25,000 of them."""
    __slots__ = ("name", "x", "y", "size", "side", "role", "port", "controller")

    def __init__(self, name: str, x: float, y: float, size: float, side: int, role: str, port: Any,
                 controller: str = ""):
        self.name, self.x, self.y, self.size = name, x, y, size     # x: centre; y: top edge
        self.side, self.role, self.port, self.controller = side, role, port, controller

    @property
    def rect(self) -> QRectF:
        return QRectF(self.x - self.size / 2, self.y, self.size, self.size)

    @property
    def anchor_xy(self) -> tuple[float, float]:
        """Where a link attaches: the marker's outer edge."""
        return self.x, (self.y + self.size if self.side > 0 else self.y)

    @property
    def anchor(self) -> QPointF:
        return QPointF(*self.anchor_xy)


def device_ports(dev: Any) -> list[tuple[Any, str]]:
    """(port, controller name) in drawing order."""
    if isinstance(dev, Server):
        return [(p, "") for ad in dev.adapters for p in ad.ports]
    if isinstance(dev, Switch):
        return [(p, "") for p in dev.ports]
    if isinstance(dev, StorageArray):
        return [(p, c.name) for c in dev.controllers for p in c.ports]
    return []


def port_marks(dev: Any, w: float, h: float, expanded: bool = False) -> Mapping[str, PortMark]:
    """Port markers: along the lower edge of a server, the upper edge of a switch or an array
    (a switch's in rows, compact or `expanded`: see topology/device_face.py)."""
    ports = device_ports(dev)
    if not ports:
        return {}
    if isinstance(dev, Switch):
        return _switch_marks(dev, ports, w, expanded)
    bottom = isinstance(dev, Server)
    n = len(ports)
    if isinstance(dev, StorageArray):
        groups = max(1, len({c for _, c in ports}))
        gap = 10.0
        pitch = min(PORT_PITCH, (w - 20 - gap * (groups - 1)) / n)
        span = pitch * n + gap * (groups - 1)
    else:
        gap = 0.0
        pitch = min(PORT_PITCH, (w - 16) / n)
        span = pitch * n
    size = min(PORT_W, pitch - 3)
    top = h - size / 2 - 1.5 if bottom else -size / 2 + 1.5
    side = 1 if bottom else -1
    x = (w - span) / 2 + pitch / 2
    marks: dict[str, PortMark] = {}
    last_ctrl = ports[0][1]
    for port, ctrl in ports:
        if ctrl != last_ctrl:
            x += gap
            last_ctrl = ctrl
        marks[port.name] = PortMark(port.name, x, top, size, side, port_role(port, dev), port, ctrl)
        x += pitch
    return marks


def _switch_marks(sw: Switch, ports: list[tuple[Any, str]], w: float, expanded: bool) -> StripMarks:
    strip = switch_strip(len(ports), expanded, w)
    pitch = min(strip.pitch, (w - 16) / strip.cols)
    size = min(strip.size, pitch - 2)
    # most switch ports say nothing of their own: one colour for all of them
    plain = port_role(Port(name="", kind=sw.kind), sw)
    return StripMarks(sw, [p for p, _ in ports], (w - strip.cols * pitch) / 2 + pitch / 2, -size / 2 + 1.5,
                      pitch, size, strip.cols, strip.row_h, plain)


class StripMarks(Mapping[str, PortMark]):
    """A switch's port markers by name, each made when it is first asked for (and kept): a big
    bed's 50,000 switch ports cost nothing until a cable needs a port's anchor or the switch is
    painted.  The marks are remade with the switch (its size or strip changed)."""
    __slots__ = ("sw", "ports", "x0", "top", "pitch", "size", "cols", "row_h", "plain", "_index", "_made")

    def __init__(self, sw: Switch, ports: list[Any], x0: float, top: float, pitch: float, size: float,
                 cols: int, row_h: float, plain: str):
        self.sw, self.ports, self.x0, self.top, self.pitch = sw, ports, x0, top, pitch
        self.size, self.cols, self.row_h, self.plain = size, cols, row_h, plain
        self._index: dict[str, int] | None = None
        self._made: dict[int, PortMark] = {}     # the cabled ports' marks, asked for on every reroute

    def _make(self, i: int) -> PortMark:
        hit = self._made.get(i)
        if hit is not None:
            return hit
        port = self.ports[i]
        row, col = divmod(i, self.cols)
        role = self.plain if not port.roles and not port.fabric and port.kind == self.sw.kind \
            else port_role(port, self.sw)
        mark = PortMark(port.name, self.x0 + col * self.pitch, self.top + row * self.row_h, self.size, -1, role, port)
        self._made[i] = mark
        return mark

    def __getitem__(self, name: str) -> PortMark:
        if self._index is None:
            self._index = {p.name: i for i, p in enumerate(self.ports)}
        return self._make(self._index[name])

    def __iter__(self) -> Iterator[str]:
        return (p.name for p in self.ports)

    def __len__(self) -> int:
        return len(self.ports)

    def values(self) -> Iterator[PortMark]:
        return (self._make(i) for i in range(len(self.ports)))


Rect = tuple[float, float, float, float]     # x, y, w, h in scene units


LANE = 18.0            # a detour runs this far beside the device it avoids


def edge_anchor(box: Rect, toward: tuple[float, float]) -> tuple[float, float, int]:
    """Where a link meets a device with no port marker (a bare switch): the edge facing the other end."""
    x0, y0, w, h = box
    tx, ty = toward
    x = _squash(tx, x0 + w / 2, w / 2 - 10)
    if ty < y0:
        return x, y0, -1
    if ty > y0 + h:
        return x, y0 + h, 1
    return (x0 if tx < x0 else x0 + w), y0 + h / 2, 0


def _squash(t: float, centre: float, half: float) -> float:
    """Map a far end's x onto an edge: straight across within the middle of the edge, squeezed
    (but still apart, in order) towards the corners, so cables from far away do not all meet
    in one point."""
    offset = t - centre
    inner = 0.6 * half
    if abs(offset) <= inner or half <= 0:
        return t if half > 0 else centre
    room = half - inner
    excess = abs(offset) - inner
    return centre + (1 if offset > 0 else -1) * (inner + room * excess / (excess + 4 * room))


def link_polyline(p1: tuple[float, float], side1: int, p2: tuple[float, float], side2: int,
                  obstacles: Sequence[Rect] = ()) -> QPolygonF:
    """A port-to-port line that leaves each port straight out before heading for the other end.

    When the direct line would pass under a device that is not one of its ends (a client's
    cable to a LAN switch crossing the hosts' tier), it detours through the nearest free
    vertical lane beside the devices in the way, so no line seems to end at the wrong device.
    """
    ax, ay = p1[0], p1[1] + side1 * STUB
    bx, by = p2[0], p2[1] + side2 * STUB
    pts = [p1, (ax, ay), (bx, by), p2]
    if obstacles:
        left, right, top, bottom = min(ax, bx) - 1, max(ax, bx) + 1, min(ay, by) - 1, max(ay, by) + 1
        if any(x < right and x + w > left and y < bottom and y + h > top and _segment_hits(ax, ay, bx, by, (x, y, w, h))
               for x, y, w, h in obstacles):
            lane = _free_lane(ax, ay, bx, by, obstacles)
            if lane is not None:
                pts = [p1, (ax, ay), (lane, ay), (lane, by), (bx, by), p2]
    return QPolygonF([QPointF(x, y) for x, y in pts])


def _free_lane(ax: float, ay: float, bx: float, by: float, obstacles: Sequence[Rect]) -> float | None:
    top, bottom = min(ay, by), max(ay, by)
    in_band = [r for r in obstacles if r[1] + r[3] > top and r[1] < bottom]
    candidates = {ax, bx}
    spread = (int(ax) % 5) * 3.0   # neighbouring ports take neighbouring lanes, not one line
    for x, _y, w, _h in in_band:
        candidates.update((x - LANE - spread, x + w + LANE + spread))
    for lane in sorted(candidates, key=lambda v: abs(v - ax) + abs(v - bx)):
        if any(x < lane < x + w for x, _y, w, _h in in_band):
            continue
        if any(_segment_hits(ax, ay, lane, ay, r) or _segment_hits(lane, by, bx, by, r) for r in obstacles):
            continue
        return lane
    return None


def _segment_hits(x0: float, y0: float, x1: float, y1: float, r: Rect) -> bool:
    """Does the segment pass through the inside of r (Liang-Barsky clipping)?"""
    rx, ry, rw, rh = r
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for pk, qk in ((-dx, x0 - rx), (dx, rx + rw - x0), (-dy, y0 - ry), (dy, ry + rh - y0)):
        if pk == 0:
            if qk <= 0:
                return False
            continue
        t = qk / pk
        if pk < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 >= t1:
            return False
    return True


def vm_chip_rects(width: float, count: int, top: float = 50.0, left: float = 4.0) -> list[QRectF]:
    """Where each VM chip of a host goes (the last one stands for the rest when they do not fit)."""
    cols, rows = vm_grid(width + 8, count)
    if not cols:
        return []
    cw = width / cols
    shown = min(count, cols * rows)
    return [QRectF(left + (i % cols) * cw + 1, top + (i // cols) * VM_CHIP_H, cw - 2, VM_CHIP_H - 2)
            for i in range(shown)]


def ref_parts(ref: str, devices: dict[str, Any]) -> tuple[str, str | None]:
    if ref in devices:
        return ref, None
    dev, sep, port = ref.rpartition(":")
    return (dev, port) if sep else (ref, None)


def end_point(dev: Any, box: Rect, marks: Mapping[str, PortMark], port: str | None,
              toward: tuple[float, float]) -> tuple[tuple[float, float], int, Any]:
    """Scene point, direction and Port object of one link end."""
    m = marks.get(port) if port else None
    if m is not None:
        ax, ay = m.anchor_xy
        return (ax + box[0], ay + box[1]), m.side, m.port
    x, y, side = edge_anchor(box, toward)
    implicit = Port(name=port) if port and isinstance(dev, Switch) else None
    return (x, y), side, implicit


def content_rect(boxes: dict[str, Box]) -> QRectF:
    if not boxes:
        return QRectF(0, 0, 400, 300)
    left = min(b.x for b in boxes.values())
    top = min(b.y for b in boxes.values())
    right = max(b.x + b.w for b in boxes.values())
    bottom = max(b.y + b.h for b in boxes.values())
    return QRectF(left, top, right - left, bottom - top)


def link_geometry(a_ref: str, b_ref: str, devices: dict[str, Any], rects: dict[str, Rect],
                  marks: Mapping[str, Mapping[str, PortMark]],
                  obstacles: Sequence[Rect] = ()) -> tuple[QPolygonF, str] | None:
    """The drawn line of a link or a path and the role it carries, or None when an end is not drawn."""
    da, pa = ref_parts(a_ref, devices)
    db, pb = ref_parts(b_ref, devices)
    ra, rb = rects.get(da), rects.get(db)
    if ra is None or rb is None:
        return None
    ma, mb = marks.get(da, {}), marks.get(db, {})
    # a port end first, so that a bare switch end can face it
    if pa in ma:
        p1, s1, port_a = end_point(devices[da], ra, ma, pa, (0.0, 0.0))
        p2, s2, port_b = end_point(devices[db], rb, mb, pb, p1)
    else:
        guess_b = end_point(devices[db], rb, mb, pb, (ra[0] + ra[2] / 2, ra[1] + ra[3] / 2))[0]
        p1, s1, port_a = end_point(devices[da], ra, ma, pa, guess_b)
        p2, s2, port_b = end_point(devices[db], rb, mb, pb, p1)
    role = link_role(devices[da], port_a, devices[db], port_b)
    return link_polyline(p1, s1, p2, s2, obstacles), role


def uncabled_paths(bed: Any, devices: dict[str, Any]) -> list[Any]:
    """Paths whose initiator or target port has no cable in the bed: drawn dashed, so the storage
    connectivity the report states is visible even where it gives no cabling."""
    cabled_refs = {ref for lk in bed.links for ref in (lk.a, lk.b)}
    out = []
    for p in bed.paths:
        if p.initiator in cabled_refs and p.target in cabled_refs:
            continue
        if ref_parts(p.initiator, devices)[0] in devices and ref_parts(p.target, devices)[0] in devices:
            out.append(p)
    return out
