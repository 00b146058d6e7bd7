"""Paths come from the drawing: cabling, subnets and VLANs, FC zoning, LUN masking and
in-guest initiators give each host its paths hop by hop; pins are checked against them;
scenarios take their failed and excluded parts out before the rules run."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from topology.fileformat import dumps, loads
from topology.model import VM, ArrayHost, Link, Mapping, PathSpec, Scenario, VirtualDisk, VirtualSwitch, VNic, Zone
from topology.scenario_view import scenario_view
from topology.validation import validate
from topology.validation.context import Context

# What a new user draws: two hosts cabled through two switches to a dual-controller array,
# one volume mapped to a host group holding both hosts.  No `paths:`.
NEW_USER_BED = """\
format_version: 1
bed: {name: drawn from scratch}
servers:
  - id: host-1
    multipath: MPIO/DSM
    adapters:
      - name: nic
        ports:
          - {name: p1, roles: [iscsi], address: 10.1.0.11/24}
          - {name: p2, roles: [iscsi], address: 10.2.0.11/24}
  - id: host-2
    multipath: MPIO/DSM
    adapters:
      - name: nic
        ports:
          - {name: p1, roles: [iscsi], address: 10.1.0.12/24}
          - {name: p2, roles: [iscsi], address: 10.2.0.12/24}
switches:
  - {id: switch-1}
  - {id: switch-2}
arrays:
  - id: array-1
    controllers:
      - name: A
        ports:
          - {name: A0, roles: [iscsi], address: 10.1.0.101/24}
          - {name: A1, roles: [iscsi], address: 10.2.0.101/24}
      - name: B
        ports:
          - {name: B0, roles: [iscsi], address: 10.1.0.102/24}
          - {name: B1, roles: [iscsi], address: 10.2.0.102/24}
    enclosures:
      - {name: E0, slots: 4, disks: [{slots: 0-3, size_gb: 600}]}
    disk_groups:
      - {name: dg, raid: raid10, members: [E0:0-3], owner: A}
    volumes:
      - {name: VMStore, group: dg, remainder: true, purpose: [vm]}
    host_groups: [{name: cluster}]
    hosts:
      - {name: host-1, server: host-1, host_group: cluster}
      - {name: host-2, server: host-2, host_group: cluster}
    mappings:
      - {volume: VMStore, to: cluster, lun: 4}
links:
  - {a: "host-1:p1", b: switch-1}
  - {a: "host-1:p2", b: switch-2}
  - {a: "host-2:p1", b: switch-1}
  - {a: "host-2:p2", b: switch-2}
  - {a: "array-1:A0", b: switch-1}
  - {a: "array-1:B0", b: switch-1}
  - {a: "array-1:A1", b: switch-2}
  - {a: "array-1:B1", b: switch-2}
"""


def new_user_bed():
    return loads(NEW_USER_BED, "new.yaml")


def paths_of(bed, host, volume="array-1:VMStore"):
    return [sp for sp in Context(bed).derived.paths if sp.host == host and volume in sp.spec.volumes]


def codes(findings, code):
    return [f for f in findings if f.code == code]


# ----------------------------------------------------------------------------- derivation

def test_cabled_hosts_reach_the_mapped_volume_over_every_cabled_portal_on_their_subnet():
    bed = new_user_bed()
    for host in ("host-1", "host-2"):
        paths = paths_of(bed, host)
        assert len(paths) == 4, [p.describe() for p in paths]
        ends = {(p.spec.initiator, p.spec.target) for p in paths}
        assert ends == {(f"{host}:p1", "array-1:A0"), (f"{host}:p1", "array-1:B0"),
                        (f"{host}:p2", "array-1:A1"), (f"{host}:p2", "array-1:B1")}
    first = next(p for p in paths_of(bed, "host-1") if p.spec.target == "array-1:A0")
    assert [h.kind for h in first.hops] == ["port", "switch", "target", "controller", "lun"]
    assert [h.element for h in first.hops][:3] == ["host-1:p1", "switch-1", "array-1:A0"]
    assert "LUN 4" in first.describe() and first.luns == {"array-1:VMStore": 4}
    assert not [f for f in validate(bed) if f.code.startswith("PATH")]


def test_without_derivation_the_new_user_bed_was_unreachable():
    """The issue's report: the drawn bed gave 'host-1 reaches array-1:VMStore over 0 paths'."""
    found = validate(new_user_bed())
    assert not [f for f in found if "over 0 paths" in f.message]


