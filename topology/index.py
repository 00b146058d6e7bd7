"""Lookup tables over a bed: components by id, ports by DEVICE:PORT, volumes by ARRAY:VOLUME.

Built once per load or per validation; the validator, the graph and the methodology
generator all read the same index instead of scanning lists.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from topology.ids import SEP, port_ref, slot_ref, split_endpoint, volume_ref
from topology.model import (
    VM,
    Bed,
    Controller,
    DiskGroup,
    DiskSet,
    Enclosure,
    Pool,
    Port,
    Server,
    StorageArray,
    Switch,
    Volume,
)
from topology.unknown import NOT_STATED

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def parse_slot_range(text: str) -> range:
    """'3' -> range(3, 4); '0-7' -> range(0, 8).  Raises ValueError with a readable message."""
    # remembered for text: a validation reads every disk group's members, and live validation again
    return _slot_range_of_text(text) if type(text) is str else _parse_slot_range(text)


def _parse_slot_range(text: str) -> range:
    m = _RANGE.match(str(text))
    if not m:
        raise ValueError(f"slot range {text!r} is not a number or FIRST-LAST")
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) is not None else first
    if last < first:
        raise ValueError(f"slot range {text!r} runs backwards")
    return range(first, last + 1)


_slot_range_of_text = lru_cache(maxsize=1 << 16)(_parse_slot_range)


def parse_member(text: str) -> tuple[str, range]:
    """'RKA0:9-14' -> ('RKA0', range(9, 15))."""
    return _member_of_text(text) if type(text) is str else _parse_member(text)


def _parse_member(text: str) -> tuple[str, range]:
    enc, sep, slots = str(text).rpartition(":")
    if not sep or not enc:
        raise ValueError(f"member {text!r} should be ENCLOSURE:SLOTS, e.g. E0:0-3")
    return enc, parse_slot_range(slots)


_member_of_text = lru_cache(maxsize=1 << 16)(_parse_member)


def shown_slots(enclosure: Enclosure) -> int:
    """The slots an enclosure shows: its own count, or where the source does not state it, up to
    the last slot that holds a disk."""
    if enclosure.slots is not NOT_STATED:
        return enclosure.slots
    last = 0
    for ds in enclosure.disks:
        try:
            last = max(last, parse_slot_range(ds.slots).stop)
        except ValueError:
            continue
    return last


@dataclass(slots=True)
class PortRef:
    """A port together with the device (and controller) that holds it."""
    ref: str                      # DEVICE:PORT
    device: Any                   # Server, Switch, StorageArray or VM
    port: Any                     # Port, or VNic for a VM
    controller: Controller | None = None
    implicit: bool = False        # a switch port the bed names only in a link

    @property
    def device_id(self) -> str:
        return self.device.id


@dataclass(slots=True)
class Disk:
    array: str
    enclosure: str
    slot: int
    spec: DiskSet

    @property
    def ref(self) -> str:
        return slot_ref(self.array, self.enclosure, self.slot)


@dataclass
class ArrayScope:
    array: StorageArray
    controllers: dict[str, Controller] = field(default_factory=dict)
    enclosures: dict[str, Enclosure] = field(default_factory=dict)
    groups: dict[str, DiskGroup] = field(default_factory=dict)
    pools: dict[str, Pool] = field(default_factory=dict)
    volumes: dict[str, Volume] = field(default_factory=dict)
    host_groups: dict[str, Any] = field(default_factory=dict)
    hosts: dict[str, Any] = field(default_factory=dict)
    disks: dict[tuple[str, int], Disk] = field(default_factory=dict)
    group: Any = None       # an array group's scope: the ArrayGroup
    member_scopes: dict[str, ArrayScope] = field(default_factory=dict)   # an array group's: its members

    def members(self, specs: list[str]) -> Iterator[tuple[str, int]]:
        """(enclosure, slot) for each member spec; specs that do not parse are skipped."""
        for spec in specs:
            try:
                enc, slots = parse_member(spec)
            except ValueError:
                continue
            for s in slots:
                yield enc, s

    def group_disks(self, group: DiskGroup) -> list[Disk]:
        if group.members is NOT_STATED:
            return self.counted_disks(group)
        return [d for key in self.members(group.members) if (d := self.disks.get(key))]

    def counted_disks(self, group: DiskGroup) -> list[Disk]:
        """A group whose slots the source does not state but whose disk count it does: that many disks
        of the array's one kind (no slot: `Disk.slot` counts them from -1 down); none when the count is
        not stated or the array holds disks of more than one kind (which ones is then unknown)."""
        count = group.disk_count
        kinds = {(ds.size_gb, ds.rpm, ds.media, ds.interface): ds for e in self.enclosures.values() for ds in e.disks}
        if not isinstance(count, int) or len(kinds) != 1:
            return []
        spec = next(iter(kinds.values()))
        return [Disk(self.array.id, "", -1 - i, spec) for i in range(count)]

    def pool_groups(self, pool: str) -> list[DiskGroup]:
        return [g for g in self.array.disk_groups if g.pool == pool]

    def pool_members(self, pool: str) -> list[ArrayScope]:
        """An array group's pool: the scopes of the members it spans (every member when it lists none)."""
        p = self.pools.get(pool)
        listed = p.members if p is not None and p.members and p.members is not NOT_STATED else None
        return [m for name, m in self.member_scopes.items() if listed is None or name in listed]


