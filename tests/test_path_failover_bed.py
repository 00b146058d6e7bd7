"""A Linux path-failover bed the examples do not cover: two Debian hosts, each with two iSCSI NICs on two
switches and subnets, dm-multipath, one tgt target answering on two portals, each host's own LUN under a
fio load and a third LUN the hosts' host group shares.  The identities are the ones tgt gave and
iscsi-inq read (serials MPIO0001..3, iscsi-inq prints them padded to 36 characters inside brackets)."""
from __future__ import annotations

import pytest

from tests.test_property_editor import studio  # noqa: F401  (studio: the fixture)
from topology import methodology as M
from topology.errors import BedFileError
from topology.fileformat import loads

IQN = "iqn.2026-11.lab.h37u:mpio-target"


def _host(name: str, last: int) -> str:
    return f"""  - id: {name}
    role: load_client
    os: Debian GNU/Linux 12 (bookworm)
    platform: linux
    multipath: dm-multipath
    adapters:
      - name: x540
        ports:
          - {{name: san0, address: 127.0.2.{last}/24, network: san-a, roles: [iscsi]}}
          - {{name: san1, address: 127.0.3.{last}/24, network: san-b, roles: [iscsi]}}
"""


def bed(serial: str = "MPIO0001", own_volume_for_lnx2: bool = True) -> str:
    data2 = (f"      - {{name: data-2, size_gb: 0.067, serial: MPIO0002, target: '{IQN}'}}\n"
             if own_volume_for_lnx2 else "")
    map2 = "      - {volume: data-2, to: lnx2, lun: 2}\n" if own_volume_for_lnx2 else ""
    return f"""format_version: 1
bed: {{name: Linux path failover}}
networks:
  - {{id: san-a, cidr: 127.0.2.0/24, role: iscsi}}
  - {{id: san-b, cidr: 127.0.3.0/24, role: iscsi}}
servers:
{_host("lnx1", 11)}{_host("lnx2", 12)}switches:
  - {{id: swA, kind: ethernet, roles: [iscsi]}}
  - {{id: swB, kind: ethernet, roles: [iscsi]}}
arrays:
  - id: tgt1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    controllers:
      - name: ctl0
        ports:
          - {{name: portal-a, address: 127.0.2.10/24, network: san-a, roles: [iscsi]}}
          - {{name: portal-b, address: 127.0.3.10/24, network: san-b, roles: [iscsi]}}
    volumes:
      - {{name: data-1, size_gb: 0.134, serial: "{serial}", target: '{IQN}'}}
{data2}      - {{name: shared, size_gb: 0.034, serial: MPIO0003, target: '{IQN}', drive: /srv/shared}}
    host_groups: [{{name: pair}}]
    hosts:
      - {{name: lnx1, server: lnx1, host_group: pair}}
      - {{name: lnx2, server: lnx2, host_group: pair}}
    mappings:
      - {{volume: data-1, to: lnx1, lun: 1}}
{map2}      - {{volume: shared, to: pair, lun: 3}}
links:
  - {{a: 'lnx1:san0', b: 'swA:1'}}
  - {{a: 'lnx2:san0', b: 'swA:2'}}
  - {{a: 'tgt1:portal-a', b: 'swA:8'}}
  - {{a: 'lnx1:san1', b: 'swB:1'}}
  - {{a: 'lnx2:san1', b: 'swB:2'}}
  - {{a: 'tgt1:portal-b', b: 'swB:8'}}
workloads:
  - {{id: oltp-1, tool: fio, driver: lnx1, targets: ['tgt1:data-1'], access: [{{block_kb: 8, read_pct: 70}}],
     duration_minutes: 0.2}}
"""


def _rescans(text: str) -> dict[str, str]:
    steps = M.generate(loads(text, "failover.yaml")).steps()
    return {s.target: s.text for s in steps if s.template == "linux/connectivity.yaml#disks-online"}


def test_every_host_that_sees_the_shared_lun_rescans_for_it():
    """Only the host that formats a LUN rescanned: lnx2 never looked for the host group's LUN, and a host
    whose LUNs are all shared got no rescan at all."""
    rescans = _rescans(bed())
    assert set(rescans) == {"lnx1", "lnx2"}
    assert "(data-2, shared)" in rescans["lnx2"] and "(data-1, shared)" in rescans["lnx1"]
    only_shared = _rescans(bed(own_volume_for_lnx2=False))
    assert "lnx2" in only_shared and "the 1 new disk from tgt1 (shared) appears" in only_shared["lnx2"]


