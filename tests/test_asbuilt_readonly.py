"""Every command the as-built check sends only reads.  Each platform has an allow-list here, written
independently of app/asbuilt/probes.py: a program with exactly the arguments that make it list,
show or get.  The Linux script is taken from a real check of a sandbox host (what the transport was
given to run), ESXi's from the same builder, and Windows' for every release the table knows; each
command in each is held against its platform's list.  A probe that writes (or a new one nobody
looked at) fails here."""
from __future__ import annotations

import re
import shlex

import pytest

from app.asbuilt import probes
from tests.script_checks import powershell_commands, powershell_problem

LINUX_ALLOWED = [
    r"ip -j addr show", r"ethtool -a", r"lsblk -J -b -o [A-Z,]+", r"iscsiadm -m session -P 3", r"multipath -ll",
    r"grep -H -m1 -e MemTotal -e model name /proc/meminfo /proc/cpuinfo", r"virsh list --name", r"virsh dominfo",
]
# files the shell reads itself (tbs_read: its own `read`, no program): status files, never a device
LINUX_FILES = {"/sys/class/net/*/speed", "/etc/iscsi/initiatorname.iscsi", "/etc/os-release",
               "/proc/sys/kernel/osrelease", "/proc/cmdline", "/sys/devices/system/cpu/present",
               "/sys/class/net/*/device/sriov_numvfs"}
ESXI_ALLOWED = r"esxcli --formatter=json (network nic list|network ip interface list|network ip interface ipv4 get|" \
               r"iscsi adapter list|iscsi session connection list|storage core device list|storage core path list|" \
               r"system version get|hardware memory get|hardware cpu global get|vm process list)"
WINDOWS_ALLOWED = {"get-netadapter", "get-netipaddress", "get-netipinterface", "get-netadapteradvancedproperty",
                   "get-disk", "get-iscsiconnection", "get-ciminstance", "get-wmiobject", "get-vm", "select-object",
                   "convertto-json", "convertto-csv", "write-output", "get-command", "netsh", "iscsicli.exe",
                   "mpclaim.exe"}
WINDOWS_ARGS = {"netsh": "interface ipv4 show subinterfaces", "iscsicli.exe": "SessionList", "mpclaim.exe": "-s -d"}
# the only shell words around the probes: the two helper functions and what they do themselves
SH_OWN = {"printf", "command", "shift", "for", "do", "done", "if", "then", "else", "fi", "}", "tbs_probe()",
          "tbs_per_interface()", "{"}
# the helpers' lines may start only so; the one program a helper starts by itself lists the VMs
HELPER_STARTS = ("printf", "if", "else", "for", "do", "done", "fi", "}", "tbs_", '"$@"', "command", "[ ",
                 "{ while IFS= read -r tbs_l", "virsh list --name 2>/dev/null | while")


def sh_commands(script: str) -> list[str]:
    """The probe commands of an sh script: each `tbs_probe AREA PROGRAM ARGS` line's program and
    arguments; any other line must be the helpers' own."""
    out = []
    helpers, _, body = script.rpartition("\n}\n")     # after the helper functions
    for line in helpers.splitlines():
        if line.strip() and not line.strip().startswith(HELPER_STARTS):
            raise AssertionError(f"unexpected line in the helpers: {line!r}")
    for line in body.splitlines():
        if not line.strip():
            continue
        words = shlex.split(line)
        assert words[0] in ("tbs_probe", "tbs_per_interface", "tbs_per_vm", "tbs_read"), \
            f"a line that is not a probe: {line!r}"
        if words[0] == "tbs_read":
            out += [f"read {path}" for path in words[2:]]
        else:
            out.append(" ".join(words[2:]))
    return out


def _allowed(command: str, patterns) -> bool:
    if command.startswith("read "):
        return patterns is LINUX_ALLOWED and command[5:] in LINUX_FILES
    return any(re.fullmatch(p, command) for p in patterns)


