"""Switch ports as first-class parts of the bed (issue 12 item 5, the Qt-free half): a palette
switch describes its ports, a cable dropped on the switch takes the next free port that fits
(and says which), a port that does not fit is refused with the reason, and many ports are
added in one undoable step."""
from __future__ import annotations

import pytest

from topology import operations as ops
from topology import switch_ports
from topology.fileformat import dumps, loads
from topology.model import Bed, BedInfo, Port
from topology.validation import validate


@pytest.fixture
def bed() -> Bed:
    b = Bed(bed=BedInfo(name="from scratch"))
    for kind in ("server:hypervisor", "server:hypervisor", "switch:ethernet", "switch:ethernet", "array",
                 "switch:fc"):
        ops.add_device(b, kind, x=0, y=0).apply()
    return b


def switch(bed: Bed, ident: str):
    return next(s for s in bed.switches if s.id == ident)


def test_a_palette_switch_describes_its_24_ports(bed):
    sw = switch(bed, "sw-1")
    assert [p.name for p in sw.ports] == [str(n) for n in range(1, 25)] and sw.port_count == 24
    assert {p.kind for p in switch(bed, "fcsw-1").ports} == {"fc"}
    assert switch_ports.describe_all(bed, sw) == "24 ports: 0 cabled, 24 free · speed not stated"


def test_a_cable_dropped_on_the_switch_takes_the_next_free_port_that_fits(bed):
    sw = switch(bed, "sw-1")
    sw.ports[0].roles = ["lan"]                    # 1: LAN only
    sw.ports[1].roles = ["unused"]                 # 2: unused
    sw.ports[2].speed_gbps = 1                     # 3: 1 Gb/s
    sw.ports[4].roles = ["iscsi"]                  # 5: iSCSI
    for p in bed.servers[0].adapters[1].ports:     # SAN1 and SAN2 at 10 Gb/s
        p.speed_gbps = 10
    edit = ops.connect(bed, "host-1:SAN1", "sw-1")
    assert edit.chosen == "sw-1:5"                 # the same traffic first
    assert edit.message() == "Connect host-1:SAN1 to sw-1:5: sw-1:5 is the next free port that fits"
    edit.apply()
    edit = ops.connect(bed, "host-1:SAN2", "sw-1")
    assert edit.chosen == "sw-1:4"                 # then the first with no role that fits
    edit.apply()
    assert {(lk.a, lk.b) for lk in bed.links} == {("host-1:SAN1", "sw-1:5"), ("host-1:SAN2", "sw-1:4")}
    assert switch_ports.describe_all(bed, sw).startswith("24 ports: 2 cabled, 22 free")


def test_with_no_port_that_fits_the_refusal_says_why(bed):
    sw = switch(bed, "sw-1")
    sw.port_count = 3
    sw.ports = [Port(name="1", roles=["lan"]), Port(name="2", speed_gbps=1), Port(name="3", roles=["unused"])]
    host_port = next(p for a in bed.servers[0].adapters for p in a.ports if p.name == "SAN1")
    host_port.speed_gbps = 10
    before = dumps(bed)
    with pytest.raises(ops.LinkRefused) as refused:
        ops.connect(bed, "host-1:SAN1", "sw-1")
    text = str(refused.value)
    assert text.startswith("sw-1 has no free port that fits host-1:SAN1 (iSCSI, 10 Gb/s): its 3 free ports")
    for why in ("carry other traffic", "run at another speed", "marked unused", "Add ports to sw-1"):
        assert why in text
    assert dumps(bed) == before


@pytest.mark.parametrize("change, words", [
    (lambda p: setattr(p, "roles", ["lan"]), "sw-1:7 carries LAN and host-1:SAN1 carries iSCSI"),
    (lambda p: setattr(p, "speed_gbps", 1), "sw-1:7 runs at 1 Gb/s and host-1:SAN1 at 10 Gb/s"),
    (lambda p: setattr(p, "vlan", 20), "sw-1:7 is on VLAN 20 and host-1:SAN1 on VLAN 10"),
    (lambda p: setattr(p, "roles", ["unused"]), "sw-1:7 is marked unused"),
])
def test_a_port_that_does_not_fit_is_refused_by_name(bed, change, words):
    host_port = next(p for a in bed.servers[0].adapters for p in a.ports if p.name == "SAN1")
    host_port.speed_gbps, host_port.vlan = 10, 10
    change(switch(bed, "sw-1").ports[6])
    with pytest.raises(ops.LinkRefused, match=words):
        ops.connect(bed, "host-1:SAN1", "sw-1:7")
    ops.connect(bed, "host-1:SAN1", "sw-1:8").apply()       # the port next to it is fine


