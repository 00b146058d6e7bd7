"""The Linux (RHEL/CentOS 6, 7+, Debian/Ubuntu; KVM, RHEV-M), ESXi 5.x-8.x, guest, array-CLI and
switch templates, over the illustrative examples and variants of them for each platform x version x
transport: every generated bash script passes `bash -n` and shellcheck (ESXi's also as POSIX sh: the
ESXi Shell is busybox), every PowerShell script parses with tree-sitter-powershell, no command
appears on a release outside the range tests/data/command_ranges.yaml gives for it, hostile bed
values reach the scripts only as data, and each example gets the steps its design needs."""
from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from resources import example_path
from tests.script_checks import shell_problems
from tests.storage_identity import with_identities
from topology import methodology as M
from topology import quoting
from topology.fileformat import load, loads
from topology.methodology.selection import host_platform
from topology.os_release import OsRelease, parse_range

DATA = Path(__file__).resolve().parent / "data"
KVM, BLADE, ESXI = "rhel-kvm-sriov-iscsi", "bladecenter-fc-hyperv-2008r2", "esxi-equallogic-port-binding"


# ------------------------------------------------------------------------------------ the beds

def _example_text(name: str) -> str:
    return example_path(name).read_text(encoding="utf-8")


def _with_os(name: str, old: str, new: str, **replace: str) -> str:
    text = _example_text(name).replace(old, new)
    for a, b in replace.items():
        text = text.replace(a, b)
    return text


def _variants() -> dict[str, str]:
    """Platform x version x transport: the illustrative examples with other releases, transports and
    vendor models put in (each variant is a whole bed that loads)."""
    rhel79 = "os: Red Hat Enterprise Linux 7.9"
    guest79 = "guest_os: Red Hat Enterprise Linux 7.9"
    out = {f"kvm-{tag}": _with_os(KVM, rhel79, f"os: {os}", **{guest79: f"guest_os: {os}"})
           for tag, os in (("rhel6.4", "Red Hat Enterprise Linux 6.4"), ("centos6", "CentOS 6.9"),
                           ("rhel7.9", "Red Hat Enterprise Linux 7.9"), ("rhel8.6", "Red Hat Enterprise Linux 8.6"),
                           ("rocky9", "Rocky Linux 9.2"), ("ubuntu16.04", "Ubuntu 16.04 LTS"),
                           ("ubuntu22.04", "Ubuntu 22.04 LTS"), ("debian11", "Debian GNU/Linux 11 (bullseye)"))}
    out["kvm-rhev"] = _with_os(KVM, rhel79, "os: Red Hat Enterprise Linux 6.7",
                               **{"hypervisor: KVM (libvirt)": "hypervisor: RHEV-M 3.6"})
    out["kvm-qcow2-rhel8.6"] = _with_os(KVM, rhel79, "os: Red Hat Enterprise Linux 8.6",
                                        **{"format: raw, type: fixed": "format: qcow2, type: fixed"})
    # FC: the blade chassis with Linux or ESXi blades, a QLogic fabric, a Dell MD FC array
    blade_linux = {"os: Windows Server 2008 R2 Enterprise SP1\n    hypervisor: Hyper-V\n    platform: windows":
                   "os: {os}\n    hypervisor: KVM\n    platform: linux",
                   "multipath: RDAC (IBM DS Storage Manager MPIO DSM)": "multipath: dm-multipath"}
    for tag, os in (("rhel6.4", "Red Hat Enterprise Linux 6.4"), ("rhel7.9", "Red Hat Enterprise Linux 7.9"),
                    ("ubuntu22.04", "Ubuntu 22.04 LTS")):
        out[f"blade-fc-{tag}"] = _with_os(BLADE, "a", "a", **{k: v.format(os=os) for k, v in blade_linux.items()})
    out["blade-fc-esxi6.7"] = _with_os(BLADE, "a", "a", **{
        "os: Windows Server 2008 R2 Enterprise SP1\n    hypervisor: Hyper-V\n    platform: windows":
        "os: VMware ESXi 6.7 U3\n    hypervisor: ESXi\n    platform: esxi",
        "multipath: RDAC (IBM DS Storage Manager MPIO DSM)": "multipath: VMware NMP (VMW_SATP_LSI, VMW_PSP_MRU)"})
    out["blade-fc-qlogic-md"] = _with_os(BLADE, "a", "a", **{
        "model: Brocade 20-port 8Gb SAN Switch Module for IBM BladeCenter":
        "model: QLogic 20-port 8Gb SAN Switch Module for IBM BladeCenter",
        "model: IBM System Storage DS5020 (1814-20A)": "model: Dell PowerVault MD3660f"})
    for tag, version in (("4.1", "4.1"), ("5.0", "5.0"), ("5.5", "5.5 U3"), ("6.0", "6.0 U3"), ("6.7", "6.7 U3"),
                         ("7.0", "7.0 U3"), ("8.0", "8.0 U2")):
        out[f"esxi-{tag}"] = _with_os(ESXI, "os: VMware ESXi 6.0 U3", f"os: VMware ESXi {version}")
    out["esxi-pc55xx"] = _with_os(ESXI, "model: Dell PowerConnect 6248", "model: Dell PowerConnect 5548",
                                  **{"1/g": "gi1/0/", "2/g": "gi2/0/"})
    return out


