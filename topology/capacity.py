"""Capacity and IOPS arithmetic for RAID groups, pools and the volumes on them.

Usable capacity follows the RAID level and its geometry (data vs parity/mirror disks); a
remainder volume takes what its group or pool has left.  The rules (RAID-007, CAP-006),
the storage editor and the printed storage appendix read the same figures from here.
The IOPS estimate is the classic sizing formula the seed reports use (seed 002, App. A):
front-end IOPS = disks x per-disk IOPS / (read share + write share x write penalty).
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from topology.ids import volume_ref
from topology.index import ArrayScope, BedIndex
from topology.model import DiskGroup, StorageArray, Volume
from topology.unknown import NOT_STATED, stated, stated_sum
from topology.vocabulary import RAID_NAMES as LEVEL_NAMES  # also the name the storage views read

# (minimum members, must be even, exact count) per level: RAID-001
RAID_MIN_MEMBERS: dict[str, tuple[int, bool, bool]] = {
    "raid0": (1, False, False),
    "raid1": (2, False, True),
    "raid10": (4, True, False),
    "raid5": (3, False, False),
    "raid6": (4, False, False),
    "raid50": (6, False, False),
    "raid60": (8, False, False),
}

# Back-end disk operations per host write.  Seed 002 App. A: "RAID-5 requires four physical
# disk I/Os on the backend for every host write, whereas RAID-1+0 consumes two ... RAID-6
# requires six".
WRITE_PENALTY = {"raid0": 1, "raid1": 2, "raid10": 2, "raid5": 4, "raid6": 6, "raid50": 4, "raid60": 6}

# Random small-block IOPS per spindle, the usual planning figures for enterprise drives.
_HDD_IOPS = ((15000, 180), (10000, 140), (7200, 80), (5400, 50))
_FLASH_IOPS = {"ssd": 5000, "nvme": 20000}


_GEOMETRY = re.compile(r"^\s*(\d+)\s*D\s*\+\s*(\d+)\s*([PD])\s*$", re.IGNORECASE)


def disk_iops(media: str, rpm: int | None) -> float:
    """Planning IOPS of one drive; 0 when its media, or a spinning drive's speed, is not stated."""
    if media is NOT_STATED or media not in _FLASH_IOPS and rpm is NOT_STATED:
        return 0.0
    if media in _FLASH_IOPS:
        return _FLASH_IOPS[media]
    rpm = rpm or 7200
    for floor, iops in _HDD_IOPS:
        if rpm >= floor:
            return iops
    return _HDD_IOPS[-1][1]


def member_problem(level: str, members: int) -> str | None:
    """Why `members` disks cannot make `level`, or None when they can (RAID-001)."""
    rule = RAID_MIN_MEMBERS.get(level)
    if rule is None:
        return None
    least, even, exact = rule
    name = LEVEL_NAMES.get(level, level)
    if exact and members != least:
        return f"{name} needs exactly {least} disks"
    if members < least:
        return f"{name} needs at least {least} disks"
    if even and members % 2:
        return f"{name} needs an even number of disks"
    return None


@dataclass(frozen=True)
class Geometry:
    data: int
    redundancy: int       # parity or mirror disks

    def __str__(self) -> str:
        return f"{self.data}D+{self.redundancy}P"


