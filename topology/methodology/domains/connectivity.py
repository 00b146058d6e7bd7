"""The connectivity section's domains: storage paths, iSCSI portals, and the disks and volumes each
server brings online once it is logged on to its arrays."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from topology.ids import split_endpoint
from topology.index import servers_behind_mapping_targets
from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.hosts import HOST_NAMES, host_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.domains.storage import (
    ARRAY_NAMES,
    GROUP_FIELDS,
    VOLUME_FIELDS,
    array_values,
    group_values,
    identity_values,
    volume_values,
)
from topology.methodology.values import (
    Val,
    Values,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    interface_of,
    put,
)
from topology.model import StorageArray


def _format_hosts(ctx: BedContext, a: StorageArray) -> dict[str, list[Any]]:
    """Machine id -> the volumes of `a` it formats (`topology.volume_owner`: the VM that reaches a
    LUN itself, the hypervisor host of the virtual disks on it or of a cluster shared volume (a
    cluster's first node), else the machine it is mapped to; nobody for an access LUN)."""
    owners = ctx.volume_owners()
    out: dict[str, list[Any]] = {}
    for v in a.volumes:
        who = owners.get(f"{a.id}:{v.name}")
        if who is not None and who.owner and ctx.server_or_vm(who.owner) is not None:
            out.setdefault(who.owner, []).append(v)
    return out


def _owner_lun(a: StorageArray, volume: str, owner: str) -> int | None:
    """The LUN the bed states for `volume` on a mapping that reaches `owner` (None when it states none)."""
    members = servers_behind_mapping_targets(a)
    for m in a.mappings:
        if m.volume == volume and owner in members.get(m.to, []) and isinstance(m.lun, int):
            return m.lun
    return None


def _disk_users(ctx: BedContext, a: StorageArray) -> dict[str, tuple[list[Any], list[Any]]]:
    """Machine id -> (the volumes of `a` it sees, those of them it formats).  Every machine mapped to a
    volume sees it and must rescan for it, not only the one that formats it: a cluster's other nodes, the
    other hosts of a host group, a host whose guest formats the LUN.  An access (UTM) LUN is no data disk
    and is left out, as it is of formatting."""
    owners = ctx.volume_owners()
    out: dict[str, tuple[list[Any], list[Any]]] = {}
    for v in a.volumes:
        who = owners.get(f"{a.id}:{v.name}")
        if who is None or "access" in (v.purpose if isinstance(v.purpose, list) else []):
            continue
        for machine in dict.fromkeys([who.owner, *who.others] if who.owner else who.others):
            if ctx.server_or_vm(machine) is None:
                continue
            seen, formats = out.setdefault(machine, ([], []))
            seen.append(v)
            if machine == who.owner:
                formats.append(v)
    return out


@domain("host_disks", HOST_NAMES | ARRAY_NAMES | field_names("disks", "count", "volumes", "owned_count", "owned",
                                                           "noun", "appear", "them", "owned_noun", "owned_them"),
        "each server or VM that sees an array's new disks (every machine mapped to them, each cluster node), after "
        "its logons: disks.volumes all it sees, disks.owned those it formats itself")
def _host_disks(ctx: BedContext) -> list[Item]:
    out = []
    for i, a in enumerate(ctx.storage_scopes()):
        base = array_values(ctx, a)
        for sid, (vols, owned) in _disk_users(ctx, a).items():
            s = ctx.server_or_vm(sid)
            vals = dict(base)
            vals.update(host_values(ctx, s))
            put(vals, "disks.count", as_number(len(vols), f"{a.id}.mappings"))
            put(vals, "disks.volumes", as_list([v.name for v in vols], f"{a.id}.mappings"))
            put(vals, "disks.owned_count", as_number(len(owned), f"{a.id}.mappings"))
            put(vals, "disks.owned", as_list([v.name for v in owned], f"{a.id}.mappings"))
            # the words that agree with the counts ("the 1 new disks ... appear" read wrong); no source of their own
            one, one_owned = len(vols) == 1, len(owned) == 1
            for name, text in (("noun", "disk" if one else "disks"), ("appear", "appears" if one else "appear"),
                               ("them", "it" if one else "them"), ("owned_noun", "disk" if one_owned else "disks"),
                               ("owned_them", "it" if one_owned else "them")):
                put(vals, f"disks.{name}", Val(text, ""))
            out.append(Item(vals, sid, platform_of(s), ctx.machine_group(sid), 5000 + i))
    return out


@domain("host_volume",
        HOST_NAMES | ARRAY_NAMES | field_names("volume", *VOLUME_FIELDS, "owner_reason", "shared", "shared_with",
                                               "clusters") |
        field_names("group", *GROUP_FIELDS),
        "each volume a server or VM formats (topology/volume_owner.py: the machine that uses it), after its logons")
def _host_volumes(ctx: BedContext) -> list[Item]:
    out = []
    for i, a in enumerate(ctx.storage_scopes()):
        base = array_values(ctx, a)
        groups = {g.name: (k, g) for k, g in enumerate(a.disk_groups, 1)}
        for sid, vols in _format_hosts(ctx, a).items():
            s = ctx.server_or_vm(sid)
            hv = host_values(ctx, s)
            for j, v in enumerate(vols):
                if ctx.volume_owners()[f"{a.id}:{v.name}"].raw_loads:
                    continue        # the load's disk (topology/volume_owner.py): a file system would be written over
                vals = dict(base)
                vals.update(hv)
                gi = groups.get(v.group)
                if gi is not None:
                    vals.update(group_values(ctx, a, gi[1], gi[0]))
                vals.update(volume_values(ctx, a, v, False, gi[0] if gi else None))
                lun = _owner_lun(a, v.name, sid)
                if lun is not None:
                    put(vals, "volume.lun", as_number(lun, f"{a.id}.mappings"))
                elif (other := vals.get("volume.lun")) is not None and other.kind == "number":
                    # the number another machine's mapping states: on this one the LUN may be any other
                    del vals["volume.lun"]
                identity_values(ctx, vals, a, v, lun, shows_wwn=_shows_wwn(ctx, sid))
                who = ctx.volume_owners()[f"{a.id}:{v.name}"]
                put(vals, "volume.owner_reason", as_text(who.reason, f"{a.id}:{v.name}"))
                _put_sharing(ctx, vals, f"{a.id}:{v.name}", who)
                out.append(Item(vals, sid, platform_of(s), ctx.machine_group(sid), 6000 + i * 1000 + j))
    return out


def _put_sharing(ctx: BedContext, vals: Values, ref: str, who: Any) -> None:
    """Whether machines other than the one that formats the volume mount it too (a host group, several
    hosts, a cluster's shared volume): a single-node file system (ext4, XFS) mounted there at failover, or
    on two nodes at once, is corrupted, so the templates make no file system and no mount of it by script.
    `topology/volume_owner.py` decides it, for the path view too."""
    put(vals, "volume.shared", as_bool(who.shared, f"{ref}.mappings"))
    put(vals, "volume.shared_with", as_list(list(who.shared_with), f"{ref}.mappings"))
    put(vals, "volume.clusters", as_list(list(who.clusters), f"{ref}.clusters"))


def _shows_wwn(ctx: BedContext, sid: str) -> bool:
    """Whether the machine's own tools show a LUN's WWN: not on Windows Server 2008 / 2008 R2, whose
    Win32_DiskDrive gives the serial only (Get-Disk's UniqueId arrives with 2012)."""
    release = ctx.profile(sid).release
    return not (release.family == "windows" and bool(release.version) and release.version < (2012, 0))


PATH_NAMES = field_names("path", "index", "kind", "initiator", "initiator_name", "initiator_nic", "initiator_label",
                         "initiator_ip",
                         "initiator_wwpn", "target", "target_name", "target_label", "target_ip", "target_wwpn",
                         "target_controller", "array", "fabric", "multipath", "persistent", "preferred", "iface",
                         "volumes")
MP_HOST_NAMES = HOST_NAMES | field_names("host", "path_count", "path_kinds", "portals", "arrays", "initiator_names",
                                         "discovery_ips")


def _ip_of(pr: Any) -> str:
    """The IP of a port (validated by ipaddress, so safe to use as a bare token)."""
    i = interface_of(getattr(pr.port, "address", "") if pr is not None else "")
    return str(i.ip) if i is not None else ""


def _mp_host_values(ctx: BedContext, host_id: str, paths: list[tuple[str, Any]]) -> Values:
    comp = ctx.server_or_vm(host_id)
    vals = host_values(ctx, comp) if comp is not None else {}
    if comp is None:
        put(vals, "host.id", as_text(host_id, "paths.host"))
    put(vals, "host.path_count", as_number(len(paths), "paths"))
    put(vals, "host.path_kinds", as_list(sorted({p.kind for _, p in paths}), "paths"))
    portals, arrays, initiators, discovery = [], [], [], []
    for _, p in paths:
        pr = ctx.idx.ports.get(p.target)
        ip = _ip_of(pr)
        if ip and ip not in portals:
            portals.append(ip)
        if pr is not None and pr.device.id not in arrays:
            arrays.append(pr.device.id)
        ipr = ctx.idx.port(p.initiator) if p.kind == "iscsi" else None
        if ipr is not None and ipr.port.name not in initiators:
            initiators.append(ipr.port.name)
        # where the host sends its discovery: an array's group address (EqualLogic) when the bed gives
        # one, else each portal the paths reach
        group_ip = interface_of(str(getattr(pr.device, "attributes", {}).get("group_ip", ""))) if pr else None
        target_ip = str(group_ip.ip) if group_ip is not None else ip
        if p.kind == "iscsi" and target_ip and target_ip not in discovery:
            discovery.append(target_ip)
    put(vals, "host.portals", as_list(portals, "paths"))
    put(vals, "host.arrays", as_list(arrays, "paths"))
    put(vals, "host.initiator_names", as_list(initiators, "paths"))
    put(vals, "host.discovery_ips", as_list(discovery, "paths"))
    return vals


def _host_items(ctx: BedContext, sub: int, fn: Callable[[str, list[tuple[str, Any]], Values], Iterable[Values]]
                ) -> list[Item]:
    """Items of each machine with storage paths; `fn` gets its paths, each with the field it comes
    from, and yields an item's values (or its values and the transport the item is about)."""
    out = []
    for host_id, paths in ctx.host_paths().items():
        comp = ctx.server_or_vm(host_id)
        base = ctx.cached(("mp_host", host_id), partial(_mp_host_values, ctx, host_id, paths))
        for j, got in enumerate(fn(host_id, paths, base)):
            vals, transports = got if isinstance(got, tuple) else (got, ())
            out.append(Item(vals, host_id, platform_of(comp), ctx.machine_group(host_id), sub + j, transports))
    return out


@domain("mp_host", MP_HOST_NAMES, "each server or VM with storage paths")
def _mp_hosts(ctx: BedContext) -> list[Item]:
    return _host_items(ctx, 0, lambda h, paths, base: [base])


@domain("portal", MP_HOST_NAMES | field_names("portal", "ip", "ref", "label", "array", "initiator_ip", "index"),
        "each iSCSI target portal a host discovers (in path order)")
def _portals(ctx: BedContext) -> list[Item]:
    def per(host_id: str, paths: list[tuple[str, Any]], base: Values):
        seen: set = set()
        k = 0
        for src, p in paths:
            if p.kind != "iscsi":
                continue
            pr = ctx.idx.ports.get(p.target)
            ip = _ip_of(pr)
            key = ip or p.target
            if key in seen:
                continue
            seen.add(key)
            k += 1
            vals = dict(base)
            put(vals, "portal.ip", as_token(ip, f"{p.target}.address"))
            put(vals, "portal.ref", as_text(p.target, f"{src}.target"))
            if pr is not None:
                put(vals, "portal.label", as_text(getattr(pr.port, "label", "") or pr.port.name, f"{p.target}.label"))
                put(vals, "portal.array", as_text(pr.device.id, f"{src}.target"))
            ipr = ctx.idx.port(p.initiator)
            put(vals, "portal.initiator_ip", as_token(_ip_of(ipr), f"{p.initiator}.address"))
            put(vals, "portal.index", as_number(k))
            yield vals, ("iscsi",)
    return _host_items(ctx, 100, per)


def _path_end(vals: Values, end: str, pr: Any, ref: str, src: str) -> None:
    """path.<end>_name, _label, _ip and _wwpn of the initiator or target port."""
    put(vals, f"path.{end}_name", as_text(pr.port.name, f"{src}.{end}"))
    put(vals, f"path.{end}_label", as_text(getattr(pr.port, "label", "") or pr.port.name, f"{ref}.label"))
    put(vals, f"path.{end}_ip", as_token(_ip_of(pr), f"{ref}.address"))
    put(vals, f"path.{end}_wwpn", as_text(getattr(pr.port, "wwpn", ""), f"{ref}.wwpn"))


def _path_values(ctx: BedContext, base: Values, src: str, p: Any, k: int) -> Values:
    vals = dict(base)
    ipr = ctx.idx.port(p.initiator)
    tpr = ctx.idx.ports.get(p.target)
    put(vals, "path.index", as_number(k))
    put(vals, "path.kind", as_token(p.kind, f"{src}.kind"))
    put(vals, "path.initiator", as_text(p.initiator, f"{src}.initiator"))
    put(vals, "path.target", as_text(p.target, f"{src}.target"))
    if ipr is not None:
        _path_end(vals, "initiator", ipr, p.initiator, src)
        put(vals, "path.iface", as_text(f"iface-{ipr.port.name}", f"{src}.initiator"))
        # the network device the session leaves by: the NIC an iSCSI interface is bound to, else the port
        bound = getattr(ipr.port, "bound_to", "")
        put(vals, "path.initiator_nic", as_text(split_endpoint(bound)[1] if bound else ipr.port.name,
                                                f"{p.initiator}.bound_to" if bound else f"{src}.initiator"))
        put(vals, "path.fabric", as_text(getattr(ipr.port, "fabric", ""), f"{p.initiator}.fabric"))
    if tpr is not None:
        _path_end(vals, "target", tpr, p.target, src)
        if tpr.controller is not None:
            put(vals, "path.target_controller", as_text(tpr.controller.name, f"{p.target}"))
        put(vals, "path.array", as_text(tpr.device.id, f"{src}.target"))
    put(vals, "path.multipath", as_bool(p.multipath, f"{src}.multipath"))
    put(vals, "path.persistent", as_bool(p.persistent, f"{src}.persistent"))
    put(vals, "path.preferred", as_bool(p.preferred, f"{src}.preferred"))
    put(vals, "path.volumes", as_list(p.volumes, f"{src}.volumes"))
    return vals


@domain("path", MP_HOST_NAMES | PATH_NAMES,
        "each storage path (iSCSI session / FC path): initiator port to target port")
def _paths(ctx: BedContext) -> list[Item]:
    def per(host_id: str, paths: list[tuple[str, Any]], base: Values):
        for k, (src, p) in enumerate(paths, 1):
            yield _path_values(ctx, base, src, p, k), (p.kind,)
    return _host_items(ctx, 1000, per)


@domain("fc_zone", MP_HOST_NAMES | PATH_NAMES | field_names("switch", "id", "model", "fabric", "family", "display"),
        "each FC path through a fabric whose switches declare no zones: the zone made on the switch the "
        "initiator is cabled to (declared zones are the `zone` domain)")
def _fc_zones(ctx: BedContext) -> list[Item]:
    zoned = {sw.id for sw in ctx.bed.switches if sw.zones}
    sw_rank = {sw.id: i for i, sw in enumerate(ctx.bed.switches)}
    fc_switches = [sw for sw in ctx.bed.switches if sw.kind == "fc" and not sw.simulated]

    def fabric_switch(initiator: str) -> str:
        """A pinned path names no cabling: the bed's only FC switch, or the only one of the port's fabric."""
        pr = ctx.idx.port(initiator)
        fabric = getattr(pr.port, "fabric", "") if pr is not None else ""
        same = [sw for sw in fc_switches if fabric and sw.fabric == fabric] or fc_switches
        return same[0].id if len(same) == 1 else ""
    out: list[Item] = []
    for host_id, paths in ctx.host_paths().items():
        base = ctx.cached(("mp_host", host_id), partial(_mp_host_values, ctx, host_id, paths))
        for k, (src, p) in enumerate(paths, 1):
            if p.kind != "fc":
                continue
            switches = ctx.path_switches.get((p.host, p.initiator, p.target), ()) or \
                tuple(x for x in (fabric_switch(p.initiator),) if x)
            if switches and switches[0] in zoned:
                continue
            vals = _path_values(ctx, base, src, p, k)
            sw = ctx.idx.switches.get(switches[0]) if switches else None
            if sw is not None:
                put(vals, "switch.id", as_text(sw.id, f"{sw.id}.id"))
                put(vals, "switch.model", as_text(sw.model, f"{sw.id}.model"))
                put(vals, "switch.fabric", as_text(sw.fabric, f"{sw.id}.fabric"))
                put(vals, "switch.display", as_text(f"{sw.id} ({sw.model})" if sw.model else sw.id, f"{sw.id}.model"))
                family = ctx.families.of("switch", sw.model)
                if family is not None:
                    put(vals, "switch.family", as_token(family.id, f"{sw.id}.model"))
            group = (sw_rank[sw.id],) if sw is not None else (len(sw_rank),)
            out.append(Item(vals, sw.id if sw is not None else "", "switch", group, 500 + len(out), ("fc",)))
    return out
