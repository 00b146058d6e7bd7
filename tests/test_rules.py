"""Every rule in the catalogue: the clean bed passes it, one realistic mistake trips it."""
from __future__ import annotations

import pytest
from beds import clean_bed

from topology.model import (
    VM,
    Adapter,
    ArrayHost,
    Chassis,
    ExceptionRecord,
    HostAccess,
    Link,
    Mapping,
    PathSpec,
    Port,
    Replication,
    Scenario,
    StorageArray,
    Switch,
    VirtualDisk,
    VirtualSwitch,
    VNic,
    Volume,
)
from topology.validation import rule_catalogue, validate

BRIEF_CODES = """NET-001 NET-002 NET-003 NET-004 NET-005 NET-006 NET-007 NET-008 NET-009 NET-010 NET-011 NET-012
PATH-001 PATH-002 PATH-003 PATH-004 PATH-005 PATH-006 PATH-007 RAID-001 RAID-002 RAID-003 RAID-004 RAID-005 RAID-006
RAID-007 RAID-008 RAID-009 CAP-001 CAP-002 CAP-003 CAP-004 CAP-005 CAP-006 CAP-007 CLU-001 CLU-002
CLU-003 WL-001 ACC-001 ACC-002""".split()
# Issue 12: rules a lab engineer checks that the brief's catalogue did not name
NEW_CODES = """MAP-001 MAP-002 MAP-003 CON-001 CON-002 CON-003 LIM-001 LIM-002 LIM-003 SRIOV-001 PATH-008
WL-002 CAP-008 NET-013 MAP-004 NET-014""".split()
# Issue 30: the model catalogue's switch ports
MODEL_CODES = ["LIM-004"]
# Issue 27: a virtual disk format the host cannot make
NEW_CODES += ["CAP-009"]
# Issue 31: a documented exception that matches nothing, and the rules the probes found missing
FACT_CODES = """EXC-001 NET-015 MAP-005 MAP-006 MAP-007 CAP-010 CAP-011""".split()
ALL_CODES = BRIEF_CODES + NEW_CODES + MODEL_CODES + FACT_CODES
# Issue 28: the as-built check's codes (raised from the hosts' facts, tests/test_asbuilt_*.py), in the catalogue
ASBUILT_CODES = [f"ASB-{n:03d}" for n in range(1, 20)]


def port(bed, ref):
    dev, name = ref.split(":")
    for s in bed.servers:
        if s.id == dev:
            return next(p for a in s.adapters for p in a.ports if p.name == name)
    for a in bed.arrays:
        if a.id == dev:
            return next(p for c in a.controllers for p in c.ports if p.name == name)
    raise KeyError(ref)


def array(bed):
    return bed.arrays[0]


def group(bed, name):
    return next(g for g in array(bed).disk_groups if g.name == name)


def vol(bed, name):
    return next(v for v in array(bed).volumes if v.name == name)


def vm(bed, name):
    return next(v for v in bed.vms if v.id == name)


def server(bed, name):
    return next(s for s in bed.servers if s.id == name)


def drop_paths(bed, keep):
    bed.paths = [p for p in bed.paths if keep(p)]


def unplug(bed, *ends):
    bed.links = [lk for lk in bed.links if lk.a not in ends and lk.b not in ends]


def open_fc_fabric(bed):
    """An FC HBA on h1 and an FC port on controller c0, cabled through one FC switch with no zones."""
    server(bed, "h1").adapters.append(Adapter(name="hba", kind="fc", ports=[Port(name="fc0", kind="fc")]))
    array(bed).controllers[0].ports.append(Port(name="c0-fc", kind="fc"))
    bed.switches.append(Switch(id="fc-a", kind="fc"))
    bed.links += [Link(a="h1:fc0", b="fc-a"), Link(a="arr:c0-fc", b="fc-a")]


