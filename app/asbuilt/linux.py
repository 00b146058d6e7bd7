"""A Linux host's facts from its probes' output (app/asbuilt/probes.py LINUX): `ip -j addr`,
/sys/class/net/*/speed, `ethtool -a`, `lsblk -J`, `iscsiadm -m session -P 3`, `multipath -ll`,
/etc/os-release, /proc/cmdline, /proc/meminfo and cpuinfo, the CPUs present, SR-IOV VF counts,
`virsh list` and `virsh dominfo`.  Files the shell read itself come as '== FILE' then its lines.
Each parser takes the probe's lines and fills in the facts; output it cannot read is a note, never
a guess."""
from __future__ import annotations

import json
import re

from topology.asbuilt import facts as F
from topology.volume_identity import normal_wwn


def read(host: str, outputs: dict[str, tuple[str, list[str]]]) -> F.HostFacts:
    f = F.HostFacts(host, "linux")
    for area, (status, lines) in outputs.items():
        parser = PARSERS.get(area)
        if parser is None:
            continue
        if status.startswith("missing"):
            if area in NEEDED:
                f.notes.append(f"{status.split(' ', 1)[1]} is not installed: {NEEDED[area]} not read")
            continue
        if status != "ok" and area not in TOLERANT:
            f.notes.append(f"{area}: the command ended with {status}: " + " ".join(lines[-2:])[:200])
            continue
        try:
            parser(f, lines)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            f.notes.append(f"{area}: the output could not be read ({exc})")
    return f


# areas whose program is missing on many hosts on purpose: say so only for those that matter
NEEDED = {"ip-addr": "interfaces", "lsblk": "disks"}
# probes that end non-zero in normal use (grep over interfaces without a speed, no iSCSI sessions)
TOLERANT = {"speed", "sriov", "iscsi-sessions", "multipath", "pause", "initiator", "cpu-mem", "dominfo"}


def _files(lines: list[str]) -> list[tuple[str, list[str]]]:
    """A `tbs_read` probe's output: (file, its lines) in order."""
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("== /"):
            out.append((line[3:].strip(), []))
        elif out:
            out[-1][1].append(line)
    return out


def _content(lines: list[str]) -> list[str]:
    return [line for _path, body in _files(lines) for line in body]


def _ip_addr(f: F.HostFacts, lines: list[str]) -> None:
    for item in json.loads("\n".join(lines) or "[]"):
        name = item.get("ifname", "")
        if not name or name == "lo":
            continue
        flags = item.get("flags") or []
        oper = str(item.get("operstate", "")).upper()
        up = None if oper == "UNKNOWN" and "LOWER_UP" in flags else ("LOWER_UP" in flags and "UP" in flags)
        addresses = [f"{a['local']}/{a['prefixlen']}" for a in item.get("addr_info") or []
                     if a.get("family") == "inet" and "local" in a]
        name = name.split("@")[0]
        f.interfaces.append(F.Interface(name, mac=str(item.get("address", "")).lower(), up=up,
                                        state=oper if oper != "UNKNOWN" else ("UP" if up else "DOWN"),
                                        mtu=item.get("mtu"), addresses=addresses))
    f.mark(F.INTERFACES)


def _by_name(f: F.HostFacts) -> dict[str, F.Interface]:
    return {i.name: i for i in f.interfaces}


def _speed(f: F.HostFacts, lines: list[str]) -> None:
    ifaces = _by_name(f)
    for path, body in _files(lines):
        m = re.fullmatch(r"/sys/class/net/([^/]+)/speed", path)
        value = body[0].strip() if body else ""
        if m and m.group(1) in ifaces and re.fullmatch(r"\d+", value) and int(value) > 0:
            ifaces[m.group(1)].speed_mbps = int(value)


def _sriov(f: F.HostFacts, lines: list[str]) -> None:
    ifaces = _by_name(f)
    for path, body in _files(lines):
        m = re.fullmatch(r"/sys/class/net/([^/]+)/device/sriov_numvfs", path)
        value = body[0].strip() if body else ""
        if m and m.group(1) in ifaces and value.isdigit():
            ifaces[m.group(1)].sriov_vfs = int(value)


