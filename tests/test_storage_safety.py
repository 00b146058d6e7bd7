"""Steps that write to a disk, over every example and every platform x version x transport bed:
none selects its disk by position or by a value the tool made up, each carries its guard and
names its disk, the machine that uses a volume is the one that formats it, an access LUN is
never formatted, and Hyper-V hosts below Windows Server 2012 get VHD files, not VHDX."""
from __future__ import annotations

import json
import re

import pytest

from resources import example_names, example_path
from tests import script_checks
from tests.storage_identity import with_identities
from topology import methodology as M
from topology.fileformat import load, loads
from topology.methodology.context import BedContext
from topology.synthetic_platforms import cases, platform_bed

CASES = cases()
# ways a script picks a disk by where it sits instead of what it is
POSITIONAL = [re.compile(p) for p in (r"-lun-", r"Select-Object\s+-First", r"SCSILogicalUnit\s+-eq",
                                      r"Location\s+-Match", r"/dev/sd[a-z]\b", r"select disk \d", r"\[0\]\s*\|")]


def _beds():
    for name in example_names():
        yield name, load(example_path(name))
        yield f"{name}+identity", with_identities(load(example_path(name)))
    for case, transport in CASES:
        yield f"{case.id}-{transport}+identity", with_identities(platform_bed(case, transport))


BEDS = list(_beds())


@pytest.mark.parametrize("name, bed", BEDS, ids=[n for n, _ in BEDS])
def test_no_destructive_command_selects_by_position_or_unknown_value(name, bed):
    meth = M.generate(bed)
    destructive = [s for s in meth.steps() if s.destructive]
    assert destructive or "identity" not in name or not any(a.volumes for a in bed.arrays)
    for st in destructive:
        for c in st.automation:
            assert "--- Testbed Studio guard" in c.script, (name, st.number, "carries no guard")
            assert "--- end of guard" in c.script
            own = c.script.split("--- end of guard", 1)[1]
            for pat in POSITIONAL:
                assert not pat.search(own), (name, st.number, pat.pattern)
            assert st.devices and all(re.search(r"WWN|serial|LUN \d+ of target", d) for d in st.devices), st.devices
        if st.automation:   # no value the tool filled in (an auto-numbered LUN) was used
            assert not [n for n, v in st.values.items() if v.assumed], (name, st.number)
        else:
            assert st.manual_reason or st.template.startswith("common/") or "rhev" in st.template, \
                (name, st.number, st.template)
    if "identity" not in name:
        # the examples state no WWN or serial (reports never do): every disk is written by hand
        assert not any(s.automation for s in destructive), name
    assert script_checks.problems(bed, meth) == []


def _format_step(tmp_path, command: str) -> None:
    """A lab template of one destructive bash format step on each host volume; `command`: the rest of
    its one command, under `shell: bash` (its guard, script, ansible)."""
    (tmp_path / "linux").mkdir()
    (tmp_path / "linux" / "connectivity.yaml").write_text("""section: connectivity
steps:
  - id: format
    foreach: host_volume
    destructive: true
    device: '{volume.device}'
    text: Format {volume.name}.
    automation:
      - shell: bash
""" + command)


def test_a_destructive_template_never_runs_on_a_made_up_lun(tmp_path):
    """A lab template that selects by the auto-numbered LUN is done by hand and names the value."""
    _format_step(tmp_path, """\
        guard: linux-block
        script: echo {volume.lun_auto}
""")
    bed = with_identities(load(example_path("rhel-kvm-sriov-iscsi")))
    for a in bed.arrays:
        for m in a.mappings:
            m.lun = None          # the bed states no LUN: the tool numbers them
    meth = M.generate(bed, extra_dirs=[tmp_path])
    fmt = [s for s in meth.steps() if s.template == "linux/connectivity.yaml#format"]
    assert fmt and all(not s.automation for s in fmt)
    assert all("volume.lun_auto was filled in by the tool" in s.manual_reason for s in fmt)