BREAKS = {
    "NET-001": lambda b: port(b, "h1:san1").roles.append("lan"),
    "NET-002": lambda b: setattr(port(b, "h1:san2"), "roles", ["lan"]),
    "NET-003": lambda b: [setattr(port(b, f"h1:{n}"), "roles", ["management"]) for n in ("lan", "vm")],
    "NET-004": lambda b: [setattr(port(b, "h2:hb"), "roles", ["lan"]), setattr(port(b, "h2:hb"), "network", "lan"),
                          setattr(port(b, "h2:hb"), "address", "10.0.0.99/24")],
    "NET-005": lambda b: setattr(port(b, "arr:c1-b"), "mtu", 1500),
    "NET-006": lambda b: setattr(port(b, "h2:san1"), "flow_control", False),
    "NET-007": lambda b: setattr(port(b, "h2:lan"), "address", "10.0.0.11/24"),
    "NET-008": lambda b: setattr(port(b, "h1:san2"), "address", "10.1.0.50/24"),
    "NET-009": lambda b: b.links.append(Link(a="h1:vm", b="sw-a")),
    "NET-010": lambda b: setattr(b.networks[1], "cluster_use", "cluster_and_client"),
    "NET-011": lambda b: [setattr(port(b, f"h1:{n}"), "team", "t0") for n in ("san1", "san2")],
    "NET-012": lambda b: b.links.append(Link(a="h1:san1", b="sw-b")),
    "PATH-001": lambda b: unplug(b, "h1:san2", "arr:c1-a"),
    "PATH-002": lambda b: unplug(b, "h1:san2"),
    "PATH-003": lambda b: unplug(b, "arr:c1-a", "arr:c1-b"),
    "PATH-004": lambda b: setattr(server(b, "h2"), "multipath", ""),
    "PATH-006": lambda b: b.paths.append(PathSpec(host="h1", initiator="h1:san1", target="arr:c0-b")),
    "PATH-007": open_fc_fabric,
    "PATH-005": lambda b: [server(b, "h1").adapters[0].ports.append(Port(name=f"x{i}", roles=["iscsi"]))
                           for i in range(8)],
    "RAID-001": lambda b: setattr(group(b, "data"), "members", ["e0:0-2"]),
    "RAID-002": lambda b: array(b).enclosures[0].disks.__setitem__(slice(None), [
        array(b).enclosures[0].disks[0].__class__(slots="0-1", size_gb=600, rpm=15000),
        array(b).enclosures[0].disks[0].__class__(slots="2-11", size_gb=300, rpm=10000)]),
    "RAID-003": lambda b: setattr(array(b), "spares", []),
    "RAID-004": lambda b: setattr(group(b, "logs"), "members", ["e0:3-4"]),
    "RAID-005": lambda b: [vm(b, "sql").disks.append(VirtualDisk(name="log", size_gb=20, type="fixed",
                                                                 volume="arr:log")),
                           setattr(vol(b, "log"), "group", "data")],
    "RAID-006": lambda b: b.replications.append(Replication(source="arr:db", target="arr:log")),
    "RAID-007": lambda b: setattr(vol(b, "db"), "size_gb", 2000),
    "RAID-008": lambda b: [setattr(g, "owner", "c0") for g in array(b).disk_groups],
    "RAID-009": lambda b: setattr(b.workloads[0], "demand_iops", 5000),
    "CAP-001": lambda b: setattr(vm(b, "sql"), "memory_gb", 47),
    "CAP-002": lambda b: setattr(vm(b, "sql"), "vcpu", 40),
    "CAP-003": lambda b: [setattr(vm(b, "sql"), "memory_gb", 30), setattr(vm(b, "web"), "memory_gb", 30)],
    "CAP-004": lambda b: setattr(vm(b, "sql"), "memory_gb", 30),
    "CAP-005": lambda b: b.vms.append(VM(id="stray", host="h1", memory_gb=1, highly_available=True,
                                         disks=[VirtualDisk(name="os", size_gb=10, volume="arr:witness")])),
    "CAP-006": lambda b: setattr(vm(b, "sql").disks[1], "size_gb", 900),
    "CAP-007": lambda b: setattr(vm(b, "web").disks[0], "type", "dynamic"),
    "CLU-001": lambda b: [setattr(b.clusters[0], "witness", ""), setattr(b.clusters[0], "quorum", "node_majority")],
    "CLU-002": lambda b: unplug(b, "h2:san1", "h2:san2"),
    "CLU-003": lambda b: [setattr(port(b, f"{h}:lm"), "roles", ["unused"]) for h in ("h1", "h2")],
    "WL-001": lambda b: setattr(b.workloads[0], "targets", ["arr:witness"]) or
    setattr(b.workloads[0], "driver", "web"),
    "ACC-001": lambda b: b.access.append(HostAccess(host="h1", transport="winrm", winrm_scheme="http",
                                                    winrm_auth="basic", user="Administrator")),
    "ACC-002": lambda b: b.access.append(HostAccess(host="h1", transport="winrm", verify_tls=False)),
    "MAP-001": lambda b: setattr(array(b), "mappings", [m for m in array(b).mappings if m.volume != "vms"]),
    "MAP-002": lambda b: setattr(array(b).hosts[0], "host_group", ""),
    "MAP-003": lambda b: array(b).volumes.append(Volume(name="scratch", group="os", size_gb=10)),
    "CON-001": lambda b: unplug(b, "h1:san1", "h1:san2"),
    "CON-002": lambda b: b.arrays.append(StorageArray(id="arr2", model="new array")),
    "CON-003": lambda b: setattr(port(b, "h1:lm"), "address", "10.4.0.11/24"),
    "LIM-001": lambda b: setattr(array(b), "max_disks", 8),
    "LIM-002": lambda b: [b.chassis.append(Chassis(id="ch", bays=2)), setattr(server(b, "h1"), "chassis", "ch"),
                          setattr(server(b, "h1"), "bay", 3)],
    "LIM-003": lambda b: b.links.extend(Link(a="arr", b="sw-lan") for _ in range(2)),
    "LIM-004": lambda b: [setattr(b.switches[0], "model", "Dell PowerConnect 8024F"),
                          setattr(b.switches[0], "port_count", None),
                          b.links.extend(Link(a="h1", b=b.switches[0].id) for _ in range(24))],
    "SRIOV-001": lambda b: vm(b, "sql").nics[0].offloads.update(sriov=True),
    "PATH-008": lambda b: [setattr(port(b, "h1:san1"), "speed_gbps", 10),
                           setattr(port(b, "arr:c0-a"), "speed_gbps", 1)],
    "WL-002": lambda b: setattr(b.workloads[0], "targets", []),
    "CAP-008": lambda b: setattr(vm(b, "sql"), "memory_gb", 0),
    "CAP-009": lambda b: [setattr(server(b, vm(b, "sql").host), "os", "Windows Server 2008 R2 Enterprise SP1"),
                          setattr(vm(b, "sql").disks[0], "format", "vhdx")],
    "MAP-004": lambda b: array(b).mappings.append(Mapping(volume="log", to="h2", lun=0)),
    "NET-014": lambda b: [server(b, h).adapters.append(Adapter(name="hba", kind="fc", ports=[
        Port(name="fc0", kind="fc", wwpn=w)]))
        for h, w in (("h1", "10:00:00:00:c9:aa:bb:01"), ("h2", "10000000C9AABB01"))],
    "NET-013": lambda b: [setattr(b.networks[1], "vlan", 101), setattr(b.switches[0], "vlans", [102])],
    "EXC-001": lambda b: b.exceptions.append(ExceptionRecord(code="NET-007", subject="h1:lan",
                                                             reason="duplicate address while the lab was moved")),
    "NET-015": lambda b: fc_port(b, mtu=9000, address="10.1.0.60/24", roles=["iscsi"]),
    "MAP-005": lambda b: setattr(array(b).hosts[0], "initiators", ["10:00:00:00:c9:aa:bb:01"]),
    "MAP-006": lambda b: [setattr(server(b, "h1"), "os", "Windows Server 2008 R2 Enterprise SP1"),
                          setattr(array(b).hosts[0], "host_type", "Linux")],
    "MAP-007": lambda b: gold_lun(b, read_only=False),
    "CAP-010": lambda b: guest_iscsi_web(b, with_lun=False),
    "CAP-011": lambda b: b.scenarios.append(Scenario(id="no-h2", excluded=["h2"], placement={"web": "h2"})),
}

