"""The read-only commands the as-built check sends, per platform: one script per host, each probe
printed under a marker line so one round trip reads everything.

Every probe is data: the area it fills, the program and its arguments.  No value from the bed ever
reaches a probe (nothing is quoted in, nothing can be injected), and every probe only reads:
tests/test_asbuilt_readonly.py holds each command the check sends against an allow-list per
platform.  Linux and ESXi probes run under `sh` through `tbs_probe AREA PROGRAM ARGS...`, which
says when the program is not installed instead of failing; Windows probes are PowerShell
pipelines chosen by the host's release from the command table
(resources/platforms/windows-commands.yaml): Get-NetAdapter, Get-Disk and the iSCSI cmdlets from
2012, WMI, netsh, iscsicli and mpclaim on 2008 and 2008 R2."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MARK = "@@tbs"            # '@@tbs AREA' starts a probe's output
RC = "@@rc"               # '@@rc N' ends it with the program's exit status
MISSING = "@@missing"     # '@@missing PROGRAM': not installed, nothing ran


@dataclass(frozen=True)
class Probe:
    area: str                 # what its output fills in (a parser's key)
    argv: tuple[str, ...]     # program and arguments (sh probes); a pipeline (PowerShell probes); files to read
    per_interface: bool = False   # run once per physical network interface (one with a device), its name last
    per_vm: bool = False          # run once per running libvirt domain, its name last
    files: bool = False           # argv are files (globs allowed) the shell reads itself: no program runs


# -------------------------------------------------------------------- Linux

LSBLK_COLUMNS = "NAME,KNAME,TYPE,SIZE,WWN,SERIAL,VENDOR,MODEL,MOUNTPOINT,FSTYPE"
# Small files are read by the shell itself (`tbs_read`): a program started per probe was most of a
# host's CPU for the check (16 programs; bench/asbuilt.py), and a lab's hosts answer at once.
LINUX = (
    Probe("ip-addr", ("ip", "-j", "addr", "show")),
    Probe("speed", ("/sys/class/net/*/speed",), files=True),
    Probe("pause", ("ethtool", "-a"), per_interface=True),
    Probe("lsblk", ("lsblk", "-J", "-b", "-o", LSBLK_COLUMNS)),
    Probe("iscsi-sessions", ("iscsiadm", "-m", "session", "-P", "3")),
    Probe("initiator", ("/etc/iscsi/initiatorname.iscsi",), files=True),
    Probe("multipath", ("multipath", "-ll")),
    Probe("os-release", ("/etc/os-release",), files=True),
    Probe("kernel", ("/proc/sys/kernel/osrelease",), files=True),
    Probe("cmdline", ("/proc/cmdline",), files=True),
    Probe("cpu-mem", ("grep", "-H", "-m1", "-e", "MemTotal", "-e", "model name", "/proc/meminfo", "/proc/cpuinfo")),
    Probe("cpus", ("/sys/devices/system/cpu/present",), files=True),
    Probe("sriov", ("/sys/class/net/*/device/sriov_numvfs",), files=True),
    Probe("vms", ("virsh", "list", "--name")),
    Probe("dominfo", ("virsh", "dominfo"), per_vm=True),
)

# shell functions the probes run through; they run nothing but the probe they are given (tbs_read runs
# nothing at all: the shell's own `read` prints each file under a '== FILE' line)
SH_PRELUDE = r"""tbs_probe() {
    printf '@@tbs %s\n' "$1"; shift
    if command -v "$1" >/dev/null 2>&1; then "$@" 2>&1; printf '@@rc %s\n' "$?"
    else printf '@@missing %s\n' "$1"; fi
}
tbs_per_interface() {
    printf '@@tbs %s\n' "$1"; shift
    if command -v "$1" >/dev/null 2>&1; then
        for tbs_if in /sys/class/net/*/device; do
            [ -e "$tbs_if" ] || continue
            tbs_if=${tbs_if%/device}; printf '== %s\n' "${tbs_if##*/}"; "$@" "${tbs_if##*/}" 2>&1
        done
        printf '@@rc 0\n'
    else printf '@@missing %s\n' "$1"; fi
}
tbs_per_vm() {
    printf '@@tbs %s\n' "$1"; shift
    if command -v "$1" >/dev/null 2>&1; then
        virsh list --name 2>/dev/null | while IFS= read -r tbs_vm; do
            [ -n "$tbs_vm" ] || continue
            printf '== %s\n' "$tbs_vm"; "$@" "$tbs_vm" 2>&1
        done
        printf '@@rc 0\n'
    else printf '@@missing %s\n' "$1"; fi
}
tbs_read() {
    printf '@@tbs %s\n' "$1"; shift
    for tbs_f in "$@"; do
        [ -r "$tbs_f" ] || continue
        printf '== %s\n' "$tbs_f"
        { while IFS= read -r tbs_l || [ -n "$tbs_l" ]; do printf '%s\n' "$tbs_l"; done < "$tbs_f"; } 2>/dev/null
    done
    printf '@@rc 0\n'
}
"""


def _sh_word(word: str) -> str:
    # a glob stays a glob (the shell expands it); anything else is one single-quoted word
    if "*" in word and "'" not in word and " " not in word:
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def sh_script(probes: tuple[Probe, ...]) -> str:
    lines = [SH_PRELUDE.rstrip()]
    for p in probes:
        fn = "tbs_read" if p.files else "tbs_per_interface" if p.per_interface else "tbs_per_vm" if p.per_vm \
            else "tbs_probe"
        lines.append(f"{fn} {p.area} " + " ".join(_sh_word(w) for w in p.argv))
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------- ESXi

def _esxcli(area: str, *namespace: str) -> Probe:
    return Probe(area, ("esxcli", "--formatter=json", *namespace))


ESXI = (
    _esxcli("esx-nics", "network", "nic", "list"),
    _esxcli("esx-vmknics", "network", "ip", "interface", "list"),
    _esxcli("esx-ipv4", "network", "ip", "interface", "ipv4", "get"),
    _esxcli("esx-iscsi-adapters", "iscsi", "adapter", "list"),
    _esxcli("esx-iscsi-connections", "iscsi", "session", "connection", "list"),
    _esxcli("esx-devices", "storage", "core", "device", "list"),
    _esxcli("esx-paths", "storage", "core", "path", "list"),
    _esxcli("esx-version", "system", "version", "get"),
    _esxcli("esx-memory", "hardware", "memory", "get"),
    _esxcli("esx-cpu", "hardware", "cpu", "global", "get"),
    _esxcli("esx-vms", "vm", "process", "list"),
)


# -------------------------------------------------------------------- Windows

def _ps(area: str, pipeline: str) -> Probe:
    return Probe(area, (pipeline,))


# per area, the probes in order of preference: the first whose every command the release has is used
# Select-Object takes its properties as quoted strings (tree-sitter-powershell, which the tests parse
# every script with, reads a bare A,B list as an error)
# Select-Object takes its properties quoted: tree-sitter-powershell, which the tests parse every script
# with, reads a bare A,B list as an error
WINDOWS: dict[str, tuple[Probe, ...]] = {
    "adapters": (
        _ps('win-adapters',
            'Get-NetAdapter | '
            "Select-Object 'Name','InterfaceDescription','MacAddress','Status','LinkSpeed','MtuSize','ifIndex' | "
            'ConvertTo-Json'),
        _ps('win-adapters-wmi',
            "Get-WmiObject Win32_NetworkAdapter -Filter 'PhysicalAdapter=True' | "
            "Select-Object 'NetConnectionID','Name','MACAddress','NetConnectionStatus','Speed','Index' | "
            'ConvertTo-Csv -NoTypeInformation'),
    ),
    "addresses": (
        _ps('win-addresses',
            'Get-NetIPAddress -AddressFamily IPv4 | '
            "Select-Object 'InterfaceAlias','IPAddress','PrefixLength' | "
            'ConvertTo-Json'),
        _ps('win-addresses-wmi',
            "Get-WmiObject Win32_NetworkAdapterConfiguration -Filter 'IPEnabled=True' | "
            "Select-Object 'Index',@{n='IPAddress';e={$_.IPAddress -join ' '}},"
            "@{n='IPSubnet';e={$_.IPSubnet -join ' '}} | "
            'ConvertTo-Csv -NoTypeInformation'),
    ),
    "mtu": (
        _ps('win-mtu',
            'Get-NetIPInterface -AddressFamily IPv4 | '
            "Select-Object 'InterfaceAlias','NlMtu' | "
            'ConvertTo-Json'),
        _ps('win-mtu-netsh',
            'netsh interface ipv4 show subinterfaces'),
    ),
    "flow": (
        _ps('win-flow',
            "Get-NetAdapterAdvancedProperty -RegistryKeyword '*FlowControl' | "
            "Select-Object 'Name','RegistryValue' | "
            'ConvertTo-Json'),
    ),
    "disks": (
        _ps('win-disks',
            'Get-Disk | '
            "Select-Object 'Number','FriendlyName','SerialNumber','UniqueId','Size','BusType','Manufacturer','Model' | "
            'ConvertTo-Json'),
        _ps('win-disks-wmi',
            'Get-WmiObject Win32_DiskDrive | '
            "Select-Object 'Index','Model','SerialNumber','Size','SCSILogicalUnit' | "
            'ConvertTo-Csv -NoTypeInformation'),
    ),
    "sessions": (
        _ps('win-iscsi',
            'Get-IscsiConnection | '
            "Select-Object 'InitiatorAddress','TargetAddress','ConnectionIdentifier' | "
            'ConvertTo-Json'),
        _ps('win-iscsicli',
            'iscsicli.exe SessionList'),
    ),
    "multipath": (
        _ps('win-mpclaim',
            'mpclaim.exe -s -d'),
    ),
    "os": (
        _ps('win-os',
            'Get-CimInstance Win32_OperatingSystem | '
            "Select-Object 'Caption','Version','TotalVisibleMemorySize' | "
            'ConvertTo-Json'),
        _ps('win-os-wmi',
            'Get-WmiObject Win32_OperatingSystem | '
            "Select-Object 'Caption','Version','TotalVisibleMemorySize' | "
            'ConvertTo-Csv -NoTypeInformation'),
    ),
    "cpu": (
        _ps('win-cpu',
            'Get-CimInstance Win32_Processor | '
            "Select-Object 'Name','NumberOfLogicalProcessors' | "
            'ConvertTo-Json'),
        _ps('win-cpu-wmi',
            'Get-WmiObject Win32_Processor | '
            "Select-Object 'Name','NumberOfLogicalProcessors' | "
            'ConvertTo-Csv -NoTypeInformation'),
    ),
    "vms": (
        _ps('win-vms',
            'Get-VM | '
            "Select-Object 'Name','State' | "
            'ConvertTo-Json'),
    ),
}

# PowerShell probes run through one function that prints the marker, runs the pipeline, and says
# when a command is not there (a module the host lacks) instead of stopping the script
PS_PRELUDE = """function Tbs-Probe([string]$Area, [string]$Program, [scriptblock]$Body) {
    Write-Output "@@tbs $Area"
    if (-not (Get-Command $Program -ErrorAction SilentlyContinue)) { Write-Output "@@missing $Program"; return }
    try { & $Body; Write-Output "@@rc 0" } catch { Write-Output "@@error $($_.Exception.Message)" }
}
"""


@lru_cache(maxsize=1)
def command_ranges() -> dict[str, tuple[tuple, tuple | None]]:
    """name (lower case) -> (first release, last release or None), from the command table."""
    import yaml

    from resources import ROOT
    from topology.os_release import parse_version
    data = yaml.safe_load((ROOT / "platforms" / "windows-commands.yaml").read_text(encoding="utf-8"))
    out = {}
    for name, spec in data["commands"].items():
        low = () if str(spec["min"]) == "any" else parse_version(str(spec["min"]))[0]
        high = parse_version(str(spec["max"]))[0] if spec.get("max") else None
        out[name.lower()] = (low, high)
    return out


OLDEST_WINDOWS = (2008, 0)


def program_of(pipeline: str) -> str:
    return pipeline.split()[0]


def fits(pipeline: str, version: tuple) -> bool:
    """Whether every cmdlet and program the pipeline calls is in the table and in range for the release."""
    import re
    table = command_ranges()
    names = re.findall(r"(?:^|\|)\s*([A-Za-z][\w.-]*)", pipeline)
    for name in names:
        entry = table.get(name.lower())
        if entry is None:
            return False
        low, high = entry
        if low and version < low or high is not None and version > high:
            return False
    return True


def windows_probes(version: tuple) -> list[Probe]:
    """The probes for a Windows release (a release the bed does not state gets what every one has)."""
    version = version or OLDEST_WINDOWS
    out = []
    for candidates in WINDOWS.values():
        chosen = next((p for p in candidates if fits(p.argv[0], version)), None)
        if chosen is not None:
            out.append(chosen)
    return out


def ps_script(probes: list[Probe]) -> str:
    lines = [PS_PRELUDE.rstrip()]
    for p in probes:
        pipeline = p.argv[0]
        lines.append(f"Tbs-Probe '{p.area}' '{program_of(pipeline)}' {{ {pipeline} }}")
    return "\n".join(lines) + "\n"


def script_for(platform: str, version: tuple = ()) -> tuple[str, str]:
    """(shell, script) that reads a host of this platform."""
    if platform == "windows":
        return "powershell", ps_script(windows_probes(version))
    if platform == "esxi":
        return "sh", sh_script(ESXI)
    return "sh", sh_script(LINUX)


def split_output(lines: list[str]) -> dict[str, tuple[str, list[str]]]:
    """Marker-separated output -> area: (status, lines); status 'ok', 'failed N', 'missing PROGRAM' or
    'error TEXT'."""
    out: dict[str, tuple[str, list[str]]] = {}
    area, body, status = "", [], ""
    for line in lines:
        if line.startswith(MARK + " "):
            if area:
                out[area] = (status or "ok", body)
            area, body, status = line[len(MARK) + 1:].strip(), [], ""
        elif line.startswith(RC + " ") and area:
            code = line[len(RC) + 1:].strip()
            status = "ok" if code == "0" else f"failed {code}"
        elif line.startswith(MISSING + " ") and area:
            status = "missing " + line[len(MISSING) + 1:].strip()
        elif line.startswith("@@error ") and area:
            status = "error " + line[8:].strip()
        elif area:
            body.append(line)
    if area:
        out[area] = (status or "ok", body)
    return out
