"""VM placement per scenario: move a VM, fail a host, and what each host then carries.

`place_vm` and `mark_failed` return one reversible `topology.edits.Edit` (they never change
the bed); an impossible request raises `PlacementRefused` with the reason.  `host_loads`
reads the placement the validator uses (`topology.placement.Placement`), so the
load bars show exactly what the CAP rules check: highly available VMs of a failed cluster
node restart on the survivors, the others stop.

The reference placement is each VM's own ``host`` field.  A scenario marked ``reference``
is that same placement, so moving a VM there moves the VM itself; any other scenario keeps
its moves as ``placement`` overrides.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topology.edits import Compound, Edit, InsertItem, Labelled, SetField
from topology.model import VM, Bed, Scenario
from topology.placement import Placement, memory_needed, memory_not_stated, vm_memory
from topology.unknown import stated

DEGRADED = "degraded"


class PlacementRefused(ValueError):
    """A placement edit that cannot be made; the message says why."""


def _vm(bed: Bed, vm_id: str) -> VM:
    for v in bed.vms:
        if v.id == vm_id:
            return v
    raise PlacementRefused(f"there is no VM {vm_id!r}")


def scenario(bed: Bed, scenario_id: str | None) -> Scenario | None:
    if scenario_id is None:
        return None
    for s in bed.scenarios:
        if s.id == scenario_id:
            return s
    raise PlacementRefused(f"there is no scenario {scenario_id!r}")


def _override_scenario(sc: Scenario | None) -> Scenario | None:
    """The scenario whose placement records a move, or None when a move changes the VM's own
    host (no scenario chosen, or the reference scenario)."""
    return None if sc is None or sc.reference else sc


def place_vm(bed: Bed, vm_id: str, host_id: str, scenario_id: str | None = None) -> Edit:
    """Run VM `vm_id` on server `host_id`: its own host (no scenario, or the reference
    scenario) or the scenario's placement override."""
    vm = _vm(bed, vm_id)
    if not any(s.id == host_id for s in bed.servers):
        raise PlacementRefused(f"{host_id!r} is not a server: VMs run on servers")
    sc = scenario(bed, scenario_id)
    where = "" if sc is None else f" in scenario {sc.id}"
    if sc is not None and host_id in sc.failed:
        raise PlacementRefused(f"{host_id} is failed{where}: bring it back first or choose another host")
    if sc is not None and host_id in sc.excluded:
        raise PlacementRefused(f"{host_id} is not part of scenario {sc.id}")
    text = f"Move {vm_id} to {host_id}{where}"
    override = _override_scenario(sc)
    if override is None:
        edits: list[Edit] = []
        if vm.host != host_id:
            edits.append(SetField(vm, "host", host_id))
        if sc is not None and vm_id in sc.placement:
            # an override in the reference scenario would hide the move
            edits.append(SetField(sc, "placement", {k: v for k, v in sc.placement.items() if k != vm_id},
                                  owner=sc.id))
    else:
        current = override.placement.get(vm_id, vm.host)
        edits = []
        if current != host_id:
            new = dict(override.placement)
            if host_id == vm.host:
                new.pop(vm_id, None)      # back home: the override is no longer needed
            else:
                new[vm_id] = host_id
            edits.append(SetField(override, "placement", new, owner=override.id))
    if not edits:
        raise PlacementRefused(f"{vm_id} already runs on {host_id}{where}")
    inner = edits[0] if len(edits) == 1 else Compound(edits, text)
    return Labelled(inner, text, {vm_id, host_id, vm.host} | ({sc.id} if sc else set()))


def failure_scenario(bed: Bed, scenario_id: str | None) -> str:
    """The scenario a host failure is recorded in: the chosen one, or 'degraded' when the
    chosen placement is the reference (a failure is never part of the reference)."""
    override = _override_scenario(scenario(bed, scenario_id))
    return DEGRADED if override is None else override.id


def mark_failed(bed: Bed, scenario_id: str | None, host_id: str, failed: bool = True) -> Edit:
    """Fail (or bring back) a server in a scenario; from the reference placement the failure
    goes to the scenario 'degraded', created when the bed has none."""
    if not any(s.id == host_id for s in bed.servers):
        raise PlacementRefused(f"{host_id!r} is not a server")
    target = failure_scenario(bed, scenario_id)
    sc = next((s for s in bed.scenarios if s.id == target), None)
    if sc is None:
        if not failed:
            raise PlacementRefused(f"{host_id} is not failed: there is no scenario {target!r}")
        new = Scenario(id=target, description=f"{host_id} failed; its highly available VMs fail over",
                       failed=[host_id])
        return Labelled(InsertItem(bed.scenarios, new), f"Fail {host_id} in new scenario {target}", {host_id, target})
    if failed:
        if host_id in sc.failed:
            raise PlacementRefused(f"{host_id} is already failed in scenario {target}")
        return Labelled(SetField(sc, "failed", [*sc.failed, host_id], owner=sc.id),
                     f"Fail {host_id} in scenario {target}", {host_id, target})
    if host_id not in sc.failed:
        raise PlacementRefused(f"{host_id} is not failed in scenario {target}")
    return Labelled(SetField(sc, "failed", [h for h in sc.failed if h != host_id], owner=sc.id),
                 f"Bring back {host_id} in scenario {target}", {host_id, target})


# ----------------------------------------------------------------------------- loads

@dataclass
class Outcome:
    """Where each VM of a scenario runs, and which ones stopped."""
    placement: dict[str, str]                          # VM -> host it runs on
    moved: dict[str, str] = field(default_factory=dict)      # VM -> its reference host, when elsewhere
    failed_over: dict[str, str] = field(default_factory=dict)  # VM -> the failed host it restarted from
    stranded: dict[str, str] = field(default_factory=dict)   # VM -> why it has nowhere to go
    no_room: dict[str, str] = field(default_factory=dict)    # stranded for want of room -> its failed host
    failed: list[str] = field(default_factory=list)