# The near miss of each rule issue 31 adds: the same change made right, which the rule must pass.
PASSES = {
    "NET-015": lambda b: fc_port(b),
    "MAP-005": lambda b: setattr(array(b).hosts[0], "initiators", ["iqn.1991-05.com.microsoft:h1"]),
    "MAP-006": lambda b: [setattr(server(b, "h1"), "os", "Windows Server 2008 R2 Enterprise SP1"),
                          setattr(array(b).hosts[0], "host_type", "Windows 2000/Server 2003/Server 2008 Clustered")],
    "MAP-007": lambda b: gold_lun(b, read_only=True),
    "CAP-010": lambda b: guest_iscsi_web(b, with_lun=True),
    "CAP-011": lambda b: b.scenarios.append(Scenario(id="no-h2", excluded=["h2"], placement={"web": "h1"})),
    "EXC-001": lambda b: [BREAKS["NET-007"](b), b.exceptions.append(ExceptionRecord(
        code="NET-007", subject="h1:lan", reason="duplicate address while the lab was moved"))],
}


def fc_port(bed, **wrong):
    """An FC HBA port on h1 (with `wrong` Ethernet settings on it)."""
    server(bed, "h1").adapters.append(Adapter(name="hba", kind="fc", ports=[
        Port(name="fc0", kind="fc", wwpn="10:00:00:00:c9:aa:bb:01", **wrong)]))


def gold_lun(bed, read_only):
    """A gold image LUN attached as a pass-through disk to both VMs."""
    array(bed).volumes.append(Volume(name="gold", group="os", size_gb=20, read_only=read_only, purpose=["os"]))
    array(bed).mappings.append(Mapping(volume="gold", to="cluster", lun=4))
    for name in ("sql", "web"):
        vm(bed, name).disks.append(VirtualDisk(name="gold", type="passthrough", volume="arr:gold"))


def guest_iscsi_web(bed, with_lun):
    """web reaches its data itself: in-guest iSCSI over a vNIC on h2's SAN side (with its LUN, or none)."""
    web = vm(bed, "web")
    web.storage_access = "guest_iscsi"
    bed.virtual_switches.append(VirtualSwitch(id="h2/san", host="h2", uplinks=["h2:vm"]))
    web.nics.append(VNic(name="iscsi", vswitch="h2/san", role="iscsi", address="10.1.0.80/24", network="san-a",
                         mtu=9000))
    if with_lun:
        array(bed).volumes.append(Volume(name="webdata", group="os", size_gb=20, purpose=["data"]))
        array(bed).hosts.append(ArrayHost(name="web", server="web", initiators=["iqn.1991-05.com.microsoft:web"]))
        array(bed).mappings.append(Mapping(volume="webdata", to="web", lun=0))


def test_catalogue_is_the_briefs_and_the_issues():
    assert sorted(r.code for r in rule_catalogue()) == sorted(ALL_CODES + ASBUILT_CODES)
    for info in rule_catalogue():
        assert info.severity in ("error", "warning", "info")
        assert info.reason and info.source and info.hint and info.title


def test_clean_bed_has_no_findings():
    assert validate(clean_bed()) == []


@pytest.mark.parametrize("code", ALL_CODES)
def test_rule_catches_its_mistake(code):
    bed = clean_bed()
    BREAKS[code](bed)
    findings = validate(bed)
    mine = [f for f in findings if f.code == code]
    assert mine, f"{code} not raised; got {[(f.code, f.message) for f in findings]}"
    f = mine[0]
    assert f.subjects and all(isinstance(s, str) and s for s in f.subjects)
    assert f.message and f.hint and f.reason and f.source
    assert f.severity in ("error", "warning", "info")


@pytest.mark.parametrize("code", sorted(PASSES))
def test_rule_passes_the_near_miss(code):
    bed = clean_bed()
    PASSES[code](bed)
    assert not [f for f in validate(bed) if f.code == code], [f.message for f in validate(bed) if f.code == code]
    broken = clean_bed()
    BREAKS[code](broken)
    assert [f for f in validate(broken) if f.code == code]


