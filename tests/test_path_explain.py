"""Why a path exists or not, hop by hop (issue 12 item 6, the Qt-free half): the derived paths of
one host to one volume with the cable and switch ports behind each hop, and where none carries
the volume, the first hop that fails — no cable, different subnet, no zone, not mapped, or a
port the scenario fails."""
from __future__ import annotations

from test_derived_paths import FC_BED, new_user_bed

from topology.fileformat import loads
from topology.model import VM, Link, Port, Scenario, Switch, VirtualDisk, Zone
from topology.path_explain import explain, volumes_used

VOL = "array-1:VMStore"


def kinds(path) -> list[str]:
    return [s.kind for s in path.steps]


def test_each_path_reads_host_port_switch_ports_array_port_controller_lun():
    bed = new_user_bed()
    # the switches describe their ports and the cables land on them
    for sw in bed.switches:
        sw.ports = [Port(name=str(n)) for n in range(1, 9)]
    for n, lk in enumerate(bed.links, start=1):
        lk.b = f"{lk.b}:{n}"
    used = volumes_used(bed)
    assert used["host-1"] == {VOL: "mapped to it"}
    shown = explain(bed, "host-1", VOL)
    assert shown.why_used == "mapped to it" and not shown.missing and len(shown.paths) == 4
    first = next(p for p in shown.paths if p.target == "array-1:A0")
    assert kinds(first) == ["port", "cable", "switch_port", "switch", "switch_port", "cable", "target",
                            "controller", "lun"]
    link_a = next(lk for lk in bed.links if lk.a == "host-1:p1")
    link_b = next(lk for lk in bed.links if lk.a == "array-1:A0")
    assert first.text() == (f"host-1:p1 → {link_a.b} → switch-1 → {link_b.b} → array-1:A0 → controller A → "
                            "array-1:VMStore (LUN 4)")
    assert first.steps[1].ends == (link_a.a, link_a.b) and first.steps[5].ends == (link_b.a, link_b.b)


def test_cables_to_switch_bodies_give_no_switch_port_steps():
    shown = explain(new_user_bed(), "host-2", VOL)
    assert len(shown.paths) == 4
    assert all(kinds(p) == ["port", "cable", "switch", "cable", "target", "controller", "lun"] for p in shown.paths)


def test_an_isl_between_switches_is_a_hop_of_its_own():
    bed = new_user_bed()
    bed.links = [lk for lk in bed.links if lk.a not in ("array-1:A0", "array-1:B0")]
    bed.switches.append(Switch(id="core"))
    bed.links += [Link(a="array-1:A0", b="core"), Link(a="array-1:B0", b="core"),
                  Link(a="switch-1", b="core", kind="isl")]
    via = next(p for p in explain(bed, "host-1", VOL).paths if p.target == "array-1:A0")
    assert kinds(via)[:7] == ["port", "cable", "switch", "isl", "switch", "cable", "target"]
    isl = next(s for s in via.steps if s.kind == "isl")
    assert isl.ends == ("switch-1", "core")


def test_not_mapped_says_so_and_shows_no_path():
    bed = new_user_bed()
    bed.arrays[0].hosts[0].host_group = ""
    bed.clusters = []
    bed.vms.append(VM(id="vm-1", host="host-1", memory_gb=1, disks=[VirtualDisk(name="os", volume=VOL)]))
    shown = explain(bed, "host-1", VOL)
    assert shown.paths == [] and "is not mapped to host-1" in shown.missing
    assert shown.why_used == "VM vm-1 has disk os on it"


def test_no_cable_names_the_ports_and_marks_them():
    bed = new_user_bed()
    bed.links = [lk for lk in bed.links if not lk.a.startswith("host-1:")]
    shown = explain(bed, "host-1", VOL)
    assert shown.paths == [] and "has no cable" in shown.missing
    assert {"host-1:p1", "host-1:p2"} & set(shown.problem_refs)


def test_a_different_subnet_is_the_first_hop_that_fails():
    bed = new_user_bed()
    for p in bed.servers[0].adapters[0].ports:
        p.address = p.address.replace("10.1.", "10.9.").replace("10.2.", "10.8.")
    shown = explain(bed, "host-1", VOL)
    assert shown.paths == [] and "different subnets" in shown.missing


def test_no_zone_is_the_first_hop_that_fails():
    bed = loads(FC_BED, "fc.yaml")
    bed.switches[0].zones = [Zone(name="other", members=["ams:1A"])]
    bed.switches[1].zones = [Zone(name="other", members=["ams:0A"])]
    shown = explain(bed, "h1", "ams:db")
    assert shown.paths == [] and "no zone" in shown.missing


def test_in_a_scenario_the_failed_ports_are_named_with_the_reference_paths_they_cut():
    bed = new_user_bed()
    failed = ["array-1:A0", "array-1:A1", "array-1:B0", "array-1:B1"]
    bed.scenarios.append(Scenario(id="san-down", failed=failed))
    shown = explain(bed, "host-1", VOL, "san-down")
    assert shown.scenario == "san-down" and shown.paths == [] and shown.missing
    assert shown.reference_paths == 4 and sorted(shown.taken_out) == failed
    assert set(failed) <= set(shown.problem_refs)
    # half of them: two paths left, the two cut ones said
    bed.scenarios.append(Scenario(id="half", failed=["array-1:A0", "array-1:A1"]))
    half = explain(bed, "host-1", VOL, "half")
    assert len(half.paths) == 2 and half.reference_paths == 4 and sorted(half.taken_out) == ["array-1:A0",
                                                                                           "array-1:A1"]
    assert not half.missing
    # a failed controller is named as such
    bed.scenarios.append(Scenario(id="ctrl-a", failed=["array-1:A"]))
    ctrl = explain(bed, "host-1", VOL, "ctrl-a")
    assert len(ctrl.paths) == 2 and "array-1:A" in ctrl.taken_out
    assert explain(bed, "host-1", VOL).reference_paths == 0       # the reference: nothing taken out


def test_a_host_a_scenario_takes_out_is_not_listed_as_a_user_and_explaining_it_says_why():
    bed = new_user_bed()
    bed.scenarios.append(Scenario(id="host-2-out", excluded=["host-2"]))
    assert set(volumes_used(bed)) == {"host-1", "host-2"}
    assert set(volumes_used(bed, "host-2-out")) == {"host-1"}     # was listed, "has no iSCSI or FC port"
    shown = explain(bed, "host-2", VOL, "host-2-out")
    assert shown.paths == [] and shown.missing == \
        "host-2 does not run in scenario host-2-out (failed, excluded or not listed)"
    assert shown.problem_refs[0] == "host-2" and shown.reference_paths == 4


def test_a_failed_virtual_switch_or_vnic_is_named_as_what_the_scenario_took_out():
    from resources import example_path
    from topology.fileformat import load
    bed = load(example_path("rhel-kvm-sriov-iscsi"))
    bed.scenarios += [Scenario(id="vsw-down", failed=["kvm-1/sriov-a"]), Scenario(id="vf-down", failed=["db-1:eth1"])]
    vsw = explain(bed, "db-1", "md3820i:db-1-data", "vsw-down")
    assert len(vsw.working) == 2 and vsw.reference_paths == 4 and vsw.taken_out == ["kvm-1/sriov-a"]   # was []
    vf = explain(bed, "db-1", "md3820i:db-1-data", "vf-down")
    assert len(vf.working) == 2 and vf.taken_out == ["db-1:eth1"]
