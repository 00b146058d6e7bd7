"""Appendix D: storage configuration per array: controllers and ports, disk groups,
pools, volumes, host access and replication."""
from __future__ import annotations

from collections import defaultdict

from app.report.tables.disks import disk_kind, disks_by_interface, spare_slots
from app.report.tables.model import Cell, Table, missing, without_empty_columns
from app.report.tables.storage_groups import group_tables, settings_cell
from app.report.tables.values import (
    ADDRESSED_ROLES,
    add_notes,
    compress_names,
    flat,
    gb,
    number,
    roles,
    slug,
    value_cell,
)
from topology.index import ArrayScope, BedIndex
from topology.model import Bed, StorageArray
from topology.unknown import MARKER, NOT_STATED, stated
from topology.vocabulary import CONNECTIVITY_NAMES, raid_name


def storage_tables(bed: Bed) -> list[Table]:
    from topology.capacity import group_usable, pool_usable, volume_sizes
    idx = BedIndex(bed)
    try:
        sizes = volume_sizes(idx)
    except Exception:
        sizes = {}
    link_ends: dict[str, set[str]] = defaultdict(set)
    for link in bed.links:
        for mine, other in ((link.a, link.b), (link.b, link.a)):
            dev = idx.endpoint_device(mine)
            peer = idx.endpoint_device(other)
            if dev is not None and peer is not None:
                link_ends[dev.id].add(peer.id)
    links_of = defaultdict(int)
    for link in bed.links:
        for end in (link.a, link.b):
            dev = idx.endpoint_device(end)
            if dev is not None:
                links_of[dev.id] += 1
    mapped_to: dict[tuple[str, str], list[str]] = defaultdict(list)
    for a in bed.arrays:
        for m in a.mappings:
            mapped_to[(a.id, m.volume)].append(m.to + (f" (LUN {m.lun})" if m.lun is not None else ""))

    tables: list[Table] = []
    for a in bed.arrays:
        scope = idx.scopes[a.id]
        ref = a.id
        t = Table(f"storage-{slug(a.id)}", f"Storage configuration: {a.id}", ["Storage", a.id], kind="keyvalue",
                  widths=[40, 60])
        rows: dict[str, Cell] = {}
        rows["Storage hardware"] = value_cell(a.model, ref, True)
        if a.simulated:
            rows["Simulated"] = Cell("Yes: exists only as a setting of the test tool", ref=ref)
        conn = a.connectivity if a.connectivity is NOT_STATED else a.connectivity or _guess_connectivity(a)
        rows["Storage connectivity"] = value_cell(CONNECTIVITY_NAMES.get(conn, conn), ref, True)
        rows["Storage model and OS/firmware revision"] = (
            Cell(", ".join(x for x in (a.model, f"firmware {a.firmware}" if a.firmware else "") if x), ref=ref)
            if a.firmware else missing(ref, a.firmware))
        rows.update(_cache_row(a, ref))
        sw = sorted(x for x in link_ends.get(a.id, ()) if x in idx.switches)
        if sw:
            models = sorted({f"{idx.switches[s].model or s}" for s in sw})
            rows["Network switch"] = Cell(", ".join(models) + f" ({', '.join(sw)})", ref=sw[0])
        if links_of.get(a.id):
            rows["Number of connections from storage"] = Cell(str(links_of[a.id]), ref=ref)
        rows["Number of storage controllers"] = (Cell(str(len(a.controllers)), ref=ref) if a.controllers
                                                 else missing(ref))
        host_ports = [(p, c) for c in a.controllers for p in c.ports if p.kind not in ("management", "sas")
                      or set(p.roles) & {"iscsi", "fc"}]
        if host_ports:
            speeds = sorted({number(p.speed_gbps) for p, _ in host_ports if stated(p.speed_gbps)})
            kinds = sorted({CONNECTIVITY_NAMES.get(r, r) for p, _ in host_ports for r in p.roles
                            if r in ("iscsi", "fc")})
            rows["Number of storage ports"] = Cell(
                f"{len(host_ports)}" + (f" x {'/'.join(speeds)} Gb" if speeds else "")
                + (f" {', '.join(kinds)}" if kinds else "") + f" ({len(a.controllers)} controllers)", ref=ref)
        for iface, disks in sorted(disks_by_interface(scope).items()):
            kinds = defaultdict(int)
            for d in disks:
                kinds[(disk_kind(d.spec), d.spec.model)] += 1
            rows[f"{iface} drives"] = Cell("; ".join(f"{n} x {k}" + (f" ({m})" if m else "")
                                                     for (k, m), n in kinds.items()), ref=ref)
        rows["Total number of disks tested in solution"] = Cell(str(len(scope.disks)), ref=ref) if scope.disks \
            else (missing(ref) if not a.simulated else Cell("0 (simulated)", ref=ref))
        if a.max_disks or a.max_disks is NOT_STATED:
            rows["Maximum number of spindles"] = Cell(str(a.max_disks), ref=ref)
        spares = spare_slots(a)
        rows["Hot spares"] = Cell(f"{len(spares)} ({', '.join(a.spares)})" if spares else "None", ref=ref)
        levels = list(dict.fromkeys(raid_name(g.raid) for g in a.disk_groups))
        if levels:
            rows["RAID technology"] = Cell(", ".join(levels), ref=ref)
        usable = sum(group_usable(scope, g) for g in a.disk_groups if not g.pool)
        usable += sum(pool_usable(scope, p.name) for p in a.pools)
        if usable:
            rows["Usable capacity (GB)"] = Cell(number(round(usable, 1)), ref=ref)
        if a.group:
            rows["Array group"] = Cell(a.group, ref=ref)
        for label, cell in rows.items():
            if cell is not None:
                t.add(label, cell)
        _attribute_rows(t, a.attributes, ref, rows)
        tables.append(add_notes(t, [(a.id, a)] + [(f"{a.id} enclosure {e.name}", e) for e in a.enclosures]))

        ports = [(c, p) for c in a.controllers for p in c.ports]
        if ports:
            pt = Table(f"storage-{slug(a.id)}-ports", f"Controllers and ports: {a.id}",
                       ["Controller", "Cache", "Mode", "Port", "Kind", "Speed", "Purpose", "Address"],
                       widths=[14, 8, 8, 16, 10, 8, 14, 22], compact=True)
            for c, p in ports:
                label = p.name + (f" ({p.label})" if p.label else "")
                pref = f"{a.id}:{p.name}"
                needs = p.kind == "ethernet" and set(p.roles) & ADDRESSED_ROLES
                addr = p.address or p.wwpn
                pt.add(Cell(c.name, ref=a.id), gb(c.cache_gb), c.mode, Cell(label, ref=pref), p.kind,
                       f"{number(p.speed_gbps)} Gb" if p.speed_gbps else "", roles(p.roles),
                       Cell(addr, ref=pref, mono=True) if addr else (missing(pref) if needs else ""))
            tables.append(add_notes(pt, [(f"{a.id}:{c.name}", c) for c in a.controllers]
                                    + [(f"{a.id}:{p.name}", p) for c, p in ports]))

        if a.disk_groups:
            gt = Table(f"storage-{slug(a.id)}-groups", f"Disk groups: {a.id}",
                       ["Group", "RAID", "Disks", "Slots", "Owner", "Pool", "Usable (GB)", "Contents"],
                       widths=[14, 12, 20, 12, 10, 8, 8, 16], compact=True)
            for g in a.disk_groups:
                disks = scope.group_disks(g)
                kinds = defaultdict(int)
                for d in disks:
                    kinds[disk_kind(d.spec)] += 1
                desc = "; ".join(f"{n} x {k}" for k, n in kinds.items()) or ""
                gref = f"{a.id}:group:{g.name}"
                level = raid_name(g.raid) + (f" ({g.geometry})" if g.geometry else "")
                contents = ", ".join(v.name for v in a.volumes if v.group == g.name)
                gt.add(Cell(g.name + (f" ({g.label})" if g.label else ""), ref=gref, bold=True),
                       Cell(level, ref=gref), Cell(desc, ref=gref) if desc else missing(gref, g.members),
                       flat(g.members), g.owner, g.pool, _usable_text(scope, "group", g.name), contents)
            tables.append(add_notes(gt, [(g.name, g) for g in a.disk_groups]))

        if a.pools:
            pl = Table(f"storage-{slug(a.id)}-pools", f"Pools: {a.id}",
                       ["Pool", "Provisioning", "Disk groups", "Purpose", "Capacity (GB)"], compact=True,
                       widths=[16, 12, 44, 14, 14])
            for p in a.pools:
                groups = [g.name for g in scope.pool_groups(p.name)]
                pl.add(Cell(p.name, ref=f"{a.id}:pool:{p.name}", bold=True), p.provisioning,
                       compress_names(groups) or (raid_name(p.raid) + " policy" if p.raid else ""),
                       flat(p.purpose), _usable_text(scope, "pool", p.name))
            tables.append(add_notes(pl, [(p.name, p) for p in a.pools]))

        if a.volumes:
            # a Settings column where any volume gives one (segment size, cache, snapshot reserve)
            with_settings = any(v.settings or v.reserve_gb is not None for v in a.volumes)
            vt = Table(f"storage-{slug(a.id)}-volumes", f"Volumes (LUNs): {a.id}",
                       ["Volume", "In", "Size (GB)", "Purpose", "Owner", "Drive", "Presented to"]
                       + (["Settings"] if with_settings else []),
                       widths=[14, 10, 9, 11, 8, 12, 14, 22] if with_settings else [17, 12, 10, 14, 10, 17, 20],
                       compact=True)
            for v in a.volumes:
                vref = f"{a.id}:{v.name}"
                size = sizes.get(vref, stated(v.size_gb))
                size_cell = Cell(number(round(size, 1)) + (" (rest)" if v.remainder and v.size_gb is None else "")
                                 + (" thin" if v.provisioning == "thin" else ""), ref=vref) \
                    if size is not None else missing(vref)
                if v.size_gb is NOT_STATED:
                    size_cell = Cell(MARKER, ref=vref)
                vt.add(Cell(v.name + (f" ({v.label})" if v.label else ""), ref=vref, bold=True),
                       v.group or v.pool or flat(v.group), size_cell, flat(v.purpose), v.owner,
                       Cell(v.drive, mono=True),
                       "; ".join(mapped_to.get((a.id, v.name), [])),
                       *([settings_cell(v, vref)] if with_settings else []))
            tables.append(add_notes(vt, [(v.name, v) for v in a.volumes]))

        if a.hosts or a.host_groups:
            ht = Table(f"storage-{slug(a.id)}-hosts", f"Host access: {a.id}",
                       ["Array host", "Server", "Host type", "Host group", "Initiators"], compact=True)
            for h in a.hosts:
                ht.add(Cell(h.name, bold=True), Cell(h.server, ref=h.server) if h.server else flat(h.server),
                       h.host_type, h.host_group, Cell(flat(h.initiators), mono=True))
            for hg in a.host_groups:
                if not any(h.host_group == hg.name for h in a.hosts):
                    ht.add(Cell("(host group)", bold=True), "", "", hg.name, "")
            tables.append(add_notes(ht, [(hg.name, hg) for hg in a.host_groups]))

    tables.extend(group_tables(bed, idx, sizes))
    tables = [t if t.kind != "grid" else without_empty_columns(t, keep=len(t.columns), first=1) for t in tables]
    if bed.replications:
        rt = Table("replication", "Replication", ["Source", "Target", "Kind", "Links"], compact=True)
        for r in bed.replications:
            rt.add(Cell(r.source, ref=r.source), Cell(r.target, ref=r.target), r.kind,
                   number(r.links) if r.links is not None else "")
        tables.append(add_notes(rt, [(f"{r.source} -> {r.target}", r) for r in bed.replications]))
    return tables