def test_severity_follows_the_catalogue():
    bed = clean_bed()
    BREAKS["NET-005"](bed)
    assert {f.severity for f in validate(bed) if f.code == "NET-005"} == {"error"}


def test_standard_frames_end_to_end_are_only_a_note():
    bed = clean_bed()
    for s in bed.switches:
        s.mtu = 1500
    for n in bed.networks:
        n.mtu = None
    for ref in ("h1:san1", "h1:san2", "h2:san1", "h2:san2", "arr:c0-a", "arr:c0-b", "arr:c1-a", "arr:c1-b"):
        port(bed, ref).mtu = 1500
    found = [f for f in validate(bed) if f.code == "NET-005"]
    assert found and {f.severity for f in found} == {"info"}


def test_thin_overcommit_is_a_warning_with_the_ratio():
    bed = clean_bed()
    vol(bed, "db").size_gb = 2400  # the data group has 1,200 GB usable
    vol(bed, "db").provisioning = "thin"
    found = [f for f in validate(bed) if f.code == "RAID-007"]
    assert found and found[0].severity == "warning"
    assert "2.00:1" in found[0].message


def test_dynamic_disk_on_thin_volume_is_an_error():
    bed = clean_bed()
    vol(bed, "vms").provisioning = "thin"
    vm(bed, "web").disks[0].type = "dynamic"
    sev = {f.severity for f in validate(bed) if f.code == "CAP-007"}
    assert sev == {"error"}


def test_degraded_scenario_restarts_highly_available_vms_only_where_the_survivor_has_room():
    bed = clean_bed()
    vm(bed, "web").memory_gb = 20
    vm(bed, "sql").memory_gb = 20
    # each host holds its own VM; with h2 failed, h1 must hold 40 GB of 46 usable: fine
    assert not [f for f in validate(bed) if f.code in ("CAP-001", "CAP-003")]
    vm(bed, "web").memory_gb = 27
    found = [f for f in validate(bed) if f.code in ("CAP-001", "CAP-003")]
    # web does not restart beside sql (27 + 20 > 46): a VM the survivor cannot start is not run
    # there over its RAM, it finds no room, as the placement view shows it
    # one fact (cl cannot absorb the loss of a node), two cases: h1 lost, h2 lost
    assert [(f.code, f.scenario, f.count) for f in found] == [("CAP-003", None, 2)]
    case = found[0].members[1]
    assert "if h2 fails, 1 of its 1 highly available VMs (27 GB) find no room" in case.message
    assert set(case.subjects) == {"cl", "h2", "web"}
    from topology.placement_ops import outcome
    assert outcome(bed, "degraded").no_room == {"web": "h2"}


def test_a_scenario_whose_survivors_have_no_room_is_an_error_of_that_scenario():
    import copy
    bed = clean_bed()
    vm(bed, "web").memory_gb = 20
    vm(bed, "sql").memory_gb = 20
    batch = copy.deepcopy(vm(bed, "web"))
    batch.id, batch.host, batch.highly_available, batch.memory_gb = "batch", "h1", False, 10
    bed.vms.append(batch)
    next(s for s in bed.servers if s.id == "h1").memory_gb = 96
    # as drawn, h2 (web, 20 GB of 46 usable) can take sql when h1 fails; the scenario first moves
    # batch to h2, and then it cannot
    bed.scenarios.append(Scenario(id="h1-down", failed=["h1"], placement={"batch": "h2"}))
    found = [f for f in validate(bed) if f.code in ("CAP-001", "CAP-003")]
    assert [(f.code, f.scenario) for f in found] == [("CAP-003", "h1-down")]
    assert found[0].message == ("h1 failed in scenario 'h1-down': 1 of its 1 highly available VMs (20 GB) find no "
                                "room on the surviving node(s) of cl")
    assert set(found[0].subjects) == {"cl", "h1", "sql"}


def test_documented_exception_marks_the_finding_accepted_not_hidden():
    bed = clean_bed()
    BREAKS["RAID-003"](bed)
    bed.exceptions.append(ExceptionRecord(code="RAID-003", subject="arr", reason="spares tested separately"))
    found = [f for f in validate(bed) if f.code == "RAID-003"]
    assert found and all(f.accepted for f in found)
    assert found[0].exception_reason == "spares tested separately"
    from topology.validation import has_errors
    bed2 = clean_bed()
    BREAKS["RAID-001"](bed2)
    bed2.exceptions.append(ExceptionRecord(code="RAID-001", subject="*", reason="seed report says so"))
    assert not has_errors(validate(bed2))


def test_path_through_one_switch_names_it():
    bed = clean_bed()
    # cable both of h1's SAN ports to switch A: every path now crosses sw-a
    bed.links = [lk for lk in bed.links if lk.a != "h1:san2"] + [Link(a="h1:san2", b="sw-a")]
    bed.links = [lk for lk in bed.links if lk.a not in ("arr:c0-b", "arr:c1-b")]
    bed.links += [Link(a="arr:c0-b", b="sw-a"), Link(a="arr:c1-b", b="sw-a")]
    found = [f for f in validate(bed) if f.code == "PATH-002" and "h1" in f.subjects]
    assert found and "sw-a" in found[0].subjects


