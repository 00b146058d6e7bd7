"""Finding a model object by its subject id, and renaming it with every reference in one edit.

Subject ids are the validator's (see app/selection.py): a component ``R710-1``, a port or
virtual NIC ``R710-1:SAN1``, a volume ``MD3000i:Logs``, a disk group ``MD3000i:group:SQL``,
a pool ``MD3000i:pool:Pool 0``, a controller or enclosure ``MD3000i:Controller 0``, a slot
``MD3000i:E0:3``.  `locate` turns one into the object behind it; `rename` returns one
reversible edit that changes the name and rewrites every place the bed refers to it
(links, paths, VM placement, mappings, cluster nodes, documented exceptions ...), so a
rename is a single undoable step and the renamed bed still loads.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from topology.edits import Compound, Edit, SetField
from topology.field_plan import cache_by_class
from topology.fileformat import plan
from topology.ids import (
    GROUP,
    POOL,
    SEP,
    find_component,
    group_ref,
    owner_of,
    parse_array_part,
    pool_ref,
    port_ref,
    split_owner,
)
from topology.index import BedIndex, parse_slot_range
from topology.model import (
    VM,
    ArrayGroup,
    ArrayHost,
    Bed,
    ExceptionRecord,
    Link,
    Mapping,
    Result,
    Scenario,
    Server,
    StorageArray,
    Switch,
)
from topology.names import field_problem


class RenameError(ValueError):
    """The new name is empty, malformed or already taken; the message says which."""


# ============================================================================ locating

@dataclass
class Located:
    """The object behind a subject id, with what is needed to edit and rename it."""
    subject: str
    kind: str                  # server, switch, storage array, VM, ..., port, volume, disk group, pool,
    #                            controller, enclosure, disk set
    obj: Any                   # the model object the form edits
    device: Any                # the top-level component holding it (itself for a component)
    array: StorageArray | ArrayGroup | None = None     # the scope its local names are looked up in
    detail: str = ""           # e.g. "slot 3 of E0" for a disk set reached through a slot

    @property
    def owner(self) -> str:
        """The component id an edit of this object touches."""
        return self.device.id

    @property
    def name_attr(self) -> str | None:
        """The attribute holding the name a rename changes (None: not renamable)."""
        if self.kind == "disk set":
            return None
        return "id" if self.obj is self.device and not isinstance(self.obj, ArrayGroup) else "name"

    @property
    def name(self) -> str | None:
        """The name a rename changes (None: not renamable)."""
        attr = self.name_attr
        return None if attr is None else getattr(self.obj, attr)

    def subject_with(self, name: str) -> str:
        """The subject id this object would have under another name."""
        dev = self.device.id
        if self.obj is self.device:
            return name
        if self.kind == "disk group":
            return group_ref(dev, name)
        if self.kind == "pool":
            return pool_ref(dev, name)
        return port_ref(dev, name)

    def current_subject(self) -> str:
        """The subject id now (after a rename or its undo the object keeps its identity)."""
        name = self.name
        if name is None:  # a disk set is named by its slots
            return self.subject
        return self.subject_with(name)


def locate(bed: Bed, subject: str) -> Located | None:
    """The object a subject id names, or None when nothing in the bed has that id."""
    if not subject:
        return None
    hit = find_component(bed, subject)
    if hit is not None:
        return Located(subject, hit[0], hit[1], hit[1], hit[1] if isinstance(hit[1], StorageArray) else None)
    dev_id, rest = split_owner(subject)
    group = next((g for g in bed.array_groups if g.name == (dev_id if SEP in subject else subject)), None)
    if group is not None:       # an array group (its card) or one of its pools or volumes
        return Located(subject, "array group", group, group, None) if SEP not in subject else \
            _locate_in_group(subject, group, rest)
    hit = find_component(bed, dev_id) if SEP in subject else None
    if hit is None:
        return None
    word, dev = hit
    if isinstance(dev, Server):
        port = next((p for ad in dev.adapters for p in ad.ports if p.name == rest), None)
        return Located(subject, "port", port, dev) if port else None
    if isinstance(dev, Switch):
        port = next((p for p in dev.ports if p.name == rest), None)
        return Located(subject, "port", port, dev) if port else None
    if isinstance(dev, VM):
        nic = next((n for n in dev.nics if n.name == rest), None)
        return Located(subject, "virtual NIC", nic, dev) if nic else None
    if isinstance(dev, StorageArray):
        return _locate_in_array(subject, dev, rest)
    return None


def _locate_in_array(subject: str, a: StorageArray, rest: str) -> Located | None:
    part = parse_array_part(rest)
    if part.kind == GROUP and part.name:
        g = next((g for g in a.disk_groups if g.name == part.name), None)
        return Located(subject, "disk group", g, a, a) if g else None
    if part.kind == POOL and part.name:
        pool = next((p for p in a.pools if p.name == part.name), None)
        return Located(subject, "pool", pool, a, a) if pool else None
    for c in a.controllers:
        for p in c.ports:
            if p.name == rest:
                return Located(subject, "port", p, a, a, detail=f"on {c.name}")
    for kind, items in (("volume", a.volumes), ("controller", a.controllers), ("enclosure", a.enclosures)):
        for item in items:
            if item.name == rest:
                return Located(subject, kind, item, a, a)
    if part.slot is None:
        return None
    enc_name, slot = part.slot
    enc = next((e for e in a.enclosures if e.name == enc_name), None)
    if enc is not None:
        for ds in enc.disks:
            if slot in _slots(ds.slots):
                return Located(subject, "disk set", ds, a, a,
                               detail=f"slot {slot} of {enc.name}; the disks in slots {ds.slots} share these values")
    return None


def _locate_in_group(subject: str, g: ArrayGroup, rest: str) -> Located | None:
    """A pool (GROUP:pool:NAME) or volume (GROUP:VOLUME) of an array group: the group is their scope,
    as an array is its own parts' (`array`: where their local references are looked up)."""
    part = parse_array_part(rest)
    if part.kind == POOL and part.name:
        pool = next((p for p in g.pools if p.name == part.name), None)
        return Located(subject, "pool", pool, g, g) if pool else None
    volume = next((v for v in g.volumes if v.name == rest), None)
    return Located(subject, "volume", volume, g, g) if volume else None


