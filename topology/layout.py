"""The diagram's geometry that is not Qt, so the canvas, the exported image and the printed
appendix agree: how big a device is drawn, and where every device, network and VM goes.

Automatic layout for beds loaded from a file puts devices in tiers, as lab diagrams draw them.

Tier 0: infrastructure, clients and management servers; tier 1: hypervisor and application
hosts; tier 2: Ethernet switches; tier 3: SAN (iSCSI/FC) switches; tier 4: storage arrays.
Within a tier, devices are ordered by the mean position of their neighbours in the tier
above (one barycentre sweep on the networkx graph), which removes most link crossings.
A tier wider than `max_per_row` wraps onto further rows, so thousands of hosts stay on
screen as a block instead of one endless line.  Items never overlap: every slot is at
least the widest item of its tier plus a gap.
"""
from __future__ import annotations

import math
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from topology.device_face import CHASSIS_H, chassis_width, face_size, group_card_size
from topology.ids import SEP
from topology.model import VM, Bed, Chassis, Network, Server, StorageArray, Switch

# the steps below hand control back (yield) every this many components: a window lays a big bed
# out a slice at a time between its event loop's turns (widgets/canvas/building.py)
STEP = 100

T = TypeVar("T")


def run_steps(steps: Generator[None, None, T]) -> T:
    """All of a stepped computation at once: its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def _stepping(items: list[T]) -> Iterator[tuple[bool, T]]:
    """Each item, and whether a step ends before it."""
    for n, item in enumerate(items):
        yield n > 0 and n % STEP == 0, item


TIER_OF_ROLE = {"infrastructure": 0, "load_client": 0, "test_controller": 0, "management": 0,
                "hypervisor": 1, "application": 1}


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float


def device_size(dev, *, expanded: bool = False) -> tuple[float, float]:
    """Width and height a device needs on the canvas: its port markers and its labels
    (topology/device_face.py); `expanded`: a switch's port strip at full size."""
    if isinstance(dev, Server):
        ports = sum(len(a.ports) for a in dev.adapters)
    elif isinstance(dev, StorageArray):
        ports = sum(len(c.ports) for c in dev.controllers)
    else:
        ports = len(getattr(dev, "ports", ()))
    return face_size(dev, ports, expanded)


def tier(dev) -> int:
    if isinstance(dev, Server):
        return TIER_OF_ROLE.get(dev.role, 1)
    if isinstance(dev, Switch):
        san = dev.kind == "fc" or ("iscsi" in dev.roles and "lan" not in dev.roles)
        return 3 if san else 2
    return 4


def _device_graph(bed: Bed) -> Generator[None, None, dict[str, dict[str, None]]]:
    """Which drawn devices a cable or a path joins (read from the ids alone: a full BedIndex of a
    big bed costs more than the whole layout); in steps."""
    devices = {d.id for coll in (bed.servers, bed.switches, bed.arrays) for d in coll}

    def owner(ref: str) -> str | None:
        head = ref
        while head not in devices:
            if SEP not in head:
                return None
            head = head.rpartition(SEP)[0]
        return head

    vm_hosts = {v.id: v.host for v in bed.vms}
    # each device's neighbours in the order first joined (a plain adjacency, as networkx keeps it:
    # networkx cost more to import than the layout takes)
    g: dict[str, dict[str, None]] = {}

    def join(a: str, b: str) -> None:
        near = g.get(a)
        if near is None:
            near = g[a] = {}
        near[b] = None
        near = g.get(b)
        if near is None:
            near = g[b] = {}
        near[a] = None

    # a step per STEP links or paths, each looked at in a plain loop: a generator's turn per item
    # and a function per end were most of the layout of the 5,000-device bed's 27,000 of them
    links = bed.links
    for start in range(0, len(links), STEP):
        if start:
            yield
        for link in links[start:start + STEP]:
            a: str | None = link.a    # DEVICE:PORT mostly: its owner at the first colon from the right
            b: str | None = link.b
            if a not in devices:
                head, sep, _ = link.a.rpartition(SEP)
                a = head if sep and head in devices else owner(link.a)
            if b not in devices:
                head, sep, _ = link.b.rpartition(SEP)
                b = head if sep and head in devices else owner(link.b)
            if a is not None and b is not None and a != b:
                join(a, b)
    targets: dict[str, str | None] = {}     # a path's target (ARRAY:VOLUME) is shared by many paths
    paths = bed.paths
    for start in range(0, len(paths), STEP):
        if start:
            yield
        for p in paths[start:start + STEP]:
            host = p.host if p.host in devices else vm_hosts.get(p.host)
            if host not in devices:
                continue
            target = p.target
            tgt = targets[target] if target in targets else targets.setdefault(target, owner(target))
            if tgt is not None:
                join(host, tgt)
    return g


