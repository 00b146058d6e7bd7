"""A scenario's view of a bed: the bed as it stands in that scenario, for the rules to judge.

Failed and excluded components are taken out (hosts, switches, arrays, VMs, clusters, and
parts: a port `DEVICE:PORT`, a controller `ARRAY:CONTROLLER`, a drive `ARRAY:ENCLOSURE:SLOT`,
every blade of a failed chassis), cables with an end taken out are unplugged, only the VMs
the scenario runs are kept, each on the host the scenario's placement and fail-over put it.

The view is a new `Bed` whose lists are filtered: components the scenario leaves alone are
the bed's own objects (shared, never copied); only a component that loses a part or a VM
that moves is a shallow copy.  So a view of a 2,000-host bed costs a few list passes, and
nothing the rules do to the view can reach the bed (rules only read).
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from topology.ids import SEP, endpoint_device, parse_array_part
from topology.index import BedIndex, parse_slot_range
from topology.model import Bed, DiskSet, Scenario
from topology.placement import Placement

if TYPE_CHECKING:
    from topology.scenario_scope import Scope


@dataclass
class Removed:
    """What a scenario takes out, sorted by kind."""
    devices: set[str] = field(default_factory=set)                   # component ids
    ports: set[str] = field(default_factory=set)                     # DEVICE:PORT
    controllers: set[tuple[str, str]] = field(default_factory=set)   # (array, controller)
    slots: set[tuple[str, str, int]] = field(default_factory=set)    # (array, enclosure, slot)

    def gone(self, ref: str) -> bool:
        """Whether a link end or path end (DEVICE or DEVICE:PORT) is taken out."""
        if ref in self.ports or ref in self.devices:
            return True
        return ref.rpartition(SEP)[0] in self.devices


def removed_by(bed: Bed, scenario: Scenario, idx: BedIndex) -> Removed:
    out = Removed()
    for ref in [*scenario.failed, *scenario.excluded]:
        if ref in idx.components:
            out.devices.add(ref)
            if ref in idx.networks:     # a network down: every port on it (the network names no device)
                out.ports |= _ports_on_network(bed, idx, ref)
            continue
        pr = idx.port(ref)
        if pr is not None:
            out.ports.add(ref)
            continue
        array_id, _, rest = ref.partition(SEP)
        scope = idx.scopes.get(array_id)
        if scope is None:
            continue
        part = parse_array_part(rest)
        if part.slot is not None:
            out.slots.add((array_id, part.slot[0], part.slot[1]))
        elif rest in scope.controllers:
            out.controllers.add((array_id, rest))
    for chassis in [d for d in out.devices if d in idx.chassis]:
        out.devices.update(s.id for s in bed.servers if s.chassis == chassis)
        out.devices.update(s.id for s in bed.switches if s.chassis == chassis)
    for array_id, ctrl in out.controllers:
        out.ports.update(f"{array_id}{SEP}{p.name}" for p in idx.scopes[array_id].controllers[ctrl].ports)
    return out


def _ports_on_network(bed: Bed, idx: BedIndex, network: str) -> set[str]:
    """DEVICE:PORT of every server, array and switch port and VM vNIC the bed puts on `network`."""
    out = {ref for s in bed.servers for ref, p in idx.server_ports(s) if p.network == network}
    out |= {ref for a in bed.arrays for ref, p, _ in idx.array_ports(a) if p.network == network}
    out |= {f"{sw.id}{SEP}{p.name}" for sw in bed.switches for p in sw.ports if p.network == network}
    out |= {f"{v.id}{SEP}{n.name}" for v in bed.vms for n in v.nics if n.network == network}
    return out


def _without_nics(vm, gone: Removed):
    """A VM without the vNICs a scenario fails (itself when it loses none)."""
    nics = [n for n in vm.nics if f"{vm.id}{SEP}{n.name}" not in gone.ports]
    return vm if len(nics) == len(vm.nics) else dataclasses.replace(vm, nics=nics)


def scenario_view(bed: Bed, scenario: Scenario, idx: BedIndex | None = None, keep: Scope | None = None,
                  placement: Placement | None = None) -> Bed:
    """The bed as it stands in `scenario` (see the module's docstring); with `keep`, only the part of
    it a `topology.scenario_scope.Scope` names (what the scenario can change).  `placement`: the
    bed's placement arithmetic over `idx`, when the caller has one."""
    idx = idx or BedIndex(bed)
    gone = removed_by(bed, scenario, idx)
    running = _running_vms(bed, scenario, placement or Placement(bed, idx), gone)
    if keep is not None:
        running = {v: h for v, h in running.items() if v in keep.vms}
    vms = []
    for v in bed.vms:
        if v.id not in running:
            continue
        host = running[v.id]
        placed = v if host == v.host or not (host or v.host) else _moved(v, host, bed)
        vms.append(_without_nics(placed, gone) if gone.ports else placed)
    live_vms = set(running)

    def alive(ref: str) -> bool:
        return not gone.gone(ref)

    servers = [_without_ports(s, gone) for s in bed.servers if s.id not in gone.devices
               and (keep is None or s.id in keep.servers)]
    switches = [_switch_without_ports(s, gone) for s in bed.switches if s.id not in gone.devices]
    arrays = [_array_view(a, gone) for a in bed.arrays if a.id not in gone.devices
              and (keep is None or a.id in keep.arrays)]
    clusters = []
    for c in bed.clusters:
        if c.id in gone.devices or keep is not None and not keep.servers.intersection(c.nodes):
            continue
        nodes = [n for n in c.nodes if n not in gone.devices]
        clusters.append(c if len(nodes) == len(c.nodes) else dataclasses.replace(c, nodes=nodes))
    vswitches = []
    for vs in bed.virtual_switches:
        if vs.host in gone.devices or vs.id in gone.devices or keep is not None and vs.host not in keep.servers:
            continue
        ups = [u for u in vs.uplinks if alive(u)]
        vswitches.append(vs if len(ups) == len(vs.uplinks) else dataclasses.replace(vs, uplinks=ups))
    hosts_alive = {s.id for s in servers} | live_vms
    paths = [p for p in bed.paths if p.host in hosts_alive and alive(p.initiator) and alive(p.target)]
    workloads = []
    for w in bed.workloads:
        if w.id in gone.devices:
            continue    # a load the scenario (or configuration) does not run
        targets = [t for t in w.targets if t in live_vms or t not in idx.vms and alive(t)]
        if w.targets and not targets:
            continue
        if w.driver and (w.driver not in live_vms if w.driver in idx.vms else not alive(w.driver)):
            continue    # the machine that runs the tool does not run in this scenario: nor does the load
        if keep is not None and not _in_scope(w, targets, keep, idx):
            continue
        workloads.append(w if len(targets) == len(w.targets) else dataclasses.replace(w, targets=targets))
    if keep is not None:
        left_out = {s.id for s in bed.servers if s.id not in keep.servers} | \
            {a.id for a in bed.arrays if a.id not in keep.arrays}
        # the scope first: it leaves out most cables, and only the rest are asked whether they are unplugged
        links = [lk for lk in bed.links if endpoint_device(lk.a) not in left_out
                 and endpoint_device(lk.b) not in left_out and alive(lk.a) and alive(lk.b)]
        paths = [p for p in paths if p.target.partition(SEP)[0] in keep.arrays]
    else:
        links = [lk for lk in bed.links if alive(lk.a) and alive(lk.b)]
    return dataclasses.replace(
        bed, servers=servers, switches=switches, arrays=arrays, vms=vms, clusters=clusters,
        virtual_switches=vswitches, paths=paths, workloads=workloads, links=links,
        chassis=[c for c in bed.chassis if c.id not in gone.devices],
        scenarios=[])


def _in_scope(w, targets: list[str], keep: Scope, idx: BedIndex) -> bool:
    """Whether every target and the driver of a workload are in the scope (so rules see it whole)."""
    for comp in [*targets, w.driver]:
        if not comp:
            continue
        if comp in idx.volumes:
            if comp.partition(SEP)[0] not in keep.arrays:
                return False
        elif comp not in keep.servers and comp not in keep.vms:
            return False
    return True


def _running_vms(bed: Bed, scenario: Scenario, placement: Placement, gone: Removed) -> dict[str, str]:
    """VM -> host ('' for a VM the bed places nowhere) for the VMs the scenario runs."""
    place = placement.of(scenario)
    wanted = set(scenario.vms) if scenario.vms else None
    out = {}
    for v in bed.vms:
        if v.id in gone.devices or wanted is not None and v.id not in wanted:
            continue
        if v.id in place:
            out[v.id] = place[v.id]
        elif not v.host and v.id not in scenario.placement:
            out[v.id] = ""
    return out


def _moved(vm, host: str, bed: Bed):
    """A VM on another host: each vNIC joins that host's virtual switch of the same name (Hyper-V
    and vSphere move a VM only between hosts whose virtual switches are named alike)."""
    nics = []
    for n in vm.nics:
        old = next((vs for vs in bed.virtual_switches if vs.id == n.vswitch), None)
        twin = None
        if old is not None:
            suffix = old.id.partition("/")[2]
            for vs in bed.virtual_switches:
                if vs.host == host and (old.label and vs.label == old.label or
                                        suffix and vs.id.partition("/")[2] == suffix):
                    twin = vs
                    break
        nics.append(dataclasses.replace(n, vswitch=twin.id) if twin is not None else n)
    return dataclasses.replace(vm, host=host, nics=nics)


def _without_ports(server, gone: Removed):
    prefix = f"{server.id}{SEP}"
    if not any(f"{prefix}{p.name}" in gone.ports for a in server.adapters for p in a.ports):
        return server
    adapters = [dataclasses.replace(a, ports=[p for p in a.ports if f"{prefix}{p.name}" not in gone.ports])
                for a in server.adapters]
    return dataclasses.replace(server, adapters=adapters)


def _switch_without_ports(switch, gone: Removed):
    prefix = f"{switch.id}{SEP}"
    if not any(f"{prefix}{p.name}" in gone.ports for p in switch.ports):
        return switch
    return dataclasses.replace(switch, ports=[p for p in switch.ports if f"{prefix}{p.name}" not in gone.ports])


def _array_view(array, gone: Removed):
    prefix = f"{array.id}{SEP}"
    ports_hit = any(f"{prefix}{p.name}" in gone.ports for c in array.controllers for p in c.ports)
    slots_hit = any(a == array.id for a, _, _ in gone.slots)
    if not ports_hit and not slots_hit:
        return array
    view = copy.copy(array)
    if ports_hit:
        view.controllers = [c if (array.id, c.name) not in gone.controllers and
                            not any(f"{prefix}{p.name}" in gone.ports for p in c.ports) else
                            dataclasses.replace(c, ports=[p for p in c.ports if f"{prefix}{p.name}" not in gone.ports])
                            for c in array.controllers if (array.id, c.name) not in gone.controllers]
    if slots_hit:
        pulled = {(e, s) for a, e, s in gone.slots if a == array.id}
        view.enclosures = [_enclosure_without(e, pulled) for e in array.enclosures]
    return view


def _enclosure_without(enclosure, pulled: set[tuple[str, int]]):
    slots = {s for e, s in pulled if e == enclosure.name}
    if not slots:
        return enclosure
    disks: list[DiskSet] = []
    for ds in enclosure.disks:
        try:
            span = parse_slot_range(ds.slots)
        except ValueError:
            disks.append(ds)
            continue
        run: list[int] = []
        for s in [*span, None]:
            if s is not None and s not in slots:
                run.append(s)
                continue
            if run:
                text = str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
                disks.append(dataclasses.replace(ds, slots=text))
                run = []
    return dataclasses.replace(enclosure, disks=disks)
