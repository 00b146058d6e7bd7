"""Discovery and port binding, end to end from the project file: an array group's address that
initiators discover before the group redirects their sessions to member ports, and several iSCSI
interfaces bound to one NIC (ESXi port binding)."""
from __future__ import annotations

import subprocess
import sys

from test_derived_paths import NEW_USER_BED, codes

from topology.fileformat import dumps, loads
from topology.methodology import generate
from topology.model import Network
from topology.unknown import NOT_STATED
from topology.validation import validate
from topology.validation.context import Context

GROUPED = NEW_USER_BED.replace("  - id: array-1\n", "  - id: array-1\n    group: grp\n") + """\
array_groups:
  - {name: grp, address: 10.1.0.100/24}
"""


def paths_of(bed, host, volume="array-1:VMStore"):
    return [sp for sp in Context(bed).derived.paths if sp.host == host and volume in sp.spec.volumes]


def test_sessions_land_on_member_ports_after_discovery_at_the_group_address():
    bed = loads(GROUPED, "grouped.yaml")
    paths = paths_of(bed, "host-1")
    # the group address is on san A only, and discovery through it reaches the group's members:
    # the port on san A logs in to both controllers; the port on san B cannot discover the group
    assert sorted((p.spec.initiator, p.spec.target) for p in paths) == [
        ("host-1:p1", "array-1:A0"), ("host-1:p1", "array-1:B0")]
    assert "discovery at group grp (10.1.0.100/24) -> array-1:A0" in paths[0].describe()
    assert [h.kind for h in paths[0].hops][:4] == ["port", "switch", "portal", "target"]
    gap = Context(bed).derived.carry(
        next(e for e in Context(bed).derived.endpoints("host-1") if e.ref == "host-1:p2"),
        next(e for e in Context(bed).derived.targets("array-1") if e.ref == "array-1:A1"))[1]
    assert gap.startswith("host-1:p2 cannot discover group grp at 10.1.0.100/24") and "different subnets" in gap
    # the rules see the lost redundancy
    found = validate(bed)
    assert codes(found, "PATH-002"), [(f.code, f.message) for f in found]


def test_a_route_to_the_group_network_or_a_group_address_not_stated_keeps_every_path():
    text = GROUPED.replace("  - {name: grp, address: 10.1.0.100/24}",
                           "  - {name: grp, address: 10.1.0.100/24, network: san-a}")
    text = text.replace("servers:", "networks:\n  - {id: san-a, cidr: 10.1.0.0/24, role: iscsi}\n"
                                     "  - {id: san-b, cidr: 10.2.0.0/24, role: iscsi, routed_to: [san-a]}\nservers:", 1)
    text = text.replace("{name: p2, roles: [iscsi], address: 10.2.0.11/24}",
                        "{name: p2, roles: [iscsi], address: 10.2.0.11/24, network: san-b}")
    assert len(paths_of(loads(text), "host-1")) == 4
    unstated = loads(GROUPED.replace("address: 10.1.0.100/24}", "address: not stated}"))
    assert unstated.array_groups[0].address is NOT_STATED
    assert len(paths_of(unstated, "host-1")) == 4      # not held against a path
    assert "group grp address" in Context(unstated).derived.unstated_inputs("host-1", "array-1")


def test_a_pin_that_cannot_discover_the_group_fails_at_the_discovery_hop():
    text = GROUPED.replace("address: 10.1.0.100/24}", "address: 10.9.0.100/24}") + """\
paths:
  - {host: host-1, initiator: "host-1:p1", target: "array-1:A0"}
"""
    found = codes(validate(loads(text)), "PATH-006")
    assert found and "fails at the discovery hop" in found[0].message
    assert "cannot discover group grp at 10.9.0.100/24" in found[0].message


def test_the_group_address_is_an_address_like_any_other():
    bed = loads(GROUPED.replace("address: 10.1.0.100/24}", "address: 10.1.0.11/24}"))
    dup = codes(validate(bed), "NET-007")
    assert dup and set(dup[0].subjects) == {"host-1:p1", "grp"}
    assert loads(dumps(bed)) == bed
    bed.networks.append(Network(id="san-a", cidr="10.1.0.0/24", role="iscsi"))
    bed.array_groups[0].network = "san-a"
    bed.array_groups[0].address = "10.7.0.1/24"
    assert any("grp" in f.subjects for f in codes(validate(bed), "NET-008"))


ESXI_BED = """\
format_version: 1
bed: {name: port binding}
servers:
  - id: esx-1
    hypervisor: ESXi 5.5
    platform: esxi
    multipath: NMP round robin
    adapters:
      - name: nic
        ports:
          - {name: vmnic1, roles: [iscsi], speed_gbps: 10, mtu: 9000}
          - {name: vmk1, roles: [iscsi], address: 10.1.0.21/24, mtu: 9000, bound_to: "esx-1:vmnic1"}
          - {name: vmk2, roles: [iscsi], address: 10.1.0.22/24, mtu: 9000, bound_to: "esx-1:vmnic1"}
          - {name: vmk3, roles: [iscsi], address: 10.1.0.23/24, mtu: 9000, bound_to: "esx-1:vmnic1"}
switches:
  - {id: sw, mtu: 9216}
arrays:
  - id: arr
    controllers:
      - name: A
        ports: [{name: A0, roles: [iscsi], address: 10.1.0.101/24, mtu: 9000}]
      - name: B
        ports: [{name: B0, roles: [iscsi], address: 10.1.0.102/24, mtu: 9000}]
    enclosures: [{name: E0, slots: 4, disks: [{slots: 0-3, size_gb: 600}]}]
    disk_groups: [{name: dg, raid: raid10, members: [E0:0-3], owner: A}]
    volumes: [{name: ds, group: dg, size_gb: 500, purpose: [vm]}]
    hosts: [{name: esx-1, server: esx-1}]
    mappings: [{volume: ds, to: esx-1, lun: 0}]
links:
  - {a: "esx-1:vmnic1", b: sw}
  - {a: "arr:A0", b: sw}
  - {a: "arr:B0", b: sw}
"""


def test_three_interfaces_bound_on_one_nic_from_the_file_to_the_findings_and_the_appendix(tmp_path):
    bed = loads(ESXI_BED, "esx.yaml")
    paths = paths_of(bed, "esx-1", "arr:ds")
    assert len(paths) == 6 and {p.spec.initiator for p in paths} == {f"esx-1:vmk{i}" for i in (1, 2, 3)}
    assert all("bound to esx-1:vmnic1" in p.describe() for p in paths)
    found = validate(bed)
    assert not codes(found, "PATH-001")            # six sessions
    spof = codes(found, "PATH-002")
    assert spof and "esx-1:vmnic1" in spof[0].subjects
    one_port = codes(found, "NET-002")              # three interfaces, one cable: one iSCSI port
    assert one_port and "1 dedicated iSCSI port(s) (3 iSCSI interfaces bound to esx-1:vmnic1)" in one_port[0].message
    assert not codes(found, "NET-005")              # MTU 9000 end to end through the NIC the interfaces use
    assert loads(dumps(bed)) == bed
    assert list(generate(bed).steps())
    path = tmp_path / "esx.yaml"
    path.write_text(ESXI_BED)
    out = tmp_path / "a.md"
    subprocess.run([sys.executable, "-m", "app.cli", "appendix", str(path), "-o", str(out)], check=True,
                   capture_output=True, timeout=300)
    md = out.read_text()
    assert all(f"10.1.0.2{i}/24" in md for i in (1, 2, 3))
