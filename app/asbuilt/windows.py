"""A Windows host's facts from its probes (app/asbuilt/probes.py WINDOWS): the 2012-and-later
cmdlets' JSON (ConvertTo-Json: one object alone, several as a list), or on 2008 and 2008 R2 the
WMI classes as CSV (ConvertTo-Csv: PowerShell 2.0 has no JSON), `netsh interface ipv4 show
subinterfaces`, `iscsicli SessionList` and `mpclaim -s -d`."""
from __future__ import annotations

import csv
import ipaddress
import json
import re

from topology.asbuilt import facts as F
from topology.volume_identity import normal_wwn


def read(host: str, outputs: dict[str, tuple[str, list[str]]]) -> F.HostFacts:
    f = F.HostFacts(host, "windows")
    by_index: dict[str, F.Interface] = {}
    for area, (status, lines) in outputs.items():
        parser = PARSERS.get(area)
        if parser is None:
            continue
        if status != "ok":
            if area in ("win-adapters", "win-adapters-wmi", "win-disks", "win-disks-wmi"):
                f.notes.append(f"{area}: {status}")
            continue
        try:
            parser(f, lines, by_index)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            f.notes.append(f"{area}: the output could not be read ({exc})")
    return f


def objects(lines: list[str]) -> list[dict]:
    """ConvertTo-Json's output as a list of objects."""
    text = "\n".join(lines).strip()
    if not text:
        return []
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def rows(lines: list[str]) -> list[dict]:
    """ConvertTo-Csv -NoTypeInformation's output as a list of rows."""
    return list(csv.DictReader([line for line in lines if line.strip()]))


def _speed_mbps(text: str) -> int | None:
    m = re.match(r"\s*([\d.]+)\s*([GMK])bps", str(text))
    if m:
        return int(float(m.group(1)) * {"G": 1000, "M": 1, "K": 0.001}[m.group(2)])
    return int(text) // 1_000_000 if str(text).isdigit() and int(text) > 0 else None


