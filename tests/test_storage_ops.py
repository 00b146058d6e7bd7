"""Storage edits (topology/storage_ops.py): each one applied and reverted restores the project
file byte for byte, leaves a bed that still loads, and an impossible request is refused with
a reason the user can act on."""
from __future__ import annotations

from pathlib import Path

import pytest

from topology import storage_ops as ops
from topology.fileformat import dumps, load, loads
from topology.storage_ops import StorageEditRefused

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"

NEW_ARRAY_BED = """\
format_version: 1
bed:
  name: new array
servers:
  - {id: h1, role: hypervisor, memory_gb: 64}
  - {id: h2, role: hypervisor, memory_gb: 64}
vms:
  - {id: vm1, host: h1, memory_gb: 4}
arrays:
  - id: arr
    model: dual-controller iSCSI array
    controllers:
      - {name: c0}
      - {name: c1}
    enclosures:
      - name: E0
        slots: 12
        disks:
          - {slots: 0-9, size_gb: 600, rpm: 15000, media: hdd, interface: sas}
          - {slots: 10, size_gb: 300, rpm: 10000, media: hdd, interface: sas}
      - name: E1
        slots: 12
        disks:
          - {slots: 0-7, size_gb: 400, media: ssd, interface: sas}
    disk_groups:
      - {name: data, raid: raid10, members: ['E0:0-3'], owner: c0}
      - {name: spare-group, raid: raid1, members: ['E0:8-9'], owner: c1}
    spares: ['E0:7']
    volumes:
      - {name: db, group: data, size_gb: 500, purpose: [database]}
    host_groups:
      - {name: cluster}
    hosts:
      - {name: h1, server: h1, host_group: cluster}
    mappings:
      - {volume: db, to: cluster, lun: 0}
"""


@pytest.fixture
def bed():
    return loads(NEW_ARRAY_BED)


@pytest.fixture(scope="module")
def seed000_text() -> str:
    return dumps(load(EXAMPLES / "md3000i-hyperv-cluster.yaml"))


def roundtrip(bed, edit):
    """Apply, check the bed still loads, revert, check the file is back byte for byte; redo too."""
    before = dumps(bed)
    edit.apply()
    after = dumps(bed)
    assert after != before, "the edit changed nothing"
    reloaded = loads(after)            # raises BedFileError when a reference dangles
    assert dumps(reloaded) == after
    edit.revert()
    assert dumps(bed) == before
    edit.apply()                        # redo gives the same file again
    assert dumps(bed) == after
    return reloaded


def array(b, name="arr"):
    return next(a for a in b.arrays if a.id == name)


# ------------------------------------------------------------------------------- round trips

