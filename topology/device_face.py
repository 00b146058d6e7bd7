"""What a device shows on its face and how much room that takes, without Qt: the label lines
under its name, and a switch's port strip.  The layout sizes devices from here and
app/diagram paints from here, so a box is wide enough for the labels it shows.

Label widths are estimated (about 5.8 px a character at 10 px in DejaVu Sans, which averages
5.3-6.1); a device grows to fit its labels up to LABEL_MAX_W, and a longer label is elided
with a deliberate "…" on screen and on paper (the canvas tooltip gives the whole text).

A switch that describes its ports draws them as a strip along its top edge: compact (small
markers, no names) by default, expanded (full-size markers with their names, in as many rows
as its width needs: it grows downwards, never sideways onto its neighbours) while it is
selected or a cable is dragged over it.  Rows wrap so a 384-port director stays a block.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from topology.model import Server, StorageArray, Switch
from topology.model_catalogue import limit
from topology.unknown import NOT_STATED
from topology.vocabulary import SERVER_ROLE_NAMES

PX_PER_CHAR = 5.8
LABEL_MAX_W = 300.0
SWITCH_MAX_W = 600.0


def text_width(text: str) -> float:
    """Estimated width of a 10 px label."""
    return PX_PER_CHAR * len(text)


def server_lines(s: Server) -> tuple[str, str]:
    """The two lines under a server's name: model and memory; operating system and hypervisor."""
    first = s.model or SERVER_ROLE_NAMES.get(s.role, s.role)
    if s.memory_gb:
        first += f" · {s.memory_gb:g} GB RAM"
    system = s.os or ""
    if s.hypervisor and s.hypervisor.lower() not in system.lower():
        system = f"{system} · {s.hypervisor}" if system else s.hypervisor
    return first, system


def switch_line(sw: Switch) -> str:
    """The line under a switch's name: model, fabric, port count, MTU."""
    bits = [sw.model or ("FC switch" if sw.kind == "fc" else "Ethernet switch")]
    if sw.fabric:
        bits.append(f"fabric {sw.fabric}")
    count = sw.port_count or len(sw.ports)
    if count:
        bits.append(f"{count} ports")
    if sw.mtu:
        bits.append(f"MTU {sw.mtu}")
    return " · ".join(bits)


def array_line(a: StorageArray) -> str:
    return (a.model or "storage array") + (" (simulated)" if a.simulated else "")


@dataclass(frozen=True)
class Strip:
    """A switch's port strip: `cols` markers a row, `rows` rows, `pitch` apart, `size` wide."""
    cols: int
    rows: int
    pitch: float
    size: float
    row_h: float
    names: bool          # each marker's name is written under it

    @property
    def depth(self) -> float:
        """How much further down the switch's name goes to make room for the strip."""
        return (self.rows - 1) * self.row_h + (10.0 if self.names else 0.0)

    @property
    def width(self) -> float:
        return self.cols * self.pitch + 16


COMPACT = (8.0, 6.0, 64, 8.0)        # pitch, marker, markers a row, row height
EXPANDED = (18.0, 11.0, 32, 22.0)