def test_a_cluster_node_other_than_the_first_rescans_but_never_initializes():
    """The examples' clusters: the second node of the MD3000i cluster brings no disk online and initializes
    nothing (its first node does), but it rescans for the cluster's disks."""
    from resources import example_path
    from topology.fileformat import load
    steps = list(M.generate(load(example_path("md3000i-hyperv-cluster"))).steps())
    online = {s.target: s.text for s in steps if s.template.endswith("#disks-online")}
    assert "R710-2" in online and "Witness" in online["R710-2"] and "leave them offline" in online["R710-2"]


def test_the_path_view_says_what_the_procedure_does_with_each_volume():
    """The path view said "Formatted by lnx1" of the shared LUN, which the procedure leaves to a cluster file
    system made by hand, and of the fio load's raw LUN, which the procedure never formats."""
    from topology.path_explain import explain
    parsed = loads(bed(), "failover.yaml")
    steps = list(M.generate(parsed).steps())
    shared = [s for s in steps if "MPIO0003" in s.text]
    assert [s.template.split("#")[1] for s in shared] == ["shared-volume"] and not shared[0].automation
    view = " ".join(explain(parsed, "lnx2", "tgt1:shared").summary_lines())
    assert "Formatted by lnx1:" not in view and "by hand" in view and "cluster file system" in view
    assert not [s for s in steps if s.template.endswith("#format") and "MPIO0001" in s.text]   # the load's raw disk
    raw = " ".join(explain(parsed, "lnx1", "tgt1:data-1").summary_lines())
    assert "Never formatted" in raw and "oltp-1" in raw


@pytest.mark.parametrize("pasted", ["                            MPIO0001", "[                            MPIO0001]",
                                    "MPIO0001 "])
def test_a_serial_pasted_as_iscsi_inq_prints_it_is_refused_where_it_is_typed(pasted):
    """udev and Get-Disk give the serial trimmed: a padded one matched no disk, and only the run found out."""
    from topology.model import Volume
    from topology.names import field_problem
    with pytest.raises(BedFileError) as err:
        loads(bed(serial=pasted), "failover.yaml")
    assert "failover.yaml:" in str(err.value) and "trimmed" in str(err.value)
    assert field_problem(Volume, "serial", pasted) is not None          # the form's check is the loader's
    assert field_problem(Volume, "serial", "MPIO0001") is None


def test_the_file_system_is_the_beds_never_the_oss_default():
    """Debian gave ext4 to a LUN whose bed names no file system: a value the bed does not state reached a
    command that writes.  The step is now done by hand and says which field to fill; the bed's own choice runs."""
    mounted = bed().replace("serial: MPIO0002, target", "serial: MPIO0002, drive: /srv/d2{fs}, target")

    def format_step(fs: str):
        steps = M.generate(loads(mounted.replace("{fs}", fs), "failover.yaml")).steps()
        return next(s for s in steps if s.template == "linux/connectivity.yaml#format")
    unstated = format_step("")
    assert unstated.manual and not unstated.automation and "file_system" in unstated.manual_reason
    assert "ext4" not in unstated.text and "xfs" not in unstated.text.lower()
    assert format_step(", file_system: not stated").manual
    chosen = format_step(", file_system: xfs")
    assert chosen.destructive and chosen.automation and "fs=xfs" in chosen.automation[0].script
    assert "(xfs)" in chosen.text and chosen.sources.get("xfs") == "tgt1:data-2.file_system"


FAILOVER = """scenarios:
  - {id: all-paths, reference: true}
  - {id: path-a-down, failed: ['lnx1:san0', 'lnx2:san0']}
  - {id: path-b-down, failed: ['swB:1', 'swB:2']}
test_matrix:
  - {id: failover, variable: failed fabric, scenarios: [path-a-down, path-b-down]}
"""


def test_one_fabric_is_given_back_and_its_paths_checked_before_the_other_is_taken_and_both_at_the_end():
    """Fabric A's ports came back only after fabric B's were disabled (both hosts without a path), and the test
    ended with fabric B's ports still disabled."""
    steps = [s for s in M.generate(loads(bed() + FAILOVER, "failover.yaml")).steps() if s.number.startswith("7.")]
    kinds = [(s.template.split("#")[1], s.target) for s in steps
             if s.template.split("#")[1] in ("part-enable", "part-disable", "check-restored", "check-paths")]
    b_down = kinds.index(("part-disable", "swB"))
    a_back = [k for k, (kind, target) in enumerate(kinds) if kind == "part-enable" and target == "swA"]
    assert len(a_back) == 2 and max(a_back) < b_down, kinds          # fabric A back before B goes
    checked = [k for k, (kind, _) in enumerate(kinds) if kind == "check-restored"]
    assert len(checked) == 2 and max(a_back) < min(checked) and max(checked) < b_down, kinds
    end = next(k for k, s in enumerate(steps) if "after the last phase" in s.heading.lower())
    restored = steps[end:]
    assert [(s.template.split("#")[1], s.target) for s in restored] == [
        ("part-enable", "swB"), ("part-enable", "swB"), ("check-paths", "lnx1"), ("check-paths", "lnx2")]
    assert "over 2 path(s)" in restored[-1].text


