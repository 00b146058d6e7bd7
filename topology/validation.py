"""The validator: rules as small registered units, findings, documented exceptions.

A rule is a function decorated with `@rule(...)` that receives a `Context` and yields
`hit(subjects, message)` records.  The decorator carries the user-facing code, default
severity, the reason with its source and a fix hint, so adding a rule is one function
in one of the modules under `topology/rules/`.  A bed's `exceptions` turn matching
findings into accepted ones (still listed, marked accepted, with the bed's reason).
"""
from __future__ import annotations

import gc
import ipaddress
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Callable, Iterable, Iterator

from topology.graph import PathAnalyzer, Route
from topology.index import BedIndex
from topology.model import VM, Bed, PathSpec, Scenario, StorageArray, Volume

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class RuleInfo:
    code: str
    severity: str
    title: str
    reason: str
    source: str
    hint: str


@dataclass
class Finding:
    code: str
    severity: str
    subjects: tuple[str, ...]
    message: str
    reason: str
    source: str
    hint: str
    accepted: bool = False
    exception_reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "subjects": list(self.subjects),
                "message": self.message, "hint": self.hint, "reason": self.reason,
                "source": self.source, "accepted": self.accepted,
                "exception_reason": self.exception_reason}


@dataclass
class Hit:
    subjects: tuple[str, ...]
    message: str
    severity: str | None = None
    hint: str | None = None


def hit(subjects: str | Iterable[str], message: str, *, severity: str | None = None,
        hint: str | None = None) -> Hit:
    subs = (subjects,) if isinstance(subjects, str) else tuple(dict.fromkeys(subjects))
    return Hit(subs, message, severity, hint)


RuleFunc = Callable[["Context"], Iterable[Hit]]
RULES: dict[str, tuple[RuleInfo, RuleFunc]] = {}


def rule(code: str, severity: str, title: str, *, reason: str, source: str, hint: str):
    def register(fn: RuleFunc) -> RuleFunc:
        if code in RULES:
            raise ValueError(f"rule {code} registered twice")
        RULES[code] = (RuleInfo(code, severity, title, reason, source, hint), fn)
        return fn
    return register


# ---------------------------------------------------------------------------- context

