"""The built-in example beds (seeds 000, 001, 002 and five illustrative beds): they load,
round-trip, hold the reports' (or their design's) facts, and validate with exactly the findings
the reports lead one to expect."""
from __future__ import annotations

import time
from collections import Counter

import jsonschema
import pytest
import yaml

from resources import DEFAULT_EXAMPLE, SCHEMA_FILE, example_names, example_path
from topology.capacity import usable_gb
from topology.fileformat import dumps, load, loads
from topology.index import BedIndex
from topology.validation import validate

SEED000 = "md3000i-hyperv-cluster"
SEED001 = "equallogic-ps6110-hyperv"
SEED002 = "ams2500-exchange-esrp"
# illustrative beds (not from a report): what the published beds do not exercise
KVM = "rhel-kvm-sriov-iscsi"
BLADE = "bladecenter-fc-hyperv-2008r2"
ESXI = "esxi-equallogic-port-binding"
# built from the facts issue 30 gives about two published beds (every other value not stated)
HYPERVISORS = "r710-rhev-hyperv-equallogic"
FC_BLADES = "bladecenter-hs22-ds5020-fc"
ILLUSTRATIVE = (KVM, BLADE, ESXI)
FROM_ISSUE_FACTS = (HYPERVISORS, FC_BLADES)

