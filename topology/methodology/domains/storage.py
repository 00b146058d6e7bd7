"""The storage section's domains: arrays, their disk groups, pools, volumes, host ports, hosts and mappings.

`array_values`, `group_values` and `volume_values` also serve the connectivity domains, which
bring the volumes online on the servers.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from topology.methodology.context import BedContext
from topology.methodology.domains.network import PORT_FIELDS, port_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    Val,
    ValueKind,
    Values,
    as_any,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    assumed,
    field_names,
    interface_of,
    not_stated,
    put,
    put_fields,
    size_text,
)
from topology.model import StorageArray
from topology.unknown import NOT_STATED, stated
from topology.vocabulary import RAID_NAMES
from topology.volume_identity import identity_text, normal_target, normal_wwn, select_by, size_bounds, wwn_name

ARRAY_FIELDS = ("id", "model", "firmware", "connectivity", "mgmt_addresses", "mgmt_address", "controllers",
                "controller_count", "family", "family_name",
                # array groups (EqualLogic): is_group for the group itself (its pools, volumes and access
                # records), group_* for a member: the group it joins, its address, whether it is the first member
                # (which creates the group) and the group's members
                "is_group", "group_name", "group_ip", "group_first", "group_members", "group_pool")
ARRAY_NAMES = field_names("array", *ARRAY_FIELDS)


def array_values(ctx: BedContext, a: StorageArray) -> Values:
    out: Values = {}
    put(out, "array.id", as_text(a.id, f"{a.id}.id"))
    put(out, "array.model", as_text(a.model, f"{a.id}.model"))
    put(out, "array.firmware", as_text(a.firmware, f"{a.id}.firmware"))
    put(out, "array.connectivity", as_token(a.connectivity, f"{a.id}.connectivity"))
    family = ctx.families.of("array", a.model)
    if family is not None:
        put(out, "array.family", as_token(family.id, f"{a.id}.model"))
        put(out, "array.family_name", as_text(family.name, f"{a.id}.model"))
    mgmt = [(str(i.ip), f"{a.id}:{p.name}.address") for c in a.controllers for p in c.ports
            if ("management" in p.roles or p.kind == "management") and (i := interface_of(p.address))]
    put(out, "array.mgmt_addresses", as_list([m[0] for m in mgmt], mgmt[0][1] if mgmt else ""))
    if mgmt:
        put(out, "array.mgmt_address", as_text(mgmt[0][0], mgmt[0][1]))
    put(out, "array.controllers", as_list([c.name for c in a.controllers], f"{a.id}.controllers"))
    put(out, "array.controller_count", as_number(len(a.controllers), f"{a.id}.controllers") if a.controllers else None)
    for k, v in a.attributes.items():
        put(out, f"array.attributes.{k}", as_any(v, f"{a.id}.attributes.{k}"))
    put(out, "array.is_group", as_bool(a.id in ctx.idx.group_views))
    g = ctx.idx.array_groups.get(a.group) if a.group else None
    if g is not None:
        src = f"array_groups.{g.name}"
        members = [m.id for m in ctx.bed.arrays if m.group == g.name]
        put(out, "array.group_name", as_text(g.name, f"{a.id}.group"))
        put(out, "array.group_members", as_list(members, src))
        put(out, "array.group_first", as_bool(bool(members) and members[0] == a.id, src))
        if g.address is NOT_STATED:
            put(out, "array.group_ip", not_stated(f"{src}.address"))
        elif (i := interface_of(g.address)) is not None:
            put(out, "array.group_ip", as_token(str(i.ip), f"{src}.address"))
        pools = [p.name for p in g.pools if p.members is not NOT_STATED and a.id in p.members]
        if pools:
            put(out, "array.group_pool", as_text(pools[0], f"{src}.pools"))
        elif any(p.members is NOT_STATED for p in g.pools):
            put(out, "array.group_pool", not_stated(f"{src}.pools"))
    return out


GROUP_FIELDS = ("name", "label", "raid", "raid_text", "geometry", "owner", "owner_index", "owner_letter", "pool",
                "first_volume", "first_volume_size_gb", "first_volume_size_text", "index", "members", "disk_count",
                "slot_pairs", "disk_desc", "media", "usable",
                # TRAY,SLOT of each member drive by the enclosures' stated tray IDs (IBM DS SMcli); the
                # enclosures whose tray ID the bed does not give
                "tray_slots", "trays_unknown")


def group_values(ctx: BedContext, a: StorageArray, g: Any, index: int) -> Values:
    out: Values = {}
    ref = f"{a.id}:group:{g.name}"
    scope = ctx.idx.scopes.get(a.id)
    put(out, "group.name", as_text(g.name, f"{ref}.name"))
    put(out, "group.label", as_text(g.label, f"{ref}.label"))
    put(out, "group.raid", as_token(g.raid, f"{ref}.raid"))
    put(out, "group.raid_text", as_text(RAID_NAMES.get(g.raid, g.raid), f"{ref}.raid"))
    put(out, "group.geometry", as_text(g.geometry, f"{ref}.geometry"))
    put(out, "group.owner", as_text(g.owner, f"{ref}.owner"))
    names = [c.name for c in a.controllers]
    if g.owner in names:
        k = names.index(g.owner)
        put(out, "group.owner_index", as_number(k, f"{ref}.owner"))
        put(out, "group.owner_letter", as_token("ab"[k] if k < 2 else str(k), f"{ref}.owner"))
    put(out, "group.pool", as_text(g.pool, f"{ref}.pool"))
    first = next((v for v in a.volumes if v.group == g.name), None)
    if first is not None:
        vref = f"{a.id}:{first.name}"
        put(out, "group.first_volume", as_text(first.name, f"{vref}.name"))
        put(out, "group.first_volume_size_gb", as_number(first.size_gb, f"{vref}.size_gb"))
        if first.size_gb is not None:
            put(out, "group.first_volume_size_text", as_text(size_text(first.size_gb), f"{vref}.size_gb"))
        elif first.remainder:
            put(out, "group.first_volume_size_text", as_text("all the capacity of the group", f"{vref}.remainder"))
    put(out, "group.index", as_number(index, f"{ref}"))
    put(out, "group.members", as_list(g.members, f"{ref}.members"))
    slots = list(scope.members(g.members)) if scope else []
    if g.members is NOT_STATED:
        put(out, "group.disk_count", not_stated(f"{ref}.members"))
    elif slots:
        put(out, "group.disk_count", as_number(len(slots), f"{ref}.members"))
    enc_index = {e.name: i for i, e in enumerate(a.enclosures)}
    pairs = [f"{enc_index[e]},{s}" for e, s in slots if e in enc_index]
    if pairs and len(pairs) == len(slots):
        put(out, "group.slot_pairs", as_token(" ".join(pairs), f"{ref}.members"))
    trays = {e.name: e.tray_id for e in a.enclosures}
    unknown = sorted({e for e, _ in slots if trays.get(e) is None})
    if slots and not unknown:
        put(out, "group.tray_slots", as_token(" ".join(f"{trays[e]},{s}" for e, s in slots), f"{ref}.members"))
    elif unknown:
        put(out, "group.trays_unknown", as_list(unknown, f"{a.id}.enclosures"))
    disks = scope.group_disks(g) if scope else []
    if disks and len(disks) == len(slots):
        kinds: dict[str, int] = {}
        for d in disks:
            sp = d.spec
            rpm = stated(sp.rpm)
            desc = " ".join(x for x in (size_text(sp.size_gb), f"{rpm / 1000:g}K" if rpm else "",
                                        sp.interface.upper() if sp.interface else "",
                                        sp.media.upper() if sp.media != "hdd" else "") if x)
            kinds[desc] = kinds.get(desc, 0) + 1
        put(out, "group.disk_desc", as_text(", ".join(f"{n} × {d}" for d, n in kinds.items()), f"{ref}.members"))
        media = sorted({(d.spec.interface or d.spec.media).upper() for d in disks})
        put(out, "group.media", as_text("/".join(media), f"{ref}.members"))
        try:
            from topology.capacity import usable_gb
            usable = usable_gb(g.raid, [d.spec.size_gb for d in disks], g.geometry)
            if usable:
                put(out, "group.usable", as_text(size_text(round(usable, 1)), f"{ref}.members"))
        except Exception:  # capacity is a nicety here; a bad member list shows elsewhere
            pass
    return out


_VOLUME_FIELDS: dict[str, ValueKind] = {
    "name": as_text, "label": as_text, "group": as_text, "pool": as_text, "size_gb": as_number, "remainder": as_bool,
    "purpose": as_list, "owner": as_text, "provisioning": as_token, "drive": as_text, "dataset": as_text,
    "read_only": as_bool, "reuse": as_bool, "file_system": as_token}
VOLUME_FIELDS = (*_VOLUME_FIELDS, "ref", "container", "in_container", "size_text", "drive_letter", "mount_path",
                 "first_in_group", "group_index", "lun", "lun_auto", "lun_pattern",
                 # reuse: the label of the file system the steps keep and mount instead of formatting
                 "reuse_label",
                 # how a host finds this LUN's disk at run time (topology/volume_identity.py)
                 "wwn", "wwn_name", "wwn_upper", "serial", "target", "select_by", "min_bytes", "max_bytes",
                 "scsi_vendor", "scsi_product", "device", "identify",
                 # 0-based positions in the array's lists: the numbers an array CLI that numbers its LUs and
                 # pools (Hitachi SNM2) gives them when they are made in the bed's order
                 "number", "pool_number",
                 # snapshot reserve (EqualLogic: a share of the volume's size), and how many machines reach it
                 "reserve_gb", "reserve_text", "reserve_percent", "hosts_count", "settings_stated")


def _hosts_per_volume(a: StorageArray) -> Values:
    """Volume name -> how many machines its mappings (access records) reach."""
    from topology.index import servers_behind_mapping_targets
    members = servers_behind_mapping_targets(a)
    reach: dict[str, set[str]] = {}
    for m in a.mappings:
        reach.setdefault(m.volume, set()).update(members.get(m.to, []))
    return {name: v for name, machines in reach.items() if (v := as_number(len(machines), f"{a.id}.mappings"))}


def _positions(a: StorageArray) -> Values:
    """'volume:NAME' / 'pool:NAME' -> its 0-based position in the array's list (the first of a repeated name)."""
    out: Values = {}
    for kind, names, src in (("volume", [v.name for v in a.volumes], f"{a.id}.volumes"),
                             ("pool", [p.name for p in a.pools], f"{a.id}.pools")):
        for k, name in enumerate(names):
            if f"{kind}:{name}" not in out:
                put(out, f"{kind}:{name}", as_number(k, src))
    return out


