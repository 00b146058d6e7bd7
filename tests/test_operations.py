"""The edits behind the canvas, without Qt: every operation leaves a bed that saves and loads,
and undoing it (revert) gives back the project text byte for byte."""
from __future__ import annotations

import pytest

from topology import clipboard, layout
from topology import operations as ops
from topology.edits import Edit
from topology.fileformat import dumps, load, loads
from topology.model import Bed, BedInfo
from topology.synthetic import generate
from topology.validation import validate


def roundtrip(bed: Bed, edit: Edit, *, thorough: bool = True) -> Bed:
    """Apply, check the bed still loads, revert, check the text is back exactly."""
    before = dumps(bed)
    edit.apply()
    after = dumps(bed)
    reloaded = loads(after)                 # raises BedFileError if a reference dangles
    edit.revert()
    assert dumps(bed) == before
    if thorough:
        assert dumps(reloaded) == after
        edit.apply()                        # redo gives the same text again
        assert dumps(bed) == after
        edit.revert()
    return reloaded


@pytest.fixture
def seed000(examples_dir) -> Bed:
    return load(examples_dir / "md3000i-hyperv-cluster.yaml")


@pytest.fixture
def empty() -> Bed:
    return Bed(bed=BedInfo(name="empty"))


# ------------------------------------------------------------------------------ adding

@pytest.mark.parametrize("kind", [k.key for k in ops.PALETTE if k.key not in ("enclosure", "disk")])
def test_every_palette_kind_adds_a_loadable_component(empty, kind):
    edit = ops.add_device(empty, kind, x=100, y=60)
    after = roundtrip(empty, edit)
    new = {c.id for coll in (after.servers, after.switches, after.arrays, after.chassis, after.networks, after.vms)
           for c in coll}
    assert len(new) == 1


def test_ids_are_readable_and_unique(empty):
    made = []
    for kind in ["server:hypervisor", "server:hypervisor", "switch:ethernet", "switch:ethernet", "array",
                 "switch:fc", "switch:fc", "server:load_client"]:
        edit = ops.add_device(empty, kind, x=0, y=0)
        edit.apply()
        made.append(edit.item.id)
    assert made == ["host-1", "host-2", "sw-1", "sw-2", "array-1", "fcsw-1", "fcsw-2", "client-1"]
    assert [s.fabric for s in empty.switches if s.kind == "fc"] == ["A", "B"]
    # a freed name is taken again before a new number
    ops.delete(empty, ["host-1"]).apply()
    edit = ops.add_device(empty, "server:hypervisor", x=0, y=0)
    assert edit.item.id == "host-1"


def test_defaults_a_lab_expects(empty):
    host = ops.add_device(empty, "server:hypervisor", x=0, y=0).item
    roles = {p.name: p.roles for ad in host.adapters for p in ad.ports}
    assert roles["SAN1"] == ["iscsi"] and roles["SAN2"] == ["iscsi"]
    assert {"lan", "heartbeat", "live_migration", "vm"} <= {r for rs in roles.values() for r in rs}
    array = ops.add_device(empty, "array", x=0, y=0).item
    assert [c.name for c in array.controllers] == ["A", "B"]
    assert all(len(c.ports) == 2 and all(p.roles == ["iscsi"] for p in c.ports) for c in array.controllers)
    (enc,) = array.enclosures
    assert enc.slots == 12 and enc.disks[0].slots == "0-11"


def test_vm_goes_onto_the_host_it_is_dropped_on(seed000):
    edit = ops.add_device(seed000, "vm", x=0, y=0, target="R710-2")
    roundtrip(seed000, edit)
    assert edit.item.host == "R710-2"
    with pytest.raises(ops.Refused, match="not a server"):
        ops.add_device(seed000, "vm", target="PC5448-1")


def test_enclosure_and_disk_need_an_array(seed000):
    with pytest.raises(ops.Refused, match="storage array"):
        ops.add_device(seed000, "disk", x=0, y=0)
    disk = ops.add_device(seed000, "disk", target="MD3000i")      # slot 14 is the empty one
    after = roundtrip(seed000, disk)
    assert disk.item.slots == "14"
    assert len(after.arrays[0].enclosures[0].disks) == len(seed000.arrays[0].enclosures[0].disks) + 1
    roundtrip(seed000, ops.add_device(seed000, "enclosure", target="MD3000i"))


# ------------------------------------------------------------------------------ connecting