def auto_layout(bed: Bed, *, gap: float = 40.0, row_gap: float = 110.0,
                max_per_row: int | None = None) -> dict[str, Box]:
    """Positions for every server, switch and array (top-left corners)."""
    return run_steps(auto_layout_steps(bed, gap=gap, row_gap=row_gap, max_per_row=max_per_row))


def auto_layout_steps(bed: Bed, *, gap: float = 40.0, row_gap: float = 110.0, max_per_row: int | None = None,
                      faces: dict[str, tuple[float, float]] | None = None) -> Generator[None, None, dict[str, Box]]:
    """`auto_layout` in steps (see STEP); `faces`: each device's `device_size` when the caller has
    them already (the diagram's layout: a face's size walks its ports and measures its labels)."""
    devices: list[Server | Switch | StorageArray] = [*bed.servers, *bed.switches, *bed.arrays]
    tiers: dict[int, list] = {}
    for d in devices:
        tiers.setdefault(tier(d), []).append(d)
    g = yield from _device_graph(bed)
    size_of: dict[str, tuple[float, float]] = dict(faces or {})
    for pause, d in _stepping(devices):
        if pause:
            yield
        if d.id not in size_of:
            size_of[d.id] = device_size(d)
    if max_per_row is None:
        max_per_row = max(8, int(math.sqrt(len(devices)) * 1.6))
    order: dict[str, float] = {}
    boxes: dict[str, Box] = {}
    y = 0.0
    for t in sorted(tiers):
        yield
        members = tiers[t]
        if order:
            # each device by the mean position of its neighbours in the tiers above (its id breaks ties)
            rank: dict[str, tuple[float, str]] = {}
            for pause, d in _stepping(members):
                if pause:
                    yield
                around = [order[n] for n in g.get(d.id, ()) if n in order]
                rank[d.id] = (sum(around) / len(around) if around else float("inf"), d.id)
            members = sorted(members, key=lambda d: rank[d.id])
        else:
            members = sorted(members, key=lambda d: d.id)
        sizes = [size_of[d.id] for d in members]
        slot = max(w for w, _ in sizes) + gap
        height = max(h for _, h in sizes)
        rows = [members[i:i + max_per_row] for i in range(0, len(members), max_per_row)]
        widest = min(len(members), max_per_row) * slot
        for row in rows:
            offset = (widest - len(row) * slot) / 2
            for i, d in enumerate(row):
                w, h = size_of[d.id]
                x = offset + i * slot + (slot - gap - w) / 2
                boxes[d.id] = Box(x, y, w, h)
                order[d.id] = x
            y += height + row_gap * (0.5 if len(rows) > 1 else 1)
            yield
        if len(rows) > 1:
            y += row_gap * 0.5
    # centre each tier on the widest
    width = max((b.x + b.w for b in boxes.values()), default=0.0)
    by_tier: dict[int, list[str]] = {}
    for d in devices:
        by_tier.setdefault(tier(d), []).append(d.id)
    for ids in by_tier.values():
        yield
        right = max(boxes[ident].x + boxes[ident].w for ident in ids)
        left = min(boxes[ident].x for ident in ids)
        shift = (width - (right - left)) / 2 - left
        for pause, ident in _stepping(ids):
            if pause:
                yield
            b = boxes[ident]
            boxes[ident] = Box(b.x + shift, b.y, b.w, b.h)
    return boxes


# ----------------------------------------------------------------------------- the drawn diagram

VM_CHIP_H = 15.0        # one row of VM chips inside a host
VM_CHIP_MIN_W = 52.0
VM_ROWS_MAX = 4
NETWORK_CHIP = (150.0, 26.0)
VM_CHIP = (90.0, 22.0)
STRIP_GAP = 16.0
TIER_GAP = 84.0         # room between tiers for the cables' bends (the layout's default is roomier)