def test_fc_ports_stay_on_their_fabric(bed):
    fc = switch(bed, "fcsw-1")
    fc.ports[0].fabric = "B"
    assert switch_ports.misfit(fc, fc.ports[0], Port(name="p", kind="fc", fabric="A"), "h:p") == \
        "fcsw-1:1 is on fabric B and h:p on fabric A"
    assert switch_ports.misfit(fc, fc.ports[1], Port(name="p", kind="ethernet"), "h:p") == \
        "fcsw-1:2 is an FC port and h:p an Ethernet port"


def test_adding_ports_is_one_step_that_undo_takes_back(bed):
    sw = switch(bed, "sw-1")
    before = dumps(bed)
    edit = switch_ports.add_ports(bed, sw, 24, speed_gbps=10, roles=["iscsi"], mtu=9000)
    edit.apply()
    assert edit.text == "Add 24 ports to sw-1"
    assert len(sw.ports) == 48 and sw.port_count == 48
    assert [p.name for p in sw.ports[24:26]] == ["25", "26"]
    assert sw.ports[30].speed_gbps == 10 and sw.ports[30].roles == ["iscsi"] and sw.ports[30].mtu == 9000
    assert "sw-1" in edit.touched()
    loads(dumps(bed))                              # the bed still loads
    edit.revert()
    assert dumps(bed) == before
    with pytest.raises(ValueError, match="between 1 and"):
        switch_ports.add_ports(bed, sw, 0)


def test_a_switch_with_a_port_count_only_says_so(bed):
    sw = switch(bed, "sw-2")
    sw.ports, sw.port_count = [], 52
    ops.connect(bed, "host-1:SAN2", "sw-2").apply()          # no port described: the cable names the switch
    assert ("host-1:SAN2", "sw-2") in {(lk.a, lk.b) for lk in bed.links}
    assert switch_ports.describe_all(bed, sw) == "52 ports, none described one by one; 1 cable names only the switch"
    switch_ports.add_ports(bed, sw, 52).apply()               # describing them keeps the count
    assert sw.port_count == 52 and len(sw.ports) == 52


def test_a_bed_cabled_to_switch_bodies_gets_four_paths_per_host(bed):
    """The new user's bed of issue 12: every cable dropped on a switch body lands on a port, and
    the paths come from that cabling (no `paths:`)."""
    from topology import storage_ops as st
    from topology.derived_paths import PathDerivation
    from topology.index import BedIndex
    for a, b in (("host-1:SAN1", "sw-1"), ("host-1:SAN2", "sw-2"), ("host-2:SAN1", "sw-1"), ("host-2:SAN2", "sw-2"),
                 ("array-1:A0", "sw-1"), ("array-1:A1", "sw-2"), ("array-1:B0", "sw-1"), ("array-1:B1", "sw-2")):
        ops.connect(bed, a, b).apply()
    assert all(":" in lk.a and ":" in lk.b for lk in bed.links) and len({lk.b for lk in bed.links}) == 8
    st.create_disk_group(bed, "array-1", [("E0", s) for s in range(4)], "raid10", name="dg").apply()
    st.create_volume(bed, "array-1", "VMStore", group="dg", remainder=True, purpose="vm").apply()
    for host in ("host-1", "host-2"):
        st.map_volume(bed, "array-1", "VMStore", host).apply()
    derived = PathDerivation(BedIndex(bed))
    for host in ("host-1", "host-2"):
        mine = [p for p in derived.paths if p.host == host]
        assert len(mine) == 4
        switch_ports_used = {h.element for p in mine for h in p.hops if h.kind == "switch"}
        assert switch_ports_used == {"sw-1", "sw-2"}
    codes = {f.code for f in validate(bed)}
    assert "PATH-001" not in codes and "NET-012" not in codes
    assert "paths:" not in dumps(bed)