def test_guest_initiator_paths_count_for_the_vm():
    bed = clean_bed()
    v = vm(bed, "sql")
    from topology.model import VNic
    v.nics.append(VNic(name="iscsi", vswitch="h1/vm", role="iscsi"))
    v.multipath = "MPIO/DSM"
    from topology.model import ArrayHost, Mapping
    array(bed).hosts.append(ArrayHost(name="sql", server="sql"))
    array(bed).mappings.append(Mapping(volume="db", to="sql", lun=9))
    bed.paths.append(PathSpec(host="sql", initiator="sql:iscsi", target="arr:c0-a", volumes=["arr:db"]))
    found = [f for f in validate(bed) if f.code == "PATH-001" and "sql" in f.subjects]
    assert found and "1 path" in found[0].message


# ----------------------------------------------------------------- issue 12: how the new rules judge

def found(bed, code):
    return [f for f in validate(bed) if f.code == code]


def test_database_and_log_of_different_applications_may_share_a_group():
    bed = clean_bed()
    vm(bed, "web").disks.append(VirtualDisk(name="log", size_gb=20, type="fixed", volume="arr:log"))
    vol(bed, "log").group = "data"          # sql's database and web's log: not one application's pair
    assert not found(bed, "RAID-005")
    vm(bed, "sql").disks.append(VirtualDisk(name="log", size_gb=20, type="fixed", volume="arr:log"))
    hit = found(bed, "RAID-005")
    assert hit and hit[0].message == "database arr:db and log arr:log of sql share disk group data on arr"


def test_a_workload_pairs_its_database_and_log_too():
    bed = clean_bed()
    bed.workloads[0].targets = ["arr:db", "arr:log"]
    vol(bed, "log").group = "data"
    assert [f.subjects[0] for f in found(bed, "RAID-005")] == ["workload oltp"]


def test_switch_ports_facing_iscsi_host_ports_with_flow_control_off_are_named():
    bed = clean_bed()
    bed.switches[0].flow_control = False    # sw-a: faces h1:san1, h2:san1 and two array ports
    facts = found(bed, "NET-006")
    assert len(facts) == 1 and facts[0].message.startswith("flow control is off on switch sw-a facing 4 iSCSI ports")
    messages = sorted(c.message for c in facts[0].cases())
    assert messages == [f"flow control is off on switch port sw-a facing {what}" for what in (
        "array port arr:c0-a", "array port arr:c1-a", "iSCSI host port h1:san1", "iSCSI host port h2:san1")]


def test_port_ratio_is_weighed_by_bandwidth():
    bed = clean_bed()
    for ref in ("h1:san1", "h1:san2", "h2:san1", "h2:san2"):
        port(bed, ref).speed_gbps = 10
    for ref in ("arr:c0-a", "arr:c0-b", "arr:c1-a", "arr:c1-b"):
        port(bed, ref).speed_gbps = 1
    # four array ports for two host ports is 2:1 by count (within the policy), 4:20 Gb/s by bandwidth
    hits = found(bed, "PATH-005")
    assert hits and "4 Gb/s on 4 active port(s) for 20 Gb/s on 2 host SAN port(s): ratio 1:5" in hits[0].message
    for ref in ("arr:c0-a", "arr:c0-b", "arr:c1-a", "arr:c1-b"):
        port(bed, ref).speed_gbps = 10
    server(bed, "h1").adapters[0].ports += [Port(name=f"x{i}", roles=["iscsi"], speed_gbps=2.5) for i in range(8)]
    for ref in ("h1:san1", "h1:san2"):
        port(bed, ref).speed_gbps = 10
    # 4 array ports for 10 host ports is 1:2.5 by count, 40:40 Gb/s by bandwidth: balanced
    assert not [f for f in found(bed, "PATH-005") if "h1" in f.subjects]


def test_masking_findings_say_what_the_array_does_instead():
    bed = clean_bed()
    array(bed).hosts[0].host_group = ""
    fact = found(bed, "MAP-002")[0]
    msg = fact.cases()[0].message
    assert "is mapped to host group cluster, which h1" in msg and "its host entry h1 is in no host group" in msg
    assert fact.message.startswith("h1 is not in host group cluster on arr (its host entry h1 is in no host group)")
    assert not found(bed, "MAP-001")
    bed = clean_bed()
    array(bed).mappings = [m for m in array(bed).mappings if m.volume != "vms"]
    msg = next(f.message for f in found(bed, "MAP-001") if "h1" in f.subjects)
    assert "h1 uses arr:vms (VM sql has disk os on it) but arr does not present it" in msg
    assert "maps vms to no host or host group" in msg


def _sriov_bed():
    bed = clean_bed()
    h1 = server(bed, "h1")
    h1.hypervisor, h1.os = "Hyper-V", "Windows Server 2012 Datacenter"
    h1.bios.update(sriov_global="enabled", intel_vt_d=True)
    vs = next(v for v in bed.virtual_switches if v.id == "h1/vm")
    vs.sriov = True
    port(bed, "h1:vm").offloads["sriov"] = True
    sql = vm(bed, "sql")
    sql.guest_os = "Windows Server 2012"
    sql.nics[0].offloads["sriov"] = True
    return bed