def _pause(f: F.HostFacts, lines: list[str]) -> None:
    ifaces, current, seen = _by_name(f), None, {}
    for line in lines:
        if line.startswith("== "):
            current = ifaces.get(line[3:].strip())
            seen = {}
            continue
        m = re.match(r"\s*(RX|TX):\s*(on|off)\s*$", line)
        if m and current is not None:
            seen[m.group(1)] = m.group(2) == "on"
            if len(seen) == 2:
                current.flow_control = seen["RX"] and seen["TX"]


def _lsblk(f: F.HostFacts, lines: list[str]) -> None:
    data = json.loads("\n".join(lines) or "{}")

    def walk(devs: list) -> None:
        for d in devs:
            if d.get("type") in ("disk", "loop", "mpath"):
                size = d.get("size")
                f.disks.append(F.Disk(str(d.get("name") or d.get("kname")), wwn=normal_wwn(d.get("wwn") or ""),
                                      serial=str(d.get("serial") or "").strip(),
                                      vendor=str(d.get("vendor") or "").strip(),
                                      model=str(d.get("model") or "").strip(),
                                      size_bytes=int(size) if isinstance(size, (int, str)) and str(size).isdigit()
                                      else None,
                                      mountpoint=str(d.get("mountpoint") or ""), fstype=str(d.get("fstype") or "")))
            walk(d.get("children") or [])
    walk(data.get("blockdevices") or [])
    f.mark(F.DISKS)


_TARGET = re.compile(r"^Target:\s*(\S+)")
_PORTAL = re.compile(r"^\s*Current Portal:\s*(\S+?)(?::\d+)?,\d+\s*$")
_LUN = re.compile(r"^\s*scsi\d+ Channel \d+ Id \d+ Lun:\s*(\d+)")
_DISK = re.compile(r"^\s*Attached scsi disk (\S+)")


def iscsi_sessions(lines: list[str]) -> list[F.Session]:
    """`iscsiadm -m session -P 3`: one Session per target and portal, with its attached disks."""
    sessions: list[F.Session] = []
    target, s, lun = "", None, None
    for line in lines:
        if m := _TARGET.match(line):
            target, s = m.group(1), None
        elif m := _PORTAL.match(line):
            s = F.Session(target, m.group(1).strip("[]"))
            sessions.append(s)
        elif s is None:
            continue
        elif line.strip().startswith("Iface IPaddress:"):
            value = line.split(":", 1)[1].strip()
            s.initiator_address = "" if value in ("<empty>", "default") else value
        elif line.strip().startswith("Iface Initiatorname:"):
            s.initiator_name = line.split(":", 1)[1].strip()
        elif line.strip().startswith("iSCSI Session State:"):
            s.state = line.split(":", 1)[1].strip()
        elif m := _LUN.match(line):
            lun = int(m.group(1))
        elif (m := _DISK.match(line)) and lun is not None:
            s.disks.append(F.SessionDisk(lun, m.group(1)))
    return sessions


def _iscsi(f: F.HostFacts, lines: list[str]) -> None:
    text = "\n".join(lines)
    if "No active sessions" in text or not text.strip():
        f.mark(F.SESSIONS)
        return
    f.sessions = iscsi_sessions(lines)
    if not f.sessions:
        raise ValueError("no 'Target:' and 'Current Portal:' lines")
    f.initiator_name = f.initiator_name or next((s.initiator_name for s in f.sessions if s.initiator_name), "")
    f.mark(F.SESSIONS)


def _initiator(f: F.HostFacts, lines: list[str]) -> None:
    for line in _content(lines):
        if line.strip().startswith("InitiatorName="):
            f.initiator_name = line.split("=", 1)[1].strip()


_MAP = re.compile(r"^(?:create: |reload: )?(\S+)\s+\((\w+)\)\s")
_MAP_NO_ALIAS = re.compile(r"^([0-9a-f]{17,33})\s+dm-\d+")
_PATH = re.compile(r"[|`\\ _-]*\s*\d+:\d+:\d+:\d+\s+(\S+)\s+\d+:\d+\s+(.*)$")


def multipath_maps(lines: list[str]) -> list[F.MultipathMap]:
    """`multipath -ll`: each map with its WWID, path devices and the paths active and ready."""
    maps: list[F.MultipathMap] = []
    for line in lines:
        if (m := _MAP.match(line)) or (m := _MAP_NO_ALIAS.match(line)):
            name, wwid = (m.group(1), m.group(2)) if m.re is _MAP else (m.group(1), m.group(1))
            maps.append(F.MultipathMap(wwid_hex(wwid), name))
        elif maps and (m := _PATH.match(line)):
            maps[-1].paths.append(m.group(1))
            state = m.group(2)
            if "active" in state and ("ready" in state or "undef" in state):
                maps[-1].active += 1
        elif maps and "policy=" in line:
            maps[-1].policy = re.search(r"policy='([^']*)'", line).group(1) if "policy='" in line else ""
    return maps