def test_removing_the_mapping_leaves_no_path_and_says_it_is_not_mapped():
    bed = new_user_bed()
    bed.arrays[0].mappings.clear()
    bed.clusters = []
    bed.vms.append(VM(id="vm-1", host="host-1", memory_gb=1,
                      disks=[VirtualDisk(name="os", volume="array-1:VMStore")]))
    assert paths_of(bed, "host-1") == []
    found = validate(bed)
    masking = [f for f in codes(found, "PATH-001") if "host-1" in f.subjects]
    assert masking and "0 paths" in masking[0].message and "not mapped to host-1" in masking[0].message
    assert [f for f in codes(found, "CAP-005") if "vm-1" in f.subjects]


def test_a_host_taken_out_of_the_host_group_loses_the_volume():
    bed = new_user_bed()
    bed.arrays[0].hosts[0].host_group = ""
    bed.vms.append(VM(id="vm-1", host="host-1", memory_gb=1,
                      disks=[VirtualDisk(name="os", volume="array-1:VMStore")]))
    found = validate(bed)
    assert paths_of(bed, "host-1") == [] and len(paths_of(bed, "host-2")) == 4
    # the cause is one finding (MAP-002); the disk it leaves out of reach is listed under it, not beside it
    assert not codes(found, "CAP-005")
    root = codes(found, "MAP-002")
    assert len(root) == 1 and root[0].subjects[0] == "host-1"
    cap = [c for c in root[0].consequences if c.code == "CAP-005"]
    assert cap and "host-1 cannot reach" in cap[0].message


def test_a_vm_disk_on_a_volume_mapped_only_to_the_other_host_is_caught_even_with_pinned_volumes():
    bed = new_user_bed()
    arr = bed.arrays[0]
    arr.mappings = [Mapping(volume="VMStore", to="host-2", lun=0)]
    # a pin naming the volume used to bypass LUN masking
    bed.paths.append(PathSpec(host="host-1", initiator="host-1:p1", target="array-1:A0",
                              volumes=["array-1:VMStore"]))
    bed.vms.append(VM(id="vm-1", host="host-1", memory_gb=1,
                      disks=[VirtualDisk(name="os", volume="array-1:VMStore")]))
    found = validate(bed)
    assert [f for f in codes(found, "CAP-005") if "vm-1" in f.subjects]
    pin = codes(found, "PATH-006")
    assert pin and "masking" in pin[0].message and "mapped to host-2" in pin[0].message


def test_portals_on_another_subnet_or_vlan_give_no_path_unless_a_route_is_declared():
    bed = new_user_bed()
    for p in bed.servers[0].adapters[0].ports:
        p.address = p.address.replace("10.1.", "10.9.").replace("10.2.", "10.8.")
    assert paths_of(bed, "host-1") == []
    gap = codes(validate(bed), "PATH-001")
    assert gap and "different subnets" in gap[0].message
    from topology.model import Network
    bed.networks = [Network(id="h-a", cidr="10.9.0.0/24", routed_to=["san-a"]), Network(id="san-a", cidr="10.1.0.0/24"),
                    Network(id="h-b", cidr="10.8.0.0/24", routed_to=["san-b"]), Network(id="san-b", cidr="10.2.0.0/24")]
    assert len(paths_of(bed, "host-1")) == 4
    bed = new_user_bed()
    bed.servers[0].adapters[0].ports[0].vlan = 20
    bed.arrays[0].controllers[0].ports[0].vlan = 30
    targets = {p.spec.target for p in paths_of(bed, "host-1")}
    assert "array-1:A0" not in targets and "array-1:B0" in targets


