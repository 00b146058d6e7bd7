"""RAID capacity and IOPS arithmetic against the figures the seed reports print."""
from __future__ import annotations

import pytest

from topology import capacity as cap


@pytest.mark.parametrize("level,n,size,usable", [
    ("raid10", 4, 300, 600),       # seed 000: SQL / Exchange groups, 4 x 300 GB
    ("raid1", 2, 146, 146),        # seed 000: Logs group
    ("raid5", 9, 450, 3600),       # seed 002: 8D+1P of 450 GB disks
    ("raid6", 23, 600, 12600),     # seed 001: PS6110XV RAID 6, 23 drives + 1 spare
    ("raid50", 22, 600, 12000),    # two RAID 5 spans
    ("raid60", 8, 600, 2400),
    ("raid0", 3, 100, 300),
])
def test_usable_capacity(level, n, size, usable):
    assert cap.usable_gb(level, [size] * n) == usable


def test_written_geometry_wins_and_smallest_disk_counts():
    assert str(cap.geometry("raid5", 9, "8D+1P")) == "8D+1P"
    assert cap.usable_gb("raid10", [300, 300, 146, 146], "") == 292


@pytest.mark.parametrize("level,n,ok", [
    ("raid1", 2, True), ("raid1", 3, False), ("raid10", 4, True), ("raid10", 5, False), ("raid10", 2, False),
    ("raid5", 3, True), ("raid5", 2, False), ("raid6", 4, True), ("raid6", 3, False),
    ("raid50", 6, True), ("raid50", 5, False), ("raid60", 8, True), ("raid60", 7, False),
])
def test_member_rules(level, n, ok):
    assert (cap.member_problem(level, n) is None) is ok


def test_write_penalty_matches_seed_002_appendix_a():
    assert cap.WRITE_PENALTY["raid5"] == 4 and cap.WRITE_PENALTY["raid10"] == 2 and cap.WRITE_PENALTY["raid6"] == 6


def test_group_iops_formula():
    per_disk = [cap.disk_iops("hdd", 15000)] * 8
    # all reads: the spindles' sum; all writes on RAID 10: half of it
    assert cap.group_iops("raid10", per_disk, 1.0) == pytest.approx(8 * 180)
    assert cap.group_iops("raid10", per_disk, 0.0) == pytest.approx(8 * 180 / 2)
    # 70/30 on RAID 5: 1440 / (0.7 + 0.3 * 4)
    assert cap.group_iops("raid5", per_disk, 0.7) == pytest.approx(1440 / 1.9)
    assert cap.disk_iops("hdd", 7200) < cap.disk_iops("hdd", 10000) < cap.disk_iops("hdd", 15000) \
        < cap.disk_iops("ssd", None) < cap.disk_iops("nvme", None)