def test_the_volume_form_refuses_the_serial_as_iscsi_inq_prints_it(qtbot, studio):
    """The form checks what the loader checks: the pasted line is refused with the loader's words."""
    from tests.test_property_editor import type_into
    from topology.fileformat import dumps
    from topology.rename_ops import locate
    doc, selection, tree, editor, panel = studio
    selection.set(["MD3000i:Logs"])
    qtbot.waitUntil(lambda: editor._subject == "MD3000i:Logs", timeout=5000)
    volume, text_before = locate(doc.bed, "MD3000i:Logs").obj, dumps(doc.bed)
    type_into(qtbot, editor.editor("serial"), "[                            MPIO0001]")
    assert "trimmed" in editor.message("serial") and dumps(doc.bed) == text_before
    assert doc.undo_stack.count() == 0
    type_into(qtbot, editor.editor("serial"), "MPIO0001")
    assert volume.serial == "MPIO0001" and editor.message("serial") == "" and doc.undo_stack.count() == 1


UNDER_LOAD = """scenarios:
  - {id: all-paths, reference: true}
  - {id: path-a-down, failed: ['lnx1:san0', 'lnx2:san0'], fail_after_minutes: 2, restore_after_minutes: 4,
     checks: ['fio reports no I/O errors']}
  - {id: path-b-down, failed: ['swB:1', 'swB:2'], fail_after_minutes: 1}
test_matrix:
  - {id: failover, variable: failed fabric, scenarios: [path-a-down, path-b-down]}
run_plan: {repetitions: 2}
"""


def test_a_failover_under_load_takes_the_ports_out_while_the_loads_run_in_every_run():
    """A path-failover test fails a fabric while the load runs; the procedure could only take the ports out
    before the runs (and checked "fio keeps running" before fio started)."""
    text = bed().replace("duration_minutes: 0.2", "duration_minutes: 6") + UNDER_LOAD
    steps = [s for s in M.generate(loads(text, "failover.yaml")).steps() if s.number.startswith("7.")]
    kind = lambda s: s.template.split("#")[1]   # noqa: E731
    assert not [s for s in steps if kind(s) in ("part-disable", "part-enable")]     # nothing out between runs
    for scenario, rep in (("path-a-down", "1"), ("path-a-down", "2"), ("path-b-down", "2")):
        run = [s for s in steps if s.position.get("scenario") == scenario and s.position.get("repetition") == rep]
        order = [kind(s) for s in run]
        fails = [s for s in run if kind(s) == "part-fail-under-load"]
        assert len(fails) == 2 and order.index("part-fail-under-load") < order.index("load")
        assert order.index("check-paths-under-load") < order.index("load")
        if scenario == "path-a-down":
            assert "2 minutes after they start" in fails[0].text and "disable port 1 of swA" in fails[0].text
            assert "fio reports no I/O errors" in " ".join(s.text for s in run if kind(s) == "check-under-load")
            back = [s for s in run if kind(s) == "part-restore-under-load"]
            assert len(back) == 2 and "4 minutes after they start" in back[0].text
            assert order.index("check-back-under-load") < order.index("load")
        else:       # the part is the switch port itself, not a port cabled to it
            assert "take port 1 of switch swB out of service: disable it on swB." in fails[0].text
            assert "which it is cabled to" not in " ".join(s.text for s in run)
            # no time to give them back: once the loads have ended, before the next run
            back = [k for k, o in enumerate(order) if o == "part-restore-after-load"]
            assert len(back) == 2 and min(back) > order.index("wait") and "check-back-after-load" in order


def test_what_was_checked_while_the_loads_ran_is_confirmed_after_they_ended():
    """The wizard runs a load step to its end: the "while the loads run, check …" steps, listed before the
    loads so that a person knows what to do on the clock, were ticked off before anything had failed, and
    the run's record said the checks were done before the loads began.  Each failover run now asks, after
    its wait, what those checks showed; a run with nothing taken out under load asks nothing."""
    text = bed().replace("duration_minutes: 0.2", "duration_minutes: 6") + UNDER_LOAD
    steps = [s for s in M.generate(loads(text, "failover.yaml")).steps() if s.number.startswith("7.")]
    kind = lambda s: s.template.split("#")[1]   # noqa: E731
    for scenario, rep in (("path-a-down", "1"), ("path-a-down", "2"), ("path-b-down", "1")):
        run = [s for s in steps if s.position.get("scenario") == scenario and s.position.get("repetition") == rep]
        order = [kind(s) for s in run]
        assert order.count("confirm-under-load") == 1 and order.index("confirm-under-load") == order.index("wait") + 1
        said = run[order.index("confirm-under-load")].text
        assert "The loads have ended" in said and "the paths lnx1 and lnx2 kept with the parts out of service" in said
        assert ("fio reports no I/O errors" in said) == (scenario == "path-a-down")
        assert ("had again once they were back" in said) == (scenario == "path-a-down")    # b: given back after
    plain = UNDER_LOAD.replace(", fail_after_minutes: 2, restore_after_minutes: 4", "").replace(
        ", fail_after_minutes: 1", "")                   # the same failures, made before the runs
    kinds = [kind(s) for s in M.generate(loads(bed() + plain, "failover.yaml")).steps()]
    assert "load" in kinds and "part-disable" in kinds and "confirm-under-load" not in kinds


