"""Capacity and IOPS arithmetic for RAID groups and pools.

Usable capacity follows the RAID level and its geometry (data vs parity/mirror disks).
The IOPS estimate is the classic sizing formula the seed reports use (seed 002, App. A):
front-end IOPS = disks x per-disk IOPS / (read share + write share x write penalty).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

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

LEVEL_NAMES = {"raid0": "RAID 0", "raid1": "RAID 1", "raid10": "RAID 10", "raid5": "RAID 5",
               "raid6": "RAID 6", "raid50": "RAID 50", "raid60": "RAID 60"}

_GEOMETRY = re.compile(r"^\s*(\d+)\s*D\s*\+\s*(\d+)\s*([PD])\s*$", re.IGNORECASE)


def disk_iops(media: str, rpm: int | None) -> float:
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
    """Usable capacity in GB: data disks x the smallest member (a RAID set uses the smallest size)."""
    if not disk_sizes:
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