def _slots(text: str) -> range:
    try:
        return parse_slot_range(text)
    except ValueError:
        return range(0)


# ============================================================================ reference candidates

def ref_candidates(bed: Bed, kind: str, array: StorageArray | ArrayGroup | None = None,
                   idx: BedIndex | None = None) -> list[str]:
    """The ids a reference field of this kind may name (the loader refuses anything else)."""
    if kind == "array" and isinstance(array, ArrayGroup):   # a group's pool spans members of the group only
        return [a.id for a in bed.arrays if a.group == array.name]
    idx = idx or BedIndex(bed)
    tables: dict[str, dict[str, Any]] = {
        "server": idx.servers, "switch": idx.switches, "array": idx.arrays, "network": idx.networks,
        "chassis": idx.chassis, "cluster": idx.clusters, "vm": idx.vms, "workload": idx.workloads,
        "scenario": idx.scenarios, "vswitch": idx.vswitches, "device": idx.components}
    if kind in tables:
        return list(tables[kind])
    if kind == "port":
        return idx.port_refs()
    if kind == "volume":
        return list(idx.volumes)
    if kind == "component":
        return list(idx.components) + idx.port_refs()
    if kind == "target":
        return list(idx.components) + list(idx.volumes)
    if array is None:
        return []
    # an array group has no disk groups, controllers or enclosures of its own
    local: dict[str, list[Any]] = {
        "disk_group": getattr(array, "disk_groups", []), "pool": array.pools,
        "controller": getattr(array, "controllers", []), "local_volume": array.volumes,
        "host_group": array.host_groups, "array_target": list(array.hosts) + list(array.host_groups),
        "enclosure": getattr(array, "enclosures", [])}
    return [x.name for x in local.get(kind, [])]


# ============================================================================ renaming

@dataclass
class _SetItem(Edit):
    """Replace one entry of a list (or one value of a mapping) in place."""
    container: Any
    key: Any
    new: Any
    owner: str = ""
    old: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.old = self.container[self.key]

    def apply(self) -> None:
        self.container[self.key] = self.new

    def revert(self) -> None:
        self.container[self.key] = self.old

    def touched(self) -> set[str]:
        return {self.owner} if self.owner else set()


