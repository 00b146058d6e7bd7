"""What a scenario can change, so a scenario pass judges only that part of the bed.

The runner reports, for each scenario, the findings the reference configuration does not have.
A scenario only takes things out (a host, a switch, a port, a controller) and moves VMs, so a
new finding can only be about a host whose paths cross something taken out, a host that gains
or loses VMs, the cluster such a host is in, and what those hosts, their VMs and their
workloads use.  `scenario_scope` works that set out from the reference's own derived paths;
`topology.scenario_view` then builds the scenario's view of that part alone, and a 2,000-host
bed whose scenario fails one rack's switch is judged on that rack.

Where the closure grows past half the bed, or a drive is pulled (which changes the IOPS every
workload on the array is judged against), the answer is None: judge the whole view.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topology.graph import controller_node
from topology.ids import endpoint_device
from topology.index import BedIndex
from topology.model import Bed, Scenario
from topology.placement import Placement
from topology.scenario_view import removed_by

# past this share of the hosts, a scoped view saves less than working the scope out costs
WHOLE_BED_SHARE = 0.5


@dataclass
class Scope:
    """The part of a bed a scenario pass judges: these servers, VMs and arrays (all switches,
    networks and chassis stay), and the workloads whose targets and driver are all in it."""
    servers: set[str] = field(default_factory=set)
    vms: set[str] = field(default_factory=set)
    arrays: set[str] = field(default_factory=set)


class ScopeFinder:
    """The reference's facts the scopes of all scenarios share, worked out once per validation; what
    only a scenario's failed parts ask (who routes through a switch, what is cabled to it) is looked
    up for those parts alone."""

    def __init__(self, bed: Bed, idx: BedIndex, derived: Any, placement: Placement):
        self.bed, self.idx, self.placement = bed, idx, placement
        self.derived = derived
        self.reference_place = placement.of(None)
        self.arrays_of: dict[str, set[str]] = {}      # host / VM -> arrays its volumes are on
        for sp in derived.paths:
            self.arrays_of.setdefault(sp.spec.host, set()).add(sp.spec.target.partition(":")[0])
        for comp, vols in derived.masking.presented.items():
            self.arrays_of.setdefault(comp, set()).update(v.array for v in vols.values())
        self.cluster_nodes: dict[str, list[str]] = {}
        for c in bed.clusters:
            for n in c.nodes:
                self.cluster_nodes.setdefault(n, []).extend(c.nodes)
        self.workloads_of: dict[str, list[Any]] = {}      # VM or server -> workloads it runs or drives
        for w in bed.workloads:
            for comp in [*w.targets, w.driver]:
                if comp in idx.servers or comp in idx.vms:
                    self.workloads_of.setdefault(comp, []).append(w)
        self.vms_on = _by_host(self.reference_place)

    def _users_of(self, elements: set[str]) -> set[str]:
        """Hosts / VMs whose reference paths cross one of `elements` (a hop, or the array)."""
        out: set[str] = set()
        for sp in self.derived.paths:
            host = sp.spec.host
            if host in out:
                continue
            if sp.spec.target.partition(":")[0] in elements or any(h.element in elements for h in sp.hops):
                out.add(host)
        return out

    def _cabled_to(self, elements: set[str]) -> set[str]:
        """Devices at the other end of a cable from one of `elements` (a device or DEVICE:PORT)."""
        out: set[str] = set()
        for lk in self.bed.links:
            da, db = endpoint_device(lk.a), endpoint_device(lk.b)
            if lk.a in elements or da in elements:
                out.add(db)
            if lk.b in elements or db in elements:
                out.add(da)
        return out

    def _disk_arrays(self, vm_id: str) -> set[str]:
        vm = self.idx.vms[vm_id]
        return {d.volume.partition(":")[0] for d in vm.disks if d.volume in self.idx.volumes}

    def scope(self, scenario: Scenario) -> Scope | None:
        idx = self.idx
        gone = removed_by(self.bed, scenario, idx)
        if gone.slots:
            return None
        place = self.placement.of(scenario)
        reference = self.reference_place
        moved = {v for v, h in place.items() if reference.get(v) != h}
        moved |= {v for v in reference if v not in place}
        elements = set(gone.devices) | gone.ports | {controller_node(a, c) for a, c in gone.controllers}
        # a path's hops name the switches it crosses, not their ports: a switch that loses a port (an ISL's,
        # a stack's, the one facing an array port) may cut the paths of anyone routed through it
        elements |= {d for d in map(endpoint_device, gone.ports) if d in idx.switches}
        seeds: set[str] = set(moved)
        seeds |= {reference[v] for v in moved if v in reference}
        seeds |= {place[v] for v in moved if v in place}
        seeds |= {d for d in gone.devices if d in idx.servers or d in idx.vms}
        seeds |= {endpoint_device(p) for p in gone.ports}     # a server that loses a port, any port
        if elements:        # what routes through them, and what is cabled to them
            seeds |= self._users_of(elements) | self._cabled_to(elements)
        # a host's VMs in the scenario are its VMs in the reference or moved ones (seeds already)
        out = Scope(arrays={a for a, _ in gone.controllers} | {d for d in gone.devices if d in idx.arrays})
        todo = list(seeds)
        while todo:
            comp = todo.pop()
            if comp in out.servers or comp in out.vms:
                continue
            if comp in idx.servers:
                out.servers.add(comp)
                more = list(self.cluster_nodes.get(comp, ()))
                more += self.vms_on.get(comp, [])
            elif comp in idx.vms:
                out.vms.add(comp)
                more = [h for h in (reference.get(comp), place.get(comp)) if h]
                out.arrays |= self._disk_arrays(comp)
            elif comp in idx.arrays:
                out.arrays.add(comp)
                continue
            else:
                continue
            out.arrays |= self.arrays_of.get(comp, set())
            for w in self.workloads_of.get(comp, ()):
                more += [t.partition(":")[0] if t in idx.volumes else t for t in [*w.targets, w.driver] if t]
            todo += more
            if len(out.servers) > WHOLE_BED_SHARE * max(len(idx.servers), 1):
                return None
        return out


def _by_host(place: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for vm, host in place.items():
        out.setdefault(host, []).append(vm)
    return out
