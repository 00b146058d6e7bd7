"""Drafting a bed from a lab: what the as-built check read off each host (topology/asbuilt/facts.py)
turned into the planner's host records (its ports, addresses, MTUs, speeds, MACs; its OS and
memory) and into the SAN volumes the hosts see, as one edit with the inventory's access entries.

Only what a host showed is written: a value it did not show stays empty ("not stated"), nothing
is guessed.  A SAN volume is a disk the host reaches through an iSCSI session or a multipath map
(a local disk is not one), drafted onto an array named after the portals it is reached on, with
its size, WWN, serial and target, and a mapping to each host that sees it at the LUN it sees it.
Qt-free and transport-free: app/asbuilt/draft.py gathers the facts and calls this."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from topology.asbuilt.facts import HostFacts, Interface
from topology.edits import Compound, Edit, InsertItem
from topology.importing.plan import Cell, HostRecord, ImportPlan, PortRecord, plan_records
from topology.model import ArrayHost, Bed, Controller, Mapping, Port, StorageArray, Volume

ADAPTER = "nic"      # the adapter drafted ports go on (the CSV import's default too)


def host_record(f: HostFacts, line: int, given: HostRecord | None = None) -> HostRecord:
    """The record of one host: the inventory's own record (its access, groups) with what the host showed."""
    rec = given or HostRecord(f.host, line)
    where = f"{f.host} (read from the host)"

    def cell(text: str) -> Cell:
        return Cell(text, rec.line, where)

    if f.platform and "platform" not in rec.fields:
        rec.fields["platform"] = cell(f.platform)
    if f.os_name and "os" not in rec.fields:
        rec.fields["os"] = cell(f.os_name)
    if f.memory_bytes and "memory_gb" not in rec.fields:
        rec.fields["memory_gb"] = cell(f"{f.memory_bytes / 2**30:.1f}")
    known = {p.name for p in rec.ports}
    for iface in f.interfaces:
        if iface.name in known or not _drafted(iface):
            continue
        rec.ports.append(PortRecord(ADAPTER, iface.name, rec.line, _port_cells(iface, cell)))
    extra = [f"{i.name}: also {', '.join(i.addresses[1:])}" for i in f.interfaces if len(i.addresses) > 1]
    if extra:
        rec.notes.append(f"{f.host}: only the first address of a port is drafted ({'; '.join(extra)})")
    return rec


def _drafted(iface: Interface) -> bool:
    # the loopback and interfaces with neither an address nor a hardware address are not ports
    return iface.name != "lo" and bool(iface.addresses or iface.mac)


def _port_cells(iface: Interface, cell) -> dict[str, Cell]:
    out = {"kind": cell("ethernet")}
    if iface.addresses:
        out["address"] = cell(iface.addresses[0])
    if iface.mtu:
        out["mtu"] = cell(str(iface.mtu))
    if iface.speed_mbps:
        out["speed_gbps"] = cell(f"{iface.speed_mbps / 1000:g}")
    if iface.mac:
        out["mac"] = cell(iface.mac)
    if iface.flow_control is not None:
        out["flow_control"] = cell("true" if iface.flow_control else "false")
    return out


@dataclass
class _Lun:
    wwn: str
    size_bytes: int | None
    serial: str
    target: str
    model: str
    portals: set[str] = field(default_factory=set)
    seen_by: dict[str, int | None] = field(default_factory=dict)     # host -> LUN number (None: not shown)


def san_luns(facts: dict[str, HostFacts]) -> list[_Lun]:
    """The SAN volumes the hosts see, by WWN: disks on an iSCSI session or in a multipath map."""
    luns: dict[str, _Lun] = {}
    for host, f in sorted(facts.items()):
        if not f.reached:
            continue
        on_session = {d.disk: (s, d.lun) for s in f.sessions for d in s.disks}
        in_maps = {m.wwid for m in f.multipath if m.wwid}
        for disk in f.disks:
            session, lun = on_session.get(disk.name, (None, None))
            if not disk.wwn or (session is None and disk.wwn not in in_maps):
                continue
            entry = luns.setdefault(disk.wwn, _Lun(disk.wwn, disk.size_bytes, disk.serial.strip(),
                                                   session.target if session else "",
                                                   " ".join(x for x in (disk.vendor, disk.model) if x)))
            if session is not None:
                entry.portals.add(session.portal)
                entry.target = entry.target or session.target
            entry.seen_by.setdefault(host, lun)
    return [luns[w] for w in sorted(luns)]