def test_switches_joined_only_by_an_isl_carry_paths_across_it():
    bed = new_user_bed()
    bed.links = [lk for lk in bed.links if lk.a not in ("array-1:A0", "array-1:B0")]
    bed.switches.append(bed.switches[0].__class__(id="core"))
    bed.links += [Link(a="array-1:A0", b="core"), Link(a="array-1:B0", b="core"),
                  Link(a="switch-1", b="core", kind="isl")]
    via = next(p for p in paths_of(bed, "host-1") if p.spec.target == "array-1:A0")
    assert [h.element for h in via.hops if h.kind == "switch"] == ["switch-1", "core"]


# ----------------------------------------------------------------------------- FC zoning

FC_BED = """\
format_version: 1
bed: {name: fc}
servers:
  - id: h1
    multipath: HDLM
    adapters:
      - {name: hba1, kind: fc, ports: [{name: P0, kind: fc, wwpn: "10:00:00:00:c9:00:00:01"}]}
      - {name: hba2, kind: fc, ports: [{name: P0b, kind: fc}]}
switches:
  - {id: fab-a, kind: fc}
  - {id: fab-b, kind: fc}
arrays:
  - id: ams
    controllers:
      - {name: c0, ports: [{name: 0A, kind: fc}]}
      - {name: c1, ports: [{name: 1A, kind: fc}]}
    enclosures: [{name: E0, slots: 2, disks: [{slots: 0-1, size_gb: 450}]}]
    disk_groups: [{name: rg, raid: raid1, members: [E0:0-1]}]
    volumes: [{name: db, group: rg, remainder: true}]
    hosts: [{name: h1, server: h1}]
    mappings: [{volume: db, to: h1, lun: 0}]
links:
  - {a: "h1:P0", b: fab-a}
  - {a: "h1:P0b", b: fab-b}
  - {a: "ams:0A", b: fab-a}
  - {a: "ams:1A", b: fab-b}
"""


def test_an_fc_fabric_without_zones_carries_paths_and_is_reported_as_open():
    bed = loads(FC_BED, "fc.yaml")
    assert len(paths_of(bed, "h1", "ams:db")) == 2
    info = codes(validate(bed), "PATH-007")
    # one fact (no zones), both fabrics named
    assert len(info) == 1 and info[0].count == 2 and info[0].severity == "info"
    assert "open fabric" in info[0].message and {"fab-a", "fab-b"} <= set(info[0].subjects)


def test_zones_decide_which_fc_ports_see_each_other():
    bed = loads(FC_BED, "fc.yaml")
    bed.switches[0].zones = [Zone(name="h1-ams", members=["10:00:00:00:C9:00:00:01", "ams:0A"])]
    bed.switches[1].zones = [Zone(name="wrong", members=["h1:P0b", "ams:0A"])]
    paths = paths_of(bed, "h1", "ams:db")
    assert [(p.spec.initiator, p.spec.target) for p in paths] == [("h1:P0", "ams:0A")]
    found = validate(bed)
    assert not codes(found, "PATH-007")
    one = codes(found, "PATH-001")
    assert one and "over 1 path" in one[0].message
    # the zones survive a save and load
    assert loads(dumps(bed), "again.yaml").switches[0].zones[0].members[1] == "ams:0A"


def test_an_fc_host_entry_whose_wwpns_name_none_of_the_hosts_ports_lets_no_port_log_in():
    """The array knows a host by the WWPNs registered for it: a host entry listing only mistyped
    WWPNs presents nothing to the host's HBAs (it did present everything, as an IQN list does)."""
    bed = loads(FC_BED, "fc.yaml")
    bed.servers[0].adapters[1].ports[0].wwpn = "10:00:00:00:c9:00:00:02"
    bed.arrays[0].hosts[0].initiators = ["10000000C9000001", "10:00:00:00:C9:00:00:02"]  # as 3PAR/Brocade print
    assert len(paths_of(bed, "h1", "ams:db")) == 2
    bed.arrays[0].hosts[0].initiators = ["10000000C9000091", "10000000C9000092"]          # both mistyped
    assert paths_of(bed, "h1", "ams:db") == []
    lost = codes(validate(bed), "PATH-001")
    assert lost and "over 0 paths" in lost[0].message
    assert "h1:P0 is not an initiator of h1's host entry on ams" in lost[0].message
    bed.arrays[0].hosts[0].initiators = ["iqn.1991-05.com.microsoft:h1"]                  # an IQN names no FC port
    assert len(paths_of(bed, "h1", "ams:db")) == 2