# The exact findings per example: (code, severity) -> count.  Each is explained in the
# example's notes and in the issue's closing note:
# - seed 000: no heartbeat NIC is configured on either R710 (NET-004, the report's own best
#   practice #6 is not followed), no hot spare (slot 14 empty, RAID-003), and no live-migration
#   network is named (CLU-003).  The surviving R710 holds all 16 VMs: no CAP-003.  The six addressed LAN
#   ports have no cable (CON-003): the report states only the array side of the cabling, so the
#   example records the finding as a documented exception (accepted, still listed).
# - seed 001: the reference is the bed's `reference: true` scenario, the standalone R720 #1 on one
#   member.  In scale-out case #2 the two-node cluster cannot absorb a node failure with both
#   10-VM blocks (CAP-003 x2 there, the report's own caveat in 5.3, "not a reference
#   configuration"), and one active array port faces four host SAN ports (PATH-005, 1:4):
#   R720-1 to member 1 in the reference, R720-2 to member 1 in each cluster case, and both
#   R720s to member 2 in case #2, where the second member is in use.  34 vCPU on a host of 16
#   cores is over the policy's 2 per thread unless Hyper-Threading is on, which the report does
#   not state (CAP-002 could not judge, three host loads: one note).
# - seed 002: zero hot spares (RAID-003); database and logs are in separate pools (no RAID-005).
# - KVM pair: none. 4 paths per host and guest over two ports, two switches and both controllers,
#   MTU 9000 and flow control end to end, LAN and SAN on separate switches, a spare of each
#   media, and the SSD group serves the 2 x 4000 IOPS the fio loads ask of it.
# - BladeCenter: none. 4 FC paths per blade (two fabrics x two controllers), single-initiator
#   zones, a heartbeat / live-migration port per blade, a disk witness for the four nodes, a spare.
# - ESXi cluster: one CLU-001, accepted: with esx-3 down two hosts remain and no witness is
#   declared; vSphere HA keeps no quorum, which the bed records as a documented exception.
# (code, severity) -> (findings, cases, case-places): one finding per fact (issue 31), the cases it
# groups, and each case counted once per scenario it holds in (what the validator listed before
# findings were grouped: nothing is lost).
EXPECTED = {
    SEED000: {("NET-004", "warning"): (1, 2, 2), ("RAID-003", "warning"): (1, 1, 1), ("CLU-003", "warning"): (1, 1, 1),
              ("CON-003", "warning"): (1, 6, 6)},
    SEED001: {("CAP-003", "error"): (1, 2, 2), ("PATH-005", "warning"): (2, 4, 6), ("CAP-002", "info"): (1, 3, 3)},
    SEED002: {("RAID-003", "warning"): (1, 1, 1)},
    KVM: {},
    BLADE: {},
    ESXI: {("CLU-001", "warning"): (1, 1, 1)},
    # issue 30's beds: only "could not judge" notes, each listed with its reason in the example's header; one
    # line per rule (issue 31).  CAP-002: the R710's and HS22-A's cores are not stated (it used to say nothing);
    # the DS5020's 24 stated owners are balanced whatever the access LUN's (RAID-008 judged, no note)
    HYPERVISORS: {("PATH-001", "info"): (1, 3, 5), ("CAP-005", "info"): (1, 2, 2), ("CAP-006", "info"): (1, 1, 1),
                  ("CAP-007", "info"): (1, 2, 2), ("CAP-001", "info"): (1, 1, 1), ("CAP-008", "info"): (1, 2, 2),
                  ("RAID-001", "info"): (1, 6, 6), ("RAID-007", "info"): (1, 1, 1), ("SRIOV-001", "info"): (1, 2, 2),
                  ("CAP-002", "info"): (1, 1, 1)},
    FC_BLADES: {("PATH-001", "info"): (1, 13, 13), ("CAP-005", "info"): (1, 16, 16), ("CAP-006", "info"): (1, 12, 12),
                ("CAP-007", "info"): (1, 16, 16), ("CAP-008", "info"): (1, 16, 16), ("CAP-001", "info"): (1, 1, 1),
                ("RAID-001", "info"): (1, 1, 1), ("RAID-007", "info"): (1, 1, 1), ("CAP-002", "info"): (1, 1, 1)},
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def example(request):
    return request.param, load(example_path(request.param))


def test_every_shipped_example_is_covered():
    assert sorted(example_names()) == sorted(EXPECTED)
    assert DEFAULT_EXAMPLE in example_names()


def test_exact_findings(example):
    name, bed = example
    found: dict[tuple[str, str], tuple[int, int, int]] = {}
    for f in validate(bed):
        n, cases, places = found.get((f.code, f.severity), (0, 0, 0))
        found[(f.code, f.severity)] = (n + 1, cases + f.count, places + sum(len(c.where) for c in f.cases()))
    assert found == EXPECTED[name]


def test_round_trip_equal_and_byte_stable(example, tmp_path):
    name, bed = example
    out = tmp_path / f"{name}.yaml"
    from topology.fileformat import save
    save(bed, out)
    again = load(out)
    assert again == bed
    assert dumps(again) == out.read_text()


def test_examples_match_the_published_schema(example):
    name, _ = example
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    data = yaml.safe_load(example_path(name).read_text())
    jsonschema.validate(data, schema)


def test_validation_of_each_seed_is_fast_enough_to_run_on_every_keystroke(example):
    """Not the benchmark (make bench prints the figures); a loose guard against a 10x regression."""
    _, bed = example
    validate(bed)
    t0 = time.perf_counter()
    validate(bed)
    assert time.perf_counter() - t0 < 1.0


def _ports(bed, server_id):
    s = next(s for s in bed.servers if s.id == server_id)
    return {p.address for a in s.adapters for p in a.ports if p.address}


def test_seed000_facts():
    bed = load(example_path(SEED000))
    assert {s.id for s in bed.servers if s.role == "hypervisor"} == {"R710-1", "R710-2"}
    assert {"192.168.130.201/24", "192.168.131.201/24"} <= _ports(bed, "R710-1")
    assert {"192.168.130.211/24", "192.168.131.211/24"} <= _ports(bed, "R710-2")
    array = bed.arrays[0]
    portals = {p.address.split("/")[0] for c in array.controllers for p in c.ports if "iscsi" in p.roles}
    assert portals == {"192.168.130.101", "192.168.130.102", "192.168.131.101", "192.168.131.102"}
    groups = {g.name: g for g in array.disk_groups}
    scope = BedIndex(bed).scopes[array.id]
    layout = {n: (g.raid, len(scope.group_disks(g))) for n, g in groups.items()}
    assert layout == {"SQL": ("raid10", 4), "Exchange": ("raid10", 4), "Logs": ("raid1", 2), "OS": ("raid10", 4)}
    assert sum(e.slots for e in array.enclosures) == 15 and len(scope.disks) == 14
    assert array.spares == []
    logs = next(v for v in array.volumes if v.name == "Logs")
    assert logs.size_gb == 128
    assert len(bed.paths) == 8
    cluster = bed.clusters[0]
    assert cluster.id == "MD3000-Cluster" and cluster.address.startswith("192.168.1.102")
    assert len(bed.vms) == 16
    assert sum(v.memory_gb for v in bed.vms) == 36
    assert sorted(v.vcpu for v in bed.vms).count(4) == 2
    assert all(d.size_gb == 40 for v in bed.vms for d in v.disks if d.volume.endswith(":OS"))
    assert usable_gb("raid10", [300] * 4) == 600


def test_seed000_failover_keeps_every_vm_running():
    bed = load(example_path(SEED000))
    from topology.placement import Placement
    degraded = next(s for s in bed.scenarios if s.failed)
    place = Placement(bed).of(degraded)
    assert len(place) == 16 and len(set(place.values())) == 1


def test_seed001_facts():
    bed = load(example_path(SEED001))
    r720 = [s for s in bed.servers if s.id.startswith("R720")]
    assert len(r720) == 2 and all(s.memory_gb == 192 and s.numa_nodes == 2 for s in r720)
    arrays = bed.arrays
    assert len(arrays) == 2
    idx = BedIndex(bed)
    for a in arrays:
        assert sorted(c.mode for c in a.controllers) == ["active", "standby"]
        assert len(idx.scopes[a.id].disks) == 24
    block_a = [v for v in bed.vms if v.host == "R720-1"]
    assert len(block_a) == 10 and sum(v.memory_gb for v in block_a) == 164
    assert sum(v.vcpu for v in block_a) == 34
    mbx = next(v for v in bed.vms if v.id == "MBX01")
    assert mbx.memory_gb == 32


def test_seed002_facts():
    bed = load(example_path(SEED002))
    tested = [a for a in bed.arrays if not a.simulated]
    assert len(tested) == 1
    array = tested[0]
    scope = BedIndex(bed).scopes[array.id]
    assert len(array.disk_groups) == 53
    assert all(g.raid == "raid5" and len(scope.group_disks(g)) == 9 for g in array.disk_groups)
    assert len(scope.disks) == 477 and array.spares == []
    assert sorted(p.name for p in array.pools) == ["Pool 0", "Pool 1"]
    assert len(array.volumes) == 160
    db = [v for v in array.volumes if "database" in v.purpose]
    logs = [v for v in array.volumes if "log" in v.purpose]
    assert len(db) == 80 and {v.size_gb for v in db} == {1750}
    assert len(logs) == 80 and {v.size_gb for v in logs} == {175}
    assert {v.pool for v in db}.isdisjoint({v.pool for v in logs})
    servers = [s for s in bed.servers if not s.simulated]
    assert len(servers) == 16
    from topology.validation.context import Context
    ctx = Context(bed)
    for s in servers:
        vols = [v for v in ctx.volumes_used.get(s.id, {}) if v.startswith(array.id + ":")]
        assert len(vols) == 10
        assert all(len(ctx.working_paths(s.id, v)) == 2 for v in vols)
    # a RAID-group spanning two trays
    assert any(len(g.members) == 2 for g in array.disk_groups)


def test_loading_the_largest_example_is_quick():
    text = example_path(SEED002).read_text()
    loads(text)
    t0 = time.perf_counter()
    loads(text)
    assert time.perf_counter() - t0 < 2.0


# ----------------------------------------------------------------------------- illustrative beds

def _paths_by_host(bed):
    from topology.derived_paths import PathDerivation
    out: dict[str, list] = {}
    for p in PathDerivation(BedIndex(bed)).paths:
        out.setdefault(p.host, []).append(p)
    return out


@pytest.mark.parametrize("name", ILLUSTRATIVE)
def test_illustrative_examples_say_so_and_derive_their_paths(name):
    text = example_path(name).read_text(encoding="utf-8")
    assert text.startswith("# Testbed Studio example bed: ILLUSTRATIVE — not from a published report.")
    bed = load(example_path(name))
    assert bed.bed.description.startswith("Illustrative example, not from a published report.")
    assert bed.bed.name.startswith("Illustrative:") and not bed.bed.source and not bed.results
    # no pins: every path comes from the drawing
    assert bed.paths == [] and "\npaths:" not in text
    assert all(f.code != "PATH-006" for f in validate(bed))


@pytest.mark.parametrize("name", FROM_ISSUE_FACTS)
def test_examples_from_an_issues_facts_say_so_and_invent_nothing(name):
    text = example_path(name).read_text(encoding="utf-8")
    assert text.startswith("# Testbed Studio example bed: ILLUSTRATIVE - built from the facts issue 30 gives")
    bed = load(example_path(name))
    assert bed.bed.description.startswith("Illustrative example built from the facts issue 30 gives")
    assert not bed.results and bed.paths == []
    # what the issue and the vendor documents do not state is written so: no address, no size is a guess
    assert "not stated" in text and not [f for f in validate(bed) if f.severity != "info"]


def test_kvm_example_facts():
    bed = load(example_path(KVM))
    assert {s.id for s in bed.servers if s.role == "hypervisor"} == {"kvm-1", "kvm-2"}
    assert all(s.platform == "linux" and "KVM" in s.hypervisor and s.multipath == "dm-multipath"
               for s in bed.servers if s.role == "hypervisor")
    paths = _paths_by_host(bed)
    for host in ("kvm-1", "kvm-2", "db-1", "db-2"):
        got = paths[host]
        assert len(got) == 4
        assert {p.hops[-2].element for p in got} == {"md3820i#Controller 0", "md3820i#Controller 1"}
        assert {h.element for p in got for h in p.hops if h.kind == "switch"} == {"san-sw1", "san-sw2"}
    # the guests reach their own LUN through SR-IOV virtual functions of the hosts' X520 ports; the
    # hosts never see a guest's LUN (so the host never formats it)
    for vm, host, lun in (("db-1", "kvm-1", "md3820i:db-1-data"), ("db-2", "kvm-2", "md3820i:db-2-data")):
        vswitches = {h.element for p in paths[vm] for h in p.hops if h.kind == "vswitch"}
        assert vswitches == {f"{host}/sriov-a", f"{host}/sriov-b"}
        assert all(bed_vs.sriov for bed_vs in bed.virtual_switches if bed_vs.id in vswitches)
        assert {p.hops[-1].element for p in paths[vm]} == {lun}
        assert lun not in {p.hops[-1].element for p in paths[host]}
    assert next(v for v in bed.vms if v.id == "db-1").storage_access == "sriov"


def test_bladecenter_example_facts():
    bed = load(example_path(BLADE))
    blades = [s for s in bed.servers if s.chassis == "bch-1"]
    assert len(blades) == 4 and all("2008 R2" in s.os and "RDAC" in s.multipath for s in blades)
    modules = {sw.id: sw for sw in bed.switches if sw.chassis == "bch-1"}
    assert {i for i, sw in modules.items() if sw.kind == "fc"} == {"fcsm-a", "fcsm-b"}
    # zoning is declared on the switches, one zone per blade HBA port
    assert all(len(modules[f].zones) == 4 for f in ("fcsm-a", "fcsm-b"))
    paths = _paths_by_host(bed)
    for s in blades:
        got = paths[s.id]
        assert len(got) == 4 and all(p.spec.kind == "fc" for p in got)
        by_fabric = Counter(next(h.element for h in p.hops if h.kind == "switch") for p in got)
        assert by_fabric == {"fcsm-a": 2, "fcsm-b": 2}
        assert {lun.element for p in got for lun in p.hops if lun.kind == "lun"} == {
            "ds5020:CSV1", "ds5020:CSV2", "ds5020:Quorum"}


def test_esxi_example_facts():
    bed = load(example_path(ESXI))
    hosts = [s for s in bed.servers if s.platform == "esxi"]
    assert len(hosts) == 3 and all(s.os.startswith("VMware ESXi 6.0") for s in hosts)
    paths = _paths_by_host(bed)
    for s in hosts:
        got = paths[s.id]
        # port binding: each VMkernel port leaves only through the physical NIC it is bound to
        exits = {(p.hops[0].element, p.hops[1].element) for p in got}
        assert exits == {(f"{s.id}:vmk1", f"{s.id}:vmnic2"), (f"{s.id}:vmk2", f"{s.id}:vmnic3")}
        active = [p for p in got if p.hops[-3].element == "ps6100x#CM0"]
        assert len(active) == 8 and {p.spec.target for p in active} == {f"ps6100x:eth{i}" for i in range(4)}
    found = [f for f in validate(bed) if f.code == "CLU-001"]
    assert [f.accepted for f in found] == [True] and found[0].scenario == "esx-3-down"


def test_issue30_hypervisor_comparison_holds_three_configurations_over_one_group():
    from topology.configurations import configured
    bed = load(example_path(HYPERVISORS))
    assert [c.id for c in bed.configurations] == ["rhev-vhost", "rhev-sriov", "hyperv"]
    group = bed.array_groups[0]
    assert len([a for a in bed.arrays if a.group == group.name]) == 6 and group.volumes
    hyperv = configured(bed, "hyperv")
    assert [m.to for m in hyperv.array_groups[0].mappings] == ["R710"]
    assert all(v.disks and not v.nics for v in hyperv.vms)
    sriov = configured(bed, "rhev-sriov")
    assert all(v.nics[0].offloads.get("sriov") and not v.nics[0].synthetic for v in sriov.vms)
    assert bed.vms[0].nics[0].iscsi_ifaces == ["eth2_0", "eth2_1", "eth2_2"]


def test_issue30_fc_blade_bed_has_cells_an_access_lun_and_a_degraded_phase():
    bed = load(example_path(FC_BLADES))
    ds = bed.arrays[0]
    assert "DS5020" in ds.model and sum(len(c.ports) for c in ds.controllers) == 8
    degraded = next(s for s in bed.scenarios if s.id == "ds3950-emulation")
    assert len(degraded.excluded) == 4
    assert [len(s.vms) for s in bed.scenarios if s.id.endswith(("cell", "cells"))] == [4, 8, 12, 16]
    assert any(v.label == "Access (UTM) LUN" for v in ds.volumes)
