"""The look of the test-bed diagram, in QPainter terms only (QtGui, no widgets).

The canvas items, the PNG/SVG export and the printed appendix all paint through these
functions, so a bed looks the same on screen and on paper.  Everything is drawn in scene
units (1 unit = 1 pixel at 100 %); fonts are sized in pixels for the same reason (a point
size would grow with a printer's resolution).

Colours: one colour per traffic role, used for port markers and for the links that carry
that role (the legend lists them); device bodies are pale, tinted by kind or server role,
so the coloured ports and links stand out.  Findings show as a badge on the device: red
with the count when any error is open, amber for warnings only.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Sequence

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QPolygonF

from topology.model import VM, Chassis, Network, Port, Server, StorageArray, Switch
from topology.layout import VM_CHIP_H, Box, layout, network_label, vm_grid, vms_by_host

# --------------------------------------------------------------------------- colours

ROLE_COLOURS: dict[str, str] = {
    "iscsi": "#0b6fc0",           # blue
    "lan": "#17915c",             # green
    "heartbeat": "#c2418f",       # magenta
    "live_migration": "#e08600",  # orange
    "management": "#6d6d6d",      # grey
    "vm": "#2bb5c9",              # cyan
    "fc_a": "#d2461d",            # vermilion
    "fc_b": "#7a3db8",            # purple
    "fc": "#9c5a2c",              # brown: FC with no fabric named
    "replication": "#a88a00",     # ochre
    "sas": "#3b3b3b",
    "isl": "#37474f",             # switch to switch
    "unused": "#b9b9b9",
}
ROLE_LABELS: dict[str, str] = {
    "iscsi": "iSCSI (SAN)", "lan": "LAN / client", "heartbeat": "Cluster heartbeat",
    "live_migration": "Live migration", "management": "Management", "vm": "VM traffic",
    "fc_a": "FC fabric A", "fc_b": "FC fabric B", "fc": "FC (no fabric)", "replication": "Replication",
    "sas": "SAS", "isl": "Switch interconnect", "unused": "Unused port",
}
_PLAIN = {"iscsi", "lan", "heartbeat", "live_migration", "management", "vm", "replication"}
# which role a port or link is drawn in when it carries several
ROLE_PRIORITY = ("iscsi", "fc", "replication", "heartbeat", "live_migration", "vm", "lan", "management", "sas")
LEGEND_KEYS = ("iscsi", "lan", "heartbeat", "live_migration", "management", "vm", "fc_a", "fc_b", "isl")

ERROR = QColor("#d32f2f")
WARNING = QColor("#f2a900")
SELECT = QColor("#1e88e5")
TEXT = QColor("#1d2430")
SUBTLE = QColor("#5b6573")

BODY_STYLE: dict[str, tuple[str, str]] = {   # fill, border
    "hypervisor": ("#e3eefb", "#3f6ea6"),
    "application": ("#e3eefb", "#3f6ea6"),
    "infrastructure": ("#e4f3e4", "#4b8b4b"),
    "load_client": ("#fdf1dc", "#b07a1e"),
    "test_controller": ("#fdf1dc", "#b07a1e"),
    "management": ("#eee7f6", "#6e55a0"),
    "switch": ("#eceff1", "#52656f"),
    "fc_switch": ("#f7e6ec", "#8e3b5b"),
    "array": ("#f3ede6", "#7a5a3a"),
    "chassis": ("#e8eaf6", "#3f51b5"),
}
KIND_LABELS = {"hypervisor": "hypervisor host", "application": "application server",
               "infrastructure": "infrastructure", "load_client": "load client",
               "test_controller": "test controller", "management": "management"}

PORT_W, PORT_H = 11.0, 11.0
PORT_PITCH = 18.0
STUB = 14.0            # links leave a port straight up/down for this long
BADGE_R = 9.0
ROUTED_MAX = 400       # beds up to this many devices route links around devices in the way
MARGIN = 8.0           # item bounding margin around the body (selection halo, port markers, badge)


@lru_cache(maxsize=None)
def colour(key: str) -> QColor:
    return QColor(ROLE_COLOURS.get(key, "#8a8a8a"))


@lru_cache(maxsize=None)
def font(px: int, bold: bool = False) -> QFont:
    f = QFont("DejaVu Sans")
    f.setPixelSize(px)
    f.setBold(bold)
    f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return f


@lru_cache(maxsize=None)
def metrics(px: int, bold: bool = False) -> QFontMetricsF:
    return QFontMetricsF(font(px, bold))


def elide(text: str, px: int, width: float, bold: bool = False) -> str:
    return metrics(px, bold).elidedText(text, Qt.TextElideMode.ElideRight, max(width, 0.0))


def body_style(dev: Any) -> tuple[QColor, QColor]:
    if isinstance(dev, Server):
        key = dev.role if dev.role in BODY_STYLE else "hypervisor"
    elif isinstance(dev, Switch):
        key = "fc_switch" if dev.kind == "fc" else "switch"
    elif isinstance(dev, StorageArray):
        key = "array"
    else:
        key = "chassis"
    fill, border = BODY_STYLE[key]
    return QColor(fill), QColor(border)


def port_role(port: Any, device: Any = None) -> str:
    """The colour key a port is drawn in."""
    roles = getattr(port, "roles", ())
    if len(roles) == 1 and roles[0] in _PLAIN and getattr(port, "kind", "") == "ethernet":
        return roles[0]   # the common case, decided without the rules below
    roles = [r for r in roles if r != "unused"]
    if getattr(port, "kind", "") == "fc" or "fc" in roles:
        fabric = (getattr(port, "fabric", "") or getattr(device, "fabric", "")).strip().upper()
        return {"A": "fc_a", "B": "fc_b"}.get(fabric, "fc")
    for r in ROLE_PRIORITY:
        if r in roles:
            return r
    if getattr(port, "kind", "") == "management":
        return "management"
    if getattr(port, "kind", "") == "sas":
        return "sas"
    return "unused" if not roles else roles[0]


def link_role(a_dev: Any, a_port: Any, b_dev: Any, b_port: Any) -> str:
    """The role a link carries: the end device's port role (a switch port usually says nothing)."""
    if isinstance(a_dev, Switch) and isinstance(b_dev, Switch):
        if a_dev.kind == "fc" and b_dev.kind == "fc":
            return port_role(Port(name="", kind="fc"), a_dev)
        return "isl"
    for dev, port in ((a_dev, a_port), (b_dev, b_port)):
        if port is not None and not isinstance(dev, Switch):
            role = port_role(port, b_dev if dev is a_dev else a_dev)
            if role != "unused":
                return role
    for dev, port in ((a_dev, a_port), (b_dev, b_port)):
        if port is not None:
            role = port_role(port, dev)
            if role != "unused":
                return role
    sw = a_dev if isinstance(a_dev, Switch) else b_dev
    if isinstance(sw, Switch):
        if sw.kind == "fc":
            return port_role(Port(name="", kind="fc"), sw)
        for r in ROLE_PRIORITY:
            if r in sw.roles:
                return r
    return "lan"