# ----------------------------------------------------------------------------- pins

def test_a_pin_narrows_the_host_to_the_portals_it_names():
    bed = new_user_bed()
    bed.paths = [PathSpec(host="host-1", initiator="host-1:p1", target="array-1:A0"),
                 PathSpec(host="host-1", initiator="host-1:p2", target="array-1:B1")]
    paths = paths_of(bed, "host-1")
    assert {(p.spec.initiator, p.spec.target) for p in paths} == {("host-1:p1", "array-1:A0"),
                                                                 ("host-1:p2", "array-1:B1")}
    assert all(p.pinned for p in paths) and len(paths_of(bed, "host-2")) == 4


def test_a_pin_the_cabling_or_subnets_cannot_carry_says_which_hop_fails():
    bed = new_user_bed()
    bed.paths = [PathSpec(host="host-1", initiator="host-1:p1", target="array-1:A1")]
    pin = codes(validate(bed), "PATH-006")
    assert pin and pin[0].severity == "error"
    assert "fails at the cabling hop" in pin[0].message and "switch-1" in pin[0].message
    bed.links.append(Link(a="switch-1", b="switch-2", kind="isl"))
    pin = codes(validate(bed), "PATH-006")
    assert pin and "network hop" in pin[0].message and "different subnets" in pin[0].message


# ----------------------------------------------------------------------------- in-guest initiators

def test_a_guest_initiator_reaches_its_volume_through_vnic_virtual_switch_and_uplink():
    bed = new_user_bed()
    from topology.model import Port, VirtualSwitch
    bed.servers[0].adapters[0].ports.append(Port(name="g1", roles=["vm"]))
    bed.links.append(Link(a="host-1:g1", b="switch-1"))
    bed.virtual_switches.append(VirtualSwitch(id="host-1/iscsi", host="host-1", uplinks=["host-1:g1"], role="iscsi"))
    bed.vms.append(VM(id="sql", host="host-1", memory_gb=4, storage_access="guest_iscsi", multipath="MPIO",
                      nics=[VNic(name="iscsi", vswitch="host-1/iscsi", role="iscsi", address="10.1.0.50/24")]))
    arr = bed.arrays[0]
    arr.volumes.append(arr.volumes[0].__class__(name="data", group="dg", size_gb=10))
    arr.hosts.append(ArrayHost(name="sql", server="sql"))
    arr.mappings.append(Mapping(volume="data", to="sql", lun=1))
    paths = paths_of(bed, "sql", "array-1:data")
    assert {p.spec.target for p in paths} == {"array-1:A0", "array-1:B0"}
    assert [h.kind for h in paths[0].hops][:4] == ["vnic", "vswitch", "port", "switch"]
    assert [h.element for h in paths[0].hops][:4] == ["sql:iscsi", "host-1/iscsi", "host-1:g1", "switch-1"]


# ----------------------------------------------------------------------------- scenarios

def test_failing_every_array_port_in_a_scenario_is_a_path_finding_of_that_scenario_only():
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="ref", reference=True),
                     Scenario(id="array-ports-down", failed=[f"array-1:{p}" for p in ("A0", "A1", "B0", "B1")])]
    found = validate(bed)
    lost = codes(found, "PATH-001")
    assert lost and {f.scenario for f in lost} == {"array-ports-down"}
    assert "over 0 paths" in lost[0].message and "scenario array-ports-down fails or leaves out array-1:A0" \
        in lost[0].message
    assert not [f for f in found if f.scenario is None and f.code.startswith("PATH")]
    alone = validate(bed, scenario="array-ports-down")
    assert codes(alone, "PATH-001") and {f.scenario for f in alone} == {"array-ports-down"}
    assert not codes(validate(bed, scenario="ref"), "PATH-001")


def test_a_failed_controller_takes_its_ports_and_leaves_two_paths_per_host():
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="ctrl-a-down", failed=["array-1:A"])]
    view = scenario_view(bed, bed.scenarios[0])
    assert len(paths_of(view, "host-1")) == 2
    assert not codes(validate(bed, scenario="ctrl-a-down"), "PATH-001")