CASES = {
    "create group": lambda b: ops.create_disk_group(b, "arr", [("E0", 4), ("E0", 5), ("E0", 6)], "raid5",
                                                    name="logs", owner="c1"),
    "create group across enclosures": lambda b: ops.create_disk_group(
        b, "arr", [("E1", 0), ("E0", 4), ("E0", 6), ("E1", 1)], "raid10"),
    "delete group": lambda b: ops.delete_disk_group(b, "arr", "spare-group"),
    "set raid level": lambda b: ops.set_raid_level(b, "arr", "data", "raid5"),
    "mark spares": lambda b: ops.mark_spares(b, "arr", [("E0", 6), ("E1", 7)]),
    "unmark spares": lambda b: ops.unmark_spares(b, "arr", [("E0", 7)]),
    "create sized volume": lambda b: ops.create_volume(b, "arr", "log", group="data", size_gb=100,
                                                       purpose="log"),
    "create remainder volume": lambda b: ops.create_volume(b, "arr", "rest", group="data", remainder=True),
    "delete volume with its mapping": lambda b: ops.delete_volume(b, "arr", "db"),
    "map to a server (new array host)": lambda b: ops.map_volume(b, "arr", "db", "h2", lun=3),
    "map to an array host": lambda b: ops.map_volume(b, "arr", "db", "h1", lun=1),
    "unmap": lambda b: ops.unmap(b, "arr", "db", "cluster"),
    "create host group": lambda b: ops.create_host_group(b, "arr", "backup"),
    "add a server to a host group": lambda b: ops.add_host_to_group(b, "arr", "h2", "cluster"),
    "create thin pool": lambda b: ops.create_pool(b, "arr", "Pool 0", ["spare-group"], "thin"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_edit_reverts_byte_for_byte_and_keeps_the_bed_loadable(bed, name):
    roundtrip(bed, CASES[name](bed))


def test_a_new_group_is_written_as_compact_ranges_in_enclosure_order(bed):
    edit = ops.create_disk_group(bed, "arr", [("E1", 1), ("E0", 6), ("E0", 4), ("E1", 0), ("E0", 5)],
                                 "raid5", name="mixed", owner="c1")
    reloaded = roundtrip(bed, edit)
    g = array(reloaded).disk_groups[-1]
    assert (g.name, g.raid, g.owner, g.members) == ("mixed", "raid5", "c1", ["E0:4-6", "E1:0-1"])
    assert "arr:group:mixed" in edit.touched() and "arr:E0:4" in edit.touched()
    assert edit.text == "Create disk group mixed (RAID 5, 5 disks)"


def test_default_group_name_is_the_next_free_one(bed):
    edit = ops.create_disk_group(bed, "arr", [("E0", 4), ("E0", 5)], "raid1")
    edit.apply()
    assert array(bed).disk_groups[-1].name == "Group 3"


def test_spares_are_merged_into_ranges_and_released(bed):
    ops.mark_spares(bed, "arr", [("E0", 6), ("E0", 5)]).apply()
    assert array(bed).spares == ["E0:5-7"]
    ops.unmark_spares(bed, "arr", [("E0", 6)]).apply()
    assert array(bed).spares == ["E0:5", "E0:7"]


def test_changing_the_level_drops_a_geometry_written_for_the_old_one():
    b = load(EXAMPLES / "ams2500-exchange-esrp.yaml")
    g = array(b, "AMS2500").disk_groups[0]
    assert (g.raid, g.geometry) == ("raid5", "8D+1P")
    with pytest.raises(StorageEditRefused, match="RAID 10 needs an even number of disks; disk group RG1 has 9"):
        ops.set_raid_level(b, "AMS2500", "RG1", "raid10")
    edit = ops.set_raid_level(b, "AMS2500", "RG1", "raid6")
    edit.apply()
    assert (g.raid, g.geometry) == ("raid6", "")
    edit.revert()
    assert (g.raid, g.geometry) == ("raid5", "8D+1P")


def test_remainder_volume_takes_what_the_group_has_left(bed):
    ops.create_volume(bed, "arr", "rest", group="data", remainder=True).apply()
    use = ops.usage(bed, "arr")[("group", "data")]
    assert use.usable_gb == 1200 and use.allocated_gb == 500 and use.free_gb == 0
    assert ops.volume_size(bed, "arr", "rest") == 700


def test_mapping_a_server_creates_its_array_host_and_the_next_free_lun(bed):
    assert ops.next_free_lun(bed, "arr", "h1") == 1      # h1 sees LUN 0 through its host group
    assert ops.next_free_lun(bed, "arr", "h2") == 0
    edit = ops.map_volume(bed, "arr", "db", "h2")
    reloaded = roundtrip(bed, edit)
    a = array(reloaded)
    assert [(h.name, h.server) for h in a.hosts] == [("h1", "h1"), ("h2", "h2")]
    assert (a.mappings[-1].volume, a.mappings[-1].to, a.mappings[-1].lun) == ("db", "h2", None)


def test_every_op_on_the_seed_000_array_round_trips(seed000_text):
    b = loads(seed000_text)
    steps = [
        lambda: ops.unmap(b, "MD3000i", "Witness", "MD3000-Cluster"),
        lambda: ops.map_volume(b, "MD3000i", "Witness", "R710-1", lun=7),
        lambda: ops.create_host_group(b, "MD3000i", "Backup"),
        lambda: ops.add_host_to_group(b, "MD3000i", "DC", "Backup"),
        lambda: ops.set_raid_level(b, "MD3000i", "OS", "raid5"),
    ]
    for step in steps:
        roundtrip(b, step())
    assert dumps(b) != seed000_text


# ------------------------------------------------------------------------------- refusals

REFUSALS = [
    (lambda b: ops.create_disk_group(b, "arr", [], "raid1"), "select at least one disk"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 11), ("E0", 10)], "raid1"),
     r"slot E0:11 is empty: insert a disk there first"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 3), ("E0", 4)], "raid1"),
     r"slot E0:3 already belongs to disk group data"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 7), ("E0", 4)], "raid1"),
     r"slot E0:7 already belongs to the hot spares"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 4), ("E0", 5)], "raid5"),
     r"RAID 5 needs at least 3 disks; 2 selected"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", s) for s in (4, 5, 6)] + [("E1", 0), ("E1", 1)], "raid10"),
     r"RAID 10 needs an even number of disks; 5 selected"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 4), ("E0", 5), ("E0", 6)], "raid1"),
     r"RAID 1 needs exactly 2 disks; 3 selected"),
    (lambda b: ops.create_disk_group(b, "arr", [("E9", 0)], "raid0"), "arr has no enclosure 'E9'"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 12)], "raid0"),
     "enclosure E0 has slots 0-11; there is no slot 12"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 4), ("E0", 5)], "raid1", name="data"),
     "arr already has a disk group 'data'"),
    (lambda b: ops.create_disk_group(b, "arr", [("E0", 4), ("E0", 5)], "raid1", owner="c9"),
     "arr has no controller 'c9'"),
    (lambda b: ops.create_disk_group(b, "nope", [("E0", 4)], "raid0"), "there is no storage array 'nope'"),
    (lambda b: ops.delete_disk_group(b, "arr", "data"), "disk group data holds volume\\(s\\) db: delete them first"),
    (lambda b: ops.set_raid_level(b, "arr", "spare-group", "raid5"),
     "RAID 5 needs at least 3 disks; disk group spare-group has 2"),
    (lambda b: ops.mark_spares(b, "arr", [("E0", 0)]), "slot E0:0 already belongs to disk group data"),
    (lambda b: ops.mark_spares(b, "arr", [("E1", 9)]), "slot E1:9 is empty"),
    (lambda b: ops.unmark_spares(b, "arr", [("E0", 6)]), "slot E0:6 is not a hot spare"),
    (lambda b: ops.create_volume(b, "arr", "big", group="data", size_gb=800),
     "disk group data has 700 GB free; the volume needs 800 GB"),
    (lambda b: ops.create_volume(b, "arr", "db", group="data", size_gb=1), "arr already has a volume 'db'"),
    (lambda b: ops.create_volume(b, "arr", "x", group="data"),
     "give the volume a size in GB, or let it take the remainder"),
    (lambda b: ops.create_volume(b, "arr", "  ", group="data", size_gb=1), "give the volume a name"),
    (lambda b: ops.create_volume(b, "arr", "x", size_gb=1), "put the volume in one disk group or one pool"),
    (lambda b: ops.create_volume(b, "arr", "x", group="data", size_gb=1, purpose="toaster"),
     "unknown purpose 'toaster'"),
    (lambda b: ops.map_volume(b, "arr", "db", "cluster"), "volume db is already mapped to cluster"),
    (lambda b: ops.map_volume(b, "arr", "db", "h1", lun=0), "h1 already sees LUN 0; choose another number"),
    (lambda b: ops.map_volume(b, "arr", "db", "ghost"),
     "'ghost' is neither a host or host group of arr nor a server or VM"),
    (lambda b: ops.unmap(b, "arr", "db", "h2"), "volume db is not mapped to h2"),
    (lambda b: ops.create_host_group(b, "arr", "h1"), "arr already has a host or host group named 'h1'"),
    (lambda b: ops.add_host_to_group(b, "arr", "h1", "cluster"), "h1 is already in host group cluster"),
    (lambda b: ops.create_pool(b, "arr", "p", ["data"]), "disk group data holds volume\\(s\\) db"),
    (lambda b: ops.create_pool(b, "arr", "p", []), "select the disk groups the pool is built from"),
]


