"""Appendix A: system configuration, one table per server model; VMs and clusters."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from app.report.tables.model import Cell, Row, Table, missing, without_empty_columns
from app.report.tables.values import add_notes, flat, gb, natural, number, roles, setting, slug, value_cell
from topology.model import Bed, Server
from topology.unknown import MARKER, NOT_STATED
from topology.vocabulary import SERVER_ROLE_NAMES, humanize

GROUP_ORDER = ("System", "General dimension information", "Power supplies", "Cooling fans",
               "General processor setup", "CPU", "Platform", "Memory modules", "Hard disk",
               "Operating system", "Network card/subsystem", "Host bus adapters", "Software",
               "Optical drive", "USB ports")
OTHER_GROUP = "Additional information"


def _server_rows(s: Server) -> dict[str, dict[str, Cell]]:
    """group -> label -> cell for one server, modelled values first, then its `attributes`."""
    groups: dict[str, dict[str, Cell]] = defaultdict(dict)

    def put(group: str, label: str, cell: Cell | None) -> None:
        if cell is not None:
            groups[group][label] = cell

    put("System", "Role", Cell(SERVER_ROLE_NAMES.get(s.role, humanize(s.role)), ref=s.id))
    cpu = s.cpu
    put("General processor setup", "Number of processor packages",
        value_cell(cpu.sockets if cpu else None, s.id, True))
    put("General processor setup", "Number of cores per processor package",
        value_cell(cpu.cores_per_socket if cpu else None, s.id, True))
    put("General processor setup", "Number of hardware threads per core",
        value_cell(cpu.threads_per_core if cpu else None, s.id, True))
    if cpu and cpu.cores:
        # threads only where the source says how many per core: never one per core assumed
        threads = cpu.threads if type(cpu.threads_per_core) is int else MARKER
        put("General processor setup", "Total cores / hardware threads", Cell(f"{cpu.cores} / {threads}", ref=s.id))
    put("CPU", "Name", value_cell(cpu.model if cpu else None, s.id, True))
    put("CPU", "Core frequency (GHz)", value_cell(cpu.ghz if cpu else None, s.id))
    put("Platform", "Vendor and model number", value_cell(s.model, s.id, True))
    if s.chassis:
        put("Platform", "Blade chassis / bay", Cell(f"{s.chassis}" + (f", bay {s.bay}" if s.bay is not None else ""),
                                                    ref=s.chassis))
    if s.bios:
        put("Platform", "BIOS settings", Cell("; ".join(f"{humanize(k)}: {setting(v)}" for k, v in s.bios.items()),
                                              ref=s.id))
    put("Memory modules", "Total RAM in system (GB)", value_cell(s.memory_gb, s.id, True))
    put("Memory modules", "NUMA nodes", value_cell(s.numa_nodes, s.id))
    for i, d in enumerate(s.local_disks):
        pre = f"Disk set {i + 1}: " if len(s.local_disks) > 1 else ""
        put("Hard disk", pre + "Vendor and model number", value_cell(d.model, s.id, True))
        put("Hard disk", pre + "Number of disks in system", Cell(str(d.count), ref=s.id))
        put("Hard disk", pre + "Size (GB)", value_cell(d.size_gb, s.id, True))
        put("Hard disk", pre + "RPM", value_cell(d.rpm, s.id, d.media == "hdd", fmt=number))
        kind = " ".join(x for x in (d.interface.upper() if d.interface else "", d.media.upper()) if x)
        put("Hard disk", pre + "Type", Cell(kind, ref=s.id))
        put("Hard disk", pre + "RAID", value_cell(d.raid, s.id))
    put("Operating system", "Name", value_cell(s.os, s.id, True))
    put("Operating system", "Hypervisor", value_cell(s.hypervisor, s.id))
    put("Operating system", "Multipath software", value_cell(s.multipath, s.id))
    put("Operating system", "Domain", value_cell(s.domain, s.id))
    for ad in s.adapters:
        group = "Network card/subsystem" if ad.kind in ("ethernet", "management", "infiniband") else "Host bus adapters"
        desc = ", ".join(x for x in (ad.model, "integrated" if ad.integrated else "",
                                     f"firmware {ad.firmware}" if ad.firmware else "") if x)
        ref = f"{s.id}:{ad.ports[0].name}" if ad.ports else s.id
        put(group, f"{ad.name}: vendor and model number", Cell(desc, ref=ref) if ad.model else missing(s.id, ad.model))
        if ad.ports:
            parts = []
            for p in ad.ports:
                speed = f"{number(p.speed_gbps)} Gb " if p.speed_gbps else ""
                parts.append(f"{p.name} ({speed}{roles(p.roles) or p.kind})")
            put(group, f"{ad.name}: ports", Cell(f"{len(ad.ports)}: " + ", ".join(parts), ref=s.id))
    if s.software:
        put("Software", "Installed software", Cell("; ".join(s.software), ref=s.id))
    for k, v in s.settings.items():
        put("Software", humanize(k), Cell(setting(v), ref=s.id))
    for key, value in s.attributes.items():
        if isinstance(value, dict):
            target = groups[str(key)]
            for label, v in value.items():
                label = str(label)
                # the drawing's value wins over a copied report row with the same label
                if not _has_label(target, label) or target[_label_key(target, label)].missing:
                    target.pop(_label_key(target, label), None)
                    target[label] = Cell(flat(v), ref=s.id)
        else:
            groups[OTHER_GROUP].setdefault(str(key), Cell(flat(value), ref=s.id))
    return groups


def _label_key(group: dict[str, Cell], label: str) -> str:
    low = label.lower()
    return next((k for k in group if k.lower() == low), label)


def _has_label(group: dict[str, Cell], label: str) -> bool:
    low = label.lower()
    return any(k.lower() == low for k in group)


def _ordered_groups(names: Iterable[str]) -> list[str]:
    seen = list(dict.fromkeys(names))
    known = [g for g in GROUP_ORDER if g in seen]
    rest = [g for g in seen if g not in GROUP_ORDER and g != OTHER_GROUP]
    return known + rest + ([OTHER_GROUP] if OTHER_GROUP in seen else [])


def server_models(bed: Bed) -> list[tuple[str, list[Server]]]:
    """Servers grouped the way reports tabulate them: one table per model (simulated apart)."""
    by: dict[str, list[Server]] = defaultdict(list)
    for s in bed.servers:
        name = s.model or ("Server model not stated" if s.model is NOT_STATED else "Server model not set")
        by[name + (" (simulated)" if s.simulated else "")].append(s)
    return list(by.items())


MAX_SERVER_COLUMNS = 4


def server_tables(bed: Bed) -> list[Table]:
    tables = []
    for model, servers in server_models(bed):
        per = {s.id: _server_rows(s) for s in servers}
        order: list[tuple[str, str]] = []
        for g in _ordered_groups(g for rows in per.values() for g in rows):
            labels = list(dict.fromkeys(label for rows in per.values() for label in rows.get(g, {})))
            order += [(g, label) for label in labels]

        def cell(sid: str, g: str, label: str, per: dict = per) -> Cell:
            return per[sid].get(g, {}).get(label) or Cell("")

        differing = [(g, label) for g, label in order
                     if len({cell(s.id, g, label).key() for s in servers}) > 1]
        ids = [s.id for s in servers]
        title = f"System configuration: {model}"
        if differing and len(servers) <= MAX_SERVER_COLUMNS:
            t = Table(f"servers-{slug(model)}", title, ["System"] + ids, kind="keyvalue")
            _fill_groups(t, order, lambda g, label, ids=ids: [cell(sid, g, label) for sid in ids])
            tables.append(add_notes(t, _server_notes(servers)))
            continue
        t = Table(f"servers-{slug(model)}", title, ["System", model], kind="keyvalue", widths=[38, 62])
        t.add(Cell("Servers", bold=True), Cell(", ".join(ids) + (f" ({len(ids)})" if len(ids) > 2 else ""),
                                                ref=ids[0] if len(ids) == 1 else ""))
        common = [k for k in order if k not in differing]
        _fill_groups(t, common, lambda g, label, ids=ids: [cell(ids[0], g, label)])
        tables.append(add_notes(t, _server_notes(servers)))
        if differing:
            labels = [label for _, label in differing]
            if len(labels) <= 5:
                d = Table(f"servers-{slug(model)}-each", f"Per-server values: {model}", ["Server"] + labels,
                          compact=len(labels) > 3)
                for s in servers:
                    d.add(Cell(s.id, ref=s.id, bold=True), *[cell(s.id, g, label) for g, label in differing])
            else:
                d = Table(f"servers-{slug(model)}-each", f"Per-server values: {model}", ["Server", "Item", "Value"],
                          widths=[18, 32, 50])
                for s in servers:
                    first = True
                    for g, label in differing:
                        c = cell(s.id, g, label)
                        if c.text or c.missing:
                            d.add(Cell(s.id if first else "", ref=s.id, bold=True), label, c)
                            first = False
            tables.append(d)
    return tables


def _server_notes(servers: list[Server]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for s in servers:
        out.append((s.id, s))
        out += [(f"{s.id} CPU", s.cpu)] if s.cpu is not None else []
        for ad in s.adapters:
            out.append((f"{s.id} {ad.name}", ad))
            out += [(f"{s.id}:{p.name}", p) for p in ad.ports]
    return out


def _fill_groups(t: Table, order: list[tuple[str, str]], values) -> None:
    current = None
    for g, label in order:
        if g != current:
            current = g
            if g != "System":
                t.add_group(g)
        t.rows.append(Row([Cell(label)] + values(g, label)))


def vm_table(bed: Bed) -> Table | None:
    if not bed.vms:
        return None
    t = Table("vms", "Virtual machines: guests to host placement",
              ["Host", "VM", "Purpose", "vCPU", "Memory", "Storage", "Network adapters"], compact=True,
              widths=[10, 14, 22, 6, 10, 24, 14])
    previous = None
    for vm in sorted(bed.vms, key=lambda v: (natural(v.host), natural(v.id))):
        mem = gb(vm.memory_gb)
        if vm.dynamic_memory:
            dm = vm.dynamic_memory
            mem += " dynamic" + (f" ({gb(dm.min_gb)}-{gb(dm.max_gb)})" if dm.min_gb and dm.max_gb else "")
        disks = "; ".join(
            " ".join(x for x in (d.name, gb(d.size_gb), d.type, d.format.upper() if d.format else "",
                                 f"on {d.volume}" if d.volume else ("local" if d.local else "")) if x)
            for d in vm.disks)
        nics = ", ".join(f"{n.name}" + (f" {n.address}" if n.address else "") for n in vm.nics)
        host = (Cell(vm.host if vm.host != previous else "", ref=vm.host) if vm.host else missing(vm.id, vm.host))
        previous = vm.host
        t.add(host, Cell(vm.id, ref=vm.id, bold=True), vm.role, str(vm.vcpu), mem, disks, nics)
    add_notes(t, [(vm.id, vm) for vm in bed.vms] + [(f"{vm.id} disk {d.name}", d) for vm in bed.vms for d in vm.disks])
    return without_empty_columns(t, keep=len(t.columns), first=2)


def cluster_table(bed: Bed) -> Table | None:
    if not bed.clusters:
        return None
    t = Table("clusters", "Failover clusters", ["Cluster", "Nodes", "Address", "Quorum", "Witness", "Shared volumes"],
              compact=True)
    for c in bed.clusters:
        t.add(Cell(c.id, ref=c.id, bold=True), flat(c.nodes),
              Cell(c.address, ref=c.id) if c.address else missing(c.id, c.address),
              humanize(c.quorum) if c.quorum else flat(c.quorum), c.witness, flat(c.shared_volumes))
    return add_notes(t, [(c.id, c) for c in bed.clusters])