def _usable_text(scope: ArrayScope, kind: str, name: str) -> str:
    """A group's or pool's usable capacity for a table; "not stated" where a value it needs is."""
    from topology.capacity import container_usable, unstated_inputs
    usable = container_usable(scope, kind, name)
    return MARKER if not usable and unstated_inputs(scope, kind, name) else number(round(usable, 1))


def _guess_connectivity(a: StorageArray) -> str:
    kinds = {r for c in a.controllers for p in c.ports for r in p.roles}
    if "iscsi" in kinds:
        return "iscsi"
    if "fc" in kinds:
        return "fc"
    return ""


def _attribute_rows(t: Table, attributes: dict, ref: str, existing: dict[str, Cell | None]) -> None:
    have = {k.lower() for k, v in existing.items() if v is not None}
    flat_items = [(k, v) for k, v in attributes.items() if not isinstance(v, dict)]
    for k, v in flat_items:
        if str(k).lower() not in have:
            t.add(str(k), Cell(flat(v), ref=ref))
    for k, v in attributes.items():
        if isinstance(v, dict):
            t.add_group(str(k))
            for label, value in v.items():
                t.add(str(label), Cell(flat(value), ref=ref))


def _cache_row(a: StorageArray, ref: str) -> dict[str, Cell]:
    """The array's cache: a total only when every controller states its own; else per controller, the ones
    not stated said so (one controller's 1.67 GB is not the array's)."""
    caches = [stated(c.cache_gb) for c in a.controllers]
    given = [c for c in caches if c is not None]
    if not given:
        return {"Storage cache": Cell(MARKER, ref=ref)} if any(c.cache_gb is NOT_STATED for c in a.controllers) else {}
    if len(given) == len(caches):
        if len(caches) == 1:
            return {"Storage cache": Cell(f"{gb(given[0])} ({a.controllers[0].name} only)", ref=ref)}
        total = sum(given)
        each = f"{len(given)} x {gb(given[0])}" if len(set(given)) == 1 else ", ".join(gb(c) for c in given)
        return {"Storage cache": Cell(f"{gb(total)} ({each})", ref=ref)}
    per = "; ".join(f"{c.name}: {gb(v) if v is not None else MARKER}"
                    for c, v in zip(a.controllers, caches, strict=True))
    return {"Storage cache": Cell(f"per controller: {per} (array total not known)", ref=ref)}
