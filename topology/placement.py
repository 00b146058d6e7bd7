"""Where VMs run: the placement of a scenario, fail-over of a failed host, and host loads.

The rules (CAP-001 .. CAP-003), the placement editor (`topology.placement_ops`) and the
printed appendices read the same arithmetic from here, so a load bar shows exactly what a
rule checks.  The reference placement is each VM's own ``host``; a scenario may narrow the
VMs, exclude hosts or VMs, move VMs, and fail hosts, whose highly available VMs then
restart on the surviving nodes of their cluster (the one with the most free memory first).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import cached_property
from typing import Any

from topology.index import BedIndex
from topology.model import VM, Bed, Scenario
from topology.unknown import NOT_STATED


def vm_memory(vm: VM) -> float:
    """Memory a host must hold for the VM: static, or the dynamic minimum/startup; 0 where the
    source does not state it (`memory_not_stated` names those VMs, so no rule counts on the 0)."""
    if vm.dynamic_memory is not None:
        dm = vm.dynamic_memory
        for v in (dm.min_gb, dm.startup_gb):
            if v is NOT_STATED:
                return 0.0
            if v is not None:
                return v
    return 0.0 if vm.memory_gb is NOT_STATED else vm.memory_gb


def memory_not_stated(vms: Iterable[VM]) -> list[str]:
    """The VMs among `vms` whose memory (static, or the dynamic amount a host holds) is not stated."""
    out = []
    for vm in vms:
        dm = vm.dynamic_memory
        held = next((v for v in (dm.min_gb, dm.startup_gb) if v is not None), None) if dm is not None else None
        if (held if held is not None else vm.memory_gb) is NOT_STATED:
            out.append(vm.id)
    return out


def memory_and_unstated(vms: Iterable[VM]) -> tuple[float, list[str]]:
    """(memory_needed, memory_not_stated) of the same VMs, in one pass (CAP-001 asks both of every host)."""
    held: list[float] = []
    unknown: list[str] = []
    for vm in vms:
        memory = vm.memory_gb
        if vm.dynamic_memory is None and memory is not NOT_STATED:
            held.append(memory)
            continue
        held.append(vm_memory(vm))
        unknown += memory_not_stated([vm])
    return sum(held), unknown


def memory_needed(vms: Iterable[VM]) -> float:
    """Memory a host must hold for these VMs together."""
    return sum(vm_memory(v) for v in vms)


def scenario_label(s: Scenario | None) -> str:
    return "" if s is None else f" in scenario {s.id!r}"


class Placement:
    """The placement arithmetic over one bed and its index."""

    def __init__(self, bed: Bed, idx: BedIndex | None = None):
        self.bed = bed
        self.idx = idx or BedIndex(bed)
        # scenario -> its placement, worked out once: a validation asks for each scenario's placement
        # from the scope, the view and CAP-003 (the scenario is kept, so its id names it while it lives)
        self._placed: dict[int, tuple[Scenario | None, dict[str, str]]] = {}

    @cached_property
    def reference_scenario(self) -> Scenario | None:
        for s in self.bed.scenarios:
            if s.reference:
                return s
        return None

    def of(self, scenario: Scenario | None = None) -> dict[str, str]:
        """VM -> host for a scenario; VMs on a failed host move to surviving cluster nodes
        (highly available VMs only), the rest are down and left out.  The answer is shared by
        every caller of this Placement: read it, never change it."""
        hit = self._placed.get(id(scenario))
        if hit is not None and hit[0] is scenario:
            return hit[1]
        place = self._place(scenario)
        self._placed[id(scenario)] = (scenario, place)
        return place

    def _place(self, scenario: Scenario | None) -> dict[str, str]:
        vms = self.bed.vms
        if scenario is not None and scenario.vms:
            wanted = set(scenario.vms)
            vms = [v for v in vms if v.id in wanted]
        place = {v.id: v.host for v in vms if v.host}
        if scenario is None:
            return place
        excluded = set(scenario.excluded)
        named: set[str] | None = None    # the scenario's VMs by name, made once, not walked per entry
        for vm_id, host in scenario.placement.items():
            if vm_id not in place:
                if named is None:
                    named = {v.id for v in vms}
                if vm_id not in named:
                    continue
            place[vm_id] = host
        if excluded:     # a copy of every VM's place per scenario only where something is left out
            place = {v: h for v, h in place.items() if h not in excluded and v not in excluded}
        failed = set(scenario.failed)
        if failed:
            place = self.fail_over(place, failed)
        return place

    @cached_property
    def _cluster_by_node(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for c in self.bed.clusters:
            for n in c.nodes:
                out.setdefault(n, c)
        return out

    def cluster_of(self, host: str):
        return self._cluster_by_node.get(host)

    def fail_over(self, place: dict[str, str], failed: set[str]) -> dict[str, str]:
        """The placement after `failed` hosts go down: their highly available VMs restart on the
        surviving nodes of their cluster where there is room (restart_on_survivors, the rule
        CAP-003 uses); a VM that finds none, or is not highly available, is down and left out."""
        out = {v: h for v, h in place.items() if h not in failed}
        loads = self.loads(out)
        moving: dict[str, list[VM]] = defaultdict(list)      # cluster id -> its VMs that must move
        clusters = {}
        # only the failed hosts' VMs are sorted (in the same order as before): sorting the whole
        # placement made the scenario pass grow faster than the bed
        for v, h in sorted((v, h) for v, h in place.items() if h in failed):
            cluster = self.cluster_of(h)
            if cluster is not None and self.idx.vms[v].highly_available:
                moving[cluster.id].append(self.idx.vms[v])
                clusters[cluster.id] = cluster
        for cid, vms in moving.items():
            survivors = [n for n in clusters[cid].nodes if n not in failed and n in self.idx.servers]
            placed, _stranded = self.restart_on_survivors(vms, survivors, loads)
            out.update(placed)
        return out

    def restart_on_survivors(self, vms: Iterable[VM], survivors: list[str], loads: dict[str, list[VM]]
                             ) -> tuple[dict[str, str], list[VM]]:
        """Where highly available VMs restart when their node fails: biggest first, each on the
        surviving node with the most free memory (RAM less the policy's reserve less what runs
        there), if it has room.  A node whose RAM the bed does not state is not judged full.
        Returns (VM -> node, the VMs that find no room)."""
        reserve = self.bed.policy.memory_reserve_gb
        free: dict[str, float] = {}
        for n in survivors:
            ram = self.idx.servers[n].memory_gb
            free[n] = (float("inf") if ram is None or ram is NOT_STATED
                       else ram - reserve - memory_needed(loads.get(n, [])))
        placed: dict[str, str] = {}
        stranded: list[VM] = []
        for vm in sorted(vms, key=lambda v: (-vm_memory(v), v.id)):
            target = max(free, key=lambda n: (free[n], n)) if free else None
            if target is not None and free[target] >= vm_memory(vm):
                free[target] -= vm_memory(vm)
                placed[vm.id] = target
            else:
                stranded.append(vm)
        return placed, stranded

    def scenarios_to_check(self) -> list[Scenario | None]:
        """The base placement plus every scenario that moves or removes something."""
        out: list[Scenario | None] = [None]
        out += [s for s in self.bed.scenarios if s.failed or s.placement or s.vms or s.excluded]
        return out

    def loads_as_drawn(self) -> dict[str, list[VM]]:
        """loads(of(None)): where every VM has a name of its own (all of them indexed), read straight
        off the bed's VMs in their order, without the placement's dict of 20,000 names."""
        if len(self.idx.vms) != len(self.bed.vms):
            return self.loads(self.of(None))
        out: dict[str, list[VM]] = defaultdict(list)
        for vm in self.bed.vms:
            if vm.host:
                out[vm.host].append(vm)
        return out

    def loads(self, place: dict[str, str]) -> dict[str, list[VM]]:
        """Host -> the VMs a placement runs on it."""
        out: dict[str, list[VM]] = defaultdict(list)
        vms = self.idx.vms
        for vm_id, host in place.items():
            out[host].append(vms[vm_id])
        return out

    def stranded_after_loss(self, nodes: list[str], lost: str, loads: dict[str, list[VM]]
                            ) -> tuple[list[VM], list[VM]] | None:
        """(highly available VMs of `lost`, those that find no room on the other nodes), as
        restart_on_survivors places them; None when a node's RAM is unknown or not stated (a
        VM's memory too) or `lost` runs no highly available VM."""
        moving = [v for v in loads.get(lost, []) if v.highly_available]
        survivors = [n for n in nodes if n != lost]
        if not moving or memory_not_stated(moving):
            return None
        for n in survivors:
            ram = self.idx.servers[n].memory_gb
            if ram is None or ram is NOT_STATED or memory_not_stated(loads.get(n, [])):
                return None
        _placed, stranded = self.restart_on_survivors(moving, survivors, loads)
        return sorted(moving, key=lambda v: (-vm_memory(v), v.id)), stranded