@pytest.mark.parametrize(("breaks", "says"), [
    (lambda b: server(b, "h1").bios.update(sriov_global="disabled"), "h1 BIOS has SR-IOV off (sriov_global)"),
    (lambda b: server(b, "h1").bios.update(intel_vt_d=False), "h1 BIOS has VT-d / IOMMU off (intel_vt_d)"),
    (lambda b: port(b, "h1:vm").offloads.update(sriov=False), "uplink h1:vm has SR-IOV off"),
    (lambda b: setattr(next(v for v in b.virtual_switches if v.id == "h1/vm"), "sriov", False),
     "virtual switch h1/vm was not created with SR-IOV"),
    (lambda b: setattr(server(b, "h1"), "os", "Windows Server 2008 R2"), "Hyper-V on Windows Server 2008 R2"),
    (lambda b: setattr(vm(b, "sql"), "guest_os", "Windows Server 2008 R2 Enterprise"),
     "guest Windows Server 2008 R2 Enterprise has no SR-IOV virtual-function driver"),
])
def test_sr_iov_needs_every_link_of_the_chain(breaks, says):
    bed = _sriov_bed()
    assert not found(bed, "SRIOV-001")
    breaks(bed)
    hits = found(bed, "SRIOV-001")
    assert hits and hits[0].severity == "error" and says in hits[0].message, [f.message for f in hits]


def test_nothing_connected_rules_take_pins_and_bound_interfaces_as_connected():
    bed = clean_bed()
    unplug(bed, "h1:san1", "h1:san2")
    bed.paths += [PathSpec(host="h1", initiator="h1:san1", target="arr:c0-a"),
                  PathSpec(host="h1", initiator="h1:san2", target="arr:c1-b")]
    assert not found(bed, "CON-001")        # the bed states the session, if not the cable
    port(bed, "h2:lm").address = "10.4.0.12/24"
    port(bed, "h2:lm").bound_to = "h2:san1"
    assert not found(bed, "CON-003")
    assert not [f for f in validate(bed) if f.code.startswith("CON-") and f.scenario]


def test_mixed_speeds_name_each_hop():
    bed = clean_bed()
    BREAKS["PATH-008"](bed)
    msg = found(bed, "PATH-008")[0].message
    assert msg.startswith("h1:san1 -> arr:c0-a mixes link speeds") and "h1:san1 10 Gb/s" in msg \
        and "arr:c0-a 1 Gb/s" in msg


def test_raid_005_on_an_exchange_bed_names_every_pair_a_walk_of_all_pairs_finds():
    # the rule lists candidate pairs from the volumes' homes compared as sets; a walk of every
    # database x log pair of every VM and workload is what it must agree with
    from pathlib import Path

    from topology.fileformat import load
    from topology.index import BedIndex
    from topology.validation.context import Context
    from topology.validation.rules import storage
    bed = load(Path(__file__).resolve().parent.parent / "resources/examples/ams2500-exchange-esrp.yaml")
    logs = [v for a in bed.arrays for v in a.volumes if "log" in v.purpose]
    pool_of_databases = next(v.pool for a in bed.arrays for v in a.volumes if "database" in v.purpose)
    for v in logs[::3]:
        v.pool = pool_of_databases
    ctx = Context(bed, BedIndex(bed))
    expected, seen, homes = [], set(), {}
    dbset = {r for r, (_, v) in ctx.idx.volumes.items() if "database" in v.purpose}
    logset = {r for r, (_, v) in ctx.idx.volumes.items() if "log" in v.purpose} - dbset
    for owner, vols in storage._data_owners(ctx):
        for dv in [v for v in vols if v in dbset]:
            for lv in [v for v in vols if v in logset]:
                where = storage._shared_home(ctx, dv, lv, homes)
                if where and (dv, lv) not in seen:
                    seen.add((dv, lv))
                    expected.append(([owner, dv, lv], f"database {dv} and log {lv} of {owner} share {where}"))
    got = [(list(h.subjects), h.message) for h in storage.raid_005(Context(bed, BedIndex(bed)))
           if "holds both" not in h.message]
    assert len(expected) > 10
    assert got == expected


def test_a_port_in_one_vlan_on_a_switch_port_or_switch_of_another_is_named():
    bed = clean_bed()
    bed.networks[1].vlan = 101
    bed.switches[0].vlans = [101, 102]                        # carries it: nothing to say
    bed.switches[0].ports = [Port(name="1", vlan=101), Port(name="2")]
    bed.links = [Link(a=lk.a, b="sw-a:1") if lk.a == "h1:san1" else lk for lk in bed.links]
    bed.links = [Link(a=lk.a, b="sw-a:2") if lk.a == "h2:san1" else lk for lk in bed.links]
    assert not [f for f in validate(bed) if f.code == "NET-013"]
    bed.switches[0].ports[0].vlan = 102                       # an access port of the other VLAN
    bed.switches[0].vlans = [102]                             # and a switch that does not carry 101
    found = sorted(f.message for f in validate(bed) if f.code == "NET-013")
    assert "h1:san1 is in VLAN 101 and is cabled to sw-a:1, an access port of VLAN 102" in found
    assert "arr:c0-a is in VLAN 101 and is cabled to switch sw-a, which carries VLAN 102 only" in found
    assert "h2:san1 is in VLAN 101 and is cabled to switch sw-a, which carries VLAN 102 only" in found
    bed.switches[0].ports[0].vlan = 101                       # the access port agrees, the switch does not
    assert "h1:san1 is in VLAN 101 and is cabled to switch sw-a, which carries VLAN 102 only" in \
        [f.message for f in validate(bed) if f.code == "NET-013"]
    bed.switches[0].ports[0].vlan = 102
    # an iSCSI interface bound to a NIC rides the NIC's cable
    bed.switches[0].vlans = []
    san1 = port(bed, "h1:san1")
    san1.network, san1.address = "", ""
    server(bed, "h1").adapters[0].ports.append(Port(name="iface0", roles=["iscsi"], address="10.1.0.61/24",
                                                    network="san-a", bound_to="h1:san1"))
    found = [f.message for f in validate(bed) if f.code == "NET-013"]
    assert found == ["h1:iface0 is in VLAN 101 and is cabled to sw-a:1, an access port of VLAN 102"]