def test_two_scenario_exclusive_vms_with_the_same_address_are_not_a_conflict():
    bed = new_user_bed()
    bed.vms += [VM(id="old", host="host-1", memory_gb=1, nics=[VNic(name="lan", address="10.5.0.9/24")]),
                VM(id="new", host="host-2", memory_gb=1, nics=[VNic(name="lan", address="10.5.0.9/24")])]
    bed.scenarios = [Scenario(id="before", vms=["old"]), Scenario(id="after", vms=["new"])]
    found = validate(bed, scenario="before") + validate(bed, scenario="after")
    assert not codes(found, "NET-007")
    bed.scenarios.append(Scenario(id="both", vms=["old", "new"]))
    assert codes(validate(bed, scenario="both"), "NET-007")


def test_a_workload_whose_driver_a_scenario_leaves_out_is_not_judged_in_that_scenario():
    from topology.model import AccessSpec, Workload
    bed = new_user_bed()
    bed.workloads = [Workload(id="fio-2", tool="fio", driver="host-2", targets=["array-1:VMStore"],
                              access=[AccessSpec(block_kb=8, read_pct=70)])]
    bed.scenarios = [Scenario(id="host-1-only", excluded=["host-2"])]
    assert not codes(validate(bed), "WL-001")      # was: "driven from 'host-2', which is not in the bed"
    assert not codes(validate(bed, scenario="host-1-only"), "WL-001")
    bed.workloads[0].driver = "gone"                 # not in the bed at all: still an error
    assert {f.scenario for f in codes(validate(bed), "WL-001")} == {None}


def test_a_load_run_in_a_vm_against_the_volume_holding_its_virtual_disk_reaches_it_through_its_host():
    from topology.model import AccessSpec, Workload
    bed = new_user_bed()
    bed.vms.append(VM(id="vm-1", host="host-1", memory_gb=1, disks=[VirtualDisk(name="d", volume="array-1:VMStore")]))
    bed.workloads = [Workload(id="fio-1", tool="fio", driver="vm-1", targets=["array-1:VMStore"],
                              access=[AccessSpec(block_kb=8, read_pct=70)])]
    assert not codes(validate(bed), "WL-001")      # was: "vm-1 cannot reach volume array-1:VMStore"
    bed.arrays[0].mappings[0].to = "host-2"           # now its host cannot reach the datastore
    bed.arrays[0].hosts[1].host_group = ""
    bed.arrays[0].hosts[0].host_group = ""
    lost = codes(validate(bed), "WL-001")
    assert lost and "host-1 cannot reach volume array-1:VMStore" in lost[0].message


def test_a_failed_network_takes_out_every_port_on_it_and_a_failed_vnic_its_guest_sessions():
    from resources import example_path
    from topology.fileformat import load
    from topology.model import Network
    bed = new_user_bed()
    bed.networks.append(Network(id="san-1", cidr="10.1.0.0/24", role="iscsi"))
    for ref in ("host-1:p1", "host-2:p1", "array-1:A0", "array-1:B0"):
        dev, name = ref.split(":")
        comp = next(c for c in [*bed.servers, *bed.arrays] if c.id == dev)
        ports = [p for a in getattr(comp, "adapters", []) for p in a.ports] + \
            [p for c in getattr(comp, "controllers", []) for p in c.ports]
        next(p for p in ports if p.name == name).network = "san-1"
    bed.scenarios = [Scenario(id="san-1-down", failed=["san-1"])]
    assert len(paths_of(scenario_view(bed, bed.scenarios[0]), "host-1")) == 2    # was 4: nothing failed
    spof = codes(validate(bed, scenario="san-1-down"), "PATH-002")
    assert spof and "host-1:p2" in spof[0].subjects
    kvm = load(example_path("rhel-kvm-sriov-iscsi"))
    kvm.scenarios.append(Scenario(id="vf-down", failed=["db-1:eth1"]))
    assert len(paths_of(scenario_view(kvm, kvm.scenarios[-1]), "db-1", "md3820i:db-1-data")) == 2   # was 4
    assert [f.subjects for f in codes(validate(kvm), "PATH-002") if f.scenario == "vf-down"] == [
        ("db-1", "db-1:eth2", "kvm-1:ens2f1", "san-sw2", "md3820i:db-1-data")]