def volume_values(ctx: BedContext, a: StorageArray, v: Any, first_in_group: bool, group_index: int | None) -> Values:
    out: Values = {}
    ref = f"{a.id}:{v.name}"
    put(out, "volume.ref", as_text(ref, ref))
    container = f"disk group {v.group}" if v.group else (f"pool {v.pool}" if v.pool else "")
    put(out, "volume.container", as_text(container, f"{ref}.group" if v.group else f"{ref}.pool"))
    if not container and NOT_STATED in (v.group, v.pool):
        put(out, "volume.container", not_stated(f"{ref}.group"))
    # an array that states no disk group and no pool (a software target: tgt, LIO) makes a volume
    # straight from its storage: "in «missing: volume.container»" was a gap the bed could not fill
    held = bool(container or a.disk_groups or a.pools or NOT_STATED in (v.group, v.pool))
    put(out, "volume.in_container", as_text("true" if held else "false", f"{a.id}.pools"))
    if v.size_gb is not None:
        put(out, "volume.size_text", as_text(size_text(v.size_gb), f"{ref}.size_gb"))
    elif v.remainder:
        put(out, "volume.size_text", as_text(f"all remaining capacity{' of the ' + container if container else ''}",
                                             f"{ref}.remainder"))
    put_fields(out, "volume", v, ref, _VOLUME_FIELDS)
    for k, setting in v.settings.items():       # segment_size_kb, read_cache, write_cache ... as the bed names them
        put(out, f"volume.settings.{k}", as_any(setting, f"{ref}.settings.{k}"))
    # settings the source names but leaves open: a command that makes the volume would take the array's default
    unstated = tuple(f"volume.settings.{k}" for k, x in v.settings.items() if x is NOT_STATED)
    put(out, "volume.settings_stated", Val(not_stated().text, f"{ref}.settings", "not_stated", unstated) if unstated
        else as_bool(True, f"{ref}.settings"))
    put(out, "volume.reserve_gb", as_number(v.reserve_gb, f"{ref}.reserve_gb"))
    if isinstance(v.reserve_gb, (int, float)) and not isinstance(v.reserve_gb, bool):
        put(out, "volume.reserve_text", as_text(size_text(v.reserve_gb), f"{ref}.reserve_gb"))
        if isinstance(v.size_gb, (int, float)) and v.size_gb > 0:
            put(out, "volume.reserve_percent", as_number(round(100 * v.reserve_gb / v.size_gb), f"{ref}.reserve_gb"))
    elif v.reserve_gb is NOT_STATED:
        put(out, "volume.reserve_percent", not_stated(f"{ref}.reserve_gb"))
    hosts = ctx.cached(("volume-hosts", a.id), lambda: _hosts_per_volume(a))
    if v.name in hosts:
        put(out, "volume.hosts_count", hosts[v.name])
    # a drive letter ("E", "E:") and an NTFS mount point ("C:\\asgluns\\sg1") need different commands
    letter = v.drive.rstrip(":") if re.fullmatch(r"[A-Za-z]:?", v.drive or "") else ""
    put(out, "volume.drive_letter", as_text(letter, f"{ref}.drive"))
    put(out, "volume.mount_path", as_text(v.drive if v.drive and not letter else "", f"{ref}.drive"))
    if v.label is NOT_STATED:
        put(out, "volume.reuse_label", not_stated(f"{ref}.label"))
    else:
        put(out, "volume.reuse_label", as_text(v.label or v.name, f"{ref}.label" if v.label else f"{ref}.name"))
    put(out, "volume.first_in_group", as_bool(first_in_group, f"{ref}.group"))
    put(out, "volume.group_index", as_number(group_index, f"{ref}.group"))
    numbers = ctx.cached(("volume-numbers", a.id), lambda: _positions(a))
    put(out, "volume.number", numbers.get(f"volume:{v.name}"))
    put(out, "volume.pool_number", numbers.get(f"pool:{v.pool}"))
    lun = ctx.lun.get(ref)
    if lun is not None:
        if ref in ctx.lun_stated:
            put(out, "volume.lun", as_number(lun, f"{a.id}.mappings"))
        elif ref in ctx.lun_not_stated:
            put(out, "volume.lun", not_stated(f"{a.id}.mappings"))
        # a number the tool gives where the bed states none: prose and array statements only
        put(out, "volume.lun_auto", assumed(as_number(lun, f"{a.id}.mappings")))
        put(out, "volume.lun_pattern", assumed(as_text(f"LUN {lun}$", f"{a.id}.mappings")))
    identity_values(ctx, out, a, v, lun if ref in ctx.lun_stated else None)
    return out