VARIANTS = _variants()
EXAMPLES = ("md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp", KVM, BLADE, ESXI)


@functools.cache
def _bed(name: str):
    """The bed, with the WWN and serial a lab learns from its hosts on every volume: the storage
    steps that write to a disk have commands only then (tests/test_storage_safety.py)."""
    if name in VARIANTS:
        return with_identities(loads(VARIANTS[name], f"{name}.yaml"))
    return with_identities(load(example_path(name)))


@functools.cache
def _meth(name: str) -> M.Methodology:
    return M.generate(_bed(name))


def _commands(meth: M.Methodology, shell: str) -> Iterator[tuple[M.Step, M.Command, str]]:
    """Every script and check of `shell` (a step that lacks a value is never run: it is left out)."""
    for st in meth.steps():
        if st.unresolved:
            continue
        for c in st.automation:
            if c.shell == shell:
                for text in (c.script, c.verify):
                    if text:
                        yield st, c, text


# ------------------------------------------------------------------------------------ parsing

@pytest.mark.parametrize("name", [*EXAMPLES, *VARIANTS])
def test_every_bash_script_passes_bash_n_and_shellcheck(name):
    by_dialect: dict[str, dict[str, str]] = {"bash": {}, "sh": {}}
    for st, c, text in _commands(_meth(name), "bash"):
        for dialect in ("bash", "sh") if c.platform == "esxi" else ("bash",):
            by_dialect[dialect].setdefault(text, f"{st.number} {st.template}")
    problems = [p for dialect, texts in by_dialect.items()
                for p in shell_problems([(label, text) for text, label in texts.items()], dialect)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", [*EXAMPLES, *VARIANTS])
def test_every_powershell_script_parses(name):
    import tree_sitter_powershell
    from tree_sitter import Language, Parser
    parser = Parser(Language(tree_sitter_powershell.language()))
    bad = [f"{st.number} {st.template}: {text[:120]}" for st, _, text in _commands(_meth(name), "powershell")
           if parser.parse(text.encode()).root_node.has_error]
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------------------ release ranges

def _ranges() -> list[dict]:
    return yaml.safe_load((DATA / "command_ranges.yaml").read_text(encoding="utf-8"))


def _out_of_range(release: OsRelease, script: str, table: list[dict]) -> list[str]:
    """The lines of `script` that use a command outside the releases the table gives for it on `release`."""
    out = []
    for line in script.splitlines():
        for e in table:
            if e["family"] != release.family or not re.search(e["pattern"], line.strip()):
                continue
            if "lineage" in e and release.lineage != e["lineage"]:
                continue
            if "distro" in e and release.distro != e["distro"]:
                continue
            fits = e["versions"] != "(no release)" and parse_range(e["versions"]).contains(release.version)
            if not fits:
                out.append(f"{release.describe()}: {line.strip()!r} ({e['why']})")
    return out


def test_the_command_table_catches_a_command_on_the_wrong_release():
    table = _ranges()
    from topology.os_release import parse_os
    rhel6, rhel7 = parse_os("RHEL 6.4"), parse_os("RHEL 7.9")
    assert _out_of_range(rhel6, "systemctl enable iscsid", table)
    assert not _out_of_range(rhel7, "systemctl enable iscsid", table)
    assert _out_of_range(parse_os("Ubuntu 22.04"), "yum install -y fio", table)
    assert _out_of_range(parse_os("VMware ESXi 5.5"), "esxcli network nic pauseParams set -n vmnic2 -r true", table)
    assert _out_of_range(parse_os("RHEL 7.9"), "fs=xfs", table) == []
    assert _out_of_range(parse_os("RHEL 6.4"), "fs=xfs", table)


@pytest.mark.parametrize("name", [*EXAMPLES, *VARIANTS])
def test_no_command_appears_outside_its_release_range(name):
    bed, table = _bed(name), _ranges()
    wrong = []
    for st, _, text in _commands(_meth(name), "bash"):
        if not st.target:
            continue
        release = host_platform(bed, st.target).release
        wrong += [f"{st.number} {st.template}: {w}" for w in _out_of_range(release, text, table)]
    assert not wrong, "\n".join(wrong)


# ------------------------------------------------------------------------------------ coverage

def _automated(name: str, template_prefix: str) -> list[M.Step]:
    return [st for st in _meth(name).steps() if st.template.startswith(template_prefix) and st.automation]


def _scripts(name: str, target: str | None = None) -> str:
    return "\n".join(text for st, _, text in _commands(_meth(name), "bash") if target in (None, st.target))


@pytest.mark.parametrize("name, expect", [
    ("kvm-rhel6.4", ["ifup", "chkconfig iscsid on", "modprobe ixgbe", "mpathconf --enable", "fs=ext4", "virsh define"]),
    ("kvm-centos6", ["ifup", "chkconfig iscsid on", "fs=ext4"]),
    ("kvm-rhel7.9", ["nmcli connection add type bridge-slave", "sriov_numvfs", "fs=ext4", "virsh attach-interface"]),
    ("kvm-rhel8.6", ["type ethernet slave-type bridge", "fs=ext4", "iostat -x -t -o JSON"]),
    ("kvm-rocky9", ["slave-type bridge", "yum install -y device-mapper-multipath"]),
    ("kvm-qcow2-rhel8.6", ["preallocation=full"]),
    ("kvm-ubuntu22.04", ["netplan apply", "apt-get install -y multipath-tools", "fs=ext4"]),
    ("kvm-ubuntu16.04", ["/etc/network/interfaces.d/", "apt-get install -y open-iscsi"]),
    ("kvm-debian11", ["/etc/network/interfaces.d/", "iostat -x -t -o JSON"]),
    ("blade-fc-rhel7.9", ["/sys/class/scsi_host/host*/scan", "mpathconf --enable"]),
    ("blade-fc-esxi6.7", ["esxcli storage nmp satp set --satp VMW_SATP_LSI --default-psp VMW_PSP_MRU"]),
    ("esxi-5.0", ["esxcli iscsi networkportal add"]),
    ("esxi-8.0", ["esxcli iscsi networkportal add", "pauseParams"]),
])
def test_each_platform_and_version_gets_its_own_commands(name, expect):
    scripts = _scripts(name)
    missing = [e for e in expect if e not in scripts]
    assert not missing, f"{name}: no command contains {missing}"


def test_fc_hosts_get_no_iscsi_commands():
    for name in ("blade-fc-rhel6.4", "blade-fc-rhel7.9", "blade-fc-ubuntu22.04", "blade-fc-esxi6.7"):
        scripts = _scripts(name)
        assert "iscsiadm" not in scripts and "esxcli iscsi" not in scripts, name


def test_a_release_out_of_every_range_is_done_by_hand_and_says_why():
    meth = _meth("esxi-4.1")
    esx = [st for st in meth.steps() if st.target == "esx-1"]
    assert esx and not any(st.automation for st in esx)
    assert any("ESXi 4.1" in st.manual_reason for st in esx)
    # ESXi 5.5 has port binding but not pauseParams: that command is left out, the MTU one stays
    flow = [st for st in _meth("esxi-5.5").steps() if st.target == "esx-1" and "pause frames" in st.text]
    assert flow and all("pauseParams" not in c.script for st in flow for c in st.automation)
    assert any("esxcli network vswitch standard set" in c.script for st in flow for c in st.automation)


def test_rhev_hosts_get_their_storage_from_rhev_m_not_iscsiadm():
    meth = _meth("kvm-rhev")
    kvm1 = [st for st in meth.steps() if st.target == "kvm-1"]
    assert not any("iscsiadm" in c.script or "virsh" in c.script for st in kvm1 for c in st.automation)
    texts = " ".join(st.text for st in meth.steps())
    assert "RHEV-M Administration Portal" in texts and "Storage → New Domain" in texts


def test_switch_and_zoning_steps_run_on_the_switch():
    for name, family_word in ((BLADE, "zonecreate"), ("blade-fc-qlogic-md", "zoneset add")):
        zoning = [st for st in _meth(name).steps() if any(family_word in c.script for c in st.automation)]
        assert len(zoning) == 8, name      # 4 zones on each of the two fabric modules
        assert {st.target for st in zoning} == {"fcsm-a", "fcsm-b"}
        # switch sessions are interactive: the statements are pasted by hand, never run
        assert not any(c.invoke for st in zoning for c in st.automation)
    ports = [st for st in _meth(KVM).steps() if any("flowcontrol rx on tx on" in c.script for c in st.automation)]
    assert {st.target for st in ports} == {"san-sw1", "san-sw2"} and len(ports) == 8
    pc = _scripts("esxi-pc55xx")
    assert "port jumbo-frame" not in _scripts(ESXI) and "interface ethernet 1/g1" not in pc


def test_vendor_statements_of_each_array_family():
    def statements(name: str) -> str:
        return "\n".join(c.script for st in _meth(name).steps() for c in st.automation if c.shell == "vendor-cli")
    md = statements(KVM)
    assert 'create host userLabel="kvm-1" hostType="Linux (DM-MP)";' in md
    assert 'create iscsiInitiator iscsiName="iqn.1994-05.com.redhat:db-1"' in md
    ds = statements(BLADE)
    assert 'set logicalDrive ["CSV1"] logicalUnitNumber=0 hostGroup="HV-Cluster";' in ds
    assert 'create hostPort identifier="2100001b320a0100" userLabel="hs22-1-FC0" host="hs22-1";' in ds
    eql = statements(ESXI)
    assert 'volume create "vmfs-01" 2048GB pool "default"' in eql
    assert 'access create initiator "iqn.1998-01.com.vmware:esx-1"' in eql
    ams = statements("ams2500-exchange-esrp")
    assert re.search(r'auluadd -unit "AMS2500" -lu 0 -dppoolno 0 -size 1750g', ams)


# ------------------------------------------------------------------------------------ the examples' designs

def test_kvm_guests_format_their_own_lun_and_the_hosts_never_see_it():
    meth = _meth(KVM)
    for guest, host, lun in (("db-1", "kvm-1", "1"), ("db-2", "kvm-2", "2")):
        fmt = [st for st in meth.steps() if st.target == guest and st.template.endswith("#guest-format")]
        assert len(fmt) == 1 and f"TB_LUN={lun}" in fmt[0].automation[0].script
        assert "mnt=/data" in fmt[0].automation[0].script and "_netdev" in fmt[0].automation[0].script
        assert not any(st.target == host and f"lun={lun}\n" in c.script for st in meth.steps()
                       for c in st.automation)
        logins = [st for st in meth.steps() if st.target == guest and "--login" in " ".join(
            c.script for c in st.automation)]
        assert len(logins) == 4
        # the guest's SR-IOV functions come from the libvirt pools its host defines
        assert f"virsh attach-interface {guest} network sriov-a --config" in _scripts(KVM, host)
    host_fmt = [st for st in meth.steps() if st.template == "linux/connectivity.yaml#format"]
    assert {st.target for st in host_fmt} == {"kvm-1", "kvm-2"}


def test_esxi_hosts_bind_each_vmkernel_port_to_its_own_nic():
    meth = _meth(ESXI)
    for host in ("esx-1", "esx-2", "esx-3"):
        net = _scripts(ESXI, host)
        assert "esxcli network vswitch standard portgroup policy failover set -p \"$pg\" -a vmnic2" in net
        assert "set -- vmk1 vmk2" in net and "set -- 10.20.0.10" in net    # the group address
    assert not any(st.template.endswith(("#login", "#portal")) for st in meth.steps() if st.target.startswith("esx"))


def test_values_reach_the_platform_scripts_only_as_data(tmp_path):
    hostile = "x$(touch canary_{})`touch canary_b{}`; touch canary_c{}"
    text = _example_text(KVM)
    for k, word in enumerate(("br0", "sriov-a", "/data", "db-1-data", "eth1", "ens2f0")):
        text = text.replace(word, hostile.format(k, k, k))
    esx = _example_text(ESXI)
    for k, word in enumerate(("vSwitch1", "vmk1", "vmfs-01", "10.20.0.10")):
        esx = esx.replace(word, hostile.format(10 + k, 10 + k, 10 + k))
    scripts = []
    for name, bed_text in (("kvm", text), ("esx", esx)):
        meth = M.generate(loads(bed_text, f"{name}.yaml"))
        scripts += [s for _, _, s in _commands(meth, "bash")]
    empty, work = tmp_path / "empty", tmp_path / "work"
    empty.mkdir()
    work.mkdir()
    handler = 'command_not_found_handle() { printf "%s\\0" "$@" >> args.bin; return 0; }\n'
    for script in scripts:
        subprocess.run(["/bin/bash", "-c", handler + script], cwd=work, env={"PATH": str(empty)},
                       capture_output=True, timeout=30)
    assert sorted(p.name for p in work.iterdir() if p.name.startswith("canary")) == []
    for k in (5, 11):   # a host port name (nmcli, iscsiadm) and a VMkernel port name (esxcli) reach commands
        assert any(quoting.bash(hostile.format(k, k, k)) in s for s in scripts), f"value {k} reached no script"