def test_a_destructive_template_without_a_guard_is_refused(tmp_path):
    _format_step(tmp_path, """\
        script: mkfs.xfs /dev/sdb
""")
    with pytest.raises(Exception, match="needs a `guard:`"):
        M.generate(load(example_path("rhel-kvm-sriov-iscsi")), extra_dirs=[tmp_path])


def test_methodology_json_marks_destructive_steps_with_their_devices():
    meth = M.generate(with_identities(load(example_path("rhel-kvm-sriov-iscsi"))))
    from topology.methodology.json_export import to_json
    data = json.loads(to_json(meth))
    steps = [st for sec in data["sections"] for st in sec["steps"]]
    assert all(isinstance(st["destructive"], bool) for st in steps)
    marked = [st for st in steps if st["destructive"]]
    assert marked and all(st["devices"] and "WWN naa." in st["devices"][0] for st in marked)
    assert not any(st["destructive"] for st in steps if "iscsiadm" in " ".join(c["script"] for c in st["commands"]))


# ------------------------------------------------------------------------ who formats

COMPARISON = """format_version: 1
bed: {name: "one server, three installs"}
servers:
  - {id: r710, role: hypervisor, os: Red Hat Enterprise Linux 6.1, hypervisor: RHEV-M 3.0, platform: linux,
     multipath: dm-multipath}
arrays:
  - id: eql
    model: Dell EqualLogic PS5000XV
    connectivity: iscsi
    volumes:
      - {name: os, size_gb: 500}
      - {name: data00, size_gb: 100, wwn: naa.6090a0a8c0e1b10000000000000000a0}
      - {name: data01, size_gb: 100, wwn: naa.6090a0a8c0e1b10000000000000000a1}
    hosts:
      - {name: r710, server: r710}
      - {name: guest1, server: guest1}
      - {name: guest2, server: guest2}
    mappings:
      - {volume: os, to: r710}
      - {volume: data00, to: r710}
      - {volume: data01, to: r710}
      - {volume: data00, to: guest1}
      - {volume: data01, to: guest2}
vms:
  - {id: guest1, host: r710, memory_gb: 4, guest_os: Red Hat Enterprise Linux 6.1, storage_access: guest_iscsi,
     multipath: dm-multipath,
     disks: [{name: sys, size_gb: 20, volume: "eql:os"}, {name: data, size_gb: 90, volume: "eql:data00", drive: /data}]}
  - {id: guest2, host: r710, memory_gb: 4, guest_os: Red Hat Enterprise Linux 6.1, storage_access: guest_iscsi,
     multipath: dm-multipath,
     disks: [{name: sys, size_gb: 20, volume: "eql:os"}, {name: data, size_gb: 90, volume: "eql:data01"}]}
configurations:
  - {id: rhev-vhost, description: RHEV 3.0 with in-guest iSCSI over virtio}
  - id: rhev-sriov
    description: RHEV 3.0 with in-guest iSCSI over SR-IOV functions
    set:
      guest1: {storage_access: sriov}
      guest2: {storage_access: sriov}
  - id: hyperv
    description: Hyper-V Server 2008 R2, the guests' data on VHDs of the host
    set:
      r710: {os: Microsoft Hyper-V Server 2008 R2, hypervisor: Hyper-V, platform: windows, multipath: MPIO/DSM}
      guest1: {storage_access: hypervisor, guest_os: Windows Server 2008 R2}
      guest2: {storage_access: hypervisor, guest_os: Windows Server 2008 R2}
"""


def _comparison():
    from topology import configurations
    bed = loads(COMPARISON.replace('drive: /data}', 'path: "D:\\\\VMs"}'), "comparison.yaml")
    return {name: configurations.configured(bed, name) for name in ("rhev-vhost", "rhev-sriov", "hyperv")}