def vm_grid(width: float, count: int) -> tuple[int, int]:
    """(columns, rows) of the VM chips a host of this width shows (the last chip may say '+N')."""
    if count <= 0:
        return 0, 0
    cols = max(1, int((width - 8) // VM_CHIP_MIN_W))
    return cols, min(VM_ROWS_MAX, math.ceil(count / cols))


def drawn_size(dev: Any, vms: int = 0, *, expanded: bool = False) -> tuple[float, float]:
    """Width and height of a device on the diagram: the layout's size plus room for VM chips."""
    if isinstance(dev, Chassis):        # its blades and I/O modules are drawn in their bays inside it
        return chassis_width(dev), CHASSIS_H
    return _with_vm_chips(dev, device_size(dev, expanded=expanded), vms)


def _with_vm_chips(dev: Any, size: tuple[float, float], vms: int) -> tuple[float, float]:
    w, h = size
    if isinstance(dev, Server) and vms:
        _cols, rows = vm_grid(w, vms)
        h += rows * VM_CHIP_H + 4
    return w, h


def chassis_contents(bed: Bed, chassis: str) -> list[Server | Switch]:
    """The blades (servers) and I/O modules (switches) a chassis holds, drawn in its bays."""
    blades: list[Server | Switch] = [s for s in bed.servers if s.chassis == chassis]
    return blades + [s for s in bed.switches if s.chassis == chassis]


def vms_by_host(bed: Bed) -> dict[str, list[VM]]:
    return run_steps(_vms_by_host_steps(bed))


def _vms_by_host_steps(bed: Bed) -> Generator[None, None, dict[str, list[VM]]]:
    servers = {s.id for s in bed.servers}
    out: dict[str, list[VM]] = {}
    for pause, vm in _stepping(bed.vms):
        if pause:
            yield
        if vm.host in servers:
            out.setdefault(vm.host, []).append(vm)
    return out


def layout(bed: Bed, *, keep_positions: bool = True) -> dict[str, Box]:
    """Where every drawn component goes (top-left corners and drawn sizes): `layout_steps` at once."""
    return run_steps(layout_steps(bed, keep_positions=keep_positions))


def layout_steps(bed: Bed, *, keep_positions: bool = True) -> Generator[None, None, dict[str, Box]]:
    """Where every drawn component goes (top-left corners and drawn sizes), in steps (see STEP).

    Devices the model positions keep their x/y (unless keep_positions is false); the rest
    take their place in `auto_layout`'s tiers, with rows pushed apart to
    make room for the VM chips the hosts show.  Chassis sit in a row above the tiers;
    networks and VMs without a host (which have no position in the model) line up in a
    strip above everything.
    """
    hosted = yield from _vms_by_host_steps(bed)
    drawn: list[Server | Switch | StorageArray] = [*bed.servers, *bed.switches, *bed.arrays]
    devices = {d.id: d for d in drawn}
    need_auto = [d for d in devices.values() if not keep_positions or d.x is None or d.y is None]
    auto: dict[str, Box] = {}
    faces: dict[str, tuple[float, float]] = {}      # device_size: measured once for both layouts
    sizes: dict[str, tuple[float, float]] = {}
    for pause, (ident, dev) in _stepping(list(devices.items())):
        if pause:
            yield
        faces[ident] = device_size(dev)
        sizes[ident] = _with_vm_chips(dev, faces[ident], len(hosted.get(ident, ())))
    if need_auto:
        raw = yield from auto_layout_steps(bed, row_gap=TIER_GAP, faces=faces)
        auto = _make_room(raw, {i: sizes[i] for i in raw})
        yield
    boxes: dict[str, Box] = {}
    for pause, (ident, dev) in _stepping(list(devices.items())):
        if pause:
            yield
        w, h = sizes[ident]
        if keep_positions and dev.x is not None and dev.y is not None:
            boxes[ident] = Box(dev.x, dev.y, w, h)
        else:
            b = auto[ident]
            boxes[ident] = Box(b.x, b.y, w, h)
    top = min((b.y for b in boxes.values()), default=0.0)
    left = min((b.x for b in boxes.values()), default=0.0)
    x = left
    chassis_h = max((drawn_size(c)[1] for c in bed.chassis), default=0.0)
    for c in bed.chassis:
        w, h = drawn_size(c)
        if keep_positions and c.x is not None and c.y is not None:
            boxes[c.id] = Box(c.x, c.y, w, h)
        else:
            boxes[c.id] = Box(x, top - chassis_h - 60, w, h)
            x += w + 40
    boxes.update(strip_boxes(bed, boxes))
    return boxes


def network_label(n: Network) -> str:
    return n.id + (f" · {n.cidr}" if n.cidr else "") + (f" · VLAN {n.vlan}" if n.vlan is not None else "")


def chip_size(item: Any) -> tuple[float, float]:
    """A network or an unplaced VM chip, wide enough for its label (about 6.6 px a character at 10 px)."""
    if isinstance(item, Network):
        return min(max(36 + 6.6 * len(network_label(item)), 110.0), 320.0), NETWORK_CHIP[1]
    return min(max(24 + 6.6 * len(f"{item.id} (no host)"), VM_CHIP[0]), 260.0), VM_CHIP[1]


def drawn_groups(bed: Bed) -> list[Any]:
    """The array groups the diagram draws as cards, under a name no other component takes: one that
    holds storage lists its volumes, one known only from discovery says what is known of it."""
    taken: set[str] = set()
    for coll in (bed.servers, bed.switches, bed.arrays, bed.chassis, bed.networks, bed.vms):
        taken.update(d.id for d in coll)
    return [g for g in bed.array_groups if g.name and g.name not in taken]


def group_member_ids(bed: Bed, group: str) -> list[str]:
    return [a.id for a in bed.arrays if a.group == group]


def strip_boxes(bed: Bed, boxes: dict[str, Box], groups: list[Any] | None = None) -> dict[str, Box]:
    """Networks, unplaced VMs and array groups' cards: one row of chips above the drawing.  `groups`: the
    groups as drawn (a chosen configuration's), when not the bed's own."""
    top = min((b.y for b in boxes.values()), default=0.0)
    x = min((b.x for b in boxes.values()), default=0.0)
    servers = {s.id for s in bed.servers}
    chips = [(n.id, chip_size(n)) for n in bed.networks]
    chips += [(v.id, chip_size(v)) for v in bed.vms if v.host not in servers]
    # an array group that holds storage: a card of its volumes (they belong to no one member)
    chips += [(g.name, group_card_size(g, group_member_ids(bed, g.name)))
              for g in (drawn_groups(bed) if groups is None else groups)]
    out = {}
    y = top - max((h for _i, (_w, h) in chips), default=NETWORK_CHIP[1]) - 40
    for ident, (w, h) in chips:
        out[ident] = Box(x, y, w, h)
        x += w + STRIP_GAP
    return out


def _make_room(boxes: dict[str, Box], sizes: dict[str, tuple[float, float]]) -> dict[str, Box]:
    """Push rows down so that taller drawn boxes keep the layout's gap to the row below."""
    rows = sorted({b.y for b in boxes.values()})
    extra_by_row = {y: 0.0 for y in rows}
    for ident, b in boxes.items():
        extra_by_row[b.y] = max(extra_by_row[b.y], sizes[ident][1] - b.h)
    shift, shifts = 0.0, {}
    for y in rows:
        shifts[y] = shift
        shift += extra_by_row[y]
    return {i: Box(b.x, b.y + shifts[b.y], sizes[i][0], sizes[i][1]) for i, b in boxes.items()}


def overlapping(boxes: dict[str, Box]) -> list[tuple[str, str]]:
    """Pairs of drawn boxes that overlap (sweep over x; fine for thousands of boxes)."""
    items = sorted(boxes.items(), key=lambda kv: kv[1].x)
    out: list[tuple[str, str]] = []
    active: list[tuple[str, Box]] = []
    for ident, b in items:
        active = [(i, a) for i, a in active if a.x + a.w > b.x]
        out += [(i, ident) for i, a in active if a.y < b.y + b.h and b.y < a.y + a.h]
        active.append((ident, b))
    return out