# --------------------------------------------------------------------------- ports

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


def port_marks(dev: Any, w: float, h: float) -> dict[str, PortMark]:
    """Port markers: along the lower edge of a server, the upper edge of a switch or an array."""
    ports = device_ports(dev)
    if not ports:
        return {}
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


# --------------------------------------------------------------------------- pens

@lru_cache(maxsize=None)
def link_pen(role: str, kind: str = "cable", dashed: bool = False, selected: bool = False) -> QPen:
    width = 3.0 if kind in ("isl", "lag", "stack") or role == "isl" else 1.6
    c = QColor(colour(role))
    if dashed:
        c.setAlpha(170)
        width = 1.2
    pen = QPen(c, width)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    if kind == "lag":
        pen.setStyle(Qt.PenStyle.DashDotLine)
    return pen


@lru_cache(maxsize=None)
def _pen(hex_or_key: str, width: float) -> QPen:
    return QPen(QColor(hex_or_key), width)


def paint_link(painter: QPainter, line: QPolygonF, role: str, kind: str = "cable", *, dashed: bool = False,
               selected: bool = False) -> None:
    if selected:
        halo = QColor(SELECT)
        halo.setAlpha(90)
        painter.setPen(QPen(halo, 7.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin))
        painter.drawPolyline(line)
    painter.setPen(link_pen(role, kind, dashed))
    painter.drawPolyline(line)


# --------------------------------------------------------------------------- devices

@dataclass
class Badge:
    severity: str                       # "error" or "warning"
    count: int
    messages: tuple[str, ...] = ()


