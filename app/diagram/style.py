"""The diagram's look: one colour per traffic role (ports and the links that carry it),
pale device bodies tinted by kind or server role, pixel-sized fonts, link pens."""
from __future__ import annotations

from functools import cache
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from topology.model import Port, Server, StorageArray, Switch

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
    "open": "#52656f",            # a switch port with no role of its own: it takes the cable's
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

PORT_W = 11.0
PORT_PITCH = 18.0
STUB = 14.0            # links leave a port straight up/down for this long
BADGE_R = 9.0
ROUTED_MAX = 400       # beds up to this many devices route links around devices in the way
MARGIN = 8.0           # item bounding margin around the body (selection halo, port markers, badge)


@cache
def colour(key: str) -> QColor:
    return QColor(ROLE_COLOURS.get(key, "#8a8a8a"))


@cache
def font(px: int, bold: bool = False) -> QFont:
    f = QFont("DejaVu Sans")
    f.setPixelSize(px)
    f.setBold(bold)
    f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return f


@cache
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
    if not roles and isinstance(device, Switch) and "unused" not in getattr(port, "roles", ()):
        return "open"
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
            if role not in ("unused", "open"):
                return role
    for dev, port in ((a_dev, a_port), (b_dev, b_port)):
        if port is not None:
            role = port_role(port, dev)
            if role not in ("unused", "open"):
                return role
    sw = a_dev if isinstance(a_dev, Switch) else b_dev
    if isinstance(sw, Switch):
        if sw.kind == "fc":
            return port_role(Port(name="", kind="fc"), sw)
        for r in ROLE_PRIORITY:
            if r in sw.roles:
                return r
    return "lan"


@cache
def link_pen(role: str, kind: str = "cable", dashed: bool = False) -> QPen:
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


def draw_text(painter: QPainter, x: float, y: float, w: float, text: str, px: int, *, bold: bool = False,
          colour_: QColor = TEXT, align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft) -> None:
    painter.setFont(font(px, bold))
    painter.setPen(colour_)
    painter.drawText(QRectF(x, y, w, px + 5), int(align | Qt.AlignmentFlag.AlignVCenter),
                     elide(text, px, w, bold))
