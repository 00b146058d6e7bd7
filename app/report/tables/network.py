"""Appendix B: switch configuration, networks, cabling and the address table."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from app.report.tables.model import Cell, Table, missing
from app.report.tables.values import ADDRESSED_ROLES, add_notes, flat, humanize, roles, setting, value_cell
from topology.index import BedIndex
from topology.model import Bed
from topology.unknown import NOT_STATED

MAX_SWITCH_COLUMNS = 4


def switch_tables(bed: Bed) -> list[Table]:
    tables = []
    switches = list(bed.switches)
    for start in range(0, len(switches), MAX_SWITCH_COLUMNS):
        chunk = switches[start:start + MAX_SWITCH_COLUMNS]
        rows: dict[str, dict[str, Cell]] = defaultdict(dict)
        for sw in chunk:
            r = rows

            def put(label: str, cell: Cell | None, sw=sw, r=r) -> None:
                if cell is not None:
                    r[label][sw.id] = cell
            put("Vendor and model number", value_cell(sw.model, sw.id, True))
            put("Type", Cell("Fibre Channel" if sw.kind == "fc" else "Ethernet", ref=sw.id))
            put("Firmware", value_cell(sw.firmware, sw.id))
            put("Ports", value_cell(sw.port_count or (len(sw.ports) or None), sw.id))
            put("Frame size (MTU)", value_cell(sw.mtu, sw.id, sw.kind == "ethernet", fmt=str))
            put("Flow control", value_cell(sw.flow_control, sw.id, sw.kind == "ethernet", fmt=setting))
            put("Spanning tree", value_cell(sw.spanning_tree, sw.id))
            put("VLANs", value_cell(sw.vlans, sw.id, fmt=lambda v: ", ".join(map(str, v))))
            put("Fabric", value_cell(sw.fabric, sw.id))
            put("Networks carried", value_cell(sw.roles, sw.id, fmt=roles))
            put("Blade chassis", value_cell(sw.chassis, sw.chassis))
            for k, v in sw.settings.items():
                put(humanize(k), Cell(setting(v), ref=sw.id))
            if sw.simulated:
                put("Simulated", Cell("Yes (a setting of the test tool only)", ref=sw.id))
        ids = [sw.id for sw in chunk]
        t = Table(f"switches-{start // MAX_SWITCH_COLUMNS + 1}", "Switch configuration",
                  ["Switch"] + [sw.label or sw.id for sw in chunk], kind="keyvalue")
        for label, vals in rows.items():
            t.add(label, *[vals.get(i, Cell("")) for i in ids])
        tables.append(add_notes(t, [(sw.id, sw) for sw in chunk] + [(f"{sw.id}:{p.name}", p) for sw in chunk
                                                                       for p in sw.ports]))
    return tables


def network_table(bed: Bed) -> Table | None:
    if not bed.networks:
        return None
    t = Table("networks", "Networks", ["Network", "Subnet", "VLAN", "Purpose", "MTU", "Cluster use"])
    for n in bed.networks:
        t.add(Cell(n.id, ref=n.id, bold=True), Cell(n.cidr, mono=True) if n.cidr else missing(n.id, n.cidr),
              str(n.vlan) if n.vlan is not None else "", roles([n.role]), str(n.mtu) if n.mtu else "",
              humanize(n.cluster_use) if n.cluster_use else "")
    return add_notes(t, [(n.id, n) for n in bed.networks])


def connection_table(bed: Bed) -> Table | None:
    if not bed.links:
        return None
    t = Table("connections", "Cabling: connections between devices", ["From", "To", "Kind", "Note"],
              widths=[28, 28, 10, 34], compact=True)
    for link in bed.links:
        t.add(Cell(link.a, ref=link.a, mono=True), Cell(link.b, ref=link.b, mono=True), link.kind,
              flat(link.note)[:160])
    return t


def address_table(bed: Bed) -> Table:
    """Every address of the bed: device, port, address, network, MTU, VLAN, purpose.
    Ports whose role needs an address but have none are listed with the gap marked."""
    idx = BedIndex(bed)
    t = Table("addresses", "Address table", ["Device", "Port", "Address", "Network", "MTU", "VLAN", "Purpose"],
              widths=[15, 22, 19, 13, 7, 7, 17], compact=True)

    def port_row(device: str, p: Any, ref: str, mtu: int | None) -> None:
        net = idx.networks.get(p.network) if getattr(p, "network", "") else None
        vlan = p.vlan if getattr(p, "vlan", None) is not None else (net.vlan if net else None)
        addr = p.address or getattr(p, "wwpn", "")
        if not addr and p.address is not NOT_STATED:
            kind = getattr(p, "kind", "ethernet")
            needs = kind in ("ethernet", "management") and (set(getattr(p, "roles", [])) & ADDRESSED_ROLES
                                                            or getattr(p, "network", ""))
            if not needs:
                return
        name = p.name + (f" ({p.label})" if getattr(p, "label", "") else "")
        t.add(Cell(device, ref=device, bold=True), Cell(name, ref=ref),
              Cell(addr, ref=ref, mono=True) if addr else missing(ref, p.address),
              Cell(p.network, ref=p.network) if getattr(p, "network", "") else "",
              str(mtu) if mtu else "", str(vlan) if vlan is not None else "",
              roles(getattr(p, "roles", None) or [getattr(p, "role", "")]))

    for s in bed.servers:
        if s.management_address:
            t.add(Cell(s.id, ref=s.id, bold=True), Cell("management", ref=s.id),
                  Cell(s.management_address, ref=s.id, mono=True), "", "", "", "management")
        for ref, p in idx.server_ports(s):
            pr = idx.ports.get(ref)
            port_row(s.id, p, ref, idx.effective_mtu(pr) if pr else p.mtu)
    for a in bed.arrays:
        for ref, p, _c in idx.array_ports(a):
            pr = idx.ports.get(ref)
            port_row(a.id, p, ref, idx.effective_mtu(pr) if pr else p.mtu)
    for sw in bed.switches:
        for p in sw.ports:
            if p.address:
                port_row(sw.id, p, f"{sw.id}:{p.name}", p.mtu or sw.mtu)
    for vm in bed.vms:
        for n in vm.nics:
            if n.address:
                ref = f"{vm.id}:{n.name}"
                net = idx.networks.get(n.network)
                t.add(Cell(vm.id, ref=vm.id, bold=True), Cell(n.name, ref=ref), Cell(n.address, ref=ref, mono=True),
                      Cell(n.network, ref=n.network) if n.network else "",
                      str(n.mtu or (net.mtu if net else "")) if (n.mtu or (net and net.mtu)) else "",
                      str(net.vlan) if net and net.vlan is not None else "", roles([n.role]))
    for c in bed.clusters:
        t.add(Cell(c.id, ref=c.id, bold=True), Cell("cluster address", ref=c.id),
              Cell(c.address, ref=c.id, mono=True) if c.address else missing(c.id, c.address), "", "", "",
              "cluster name")
    return t