def test_in_guest_luns_get_no_host_storage_domain_and_each_guest_formats_its_own():
    views = _comparison()
    for name in ("rhev-vhost", "rhev-sriov"):
        meth = M.generate(views[name])
        domains = [s for s in meth.steps() if s.template.endswith("#rhev-storage-domain")]
        assert [s.target for s in domains] == ["r710"], name          # its own volume only
        assert "data00" not in " ".join(s.text for s in domains) and "data01" not in " ".join(
            s.text for s in domains)
        owners = BedContext(views[name]).volume_owners()
        assert owners["eql:data00"].owner == "guest1" and owners["eql:data01"].owner == "guest2"
        assert "r710" in owners["eql:data00"].others
        for guest in ("guest1", "guest2"):
            fmt = [s for s in meth.steps() if s.target == guest and s.template.endswith("#guest-format")]
            assert len(fmt) == 1 and fmt[0].destructive, (name, guest)
            assert "_netdev" in fmt[0].text


def test_the_hyperv_configuration_formats_on_the_host_and_makes_vhd_files():
    view = _comparison()["hyperv"]
    owners = BedContext(view).volume_owners()
    assert owners["eql:data00"].owner == "r710" and owners["eql:data00"].kind == "host"
    meth = M.generate(view)
    files = [s.values["disk.file"].text for s in meth.steps() if "disk.file" in s.values]
    assert files and all(f.endswith(".vhd") for f in files), files      # VHDX exists from 2012
    assert not any("vhdx" in s.text.lower() for s in meth.steps())


def test_the_access_lun_is_never_formatted():
    bed = load(example_path("bladecenter-fc-hyperv-2008r2"))
    array = bed.arrays[0]
    from topology.model import Mapping, Volume
    array.volumes.append(Volume(name="Access", size_gb=0.02, purpose=["access"], serial="SN-ACCESS"))
    array.mappings.append(Mapping(volume="Access", to=array.mappings[0].to, lun=31))
    bed = with_identities(bed)
    owners = BedContext(bed).volume_owners()
    assert owners[f"{array.id}:Access"].owner == "" and "access" in owners[f"{array.id}:Access"].reason
    meth = M.generate(bed)
    assert not any("Access" in " ".join(s.devices) or "volume label Access" in s.text for s in meth.steps())
    assert any(s.destructive and s.automation for s in meth.steps())      # the other LUNs are formatted


def test_the_path_view_says_who_formats_a_volume():
    from topology.path_explain import explain
    views = _comparison()
    text = " ".join(explain(views["rhev-vhost"], "r710", "eql:data00").summary_lines())
    assert "Formatted by guest1" in text and "never writes to it" in text




@pytest.mark.parametrize("name", [n for n, _ in BEDS if n.endswith("+identity") and not n.endswith(("-fc+identity",
                                                                                                 "-sas+identity"))])
def test_a_reused_volume_is_never_written_and_its_kept_step_is_guarded(name):
    """Every volume `reuse: true`: no step writes to a disk, and each step that keeps one and runs itself
    selects its disk behind the guard, by identity, never by position."""
    import copy
    bed = copy.deepcopy(dict(BEDS)[name])
    for holder in (*bed.arrays, *bed.array_groups):     # an array group (EqualLogic) holds volumes too
        for v in holder.volumes:
            v.reuse = True
    steps = list(M.generate(bed).steps())
    # a load that writes to a disk inside a guest (fio on /dev/sdb) writes to the test's disk, not to the reused
    # volume's file system; it is marked as a write (and done by hand, naming no identity) on its own
    assert not [s.number for s in steps if s.destructive and not s.template.endswith("#load")], name
    kept = [s for s in steps if s.template.split("#")[-1] in ("mount-kept", "guest-mount-kept", "rhev-domain-kept")]
    # a volume Linux nodes share (the synthetic Linux beds map every LUN to their cluster's group) is kept
    # by hand, as a cluster file system: no script mounts it
    shared = [s for s in steps if s.template.split("#")[-1] in ("shared-volume", "guest-shared-volume")]
    assert not [s.number for s in shared if s.automation], name
    assert kept or shared or not any(h.volumes for h in (*bed.arrays, *bed.array_groups)), name
    for s in kept:
        for c in s.automation:
            assert "--- Testbed Studio guard" in c.script, (name, s.number)
            own = c.script.split("--- end of guard", 1)[1]
            assert not any(p.search(own) for p in POSITIONAL), (name, s.number)
            assert re.search(r"(TB_WWN|TB_SERIAL|TB_TARGET|Wwn|Serial|Target) ?= ?'?\w", own), (name, s.number)


