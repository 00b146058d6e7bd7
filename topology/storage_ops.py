"""Storage edits as the array's management software offers them: disk groups from chosen
slots, hot spares, volumes, host groups, mappings, pools.

Every function checks the request against the bed and returns one reversible
`topology.edits.Edit` (it never changes the bed itself); a request that cannot work raises
`StorageEditRefused` with a sentence the user can act on.  Applying the edit keeps the bed
loadable: no reference is left dangling.

Subject ids follow the validator: slot ``ARRAY:ENCLOSURE:SLOT``, group ``ARRAY:group:NAME``,
pool ``ARRAY:pool:NAME``, volume ``ARRAY:VOLUME``.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from topology import capacity as cap
from topology.edits import Compound, Edit, InsertItem, Labelled, RemoveItem, SetField
from topology.ids import GROUP, POOL, SEP, group_ref, parse_array_part, pool_ref, slot_ref, volume_ref
from topology.index import ArrayScope, BedIndex, parse_member
from topology.model import (
    RAID_LEVELS,
    VOLUME_PURPOSES,
    ArrayHost,
    Bed,
    DiskGroup,
    HostGroup,
    Mapping,
    Pool,
    StorageArray,
    Volume,
)
from topology.unknown import NOT_STATED, stated
from topology.vocabulary import RAID_NAMES

Slot = tuple[str, int]


class StorageEditRefused(ValueError):
    """A storage edit that cannot be made; the message says why and what to do instead."""


# ----------------------------------------------------------------------------- subject ids

# the storage editor's names for the grammar in topology.ids
group_id, pool_id, volume_id = group_ref, pool_ref, volume_ref


def slot_id(array_id: str, slot: Slot) -> str:
    return slot_ref(array_id, *slot)


@dataclass(frozen=True)
class Subject:
    """A storage subject id taken apart: kind is array, slot, group, pool or volume."""
    array: str
    kind: str
    name: str = ""
    slot: Slot | None = None


def parse_subject(bed: Bed, ident: str) -> Subject | None:
    """What a selection id names inside an array, or None when it is not storage."""
    for a in bed.arrays:
        if ident == a.id:
            return Subject(a.id, "array")
        prefix = a.id + SEP
        if not ident.startswith(prefix):
            continue
        rest = ident[len(prefix):]
        part = parse_array_part(rest)
        if part.kind in (GROUP, POOL):
            return Subject(a.id, part.kind, part.name)
        if part.slot is not None and any(e.name == part.slot[0] for e in a.enclosures):
            return Subject(a.id, "slot", slot=part.slot)
        if any(v.name == rest for v in a.volumes):
            return Subject(a.id, "volume", rest)
    return None


# ----------------------------------------------------------------------------- slot ranges

def compact_ranges(array: StorageArray, slots: Iterable[Slot]) -> list[str]:
    """Slots as ENCLOSURE:FIRST-LAST ranges, in enclosure then slot order: E0:0-3, E0:7."""
    order = {e.name: i for i, e in enumerate(array.enclosures)}
    unique = sorted(set(slots), key=lambda s: (order.get(s[0], len(order)), s[0], s[1]))
    out: list[str] = []
    run: list[Slot] = []
    for s in unique:
        if run and s[0] == run[-1][0] and s[1] == run[-1][1] + 1:
            run.append(s)
            continue
        if run:
            out.append(_range_text(run))
        run = [s]
    if run:
        out.append(_range_text(run))
    return out


def _range_text(run: list[Slot]) -> str:
    enc, first, last = run[0][0], run[0][1], run[-1][1]
    return f"{enc}:{first}" if first == last else f"{enc}:{first}-{last}"


def expand(specs: Iterable[str]) -> list[Slot]:
    """ENCLOSURE:SLOTS specs to (enclosure, slot) pairs; specs that do not parse are skipped."""
    out: list[Slot] = []
    for spec in specs:
        try:
            enc, slots = parse_member(spec)
        except ValueError:
            continue
        out.extend((enc, s) for s in slots)
    return out


def slot_users(array: StorageArray) -> dict[Slot, str]:
    """Slot -> what uses it: a disk group name, or '' for a hot spare."""
    used: dict[Slot, str] = {}
    for g in array.disk_groups:
        for s in expand(g.members):
            used.setdefault(s, g.name)
    for s in expand(array.spares):
        used.setdefault(s, "")
    return used


# ----------------------------------------------------------------------------- capacity

@dataclass
class ContainerUsage:
    """A disk group or pool with what its volumes take."""
    kind: str                     # "group" or "pool"
    name: str
    usable_gb: float              # 0 when the bed does not say (no disks, no stated capacity)
    allocated_gb: float           # volumes with a stated size
    remainder: list[str] = field(default_factory=list)   # volumes that take what is left
    unstated: list[str] = field(default_factory=list)    # volumes whose size the source does not state
    volumes: list[str] = field(default_factory=list)
    thin: bool = False
    pool: str = ""                # for a group: the pool it belongs to

    @property
    def free_gb(self) -> float:
        """Space left for a new sized volume (a remainder volume leaves none)."""
        if self.remainder:
            return 0.0
        return max(self.usable_gb - self.allocated_gb, 0.0)

    @property
    def known(self) -> bool:
        return self.usable_gb > 0


def array_scope(bed: Bed, array_id: str) -> ArrayScope:
    return BedIndex(bed).scopes[_array(bed, array_id).id]


def usage(bed: Bed, array_id: str, scope: ArrayScope | None = None) -> dict[tuple[str, str], ContainerUsage]:
    """(kind, name) -> usage for every disk group and pool of the array."""
    array = _array(bed, array_id)
    scope = scope or array_scope(bed, array_id)
    out: dict[tuple[str, str], ContainerUsage] = {}
    for g in array.disk_groups:
        out[("group", g.name)] = ContainerUsage("group", g.name, cap.group_usable(scope, g), 0.0, pool=g.pool)
    for p in array.pools:
        out[("pool", p.name)] = ContainerUsage("pool", p.name, cap.pool_usable(scope, p.name), 0.0,
                                               thin=p.provisioning == "thin")
    for v in array.volumes:
        key = ("group", v.group) if v.group else ("pool", v.pool)
        u = out.get(key)
        if u is None:
            continue
        u.volumes.append(v.name)
        size = stated(v.size_gb)
        if size is not None:
            u.allocated_gb += size
        elif v.remainder and v.size_gb is None:
            u.remainder.append(v.name)
        elif v.size_gb is NOT_STATED:
            u.unstated.append(v.name)
    return out


def volume_size(bed: Bed, array_id: str, name: str,
                use: dict[tuple[str, str], ContainerUsage] | None = None) -> float | None:
    """A volume's size in GB; a remainder volume's share of what its group or pool has left."""
    array = _array(bed, array_id)
    v = _volume(array, name)
    if v.size_gb is NOT_STATED:
        return None
    if v.size_gb is not None:
        return float(v.size_gb)
    if not v.remainder:
        return None
    use = use if use is not None else usage(bed, array_id)
    u = use.get(("group", v.group) if v.group else ("pool", v.pool))
    if u is None or not u.known or u.unstated:
        return None
    return max(u.usable_gb - u.allocated_gb, 0.0) / max(len(u.remainder), 1)


def next_group_name(array: StorageArray) -> str:
    names = {g.name for g in array.disk_groups}
    n = len(array.disk_groups) + 1
    while f"Group {n}" in names:
        n += 1
    return f"Group {n}"


def next_free_lun(bed: Bed, array_id: str, to: str) -> int:
    """The lowest LUN number the target (and, for a host, its host group) does not use yet."""
    array = _array(bed, array_id)
    return min(set(range(len(array.mappings) + 2)) - _luns_seen_by(array, _resolve_existing_target(array, to)))


# ----------------------------------------------------------------------------- the edits

def _step(edits: Sequence[Edit], text: str, array: StorageArray, *subjects: str) -> Edit:
    inner = edits[0] if len(edits) == 1 else Compound(list(edits), text)
    return Labelled(inner, text, {array.id, *subjects})


def _array(bed: Bed, array_id: str) -> StorageArray:
    for a in bed.arrays:
        if a.id == array_id:
            return a
    raise StorageEditRefused(f"there is no storage array {array_id!r}")


def _group(array: StorageArray, name: str) -> DiskGroup:
    for g in array.disk_groups:
        if g.name == name:
            return g
    raise StorageEditRefused(f"{array.id} has no disk group {name!r}")


def _pool(array: StorageArray, name: str) -> Pool:
    for p in array.pools:
        if p.name == name:
            return p
    raise StorageEditRefused(f"{array.id} has no pool {name!r}")


def _volume(array: StorageArray, name: str) -> Volume:
    for v in array.volumes:
        if v.name == name:
            return v
    raise StorageEditRefused(f"{array.id} has no volume {name!r}")


def _is_machine(bed: Bed, ident: str) -> bool:
    """A server or VM of the bed has this id."""
    return any(s.id == ident for s in bed.servers) or any(v.id == ident for v in bed.vms)


def _clean_name(name: str | None, what: str) -> str:
    name = (name or "").strip()
    if not name:
        raise StorageEditRefused(f"give the {what} a name")
    if ":" in name:
        raise StorageEditRefused(f"a {what} name cannot contain ':' ({name!r}); it separates parts of ids")
    return name


def _check_slots(array: StorageArray, slots: Iterable[Slot]) -> list[Slot]:
    """The requested slots, each existing and holding a disk; refuses with the first one that does not."""
    wanted = list(dict.fromkeys((str(e), int(s)) for e, s in slots))
    if not wanted:
        raise StorageEditRefused("select at least one disk in the slot map first")
    enclosures = {e.name: e for e in array.enclosures}
    disks = _disk_slots(array)
    for enc, s in wanted:
        e = enclosures.get(enc)
        if e is None:
            raise StorageEditRefused(f"{array.id} has no enclosure {enc!r}")
        if not 0 <= s < e.slots:
            raise StorageEditRefused(f"enclosure {enc} has slots 0-{e.slots - 1}; there is no slot {s}")
        if (enc, s) not in disks:
            raise StorageEditRefused(f"slot {enc}:{s} is empty: insert a disk there first")
    return wanted


def _disk_slots(array: StorageArray) -> set[Slot]:
    out: set[Slot] = set()
    for e in array.enclosures:
        for ds in e.disks:
            out.update(expand([f"{e.name}:{ds.slots}"]))
    return out


def _refuse_used(array: StorageArray, slots: Iterable[Slot]) -> None:
    used = slot_users(array)
    for s in slots:
        if s in used:
            what = f"disk group {used[s]}" if used[s] else "the hot spares"
            raise StorageEditRefused(f"slot {s[0]}:{s[1]} already belongs to {what}")


def create_disk_group(bed: Bed, array_id: str, slots: Iterable[Slot], raid: str,
                      name: str | None = None, owner: str | None = None) -> Edit:
    array = _array(bed, array_id)
    wanted = _check_slots(array, slots)
    _refuse_used(array, wanted)
    if raid not in RAID_LEVELS:
        raise StorageEditRefused(f"unknown RAID level {raid!r}; choose one of {', '.join(RAID_LEVELS)}")
    problem = cap.member_problem(raid, len(wanted))
    if problem:
        raise StorageEditRefused(f"{problem}; {len(wanted)} selected")
    name = _clean_name(name, "disk group") if name else next_group_name(array)
    if any(g.name == name for g in array.disk_groups):
        raise StorageEditRefused(f"{array.id} already has a disk group {name!r}")
    owner = owner or ""
    if owner and owner not in {c.name for c in array.controllers}:
        raise StorageEditRefused(f"{array.id} has no controller {owner!r}")
    group = DiskGroup(name=name, raid=raid, members=compact_ranges(array, wanted), owner=owner)
    text = f"Create disk group {name} ({RAID_NAMES[raid]}, {len(wanted)} disks)"
    return _step([InsertItem(array.disk_groups, group)], text, array, group_id(array.id, name),
                 *(slot_id(array.id, s) for s in wanted))


def delete_disk_group(bed: Bed, array_id: str, name: str) -> Edit:
    array = _array(bed, array_id)
    group = _group(array, name)
    held = [v.name for v in array.volumes if v.group == name]
    if held:
        raise StorageEditRefused(f"disk group {name} holds volume(s) {', '.join(held)}: delete them first")
    return _step([RemoveItem(array.disk_groups, group)], f"Delete disk group {name}", array,
                 group_id(array.id, name), *(slot_id(array.id, s) for s in expand(group.members)))


def set_raid_level(bed: Bed, array_id: str, name: str, raid: str) -> Edit:
    array = _array(bed, array_id)
    group = _group(array, name)
    if raid not in RAID_LEVELS:
        raise StorageEditRefused(f"unknown RAID level {raid!r}; choose one of {', '.join(RAID_LEVELS)}")
    if raid == group.raid:
        raise StorageEditRefused(f"disk group {name} is already {RAID_NAMES[raid]}")
    members = len(expand(group.members))
    problem = cap.member_problem(raid, members)
    if problem:
        raise StorageEditRefused(f"{problem}; disk group {name} has {members}")
    edits: list[Edit] = [SetField(group, "raid", raid)]
    if group.geometry:   # a written 8D+1P belongs to the old level and would override the new one
        edits.append(SetField(group, "geometry", ""))
    return _step(edits, f"Set {name} to {RAID_NAMES[raid]}", array, group_id(array.id, name))


def mark_spares(bed: Bed, array_id: str, slots: Iterable[Slot]) -> Edit:
    array = _array(bed, array_id)
    wanted = _check_slots(array, slots)
    _refuse_used(array, wanted)
    new = compact_ranges(array, expand(array.spares) + wanted)
    text = f"Mark {len(wanted)} hot spare{'s' if len(wanted) != 1 else ''}"
    return _step([SetField(array, "spares", new)], text, array, *(slot_id(array.id, s) for s in wanted))


def unmark_spares(bed: Bed, array_id: str, slots: Iterable[Slot]) -> Edit:
    array = _array(bed, array_id)
    wanted = list(dict.fromkeys((str(e), int(s)) for e, s in slots))
    if not wanted:
        raise StorageEditRefused("select the hot spares to release in the slot map first")
    spares = expand(array.spares)
    for s in wanted:
        if s not in spares:
            raise StorageEditRefused(f"slot {s[0]}:{s[1]} is not a hot spare")
    new = compact_ranges(array, [s for s in spares if s not in set(wanted)])
    text = f"Release {len(wanted)} hot spare{'s' if len(wanted) != 1 else ''}"
    return _step([SetField(array, "spares", new)], text, array, *(slot_id(array.id, s) for s in wanted))


def create_volume(bed: Bed, array_id: str, name: str, group: str = "", pool: str = "",
                  size_gb: float | None = None, remainder: bool = False,
                  purpose: str | Iterable[str] = ()) -> Edit:
    array = _array(bed, array_id)
    name = _clean_name(name, "volume")
    if any(v.name == name for v in array.volumes):
        raise StorageEditRefused(f"{array.id} already has a volume {name!r}")
    if bool(group) == bool(pool):
        raise StorageEditRefused("put the volume in one disk group or one pool")
    purposes = [purpose] if isinstance(purpose, str) else list(purpose)
    purposes = [p for p in purposes if p]
    for p in purposes:
        if p not in VOLUME_PURPOSES:
            raise StorageEditRefused(f"unknown purpose {p!r}; choose one of {', '.join(VOLUME_PURPOSES)}")
    if group:
        g = _group(array, group)
        if g.pool:
            raise StorageEditRefused(f"disk group {group} belongs to pool {g.pool}: create the volume in the pool")
    else:
        _pool(array, pool)
    if remainder:
        size_gb = None
    elif size_gb is None or size_gb <= 0:
        raise StorageEditRefused("give the volume a size in GB, or let it take the remainder")
    use = usage(bed, array_id)[("group", group) if group else ("pool", pool)]
    where = f"disk group {group}" if group else f"pool {pool}"
    if use.known and not use.thin:
        if use.remainder:
            raise StorageEditRefused(f"{where} is taken by remainder volume(s) {', '.join(use.remainder)}; "
                                     "give them a size first")
        if remainder and use.free_gb <= 0:
            raise StorageEditRefused(f"{where} has no space left for a remainder volume")
        if size_gb is not None and size_gb > use.free_gb + 1e-9:
            raise StorageEditRefused(f"{where} has {use.free_gb:,.0f} GB free; the volume needs {size_gb:,.0f} GB")
    volume = Volume(name=name, size_gb=size_gb, remainder=remainder, group=group, pool=pool, purpose=purposes)
    size = "the remainder" if remainder else f"{size_gb:g} GB"
    return _step([InsertItem(array.volumes, volume)], f"Create volume {name} ({size} on {where})", array,
                 volume_id(array.id, name), group_id(array.id, group) if group else pool_id(array.id, pool))


def volume_users(bed: Bed, ref: str) -> list[str]:
    """What outside the array names the volume ARRAY:VOLUME: VM disks, clusters, paths, workloads ..."""
    out: list[str] = []
    for vm in bed.vms:
        out += [f"VM {vm.id} (disk {d.name})" for d in vm.disks if d.volume == ref]
    for c in bed.clusters:
        if ref in c.shared_volumes:
            out.append(f"cluster {c.id} (shared volume)")
        if c.witness == ref:
            out.append(f"cluster {c.id} (witness)")
    out += [f"path {p.initiator} -> {p.target}" for p in bed.paths if ref in p.volumes]
    out += [f"replication {r.source} -> {r.target}" for r in bed.replications if ref in (r.source, r.target)]
    out += [f"workload {w.id}" for w in bed.workloads if ref in w.targets]
    return out


def delete_volume(bed: Bed, array_id: str, name: str) -> Edit:
    array = _array(bed, array_id)
    volume = _volume(array, name)
    users = volume_users(bed, volume_id(array.id, name))
    if users:
        shown = ", ".join(users[:4]) + (f" and {len(users) - 4} more" if len(users) > 4 else "")
        raise StorageEditRefused(f"volume {name} is used by {shown}: move or remove those first")
    edits: list[Edit] = [RemoveItem(array.mappings, m) for m in array.mappings if m.volume == name]
    edits.append(RemoveItem(array.volumes, volume))
    return _step(edits, f"Delete volume {name}", array, volume_id(array.id, name))


def _resolve_existing_target(array: StorageArray, to: str) -> str:
    """An array host or host group name for `to`; a server that has an array host maps to it."""
    names = {h.name for h in array.hosts} | {g.name for g in array.host_groups}
    if to in names:
        return to
    for h in array.hosts:
        if h.server == to:
            return h.name
    return to


def _luns_seen_by(array: StorageArray, target: str) -> set[int]:
    """LUN numbers a target sees: its own mappings, its group's, and (for a group) its members'."""
    related = {target}
    groups = {g.name for g in array.host_groups}
    for h in array.hosts:
        if h.name == target and h.host_group:
            related.add(h.host_group)
        if target in groups and h.host_group == target:
            related.add(h.name)
    return {m.lun for m in array.mappings if m.to in related and m.lun is not None}


def map_volume(bed: Bed, array_id: str, volume: str, to: str, lun: int | None = None) -> Edit:
    """Map a volume to an array host, a host group, or a server/VM (its array host is created)."""
    array = _array(bed, array_id)
    _volume(array, volume)
    if not to:
        raise StorageEditRefused("choose the host or host group to map the volume to")
    target = _resolve_existing_target(array, to)
    edits: list[Edit] = []
    names = {h.name for h in array.hosts} | {g.name for g in array.host_groups}
    if target not in names:
        if not _is_machine(bed, to):
            raise StorageEditRefused(f"{to!r} is neither a host or host group of {array.id} nor a server or VM")
        edits.append(InsertItem(array.hosts, ArrayHost(name=to, server=to)))
    if any(m.volume == volume and m.to == target for m in array.mappings):
        raise StorageEditRefused(f"volume {volume} is already mapped to {target}")
    if lun is not None:
        if lun < 0:
            raise StorageEditRefused("a LUN number is 0 or more")
        if lun in _luns_seen_by(array, target):
            raise StorageEditRefused(f"{target} already sees LUN {lun}; choose another number")
    edits.append(InsertItem(array.mappings, Mapping(volume=volume, to=target, lun=lun)))
    text = f"Map {volume} to {target}" + (f" as LUN {lun}" if lun is not None else "")
    return _step(edits, text, array, volume_id(array.id, volume), to)


def unmap(bed: Bed, array_id: str, volume: str, to: str) -> Edit:
    array = _array(bed, array_id)
    target = _resolve_existing_target(array, to)
    for m in array.mappings:
        if m.volume == volume and m.to == target:
            return _step([RemoveItem(array.mappings, m)], f"Unmap {volume} from {target}", array,
                         volume_id(array.id, volume), to)
    raise StorageEditRefused(f"volume {volume} is not mapped to {to}")


def create_host_group(bed: Bed, array_id: str, name: str) -> Edit:
    array = _array(bed, array_id)
    name = _clean_name(name, "host group")
    if any(g.name == name for g in array.host_groups) or any(h.name == name for h in array.hosts):
        raise StorageEditRefused(f"{array.id} already has a host or host group named {name!r}")
    return _step([InsertItem(array.host_groups, HostGroup(name=name))], f"Create host group {name}", array)


def add_host_to_group(bed: Bed, array_id: str, host: str, group: str) -> Edit:
    """Put an array host (or a server/VM, whose array host is created) into a host group."""
    array = _array(bed, array_id)
    if not any(g.name == group for g in array.host_groups):
        raise StorageEditRefused(f"{array.id} has no host group {group!r}")
    name = _resolve_existing_target(array, host)
    existing = next((h for h in array.hosts if h.name == name), None)
    if existing is None:
        if not _is_machine(bed, host):
            raise StorageEditRefused(f"{host!r} is neither a host of {array.id} nor a server or VM")
        edit: Edit = InsertItem(array.hosts, ArrayHost(name=host, server=host, host_group=group))
    elif existing.host_group == group:
        raise StorageEditRefused(f"{name} is already in host group {group}")
    else:
        own = {m.lun for m in array.mappings if m.to == name and m.lun is not None}
        clash = own & {m.lun for m in array.mappings if m.to == group}
        if clash:
            raise StorageEditRefused(f"{name} and host group {group} both use LUN {min(clash)}")
        edit = SetField(existing, "host_group", group)
    return _step([edit], f"Add {name} to host group {group}", array, host)


def create_pool(bed: Bed, array_id: str, name: str, groups: Iterable[str], provisioning: str = "thick") -> Edit:
    array = _array(bed, array_id)
    name = _clean_name(name, "pool")
    if any(p.name == name for p in array.pools):
        raise StorageEditRefused(f"{array.id} already has a pool {name!r}")
    if provisioning not in ("thick", "thin"):
        raise StorageEditRefused("a pool is thick or thin")
    chosen = [_group(array, g) for g in dict.fromkeys(groups)]
    if not chosen:
        raise StorageEditRefused("select the disk groups the pool is built from")
    for g in chosen:
        if g.pool:
            raise StorageEditRefused(f"disk group {g.name} already belongs to pool {g.pool}")
        held = [v.name for v in array.volumes if v.group == g.name]
        if held:
            raise StorageEditRefused(f"disk group {g.name} holds volume(s) {', '.join(held)}; "
                                     "a pool's groups hold no volumes of their own")
    edits: list[Edit] = [InsertItem(array.pools, Pool(name=name, provisioning=provisioning))]
    edits += [SetField(g, "pool", name) for g in chosen]
    text = f"Create {provisioning} pool {name} from {len(chosen)} disk group{'s' if len(chosen) != 1 else ''}"
    return _step(edits, text, array, pool_id(array.id, name), *(group_id(array.id, g.name) for g in chosen))