def paint_device(painter: QPainter, dev: Any, w: float, h: float, *, vms: Sequence[VM] = (),
                 selected: bool = False, highlight: Iterable[str] = (), badge: Badge | None = None,
                 cabled: Iterable[str] = (), lod: float = 1.0, marks: dict[str, PortMark] | None = None) -> None:
    """One device at the origin, w x h.  `highlight` names ports and VMs shown as selected."""
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
    if lod < 0.3:  # far away: the shape and its colour say enough
        painter.drawRect(body)
        if badge is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(ERROR if badge.severity == "error" else WARNING)
            painter.drawRect(QRectF(w - 24, 0, 24, 16))
        return
    painter.drawRoundedRect(body, 6, 6)
    highlight = set(highlight)
    if isinstance(dev, Server):
        _paint_server(painter, dev, w, h, vms, highlight, lod)
    elif isinstance(dev, Switch):
        _paint_switch(painter, dev, w, h, border)
    elif isinstance(dev, StorageArray):
        _paint_array(painter, dev, w, h, border, marks or port_marks(dev, w, h))
    elif isinstance(dev, Chassis):
        _paint_chassis(painter, dev, w, h, vms, border)
    _paint_ports(painter, dev, marks if marks is not None else port_marks(dev, w, h), set(cabled), highlight, lod)
    if badge is not None:
        paint_badge(painter, QPointF(w - 2, 2), badge)


def _text(painter: QPainter, x: float, y: float, w: float, text: str, px: int, *, bold: bool = False,
          colour_: QColor = TEXT, align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft) -> None:
    painter.setFont(font(px, bold))
    painter.setPen(colour_)
    painter.drawText(QRectF(x, y, w, px + 5), int(align | Qt.AlignmentFlag.AlignVCenter),
                     elide(text, px, w, bold))


def _server_detail(s: Server) -> str:
    parts = [s.hypervisor or s.os]
    if s.memory_gb:
        parts.append(f"{s.memory_gb:g} GB RAM")
    return " · ".join(p for p in parts if p) or KIND_LABELS.get(s.role, s.role)


def _title(painter: QPainter, x: float, y: float, w: float, text: str) -> None:
    """The device's id, bold; a long id steps down in size before it is elided."""
    px = 13
    while px > 10 and metrics(px, True).horizontalAdvance(text) > w:
        px -= 1
    _text(painter, x, y, w, text, px, bold=True)


def _paint_server(painter: QPainter, s: Server, w: float, h: float, vms: Sequence[VM], highlight: set[str],
                  lod: float) -> None:
    _title(painter, 8, 3, w - 28, s.id)
    _text(painter, 8, 20, w - 16, s.model or KIND_LABELS.get(s.role, s.role), 10, colour_=SUBTLE)
    _text(painter, 8, 33, w - 16, _server_detail(s), 10, colour_=SUBTLE)
    if vms:
        paint_vm_chips(painter, QRectF(4, 50, w - 8, h - 50), vms, highlight)