def identity_values(ctx: BedContext, out: Values, a: StorageArray, v: Any, lun: int | None,
                    shows_wwn: bool = True) -> None:
    """What a step that writes to the volume's disk selects and checks it by (`volume_identity`):
    the stated WWN, serial or target with `lun` (the LUN the bed states for the machine the step runs
    on), the size band, the array family's SCSI vendor and product, and the words that name the disk --
    on a machine that shows no WWN (`shows_wwn` False: Windows Server 2008/2008 R2) the serial or the
    target and LUN it selects by, never a WWN its tools cannot show."""
    ref = f"{a.id}:{v.name}"
    hexid = normal_wwn(v.wwn)
    if hexid:
        put(out, "volume.wwn", as_token(hexid, f"{ref}.wwn"))
        put(out, "volume.wwn_name", as_token(wwn_name(v.wwn), f"{ref}.wwn"))
        put(out, "volume.wwn_upper", as_token(hexid.upper(), f"{ref}.wwn"))
    elif v.wwn is NOT_STATED:
        put(out, "volume.wwn", not_stated(f"{ref}.wwn"))
    put(out, "volume.serial", as_text(v.serial, f"{ref}.serial"))
    target = normal_target(v.target)
    put(out, "volume.target", as_text(target, f"{ref}.target") if target else
        (not_stated(f"{ref}.target") if v.target is NOT_STATED else None))
    how = select_by(v, lun, shows_wwn)
    hidden_wwn = not how and not shows_wwn and bool(hexid)
    # a WWN the machine cannot show still says why no command selects by it (guards.selection_reason)
    # the field the disk is told apart by: where the words that name it come from
    by = f"{ref}.{how}" if how in ("wwn", "serial", "target") else f"{ref}.wwn"
    put(out, "volume.select_by", as_token(how or ("wwn" if hidden_wwn else "none"), by))
    bounds = size_bounds(v.size_gb)
    if bounds is not None:
        put(out, "volume.min_bytes", as_number(bounds[0], f"{ref}.size_gb"))
        put(out, "volume.max_bytes", as_number(bounds[1], f"{ref}.size_gb"))
    elif v.size_gb is NOT_STATED:
        put(out, "volume.min_bytes", not_stated(f"{ref}.size_gb"))
        put(out, "volume.max_bytes", not_stated(f"{ref}.size_gb"))
    family = ctx.families.of("array", a.model)
    if family is not None and family.scsi_vendor:
        put(out, "volume.scsi_vendor", as_text(family.scsi_vendor, f"{a.id}.model"))
        put(out, "volume.scsi_product", as_text(family.scsi_product, f"{a.id}.model"))
    size = size_text(v.size_gb) if v.size_gb is not None and v.size_gb is not NOT_STATED else ""
    said = identity_text(v, lun, shows_wwn)
    if not said:
        out.pop("volume.device", None)      # volume_values' words may name a WWN this machine cannot show
    if hidden_wwn:
        put(out, "volume.identify", as_text(
            f"the disk of {ref}{' (' + size + ')' if size else ''}, whose WWN ({wwn_name(v.wwn)}) this Windows "
            "release does not show: before writing to it, compare the disk's serial (wmic diskdrive get "
            "Index,SerialNumber,Size) with the array's list of volumes, and state it in the bed (serial: of "
            f"{ref})", f"{ref}.wwn"))
    elif said:
        put(out, "volume.device", as_text(f"{ref} ({said}{', ' + size if size else ''})", by))
        put(out, "volume.identify", as_text(f"the disk with {said}{' (' + size + ')' if size else ''}", by))
    else:
        put(out, "volume.identify", as_text(
            f"the disk of {ref}{' (' + size + ')' if size else ''}, which the bed names by no WWN, serial or "
            "target and LUN: before writing to it, compare the WWN or serial the host shows for the disk with "
            f"the array's list of volumes, and state them in the bed (wwn:, serial: of {ref})", f"{ref}.wwn"))


