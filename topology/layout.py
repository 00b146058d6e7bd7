"""Automatic layout for beds loaded from a file: devices in tiers, as lab diagrams draw them.

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
from dataclasses import dataclass

import networkx as nx

from topology.index import BedIndex
from topology.model import Bed, Server, StorageArray, Switch

TIER_OF_ROLE = {"infrastructure": 0, "load_client": 0, "test_controller": 0, "management": 0,
                "hypervisor": 1, "application": 1}


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float


def device_size(dev) -> tuple[float, float]:
    """Width and height a device needs on the canvas (ports drawn along its lower edge)."""
    if isinstance(dev, Server):
        ports = sum(len(a.ports) for a in dev.adapters)
        return max(140.0, 18.0 * ports + 20), 64.0
    if isinstance(dev, Switch):
        return max(160.0, min(18.0 * len(dev.ports), 600.0)), 44.0
    if isinstance(dev, StorageArray):
        ports = sum(len(c.ports) for c in dev.controllers)
        return max(200.0, 18.0 * ports + 40), 90.0
    return 120.0, 50.0


def tier(dev) -> int:
    if isinstance(dev, Server):
        return TIER_OF_ROLE.get(dev.role, 1)
    if isinstance(dev, Switch):
        san = dev.kind == "fc" or ("iscsi" in dev.roles and "lan" not in dev.roles)
        return 3 if san else 2
    return 4


def _device_graph(bed: Bed, idx: BedIndex) -> nx.Graph:
    g = nx.Graph()
    for link in bed.links:
        a, b = idx.endpoint_device(link.a), idx.endpoint_device(link.b)
        if a is not None and b is not None and a is not b:
            g.add_edge(a.id, b.id)
    for p in bed.paths:
        host = idx.servers.get(p.host) or (idx.servers.get(idx.vms[p.host].host) if p.host in idx.vms else None)
        tgt = idx.port(p.target)
        if host is not None and tgt is not None:
            g.add_edge(host.id, tgt.device.id)
    return g


def auto_layout(bed: Bed, *, gap: float = 40.0, row_gap: float = 110.0,
                max_per_row: int | None = None) -> dict[str, Box]:
    """Positions for every server, switch and array (top-left corners)."""
    idx = BedIndex(bed)
    devices = [*bed.servers, *bed.switches, *bed.arrays]
    tiers: dict[int, list] = {}
    for d in devices:
        tiers.setdefault(tier(d), []).append(d)
    g = _device_graph(bed, idx)
    if max_per_row is None:
        max_per_row = max(8, int(math.sqrt(len(devices)) * 1.6))
    order: dict[str, float] = {}
    boxes: dict[str, Box] = {}
    y = 0.0
    for t in sorted(tiers):
        members = tiers[t]

        def key(d, _order=order):
            around = [_order[n] for n in g.neighbors(d.id) if n in _order] if d.id in g else []
            return (sum(around) / len(around) if around else float("inf"), d.id)

        members = sorted(members, key=key) if order else sorted(members, key=lambda d: d.id)
        sizes = [device_size(d) for d in members]
        slot = max(w for w, _ in sizes) + gap
        height = max(h for _, h in sizes)
        rows = [members[i:i + max_per_row] for i in range(0, len(members), max_per_row)]
        widest = min(len(members), max_per_row) * slot
        for row in rows:
            offset = (widest - len(row) * slot) / 2
            for i, d in enumerate(row):
                w, h = device_size(d)
                x = offset + i * slot + (slot - gap - w) / 2
                boxes[d.id] = Box(x, y, w, h)
                order[d.id] = x
            y += height + row_gap * (0.5 if len(rows) > 1 else 1)
        if len(rows) > 1:
            y += row_gap * 0.5
    # centre each tier on the widest
    width = max((b.x + b.w for b in boxes.values()), default=0.0)
    by_tier: dict[int, list[str]] = {}
    for d in devices:
        by_tier.setdefault(tier(d), []).append(d.id)
    for ids in by_tier.values():
        right = max(boxes[i].x + boxes[i].w for i in ids)
        left = min(boxes[i].x for i in ids)
        shift = (width - (right - left)) / 2 - left
        for i in ids:
            b = boxes[i]
            boxes[i] = Box(b.x + shift, b.y, b.w, b.h)
    return boxes


def overlaps(boxes: dict[str, Box]) -> list[tuple[str, str]]:
    """Pairs of boxes that overlap (a layout is readable when this is empty)."""
    items = sorted(boxes.items(), key=lambda kv: (kv[1].y, kv[1].x))
    out = []
    rows: dict[float, list[tuple[str, Box]]] = {}
    for k, b in items:
        rows.setdefault(round(b.y, 3), []).append((k, b))
    keys = sorted(rows)
    for i, yk in enumerate(keys):
        cand = rows[yk] + [kb for yk2 in keys[i + 1:i + 3] for kb in rows[yk2]]
        cand.sort(key=lambda kv: kv[1].x)
        for j, (ka, a) in enumerate(cand):
            for kb, b in cand[j + 1:]:
                if b.x >= a.x + a.w:
                    break
                if a.y < b.y + b.h and b.y < a.y + a.h and (ka, kb) not in out:
                    out.append((ka, kb))
    return out
