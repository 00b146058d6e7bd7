"""Holding the hosts' facts against the drawing: facts in, findings out.

`check(bed, facts)` compares what each host said about itself (topology/asbuilt/facts.py) with
what the bed draws for it and returns an `AsBuilt`: findings in the validator's vocabulary
(ASB-* codes, topology/asbuilt/codes.py), each naming the host, the fact seen, the value expected
and where in the bed it comes from; the values the hosts showed that the bed does not state
(WWNs, serials, MACs, link speeds, initiator names), which `learn.py` writes back as one edit; and
one row per fact compared, for the appendix's as-built table.

Only what both sides state is compared: a value the bed leaves empty or `not stated` is never
judged, and a fact the host did not give (its reader could not run) is said once (ASB-017),
never taken for "none there".  Network and system facts are here; storage (LUNs, sessions,
multipath) in `storage.py`.  Qt-free and transport-free: testable without hosts, fast on big beds.
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache

from topology.asbuilt import codes as C
from topology.asbuilt.facts import CPU, INTERFACES, IOMMU, MEMORY, OS, VMS, HostFacts, Interface
from topology.asbuilt.result import AsBuilt, Learnt, Row
from topology.model import Bed, Port, Server
from topology.unknown import stated


def check(bed: Bed, facts: dict[str, HostFacts], hosts: Iterable[str] | None = None) -> AsBuilt:
    """`bed`: the view the run uses (a configuration's, a scenario's); `facts`: per host id;
    `hosts`: only these (default: every host with facts)."""
    from topology.gc_pause import collector_paused
    with collector_paused():     # tens of thousands of rows and findings, none in a cycle
        return _check(bed, facts, set(hosts) if hosts is not None else None)


def _check(bed: Bed, facts: dict[str, HostFacts], wanted: set[str] | None) -> AsBuilt:
    out = AsBuilt()
    servers = {s.id: s for s in bed.servers}
    cabled = {end for lk in bed.links for end in (lk.a, lk.b)}
    for host, f in facts.items():
        if wanted is not None and host not in wanted:
            continue
        out.hosts.append(host)
        if not f.reached:
            out.add(C.NOT_READ, [host], f"{host}: not checked: {f.error or 'the host could not be reached'}")
            out.rows.append(Row(host, "reachable", "yes", f.error or "no", C.NOT_READ.code))
            continue
        for note in f.notes:
            out.add(C.NOT_READ, [host], f"{host}: {note}")
        server = servers.get(host)
        if server is None:
            continue
        if f.has(INTERFACES):
            _ports(out, cabled, server, f)
        _system(out, server, f)
    if any(f.has(VMS) for f in facts.values()):
        _placement(out, bed, facts, wanted)
    from topology.asbuilt.storage import check_storage
    check_storage(out, bed, {h: f for h, f in facts.items() if h in out.hosts and f.reached})
    return out


# ------------------------------------------------------------------ ports

_V4 = re.compile(r"\s*(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:/(\d{1,2}))?\s*")


@lru_cache(maxsize=65536)
def _ip(text: str) -> tuple[str, int | None]:
    """'a.b.c.d/24' -> ('a.b.c.d', 24); a bare address -> (address, None); '' when not an address."""
    m = _V4.fullmatch(text)
    if m and all(int(x) < 256 for x in m.groups()[:4]) and (m.group(5) is None or int(m.group(5)) <= 32):
        return ".".join(str(int(x)) for x in m.groups()[:4]), int(m.group(5)) if m.group(5) else None
    try:
        if "/" in text:
            iface = ipaddress.ip_interface(text.strip())
            return str(iface.ip), iface.network.prefixlen
        return str(ipaddress.ip_address(text.strip())), None
    except ValueError:
        return "", None


def server_ports(server: Server) -> Iterable[tuple[str, Port]]:
    for ad in server.adapters:
        for p in ad.ports:
            yield f"{server.id}:{p.name}", p


def _checked(p: Port, cabled: bool) -> bool:
    """A port the bed says something about that a host can show."""
    if p.kind not in ("ethernet", "management"):
        return False
    return cabled or any(stated(v) not in (None, "") for v in (p.address, p.mtu, p.speed_gbps, p.flow_control))


def match_interface(p: Port, by_name: dict[str, Interface], by_mac: dict[str, Interface],
                    by_ip: dict[str, Interface] | None) -> tuple[Interface | None, str]:
    """The host's interface for a bed port, and how it was told: by MAC, label, name, then address
    (`by_ip` None: worked out here, only when the names do not tell)."""
    mac = stated(p.mac)
    if isinstance(mac, str) and mac and mac.lower().replace("-", ":") in by_mac:
        return by_mac[mac.lower().replace("-", ":")], "MAC"
    for key, how in ((p.label, "label"), (p.name, "name")):
        if isinstance(key, str) and key and key.lower() in by_name:
            return by_name[key.lower()], how
    address = stated(p.address)
    ip = _ip(address)[0] if isinstance(address, str) and address else ""
    if ip:
        if by_ip is None:
            by_ip = {_ip(a)[0]: i for i in by_name.values() for a in i.addresses}
        if ip in by_ip:
            return by_ip[ip], "address"
    return None, ""


def _ports(out: AsBuilt, cabled: set[str], server: Server, f: HostFacts) -> None:
    host = server.id
    by_name = {i.name.lower(): i for i in f.interfaces}
    by_name.update({i.description.lower(): i for i in f.interfaces if i.description and i.description.lower()
                    not in by_name})
    by_mac = {i.mac.lower(): i for i in f.interfaces if i.mac}
    for ref, p in server_ports(server):
        if not _checked(p, ref in cabled):
            continue
        iface, how = match_interface(p, by_name, by_mac, None)
        name = p.label or p.name
        if iface is None:
            addr = stated(p.address)
            out.add(C.PORT_MISSING, [ref], f"{host}: port {p.name} is not on the host: no interface named "
                                           f"{name!r}" + (f" and none holds {addr}" if addr else "")
                                           + f" (bed: {ref})")
            out.rows.append(Row(host, f"{p.name} present", name, "not found", C.PORT_MISSING.code))
            continue
        _port_values(out, host, ref, p, iface, how)


def _port_values(out: AsBuilt, host: str, ref: str, p: Port, iface: Interface, how: str) -> None:
    seen_as = iface.name if how in ("label", "name") and iface.name.lower() == (p.label or p.name).lower() \
        else f"{iface.name} (found by {how})"
    address = stated(p.address)
    if isinstance(address, str) and address:
        ip, prefix = _ip(address)
        held = {_ip(a) for a in iface.addresses}
        same_ip = [pf for a, pf in held if a == ip]
        seen = ", ".join(iface.addresses) or "no address"
        if not same_ip:
            out.add(C.ADDRESS, [ref], f"{host}: {seen_as} holds {seen}, the bed says {address} (bed: {ref} address)")
            out.rows.append(Row(host, f"{p.name} address", address, seen, C.ADDRESS.code))
        elif prefix is not None and prefix not in same_ip:
            out.add(C.ADDRESS, [ref], f"{host}: {seen_as} holds {ip}/{same_ip[0]}, the bed says prefix /{prefix} "
                                      f"(bed: {ref} address {address})")
            out.rows.append(Row(host, f"{p.name} address", address, seen, C.ADDRESS.code))
        else:
            out.rows.append(Row(host, f"{p.name} address", address, seen))
    mtu = stated(p.mtu)
    if isinstance(mtu, int) and iface.mtu is not None:
        code = "" if iface.mtu == mtu else C.MTU.code
        if code:
            out.add(C.MTU, [ref], f"{host}: {seen_as} has MTU {iface.mtu}, the bed says {mtu} (bed: {ref} mtu)")
        out.rows.append(Row(host, f"{p.name} MTU", str(mtu), str(iface.mtu), code))
    speed = stated(p.speed_gbps)
    if isinstance(speed, (int, float)) and iface.speed_mbps:
        code = "" if abs(iface.speed_mbps - speed * 1000) < 1 else C.SPEED.code
        if code:
            out.add(C.SPEED, [ref], f"{host}: {seen_as} runs at {_gbps(iface.speed_mbps)}, the bed says "
                                    f"{_gbps(speed * 1000)} (bed: {ref} speed_gbps)")
        out.rows.append(Row(host, f"{p.name} speed", _gbps(speed * 1000), _gbps(iface.speed_mbps), code))
    elif speed is None and iface.speed_mbps:
        out.learnt.append(Learnt(ref, "speed_gbps", iface.speed_mbps / 1000, f"{host}: {iface.name}"))
    fc = stated(p.flow_control)
    if isinstance(fc, bool) and iface.flow_control is not None:
        code = "" if iface.flow_control == fc else C.FLOW_CONTROL.code
        if code:
            out.add(C.FLOW_CONTROL, [ref], f"{host}: {seen_as} has flow control {_onoff(iface.flow_control)}, "
                                           f"the bed says {_onoff(fc)} (bed: {ref} flow_control)")
        out.rows.append(Row(host, f"{p.name} flow control", _onoff(fc), _onoff(iface.flow_control), code))
    if iface.up is False:
        out.add(C.LINK_DOWN, [ref], f"{host}: {seen_as} has no link (state {iface.state or 'down'}); the bed uses "
                                    f"it (bed: {ref})")
        out.rows.append(Row(host, f"{p.name} link", "up", iface.state or "down", C.LINK_DOWN.code))
    elif iface.up:
        out.rows.append(Row(host, f"{p.name} link", "up", iface.state or "up"))
    if iface.mac and not stated(p.mac):
        out.learnt.append(Learnt(ref, "mac", iface.mac, f"{host}: {iface.name}"))
    _sriov(out, host, ref, p, iface, seen_as)


def _sriov(out: AsBuilt, host: str, ref: str, p: Port, iface: Interface, seen_as: str) -> None:
    """`offloads: {sriov_vfs: N}` is compared exactly, `sriov: true` wants at least one function."""
    offloads = p.offloads
    if iface.sriov_vfs is None or not offloads or not isinstance(offloads, dict):
        return
    count, wanted = stated(offloads.get("sriov_vfs")), stated(offloads.get("sriov"))
    if not (isinstance(count, int) and not isinstance(count, bool) or wanted is True):
        return
    if isinstance(count, int) and not isinstance(count, bool):
        ok, expected = iface.sriov_vfs == count, str(count)
    else:
        ok, expected = iface.sriov_vfs > 0, "at least 1"
    code = "" if ok else C.SRIOV.code
    if code:
        out.add(C.SRIOV, [ref], f"{host}: {seen_as} has {iface.sriov_vfs} SR-IOV virtual function(s) enabled, the "
                                f"bed wants {expected} (bed: {ref} offloads)")
    out.rows.append(Row(host, f"{p.name} SR-IOV functions", expected, str(iface.sriov_vfs), code))


def _gbps(mbps: float) -> str:
    return f"{mbps / 1000:g} Gb/s"


def _onoff(value: bool) -> str:
    return "on" if value else "off"


# ------------------------------------------------------------------ the system

def _system(out: AsBuilt, server: Server, f: HostFacts) -> None:
    host = server.id
    if f.has(OS) and f.os_name:
        _os(out, server, f)
    memory = stated(server.memory_gb)
    if f.has(MEMORY) and isinstance(memory, (int, float)) and memory > 0 and f.memory_bytes:
        seen_gb = f.memory_bytes / 2**30
        # the OS counts a few per cent less than is installed (firmware, kernel reserve); GB or GiB
        ok = memory * 0.85 <= seen_gb <= memory * 1.02 or memory * 0.85 <= f.memory_bytes / 1e9 <= memory * 1.02
        code = "" if ok else C.MEMORY.code
        if code:
            out.add(C.MEMORY, [host], f"{host}: the OS sees {seen_gb:.1f} GiB of memory, the bed says {memory:g} GB "
                                      f"(bed: {host} memory_gb)")
        out.rows.append(Row(host, "memory", f"{memory:g} GB", f"{seen_gb:.1f} GiB", code))
    threads = server.cpu.threads if server.cpu is not None else None
    if f.has(CPU) and isinstance(threads, int) and f.cpu_threads:
        code = "" if threads == f.cpu_threads else C.CPU.code
        if code:
            out.add(C.CPU, [host], f"{host}: the OS counts {f.cpu_threads} logical processors, the bed gives "
                                   f"{threads} (bed: {host} cpu sockets x cores x threads)")
        out.rows.append(Row(host, "logical processors", str(threads), str(f.cpu_threads), code))
    wants = _bios_iommu(server)
    if f.has(IOMMU) and wants is not None and f.iommu is not None:
        code = "" if wants == f.iommu else C.BIOS.code
        if code:
            out.add(C.BIOS, [host], f"{host}: the IOMMU is {_onoff(f.iommu)} (kernel command line), the bed's BIOS "
                                    f"settings say {_onoff(wants)} (bed: {host} bios)")
        out.rows.append(Row(host, "IOMMU (VT-d)", _onoff(wants), _onoff(f.iommu), code))
    if f.initiator_name:
        out.learnt.append(Learnt(host, "iqn", f.initiator_name, f"{host}: initiator name"))


def _bios_iommu(server: Server) -> bool | None:
    for key in ("vt_d", "vtd", "iommu", "intel_vt_d", "amd_vi"):
        value = stated(server.bios.get(key)) if isinstance(server.bios, dict) else None
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("enabled", "on", "disabled", "off"):
            return value.lower() in ("enabled", "on")
    return None


def _os(out: AsBuilt, server: Server, f: HostFacts) -> None:
    from topology.os_release import parse_os
    host = server.id
    said = stated(server.os) or ""
    if not isinstance(said, str) or not said:
        return
    want = parse_os(said, stated(server.hypervisor) or "", server.platform)
    seen = parse_os(f"{f.os_name} {f.os_version}".strip(), "", f.platform or server.platform)
    same = (not want.distro or not seen.distro or want.lineage == seen.lineage) and \
        (not want.version or seen.version[:len(want.version)] == want.version)
    code = "" if same else C.OS_RELEASE.code
    if code:
        out.add(C.OS_RELEASE, [host], f"{host}: runs {f.os_name or seen.describe()}, the bed says {said} "
                                      f"(bed: {host} os)")
    out.rows.append(Row(host, "operating system", said, f.os_name, code))


def _placement(out: AsBuilt, bed: Bed, facts: dict[str, HostFacts], wanted: set[str] | None) -> None:
    where: dict[str, str] = {}
    for host, f in facts.items():
        if f.reached and f.has(VMS):
            for name in f.vms:
                where.setdefault(name.lower(), host)
    for vm in bed.vms:
        if not vm.host or (wanted is not None and vm.host not in wanted):
            continue
        host_facts = facts.get(vm.host)
        if host_facts is None or not host_facts.has(VMS):
            continue
        seen = where.get(vm.id.lower())
        if seen is None:
            continue        # not running: nothing to say about its placement
        code = "" if seen == vm.host else C.VM_PLACEMENT.code
        if code:
            out.add(C.VM_PLACEMENT, [vm.id, vm.host, seen], f"VM {vm.id} runs on {seen}, the bed places it on "
                                                            f"{vm.host} (bed: vms {vm.id} host)")
        out.rows.append(Row(vm.host, f"VM {vm.id}", vm.host, seen, code))
        info = next((i for i in facts[seen].vm_info if i.name.lower() == vm.id.lower()), None)
        if info is not None:
            _vm_size(out, vm, seen, info)


def _vm_size(out: AsBuilt, vm, host: str, info) -> None:
    vcpu, memory = stated(vm.vcpu), stated(vm.memory_gb)
    if isinstance(vcpu, int) and info.vcpus:
        code = "" if info.vcpus == vcpu else C.VM_SIZE.code
        if code:
            out.add(C.VM_SIZE, [vm.id, host], f"VM {vm.id} on {host} has {info.vcpus} vCPU(s), the bed gives "
                                              f"{vcpu} (bed: vms {vm.id} vcpu)")
        out.rows.append(Row(host, f"VM {vm.id} vCPUs", str(vcpu), str(info.vcpus), code))
    dynamic = getattr(vm, "dynamic_memory", None) is not None
    if isinstance(memory, (int, float)) and memory > 0 and info.memory_bytes and not dynamic:
        seen_gb = info.memory_bytes / 2**30
        # a hypervisor states what it was given exactly; GB and GiB both read as the bed's figure
        code = "" if min(abs(seen_gb - memory), abs(info.memory_bytes / 1e9 - memory)) < 0.01 * memory \
            else C.VM_SIZE.code
        if code:
            out.add(C.VM_SIZE, [vm.id, host], f"VM {vm.id} on {host} was given {seen_gb:g} GiB of memory, the bed "
                                              f"gives {memory:g} GB (bed: vms {vm.id} memory_gb)")
        out.rows.append(Row(host, f"VM {vm.id} memory", f"{memory:g} GB", f"{seen_gb:g} GiB", code))
