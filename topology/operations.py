"""The edits behind the canvas's actions: user intents in, reversible `topology.edits` out.

Nothing here changes a bed.  Each function looks at the bed and returns one Edit (usually
a Compound) that the document applies as one undoable step, or raises `Refused` with a
sentence for the status bar.  A deletion also removes or clears everything that refers to
the deleted components (links, paths, mappings, virtual switches, VM placement ...), so the
bed still loads after any edit here; the tests check that with a dumps/loads round trip.

The diagram's geometry that is not Qt (how big a device is drawn, where an unplaced device
goes) lives here too, so the canvas, the exported image and the printed appendix agree.
"""
from __future__ import annotations

import copy as _copy
import math
import re
from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Iterator

from topology.edits import Compound, Edit, InsertItem, RemoveItem, SetField
from topology.errors import BedFileError
from topology.fileformat import (
    dumps,
    loads,
    plan,
    resolves,  # the loader's own reference check
)
from topology.index import BedIndex, parse_slot_range
from topology.layout import Box
from topology.model import (
    VM,
    Adapter,
    Bed,
    BedInfo,
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


class Touch(Edit):
    """Changes nothing; names components that must redraw (the far end of a new link)."""

    def __init__(self, ids: Iterable[str]):
        self.ids = set(ids)

    def apply(self) -> None:
        pass

    def revert(self) -> None:
        pass

    def touched(self) -> set[str]:
        return set(self.ids)


class Refused(ValueError):
    """The user asked for something the bed cannot take; the message says why, in plain words."""


class LinkRefused(Refused):
    """Two ports that cannot be cabled together (FC to Ethernet, a port already in use ...)."""


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

def taken_ids(bed: Bed) -> set[str]:
    """Every id in the bed's one namespace (the loader refuses duplicates across kinds)."""
    out: set[str] = set()
    for coll in (bed.networks, bed.chassis, bed.servers, bed.switches, bed.arrays, bed.vms,
                 bed.virtual_switches, bed.clusters, bed.workloads, bed.scenarios):
        out.update(c.id for c in coll)
    return out


def fresh_id(prefix: str, taken: set[str], *, first: int = 1) -> str:
    """prefix-1, prefix-2, ...: the first one nobody uses."""
    n = first
    while f"{prefix}-{n}" in taken:
        n += 1
    return f"{prefix}-{n}"


def _copy_name(ident: str, taken: set[str]) -> str:
    """R710-1 -> R710-3 when R710-1 and R710-2 exist; MD3000i -> MD3000i-2."""
    m = re.match(r"^(.*)-(\d+)$", ident)
    base, first = (m.group(1), 1) if m else (ident, 2)
    return fresh_id(base, taken, first=first)


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


# ============================================================================ connecting

SAN_ROLES = {"iscsi", "fc"}


@dataclass
class _End:
    ref: str
    device: Any
    port: Port | None         # None: a bare switch end ("SWITCH")
    listed: bool              # the port is declared on its device (not an implicit switch port)

    @property
    def is_switch(self) -> bool:
        return isinstance(self.device, Switch)

    @property
    def roles(self) -> set[str]:
        if self.port is not None and self.port.roles:
            return set(self.port.roles) - {"unused"}
        if self.is_switch:
            return set(self.device.roles) | ({"fc"} if self.device.kind == "fc" else set())
        return set()

    @property
    def medium(self) -> str:
        """What the cable plugs into: ethernet (management ports are Ethernet too), fc, sas ..."""
        if self.port is None:
            return "fc" if self.device.kind == "fc" else "ethernet"
        return "ethernet" if self.port.kind == "management" else self.port.kind

    @property
    def fabric(self) -> str:
        own = self.port.fabric if self.port is not None else ""
        return (own or getattr(self.device, "fabric", "")).strip().upper()

    @property
    def management(self) -> bool:
        return self.port is not None and (self.port.kind == "management" or "management" in self.port.roles)


def _find_device(bed: Bed, dev_id: str) -> Any:
    for coll in (bed.servers, bed.switches, bed.arrays, bed.vms, bed.chassis, bed.networks):
        for c in coll:
            if c.id == dev_id:
                return c
    return None


def _device_port(device: Any, name: str) -> Port | None:
    if isinstance(device, Server):
        return next((p for ad in device.adapters for p in ad.ports if p.name == name), None)
    if isinstance(device, StorageArray):
        return next((p for c in device.controllers for p in c.ports if p.name == name), None)
    if isinstance(device, Switch):
        return next((p for p in device.ports if p.name == name), None)
    return None


def _resolve_end(bed: Bed, ref: str) -> _End:
    dev_id, sep, name = ref.rpartition(":")
    device = _find_device(bed, dev_id) if sep else None
    if device is None:   # a bare device, or an id with a colon in it
        dev_id, name, sep = ref, "", ""
        device = _find_device(bed, ref)
    if device is None:
        raise LinkRefused(f"{dev_id} is not in the bed")
    if isinstance(device, VM):
        raise LinkRefused(f"{dev_id} is a VM: its NICs connect through a virtual switch, not a cable")
    if not isinstance(device, (Server, Switch, StorageArray)):
        raise LinkRefused(f"{dev_id} has no ports to cable")
    if not sep:
        if isinstance(device, Switch):
            return _End(ref, device, None, False)
        raise LinkRefused(f"Pick a port on {dev_id}: drag from one of its port markers")
    port = _device_port(device, name)
    if port is not None:
        return _End(ref, device, port, True)
    if isinstance(device, Switch):  # a switch port the bed names only in its cables (or a new one)
        return _End(ref, device, Port(name=name, kind="fc" if device.kind == "fc" else "ethernet",
                                      mtu=device.mtu, flow_control=device.flow_control), False)
    raise LinkRefused(f"{dev_id} has no port {name}")


def _links_at(bed: Bed, dev_id: str) -> list[Link]:
    prefix = dev_id + ":"
    return [lk for lk in bed.links if lk.a == dev_id or lk.b == dev_id
            or lk.a.startswith(prefix) or lk.b.startswith(prefix)]


def _role_text(roles: set[str]) -> str:
    names = {"iscsi": "iSCSI", "lan": "LAN", "fc": "FC", "vm": "VM", "live_migration": "live migration"}
    return "/".join(names.get(r, r) for r in sorted(roles)) or "no role"


def connect(bed: Bed, a_ref: str, b_ref: str) -> Edit:
    """A cable between two ports (or a port and a switch).  Raises LinkRefused with the reason."""
    if a_ref == b_ref:
        raise LinkRefused("A port cannot be cabled to itself")
    a, b = _resolve_end(bed, a_ref), _resolve_end(bed, b_ref)
    if a.device is b.device:
        raise LinkRefused(f"Both ends are on {a.device.id}: cable it to another device")
    if a.is_switch and not b.is_switch:
        a, b = b, a   # written DEVICE:PORT -> SWITCH, the way the examples read
    if a.medium != b.medium:
        raise LinkRefused(f"{_medium_text(a)} {a.ref} cannot be cabled to {_medium_text(b)} {b.ref}")
    if a.medium not in ("ethernet", "fc") and (a.is_switch or b.is_switch):
        raise LinkRefused(f"{a.ref} is a {a.medium.upper()} port: switches take Ethernet or FC only")
    for end in (a, b):
        if end.port is None:
            continue
        used = next((lk for lk in bed.links if end.ref in (lk.a, lk.b)), None)
        if used is not None:
            other = used.b if used.a == end.ref else used.a
            raise LinkRefused(f"{end.ref} is already cabled to {other}")
        if end.port.roles == ["unused"]:
            raise LinkRefused(f"{end.ref} is marked unused: give it a role first")
    for mgmt, other in ((a, b), (b, a)):
        if mgmt.management and not (mgmt.roles - {"management"}) and other.roles and other.roles <= SAN_ROLES:
            raise LinkRefused(f"{mgmt.ref} is a management port and {other.ref} is on the SAN "
                              f"({_role_text(other.roles)}): keep management off the storage network")
    if not a.is_switch and not b.is_switch and a.roles and b.roles and not (a.roles & b.roles):
        raise LinkRefused(f"{a.ref} carries {_role_text(a.roles)} and {b.ref} carries {_role_text(b.roles)}: "
                          "a direct cable needs the same traffic on both ends")
    if a.medium == "fc" and a.fabric and b.fabric and a.fabric != b.fabric:
        raise LinkRefused(f"{a.ref} is on fabric {a.fabric} and {b.ref} on fabric {b.fabric}: "
                          "FC fabrics A and B stay apart")
    for end in (a, b):
        if end.is_switch and end.device.port_count is not None:
            ports = max(end.device.port_count, len(end.device.ports))
            if len(_links_at(bed, end.device.id)) >= ports:
                raise LinkRefused(f"{end.device.id} has all its {ports} ports in use")
    edits: list[Edit] = []
    for end in (a, b):
        if end.is_switch and end.device.ports and (end.port is None or not end.listed):
            name = end.port.name if end.port is not None else _next_port_name(end.device)
            port = Port(name=name, kind="fc" if end.device.kind == "fc" else "ethernet",
                        roles=sorted((a if end is b else b).roles))
            edits.append(InsertItem(end.device.ports, port, text=f"Add port {name}", owner=end.device.id))
            end.ref = f"{end.device.id}:{name}"
    kind = "isl" if a.is_switch and b.is_switch else "cable"
    link = Link(a=a.ref, b=b.ref, kind=kind)
    text = f"Connect {a.ref} to {b.ref}"
    edits.append(InsertItem(bed.links, link, text=text, owner=a.device.id))
    edits.append(Touch({b.device.id}))
    return Compound(edits, text=text)


def _medium_text(end: _End) -> str:
    if end.port is None:
        return "FC switch" if end.medium == "fc" else "Ethernet switch"
    return {"fc": "FC port", "ethernet": "Ethernet port", "sas": "SAS port",
            "infiniband": "InfiniBand port"}.get(end.medium, f"{end.medium} port")


def _next_port_name(sw: Switch) -> str:
    names = {p.name for p in sw.ports}
    n = 1
    while str(n) in names:
        n += 1
    return str(n)


# ============================================================================ moving

def move(bed: Bed, positions: dict[str, tuple[float, float]], text: str = "") -> Edit:
    """One step that puts each listed device at its new top-left corner."""
    by_id = {c.id: c for name in POSITIONED for c in getattr(bed, name)}
    edits: list[Edit] = []
    for ident, (x, y) in positions.items():
        dev = by_id.get(ident)
        if dev is None:
            continue
        x, y = round(float(x), 1), round(float(y), 1)
        if dev.x != x:
            edits.append(SetField(dev, "x", x, owner=ident))
        if dev.y != y:
            edits.append(SetField(dev, "y", y, owner=ident))
    moved = len({e.owner for e in edits})
    return Compound(edits, text or (f"Move {moved} devices" if moved != 1 else f"Move {edits[0].owner}"))


def apply_layout(bed: Bed) -> Edit:
    """Every device at its place in the automatic (tiered) layout, as one step."""
    boxes = layout(bed, keep_positions=False)
    by_id = {c.id for name in POSITIONED for c in getattr(bed, name)}
    return move(bed, {i: (b.x, b.y) for i, b in boxes.items() if i in by_id}, text="Automatic layout")


# ============================================================================ deleting

_TOP_LISTS = tuple(f.name for f in fields(Bed) if f.name not in ("format_version", "bed", "policy", "run_plan"))


def _top_items(bed: Bed) -> Iterator[tuple[list | None, Any]]:
    """Each top-level object with the list that holds it (None for the single run plan)."""
    for name in _TOP_LISTS:
        coll = getattr(bed, name)
        for item in coll:
            yield coll, item
    if bed.run_plan is not None:
        yield None, bed.run_plan


def _ref_slots(obj: Any, array: Any = None, container: list | None = None) -> Iterator[tuple]:
    """(object, field plan, array scope, list holding the object) for every reference field."""
    if isinstance(obj, StorageArray):
        array = obj
    for fp in plan(type(obj)):
        if fp.meta.get("ref"):
            yield obj, fp, array, container
        elif fp.kind == "dc":
            v = getattr(obj, fp.attr)
            if v is not None:
                yield from _ref_slots(v, array, None)
        elif fp.kind == "list" and fp.inner[0] == "dc":
            items = getattr(obj, fp.attr)
            for item in items:
                yield from _ref_slots(item, array, items)


def _shallow_without(bed: Bed, doomed: set[int]) -> Bed:
    """The bed as it would be without the doomed top-level objects (lists rebuilt, objects shared)."""
    changes = {name: [x for x in getattr(bed, name) if id(x) not in doomed] for name in _TOP_LISTS}
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
        for future_coll, item in _top_items(future):
            coll = originals[id(future_coll)] if future_coll is not None else None
            for obj, fp, array, container in _ref_slots(item):
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
    edits: list[Edit] = [RemoveItem(coll, obj, owner=_owner(obj)) for coll, obj in doomed.values()]
    edits += [RemoveItem(coll, obj) for coll, obj in nested.values()]
    edits += _clear_dangling(future, idx, before, skip=set(nested))
    return edits


def _owner(obj: Any) -> str:
    if isinstance(obj, Link):
        return obj.a.rpartition(":")[0] or obj.a
    return getattr(obj, "id", "") or ""


def _clear_dangling(bed: Bed, idx: BedIndex, before: BedIndex | None, skip: set[int] = frozenset()) -> list[Edit]:
    """Blank optional references and drop list entries that no longer resolve.

    With `before`, only references that resolved there are touched (a deletion cleans up
    after itself and nothing else); without it, every unresolved reference is cleared.
    """
    def broken(kind: str, v: str, array: Any) -> bool:
        return not resolves(idx, kind, v, array) and (before is None or resolves(before, kind, v, array))

    edits: list[Edit] = []
    for _coll, item in _top_items(bed):
        owner = getattr(item, "id", "") or ""
        for obj, fp, array, _container in _ref_slots(item):
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
    return edits


# ============================================================================ clipboard

CLIPBOARD_NAME = "Testbed Studio clipboard"
_ARRAY_LOCAL = {"disk_group", "pool", "controller", "local_volume", "host_group", "array_target"}


def copy(bed: Bed, ids: Iterable[str], positions: dict[str, tuple[float, float]] | None = None) -> str:
    """Project-file text holding copies of the selected components and the links among them.

    The text loads on its own: networks the copies use come along, and references to
    anything left behind are cleared.  `positions` supplies places for devices the model
    has not positioned (the canvas's automatic layout).
    """
    wanted = set(ids)
    clip = Bed(bed=BedInfo(name=CLIPBOARD_NAME))
    for name in ("chassis", "servers", "switches", "arrays", "vms"):
        setattr(clip, name, [_copy.deepcopy(c) for c in getattr(bed, name) if c.id in wanted])
    picked = {c.id for name in ("chassis", "servers", "switches", "arrays", "vms") for c in getattr(clip, name)}
    if not picked:
        raise Refused("Nothing to copy: select devices or VMs (the networks they use come along)")
    for dev in (*clip.servers, *clip.switches, *clip.arrays, *clip.chassis):
        if (dev.x is None or dev.y is None) and positions and dev.id in positions:
            dev.x, dev.y = (round(float(v), 1) for v in positions[dev.id])

    def device_of(ref: str) -> str:
        return ref.rpartition(":")[0] or ref

    clip.links = [_copy.deepcopy(lk) for lk in bed.links if device_of(lk.a) in picked and device_of(lk.b) in picked]
    clip.paths = [_copy.deepcopy(p) for p in bed.paths
                  if {p.host, device_of(p.initiator), device_of(p.target)} <= picked]
    clip.virtual_switches = [_copy.deepcopy(v) for v in bed.virtual_switches if v.host in picked]
    used_networks = {p.network for dev in clip.servers for ad in dev.adapters for p in ad.ports}
    used_networks |= {p.network for dev in clip.arrays for c in dev.controllers for p in c.ports}
    used_networks |= {p.network for dev in clip.switches for p in dev.ports}
    used_networks |= {n.network for vm in clip.vms for n in vm.nics}
    clip.networks = [_copy.deepcopy(n) for n in bed.networks if n.id in used_networks or n.id in wanted]
    for network in clip.networks:
        network.routed_to = [r for r in network.routed_to if r in {n.id for n in clip.networks}]
    Compound(_clear_dangling(clip, BedIndex(clip), None)).apply()
    return dumps(clip)


def paste(bed: Bed, text: str, offset: tuple[float, float] = (40.0, 40.0)) -> Edit:
    """Insert the clipboard's components with fresh ids, shifted by `offset`, as one step."""
    try:
        clip = loads(text)
    except BedFileError:
        raise Refused("The clipboard holds no test-bed components") from None
    taken = taken_ids(bed)
    rename: dict[str, str] = {}
    existing_networks = {n.id for n in bed.networks}
    networks = [n for n in clip.networks if n.id not in existing_networks]
    for name in ("chassis", "servers", "switches", "arrays", "vms"):
        for c in getattr(clip, name):
            if c.id in taken:
                rename[c.id] = _copy_name(c.id, taken)
            taken.add(rename.get(c.id, c.id))
    for n in networks:
        if n.id in taken:  # an id used by some other kind of component
            rename[n.id] = _copy_name(n.id, taken)
        taken.add(rename.get(n.id, n.id))
    for vs in clip.virtual_switches:
        host_new = rename.get(vs.host, vs.host)
        new = vs.id
        if vs.id.startswith(vs.host + "/"):
            new = host_new + vs.id[len(vs.host):]
        if new in taken:
            new = _copy_name(new, taken)
        if new != vs.id:
            rename[vs.id] = new
        taken.add(new)
    _rename_everywhere(clip, rename)
    dx, dy = offset
    edits: list[Edit] = []
    for name, items in (("networks", networks), ("chassis", clip.chassis), ("servers", clip.servers),
                        ("switches", clip.switches), ("arrays", clip.arrays), ("vms", clip.vms),
                        ("virtual_switches", clip.virtual_switches), ("links", clip.links),
                        ("paths", clip.paths)):
        for item in items:
            if name in POSITIONED and item.x is not None and item.y is not None:
                item.x, item.y = round(item.x + dx, 1), round(item.y + dy, 1)
            edits.append(InsertItem(getattr(bed, name), item, owner=_owner(item)))
    count = sum(len(getattr(clip, n)) for n in ("chassis", "servers", "switches", "arrays", "vms"))
    if not edits:
        raise Refused("The clipboard holds no test-bed components")
    return Compound(edits, f"Paste {count} component{'s' if count != 1 else ''}")


def pasted_ids(edit: Edit) -> list[str]:
    """The component ids a paste inserts (the canvas selects them)."""
    out = []
    for e in getattr(edit, "edits", []):
        if isinstance(e, InsertItem) and isinstance(e.item, (Server, Switch, StorageArray, Chassis, VM)):
            out.append(e.item.id)
    return out


def _rename_everywhere(clip: Bed, rename: dict[str, str]) -> None:
    if not rename:
        return

    def mapped(v: str) -> str:
        if v in rename:
            return rename[v]
        head, sep, tail = v.partition(":")
        return f"{rename[head]}{sep}{tail}" if sep and head in rename else v

    for _coll, item in _top_items(clip):
        if getattr(item, "id", None) in rename:
            item.id = rename[item.id]
        for obj, fp, _array, _c in _ref_slots(item):
            if fp.meta["ref"] in _ARRAY_LOCAL:
                continue
            v = getattr(obj, fp.attr)
            if fp.kind == "list":
                setattr(obj, fp.attr, [mapped(x) for x in v])
            elif v:
                setattr(obj, fp.attr, mapped(v))
    for lk in clip.links:
        lk.a, lk.b = mapped(lk.a), mapped(lk.b)
    for a in clip.arrays:
        for h in a.hosts:
            h.initiators = [mapped(i) for i in h.initiators]
    for sc in clip.scenarios:
        sc.placement = {mapped(k): mapped(v) for k, v in sc.placement.items()}


# ============================================================================ geometry



VM_CHIP_H = 15.0        # one row of VM chips inside a host
VM_CHIP_MIN_W = 52.0
VM_ROWS_MAX = 4
NETWORK_CHIP = (150.0, 26.0)
VM_CHIP = (90.0, 22.0)
STRIP_GAP = 16.0
TIER_GAP = 84.0         # room between tiers for the cables' bends (the layout's default is roomier)


def vm_grid(width: float, count: int) -> tuple[int, int]:
    """(columns, rows) of the VM chips a host of this width shows (the last chip may say '+N')."""
    if count <= 0:
        return 0, 0
    cols = max(1, int((width - 8) // VM_CHIP_MIN_W))
    return cols, min(VM_ROWS_MAX, math.ceil(count / cols))


def drawn_size(dev: Any, vms: int = 0) -> tuple[float, float]:
    """Width and height of a device on the diagram: the layout's size plus room for VM chips."""
    from topology.layout import device_size
    if isinstance(dev, Chassis):
        bays = dev.bays or 14
        return max(180.0, 16.0 * bays + 24), 84.0
    w, h = device_size(dev)
    if isinstance(dev, Server) and vms:
        _cols, rows = vm_grid(w, vms)
        h += rows * VM_CHIP_H + 4
    return w, h


def vms_by_host(bed: Bed) -> dict[str, list[VM]]:
    servers = {s.id for s in bed.servers}
    out: dict[str, list[VM]] = {}
    for vm in bed.vms:
        if vm.host in servers:
            out.setdefault(vm.host, []).append(vm)
    return out


def layout(bed: Bed, *, keep_positions: bool = True) -> dict[str, Box]:
    """Where every drawn component goes (top-left corners and drawn sizes).

    Devices the model positions keep their x/y (unless keep_positions is false); the rest
    take their place in `topology.layout.auto_layout`'s tiers, with rows pushed apart to
    make room for the VM chips the hosts show.  Chassis sit in a row above the tiers;
    networks and VMs without a host (which have no position in the model) line up in a
    strip above everything.
    """
    from topology.layout import auto_layout
    hosted = vms_by_host(bed)
    devices = {d.id: d for d in (*bed.servers, *bed.switches, *bed.arrays)}
    need_auto = [d for d in devices.values() if not keep_positions or d.x is None or d.y is None]
    auto: dict[str, Box] = {}
    if need_auto:
        raw = auto_layout(bed, row_gap=TIER_GAP)
        auto = _make_room(raw, {i: drawn_size(devices[i], len(hosted.get(i, ()))) for i in raw})
    boxes: dict[str, Box] = {}
    for ident, dev in devices.items():
        w, h = drawn_size(dev, len(hosted.get(ident, ())))
        if keep_positions and dev.x is not None and dev.y is not None:
            boxes[ident] = Box(dev.x, dev.y, w, h)
        else:
            b = auto[ident]
            boxes[ident] = Box(b.x, b.y, w, h)
    top = min((b.y for b in boxes.values()), default=0.0)
    left = min((b.x for b in boxes.values()), default=0.0)
    x = left
    chassis_h = max((drawn_size(c)[1] for c in bed.chassis), default=0.0)
    for c in bed.chassis:
        w, h = drawn_size(c)
        if keep_positions and c.x is not None and c.y is not None:
            boxes[c.id] = Box(c.x, c.y, w, h)
        else:
            boxes[c.id] = Box(x, top - chassis_h - 60, w, h)
            x += w + 40
    boxes.update(strip_boxes(bed, boxes))
    return boxes


def network_label(n: Network) -> str:
    return n.id + (f" · {n.cidr}" if n.cidr else "") + (f" · VLAN {n.vlan}" if n.vlan is not None else "")


def chip_size(item: Any) -> tuple[float, float]:
    """A network or an unplaced VM chip, wide enough for its label (about 6.6 px a character at 10 px)."""
    if isinstance(item, Network):
        return min(max(36 + 6.6 * len(network_label(item)), 110.0), 320.0), NETWORK_CHIP[1]
    return min(max(24 + 6.6 * len(f"{item.id} (no host)"), VM_CHIP[0]), 260.0), VM_CHIP[1]


def strip_boxes(bed: Bed, boxes: dict[str, Box]) -> dict[str, Box]:
    """Networks and unplaced VMs: one row of chips above the drawing."""
    top = min((b.y for b in boxes.values()), default=0.0)
    x = min((b.x for b in boxes.values()), default=0.0)
    servers = {s.id for s in bed.servers}
    chips = [(n.id, chip_size(n)) for n in bed.networks]
    chips += [(v.id, chip_size(v)) for v in bed.vms if v.host not in servers]
    out = {}
    y = top - NETWORK_CHIP[1] - 40
    for ident, (w, h) in chips:
        out[ident] = Box(x, y, w, h)
        x += w + STRIP_GAP
    return out


def _make_room(boxes: dict[str, Box], sizes: dict[str, tuple[float, float]]) -> dict[str, Box]:
    """Push rows down so that taller drawn boxes keep the layout's gap to the row below."""
    rows = sorted({b.y for b in boxes.values()})
    extra_by_row = {y: 0.0 for y in rows}
    for ident, b in boxes.items():
        extra_by_row[b.y] = max(extra_by_row[b.y], sizes[ident][1] - b.h)
    shift, shifts = 0.0, {}
    for y in rows:
        shifts[y] = shift
        shift += extra_by_row[y]
    return {i: Box(b.x, b.y + shifts[b.y], sizes[i][0], sizes[i][1]) for i, b in boxes.items()}


def overlapping(boxes: dict[str, Box]) -> list[tuple[str, str]]:
    """Pairs of drawn boxes that overlap (sweep over x; fine for thousands of boxes)."""
    items = sorted(boxes.items(), key=lambda kv: kv[1].x)
    out, active = [], []
    for ident, b in items:
        active = [(i, a) for i, a in active if a.x + a.w > b.x]
        out += [(i, ident) for i, a in active if a.y < b.y + b.h and b.y < a.y + a.h]
        active.append((ident, b))
    return out