def vm_chip_rects(width: float, count: int, top: float = 50.0, left: float = 4.0) -> list[QRectF]:
    """Where each VM chip of a host goes (the last one stands for the rest when they do not fit)."""
    cols, rows = vm_grid(width + 8, count)
    if not cols:
        return []
    cw = width / cols
    shown = min(count, cols * rows)
    return [QRectF(left + (i % cols) * cw + 1, top + (i // cols) * VM_CHIP_H, cw - 2, VM_CHIP_H - 2)
            for i in range(shown)]


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


def _paint_switch(painter: QPainter, sw: Switch, w: float, h: float, border: QColor) -> None:
    _title(painter, 8, 4, w - 28, sw.id)
    bits = [sw.model or ("FC switch" if sw.kind == "fc" else "Ethernet switch")]
    if sw.fabric:
        bits.append(f"fabric {sw.fabric}")
    count = sw.port_count or len(sw.ports)
    if count:
        bits.append(f"{count} ports")
    if sw.mtu:
        bits.append(f"MTU {sw.mtu}")
    _text(painter, 8, 21, w - 16, " · ".join(bits), 10, colour_=SUBTLE)
    # a row of little port slots: reads as a switch at a glance
    painter.setPen(Qt.PenStyle.NoPen)
    slot = QColor(border)
    slot.setAlpha(60)
    painter.setBrush(slot)
    n = int((w - 16) // 8)
    for i in range(n):
        painter.drawRect(QRectF(8 + i * 8, h - 8, 5, 4))


def _paint_array(painter: QPainter, a: StorageArray, w: float, h: float, border: QColor,
                 marks: dict[str, PortMark]) -> None:
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
        _text(painter, r.left() + 1, r.top() + 4, r.width() - 2, name, 9, colour_=SUBTLE,
              align=Qt.AlignmentFlag.AlignHCenter)
    _title(painter, 8, 31, w - 28, a.id)
    model = a.model or "storage array"
    if a.simulated:
        model += " (simulated)"
    _text(painter, 8, 47, w - 16, model, 10, colour_=SUBTLE)
    _paint_enclosures(painter, a, QRectF(8, 64, w - 16, h - 68))


def _paint_enclosures(painter: QPainter, a: StorageArray, area: QRectF) -> None:
    from topology.index import parse_slot_range
    if not a.enclosures:
        if a.max_disks:
            _text(painter, area.left(), area.top(), area.width(), f"up to {a.max_disks} disks", 9, colour_=SUBTLE)
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
    slots = max(enc.slots, 1)
    slot_w = min(9.0, (area.width() - label_w) / slots)
    painter.setPen(QPen(QColor("#8d7b68"), 0.6))
    for s in range(slots):
        media = filled.get(s)
        painter.setBrush(QColor("#ffffff") if media is None else
                         QColor("#3aa39a") if media in ("ssd", "nvme") else QColor("#6d5c4b"))
        painter.drawRect(QRectF(area.left() + s * slot_w, area.top() + 2, max(slot_w - 1.5, 1), 12))
    _text(painter, area.left() + slots * slot_w + 4, area.top(), label_w, label, 9, colour_=SUBTLE)


def _paint_chassis(painter: QPainter, c: Chassis, w: float, h: float, blades: Sequence[Any], border: QColor) -> None:
    _title(painter, 8, 4, w - 28, c.id)
    _text(painter, 8, 21, w - 16, c.model or "blade chassis", 10, colour_=SUBTLE)
    bays = c.bays or 14
    occupied = {getattr(b, "bay", None) for b in blades}
    bw = (w - 16) / bays
    painter.setFont(font(8))
    for i in range(bays):
        r = QRectF(8 + i * bw, 40, bw - 2, h - 48)
        used = (i + 1) in occupied
        painter.setPen(QPen(border, 0.7))
        painter.setBrush(QColor("#9fa8da") if used else QColor("#ffffff"))
        painter.drawRect(r)
        painter.setPen(SUBTLE)
        painter.drawText(r, int(Qt.AlignmentFlag.AlignCenter), str(i + 1))


def _paint_ports(painter: QPainter, dev: Any, marks: dict[str, PortMark], cabled: set[str], highlight: set[str],
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
        # a cabled port is filled; an open one shows its colour as a ring
        painter.setBrush(c if m.name in cabled or m.role == "unused" else QColor("#ffffff"))
        if m.role == "unused":
            painter.setBrush(QColor("#eeeeee"))
        painter.drawRect(m.rect)
        if m.name not in cabled and m.role != "unused":
            painter.setBrush(c)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawRect(m.rect.adjusted(2.5, 2.5, -2.5, -2.5))
    if lod >= 1.6 and marks:  # close up there is room for the port names
        painter.setFont(font(7))
        painter.setPen(SUBTLE)
        for m in marks.values():
            r = m.rect
            y = r.top() - 10 if m.side > 0 else r.bottom() + 1
            painter.drawText(QRectF(r.center().x() - 9, y, 18, 9), int(Qt.AlignmentFlag.AlignCenter),
                             elide(m.name, 7, 18))


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
               badge: Badge | None = None) -> None:
    """A network (pill with its role colour) or a VM that no host holds."""
    body = QRectF(0, 0, w, h)
    if isinstance(item, Network):
        painter.setPen(QPen(SELECT if selected else colour(item.role).darker(120), 2.0 if selected else 1.0))
        painter.setBrush(QColor("#ffffff"))
        painter.drawRoundedRect(body, h / 2, h / 2)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour(item.role))
        painter.drawEllipse(QRectF(6, h / 2 - 5, 10, 10))
        _text(painter, 20, (h - 15) / 2, w - 26, network_label(item), 10)
    else:
        painter.setPen(QPen(SELECT if selected else QColor("#8796a8"), 2.0 if selected else 1.0))
        painter.setBrush(QColor("#d6e9fb") if selected else QColor("#ffffff"))
        painter.setPen(QPen(SELECT if selected else QColor("#8796a8"), 2.0 if selected else 1.0,
                            Qt.PenStyle.DashLine))
        painter.drawRoundedRect(body, 4, 4)
        _text(painter, 6, (h - 15) / 2, w - 12, f"{item.id} (no host)", 10)
    if badge is not None:
        paint_badge(painter, QPointF(w - 2, 2), badge)


# --------------------------------------------------------------------------- legend

def legend_size() -> tuple[float, float]:
    return 190.0, 26.0 + 17.0 * (len(LEGEND_KEYS) + 3)


def paint_legend(painter: QPainter, origin: QPointF) -> QRectF:
    w, h = legend_size()
    box = QRectF(origin.x(), origin.y(), w, h)
    painter.setPen(QPen(QColor("#b0b7c0"), 1.0))
    painter.setBrush(QColor(255, 255, 255, 235))
    painter.drawRoundedRect(box, 6, 6)
    _text(painter, box.left() + 10, box.top() + 5, w - 20, "Legend", 11, bold=True)
    y = box.top() + 27
    for key in LEGEND_KEYS:
        painter.setPen(link_pen(key, "isl" if key == "isl" else "cable"))
        painter.drawLine(QLineF(box.left() + 10, y + 7, box.left() + 38, y + 7))
        painter.setPen(QPen(colour(key).darker(130), 1.0))
        painter.setBrush(colour(key))
        if key != "isl":
            painter.drawRect(QRectF(box.left() + 19, y + 2, 10, 10))
        _text(painter, box.left() + 46, y, w - 56, ROLE_LABELS[key], 10)
        y += 17
    painter.setPen(link_pen("iscsi", "cable", dashed=True))
    painter.drawLine(QLineF(box.left() + 10, y + 7, box.left() + 38, y + 7))
    _text(painter, box.left() + 46, y, w - 56, "Path (cabling not drawn)", 10)
    y += 17
    for sev, label in (("error", "Errors found"), ("warning", "Warnings only")):
        paint_badge(painter, QPointF(box.left() + 24, y + 7), Badge(sev, 2))
        _text(painter, box.left() + 46, y, w - 56, label, 10)
        y += 17
    return box


# --------------------------------------------------------------------------- findings

def device_of_subject(subject: str, devices: Any, vm_hosts: dict[str, str] | None = None) -> str | None:
    """The drawn component a finding subject belongs to (R710-1:SAN1 -> R710-1; a VM -> its host)."""
    if subject in devices:
        return subject
    if vm_hosts and subject in vm_hosts:
        return vm_hosts[subject]
    head = subject.partition(":")[0]
    if head in devices:
        return head
    if vm_hosts and head in vm_hosts:
        return vm_hosts[head]
    return None


def badges(findings: Iterable[Any], devices: Any, vm_hosts: dict[str, str] | None = None) -> dict[str, Badge]:
    """Open (not accepted) errors and warnings per drawn component."""
    per: dict[str, list[Any]] = {}
    for f in findings or ():
        if getattr(f, "accepted", False) or f.severity not in ("error", "warning"):
            continue
        seen: set[str] = set()
        for s in f.subjects:
            dev = device_of_subject(s, devices, vm_hosts)
            if dev is not None and dev not in seen:
                seen.add(dev)
                per.setdefault(dev, []).append(f)
    out = {}
    for dev, fs in per.items():
        sev = "error" if any(f.severity == "error" for f in fs) else "warning"
        out[dev] = Badge(sev, len(fs), tuple(f"{f.code} ({f.severity}): {f.message}" for f in fs))
    return out


# --------------------------------------------------------------------------- whole bed

def _ref_parts(ref: str, devices: dict[str, Any]) -> tuple[str, str | None]:
    if ref in devices:
        return ref, None
    dev, sep, port = ref.rpartition(":")
    return (dev, port) if sep else (ref, None)


def end_point(dev: Any, box: Rect, marks: dict[str, PortMark], port: str | None,
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
        _text(painter, drawn.left() + 30, drawn.top() + 16, drawn.width() - 60, bed.bed.name, 16, bold=True)
    marks: dict[str, dict[str, PortMark]] = {}
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
            d, p = _ref_parts(ref, devices)
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
        blades = [s for s in bed.servers if s.chassis == ident] if isinstance(dev, Chassis) else hosted.get(ident, ())
        paint_device(painter, dev, r[2], r[3], vms=blades, badge=found.get(ident),
                     cabled=cabled.get(ident, ()), marks=marks[ident])
        painter.restore()
    for ident, item in chips.items():
        b = boxes.get(ident)
        if b is None:
            continue
        painter.save()
        painter.translate(b.x, b.y)
        paint_chip(painter, item, b.w, b.h, badge=found.get(ident))
        painter.restore()
    if legend:
        paint_legend(painter, QPointF(scene.right() + 30, scene.top()))
    painter.restore()
    return drawn


def link_geometry(a_ref: str, b_ref: str, devices: dict[str, Any], rects: dict[str, Rect],
                  marks: dict[str, dict[str, PortMark]],
                  obstacles: Sequence[Rect] = ()) -> tuple[QPolygonF, str] | None:
    """The drawn line of a link or a path and the role it carries, or None when an end is not drawn."""
    da, pa = _ref_parts(a_ref, devices)
    db, pb = _ref_parts(b_ref, devices)
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
        if _ref_parts(p.initiator, devices)[0] in devices and _ref_parts(p.target, devices)[0] in devices:
            out.append(p)
    return out