def test_connect_host_port_to_switch(seed000):
    edit = ops.connect(seed000, "R710-1:SAN1", "PC5448-1")
    after = roundtrip(seed000, edit)
    assert ("R710-1:SAN1", "PC5448-1") in {(lk.a, lk.b) for lk in after.links}
    assert {"R710-1", "PC5448-1"} <= edit.touched()


def test_connect_writes_the_device_end_first(seed000):
    edit = ops.connect(seed000, "PC5448-2", "R710-1:LAN1")
    edit.apply()
    assert (seed000.links[-1].a, seed000.links[-1].b) == ("R710-1:LAN1", "PC5448-2")


def test_switches_cable_with_an_interswitch_link(seed000):
    edit = ops.connect(seed000, "PC5448-1", "PC5448-2")
    roundtrip(seed000, edit)
    edit.apply()
    assert seed000.links[-1].kind == "isl"


def test_a_switch_that_lists_ports_gives_a_free_one_then_describes_a_new_one(examples_dir):
    bed = generate(hosts=2, vms=0, arrays=1, disks=10, rack_size=2)
    sw = bed.switches[0]
    from topology.model import Port
    sw.ports = [Port(name="1", roles=["iscsi"])]
    bed.links = [lk for lk in bed.links if lk.a not in ("host0:san1", "host1:san1")]
    edit = ops.connect(bed, "host0:san1", sw.id)            # port 1 is free and fits: it is taken
    assert edit.chosen == f"{sw.id}:1" and "next free port" in edit.message()
    edit.apply()
    edit = ops.connect(bed, "host1:san1", sw.id)            # none free, room for more: a new port 2
    after = roundtrip(bed, edit)
    sw_after = next(s for s in after.switches if s.id == sw.id)
    assert [p.name for p in sw_after.ports] == ["1", "2"]
    assert ("host1:san1", f"{sw.id}:2") in {(lk.a, lk.b) for lk in after.links}


@pytest.mark.parametrize("a, b, reason", [
    ("R710-1:SAN1", "R710-1:SAN2", "Both ends are on R710-1"),
    ("R710-1:SAN1", "R710-2:LAN1", "carries iSCSI"),
    ("MD3000i:C0-iSCSI0", "PC5448-2", "already cabled to PC5448-1"),
    ("R710-1", "PC5448-1", "Pick a port on R710-1"),
    ("MD3000i:C0-SAS", "PC5448-2", "SAS port"),
    ("Exchange", "PC5448-2", "VM"),
    ("R710-1:SAN1", "nowhere", "not in the bed"),
    ("R710-1:NOPE", "PC5448-2", "has no port NOPE"),
    ("R710-1:SAN1", "R710-1:SAN1", "itself"),
])
def test_incompatible_links_are_refused(seed000, a, b, reason):
    before = dumps(seed000)
    with pytest.raises(ops.LinkRefused, match=reason):
        ops.connect(seed000, a, b)
    assert dumps(seed000) == before


def test_fc_to_ethernet_and_management_to_san_are_refused(empty):
    for kind in ("server:management", "switch:fc", "switch:ethernet", "array"):
        ops.add_device(empty, kind, x=0, y=0).apply()
    fc = empty.switches[0]
    with pytest.raises(ops.LinkRefused, match="Ethernet port mgmt-1:LAN1 cannot be cabled to FC switch"):
        ops.connect(empty, "mgmt-1:LAN1", fc.id)
    with pytest.raises(ops.LinkRefused, match="management port"):
        ops.connect(empty, "mgmt-1:MGMT1", "array-1:A0")
    empty.switches[1].roles = ["iscsi"]
    with pytest.raises(ops.LinkRefused, match="keep management off the storage network"):
        ops.connect(empty, "mgmt-1:MGMT1", "sw-1")


def test_fc_fabrics_stay_apart(empty):
    for kind in ("switch:fc", "switch:fc"):
        ops.add_device(empty, kind, x=0, y=0).apply()
    with pytest.raises(ops.LinkRefused, match="fabric"):
        ops.connect(empty, "fcsw-1", "fcsw-2")