@pytest.mark.parametrize("build, reason", REFUSALS, ids=[r[1][:40] for r in REFUSALS])
def test_impossible_requests_are_refused_with_the_reason(bed, build, reason):
    before = dumps(bed)
    with pytest.raises(StorageEditRefused, match=reason):
        build(bed)
    assert dumps(bed) == before


def test_a_volume_in_use_elsewhere_is_not_deleted(seed000_text):
    b = loads(seed000_text)
    with pytest.raises(StorageEditRefused) as info:
        ops.delete_volume(b, "MD3000i", "Logs")
    text = str(info.value)
    assert "VM Exchange (disk Logs)" in text and "cluster MD3000-Cluster (shared volume)" in text
    assert isinstance(info.value, ValueError)


def test_a_group_inside_a_pool_takes_no_volume_of_its_own():
    b = load(EXAMPLES / "ams2500-exchange-esrp.yaml")
    refusal = "disk group RG1 belongs to pool Pool 0: create the volume in the pool"
    with pytest.raises(StorageEditRefused, match=refusal):
        ops.create_volume(b, "AMS2500", "x", group="RG1", size_gb=10)
    with pytest.raises(StorageEditRefused, match="slot RKA31:12 is empty"):
        ops.mark_spares(b, "AMS2500", [("RKA31", 12)])


# ------------------------------------------------------------------------------- ids

def test_subject_ids_are_taken_apart(bed):
    assert ops.parse_subject(bed, "arr:group:data") == ops.Subject("arr", "group", "data")
    assert ops.parse_subject(bed, "arr:pool:Pool 0") == ops.Subject("arr", "pool", "Pool 0")
    assert ops.parse_subject(bed, "arr:E1:3") == ops.Subject("arr", "slot", slot=("E1", 3))
    assert ops.parse_subject(bed, "arr:db") == ops.Subject("arr", "volume", "db")
    assert ops.parse_subject(bed, "arr") == ops.Subject("arr", "array")
    assert ops.parse_subject(bed, "h1") is None