# ------------------------------------------------------------------------ a volume several Linux hosts share

SHARED_BED = """format_version: 1
bed: {name: two Debian hosts share one LUN}
networks:
  - {id: san, cidr: 10.20.0.0/24, role: iscsi}
servers:
  - id: deb1
    os: Debian GNU/Linux 12 (bookworm)
    platform: linux
    multipath: dm-multipath
    adapters: [{name: nic, ports: [{name: san0, roles: [iscsi], address: 10.20.0.2/24, network: san}]}]
  - id: deb2
    os: Debian GNU/Linux 12 (bookworm)
    platform: linux
    multipath: dm-multipath
    adapters: [{name: nic, ports: [{name: san0, roles: [iscsi], address: 10.20.0.3/24, network: san}]}]
arrays:
  - id: array1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    controllers: [{name: c0, ports: [{name: p0, roles: [iscsi], address: 10.20.0.1/24, network: san}]}]
    volumes:
      - {name: shared, size_gb: 10, serial: beaf11, target: 'iqn.2026-11.lab:array1', drive: /srv/shared}
      - {name: node1-data, size_gb: 5, serial: beaf12, target: 'iqn.2026-11.lab:array1', drive: /srv/node1,
         file_system: ext4}
      - {name: node2-data, size_gb: 5, serial: beaf13, target: 'iqn.2026-11.lab:array1', drive: /srv/node2,
         file_system: ext4}
    host_groups: [{name: pair}]
    hosts:
      - {name: deb1, server: deb1, host_group: pair, initiators: ['iqn.2026-11.lab:deb1']}
      - {name: deb2, server: deb2, host_group: pair, initiators: ['iqn.2026-11.lab:deb2']}
    mappings:
      - {volume: shared, to: pair, lun: 1}
      - {volume: node1-data, to: deb1, lun: 2}
      - {volume: node2-data, to: deb2, lun: 3}
"""
CLUSTER = "clusters:\n  - {id: debclu, nodes: [deb1, deb2], shared_volumes: ['array1:shared']}\n"
WRITES_A_FILE_SYSTEM = re.compile(r"\bmkfs|/etc/fstab|\bmount\b")


@pytest.mark.parametrize("variant", ["host-group", "cluster", "cluster-reuse", "two-hosts"])
def test_a_volume_several_linux_hosts_share_is_never_formatted_or_mounted_by_script(variant):
    """ext4/XFS are not cluster file systems: a second node mounting the shared LUN (at failover, or both
    at once) corrupts it, so no node gets a scripted mkfs or /etc/fstab line for it -- the step is manual
    and says why -- while each host's own volume is still formatted and mounted by its guarded script."""
    text = SHARED_BED + (CLUSTER if variant.startswith("cluster") else "")
    if variant == "cluster-reuse":
        text = text.replace("drive: /srv/shared}", "drive: /srv/shared, reuse: true}")
    if variant == "two-hosts":       # mapped to each host on its own rather than to their group
        text = text.replace("{volume: shared, to: pair, lun: 1}",
                            "{volume: shared, to: deb1, lun: 1}\n      - {volume: shared, to: deb2, lun: 1}")
    steps = list(M.generate(loads(text, "shared.yaml")).steps())
    about_shared = [s for s in steps if "beaf11" in s.text or any("beaf11" in c.script for c in s.automation)]
    assert not [s.number for s in about_shared if s.automation and any(
        WRITES_A_FILE_SYSTEM.search(c.script.split("--- end of guard")[-1]) for c in s.automation)]
    assert not [s for s in about_shared if s.template.split("#")[-1] in ("format", "mount-kept")]
    manual = [s for s in about_shared if s.template.endswith("#shared-volume")]
    assert [s.target for s in manual] == ["deb1"] and not manual[0].automation
    assert "cluster file system" in manual[0].text and "deb2" in manual[0].text and "/srv/shared" in manual[0].text
    assert ("cluster debclu" in manual[0].text) == variant.startswith("cluster")
    own = {s.target: s for s in steps if s.template.endswith("#format")}
    assert sorted(own) == ["deb1", "deb2"]
    for host, serial, mnt in (("deb1", "beaf12", "/srv/node1"), ("deb2", "beaf13", "/srv/node2")):
        script = own[host].automation[0].script
        assert own[host].destructive and f"TB_SERIAL={serial}" in script and "mkfs" in script and mnt in script


