"""The edits behind the canvas's actions: user intents in, reversible `topology.edits` out.

Nothing here changes a bed.  Each function looks at the bed and returns one Edit (usually
a Compound) that the document applies as one undoable step, or raises `Refused` with a
sentence for the status bar.  A deletion also removes or clears everything that refers to
the deleted components (links, paths, mappings, virtual switches, VM placement ...), so the
bed still loads after any edit here; the tests check that with a dumps/loads round trip.
Copy and paste live in `topology.clipboard`, the diagram's geometry in `topology.layout`, the
cabling rules in `topology.cabling` (its `connect` and `LinkRefused` are reachable from here).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, fields, replace
from typing import Any

from topology.cabling import Connection as Connection
from topology.cabling import LinkRefused as LinkRefused
from topology.cabling import connect as connect
from topology.edits import Compound, Edit, InsertItem, RemoveItem, SetField
from topology.edits import Refused as Refused
from topology.fileformat import (
    plan,
    resolves,  # the loader's own reference check
)
from topology.ids import endpoint_device, taken_ids
from topology.index import BedIndex, parse_slot_range
from topology.layout import layout
from topology.model import (
    VM,
    Adapter,
    Bed,
    Chassis,
    Controller,
    DiskSet,
    Enclosure,
    Link,
    Network,
    Port,
    Server,
    StorageArray,
    Switch,
)

# ============================================================================ palette

@dataclass(frozen=True)
class Kind:
    key: str          # what the palette puts in its drag data
    label: str
    tip: str


PALETTE: tuple[Kind, ...] = (
    Kind("server:hypervisor", "Hypervisor host", "A virtualization host with LAN, 2 iSCSI, heartbeat, "
                                                 "live-migration and VM ports"),
    Kind("server:infrastructure", "Infrastructure server", "Domain controller, DNS, DHCP ..."),
    Kind("server:load_client", "Load client", "A machine that drives the workload"),
    Kind("server:management", "Management server", "Management station with LAN and management ports"),
    Kind("switch:ethernet", "Ethernet switch", "A 24-port Ethernet switch"),
    Kind("switch:fc", "FC switch", "A 24-port Fibre Channel switch (fabric A or B)"),
    Kind("chassis", "Blade chassis", "A blade chassis with 14 bays"),
    Kind("array", "Storage array", "Two controllers with 2 iSCSI ports each, one enclosure of 12 disks"),
    Kind("enclosure", "Enclosure", "12 more drive slots with disks: drop it on a storage array"),
    Kind("disk", "Disk", "A disk in the first empty slot: drop it on a storage array"),
    Kind("network", "Network", "An IP network (LAN, iSCSI ...)"),
    Kind("vm", "Virtual machine", "Drop it on a host to place it there"),
)
KINDS = {k.key: k for k in PALETTE}

_ID_PREFIX = {"hypervisor": "host", "infrastructure": "infra", "load_client": "client",
              "management": "mgmt", "test_controller": "ctl", "application": "app"}

# components with a canvas position in the model
POSITIONED = ("servers", "switches", "arrays", "chassis")


def parse_kind(kind: str, role: str | None = None) -> tuple[str, str | None]:
    """'server:hypervisor' -> ('server', 'hypervisor'); ('server', 'infrastructure') passes through."""
    base, _, sub = kind.partition(":")
    if base not in {k.key.partition(":")[0] for k in PALETTE}:
        raise Refused(f"{kind!r} is not a kind of component the palette offers")
    return base, (role or sub or None)


# ============================================================================ ids

def fresh_id(prefix: str, taken: set[str], *, first: int = 1) -> str:
    """prefix-1, prefix-2, ...: the first one nobody uses."""
    n = first
    while f"{prefix}-{n}" in taken:
        n += 1
    return f"{prefix}-{n}"


# ============================================================================ adding

def add_device(bed: Bed, kind: str, role: str | None = None, x: float | None = None,
               y: float | None = None, *, target: str | None = None) -> Edit:
    """One new component of a palette kind at (x, y) (top-left corner).

    `target` is the host a VM is placed on, or the array an enclosure or a disk goes into.
    """
    base, role = parse_kind(kind, role)
    taken = taken_ids(bed)
    if base == "server":
        role = role or "hypervisor"
        server = new_server(fresh_id(_ID_PREFIX.get(role, "server"), taken), role)
        server.x, server.y = x, y
        return InsertItem(bed.servers, server, text=f"Add {_words(role)} {server.id}")
    if base == "switch":
        fc = role == "fc"
        sw = Switch(id=fresh_id("fcsw" if fc else "sw", taken), kind="fc" if fc else "ethernet",
                    model="FC switch" if fc else "Ethernet switch", port_count=24, x=x, y=y)
        # described one by one: a cable lands on a port the canvas shows and the editor edits
        sw.ports = [Port(name=str(n), kind=sw.kind) for n in range(1, 25)]
        if fc:
            fabrics = [s.fabric for s in bed.switches if s.kind == "fc"]
            sw.fabric = "B" if fabrics.count("A") > fabrics.count("B") else "A"
        else:
            sw.mtu = 9000
        return InsertItem(bed.switches, sw, text=f"Add {'FC' if fc else 'Ethernet'} switch {sw.id}")
    if base == "chassis":
        ch = Chassis(id=fresh_id("chassis", taken), model="Blade chassis", bays=14, x=x, y=y)
        return InsertItem(bed.chassis, ch, text=f"Add blade chassis {ch.id}")
    if base == "array":
        arr = new_array(fresh_id("array", taken))
        arr.x, arr.y = x, y
        return InsertItem(bed.arrays, arr, text=f"Add storage array {arr.id}")
    if base == "network":
        net = Network(id=fresh_id("net", taken), role=role or "lan")
        return InsertItem(bed.networks, net, text=f"Add network {net.id}")
    if base == "vm":
        host = ""
        if target:
            if target not in {s.id for s in bed.servers}:
                raise Refused(f"{target} is not a server: drop the VM on a host")
            host = target
        vm = VM(id=fresh_id("vm", taken), host=host, vcpu=2, memory_gb=4, role="vm")
        return InsertItem(bed.vms, vm, text=f"Add VM {vm.id}" + (f" on {host}" if host else ""))
    if base in ("enclosure", "disk"):
        array = next((a for a in bed.arrays if a.id == target), None) if target else None
        if array is None:
            raise Refused(f"Drop the {base} on a storage array")
        return _add_enclosure(array) if base == "enclosure" else _add_disk(array)
    raise Refused(f"{kind!r} cannot be added here")  # pragma: no cover - parse_kind filters


def _words(role: str) -> str:
    return {"hypervisor": "hypervisor host", "load_client": "load client"}.get(role, f"{role} server")


def new_server(ident: str, role: str) -> Server:
    def port(name: str, roles: list[str], **kw: Any) -> Port:
        return Port(name=name, kind="ethernet", roles=roles, **kw)

    if role in ("hypervisor", "application"):
        adapters = [Adapter(name="NIC1", ports=[port("LAN1", ["lan"]), port("HB1", ["heartbeat"]),
                                                port("LM1", ["live_migration"]), port("VM1", ["vm"])]),
                    Adapter(name="NIC2", ports=[port("SAN1", ["iscsi"], mtu=9000, flow_control=True),
                                                port("SAN2", ["iscsi"], mtu=9000, flow_control=True)])]
    elif role == "management":
        adapters = [Adapter(name="NIC1", ports=[port("LAN1", ["lan"]), port("MGMT1", ["management"])])]
    else:
        adapters = [Adapter(name="NIC1", ports=[port("LAN1", ["lan"])])]
    server = Server(id=ident, role=role, model="Server", adapters=adapters)
    if role in ("hypervisor", "application"):
        server.multipath = "MPIO/DSM"
    return server


def new_array(ident: str) -> StorageArray:
    controllers = [Controller(name=c, ports=[Port(name=f"{c}{i}", kind="ethernet", roles=["iscsi"], mtu=9000)
                                             for i in range(2)]) for c in ("A", "B")]
    enclosure = Enclosure(name="E0", slots=12, disks=[DiskSet(slots="0-11", size_gb=600, rpm=10000,
                                                              media="hdd", interface="sas")])
    return StorageArray(id=ident, model="iSCSI storage array", connectivity="iscsi",
                        controllers=controllers, enclosures=[enclosure])


def _add_enclosure(array: StorageArray) -> Edit:
    names = {e.name for e in array.enclosures}
    n = 0
    while f"E{n}" in names:
        n += 1
    enc = Enclosure(name=f"E{n}", slots=12, disks=[DiskSet(slots="0-11", size_gb=600, rpm=10000,
                                                           media="hdd", interface="sas")])
    return InsertItem(array.enclosures, enc, text=f"Add enclosure {enc.name} to {array.id}", owner=array.id)


def _add_disk(array: StorageArray) -> Edit:
    for enc in array.enclosures:
        used: set[int] = set()
        for ds in enc.disks:
            try:
                used.update(parse_slot_range(ds.slots))
            except ValueError:
                continue
        free = next((s for s in range(enc.slots) if s not in used), None)
        if free is None:
            continue
        like = enc.disks[-1] if enc.disks else DiskSet(slots="0", size_gb=600, rpm=10000)
        disk = replace(like, slots=str(free))
        return InsertItem(enc.disks, disk, text=f"Add a disk to {array.id}:{enc.name}:{free}", owner=array.id)
    raise Refused(f"{array.id} has no empty drive slot: add an enclosure first")


# ============================================================================ moving

def move(bed: Bed, positions: dict[str, tuple[float, float]], text: str = "") -> Edit:
    """One step that puts each listed device at its new top-left corner."""
    by_id = {c.id: c for name in POSITIONED for c in getattr(bed, name)}
    moves: list[SetField] = []
    for ident, (x, y) in positions.items():
        dev = by_id.get(ident)
        if dev is None:
            continue
        x, y = round(float(x), 1), round(float(y), 1)
        if dev.x != x:
            moves.append(SetField(dev, "x", x, owner=ident))
        if dev.y != y:
            moves.append(SetField(dev, "y", y, owner=ident))
    moved = len({e.owner for e in moves})
    return Compound(list(moves), text or (f"Move {moved} devices" if moved != 1 else f"Move {moves[0].owner}"))


def apply_layout(bed: Bed) -> Edit:
    """Every device at its place in the automatic (tiered) layout, as one step."""
    boxes = layout(bed, keep_positions=False)
    by_id = {c.id for name in POSITIONED for c in getattr(bed, name)}
    return move(bed, {i: (b.x, b.y) for i, b in boxes.items() if i in by_id}, text="Automatic layout")


# ============================================================================ deleting

_TOP_LISTS = tuple(f.name for f in fields(Bed) if f.name not in ("format_version", "bed", "policy", "run_plan"))


def top_items(bed: Bed) -> Iterator[tuple[list | None, Any]]:
    """Each top-level object with the list that holds it (None for the single run plan)."""
    for name in _TOP_LISTS:
        coll = getattr(bed, name)
        for item in coll:
            yield coll, item
    if bed.run_plan is not None:
        yield None, bed.run_plan


def ref_slots(obj: Any, array: Any = None, container: list | None = None) -> Iterator[tuple]:
    """(object, field plan, array scope, list holding the object) for every reference field."""
    if isinstance(obj, StorageArray):
        array = obj
    for fp in plan(type(obj)):
        if fp.meta.get("ref"):
            yield obj, fp, array, container
        elif fp.kind == "dc":
            v = getattr(obj, fp.attr)
            if v is not None:
                yield from ref_slots(v, array, None)
        elif fp.kind == "list" and fp.inner[0] == "dc":
            items = getattr(obj, fp.attr)
            for item in items:
                yield from ref_slots(item, array, items)


def _shallow_without(bed: Bed, doomed: set[int]) -> Bed:
    """The bed as it would be without the doomed top-level objects (lists rebuilt, objects shared)."""
    changes: dict[str, Any] = {name: [x for x in getattr(bed, name) if id(x) not in doomed] for name in _TOP_LISTS}
    return replace(bed, **changes)


def _find_components(bed: Bed, ids: Iterable[str]) -> list[tuple[list, Any]]:
    wanted = set(ids)
    out = []
    for name in ("servers", "switches", "arrays", "chassis", "vms", "networks", "virtual_switches",
                 "clusters", "workloads", "scenarios"):
        coll = getattr(bed, name)
        out += [(coll, c) for c in coll if c.id in wanted]
    return out


def delete(bed: Bed, ids: Iterable[str], links: Iterable[Link] = ()) -> Edit:
    """Remove components (and chosen links) with everything that refers to them, as one step."""
    victims = _find_components(bed, ids)
    chosen = [(bed.links, lk) for lk in links if any(lk is x for x in bed.links)]
    if not victims and not chosen:
        raise Refused("Nothing to delete: select devices or links first")
    names = [c.id for _, c in victims]
    if names:
        text = f"Delete {names[0]}" if len(names) == 1 else f"Delete {len(names)} components"
    else:
        text = "Delete link" if len(chosen) == 1 else f"Delete {len(chosen)} links"
    return Compound(_cascade(bed, victims + chosen), text)


def _cascade(bed: Bed, removals: list[tuple[list, Any]]) -> list[Edit]:
    before = BedIndex(bed)
    doomed: dict[int, tuple[list, Any]] = {id(obj): (coll, obj) for coll, obj in removals}
    nested: dict[int, tuple[list, Any]] = {}
    while True:
        future = _shallow_without(bed, set(doomed))
        idx = BedIndex(future)
        grew = False
        for link in future.links:
            for end in (link.a, link.b):
                if idx.endpoint_device(end) is None and before.endpoint_device(end) is not None:
                    doomed[id(link)] = (bed.links, link)
                    grew = True
                    break
        originals = {id(getattr(future, name)): getattr(bed, name) for name in _TOP_LISTS}
        for future_coll, item in top_items(future):
            coll = originals[id(future_coll)] if future_coll is not None else None
            for obj, fp, array, container in ref_slots(item):
                if not fp.required or fp.kind == "list" or id(obj) in nested:
                    continue
                v = getattr(obj, fp.attr)
                kind = fp.meta["ref"]
                if v and not resolves(idx, kind, v, array) and resolves(before, kind, v, array):
                    if obj is item and coll is not None:
                        doomed[id(item)] = (coll, item)
                        grew = True
                        break
                    if container is not None:
                        nested[id(obj)] = (container, obj)
        if not grew:
            break
    edits: list[Edit] = [RemoveItem(coll, obj, owner=item_owner(obj)) for coll, obj in doomed.values()]
    edits += [RemoveItem(coll, obj) for coll, obj in nested.values()]
    edits += clear_dangling(future, idx, before, skip=set(nested))
    return edits


def item_owner(obj: Any) -> str:
    if isinstance(obj, Link):
        return endpoint_device(obj.a)
    return getattr(obj, "id", "") or ""


def clear_dangling(bed: Bed, idx: BedIndex, before: BedIndex | None, skip: Set[int] = frozenset()) -> list[Edit]:
    """Blank optional references and drop list entries that no longer resolve.

    With `before`, only references that resolved there are touched (a deletion cleans up
    after itself and nothing else); without it, every unresolved reference is cleared.
    """
    def broken(kind: str, v: str, array: Any) -> bool:
        return not resolves(idx, kind, v, array) and (before is None or resolves(before, kind, v, array))

    edits: list[Edit] = []
    for _coll, item in top_items(bed):
        owner = getattr(item, "id", "") or ""
        for obj, fp, array, _container in ref_slots(item):
            if id(obj) in skip:
                continue
            v = getattr(obj, fp.attr)
            kind = fp.meta["ref"]
            if fp.kind == "list":
                kept = [x for x in v if not (x and broken(kind, x, array))]
                if len(kept) != len(v):
                    edits.append(SetField(obj, fp.attr, kept, owner=owner))
            elif v and broken(kind, v, array):
                edits.append(SetField(obj, fp.attr, "" if isinstance(v, str) else None, owner=owner))
    for sc in bed.scenarios:
        kept_map = {vm: host for vm, host in sc.placement.items()
                    if vm in idx.vms and host in idx.servers}
        if len(kept_map) != len(sc.placement):
            edits.append(SetField(sc, "placement", kept_map, owner=sc.id))
    if bed.configurations:
        from topology.configurations import resolve as configured_part
        for cfg in bed.configurations:    # settings of a part that is gone go with it
            kept_set = {k: v for k, v in cfg.overrides.items() if configured_part(bed, idx, k) is not None
                        or before is not None and configured_part(before.bed, before, k) is None}
            cleared = _replaced_lists_cleared(bed, idx, before, cfg, kept_set)
            if cleared is not None or len(kept_set) != len(cfg.overrides):
                edits.append(SetField(cfg, "overrides", cleared if cleared is not None else kept_set, owner=cfg.id))
    return edits


def _replaced_lists_cleared(bed: Bed, idx: BedIndex, before: BedIndex | None, cfg: Any,
                           kept: dict[str, Any]) -> dict[str, Any] | None:
    """`kept` (what the configuration sets of parts still there) without its references to what is gone
    inside the lists it gives in full (its own hosts, mappings, disks): an optional one is left out, a
    list entry dropped, an item that cannot be without it (a required reference) goes, so the
    configuration still loads.  None when nothing there names what is gone."""
    import copy
    import dataclasses

    from topology.configurations import _check_lists, resolve
    from topology.field_plan import plan
    where = ("configurations", 0)
    trial = dataclasses.replace(cfg, overrides=kept)        # judged as the configuration will read
    trial_bed = dataclasses.replace(bed, configurations=[trial if c is cfg else c for c in bed.configurations])
    broken = {path for path, _m, _h in _check_lists(trial_bed, idx, trial, where) if path[2] == "set"}
    if before is not None:
        broken -= {path for path, _m, _h in _check_lists(before.bed, before, cfg, where) if path[2] == "set"}
    if not broken:
        return None
    new = copy.deepcopy(kept)
    doomed: set[tuple] = set()
    for path in sorted(broken, key=lambda p: [str(x) for x in p], reverse=True):
        ref, key, j, *rest = path[3:]
        target = resolve(bed, idx, ref)
        if target is None or not rest:
            continue
        obj = getattr(target.obj, next(fp.attr for fp in plan(type(target.obj)) if fp.key == key))[j]
        raw = new[ref][key][j]
        for step in rest[:-1]:
            if isinstance(step, int):
                obj, raw = obj[step], raw[step]
            else:
                obj = getattr(obj, next(fp.attr for fp in plan(type(obj)) if fp.key == step))
                raw = raw[step]
        last = rest[-1]
        if isinstance(last, int):
            del raw[last]
        elif next(fp for fp in plan(type(obj)) if fp.key == last).required:
            doomed.add((ref, key, j))
        else:
            raw.pop(last, None)
    for ref, key, j in sorted(doomed, reverse=True):
        del new[ref][key][j]
    return new
