"""An ESXi host's facts from `esxcli --formatter=json` (app/asbuilt/probes.py ESXI): physical NICs
(vmnic: link, speed, MTU, MAC), VMkernel interfaces (vmk: MTU, IPv4), iSCSI session connections,
storage devices (naa ids, sizes) and paths, the version, memory, CPU threads and running VMs.
esxcli's JSON keys are its column names without spaces ('Link Status' -> 'LinkStatus')."""
from __future__ import annotations

import json

from topology.asbuilt import facts as F
from topology.volume_identity import normal_wwn


def read(host: str, outputs: dict[str, tuple[str, list[str]]]) -> F.HostFacts:
    f = F.HostFacts(host, "esxi")
    for area, (status, lines) in outputs.items():
        parser = PARSERS.get(area)
        if parser is None or status != "ok":
            if parser is not None and area in ("esx-nics", "esx-devices"):
                f.notes.append(f"{area}: {status}")
            continue
        try:
            data = json.loads("\n".join(lines) or "null")
            parser(f, data if isinstance(data, (list, dict)) else [])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            f.notes.append(f"{area}: the output could not be read ({exc})")
    return f


def _nics(f: F.HostFacts, data) -> None:
    for o in data:
        link = str(o.get("LinkStatus", o.get("Link", "")))
        f.interfaces.append(F.Interface(str(o.get("Name", "")), mac=str(o.get("MACAddress", "")).lower(),
                                        up=link.lower() == "up", state=link, mtu=_int(o.get("MTU")),
                                        speed_mbps=_int(o.get("Speed")) or None,
                                        description=str(o.get("Description", ""))))
    f.mark(F.INTERFACES)


def _vmknics(f: F.HostFacts, data) -> None:
    for o in data:
        enabled = o.get("Enabled")
        f.interfaces.append(F.Interface(str(o.get("Name", "")), mac=str(o.get("MACAddress", "")).lower(),
                                        up=bool(enabled) if enabled is not None else None,
                                        state="Enabled" if enabled else "Disabled", mtu=_int(o.get("MTU")),
                                        description=str(o.get("Portgroup", ""))))


def _ipv4(f: F.HostFacts, data) -> None:
    names = {i.name: i for i in f.interfaces}
    for o in data:
        i = names.get(str(o.get("Name", "")))
        address, mask = o.get("IPv4Address"), o.get("IPv4Netmask")
        if i is not None and address and mask:
            import ipaddress
            i.addresses.append(f"{address}/{ipaddress.ip_network(f'0.0.0.0/{mask}').prefixlen}")


def _adapters(f: F.HostFacts, data) -> None:
    for o in data:
        name = str(o.get("Description", "") + " " + str(o.get("UID", "")))
        if "iqn." in name and not f.initiator_name:
            f.initiator_name = "iqn." + name.split("iqn.", 1)[1].split()[0]


def _connections(f: F.HostFacts, data) -> None:
    for o in data:
        f.sessions.append(F.Session(str(o.get("Target", "")), str(o.get("RemoteAddress", "")),
                                    initiator_address=str(o.get("LocalAddress", "")), state=str(o.get("State", ""))))
    f.mark(F.SESSIONS)


def _devices(f: F.HostFacts, data) -> None:
    for o in data:
        device = str(o.get("Device", ""))
        size_mb = _int(o.get("Size"))
        f.disks.append(F.Disk(device, wwn=normal_wwn(device), vendor=str(o.get("Vendor", "")).strip(),
                              model=str(o.get("Model", "")).strip(),
                              size_bytes=size_mb * 2**20 if size_mb else None))
    f.mark(F.DISKS)


def _paths(f: F.HostFacts, data) -> None:
    maps: dict[str, F.MultipathMap] = {}
    for o in data:
        wwn = normal_wwn(str(o.get("Device", "")))
        if not wwn:
            continue
        m = maps.setdefault(wwn, F.MultipathMap(wwn, str(o.get("Device", ""))))
        m.paths.append(str(o.get("RuntimeName", "")))
        if str(o.get("State", "")).lower() == "active":
            m.active += 1
    f.multipath = list(maps.values())
    f.mark(F.MULTIPATH)


def _version(f: F.HostFacts, data) -> None:
    d = data if isinstance(data, dict) else {}
    f.os_name = f"{d.get('Product', 'VMware ESXi')} {d.get('Version', '')}".strip()
    f.os_version = str(d.get("Version", ""))
    f.mark(F.OS)


def _memory(f: F.HostFacts, data) -> None:
    if isinstance(data, dict) and _int(data.get("PhysicalMemory")):
        f.memory_bytes = _int(data.get("PhysicalMemory"))
        f.mark(F.MEMORY)


def _cpu(f: F.HostFacts, data) -> None:
    if isinstance(data, dict) and _int(data.get("CPUThreads")):
        f.cpu_threads = _int(data.get("CPUThreads"))
        f.mark(F.CPU)


def _vms(f: F.HostFacts, data) -> None:
    f.vms = [str(o.get("DisplayName", "")) for o in data if o.get("DisplayName")]
    f.mark(F.VMS)


def _int(value) -> int | None:
    try:
        return int(str(value).split()[0]) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


PARSERS = {"esx-nics": _nics, "esx-vmknics": _vmknics, "esx-ipv4": _ipv4, "esx-iscsi-adapters": _adapters,
           "esx-iscsi-connections": _connections, "esx-devices": _devices, "esx-paths": _paths,
           "esx-version": _version, "esx-memory": _memory, "esx-cpu": _cpu, "esx-vms": _vms}