def test_fc_host_port_to_fc_switch(examples_dir):
    bed = load(examples_dir / "ams2500-exchange-esrp.yaml")
    switch = bed.switches[0]
    edit = ops.connect(bed, "SUN141:HBA1-P0", switch.id)
    roundtrip(bed, edit)
    with pytest.raises(ops.LinkRefused, match="FC port SUN141:HBA1-P0 cannot be cabled to Ethernet"):
        empty_lan = ops.add_device(bed, "switch:ethernet", x=0, y=0)
        empty_lan.apply()
        ops.connect(bed, "SUN141:HBA1-P0", empty_lan.item.id)
    switch.fabric = "B"
    port = next(p for ad in bed.servers[0].adapters for p in ad.ports if p.name == "HBA1-P0")
    port.fabric = "A"
    with pytest.raises(ops.LinkRefused, match="fabric A .* fabric B"):
        ops.connect(bed, "SUN141:HBA1-P0", switch.id)


def test_a_full_switch_refuses_one_more_cable(seed000):
    seed000.switches[1].port_count = 1
    ops.connect(seed000, "R710-1:LAN1", "PC5448-2").apply()
    with pytest.raises(ops.LinkRefused, match="all its 1 ports in use"):
        ops.connect(seed000, "R710-2:LAN1", "PC5448-2")


# ------------------------------------------------------------------------------ deleting

@pytest.mark.parametrize("ids", [["R710-1"], ["MD3000i"], ["PC5448-1"], ["iSCSI-A"], ["Exchange"],
                                 ["R710-1", "R710-2", "MD3000i", "PC5448-1", "PC5448-2", "DC"]])
def test_delete_takes_everything_that_refers_along(seed000, ids):
    edit = ops.delete(seed000, ids)
    after = roundtrip(seed000, edit)
    remaining = {c.id for coll in (after.servers, after.switches, after.arrays, after.vms, after.networks)
                 for c in coll}
    assert not set(ids) & remaining
    from topology.fileformat import walk_refs
    local = {"disk_group", "pool", "controller", "local_volume", "host_group", "array_target"}
    refs = [value for _path, value, kind, _array in walk_refs(after) if kind not in local]
    refs += [end for lk in after.links for end in (lk.a, lk.b)]
    for ident in ids:   # no reference in the bed names the deleted components any more
        assert not [r for r in refs if r == ident or r.startswith(ident + ":")], ident


def test_deleting_a_host_unplaces_its_vms_and_drops_its_paths(seed000):
    edit = ops.delete(seed000, ["R710-1"])
    after = roundtrip(seed000, edit)
    assert all(p.host != "R710-1" for p in after.paths)
    assert {v.id for v in after.vms if not v.host} == {v.id for v in seed000.vms if v.host == "R710-1"}
    assert all("R710-1" not in c.nodes for c in after.clusters)


def test_delete_a_chosen_link(seed000):
    link = seed000.links[0]
    after = roundtrip(seed000, ops.delete(seed000, [], links=[link]))
    assert len(after.links) == len(seed000.links) - 1


def test_delete_nothing_is_refused(seed000):
    with pytest.raises(ops.Refused):
        ops.delete(seed000, ["no-such-thing"])


def test_delete_on_every_example_and_every_kind_of_device(examples_dir):
    for path in sorted(examples_dir.glob("*.yaml")):
        bed = load(path)
        for coll in (bed.servers, bed.switches, bed.arrays, bed.networks, bed.vms):
            if coll:
                roundtrip(bed, ops.delete(bed, [coll[0].id]), thorough=False)


def test_deleting_a_server_clears_it_from_the_lists_a_configuration_gives_in_full(examples_dir):
    """The Hyper-V configuration of the R710 example gives the group's access records in full; one names
    the server.  Deleting the server leaves the record without it (the bed still loads), undo brings it back."""
    bed = load(examples_dir / "r710-rhev-hyperv-equallogic.yaml")
    hyperv = next(c for c in bed.configurations if c.id == "hyperv")
    assert any(h.get("server") == "R710" for h in hyperv.overrides["eql-group"]["hosts"])
    after = roundtrip(bed, ops.delete(bed, ["R710"]))
    kept = next(c for c in after.configurations if c.id == "hyperv").overrides["eql-group"]["hosts"]
    assert kept and not any(h.get("server") == "R710" for h in kept)


# ------------------------------------------------------------------------------ moving, layout

def test_move_is_one_step_for_many_devices(seed000):
    edit = ops.move(seed000, {"R710-1": (100, 200), "R710-2": (300, 200), "MD3000i": (150, 600)})
    after = roundtrip(seed000, edit)
    assert (after.servers[0].x, after.servers[0].y) == (100, 200)
    assert edit.text == "Move 3 devices"
    assert edit.touched() == {"R710-1", "R710-2", "MD3000i"}


