"""Topology a source does not state: where a cable goes, which slots a disk group's members sit in,
which VMs a scenario runs.  Each is written `not stated`; the rules that need it say they could
not judge instead of judging a guess, and nothing joins two unknown ends."""
from __future__ import annotations

from pathlib import Path

import pytest

from resources import example_path
from topology.capacity import group_usable
from topology.errors import BedFileError
from topology.fileformat import dumps, load, loads
from topology.index import BedIndex
from topology.unknown import NOT_STATED
from topology.validation import validate
from topology.validation.context import Context

GROUP_BED = Path(__file__).resolve().parent / "data" / "array_groups" / "three-member-group.yaml"


def _half_cabled() -> str:
    """The three-member bed with the host's eth2 and eth3 and one of m3's ports cabled to places the
    source does not name."""
    text = GROUP_BED.read_text()
    for end in ('"R710:eth2", b: "sw2:1"', '"R710:eth3", b: "sw1:2"', '"m3:cm0-eth2", b: "sw1:32"'):
        assert end in text
        text = text.replace(end, end.split(", b:")[0] + ", b: not stated")
    return text


def test_a_cable_whose_far_end_is_not_stated_loads_saves_and_joins_nothing():
    bed = loads(_half_cabled())
    ends = [lk for lk in bed.links if lk.b is NOT_STATED]
    assert [lk.a for lk in ends] == ["R710:eth2", "R710:eth3", "m3:cm0-eth2"]
    assert "b: not stated" in dumps(bed) and loads(dumps(bed)) == bed
    ctx = Context(bed)
    # the two unknown ends are not one cable: no path leaves by eth2 or eth3, none ends on m3:cm0-eth2
    assert {p.initiator for p in ctx.paths} == {"R710:eth1"}
    assert "m3:cm0-eth2" not in {p.target for p in ctx.paths}
    # the port is cabled (CON-003 says nothing about it)
    assert not [f for f in validate(bed) if f.code == "CON-003"]


def test_path_rules_could_not_judge_over_a_cable_whose_far_end_is_not_stated():
    found = validate(loads(_half_cabled()))
    spof = [f for f in found if f.code == "PATH-002"]
    # every derived path leaves by eth1, but eth2 and eth3 are cabled somewhere: not a verdict
    assert spof and all(f.severity == "info" and f.message.startswith("could not judge") for f in spof)
    assert "where R710:eth2's cable goes" in spof[0].message and "where R710:eth3's cable goes" in spof[0].message
    # drawn as a guess (eth2 and eth3 unplugged), the same bed is judged: the single point of failure is an error
    guessed = _half_cabled().replace('  - {a: "R710:eth2", b: not stated}\n', "").replace(
        '  - {a: "R710:eth3", b: not stated}\n', "")
    guessed = guessed.replace('"m3:cm0-eth2", b: not stated', '"m3:cm0-eth2", b: "sw1:32"')
    (judged,) = [f for f in validate(loads(guessed)) if f.code == "PATH-002"]
    assert judged.severity == "error" and "goes through R710:eth1" in judged.message


def test_a_cable_with_no_end_stated_is_refused_on_its_line():
    text = GROUP_BED.read_text().replace('  - {a: "R710:eth0", b: "lan1:1"}', "  - {a: not stated, b: not stated}")
    with pytest.raises(BedFileError) as caught:
        loads(text, "bed.yaml")
    assert any(p.where == "links[3].a" for p in caught.value.problems)


def test_a_disk_group_with_a_member_count_and_no_slots_is_sized_from_the_arrays_one_kind_of_disk():
    text = GROUP_BED.read_text().replace('{name: raid, raid: raid10, members: ["E0:0-13"]}',
                                         "{name: raid, raid: raid10, members: not stated, disk_count: 14}")
    bed = loads(text)
    idx = BedIndex(bed)
    group = bed.arrays[0].disk_groups[0]
    assert group.members is NOT_STATED and group_usable(idx.scopes["m1"], group) == 14 * 450 / 2
    assert not [f for f in validate(bed) if f.code in ("RAID-001", "RAID-007", "RAID-004")]
    # an odd count is judged as the count it is
    odd = loads(text.replace("disk_count: 14", "disk_count: 13", 1))
    (raid,) = [f for f in validate(odd) if f.code == "RAID-001"]
    assert "disk group raid on m1 has 13 members" in raid.message
    # with disks of two kinds in the array, which ones the group takes is not known: capacity is not judged
    mixed = loads(text.replace("{slots: 0-15, size_gb: 450,", "{slots: 0-7, size_gb: 450, rpm: 15000, media: hdd, "
                               "interface: sas}\n          - {slots: 8-15, size_gb: 600,", 1))
    assert BedIndex(mixed).scopes["m1"].group_disks(mixed.arrays[0].disk_groups[0]) == []


def test_a_scenario_whose_vms_are_not_stated_could_not_judge_what_depends_on_them():
    """Seed 001's scale-out case #2 runs both 10-VM blocks on the two-node cluster: CAP-003 twice.
    Where a source does not say which VMs a scenario runs, CAP-003 cannot say so.  One fact,
    one finding: the cluster that cannot absorb the loss of its nodes names both of them."""
    text = example_path("equallogic-ps6110-hyperv").read_text()
    bed = load(example_path("equallogic-ps6110-hyperv"))
    case2 = next(s for s in bed.scenarios if s.id == "scale-out-case2")
    (stated,) = [f for f in validate(bed) if f.code == "CAP-003"]
    assert stated.severity == "error" and "R720-1" in stated.message and "R720-2" in stated.message
    case2.vms = NOT_STATED
    again = loads(dumps(bed))
    assert next(s for s in again.scenarios if s.id == "scale-out-case2").vms is NOT_STATED
    found = [f for f in validate(again) if f.code == "CAP-003"]
    assert found and all(f.severity == "info" for f in found)
    assert "the VMs scenario scale-out-case2 runs not stated" in found[0].message
    assert text    # the example itself is unchanged