def servers_behind_mapping_targets(array: StorageArray) -> dict[str, list[str]]:
    """Host or host-group name on `array` -> the servers a mapping to it reaches, in host order."""
    members: dict[str, list[str]] = {}
    for h in array.hosts:
        if h.server:
            members.setdefault(h.name, []).append(h.server)
            if h.host_group:
                members.setdefault(h.host_group, []).append(h.server)
    return members


# the list of an array each kind of its named parts comes from, as a problem's path names it
_ARRAY_LISTS = {"disk group": "disk_groups", "pool": "pools", "volume": "volumes", "host group": "host_groups",
                "array host": "hosts"}


class BedIndex:
    def __init__(self, bed: Bed):
        self.bed = bed
        self.problems: list[tuple[tuple, str, str]] = []   # (path, message, hint)
        self.components: dict[str, Any] = {}
        self.kind_of: dict[str, str] = {}
        self.servers: dict[str, Server] = {}
        self.switches: dict[str, Switch] = {}
        self.arrays: dict[str, StorageArray] = {}
        self.vms: dict[str, VM] = {}
        self.networks: dict[str, Any] = {}
        self.vswitches: dict[str, Any] = {}
        self.clusters: dict[str, Any] = {}
        self.workloads: dict[str, Any] = {}
        self.scenarios: dict[str, Any] = {}
        self.chassis: dict[str, Any] = {}
        self.array_groups: dict[str, Any] = {}    # name -> ArrayGroup (discovery address)
        # a group that holds storage, as a storage array of its own (GROUP:VOLUME): topology.array_groups
        self.group_views: dict[str, StorageArray] = {}
        self.ports: dict[str, PortRef] = {}
        self.volumes: dict[str, tuple[StorageArray, Volume]] = {}
        self.scopes: dict[str, ArrayScope] = {}
        self._server_ports: dict[int, tuple[Server, list[tuple[str, Port]]]] = {}
        self._build()

    # ------------------------------------------------------------------ building
    def _add(self, kind: str, table: dict, obj: Any, path: tuple) -> None:
        key = obj.id
        if key in self.components:
            other = self.kind_of[key]
            self.problems.append((path + ("id",), f"duplicate name {key!r}: already used by a {other}",
                                  "give every component a name of its own"))
            return
        self.components[key] = obj
        self.kind_of[key] = kind
        table[key] = obj

    def _dup(self, seen: set, name: str, what: str, path: tuple) -> bool:
        if name in seen:
            self.problems.append((path + ("name",), f"duplicate {what} name {name!r}",
                                  f"each {what} needs a name of its own"))
            return True
        seen.add(name)
        return False

    def _build(self) -> None:
        b = self.bed
        for i, n in enumerate(b.networks):
            self._add("network", self.networks, n, ("networks", i))
        for i, c in enumerate(b.chassis):
            self._add("chassis", self.chassis, c, ("chassis", i))
        ports = self.ports
        for i, s in enumerate(b.servers):
            self._add("server", self.servers, s, ("servers", i))
            seen: set = set()
            if len(s.adapters) > 1:
                for j, ad in enumerate(s.adapters):
                    self._dup(seen, ad.name, "adapter", ("servers", i, "adapters", j))
                seen = set()
            prefix = f"{s.id}{SEP}"     # port_ref, inline
            for j, ad in enumerate(s.adapters):
                for k, p in enumerate(ad.ports):
                    name = p.name
                    if name in seen:        # _dup, inline for the common case: 2,000 servers, 10,000 ports
                        self._dup(seen, name, "port", ("servers", i, "adapters", j, "ports", k))
                        continue
                    seen.add(name)
                    ref = f"{prefix}{name}"
                    ports[ref] = PortRef(ref, s, p)
        for i, sw in enumerate(b.switches):
            self._add("switch", self.switches, sw, ("switches", i))
            seen = set()
            prefix = f"{sw.id}{SEP}"
            for k, p in enumerate(sw.ports):
                name = p.name
                if name in seen:            # as a server's ports: 5,000 devices, 31,000 switch ports
                    self._dup(seen, name, "port", ("switches", i, "ports", k))
                    continue
                seen.add(name)
                ref = f"{prefix}{name}"
                ports[ref] = PortRef(ref, sw, p)
        for i, a in enumerate(b.arrays):
            self._add("array", self.arrays, a, ("arrays", i))
            self._build_array(i, a)
        for i, g in enumerate(b.array_groups):
            if not self._dup(set(self.array_groups), g.name, "array group", ("array_groups", i)):
                self.array_groups[g.name] = g
                if g.holds_storage:
                    self._build_group(i, g)
        components, kind_of, vms = self.components, self.kind_of, self.vms
        for i, v in enumerate(b.vms):
            if v.id in components:
                self._add("vm", vms, v, ("vms", i))     # says which component has the name already
            else:       # _add, inline: a bed has tens of thousands of VMs
                components[v.id] = vms[v.id] = v
                kind_of[v.id] = "vm"
            # VM vNICs are looked up on demand (port()): a 20,000-VM bed rarely asks for most of them
            if len(v.nics) > 1:
                seen = set()
                for k, nic in enumerate(v.nics):
                    self._dup(seen, nic.name, "virtual NIC", ("vms", i, "nics", k))
            if len(v.disks) > 1:
                seen = set()
                for k, d in enumerate(v.disks):
                    self._dup(seen, d.name, "virtual disk", ("vms", i, "disks", k))
        for i, vs in enumerate(b.virtual_switches):
            self._add("virtual switch", self.vswitches, vs, ("virtual_switches", i))
        for i, cl in enumerate(b.clusters):
            self._add("cluster", self.clusters, cl, ("clusters", i))
        for i, w in enumerate(b.workloads):
            self._add("workload", self.workloads, w, ("workloads", i))
        for i, sc in enumerate(b.scenarios):
            self._add("scenario", self.scenarios, sc, ("scenarios", i))

    def _build_group(self, i: int, g: Any) -> None:
        """A group that holds pools and volumes: a storage array of its own, with no controllers (its
        members' ports carry the sessions), in `arrays` and `scopes` under the group's name."""
        if g.name in self.components:
            self.problems.append((("array_groups", i, "name"), f"array group {g.name!r} has the name of a "
                                  f"{self.kind_of[g.name]}: its volumes are named {g.name}:VOLUME",
                                  "give the group a name no component has"))
            return
        view = StorageArray(id=g.name, model=g.model, firmware=g.firmware, group=g.name, connectivity="iscsi",
                            pools=g.pools, volumes=g.volumes, host_groups=g.host_groups, hosts=g.hosts,
                            mappings=g.mappings, note=g.note)
        self.components[g.name] = self.arrays[g.name] = self.group_views[g.name] = view
        self.kind_of[g.name] = "array group"
        self._build_array(i, view, ("array_groups", i))
        self.scopes[g.name].group = g
        self.scopes[g.name].member_scopes = {a.id: self.scopes[a.id] for a in self.bed.arrays
                                       if a.group == g.name and a.id in self.scopes}
        for j, pool in enumerate(g.pools):
            if pool.members is NOT_STATED:
                continue
            for k, member in enumerate(pool.members):
                a = self.arrays.get(member)
                if a is not None and a.group != g.name:
                    self.problems.append((("array_groups", i, "pools", j, "members", k),
                                          f"{member!r} is not a member of group {g.name!r}",
                                          f"set group: {g.name} on array {member}, or name a member of the group"))

    def group_members(self, group: str, pool: str | None = None) -> list[StorageArray]:
        """The member arrays of a group (those that name it), or the ones a pool of it spans."""
        members = [a for a in self.bed.arrays if a.group == group]
        scope = self.scopes.get(group)
        p = scope.pools.get(pool) if scope is not None and pool else None
        if p is not None and p.members and p.members is not NOT_STATED:
            return [a for a in members if a.id in p.members]
        return members

    def storage_owner(self, array: StorageArray) -> str:
        """The id under which an array's ports serve volumes: its group's, when the group holds storage."""
        return array.group if array.group and array.group in self.group_views else array.id

    def _build_array(self, i: int, a: StorageArray, base: tuple = ()) -> None:
        scope = ArrayScope(a)
        self.scopes[a.id] = scope
        base = base or ("arrays", i)
        port_names: set = set()
        for j, c in enumerate(a.controllers):
            if not self._dup(set(scope.controllers), c.name, "controller", base + ("controllers", j)):
                scope.controllers[c.name] = c
            for k, p in enumerate(c.ports):
                if not self._dup(port_names, p.name, "array port", base + ("controllers", j, "ports", k)):
                    ref = port_ref(a.id, p.name)
                    self.ports[ref] = PortRef(ref, a, p, c)
        for j, e in enumerate(a.enclosures):
            if self._dup(set(scope.enclosures), e.name, "enclosure", base + ("enclosures", j)):
                continue
            scope.enclosures[e.name] = e
            for k, ds in enumerate(e.disks):
                try:
                    slots = parse_slot_range(ds.slots)
                except ValueError as exc:
                    self.problems.append((base + ("enclosures", j, "disks", k, "slots"), str(exc),
                                          "write a slot number or a range such as 0-7"))
                    continue
                for s in slots:
                    if (e.name, s) in scope.disks:
                        self.problems.append((base + ("enclosures", j, "disks", k, "slots"),
                                              f"slot {e.name}:{s} holds two disks",
                                              "each slot holds at most one disk"))
                    scope.disks[(e.name, s)] = Disk(a.id, e.name, s, ds)
        named: tuple[tuple[str, list[Any], dict[str, Any]], ...] = (
            ("disk group", a.disk_groups, scope.groups),
            ("pool", a.pools, scope.pools),
            ("volume", a.volumes, scope.volumes),
            ("host group", a.host_groups, scope.host_groups),
            ("array host", a.hosts, scope.hosts))
        for what, items, table in named:
            key = _ARRAY_LISTS[what]
            for j, item in enumerate(items):
                if item.name not in table:      # _dup, without a set of the names so far for each item
                    table[item.name] = item
                else:
                    self._dup(set(table), item.name, what, base + (key, j))
        for name, v in scope.volumes.items():
            self.volumes[volume_ref(a.id, name)] = (a, v)
        for j, g in enumerate(a.disk_groups):
            for k, spec in enumerate(g.members):
                try:
                    parse_member(spec)
                except ValueError as exc:
                    self.problems.append((base + ("disk_groups", j, "members", k), str(exc),
                                          "write members as ENCLOSURE:SLOTS, e.g. E0:0-3"))
        for k, spec in enumerate(a.spares):
            try:
                parse_member(spec)
            except ValueError as exc:
                self.problems.append((base + ("spares", k), str(exc),
                                      "write spares as ENCLOSURE:SLOTS, e.g. E0:14"))

    # ------------------------------------------------------------------ lookups
    def port(self, ref: str) -> PortRef | None:
        """Resolve DEVICE:PORT; a switch that lists no ports accepts any port name."""
        pr = self.ports.get(ref)
        if pr is not None:
            return pr
        dev, name = split_endpoint(ref)
        vm = self.vms.get(dev) if SEP in ref else None
        if vm is not None:
            for n in vm.nics:
                if n.name == name:
                    pr = self.ports[ref] = PortRef(ref, vm, n)
                    return pr
            return None
        sw = self.switches.get(dev) if SEP in ref else None
        if sw is not None and not sw.ports and name:
            pr = PortRef(ref, sw, Port(name=name, kind="fc" if sw.kind == "fc" else "ethernet",
                                        mtu=sw.mtu, flow_control=sw.flow_control),
                         implicit=True)
            self.ports[ref] = pr
            return pr
        return None

    def port_refs(self) -> list[str]:
        """Every DEVICE:PORT in the bed, VM vNICs included (those are indexed only on demand)."""
        refs = [r for r, pr in self.ports.items() if not pr.implicit and not isinstance(pr.device, VM)]
        return refs + [port_ref(v.id, n.name) for v in self.bed.vms for n in v.nics]

    def endpoint_device(self, ref: str) -> Any:
        """The device of a link end written DEVICE:PORT or DEVICE."""
        if SEP not in ref:          # a bare device (a cable to a switch that names no port)
            return self.components.get(ref)
        pr = self.port(ref)
        if pr is not None:
            return pr.device
        return self.components.get(ref)

    def volume(self, ref: str) -> Volume | None:
        hit = self.volumes.get(ref)
        return hit[1] if hit else None

    def effective_mtu(self, pr: PortRef) -> Any:
        """The port's MTU, else its switch's or network's; NOT_STATED where the one that applies is."""
        own = pr.port.mtu
        if own is not None and own is not NOT_STATED:
            return own
        if isinstance(pr.device, Switch):
            fallback = pr.device.mtu
        else:
            net = self.networks.get(getattr(pr.port, "network", ""))
            fallback = net.mtu if net else None
        if fallback is None or fallback is NOT_STATED:
            return own if own is NOT_STATED else fallback
        return fallback

    def effective_flow_control(self, pr: PortRef) -> Any:
        """True, False, None (the bed is silent) or NOT_STATED."""
        fc = getattr(pr.port, "flow_control", None)
        if (fc is None or fc is NOT_STATED) and isinstance(pr.device, Switch):
            sw = pr.device.flow_control
            return fc if sw is None else sw
        return fc

    def server_ports(self, server: Server) -> list[tuple[str, Port]]:
        """(DEVICE:PORT, port) of every port of the server's adapters; one list per server, kept: a
        validation asks for them dozens of times per server."""
        key = id(server)
        hit = self._server_ports.get(key)
        if hit is None or hit[0] is not server:
            hit = self._server_ports[key] = (server, [(port_ref(server.id, p.name), p)
                                                      for ad in server.adapters for p in ad.ports])
        return hit[1]

    def array_ports(self, array: StorageArray) -> Iterator[tuple[str, Port, Controller]]:
        for c in array.controllers:
            for p in c.ports:
                yield port_ref(array.id, p.name), p, c