def test_a_scenario_view_shares_what_it_leaves_alone_and_changes_nothing_in_the_bed():
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="s", failed=["host-2", "array-1:E0:1", "array-1:A0"])]
    before = dumps(bed)
    view = scenario_view(bed, bed.scenarios[0])
    assert [s.id for s in view.servers] == ["host-1"] and view.servers[0] is bed.servers[0]
    assert view.switches[0] is bed.switches[0]
    disks = view.arrays[0].enclosures[0].disks
    assert [d.slots for d in disks] == ["0", "2-3"]
    assert [p.name for p in view.arrays[0].controllers[0].ports] == ["A1"]
    assert not any("host-2" in (lk.a + lk.b) for lk in view.links)
    assert dumps(bed) == before


def test_a_vm_failed_over_joins_the_same_named_virtual_switch_on_the_survivor():
    bed = new_user_bed()
    from topology.model import Cluster, VirtualSwitch
    bed.clusters = [Cluster(id="cl", nodes=["host-1", "host-2"])]
    for h in ("host-1", "host-2"):
        bed.virtual_switches.append(VirtualSwitch(id=f"{h}/lan", host=h, label="VM LAN"))
    bed.vms.append(VM(id="web", host="host-2", memory_gb=1, highly_available=True,
                      nics=[VNic(name="lan", vswitch="host-2/lan")]))
    bed.scenarios = [Scenario(id="h2-down", failed=["host-2"])]
    view = scenario_view(bed, bed.scenarios[0])
    web = next(v for v in view.vms if v.id == "web")
    assert web.host == "host-1" and web.nics[0].vswitch == "host-1/lan"
    assert bed.vms[-1].host == "host-2" and bed.vms[-1].nics[0].vswitch == "host-2/lan"


# ----------------------------------------------------------------------------- CLI

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_names_the_scenario_of_each_finding_and_picks_one(tmp_path):
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="array-ports-down", failed=[f"array-1:{p}" for p in ("A0", "A1", "B0", "B1")])]
    f = tmp_path / "bed.yaml"
    f.write_text(dumps(bed))
    res = _cli("validate", str(f), "--format", "json")
    assert res.returncode == 1, res.stderr
    data = json.loads(res.stdout)
    assert {d["scenario"] for d in data if d["code"] == "PATH-001"} == {"array-ports-down"}
    res = _cli("validate", str(f), "--scenario", "array-ports-down")
    assert res.returncode == 1 and "holds in: scenario array-ports-down" in res.stdout
    res = _cli("validate", str(f), "--scenario", "nope")
    assert res.returncode == 2 and "no scenario 'nope'" in res.stderr and "array-ports-down" in res.stderr


@pytest.mark.parametrize("bad", ["array-1:E0:9", "array-1:C"])
def test_unknown_parts_in_a_scenario_are_refused_on_load(bad):
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="s", failed=[bad])]
    from topology.errors import BedFileError
    with pytest.raises(BedFileError):
        loads(dumps(bed), "s.yaml")


def test_canvas_badges_show_the_reference_unless_a_scenario_is_chosen():
    from app.diagram.findings import badges
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="array-ports-down", failed=[f"array-1:{p}" for p in ("A0", "A1", "B0", "B1")])]
    found = validate(bed)
    devices = {s.id: s for s in bed.servers}
    assert badges(found, devices)["host-1"].severity == "warning"     # NET-003: no LAN port drawn
    chosen = badges(found, devices, scenario="array-ports-down")
    assert chosen["host-1"].severity == "error"
    assert any(t.startswith("[scenario array-ports-down] PATH-001") for t in chosen["host-1"].messages)


