"""What the rules of one validation share: the bed's index, the placement, the storage paths
and which host reaches which volume over them (each worked out once, on first use)."""
from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar

from topology.derived_paths import PathDerivation
from topology.graph import PathAnalyzer, Route
from topology.index import BedIndex
from topology.model import VM, Bed, PathSpec, Scenario, StorageArray, Volume
from topology.placement import Placement

_T = TypeVar("_T")


class Context:
    """What the rules share: the index, the placement, the routes and the storage they reach."""

    def __init__(self, bed: Bed, idx: BedIndex | None = None, scenario: Scenario | None = None,
                 drawn: Bed | None = None, drawn_placement: Placement | None = None):
        self.bed = bed
        self.scenario = scenario        # the scenario `bed` is the view of; None = the reference
        self.drawn = drawn or bed       # the bed as drawn (a scenario's view has lost its failed hosts)
        self.idx = idx or BedIndex(bed)
        self.policy = bed.policy
        self.memo: dict[str, Any] = {}   # per-validation caches the rules share
        self._unstated: dict[tuple[str, str], list[str]] = {}
        if drawn_placement is not None:
            self.__dict__["drawn_placement"] = drawn_placement

    def once(self, key: str, build: Callable[[Context], _T]) -> _T:
        """What `build(self)` gives, worked out at the first call with `key` in this validation and
        shared by every rule that asks after it."""
        if key in self.memo:
            return self.memo[key]
        made = self.memo[key] = build(self)
        return made

    @cached_property
    def placement(self) -> Placement:
        """Where VMs run per scenario (fail-over included), as the CAP rules check it."""
        return Placement(self.bed, self.idx)

    @cached_property
    def drawn_placement(self) -> Placement:
        """The placement over the bed as drawn, where a scenario's fail-over starts (shared with the
        reference's context and the scenario's view when the runner has it)."""
        return self.placement if self.drawn is self.bed else Placement(self.drawn)

    @cached_property
    def analyzer(self) -> PathAnalyzer:
        return PathAnalyzer(self.idx)

    @cached_property
    def derived(self) -> PathDerivation:
        """The paths the drawing carries (and the pins it can carry), with every hop."""
        return PathDerivation(self.idx, self.analyzer, self.drawn)

    @cached_property
    def paths(self) -> list[PathSpec]:
        """Every storage path of the bed: derived from the drawing, or pinned and carried."""
        return [sp.spec for sp in self.derived.paths]

    @cached_property
    def routes(self) -> list[tuple[PathSpec, Route]]:
        return self.analyzer.routes(self.paths)

    # --------------------------------------------------------------- storage
    @cached_property
    def mapped(self) -> dict[str, set[str]]:
        """Component id -> ARRAY:VOLUME refs the arrays map to it (through hosts and host groups)."""
        return {comp: set(vols) for comp, vols in self.derived.masking.presented.items()}

    @cached_property
    def paths_by_host_volume(self) -> dict[tuple[str, str], list[tuple[PathSpec, Route]]]:
        out: dict[tuple[str, str], list[tuple[PathSpec, Route]]] = {}
        for pair in self.routes:
            p = pair[0]
            for v in p.volumes:
                items = out.get((p.host, v))
                if items is None:
                    out[(p.host, v)] = [pair]
                else:
                    items.append(pair)
        return out

    def working_paths(self, host: str, volume: str, failed: frozenset = frozenset()) -> list[tuple[PathSpec, Route]]:
        return [(p, r) for p, r in self.paths_by_host_volume.get((host, volume), ())
                if r.status in ("ok", "unknown") and not (r.elements & failed)]

    @cached_property
    def reachable(self) -> set[tuple[str, str]]:
        """(host or VM, volume) pairs with a working path (`reaches`, for loops over every VM disk)."""
        return {key for key, items in self.paths_by_host_volume.items()
                if any(r.status in ("ok", "unknown") for _, r in items)}

    def reaches(self, host: str, volume: str) -> bool:
        return (host, volume) in self.reachable

    def reach_unstated(self, host: str, volume: str) -> list[str]:
        """Values the source does not state that decide whether `host` reaches `volume` (its SAN
        ports, the array's ports, its host entry): where there are some, a rule cannot judge.  Worked out
        once per host and array: the rules ask once per VM disk (28,096 times for 3,512 pairs on the
        canvas benchmark's bed)."""
        key = (host, volume.partition(":")[0])
        known = self._unstated.get(key)
        if known is None:
            known = self._unstated[key] = self.derived.unstated_inputs(*key)
        return list(known)

    @cached_property
    def guest_volumes(self) -> dict[str, set[str]]:
        """VM id -> volumes it reaches itself (in-guest initiator)."""
        out: dict[str, set[str]] = {}
        for (host, vol), items in self.paths_by_host_volume.items():
            if host in self.idx.vms and any(r.status in ("ok", "unknown") for _, r in items):
                out.setdefault(host, set()).add(vol)
        return out

    @cached_property
    def guests(self) -> set[str]:
        """VMs that may reach a volume themselves (an in-guest initiator, or a volume mapped to the VM):
        every other VM's disks are its host's to reach (`vm_disk_user`)."""
        return set(self.guest_volumes) | set(self.mapped)

    def vm_disk_user(self, vm: VM, volume: str, host: str | None = None) -> str:
        """Who must reach a VM disk's volume: the VM (in-guest initiator) or its host."""
        if volume in self.guest_volumes.get(vm.id, ()) or vm.storage_access in ("guest_iscsi", "sriov") \
                and volume in self.mapped.get(vm.id, ()):
            return vm.id
        return host if host is not None else vm.host

    @cached_property
    def volumes_used(self) -> dict[str, dict[str, str]]:
        """Host or VM id -> {ARRAY:VOLUME: why it is used}."""
        out: dict[str, dict[str, str]] = {}
        for comp, vols in self.mapped.items():
            for v in vols:
                out.setdefault(comp, {}).setdefault(v, "mapped to it")
        for p in self.bed.paths:
            for v in p.volumes:
                out.setdefault(p.host, {}).setdefault(v, "listed on its paths")
        guests = self.guests
        for vm in self.bed.vms:
            for d in vm.disks:
                if d.volume and not d.local:
                    user = self.vm_disk_user(vm, d.volume) if vm.id in guests else vm.host
                    if user:
                        used = out.get(user)
                        if used is None:
                            used = out[user] = {}
                        if d.volume not in used:
                            used[d.volume] = f"VM {vm.id} has disk {d.name} on it"
        for c in self.bed.clusters:
            for node in c.nodes:
                for v in c.shared_volumes:
                    out.setdefault(node, {}).setdefault(v, f"shared volume of cluster {c.id}")
                if c.witness:
                    out.setdefault(node, {}).setdefault(c.witness, f"witness of cluster {c.id}")
        return out

    def volume(self, ref: str) -> tuple[StorageArray, Volume] | None:
        return self.idx.volumes.get(ref)