def _adapters(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for o in objects(lines):
        status = str(o.get("Status", ""))
        i = F.Interface(str(o.get("Name", "")), mac=str(o.get("MacAddress", "")).lower().replace("-", ":"),
                        up=status == "Up", state=status, mtu=_int(o.get("MtuSize")),
                        speed_mbps=_speed_mbps(o.get("LinkSpeed", "")),
                        description=str(o.get("InterfaceDescription", "")))
        f.interfaces.append(i)
        by_index[str(o.get("ifIndex", ""))] = i
    f.mark(F.INTERFACES)


# Win32_NetworkAdapter.NetConnectionStatus: 2 connected, 7 media disconnected (Microsoft's class reference)
_WMI_STATUS = {"2": "Connected", "7": "Media disconnected", "0": "Disconnected", "1": "Connecting"}


def _adapters_wmi(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for r in rows(lines):
        status = _WMI_STATUS.get(r.get("NetConnectionStatus", ""), r.get("NetConnectionStatus", ""))
        i = F.Interface(r.get("NetConnectionID", "") or r.get("Name", ""),
                        mac=r.get("MACAddress", "").lower().replace("-", ":"), up=status == "Connected",
                        state=status, speed_mbps=_speed_mbps(r.get("Speed", "")), description=r.get("Name", ""))
        f.interfaces.append(i)
        by_index[r.get("Index", "")] = i
    f.mark(F.INTERFACES)


def _addresses(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    names = {i.name: i for i in f.interfaces}
    for o in objects(lines):
        i = names.get(str(o.get("InterfaceAlias", "")))
        if i is not None:
            i.addresses.append(f"{o.get('IPAddress')}/{o.get('PrefixLength')}")


def _addresses_wmi(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for r in rows(lines):
        i = by_index.get(r.get("Index", ""))
        if i is None:
            continue
        for ip, mask in zip(r.get("IPAddress", "").split(), r.get("IPSubnet", "").split(), strict=False):
            if ":" not in ip:
                i.addresses.append(f"{ip}/{ipaddress.ip_network(f'0.0.0.0/{mask}').prefixlen}")


def _mtu(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    names = {i.name: i for i in f.interfaces}
    for o in objects(lines):
        i = names.get(str(o.get("InterfaceAlias", "")))
        if i is not None and _int(o.get("NlMtu")):
            i.mtu = _int(o.get("NlMtu"))


def _mtu_netsh(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    names = {i.name: i for i in f.interfaces}
    for line in lines:
        m = re.match(r"\s*(\d+)\s+\d+\s+\d+\s+\d+\s+(.+?)\s*$", line)
        if m and m.group(2) in names:
            names[m.group(2)].mtu = int(m.group(1))


def _flow(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    names = {i.name: i for i in f.interfaces}
    for o in objects(lines):
        i = names.get(str(o.get("Name", "")))
        value = o.get("RegistryValue")
        value = value[0] if isinstance(value, list) and value else value
        if i is not None and str(value).isdigit():
            i.flow_control = int(value) == 3      # *FlowControl: 0 off, 1 Tx, 2 Rx, 3 Rx & Tx


def _disks(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for o in objects(lines):
        # Get-Disk's Number; `select *` prints it as DiskNumber first (real captures cut off before Number)
        number = o.get("Number", o.get("DiskNumber"))
        f.disks.append(F.Disk(f"Disk {number}", wwn=normal_wwn(str(o.get("UniqueId") or "")),
                              serial=str(o.get("SerialNumber") or "").strip(),
                              vendor=str(o.get("Manufacturer") or "").strip(),
                              model=str(o.get("Model") or o.get("FriendlyName") or "").strip(),
                              size_bytes=_int(o.get("Size"))))
    f.mark(F.DISKS)


def _disks_wmi(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for r in rows(lines):
        f.disks.append(F.Disk(f"Disk {r.get('Index')}", serial=r.get("SerialNumber", "").strip(),
                              model=r.get("Model", "").strip(), size_bytes=_int(r.get("Size"))))
    f.mark(F.DISKS)


def _iscsi(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for o in objects(lines):
        f.sessions.append(F.Session("", str(o.get("TargetAddress", "")),
                                    initiator_address=str(o.get("InitiatorAddress", ""))))
    f.mark(F.SESSIONS)


def _iscsicli(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    """`iscsicli SessionList`: 'Target Name', then per connection 'Initiator Portal' and 'Target Portal'."""
    target, initiator = "", ""
    for line in lines:
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "Target Name":
            target = value
        elif key == "Initiator Portal":
            initiator = value.rsplit("/", 1)[0]
        elif key == "Target Portal":
            f.sessions.append(F.Session(target, value.rsplit("/", 1)[0], initiator_address=initiator))
    f.mark(F.SESSIONS)


def _mpclaim(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    for line in lines:
        m = re.match(r"\s*MPIO Disk(\d+)\s+Disk (\d+)\s+(\S+)\s+(.+?)\s*$", line)
        if m:
            f.multipath.append(F.MultipathMap("", f"Disk {m.group(2)}", policy=m.group(3)))
    f.mark(F.MULTIPATH)


def _os(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    items = objects(lines) if lines and lines[0].lstrip().startswith(("{", "[")) else rows(lines)
    if items:
        f.os_name, f.os_version = str(items[0].get("Caption", "")).strip(), str(items[0].get("Version", ""))
        kb = _int(items[0].get("TotalVisibleMemorySize"))
        if kb:
            f.memory_bytes = kb * 1024
            f.mark(F.MEMORY)
        f.mark(F.OS)


def _cpu(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    items = objects(lines) if lines and lines[0].lstrip().startswith(("{", "[")) else rows(lines)
    counts = [_int(o.get("NumberOfLogicalProcessors")) for o in items]
    if items and all(counts):
        f.cpu_threads = sum(c for c in counts if c)
        f.cpu_model = str(items[0].get("Name", "")).strip()
        f.mark(F.CPU)


def _vms(f: F.HostFacts, lines: list[str], by_index: dict) -> None:
    f.vms = [str(o.get("Name")) for o in objects(lines) if str(o.get("State", "")) in ("Running", "2")]
    f.mark(F.VMS)


def _int(value) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


PARSERS = {"win-adapters": _adapters, "win-adapters-wmi": _adapters_wmi, "win-addresses": _addresses,
           "win-addresses-wmi": _addresses_wmi, "win-mtu": _mtu, "win-mtu-netsh": _mtu_netsh, "win-flow": _flow,
           "win-disks": _disks, "win-disks-wmi": _disks_wmi, "win-iscsi": _iscsi, "win-iscsicli": _iscsicli,
           "win-mpclaim": _mpclaim, "win-os": _os, "win-os-wmi": _os, "win-cpu": _cpu, "win-cpu-wmi": _cpu,
           "win-vms": _vms}