def test_chosen_codes_are_judged_in_every_scenario_even_when_given_as_a_generator():
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="array-ports-down", failed=[f"array-1:{p}" for p in ("A0", "A1", "B0", "B1")])]
    found = validate(bed, codes=(c for c in ("PATH-001", "ACC-001")))
    assert {f.scenario for f in found} == {"array-ports-down"} and {f.code for f in found} == {"PATH-001"}


def test_renaming_a_controller_or_enclosure_renames_the_scenario_parts_that_fail_them():
    from topology.rename_ops import rename
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="s", failed=["array-1:A", "array-1:E0:3", "array-1:B0"])]
    for old, new in (("array-1:A", "array-1:CTL-A"), ("array-1:E0", "array-1:tray0"),
                     ("array-1:B0", "array-1:B-iscsi0")):
        rename(bed, old, new).apply()
    assert bed.scenarios[0].failed == ["array-1:CTL-A", "array-1:tray0:3", "array-1:B-iscsi0"]
    assert loads(dumps(bed), "renamed.yaml").scenarios[0].failed == bed.scenarios[0].failed


def test_three_iscsi_interfaces_bound_on_one_nic_each_get_paths_through_that_nic():
    from topology.model import Port
    bed = new_user_bed()
    ports = bed.servers[0].adapters[0].ports
    ports[:] = [Port(name="vmnic1", roles=["iscsi"])] + [
        Port(name=f"vmk{i}", roles=["iscsi"], address=f"10.1.0.{20 + i}/24", bound_to="host-1:vmnic1")
        for i in (1, 2, 3)]
    bed.links = [lk for lk in bed.links if not lk.a.startswith("host-1:")] + [Link(a="host-1:vmnic1", b="switch-1")]
    paths = paths_of(bed, "host-1")
    assert sorted((p.spec.initiator, p.spec.target) for p in paths) == [
        (f"host-1:vmk{i}", t) for i in (1, 2, 3) for t in ("array-1:A0", "array-1:B0")]
    assert [h.element for h in paths[0].hops][:3] == ["host-1:vmk1", "host-1:vmnic1", "switch-1"]
    assert "bound to host-1:vmnic1" in paths[0].describe()
    spof = [f for f in validate(bed) if f.code == "PATH-002" and "host-1" in f.subjects]
    assert spof and "host-1:vmnic1" in spof[0].subjects


def test_the_printed_findings_say_which_scenario_a_finding_belongs_to():
    from app.report.blocks import FindingsBlock
    bed = new_user_bed()
    bed.scenarios = [Scenario(id="array-ports-down", failed=[f"array-1:{p}" for p in ("A0", "A1", "B0", "B1")])]
    block = FindingsBlock(findings=validate(bed))
    rows = [r for r in block.markdown().splitlines() if "PATH-001" in r]
    assert rows and all("In scenario array-ports-down: host-" in r for r in rows)
    assert "In scenario array-ports-down: host-" in block.html()


def test_a_route_between_two_switches_is_crossed_from_the_initiators_side_whichever_host_asked_first():
    # h1 is cabled to sw-b and h2 to sw-a: the two ask for the same pair of switches from either
    # end (a stack between them), and each path lists its switches in the order the frames cross them
    bed = new_user_bed()
    bed.links = [Link(a="host-1:p1", b="switch-2"), Link(a="host-2:p1", b="switch-1"),
                 Link(a="array-1:A0", b="switch-1"), Link(a="array-1:B0", b="switch-2"),
                 Link(a="switch-1", b="switch-2", kind="stack")]
    switches = {(p.spec.initiator, p.spec.target): [h.element for h in p.hops if h.kind == "switch"]
                for host in ("host-1", "host-2") for p in paths_of(bed, host)}
    assert switches[("host-1:p1", "array-1:A0")] == ["switch-2", "switch-1"]
    assert switches[("host-2:p1", "array-1:B0")] == ["switch-1", "switch-2"]
    assert switches[("host-1:p1", "array-1:B0")] == ["switch-2"]
    assert switches[("host-2:p1", "array-1:A0")] == ["switch-1"]