def wwid_hex(wwid: str) -> str:
    """A multipath WWID ('3' + the NAA in hex, as scsi_id prints it) as a bare WWN."""
    w = wwid.lower()
    if len(w) in (17, 33) and w[0] in "23":
        w = w[1:]
    return normal_wwn(w) or w


def _multipath(f: F.HostFacts, lines: list[str]) -> None:
    f.multipath = multipath_maps(lines)
    f.mark(F.MULTIPATH)


def _os_release(f: F.HostFacts, lines: list[str]) -> None:
    values = dict(line.split("=", 1) for line in _content(lines) if "=" in line)
    if not values:
        return      # no /etc/os-release: the release is not read (said once, as every area not read)
    f.os_name = values.get("PRETTY_NAME", values.get("NAME", "")).strip().strip('"')
    f.os_version = values.get("VERSION_ID", "").strip().strip('"')
    f.mark(F.OS)


def _kernel(f: F.HostFacts, lines: list[str]) -> None:
    body = _content(lines)
    f.kernel = body[0].strip() if body else ""


def _cmdline(f: F.HostFacts, lines: list[str]) -> None:
    body = _content(lines)
    if not body:
        return
    words = " ".join(body).split()
    f.iommu = any(w in ("intel_iommu=on", "amd_iommu=on", "iommu=pt", "iommu=on") for w in words)
    f.mark(F.IOMMU)


def _cpu_mem(f: F.HostFacts, lines: list[str]) -> None:
    """`grep -H -m1 -e MemTotal -e 'model name' /proc/meminfo /proc/cpuinfo`."""
    for line in lines:
        if m := re.match(r"/proc/meminfo:MemTotal:\s*(\d+)\s*kB", line):
            f.memory_bytes = int(m.group(1)) * 1024
            f.mark(F.MEMORY)
        elif line.startswith("/proc/cpuinfo:") and ":" in line[len("/proc/cpuinfo:"):]:
            f.cpu_model = line[len("/proc/cpuinfo:"):].split(":", 1)[1].strip()


def _cpus(f: F.HostFacts, lines: list[str]) -> None:
    """/sys/devices/system/cpu/present, e.g. '0-63' or '0-3,8-11': the logical processors there."""
    body = _content(lines)
    count = 0
    for part in (body[0].strip().split(",") if body and body[0].strip() else []):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    if count:
        f.cpu_threads = count
        f.mark(F.CPU)


def _vms(f: F.HostFacts, lines: list[str]) -> None:
    f.vms = [line.strip() for line in lines if line.strip()]
    f.mark(F.VMS)


_KIB = {"kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "b": 1}


def dominfo(lines: list[str]) -> list[F.VmInfo]:
    """`virsh dominfo` once per running domain, each under '== NAME': vCPUs, maximum memory, state."""
    out: list[F.VmInfo] = []
    for line in lines:
        if line.startswith("== "):
            out.append(F.VmInfo(line[3:].strip()))
            continue
        key, _, value = (part.strip() for part in line.partition(":"))
        if not out or not value:
            continue
        if key == "CPU(s)" and value.isdigit():
            out[-1].vcpus = int(value)
        elif key == "Max memory" and (m := re.fullmatch(r"(\d+)\s*(KiB|MiB|GiB|B)", value, re.I)):
            out[-1].memory_bytes = int(m.group(1)) * _KIB[m.group(2).lower()]
        elif key == "State":
            out[-1].state = value
    return out


def _dominfo(f: F.HostFacts, lines: list[str]) -> None:
    f.vm_info = dominfo(lines)


PARSERS = {"ip-addr": _ip_addr, "speed": _speed, "pause": _pause, "lsblk": _lsblk, "iscsi-sessions": _iscsi,
           "initiator": _initiator, "multipath": _multipath, "os-release": _os_release, "kernel": _kernel,
           "cmdline": _cmdline, "cpu-mem": _cpu_mem, "cpus": _cpus, "sriov": _sriov, "vms": _vms,
           "dominfo": _dominfo}