def test_one_lun_number_for_two_volumes_of_one_host_is_named_through_its_host_group_too():
    bed = clean_bed()
    array(bed).mappings.append(Mapping(volume="log", to="h2", lun=0))     # the group already has db at LUN 0
    found = [f for f in validate(bed) if f.code == "MAP-004"]
    assert [f.message for f in found] == ["arr presents arr:db and arr:log to host h2 both as LUN 0"]
    assert set(found[0].subjects) == {"arr:db", "arr:log", "arr"}
    array(bed).mappings[-1].lun = 7                                         # its own number: fine
    assert not [f for f in validate(bed) if f.code == "MAP-004"]
    array(bed).mappings[-1].lun = 0
    array(bed).group = "eql-grp"     # an EqualLogic group: every volume its own target at LUN 0
    assert not [f for f in validate(bed) if f.code == "MAP-004"]


def test_a_wwpn_copied_with_a_blade_is_named_with_both_ports():
    bed = clean_bed()
    for h, w in (("h1", "10:00:00:00:c9:aa:bb:01"), ("h2", "10:00:00:00:c9:aa:bb:02")):
        server(bed, h).adapters.append(Adapter(name="hba", kind="fc", ports=[Port(name="fc0", kind="fc", wwpn=w)]))
    assert not [f for f in validate(bed) if f.code == "NET-014"]
    port(bed, "h2:fc0").wwpn = "10000000C9AABB01"          # the same WWPN, as the array's CLI prints it
    found = [f for f in validate(bed) if f.code == "NET-014"]
    assert [(f.message, f.subjects) for f in found] == [
        ("WWPN 10:00:00:00:c9:aa:bb:01 is used by h1:fc0, h2:fc0", ("h1:fc0", "h2:fc0"))]


def test_net_005_names_jumbo_frames_broken_on_the_link_between_two_switches():
    # (u12's bed: every port at 9000/9216 but one end of the LAG between the two switches at 1500)
    from topology.fileformat import loads
    text = """\
format_version: 1
bed: {name: jumbo broken on the inter-switch link}
servers:
  - id: h1
    multipath: dm-multipath
    adapters: [{name: nic, ports: [{name: p1, roles: [iscsi], address: 10.1.0.11/24, mtu: 9000}]}]
switches:
  - {id: sw-a, mtu: 9216, ports: [{name: '1'}, {name: '2'}, {name: '48', mtu: 1500}]}
  - {id: sw-b, mtu: 9216, ports: [{name: '1'}, {name: '2'}, {name: '48'}]}
arrays:
  - id: arr
    controllers:
      - {name: A, ports: [{name: A0, roles: [iscsi], address: 10.1.0.101/24, mtu: 9000}]}
      - {name: B, ports: [{name: B0, roles: [iscsi], address: 10.1.0.102/24, mtu: 9000}]}
    enclosures: [{name: E0, slots: 2, disks: [{slots: 0-1, size_gb: 600}]}]
    disk_groups: [{name: dg, raid: raid1, members: ['E0:0-1']}]
    volumes: [{name: v, group: dg, remainder: true}]
    hosts: [{name: h1, server: h1}]
    mappings: [{volume: v, to: h1, lun: 0}]
links:
  - {a: 'h1:p1', b: 'sw-a:1'}
  - {a: 'arr:A0', b: 'sw-a:2'}
  - {a: 'arr:B0', b: 'sw-b:2'}
  - {a: 'sw-a:48', b: 'sw-b:48', kind: lag}
"""
    found = [f for f in validate(loads(text)) if f.code == "NET-005"]
    assert [f.message for f in found] == [
        "MTU differs along h1:p1 -> arr:B0: h1:p1=9000, sw-a:1=9216, sw-a:48=1500, sw-b:48=9216, sw-b:2=9216, "
        "arr:B0=9000"]
    assert found[0].severity == "error" and "sw-a:48" in found[0].subjects
    # a stack joins the two into one switch: its ports set no frame size, and nothing is said
    assert not [f for f in validate(loads(text.replace("kind: lag", "kind: stack"))) if f.code == "NET-005"]
    assert not [f for f in validate(loads(text.replace("mtu: 1500", "mtu: 9216"))) if f.code == "NET-005"]