GUESTS_SHARE = """format_version: 1
bed: {name: two guests share one LUN over in-guest iSCSI}
servers:
  - {id: kvm1, role: hypervisor, os: Debian GNU/Linux 12 (bookworm), hypervisor: KVM, platform: linux,
     multipath: dm-multipath}
arrays:
  - id: array1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    volumes:
      - {name: quorum, size_gb: 1, serial: beaf21, target: 'iqn.2026-11.lab:array1', drive: /srv/quorum}
      - {name: own, size_gb: 1, serial: beaf22, target: 'iqn.2026-11.lab:array1', drive: /srv/own, file_system: ext4}
    hosts:
      - {name: g1, server: g1}
      - {name: g2, server: g2}
      - {name: kvm1, server: kvm1}
    mappings:
      - {volume: quorum, to: g1, lun: 1}
      - {volume: quorum, to: g2, lun: 1}
      - {volume: quorum, to: kvm1, lun: 1}
      - {volume: own, to: g1, lun: 2}
      - {volume: own, to: kvm1, lun: 2}
vms:
  - {id: g1, host: kvm1, memory_gb: 4, guest_os: Debian GNU/Linux 12 (bookworm), storage_access: guest_iscsi,
     multipath: dm-multipath}
  - {id: g2, host: kvm1, memory_gb: 4, guest_os: Debian GNU/Linux 12 (bookworm), storage_access: guest_iscsi,
     multipath: dm-multipath}
"""


def test_a_lun_two_linux_guests_share_is_never_formatted_inside_either_but_a_guests_own_lun_is():
    """A guest cluster's LUN (two VMs log in to it themselves) is kept by hand too; the LUN one guest alone
    reaches is formatted inside it, even though the array also maps it to the guest's host."""
    steps = list(M.generate(loads(GUESTS_SHARE, "guests.yaml")).steps())
    by_kind = lambda kind: [s for s in steps if s.template.endswith(f"#{kind}")]   # noqa: E731
    shared = by_kind("guest-shared-volume")
    assert [s.target for s in shared] == ["g1"] and "beaf21" in shared[0].text and "g2" in shared[0].text
    assert not shared[0].automation
    formats = by_kind("guest-format")
    assert [s.target for s in formats] == ["g1"] and "TB_SERIAL=beaf22" in formats[0].automation[0].script
    assert not [s.number for s in steps if any("beaf21" in c.script for c in s.automation)
                and any(WRITES_A_FILE_SYSTEM.search(c.script.split("--- end of guard")[-1]) for c in s.automation)]


def test_a_guarded_command_with_an_ansible_module_is_refused(tmp_path):
    """The Ansible export and `run --engine ansible` run a command's `ansible: module:` instead of its
    script: on a guarded command that module would write to the disk it names with no guard in front."""
    _format_step(tmp_path, """\
        guard: linux-block
        script: tb_select; mkfs.xfs "$TB_DEVICE"
        ansible:
          module: community.general.filesystem
          args: {fstype: xfs, dev: /dev/sdb}
""")
    with pytest.raises(Exception, match=r"(?s)connectivity.yaml:13: .*a command with a guard runs its script") \
            as refused:
        M.generate(load(example_path("rhel-kvm-sriov-iscsi")), extra_dirs=[tmp_path])
    assert "results:" in str(refused.value)