@pytest.fixture(scope="module")
def linux_script_sent(tmp_path_factory):
    """The script a real check hands the SSH transport for a sandbox host."""
    from bench.sandbox_hosts import SandboxLab
    if SandboxLab.unavailable_reason():
        pytest.skip(SandboxLab.unavailable_reason())
    from app.asbuilt.gather import gather
    from app.remote.connect import TransportFactory
    from topology.fileformat import loads
    sent: list[tuple[str, str]] = []
    with SandboxLab(tmp_path_factory.mktemp("ro")) as lab:
        h = lab.add_host("h1")
        bed = loads(f"""format_version: 1
bed: {{name: ro}}
servers: [{{id: h1, platform: linux}}]
access: [{{host: h1, transport: ssh, address: {h.address}, port: {h.port}, user: root,
          key_file: {lab.client_key_path}}}]
""", "ro.yaml")
        factory = TransportFactory(bed, known_hosts=lab.known_hosts_path)

        def recording(host):
            t = factory(host)
            real = t.run

            def run(script, **kw):
                sent.append((kw.get("shell", ""), script))
                return real(script, **kw)
            t.run = run
            return t
        got = gather(bed, recording)
        assert got.facts["h1"].reached and got.facts["h1"].interfaces, got.facts["h1"]
    return sent


def test_every_linux_command_sent_is_on_the_allow_list(linux_script_sent):
    assert len(linux_script_sent) == 1       # one round trip per host
    shell, script = linux_script_sent[0]
    commands = sh_commands(script)
    assert len(commands) >= 10
    for command in commands:
        assert _allowed(command, LINUX_ALLOWED), f"not a read-only command on the Linux list: {command!r}"


def test_every_esxi_command_is_on_the_allow_list():
    shell, script = probes.script_for("esxi")
    for command in sh_commands(script):
        assert _allowed(command, [ESXI_ALLOWED]), f"not a read-only esxcli command: {command!r}"


@pytest.mark.parametrize("version", [(), (2008, 0), (2008, 2), (2012, 0), (2012, 2), (2016,), (2019,), (2022,)])
def test_every_windows_command_is_on_the_allow_list_and_in_its_release(version):
    shell, script = probes.script_for("windows", version)
    assert shell == "powershell" and powershell_problem(script) == ""
    names = [n.lower() for n in powershell_commands(script)]
    assert set(names) <= WINDOWS_ALLOWED | {"tbs-probe"}, set(names) - WINDOWS_ALLOWED
    for program, args in WINDOWS_ARGS.items():
        for line in script.splitlines():
            if f"{{ {program} " in line:
                assert line.split(f"{{ {program} ", 1)[1].rstrip(" }") == args, line
    table = probes.command_ranges()
    for name in names:
        if name == "tbs-probe":
            continue
        low, high = table[name]
        assert not low or (version or probes.OLDEST_WINDOWS) >= low, f"{name} is not on Windows {version}"


def test_the_release_decides_cmdlets_or_wmi():
    old = probes.script_for("windows", (2008, 2))[1]
    new = probes.script_for("windows", (2016,))[1]
    assert "Get-NetAdapter" not in old and "iscsicli.exe SessionList" in old and "ConvertTo-Json" not in old
    assert "Get-NetAdapter" in new and "Get-IscsiConnection" in new and "Win32_NetworkAdapter " not in new


def test_a_writing_command_is_caught():
    """The checker itself: a probe that logs in, or a Windows probe that sets, is refused."""
    bad = probes.sh_script((probes.Probe("x", ("iscsiadm", "-m", "node", "--login")),))
    assert not all(_allowed(c, LINUX_ALLOWED) for c in sh_commands(bad))
    device = probes.sh_script((probes.Probe("x", ("/dev/sda",), files=True),))
    assert not all(_allowed(c, LINUX_ALLOWED) for c in sh_commands(device))
    ps = probes.ps_script([probes.Probe("x", ("Set-NetAdapter -Name a -MtuSize 1500",))])
    assert not set(n.lower() for n in powershell_commands(ps)) <= WINDOWS_ALLOWED | {"tbs-probe"}