def test_a_bridge_uplink_with_no_address_of_its_own_carries_guest_sessions_and_is_no_host_initiator():
    # a KVM host logs in from eth1; eth2 is the uplink of the bridge its guest's in-guest iSCSI
    # uses and carries no host address: the host has no path through it
    bed = new_user_bed()
    host = bed.servers[0]
    host.adapters[0].ports[1].address = ""
    bed.virtual_switches.append(VirtualSwitch(id="host-1/br-san", host="host-1", uplinks=["host-1:p2"],
                                              role="iscsi"))
    assert {p.spec.initiator for p in paths_of(bed, "host-1")} == {"host-1:p1"}
    assert "host-1" in {f.subjects[0] for f in codes(validate(bed), "PATH-002")}
    # shared with the management OS, or given an address of the host's own, it is the host's again
    bed.virtual_switches[0].management_os = True
    assert {p.spec.initiator for p in paths_of(bed, "host-1")} == {"host-1:p1", "host-1:p2"}
    bed.virtual_switches[0].management_os = False
    host.adapters[0].ports[1].address = "10.2.0.11/24"
    assert {p.spec.initiator for p in paths_of(bed, "host-1")} == {"host-1:p1", "host-1:p2"}


def test_a_pin_through_a_switch_a_scenario_fails_carries_nothing_in_that_scenario():
    # both pinned sessions leave host-1 through p1, cabled to switch-1; switch-1 fails: the scenario
    # unplugs the cable, which is not a cable the bed never stated (a pin trusted there)
    bed = new_user_bed()
    bed.paths = [PathSpec(host="host-1", initiator="host-1:p1", target="array-1:A0"),
                 PathSpec(host="host-1", initiator="host-1:p1", target="array-1:B0")]
    bed.scenarios = [Scenario(id="switch-1-down", failed=["switch-1"])]
    found = validate(bed, scenario="switch-1-down")
    lost = [f for f in codes(found, "PATH-001") if f.subjects[0] == "host-1"]
    assert lost and "over 0 paths" in lost[0].message
    assert "takes out the cable of host-1:p1" in " ".join(f.message for f in codes(found, "PATH-006"))
    from topology.path_explain import explain
    assert not explain(bed, "host-1", "array-1:VMStore", scenario="switch-1-down").working
    assert len(explain(bed, "host-1", "array-1:VMStore").working) == 2
    # a pin from a port the bed states no cable for is still trusted, in the scenario too (its
    # targets now cabled to switch-2, which stands)
    bed.links = [lk for lk in bed.links if lk.a != "host-1:p1"]
    for lk in bed.links:
        if lk.a in ("array-1:A0", "array-1:B0"):
            lk.b = "switch-2"
    assert len(explain(bed, "host-1", "array-1:VMStore", scenario="switch-1-down").working) == 2


def test_the_reference_is_the_scenario_marked_reference_when_it_narrows_the_bed():
    # the lab's reference runs "old"; "new" (the same address) runs only in scenario "after":
    # no configuration runs the two together, so the default validation names no conflict
    bed = new_user_bed()
    bed.vms += [VM(id="old", host="host-1", memory_gb=1, nics=[VNic(name="lan", address="10.5.0.9/24")]),
                VM(id="new", host="host-2", memory_gb=1, nics=[VNic(name="lan", address="10.5.0.9/24")])]
    bed.scenarios = [Scenario(id="ref", reference=True, vms=["old"]), Scenario(id="after", vms=["new"])]
    assert not codes(validate(bed), "NET-007")
    # a scenario that runs both is where the conflict is, and says so
    bed.scenarios.append(Scenario(id="both", vms=["old", "new"]))
    assert {f.scenario for f in codes(validate(bed), "NET-007")} == {"both"}
    # a reference scenario that changes nothing leaves the bed as drawn as the reference
    bed.scenarios = [Scenario(id="ref", reference=True), Scenario(id="after", vms=["new"])]
    assert {f.scenario for f in codes(validate(bed), "NET-007")} == {None}
    # what a scenario never changes is judged on the drawing: a reference that leaves switch-2 out
    # does not make the ports cabled to it uncabled
    bed.scenarios = [Scenario(id="ref", reference=True, excluded=["switch-2"])]
    assert not codes(validate(bed), "CON-003")
    assert codes(validate(bed), "PATH-002")     # ... while the paths are judged as the reference runs