def test_layout_positions_every_device_without_overlap(examples_dir):
    for path in sorted(examples_dir.glob("*.yaml")):
        bed = load(path)
        edit = ops.apply_layout(bed)
        after = roundtrip(bed, edit)
        assert all(d.x is not None and d.y is not None for d in (*after.servers, *after.switches, *after.arrays))
        boxes = layout.layout(after)
        assert layout.overlapping(boxes) == []
        # tiers: clients above hosts above switches above storage
        from topology.layout import tier
        by_tier = {}
        for d in (*after.servers, *after.switches, *after.arrays):
            by_tier.setdefault(tier(d), []).append(boxes[d.id])
        tiers = sorted(by_tier)
        for upper, lower in zip(tiers, tiers[1:], strict=False):
            assert max(b.y + b.h for b in by_tier[upper]) < min(b.y for b in by_tier[lower])


def test_layout_keeps_model_positions(seed000):
    seed000.servers[0].x, seed000.servers[0].y = 1234.0, 567.0
    boxes = layout.layout(seed000)
    assert (boxes["R710-1"].x, boxes["R710-1"].y) == (1234.0, 567.0)
    assert "LAN" in boxes and boxes["LAN"].y < min(b.y for k, b in boxes.items() if k != "LAN" and k[:5] != "iSCSI")


# ------------------------------------------------------------------------------ clipboard

def test_copy_paste_inserts_fresh_copies(seed000):
    text = clipboard.copy(seed000, ["R710-1", "R710-2", "PC5448-1", "MD3000i"])
    clip = loads(text)                               # the clipboard text is a bed of its own
    assert {s.id for s in clip.servers} == {"R710-1", "R710-2"}
    assert {n.id for n in clip.networks} == {"LAN", "iSCSI-A", "iSCSI-B"}
    assert all(lk.a.split(":")[0] in {"MD3000i", "R710-1", "R710-2", "PC5448-1"} for lk in clip.links)
    assert len(clip.links) == len([lk for lk in seed000.links if lk.b == "PC5448-1"])
    edit = clipboard.paste(seed000, text, (40, 40))
    after = roundtrip(seed000, edit)
    assert clipboard.pasted_ids(edit) == ["R710-3", "R710-4", "PC5448-3", "MD3000i-2"]
    ids = [s.id for s in after.servers]
    assert "R710-3" in ids and "R710-4" in ids
    assert {n.id for n in after.networks} == {"LAN", "iSCSI-A", "iSCSI-B"}       # networks are shared
    new_links = [lk for lk in after.links if lk.a.startswith("MD3000i-2:")]
    assert new_links and all(lk.b == "PC5448-3" for lk in new_links)
    new_paths = [p for p in after.paths if p.host == "R710-3"]
    assert new_paths and all(p.target.startswith("MD3000i-2:") for p in new_paths)


def test_paste_offsets_positions(seed000):
    text = clipboard.copy(seed000, ["R710-1"], positions={"R710-1": (100.0, 200.0)})
    edit = clipboard.paste(seed000, text, (40, 40))
    edit.apply()
    pasted = next(s for s in seed000.servers if s.id == "R710-3")
    assert (pasted.x, pasted.y) == (140.0, 240.0)


def test_paste_rejects_foreign_text(seed000):
    for text in ("hello", "- a\n- list\n", "format_version: 1\nbed: {name: x}\n"):
        with pytest.raises(ops.Refused, match="clipboard"):
            clipboard.paste(seed000, text)


def test_copy_nothing_is_refused(seed000):
    with pytest.raises(ops.Refused):
        clipboard.copy(seed000, ["iSCSI-A"])


# ------------------------------------------------------------------------------ a bed built with operations validates

def test_a_bed_drawn_from_scratch_validates(empty):
    for kind in ("server:hypervisor", "server:hypervisor", "switch:ethernet", "switch:ethernet", "array"):
        ops.add_device(empty, kind, x=0, y=0).apply()
    for a, b in (("host-1:SAN1", "sw-1"), ("host-1:SAN2", "sw-2"), ("host-2:SAN1", "sw-1"), ("host-2:SAN2", "sw-2"),
                 ("array-1:A0", "sw-1"), ("array-1:A1", "sw-2"), ("array-1:B0", "sw-1"), ("array-1:B1", "sw-2")):
        ops.connect(empty, a, b).apply()
    bed = loads(dumps(empty))
    assert len(bed.links) == 8
    codes = {f.code for f in validate(bed)}
    assert "NET-012" not in codes