def outcome(bed: Bed, scenario_id: str | None = None, placement: Placement | None = None) -> Outcome:
    """`placement`: the bed's placement arithmetic when the caller has one (the validator's)."""
    placement = placement or Placement(bed)
    sc = scenario(bed, scenario_id)
    place = placement.of(sc)
    out = Outcome(place, failed=list(sc.failed) if sc else [])
    for vm in bed.vms:
        if vm.id in place and vm.host and place[vm.id] != vm.host:
            out.moved[vm.id] = vm.host
    if sc is None:
        return out
    before = placement.of(Scenario(id=sc.id, vms=sc.vms, excluded=sc.excluded, placement=sc.placement))
    failed = set(sc.failed)
    for vm_id, host in before.items():
        if host not in failed:
            continue
        if vm_id in place:
            out.failed_over[vm_id] = host
            continue
        vm = placement.idx.vms[vm_id]
        cluster = placement.cluster_of(host)
        if not vm.highly_available:
            out.stranded[vm_id] = f"was on failed {host} and is not highly available"
        elif cluster is None:
            out.stranded[vm_id] = f"was on failed {host}, which is in no cluster"
        elif not any(n not in failed and n in placement.idx.servers for n in cluster.nodes):
            out.stranded[vm_id] = f"was on failed {host}; no node of {cluster.id} survives"
        else:
            # the same arithmetic as CAP-003: biggest first, on the node with the most free memory
            out.stranded[vm_id] = (f"was on failed {host}; finds no room for its {vm_memory(vm):g} GB on the "
                                   f"surviving node(s) of {cluster.id}")
            out.no_room[vm_id] = host
    return out


# the memory a host must hold for a VM, as CAP-001 counts it (the placement view's chips)
vm_memory_gb = vm_memory


def lost_storage(bed: Bed, scenario_id: str | None, result: Outcome | None = None) -> dict[str, str]:
    """VM -> why it runs without its storage in a scenario: a disk on an array (or every controller of
    an array) the scenario fails or leaves out.  A VM with a host is not a VM that works."""
    sc = scenario(bed, scenario_id)
    if sc is None:
        return {}
    result = result or outcome(bed, scenario_id)
    gone = set(sc.failed) | set(sc.excluded)
    down: dict[str, str] = {}
    for a in bed.arrays:
        if a.id in gone:
            down[a.id] = f"array {a.id} is {'failed' if a.id in sc.failed else 'left out'}"
        elif a.controllers and all(f"{a.id}:{c.name}" in gone for c in a.controllers):
            down[a.id] = f"every controller of {a.id} is down"
    for g in bed.array_groups:      # a group's volumes live on its members: gone with every one of them
        members = [a.id for a in bed.arrays if a.group == g.name]
        if g.name in gone or members and all(m in down for m in members):
            down[g.name] = f"array group {g.name} is {'failed' if g.name in sc.failed else 'down'}"
    if not down:
        return {}
    out: dict[str, str] = {}
    for vm in bed.vms:
        if vm.id not in result.placement:
            continue
        lost = [f"{d.name} on {d.volume}" for d in vm.disks
                if d.volume and not d.local and d.volume.partition(":")[0] in down]
        if lost:
            array = next(d.volume.partition(":")[0] for d in vm.disks
                         if d.volume and not d.local and d.volume.partition(":")[0] in down)
            out[vm.id] = f"{down[array]}: disk {', '.join(lost)}"
    return out


def load_hosts(bed: Bed, place: dict[str, str]) -> list[str]:
    """Servers a placement view shows: hypervisors, and any server that runs VMs."""
    running = set(place.values()) | {v.host for v in bed.vms if v.host}
    return [s.id for s in bed.servers if s.role == "hypervisor" or s.id in running]


def host_loads(bed: Bed, scenario_id: str | None = None, result: Outcome | None = None) -> dict[str, dict[str, Any]]:
    """Per host: memory_used_gb, memory_gb, usable_memory_gb (less the policy reserve), vcpu,
    threads, vms (ids, bed order), failed."""
    result = result or outcome(bed, scenario_id)
    order = {v.id: i for i, v in enumerate(bed.vms)}
    vms_by_id = {v.id: v for v in bed.vms}
    servers = {s.id: s for s in bed.servers}
    reserve = bed.policy.memory_reserve_gb
    out: dict[str, dict[str, Any]] = {}
    running: dict[str, list[str]] = {}      # grouped once: a scan per host was quadratic (4,312 hosts: 4.5 s)
    for v, h in result.placement.items():
        running.setdefault(h, []).append(v)
    for host in load_hosts(bed, result.placement):
        s = servers[host]
        on = sorted(running.get(host, ()), key=order.__getitem__)
        out[host] = {
            "memory_used_gb": memory_needed(vms_by_id[v] for v in on),
            "memory_gb": (ram := stated(s.memory_gb)),
            "usable_memory_gb": None if ram is None else max(ram - reserve, 0.0),
            "memory_unstated": memory_not_stated(vms_by_id[v] for v in on),
            "vcpu": sum(stated(vms_by_id[v].vcpu) or 0 for v in on),
            # hardware threads only where the source says how many per core (never one per core assumed)
            "threads": s.cpu.threads if s.cpu and type(s.cpu.threads_per_core) is int else None,
            "cores": s.cpu.cores if s.cpu and type(s.cpu.cores_per_socket) is int else None,
            "vms": on,
            "failed": host in result.failed,
        }
    return out