@dataclass
class _RewriteMapping(Edit):
    """Replace a mapping's items in place, keeping their order (renamed keys)."""
    mapping: dict
    items: list[tuple[Any, Any]]
    owner: str = ""
    old: list[tuple[Any, Any]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.old = list(self.mapping.items())

    def apply(self) -> None:
        self.mapping.clear()
        self.mapping.update(self.items)

    def revert(self) -> None:
        self.mapping.clear()
        self.mapping.update(self.old)

    def touched(self) -> set[str]:
        return {self.owner} if self.owner else set()


@dataclass
class Rename(Compound):
    """A rename with its reference rewrites; touches both the old and the new id."""
    old: str = ""
    new: str = ""

    def touched(self) -> set[str]:
        ids = super().touched()
        return ids | {owner_of(self.old), owner_of(self.new)}


# Fields that hold ids without declaring a reference kind, and how to read them.
_EXTRA_KINDS: dict[tuple[type, str], str] = {
    (Link, "a"): "endpoint", (Link, "b"): "endpoint",
    (ArrayHost, "initiators"): "endpoint",
    (Mapping, "ports"): "array_port",
    (ExceptionRecord, "subject"): "subject",
    (Result, "subject"): "component",
}
_MEMBER_FIELDS = {("DiskGroup", "members"), ("StorageArray", "spares")}

@cache_by_class
def _walk_plan(cls: type) -> tuple[tuple[str, str, str], ...]:
    """(attr, how, kind) for the fields of `cls` that can hold an id or contain records that do;
    plain values are skipped, so a walk over a big bed visits only what matters."""
    out = []
    for fp in plan(cls):
        kind = fp.meta.get("ref") or _EXTRA_KINDS.get((cls, fp.attr))
        if (cls.__name__, fp.attr) in _MEMBER_FIELDS:
            kind = "member"
        if cls is Scenario and fp.attr == "placement":
            out.append((fp.attr, "placement", "placement"))
        elif kind:
            out.append((fp.attr, "list" if fp.kind == "list" else "value", kind))
        elif fp.kind == "dc":
            out.append((fp.attr, "record", ""))
        elif fp.kind == "list" and fp.inner[0] == "dc":
            out.append((fp.attr, "records", ""))
    return tuple(out)


def _sites(obj: Any, array: StorageArray | ArrayGroup | None,
           owner: str) -> Iterator[tuple[Any, str, Any, Any, str, Any, str]]:
    """(holder, attr, key, value, kind, array, owner) for every place an id is written.

    key is None for a plain attribute, an index for a list entry; placement mappings are
    yielded whole with kind "placement"."""
    if isinstance(obj, (StorageArray, ArrayGroup)):     # the scope of the local names below it
        array = obj
    for attr, how, kind in _walk_plan(type(obj)):
        value = getattr(obj, attr)
        if how == "value":
            if isinstance(value, str) and value:
                yield obj, attr, None, value, kind, array, owner
        elif how == "list":
            for i, item in enumerate(value):
                if isinstance(item, str) and item:
                    yield obj, attr, i, item, kind, array, owner
        elif how == "placement":
            yield obj, attr, None, value, kind, array, owner
        elif how == "record":
            if value is not None:
                yield from _sites(value, array, owner)
        else:
            for item in value:
                yield from _sites(item, array, owner)


def _all_sites(bed: Bed) -> Iterator[tuple[Any, str, Any, Any, str, Any, str]]:
    for fp in plan(Bed):
        value = getattr(bed, fp.attr)
        if fp.kind == "list" and fp.inner[0] == "dc":
            for item in value:
                owner = getattr(item, "id", "") if isinstance(getattr(item, "id", None), str) else ""
                if not owner and hasattr(item, "host") and isinstance(item.host, str):
                    owner = item.host                         # a path belongs to its host
                yield from _sites(item, None, owner)
        elif fp.kind == "dc" and value is not None:
            yield from _sites(value, None, "")


_GLOBAL_KINDS = {"server", "switch", "array", "network", "chassis", "cluster", "vm", "workload",
                 "scenario", "vswitch", "device"}
_PREFIXED_KINDS = {"port", "component", "target", "volume", "endpoint", "subject"}


def _translator(loc: Located, old: str, new: str, new_name: str) -> Callable[[str, str, Any], str | None]:
    """A function (value, kind, array) -> renamed value, or None when the value is unaffected."""
    if loc.obj is loc.device:
        prefix, new_prefix = old + ":", new + ":"

        def component(value: str, kind: str, array: Any) -> str | None:
            if kind in _GLOBAL_KINDS:
                return new if value == old else None
            if kind in _PREFIXED_KINDS:
                if value == old:
                    return new
                if value.startswith(prefix):
                    return new_prefix + value[len(prefix):]
            return None
        return component

    home = loc.array
    old_name = loc.name
    local_kind = {"port": "array_port", "volume": "local_volume", "disk group": "disk_group", "pool": "pool",
                  "controller": "controller", "enclosure": "member"}.get(loc.kind)
    global_kinds = {"port": {"port", "component", "target", "endpoint", "subject"},
                    "virtual NIC": {"port", "component", "target", "endpoint", "subject"},
                    "volume": {"volume", "target", "subject"}}.get(loc.kind, {"subject", "component"})
    old_prefix, new_prefix = old + SEP, new + SEP

    def part(value: str, kind: str, array: Any) -> str | None:
        if kind in global_kinds:
            if value == old:
                return new
            if loc.kind == "enclosure" and kind in ("subject", "component") and value.startswith(old_prefix):
                return new_prefix + value[len(old_prefix):]       # slots A:E0:3 (a scenario's pulled drive too)
            return None
        if home is not None and array is home and kind == local_kind:
            if kind == "member":
                enc, sep, slots = value.rpartition(":")
                return f"{new_name}:{slots}" if sep and enc == old_name else None
            return new_name if value == old_name else None
        return None
    return part


def check_name(bed: Bed, loc: Located, name: str) -> str | None:
    """Why `name` cannot be the new name of `loc`'s object, or None when it can."""
    what = loc.kind
    if not name or not name.strip():
        return f"a {what} needs a name"
    if name != name.strip():
        return "a name cannot start or end with a space"
    if ":" in name:
        return "a name cannot contain ':' (it separates a device from its ports and volumes)"
    problem = field_problem(type(loc.obj), loc.name_attr or "name", name)   # what the loader would refuse
    if problem is not None:
        return f"{problem[0]} — {problem[1]}"
    if name == loc.name:
        return None
    if loc.obj is loc.device:
        hit = find_component(bed, name)
        if hit is None and any(g.name == name for g in bed.array_groups):
            hit = ("array group", None)
        return f"{name!r} is already used by a {hit[0]}" if hit else None
    dev = loc.device
    if isinstance(dev, ArrayGroup):     # its pools; its volumes (GROUP:VOLUME)
        taken = {p.name: "pool" for p in dev.pools} if loc.kind == "pool" else \
            {v.name: "volume" for v in dev.volumes}
    elif isinstance(dev, StorageArray):
        if loc.kind == "disk group":
            taken = {g.name: "disk group" for g in dev.disk_groups}
        elif loc.kind == "pool":
            taken = {p.name: "pool" for p in dev.pools}
        else:
            # ports, volumes, controllers and enclosures share the ARRAY:NAME subject ids
            taken = {}
            for c in dev.controllers:
                taken[c.name] = "controller"
                taken.update({p.name: "port" for p in c.ports})
            taken.update({v.name: "volume" for v in dev.volumes})
            taken.update({e.name: "enclosure" for e in dev.enclosures})
    elif isinstance(dev, Server):
        taken = {p.name: "port" for ad in dev.adapters for p in ad.ports}
    elif isinstance(dev, Switch):
        taken = {p.name: "port" for p in dev.ports}
    elif isinstance(dev, VM):
        taken = {n.name: "virtual NIC" for n in dev.nics}
    else:
        taken = {}
    if name in taken:
        return f"{dev.id} already has a {taken[name]} named {name!r}"
    return None


def rename(bed: Bed, old: str, new: str) -> Edit:
    """One edit that renames subject `old` to `new` and rewrites every reference to it.

    `new` is the full subject id (``R710-9``, ``R710-1:SAN9``, ``MD3000i:group:DB``).
    Raises RenameError with a readable message when the rename is not possible."""
    loc = locate(bed, old)
    if loc is None:
        raise RenameError(f"nothing in the bed is called {old!r}")
    name_attr = loc.name_attr
    if name_attr is None:
        raise RenameError(f"a {loc.kind} has no name of its own to change")
    name = new if loc.obj is loc.device else new[len(loc.subject_with("")):]
    if loc.subject_with(name) != new:
        raise RenameError(f"{new!r} does not name a {loc.kind} of {loc.device.id}")
    problem = check_name(bed, loc, name)
    if problem:
        raise RenameError(problem)
    text = f"Rename {old} to {new}"
    if new == old:
        return Rename([], text, old=old, new=new)
    translate = _translator(loc, old, new, name)
    edits: list[Edit] = [SetField(loc.obj, name_attr, name, text=text, owner=loc.owner)]
    if isinstance(loc.obj, ArrayGroup):     # its members name it in their `group` (plain text, no reference)
        edits += [SetField(a, "group", name, text=text, owner=a.id) for a in bed.arrays if a.group == old]
    for holder, attr, key, value, kind, array, owner in list(_all_sites(bed)):
        if kind == "placement":
            items = [(_maybe(translate, k, "vm", array), _maybe(translate, v, "server", array))
                     for k, v in value.items()]
            if items != list(value.items()):
                edits.append(_RewriteMapping(value, items, owner=owner))
            continue
        renamed = translate(value, kind, array)
        if renamed is None or renamed == value:
            continue
        if key is None:
            edits.append(SetField(holder, attr, renamed, text=text, owner=owner))
        else:
            edits.append(_SetItem(getattr(holder, attr), key, renamed, owner=owner))
    idx = None
    for cfg in bed.configurations:      # what each configuration sets is keyed by subject id
        if idx is None:
            from topology.index import BedIndex
            idx = BedIndex(bed)
        lists = _renamed_in_lists(bed, idx, cfg.overrides, translate)
        items = [(_maybe(translate, k, "subject", None), lists.get(k, v)) for k, v in cfg.overrides.items()]
        if items != list(cfg.overrides.items()):
            edits.append(SetField(cfg, "overrides", dict(items), text=text, owner=cfg.id))
    return Rename(edits, text, old=old, new=new)


def _renamed_in_lists(bed: Bed, idx: Any, overrides: dict[str, Any],
                      translate: Callable[[str, str, Any], str | None]) -> dict[str, Any]:
    """The `set:` entries whose lists of parts (given in full: a group's access records, a VM's disks)
    name what is renamed, rewritten: subject id -> its new fields.  The parts are plain data there, read
    with the field plan of the class each list holds."""
    from topology.configurations import resolve
    out: dict[str, Any] = {}
    for ref, fields in overrides.items():
        target = resolve(bed, idx, ref) if isinstance(fields, dict) else None
        if target is None:
            continue
        changed = dict(fields)
        for fp in plan(type(target.obj)):
            raw = fields.get(fp.key)
            if fp.kind == "list" and fp.inner[0] == "dc" and isinstance(raw, list):
                new = [_renamed_raw(fp.inner[1], item, target.array, translate) for item in raw]
                if new != raw:
                    changed[fp.key] = new
        if changed != fields:
            out[ref] = changed
    return out


def _renamed_raw(cls: type, raw: Any, array: Any, translate: Callable[[str, str, Any], str | None]) -> Any:
    """One part as a file writes it (a mapping of its fields), with the ids it names renamed."""
    if not isinstance(raw, dict):
        return raw
    if isinstance(cls, type) and issubclass(cls, StorageArray):
        array = None        # a part of its own array: its own names
    by_key = {fp.key: fp for fp in plan(cls)}
    out = dict(raw)
    for attr, how, kind in _walk_plan(cls):
        fp = next(f for f in by_key.values() if f.attr == attr)
        value = raw.get(fp.key)
        if value is None:
            continue
        if how == "value":
            out[fp.key] = _maybe(translate, value, kind, array)
        elif how == "list" and isinstance(value, list):
            out[fp.key] = [_maybe(translate, v, kind, array) for v in value]
        elif how == "record":
            out[fp.key] = _renamed_raw(fp.inner[1] if isinstance(fp.inner, tuple) else fp.inner, value, array,
                                       translate)
        elif how == "records" and isinstance(value, list):
            out[fp.key] = [_renamed_raw(fp.inner[1], v, array, translate) for v in value]
    return out


def _maybe(translate: Callable[[str, str, Any], str | None], value: Any, kind: str, array: Any) -> Any:
    if not isinstance(value, str):
        return value
    renamed = translate(value, kind, array)
    return value if renamed is None else renamed