@lru_cache(maxsize=65536)
def iface(address: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    if not address:
        return None
    try:
        return ipaddress.ip_interface(address)
    except ValueError:
        return None


class Context:
    """What the rules share: the index, derived placement, and the storage paths."""

    def __init__(self, bed: Bed, idx: BedIndex | None = None):
        self.bed = bed
        self.idx = idx or BedIndex(bed)
        self.policy = bed.policy
        self.memo: dict[str, Any] = {}   # per-validation caches the rules share

    @cached_property
    def analyzer(self) -> PathAnalyzer:
        return PathAnalyzer(self.idx)

    @cached_property
    def routes(self) -> list[tuple[PathSpec, Route]]:
        return [(p, self.analyzer.route(p)) for p in self.bed.paths]

    # --------------------------------------------------------------- storage
    @cached_property
    def mapped(self) -> dict[str, set[str]]:
        """Component id -> ARRAY:VOLUME refs the arrays map to it (through hosts and host groups)."""
        out: dict[str, set[str]] = {}
        for a in self.bed.arrays:
            scope = self.idx.scopes[a.id]
            members: dict[str, list[str]] = {}
            for h in a.hosts:
                if h.server:
                    members.setdefault(h.name, []).append(h.server)
                    if h.host_group:
                        members.setdefault(h.host_group, []).append(h.server)
            for m in a.mappings:
                if m.volume not in scope.volumes:
                    continue
                for comp in members.get(m.to, []):
                    out.setdefault(comp, set()).add(f"{a.id}:{m.volume}")
        return out

    def path_volumes(self, path: PathSpec) -> list[str]:
        if path.volumes:
            return list(path.volumes)
        tgt = self.idx.port(path.target)
        if tgt is None or not isinstance(tgt.device, StorageArray):
            return []
        array = tgt.device
        if not array.mappings:
            return [f"{array.id}:{v.name}" for v in array.volumes]
        prefix = array.id + ":"
        return [v for v in self.mapped.get(path.host, ()) if v.startswith(prefix)]

    @cached_property
    def paths_by_host_volume(self) -> dict[tuple[str, str], list[tuple[PathSpec, Route]]]:
        out: dict[tuple[str, str], list[tuple[PathSpec, Route]]] = {}
        for p, r in self.routes:
            for v in self.path_volumes(p):
                out.setdefault((p.host, v), []).append((p, r))
        return out

    def working_paths(self, host: str, volume: str, failed: frozenset = frozenset()) -> list[tuple[PathSpec, Route]]:
        return [(p, r) for p, r in self.paths_by_host_volume.get((host, volume), ())
                if r.status in ("ok", "unknown") and not (r.elements & failed)]

    @cached_property
    def _reachable(self) -> set[tuple[str, str]]:
        return {key for key, items in self.paths_by_host_volume.items()
                if any(r.status in ("ok", "unknown") for _, r in items)}

    def reaches(self, host: str, volume: str) -> bool:
        return (host, volume) in self._reachable

    @cached_property
    def guest_volumes(self) -> dict[str, set[str]]:
        """VM id -> volumes it reaches itself (in-guest initiator)."""
        out: dict[str, set[str]] = {}
        for (host, vol), items in self.paths_by_host_volume.items():
            if host in self.idx.vms and any(r.status in ("ok", "unknown") for _, r in items):
                out.setdefault(host, set()).add(vol)
        return out

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
        for vm in self.bed.vms:
            for d in vm.disks:
                if d.volume and not d.local:
                    user = self.vm_disk_user(vm, d.volume)
                    if user:
                        out.setdefault(user, {}).setdefault(d.volume, f"VM {vm.id} has disk {d.name} on it")
        for c in self.bed.clusters:
            for node in c.nodes:
                for v in c.shared_volumes:
                    out.setdefault(node, {}).setdefault(v, f"shared volume of cluster {c.id}")
                if c.witness:
                    out.setdefault(node, {}).setdefault(c.witness, f"witness of cluster {c.id}")
        return out

    def volume(self, ref: str) -> tuple[StorageArray, Volume] | None:
        return self.idx.volumes.get(ref)

    # --------------------------------------------------------------- placement
    @cached_property
    def reference_scenario(self) -> Scenario | None:
        for s in self.bed.scenarios:
            if s.reference:
                return s
        return None

    def placement(self, scenario: Scenario | None = None) -> dict[str, str]:
        """VM -> host for a scenario; VMs on a failed host move to surviving cluster nodes
        (highly available VMs only), the rest are down and left out."""
        vms = self.bed.vms
        if scenario is not None and scenario.vms:
            wanted = set(scenario.vms)
            vms = [v for v in vms if v.id in wanted]
        place = {v.id: v.host for v in vms if v.host}
        if scenario is None:
            return place
        excluded = set(scenario.excluded)
        for vm_id, host in scenario.placement.items():
            if vm_id in place or any(v.id == vm_id for v in vms):
                place[vm_id] = host
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
        out = {v: h for v, h in place.items() if h not in failed}
        load: dict[str, float] = {}
        for v, h in out.items():
            load[h] = load.get(h, 0.0) + self.idx.vms[v].memory_gb
        for v, h in sorted(place.items()):
            if h not in failed:
                continue
            vm = self.idx.vms[v]
            cluster = self.cluster_of(h)
            if not vm.highly_available or cluster is None:
                continue
            survivors = [n for n in cluster.nodes if n not in failed and n in self.idx.servers]
            if not survivors:
                continue
            target = min(survivors, key=lambda n: (load.get(n, 0.0) - (self.idx.servers[n].memory_gb or 0), n))
            out[v] = target
            load[target] = load.get(target, 0.0) + vm.memory_gb
        return out

    def scenarios_to_check(self) -> list[Scenario | None]:
        """The base placement plus every scenario that moves or removes something."""
        out: list[Scenario | None] = [None]
        out += [s for s in self.bed.scenarios if s.failed or s.placement or s.vms or s.excluded]
        return out


def scenario_label(s: Scenario | None) -> str:
    return "" if s is None else f" in scenario {s.id!r}"


# ---------------------------------------------------------------------------- running

def _load_rule_modules() -> None:
    from topology.rules import access, capacity, cluster, network, paths, storage, workload  # noqa: F401


def validate(bed: Bed, codes: Iterable[str] | None = None, idx: BedIndex | None = None) -> list[Finding]:
    """Run every registered rule (or the given codes) and apply the bed's documented exceptions."""
    _load_rule_modules()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # rules build many short-lived objects next to a large model: skip the rescans
    try:
        return _run(bed, codes, idx)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run(bed: Bed, codes: Iterable[str] | None, idx: BedIndex | None) -> list[Finding]:
    ctx = Context(bed, idx)
    wanted = set(codes) if codes is not None else None
    findings: list[Finding] = []
    for code in sorted(RULES):
        if wanted is not None and code not in wanted:
            continue
        info, fn = RULES[code]
        seen: set = set()
        for h in fn(ctx):
            key = (h.subjects, h.message)
            if key in seen:
                continue
            seen.add(key)
            findings.append(Finding(code, h.severity or info.severity, h.subjects, h.message,
                                    info.reason, info.source, h.hint or info.hint))
    _apply_exceptions(bed, findings)
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects))
    return findings


def _apply_exceptions(bed: Bed, findings: list[Finding]) -> None:
    for exc in bed.exceptions:
        for f in findings:
            if f.code == exc.code and (exc.subject == "*" or exc.subject in f.subjects):
                f.accepted = True
                f.exception_reason = exc.reason


def rule_catalogue() -> list[RuleInfo]:
    _load_rule_modules()
    return [RULES[c][0] for c in sorted(RULES)]


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" and not f.accepted for f in findings)


def iter_server_ports(ctx: Context) -> Iterator[tuple[Any, str, Any]]:
    for s in ctx.bed.servers:
        for ref, p in ctx.idx.server_ports(s):
            yield s, ref, p
