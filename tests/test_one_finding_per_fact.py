"""Issue 31: a finding is a fact.  Cases of one code and cause are one finding that names every
subject (the JSON keeps each case); a root cause carries the findings it explains; "could not
judge" notes fold into one per rule; what the stated values decide is judged whatever is not
stated; each finding says where it holds.  Shown on the beds that gave one fact as dozens of
findings (tests/fact_beds.py) and on the examples."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from beds import clean_bed
from fact_beds import equallogic_guest_iscsi_bed, fc_blade_bed

from resources import example_names, example_path
from topology.fileformat import dumps, load
from topology.model import Mapping, Volume
from topology.unknown import NOT_STATED
from topology.validation import validate
from topology.validation.runner import validate_cases

ROOT = Path(__file__).resolve().parent.parent


def _by_code(findings):
    return Counter((f.code, f.severity) for f in findings)


def _beds():
    yield "equallogic-guest-iscsi", equallogic_guest_iscsi_bed()
    yield "equallogic-guest-iscsi-3-ports", equallogic_guest_iscsi_bed(member_ports=3)
    yield "fc-blade", fc_blade_bed()
    yield "fc-blade-host-left-out", fc_blade_bed(left_out="hs22-6")
    for name in example_names():
        yield name, load(example_path(name))


@pytest.mark.parametrize("name,bed", list(_beds()), ids=lambda v: v if isinstance(v, str) else "")
def test_no_two_findings_state_one_fact_and_no_case_is_lost(name, bed):
    cases = validate_cases(bed)
    found = validate(bed)
    # every case the rules found is in exactly one finding (or under its root cause), with its place
    listed = Counter()
    for f in found:
        for c in f.cases():
            listed[(f.code, c.subjects, c.message)] += len(c.where)
        for sub in f.consequences:
            for c in sub.cases():
                listed[(sub.code, c.subjects, c.message)] += len(c.where)
    assert listed == Counter((f.code, f.subjects, f.message) for f in cases), name
    # no two findings of a code say the same thing of the same components in different places
    said = Counter((f.code, f.severity, f.message, f.accepted) for f in found)
    assert max(said.values(), default=1) == 1, name


def test_the_fc_blade_bed_says_each_fact_once():
    bed = fc_blade_bed()
    before = _by_code(validate_cases(bed))
    assert before[("CAP-007", "warning")] == 36 and before[("PATH-007", "info")] == 2
    after = validate(bed)
    assert set(_by_code(after).values()) == {1}
    dynamic = next(f for f in after if f.code == "CAP-007")
    assert dynamic.count == 36 and dynamic.message.startswith("36 disks of production VMs are dynamically expanding")
    assert {f"vm{b}-{v}" for b in range(1, 7) for v in range(3)} <= set(dynamic.subjects)
    # 24 groups from one disks: line whose speed is not stated: its disks are alike by definition
    assert not [f for f in after if f.code == "RAID-002"]
    # two lines that leave the speed out may differ: the one group built from both could mix them
    enclosure = bed.arrays[0].enclosures[0]
    enclosure.disks = [replace(enclosure.disks[0], slots="0-24"), replace(enclosure.disks[0], slots="25-47")]
    mixed = [f for f in validate(bed) if f.code == "RAID-002"]
    assert [(f.severity, f.subjects[-1]) for f in mixed] == [("info", "ds5020:group:Array12")]


def test_could_not_judge_notes_of_one_rule_are_one_line():
    bed = fc_blade_bed()
    for vm in bed.vms:
        for d in vm.disks:
            d.type = NOT_STATED
    before = [f for f in validate_cases(bed) if f.code == "CAP-007"]
    assert len(before) == 36 and {f.severity for f in before} == {"info"}
    notes = [f for f in validate(bed) if f.code == "CAP-007"]
    assert len(notes) == 1 and notes[0].count == 36
    assert notes[0].message.startswith("could not judge whether 36 disks of production VMs are dynamically "
                                       "expanding: vm1-0 disk OS type, vm1-0 disk Data type, ")
    assert notes[0].message.endswith(" and 30 more not stated")


def test_a_host_out_of_its_host_group_is_one_error_with_its_consequences_under_it():
    bed = fc_blade_bed(left_out="hs22-6")
    before = _by_code(validate_cases(bed))
    assert before[("MAP-002", "error")] == before[("PATH-001", "error")] == before[("CLU-002", "error")] == 24
    assert before[("CAP-005", "error")] == 6
    errors = [f for f in validate(bed) if f.severity == "error"]
    assert [f.code for f in errors] == ["MAP-002"]
    root = errors[0]
    assert root.message.startswith("hs22-6 is not in host group HV-Cluster on ds5020")
    assert root.count == 24 and {f"ds5020:LUN{i}" for i in range(24)} <= set(root.subjects)
    under = {c.code: c.count for c in root.consequences}
    assert under == {"PATH-001": 24, "CLU-002": 24, "CAP-005": 6}
    # the JSON keeps every case and every consequence
    data = root.as_dict()
    assert data["count"] == 24 and len(data["cases"]) == 24
    assert sum(len(c["cases"]) for c in data["consequences"]) == 54


def test_the_equallogic_guest_bed_says_each_fact_once():
    bed = equallogic_guest_iscsi_bed(member_ports=3)
    before = _by_code(validate_cases(bed))
    assert before[("NET-005", "info")] == 27 and before[("PATH-008", "warning")] == 18
    after = validate(bed)
    assert set(_by_code(after).values()) == {1}
    mtu = next(f for f in after if f.code == "NET-005")
    assert mtu.message == "could not judge the MTU along 27 iSCSI paths: sw1 MTU, sw2 MTU not stated"
    speeds = next(f for f in after if f.code == "PATH-008")
    assert speeds.message.startswith("r710:p3p1 10 Gb/s runs into 1 Gb/s ports on 18 paths: ")


def test_a_9000_byte_mtu_mismatch_is_one_error_naming_the_port_below_it():
    bed = equallogic_guest_iscsi_bed(member_ports=3)
    for sw in bed.switches[:2]:
        sw.mtu = 9216
    bed.servers[0].adapters[0].ports[1].mtu = 1500       # the 10 GbE uplink the guests' sessions leave by
    found = [f for f in validate(bed) if f.code == "NET-005"]
    assert len(found) == 1 and found[0].severity == "error" and found[0].count == 27
    assert found[0].message.startswith("r710:p3p1=1500 below the 9000-byte MTU of the ends on 27 iSCSI paths")


# ----------------------------------------------------------------- unknown never hides known

def test_no_spares_covers_nothing_whatever_the_disk_size():
    found = [f for f in validate(equallogic_guest_iscsi_bed()) if f.code == "RAID-003"]
    assert len(found) == 1 and found[0].severity == "warning" and found[0].count == 6
    assert found[0].message.startswith("6 arrays have no hot spares")


def _owners(bed, owners):
    a = bed.arrays[0]
    for g in a.disk_groups:
        g.owner = ""
    for v in a.volumes:
        v.owner = owners[v.name]


def test_stated_owners_decide_the_balance_whatever_one_owner_not_stated():
    bed = clean_bed()
    _owners(bed, {"db": "c0", "log": "c0", "vms": "c0", "witness": NOT_STATED})
    found = [f for f in validate(bed) if f.code == "RAID-008"]
    assert [f.severity for f in found] == ["warning"]
    assert "whatever the owner not stated (volume witness owner)" in found[0].message
    _owners(bed, {"db": "c0", "log": "c1", "vms": "c0", "witness": NOT_STATED})   # 3:1 or 2:2
    found = [f for f in validate(bed) if f.code == "RAID-008"]
    assert [f.severity for f in found] == ["info"] and "could not judge" in found[0].message
    # 2:2 stated and one not: 3:2 or 2:3, balanced either way
    bed.arrays[0].volumes.append(Volume(name="scratch", group="os", size_gb=1, owner=NOT_STATED))
    bed.arrays[0].mappings.append(Mapping(volume="scratch", to="cluster", lun=9))
    _owners(bed, {"db": "c0", "log": "c1", "vms": "c0", "witness": "c1", "scratch": NOT_STATED})
    assert not [f for f in validate(bed) if f.code == "RAID-008"]


def test_one_guest_port_is_a_single_point_of_failure_whatever_its_access_record():
    bed = equallogic_guest_iscsi_bed(member_ports=3)
    a = next(a for a in bed.arrays if a.id == "ps1")
    assert next(h for h in a.hosts if h.name == "g1").initiators is NOT_STATED
    spof = [f for f in validate(bed) if f.code == "PATH-002"]
    assert [f.severity for f in spof] == ["error"]
    assert "g1" in spof[0].subjects and "r710:p3p1" in spof[0].message and "sw1" in spof[0].message


def test_one_initiator_and_one_member_port_is_a_single_path_whatever_its_access_record():
    bed = equallogic_guest_iscsi_bed(member_ports=1)
    single = [f for f in validate(bed) if f.code == "PATH-001"]
    assert [f.severity for f in single] == ["error"]
    g1 = next(c for c in single[0].cases() if c.subjects[0] == "g1")
    assert g1.message.startswith("g1 reaches ps1:g1-data over at most 1 path")
    assert not [f for f in validate(bed) if f.code == "PATH-001" and f.severity == "info"]


def test_an_unstated_thread_count_is_said_not_skipped():
    bed = clean_bed()
    for s in bed.servers:
        s.cpu.threads_per_core = None
    assert not [f for f in validate(bed) if f.code == "CAP-002"]     # 4 vCPU on 8 cores: fine per thread
    bed.vms[0].vcpu = 40
    found = [f for f in validate(bed) if f.code == "CAP-002"]
    assert [f.severity for f in found] == ["info"] and "h1 threads per core not stated" in found[0].message


# ----------------------------------------------------------------- where a finding holds

def test_a_finding_of_every_configuration_says_so():
    bed = load(ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml")
    found = validate(bed)
    everywhere = [f for f in found if f.configuration is None]
    assert everywhere and all(f.holds_in.startswith("every configuration") for f in everywhere)
    assert all("reference configuration" not in f.holds_in for f in found)
    some = [f for f in found if f.configuration is not None]
    assert some and all(f.holds_in.startswith(f"configuration {f.configuration}") for f in some)


def test_one_case_in_several_scenarios_is_one_finding_naming_each():
    found = validate(load(example_path("equallogic-ps6110-hyperv")))
    ratio = next(f for f in found if f.code == "PATH-005" and "PS6110XV-1" in f.subjects)
    assert ratio.holds_in == ("the reference configuration and scenarios cluster-case1, cluster-case1-failover, "
                              "scale-out-case2")


# ----------------------------------------------------------------- the command line

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


def test_cli_min_severity_and_json_keep_every_case(tmp_path):
    path = tmp_path / "fc.yaml"
    path.write_text(dumps(fc_blade_bed(left_out="hs22-6")))
    res = _cli("validate", str(path), "--min-severity", "error")
    assert res.returncode == 1, res.stderr
    assert res.stdout.count("\nERROR ") == 1 and "\nWARNING " not in res.stdout and "\nINFO " not in res.stdout
    assert "4 finding(s) below error not shown" in res.stdout
    assert "explains 54 other case(s)" in res.stdout
    res = _cli("validate", str(path), "--format", "json")
    data = json.loads(res.stdout)
    assert len(data) == 5
    root = next(d for d in data if d["code"] == "MAP-002")
    assert len(root["cases"]) == 24 and len(root["subjects"]) == 26 and root["holds_in"]
    warn = _cli("validate", str(path), "--format", "json", "--min-severity", "warning")
    assert {d["severity"] for d in json.loads(warn.stdout)} == {"error", "warning"}