def _array_id(portals: set[str], taken: set[str]) -> str:
    base = "array-" + (re.sub(r"[^0-9A-Za-z]+", "-", sorted(portals)[0]) if portals else "san")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def _prefix_for(address: str, facts: dict[str, HostFacts]) -> str:
    """The portal with the prefix of a host port on its subnet (it is reached on-link), else bare."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    for f in facts.values():
        for iface in f.interfaces:
            for a in iface.addresses:
                net = ipaddress.ip_interface(a).network
                if ip in net:
                    return f"{address}/{net.prefixlen}"
    return address


def volume_edits(bed: Bed, facts: dict[str, HostFacts], out: ImportPlan) -> list[Edit]:
    """The drafted arrays (one per set of portals), their volumes, hosts and mappings; a LUN whose WWN
    the bed already has is left where it is."""
    known = {w.lower().removeprefix("naa.").removeprefix("0x") for a in bed.arrays for v in a.volumes
             if isinstance(w := v.wwn, str) and w}
    groups: dict[tuple[str, ...], list[_Lun]] = {}
    for lun in san_luns(facts):
        if lun.wwn in known:
            out.notes.append(f"LUN naa.{lun.wwn} is already in the bed: left as it is")
            continue
        groups.setdefault(tuple(sorted(lun.portals)), []).append(lun)
    taken: set[str] = {*(c.id for c in bed.servers), *(c.id for c in bed.switches), *(c.id for c in bed.arrays),
                       *(c.id for c in bed.chassis), *(c.id for c in bed.vms)}
    edits: list[Edit] = []
    for portals, luns in sorted(groups.items()):
        array = StorageArray(id=_array_id(set(portals), taken), connectivity="iscsi" if portals else "",
                             model=luns[0].model,
                             note="drafted from what the hosts see (testbed-studio import --from-hosts): "
                                  "complete its controllers, pools and disks")
        taken.add(array.id)
        if portals:
            array.controllers = [Controller(name="A", ports=[
                Port(name=f"P{i}", roles=["iscsi"], address=_prefix_for(p, facts)) for i, p in enumerate(portals)])]
        lines = [f"+ array {array.id}" + (f" (portals {', '.join(portals)})" if portals else "")]
        for i, lun in enumerate(luns, start=1):
            size = round(lun.size_bytes / 1e9, 3) if lun.size_bytes else None
            array.volumes.append(Volume(name=f"lun{i}", size_gb=size, wwn="naa." + lun.wwn, serial=lun.serial,
                                        target=lun.target))
            for host, number in sorted(lun.seen_by.items()):
                if not any(h.name == host for h in array.hosts):
                    initiator = facts[host].initiator_name
                    array.hosts.append(ArrayHost(name=host, server=host, initiators=[initiator] if initiator else []))
                array.mappings.append(Mapping(volume=f"lun{i}", to=host, lun=number))
            seen = ", ".join(f"{h}" + (f" as LUN {n}" if n is not None else "") for h, n in sorted(lun.seen_by.items()))
            lines.append(f"+ volume {array.id}:lun{i}  naa.{lun.wwn}" + (f"  {size:g} GB" if size else "")
                         + f"  seen by {seen}")
        edits.append(InsertItem(bed.arrays, array))
        out.changes.extend(lines)
    return edits


def plan_from_facts(bed: Bed, facts: dict[str, HostFacts], source: str,
                    given: list[HostRecord] | None = None) -> ImportPlan:
    """One edit that drafts the hosts the facts describe (with the inventory's records, when there is
    one) and the SAN volumes they see; the dry run's list; the problems that stop it."""
    by_host = {r.host: r for r in given or []}
    records = []
    for n, (host, f) in enumerate(sorted(facts.items()), start=1):
        if not f.reached:
            continue
        records.append(host_record(f, by_host[host].line if host in by_host else n, by_host.get(host)))
    plan = plan_records(bed, records, source) if records else ImportPlan(source)
    for host, f in sorted(facts.items()):
        if not f.reached:
            plan.notes.append(f"{host}: not reached, nothing drafted for it ({f.error or 'no answer'})")
    if plan.problems:
        return plan
    extra = volume_edits(bed, facts, plan)
    if extra:
        first = [plan.edit] if plan.edit is not None else []
        plan.edit = Compound([*first, *extra], text=f"Draft {len(records)} host(s) and their volumes from {source}")
    return plan