@pytest.mark.parametrize("times, says", [("restore_after_minutes: 4", "does not take them out under load"),
                                         ("fail_after_minutes: 4, restore_after_minutes: 2", "not after")])
def test_a_restore_time_that_cannot_happen_is_refused_with_its_line(times, says):
    text = bed() + "scenarios:\n  - {id: down, failed: ['lnx1:san0'], " + times + "}\n"
    with pytest.raises(BedFileError) as err:
        loads(text, "failover.yaml")
    assert says in str(err.value) and "failover.yaml:" in str(err.value)


@pytest.mark.parametrize("mac, refused", [("00-00-00-00-00-00", False), ("00:1B:21:3A:4F:10", True)])
def test_a_port_whose_mac_the_bed_states_is_configured_only_on_that_nic(mac, refused):
    """The address of fabric A went on whatever interface had the name, a swapped NIC included.  The check runs
    here for real against /sys/class/net (the interface `lo`: 00:00:00:00:00:00); nothing past it is run."""
    import subprocess
    text = bed().replace("{name: san0, address: 127.0.2.11/24", "{name: lo, mac: " + mac + ", address: 127.0.2.11/24")
    text = text.replace("{a: 'lnx1:san0'", "{a: 'lnx1:lo'")
    step = next(s for s in M.generate(loads(text, "failover.yaml")).steps()
                if s.template == "linux/network.yaml#port" and s.target == "lnx1" and "interface lo" in s.text)
    check = step.automation[0].script.splitlines()[0]
    assert check.startswith("tb_mac=") and step.automation[0].script.splitlines()[1].startswith("printf ")
    ran = subprocess.run(["bash", "-c", check + "\necho passed"], capture_output=True, text=True, timeout=10)
    assert (ran.returncode != 0) is refused and ("passed" in ran.stdout) is not refused
    if refused:
        assert "refused, nothing was changed: lnx1:lo has MAC 00:1b:21:3a:4f:10" in ran.stderr
        assert "has 00:00:00:00:00:00" in ran.stderr


def test_the_words_about_new_disks_agree_with_their_count():
    """'the 1 new disks ... appear' read wrong: the noun, the verb and the pronoun follow the count
    (Linux and Windows rescans, Windows initialization); the form names the WWN field in capitals."""
    from resources import example_path
    from topology.fileformat import load
    from widgets.forms.labels import field_label
    texts = [s.text for s in M.generate(load(example_path("rhel-kvm-sriov-iscsi"))).steps()]
    assert any("the 1 new disk from md3820i (vmstore-1) appears." in t for t in texts)
    texts = [s.text for s in M.generate(load(example_path("md3000i-hyperv-cluster"))).steps()]
    assert any("the 5 new disks from MD3000i (OS, Database, SQL, Logs, Witness) appear; leave them offline" in t
               for t in texts)
    assert not any("1 new disks" in t or "1 new disk from" in t and " appear;" in t for t in texts)
    assert field_label("wwn")[0] == "WWN"


def test_a_target_with_no_pool_makes_its_volumes_without_asking_for_one():
    """tgt states no disk group and no pool: "create the volume data-1 in «missing: volume.container»" was
    a gap the bed could not fill, and it counted against the bed's readiness.  An array that has pools
    still asks which one a volume without a pool goes in."""
    steps = [s for s in M.generate(loads(bed(), "failover.yaml")).steps() if "create the volume" in s.text]
    assert [s.text for s in steps][:1] == ["On tgt1, create the volume data-1 with 0.134 GB."]
    assert not [s for s in steps if s.unresolved]
    pooled = bed().replace("    volumes:\n", "    pools: [{name: p0}]\n    volumes:\n", 1)
    steps = [s for s in M.generate(loads(pooled, "failover.yaml")).steps() if "create the volume" in s.text]
    assert steps and all("in «missing: volume.container»" in s.text and s.unresolved for s in steps)
