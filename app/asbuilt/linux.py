"""A Linux host's facts from its probes' output (app/asbuilt/probes.py LINUX): `ip -j addr`,
/sys/class/net/*/speed, `ethtool -a`, `lsblk -J`, `iscsiadm -m session -P 3`, `multipath -ll`,
/etc/os-release, /proc/cmdline, /proc/meminfo, `nproc`, `virsh list`.  Each parser takes the
probe's lines and fills in the facts; output it cannot read is a note, never a guess."""
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
TOLERANT = {"speed", "sriov", "iscsi-sessions", "multipath", "pause", "initiator"}


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
    for line in lines:
        m = re.match(r"/sys/class/net/([^/]+)/speed:(-?\d+)$", line.strip())
        if m and m.group(1) in ifaces and int(m.group(2)) > 0:
            ifaces[m.group(1)].speed_mbps = int(m.group(2))


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
    for line in lines:
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
    values = dict(line.split("=", 1) for line in lines if "=" in line)
    f.os_name = values.get("PRETTY_NAME", values.get("NAME", "")).strip().strip('"')
    f.os_version = values.get("VERSION_ID", "").strip().strip('"')
    f.mark(F.OS)


def _kernel(f: F.HostFacts, lines: list[str]) -> None:
    f.kernel = lines[0].strip() if lines else ""


def _cmdline(f: F.HostFacts, lines: list[str]) -> None:
    words = " ".join(lines).split()
    f.iommu = any(w in ("intel_iommu=on", "amd_iommu=on", "iommu=pt", "iommu=on") for w in words)
    f.mark(F.IOMMU)


def _meminfo(f: F.HostFacts, lines: list[str]) -> None:
    m = re.search(r"MemTotal:\s*(\d+)\s*kB", " ".join(lines))
    if m:
        f.memory_bytes = int(m.group(1)) * 1024
        f.mark(F.MEMORY)


def _cpus(f: F.HostFacts, lines: list[str]) -> None:
    f.cpu_threads = int(lines[0].strip())
    f.mark(F.CPU)


def _cpu_model(f: F.HostFacts, lines: list[str]) -> None:
    if lines and ":" in lines[0]:
        f.cpu_model = lines[0].split(":", 1)[1].strip()


def _vms(f: F.HostFacts, lines: list[str]) -> None:
    f.vms = [line.strip() for line in lines if line.strip()]
    f.mark(F.VMS)


PARSERS = {"ip-addr": _ip_addr, "speed": _speed, "pause": _pause, "lsblk": _lsblk, "iscsi-sessions": _iscsi,
           "initiator": _initiator, "multipath": _multipath, "os-release": _os_release, "kernel": _kernel,
           "cmdline": _cmdline, "meminfo": _meminfo, "cpus": _cpus, "cpu-model": _cpu_model, "vms": _vms}