def geometry(level: str, members: int, written: str = "") -> Geometry:
    """Data and redundancy disks of a group.  A written geometry (8D+1P, 4D+4D) wins."""
    m = _GEOMETRY.match(written or "")
    if m:
        data, red = int(m.group(1)), int(m.group(2))
        if data + red == members or members == 0:
            return Geometry(data, red)
    if level in ("raid1", "raid10"):
        return Geometry(members // 2, members - members // 2)
    if level == "raid5":
        return Geometry(max(members - 1, 0), min(members, 1))
    if level == "raid6":
        return Geometry(max(members - 2, 0), min(members, 2))
    if level == "raid50":
        spans = 2
        return Geometry(max(members - spans, 0), min(members, spans))
    if level == "raid60":
        spans = 2
        return Geometry(max(members - 2 * spans, 0), min(members, 2 * spans))
    return Geometry(members, 0)


def usable_gb(level: str, disk_sizes: list[float], written_geometry: str = "") -> float:
    """Usable capacity in GB: data disks x the smallest member (a RAID set uses the smallest size);
    0 (unknown) when the level or a member's size is not stated."""
    if not disk_sizes or level is NOT_STATED or NOT_STATED in disk_sizes:
        return 0.0
    g = geometry(level, len(disk_sizes), written_geometry)
    return g.data * min(disk_sizes)


def group_iops(level: str, per_disk: list[float], read_fraction: float) -> float:
    """Front-end IOPS a group sustains at the given read share (0..1)."""
    if not per_disk:
        return 0.0
    read_fraction = min(max(read_fraction, 0.0), 1.0)
    penalty = WRITE_PENALTY.get(level, 1)
    return sum(per_disk) / (read_fraction + (1 - read_fraction) * penalty)


# ----------------------------------------------------------------------------- arrays

def group_usable(scope: ArrayScope, g: DiskGroup) -> float:
    disks = scope.group_disks(g)
    return usable_gb(g.raid, [d.spec.size_gb for d in disks], g.geometry)


def pool_usable(scope: ArrayScope, name: str) -> float:
    pool = scope.pools.get(name)
    formatted = stated(pool.formatted_gb) if pool is not None else None
    if formatted is not None:
        return float(formatted)
    if scope.group is not None:     # an array group's pool: the RAID sets of the members it spans
        return sum(group_usable(m, g) for m in scope.pool_members(name) for g in m.array.disk_groups)
    return sum(group_usable(scope, g) for g in scope.pool_groups(name))


def container_usable(scope: ArrayScope, kind: str, name: str) -> float:
    """Usable GB of a disk group (kind "group") or a pool (kind "pool")."""
    return group_usable(scope, scope.groups[name]) if kind == "group" else pool_usable(scope, name)


def unstated_inputs(scope: ArrayScope, kind: str, name: str) -> list[str]:
    """The values a group's or pool's usable capacity needs that the source does not state."""
    if kind == "pool":
        pool = scope.pools.get(name)
        if pool is not None and stated(pool.formatted_gb) is not None:
            return []
        out = [f"pool {name} formatted capacity"] if pool is not None and pool.formatted_gb is NOT_STATED else []
        if scope.group is not None:
            out += [f"pool {name} members"] if pool is not None and pool.members is NOT_STATED else []
            for m in scope.pool_members(name):
                out += [f"{m.array.id} RAID set"] if not m.array.disk_groups else []
                for raid_set in m.array.disk_groups:
                    out += unstated_inputs(m, "group", raid_set.name)
            return out
        for member in scope.pool_groups(name):
            out += unstated_inputs(scope, "group", member.name)
        return out
    g = scope.groups.get(name)
    if g is None:
        return []
    out = [f"group {name} {what}" for what, v in (("RAID level", g.raid), ("members", g.members))
           if v is NOT_STATED and not (what == "members" and scope.counted_disks(g))]
    sizes = {d.spec.slots: d.ref for d in scope.group_disks(g) if d.spec.size_gb is NOT_STATED}
    out += [f"size of the disks in {ref.rpartition(':')[0]}:{slots}" for slots, ref in sizes.items()]
    return out


def containers(a: StorageArray) -> Iterator[tuple[str, str, list[Volume]]]:
    """(kind, name, volumes) for each disk group or pool of the array that holds volumes."""
    by: dict[tuple[str, str], list[Volume]] = defaultdict(list)
    for v in a.volumes:
        if v.group:
            by[("group", v.group)].append(v)
        elif v.pool:
            by[("pool", v.pool)].append(v)
    names_g = {g.name for g in a.disk_groups}
    names_p = {p.name for p in a.pools}
    for (kind, name), vols in by.items():
        if (kind == "group" and name in names_g) or (kind == "pool" and name in names_p):
            yield kind, name, vols


def volume_sizes(idx: BedIndex) -> dict[str, float]:
    """ARRAY:VOLUME -> size in GB; a remainder volume takes what its group or pool has left.
    Volumes whose size the bed does not give (or marks not stated), and volumes of simulated arrays,
    are left out; so are remainder volumes where the rest is unknown (a size or capacity not stated)."""
    out: dict[str, float] = {}
    for a in [*idx.bed.arrays, *idx.group_views.values()]:
        if a.simulated:
            continue
        scope = idx.scopes[a.id]
        for kind, name, vols in containers(a):
            total = container_usable(scope, kind, name)
            sized = stated_sum(v.size_gb for v in vols)
            rest = [v for v in vols if v.size_gb is None and v.remainder]
            unknown = any(v.size_gb is NOT_STATED for v in vols) or rest and unstated_inputs(scope, kind, name)
            for v in vols:
                size = stated(v.size_gb)
                if size is not None:
                    out[volume_ref(a.id, v.name)] = float(size)
                elif v.remainder and v.size_gb is None and not unknown:
                    out[volume_ref(a.id, v.name)] = max(total - sized, 0.0) / len(rest)
    return out