def _array_items(ctx: BedContext, sub: int, per_array: Callable[[StorageArray, Values], Iterable[tuple[Values, str]]]
                 ) -> list[Item]:
    out = []
    # array steps are done where the array is managed from: the bed's management station when it has one
    station = ctx.management_station()
    for i, a in enumerate(ctx.storage_scopes()):     # the arrays, then the groups that hold volumes
        base = array_values(ctx, a)
        for j, (vals, target) in enumerate(per_array(a, base)):
            out.append(Item(vals, station or target or a.id, "array", (i,), sub + j))
    return out


@domain("array", ARRAY_NAMES, "each storage array")
def _arrays(ctx: BedContext) -> list[Item]:
    return _array_items(ctx, 0, lambda a, base: [(base, a.id)])


@domain("disk_group", ARRAY_NAMES | field_names("group", *GROUP_FIELDS), "each disk / RAID group of each array")
def _disk_groups(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for k, g in enumerate(a.disk_groups, 1):
            vals = dict(base)
            vals.update(group_values(ctx, a, g, k))
            yield vals, a.id
    return _array_items(ctx, 1000, per)


_POOL_FIELDS: dict[str, ValueKind] = {"name": as_text, "provisioning": as_token, "purpose": as_list, "raid": as_token,
                                       "members": as_list}


@domain("pool", ARRAY_NAMES | field_names("pool", *_POOL_FIELDS, "raid_text", "groups", "formatted"),
        "each pool of each array")
def _pools(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for p in a.pools:
            vals = dict(base)
            ref = f"{a.id}:pool:{p.name}"
            put_fields(vals, "pool", p, ref, _POOL_FIELDS)
            put(vals, "pool.raid_text", as_text(RAID_NAMES.get(p.raid, p.raid), f"{ref}.raid"))
            put(vals, "pool.groups", as_list([g.name for g in a.disk_groups if g.pool == p.name], f"{ref}"))
            if p.formatted_gb:
                put(vals, "pool.formatted", as_text(size_text(p.formatted_gb), f"{ref}.formatted_gb"))
            yield vals, a.id
    return _array_items(ctx, 2000, per)


@domain("volume", ARRAY_NAMES | field_names("volume", *VOLUME_FIELDS) | field_names("group", *GROUP_FIELDS),
        "each volume (LUN / virtual disk) of each array, with its disk group as group.*")
def _volumes(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        groups = {g.name: (k, g) for k, g in enumerate(a.disk_groups, 1)}
        seen_groups: set = set()
        # volumes are created group by group, in disk-group order (a vendor CLI numbers groups that way)
        order = sorted(range(len(a.volumes)),
                       key=lambda n: (groups[a.volumes[n].group][0] if a.volumes[n].group in groups else 10**6, n))
        for n in order:
            v = a.volumes[n]
            vals = dict(base)
            first = v.group not in seen_groups
            seen_groups.add(v.group)
            gi = groups.get(v.group)
            if gi is not None:
                vals.update(group_values(ctx, a, gi[1], gi[0]))
            vals.update(volume_values(ctx, a, v, first, gi[0] if gi else None))
            yield vals, a.id
    return _array_items(ctx, 3000, per)


@domain("array_port", ARRAY_NAMES | field_names("port", *PORT_FIELDS, "controller", "controller_index",
                                                "controller_letter", "controller_mode", "port_index"),
        "each host (data) port of each array controller")
def _array_ports(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for ci, c in enumerate(a.controllers):
            k = 0
            for p in c.ports:
                if p.kind in ("management", "sas") or "management" in p.roles or "unused" in p.roles:
                    continue
                vals = dict(base)
                vals.update(port_values(ctx, a.id, p))
                put(vals, "port.controller", as_text(c.name, f"{a.id}:{p.name}"))
                put(vals, "port.controller_index", as_number(ci))
                put(vals, "port.controller_letter", as_token("ab"[ci] if ci < 2 else str(ci)))
                put(vals, "port.controller_mode", as_token(c.mode, f"{a.id}:{c.name}.mode"))
                put(vals, "port.port_index", as_number(k))
                k += 1
                yield vals, a.id
    return _array_items(ctx, 4000, per)


@domain("host_group", ARRAY_NAMES | field_names("host_group", "name", "members"), "each host group of each array")
def _host_groups(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for hg in a.host_groups:
            vals = dict(base)
            put(vals, "host_group.name", as_text(hg.name, f"{a.id}:{hg.name}.name"))
            put(vals, "host_group.members", as_list([h.name for h in a.hosts if h.host_group == hg.name],
                                                    f"{a.id}.hosts"))
            yield vals, a.id
    return _array_items(ctx, 5000, per)


_ARRAY_HOST_FIELDS: dict[str, ValueKind] = {"name": as_text, "server": as_text, "host_type": as_text,
                                             "host_group": as_text, "initiators": as_list}


@domain("array_host", ARRAY_NAMES | field_names("array_host", *_ARRAY_HOST_FIELDS, "initiator"),
        "each host defined on each array")
def _array_hosts(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for h in a.hosts:
            vals = dict(base)
            src = f"{a.id}:host:{h.name}"
            put_fields(vals, "array_host", h, src, _ARRAY_HOST_FIELDS)
            if h.initiators:
                put(vals, "array_host.initiator", as_text(h.initiators[0], f"{src}.initiators"))
            yield vals, a.id
    return _array_items(ctx, 6000, per)


@domain("mapping", ARRAY_NAMES | field_names("mapping", "volume", "to", "to_kind", "lun", "lun_auto", "ports"),
        "each volume-to-host(-group) mapping of each array")
def _mappings(ctx: BedContext) -> list[Item]:
    def per(a: StorageArray, base: Values):
        groups = {hg.name for hg in a.host_groups}
        for m in a.mappings:
            vals = dict(base)
            src = f"{a.id}.mappings"
            put(vals, "mapping.volume", as_text(m.volume, src))
            put(vals, "mapping.to", as_text(m.to, src))
            put(vals, "mapping.to_kind", as_token("hostGroup" if m.to in groups else "host", src))
            put(vals, "mapping.lun", as_number(m.lun, src))
            put(vals, "mapping.lun_auto", as_number(ctx.lun.get(f"{a.id}:{m.volume}"), src))
            put(vals, "mapping.ports", as_list(m.ports, src))
            yield vals, a.id
    return _array_items(ctx, 7000, per)