def switch_strip(ports: int, expanded: bool = False, width: float | None = None) -> Strip:
    """The strip of a switch with `ports` ports; expanded within `width` (the switch keeps the
    width its compact strip gave it and grows downwards, so it does not cover its neighbours)."""
    pitch, size, per_row, row_h = EXPANDED if expanded else COMPACT
    if expanded and width is not None:
        per_row = max(1, min(per_row, int((width - 16) // pitch)))
    cols = max(1, min(ports, per_row))
    rows = max(1, math.ceil(ports / per_row))
    return Strip(cols, rows, pitch, size, row_h, expanded)


def face_size(dev: Any, ports: int, expanded: bool = False) -> tuple[float, float]:
    """Width and height of a server, switch or array with `ports` port markers."""
    if isinstance(dev, Server):
        label = max(text_width(line) for line in server_lines(dev)) + 16
        return max(140.0, 18.0 * ports + 20, min(label, LABEL_MAX_W)), 64.0
    if isinstance(dev, Switch):
        label = min(text_width(switch_line(dev)) + 16, LABEL_MAX_W)
        if not dev.ports:
            return max(160.0, label), 44.0
        w = max(160.0, label, min(switch_strip(len(dev.ports)).width, SWITCH_MAX_W))
        return w, 44.0 + switch_strip(len(dev.ports), expanded, w).depth
    if isinstance(dev, StorageArray):
        label = min(text_width(array_line(dev)) + 16, LABEL_MAX_W)
        return max(200.0, 18.0 * ports + 40, label), 90.0
    return 120.0, 50.0


GROUP_VOLUMES_SHOWN = 8      # volume rows a group's card lists before "+N more volumes"
GROUP_LINE_H = 14.0          # a 9 px row of the card
GROUP_HEAD_H = 46.0          # its name and the address/members lines


def group_card_lines(group: Any, members: list[str]) -> tuple[str, list[str]]:
    """What an array group's card shows under its name: one line with its discovery address and
    members, then one line per volume (pool, size, purpose), each value the bed leaves open as
    'not stated'.  A group's volumes belong to no one member, so they are drawn here, not on one."""
    from topology.unknown import MARKER, NOT_STATED, stated

    def said(value: Any) -> str:
        return MARKER if value is NOT_STATED else str(value)

    address = f"group address {said(group.address)}" if group.address or group.address is NOT_STATED \
        else "group address not set"
    if members:
        head = f"{address} · {len(members)} member{'s' if len(members) != 1 else ''}: {members[0]}" \
            + (f" … {members[-1]}" if len(members) > 1 else "")
    else:       # a group has at least one member: none named in the bed is a count not stated
        head = f"{address} · members not stated"
    if not group.holds_storage:
        return head, discovery_rows(group)
    rows = []
    for v in group.volumes[:GROUP_VOLUMES_SHOWN]:
        size = stated(v.size_gb)
        bits = [v.name, f"pool {said(v.pool)}" if v.pool or v.pool is NOT_STATED else "no pool",
                f"{size:g} GB" if size is not None else ("size not stated" if v.size_gb is NOT_STATED
                                                          else "rest of pool" if v.remainder else "size not set")]
        purpose = [] if v.purpose is NOT_STATED else list(v.purpose)
        if purpose:
            bits.append(", ".join(purpose))
        rows.append(" · ".join(bits))
    more = len(group.volumes) - GROUP_VOLUMES_SHOWN
    if more > 0:
        rows.append(f"+{more} more volume{'s' if more != 1 else ''}")
    if not group.volumes:
        rows.append("no volumes")
    return head, rows


def discovery_rows(group: Any) -> list[str]:
    """A group known only from discovery (no pools, volumes or access records in the bed): what is
    known of it, and 'not stated' for the rest."""
    from topology.unknown import NOT_STATED

    def known(label: str, value: Any) -> str:
        return f"{label} {value}" if value and value is not NOT_STATED else f"{label} not stated"

    return [known("discovery network", group.network),
            known("model", group.model) + " · " + known("firmware", group.firmware),
            "known from discovery only:", "pools, volumes, access records not stated"]


def group_card_size(group: Any, members: list[str]) -> tuple[float, float]:
    head, rows = group_card_lines(group, members)
    widest = max([text_width(group.name) * 1.2, text_width(head)] + [text_width(r) * 0.92 for r in rows])
    return max(220.0, min(widest + 20, LABEL_MAX_W + 60)), GROUP_HEAD_H + GROUP_LINE_H * len(rows) + 6


def chassis_bays(chassis: Any) -> int | None:
    """How many blade bays a chassis draws: the bed's count, else the model catalogue's documented one
    (as the LIM rules take it); None where neither states it -- never an assumed count."""
    bays = chassis.bays
    if bays is NOT_STATED:
        return None
    if isinstance(bays, int) and not isinstance(bays, bool):
        return bays
    documented = limit("chassis", chassis.model, "bays")
    return documented[0] if documented is not None else None


CHASSIS_H = 150.0        # room for the blade bays, the I/O module row and a line of notes
BLADE_PITCH = 18.0       # a blade bay's width where the chassis states its count
CHASSIS_TITLE_H = 40.0
IO_ROW_H = 24.0
NOTE_H = 14.0


@dataclass(frozen=True)
class BayTile:
    """One bay drawn on a chassis' face: a blade bay ('blade') or an I/O module bay ('io'), at x, y
    (w x h) inside the chassis; `occupants`: the ids of the blades or modules the bed puts there."""
    kind: str
    bay: int
    x: float
    y: float
    w: float
    h: float
    occupants: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChassisFace:
    """What a chassis draws inside its outline: its blade bays (every bay of a stated or documented
    count, else only the bays its blades name), the I/O module bays its modules name, and notes for
    what the bed leaves open -- a blade or module whose bay is not stated gets no tile, it is named in a
    note, never put in an assumed bay."""
    blades: list[BayTile]
    io: list[BayTile]
    notes: list[str]


def _bay_of(dev: Any) -> int | None:
    bay = getattr(dev, "bay", None)
    return bay if isinstance(bay, int) and not isinstance(bay, bool) else None


def chassis_width(chassis: Any) -> float:
    bays = chassis_bays(chassis)
    return max(180.0, BLADE_PITCH * (bays or 0) + 16)


def chassis_face(chassis: Any, contents: Any, w: float, h: float) -> ChassisFace:
    """Where the blades (servers) and I/O modules (switches) in `contents` are drawn on a chassis of
    w x h: each in the tile of the bay it states."""
    bays = chassis_bays(chassis)
    blades: dict[int, list[str]] = {}
    modules: dict[int, list[str]] = {}
    unplaced: list[str] = []
    beyond: list[str] = []
    for dev in contents:
        bay = _bay_of(dev)
        into = modules if isinstance(dev, Switch) else blades
        if bay is None:
            unplaced.append(dev.id)
        elif into is blades and bays is not None and not 1 <= bay <= bays:
            beyond.append(f"{dev.id} (bay {bay})")
        else:
            into.setdefault(bay, []).append(dev.id)
    notes = []
    if bays is None:
        notes.append("bays not stated")
    if unplaced:
        notes.append("bay not stated: " + ", ".join(unplaced))
    if beyond:
        notes.append(f"beyond its {bays} bays: " + ", ".join(beyond))
    bottom = h - (NOTE_H if notes else 0.0) - 4
    io_tiles: list[BayTile] = []
    if modules:
        shown = sorted(modules)
        top = bottom - IO_ROW_H + 2
        iw = (w - 16) / len(shown)
        io_tiles = [BayTile("io", bay, 8 + i * iw, top, iw - 2, IO_ROW_H - 4, tuple(modules[bay]))
                    for i, bay in enumerate(shown)]
        bottom = top - 4
    numbers = list(range(1, bays + 1)) if bays is not None else sorted(blades)
    blade_tiles: list[BayTile] = []
    if numbers:
        bw = (w - 16) / len(numbers) if bays is not None else min((w - 16) / len(numbers), 40.0)
        height = max(bottom - CHASSIS_TITLE_H, 4.0)
        blade_tiles = [BayTile("blade", bay, 8 + i * bw, CHASSIS_TITLE_H, bw - 2, height, tuple(blades.get(bay, ())))
                       for i, bay in enumerate(numbers)]
    return ChassisFace(blade_tiles, io_tiles, notes)