def test_net_001_names_an_uplink_that_carries_in_guest_iscsi_together_with_the_hosts_lan():
    # (u12's bed: a guest's two iSCSI vNICs on the virtual switch whose only uplink is the host's LAN
    # and management port; the host's own iSCSI rides eth1)
    from topology.fileformat import loads
    text = """\
format_version: 1
bed: {name: guest iscsi over the lan uplink}
servers:
  - id: h1
    multipath: dm-multipath
    adapters:
      - name: nic
        ports:
          - {name: eth0, roles: [lan, management, vm], address: 10.0.0.11/24}
          - {name: eth1, roles: [iscsi], address: 10.1.0.11/24}
switches: [{id: sw-a}]
arrays:
  - id: arr
    controllers:
      - {name: A, ports: [{name: A0, roles: [iscsi], address: 10.1.0.101/24}]}
    enclosures: [{name: E0, slots: 2, disks: [{slots: 0-1, size_gb: 600}]}]
    disk_groups: [{name: dg, raid: raid1, members: ['E0:0-1']}]
    volumes: [{name: g, group: dg, size_gb: 100}]
    hosts: [{name: vm1, server: vm1}]
    mappings: [{volume: g, to: vm1, lun: 1}]
links:
  - {a: 'h1:eth1', b: sw-a}
  - {a: 'h1:eth0', b: sw-a}
  - {a: 'arr:A0', b: sw-a}
virtual_switches:
  - {id: h1/lan, host: h1, uplinks: ['h1:eth0'], role: vm, management_os: true}
vms:
  - id: vm1
    host: h1
    memory_gb: 4
    storage_access: guest_iscsi
    nics:
      - {name: e0, vswitch: h1/lan, role: iscsi, address: 10.1.0.51/24}
      - {name: e1, vswitch: h1/lan, role: iscsi, address: 10.1.0.52/24}
"""
    found = [f for f in validate(loads(text)) if f.code == "NET-001"]
    assert [f.message for f in found] == ["h1:eth0 carries the in-guest iSCSI of vm1:e0, vm1:e1 together with lan, "
                                          "management"]
    assert set(found[0].subjects) == {"h1", "h1:eth0", "vm1:e0", "vm1:e1"}
    # an uplink of the guests' own (VM traffic only) shares nothing with the host
    dedicated = text.replace("roles: [lan, management, vm], address: 10.0.0.11/24", "roles: [vm]")
    assert not [f for f in validate(loads(dedicated)) if f.code == "NET-001"]


def test_vhdx_on_a_hyperv_host_below_2012_is_an_error_that_names_the_release():
    bed = clean_bed()
    host = server(bed, vm(bed, "sql").host)
    vm(bed, "sql").disks[0].format = "vhdx"
    assert not [f for f in validate(bed) if f.code == "CAP-009"]          # the clean bed's hosts run 2012 or later
    host.os = "Microsoft Hyper-V Server 2008 R2"
    found = [f for f in validate(bed) if f.code == "CAP-009"]
    assert found and found[0].severity == "error"
    assert "VHDX exists from Windows Server 2012" in found[0].message and "2008 R2" in found[0].message
    vm(bed, "sql").disks[0].format = "vhd"
    assert not [f for f in validate(bed) if f.code == "CAP-009"]


# ----------------------------------------------------------------- issue 31: what the rules did not see

def db_and_log_disks(bed, log_volume):
    """sql keeps its database disk on arr:db and a log disk on `log_volume`."""
    vm(bed, "sql").disks[1].purpose = ["database"]
    vm(bed, "sql").disks.append(VirtualDisk(name="log", size_gb=20, type="fixed", volume=log_volume, purpose=["log"]))


def described_switch_port(bed, flow_control):
    """sw-a describes the port facing c0-a (its label), with no cable drawn to it."""
    bed.switches[0].ports.append(Port(name="g11", flow_control=flow_control, label="arr c0-a"))


def unstated_threads(bed, vcpu):
    for s in bed.servers:
        s.cpu.threads_per_core = None
    vm(bed, "sql").vcpu = vcpu


# (code, what, the mistake, the same made right): the mistake is found (or, for an unknown, said), the near
# miss is not
MORE = [
    ("RAID-005", "a VM's database and log disks on one volume", lambda b: db_and_log_disks(b, "arr:db"),
     lambda b: db_and_log_disks(b, "arr:log")),
    ("NET-006", "flow control off on a described, uncabled SAN switch port",
     lambda b: described_switch_port(b, False), lambda b: described_switch_port(b, True)),
    ("CAP-002", "a ratio over the policy per core with threads not stated", lambda b: unstated_threads(b, 40),
     lambda b: unstated_threads(b, 10)),
]


@pytest.mark.parametrize("code,what,breaks,passes", MORE, ids=[m[1] for m in MORE])
def test_what_the_rules_did_not_see(code, what, breaks, passes):
    bed = clean_bed()
    breaks(bed)
    assert [f for f in validate(bed) if f.code == code], what
    bed = clean_bed()
    passes(bed)
    assert not [f for f in validate(bed) if f.code == code], what


def test_a_scenario_naming_a_port_an_array_lacks_is_told_which_port():
    from beds import CLEAN_BED

    from topology.errors import BedFileError
    from topology.fileformat import loads
    degraded = "  - {id: degraded, failed: [h2]}"
    text = CLEAN_BED.replace(degraded, "  - {id: degraded, failed: [h2], excluded: ['arr:ZZ9']}")
    with pytest.raises(BedFileError) as err:
        loads(text, "bed.yaml")
    message = err.value.format()
    assert "'arr:ZZ9': 'arr' has no port, controller or drive 'ZZ9'" in message
    assert "its ports: c0-a, c0-b, c1-a, c1-b" in message and "did you mean 'arr'" not in message
    loads(CLEAN_BED.replace(degraded, "  - {id: degraded, failed: [h2], excluded: ['arr:c1-a']}"), "bed.yaml")
