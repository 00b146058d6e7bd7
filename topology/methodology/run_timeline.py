"""The test as a sequence: phases (a scenario at one level of the test matrix) one after the other,
each reached from the previous one by a transition, each run `repetitions` times.

A published test reads "characterise the array; run one cell, two, three, four; degrade the array
and run again; three runs each, the median reported".  The bed says it as data:

* `test_matrix` entries, in order, each with its scenarios and levels: one phase per scenario and
  level (a scenario's levels follow each other, so a degraded state is set up once);
  without a matrix, one phase per scenario; without scenarios, one phase;
* which loads run in a phase: the matrix entry's workloads (else all); on which machines: the
  workload's `levels:` entry for that level, else its driver or targets;
* when each load starts: loads of one `order` (and those `together_with` it) start together, a
  higher order once the lower ones have finished; each runs its own `duration_minutes`;
* the transition into a phase: the VMs under load that start and stop, the components the
  scenario takes out of service (and those it gives back), and how the lab checks it took effect
  (the scenario's `checks:`, and the storage paths each host keeps).

The run section's domains (`domains/run.py`) make their items from these phases; the order of
the steps follows them (`Block`), so the procedure reads as the test happened.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from topology.configurations import MATRIX_VARIABLE
from topology.ids import SEP
from topology.index import BedIndex
from topology.model import Bed, MatrixEntry, Scenario, Workload
from topology.run_levels import level_key, level_label
from topology.unknown import NOT_STATED, stated


@dataclass
class LoadGroup:
    """Loads that start at the same moment; the next group starts when these have finished."""
    order: int
    workloads: list[Workload]

    @property
    def minutes(self) -> float | None:
        """How long the group runs: its longest load (ramp included); None when none says."""
        known = [d for w in self.workloads if (d := workload_minutes(w)) is not None]
        return max(known) if known else None


@dataclass
class Transition:
    """What changes from the previous phase to this one."""
    stop_vms: list[str] = field(default_factory=list)
    start_vms: list[str] = field(default_factory=list)
    fail: list[str] = field(default_factory=list)        # component refs taken out of service
    restore: list[str] = field(default_factory=list)     # taken out before, back in service now
    checks: list[str] = field(default_factory=list)      # the scenario's own words
    setup: str = ""         # the scenario's description, where its first phase begins: how the lab sets it up

    @property
    def empty(self) -> bool:
        return not (self.stop_vms or self.start_vms or self.fail or self.restore)


@dataclass
class Phase:
    index: int                          # 0-based, in run order
    entry: MatrixEntry | None
    scenario: Scenario | None
    level: Any                          # the matrix's own value, None without levels
    workloads: list[Workload]
    runners: dict[str, list[str]]       # workload id -> the machines its tool runs on in this phase
    load_vms: list[str]                 # the VMs under load in this phase
    groups: list[LoadGroup]
    transition: Transition
    failed: list[str]                   # every component out of service in this phase
    # a failover under load: (minutes after the loads start the failed parts go out, minutes they come back or
    # None: once the loads ended); the parts are then out only inside each run, and in service between runs
    under_load: tuple[float, float | None] | None = None

    @property
    def out_after_runs(self) -> list[str]:
        """The parts still out of service once this phase's runs are over."""
        return [] if self.under_load is not None else self.failed

    @property
    def level_text(self) -> str:
        if self.level is None:
            return ""
        return level_label(self.level, self.entry.variable if self.entry is not None else "")

    @property
    def title(self) -> str:
        """'2 active cells, scenario degraded' / 'characterisation' / 'scenario blade-4-down' / 'the test'."""
        parts = [self.entry.id] if self.entry is not None else []
        if self.level_text:
            parts.append(self.level_text)
        if self.scenario is not None and (not self.scenario.reference or not parts):
            parts.append(f"scenario {self.scenario.id}")
        return ", ".join(parts) or "the test"

    def position(self, repetition: int | None = None) -> dict[str, str]:
        """Where in the test a step of this phase is: recorded with each result of the run."""
        out = {"phase": self.entry.id if self.entry is not None else (self.scenario.id if self.scenario else ""),
               "scenario": self.scenario.id if self.scenario is not None else "",
               "level": self.level_text}
        if repetition is not None:
            out["repetition"] = str(repetition)
        return out


def workload_minutes(w: Workload) -> float | None:
    """A load's own duration and ramp in minutes; None when the bed states no duration for it."""
    d = stated(w.duration_minutes)
    if d is None:
        from topology.workload_time import DURATION_KEYS
        d = next((v for k in DURATION_KEYS if isinstance(v := w.parameters.get(k), (int, float))
                  and not isinstance(v, bool)), None)
    if d is None:
        return None
    return d + (stated(w.ramp_minutes) or 0)


def load_groups(workloads: Iterable[Workload]) -> list[LoadGroup]:
    """The loads by start order: `order` (0 when empty); loads named `together_with` one another
    join its group (the loader has checked that they share the order)."""
    by_order: dict[int, list[Workload]] = {}
    for w in workloads:
        by_order.setdefault(stated(w.order) or 0, []).append(w)
    return [LoadGroup(k, ws) for k, ws in sorted(by_order.items())]


def _runners(bed_idx: BedIndex, w: Workload, level: Any) -> list[str]:
    """Where the tool runs at this level: the driver, else the level's machines, else the targets
    that are machines (a volume target is driven from its host, which the bed then names)."""
    if w.driver:
        return [w.driver]
    targets = list(w.targets)
    if level is not None:
        for entry in w.levels:
            if level_key(entry.level) == level_key(level):
                targets = list(entry.targets)
                break
    out = [t for t in targets if t in bed_idx.servers or t in bed_idx.vms]
    return out or ([NOT_STATED] if NOT_STATED in targets else [])


def _load_vms(idx: BedIndex, w: Workload, level: Any, runners: list[str]) -> list[str]:
    """The VMs a load keeps busy at this level: the machines it runs on and the VMs it targets."""
    targets = list(w.targets)
    if level is not None:
        for entry in w.levels:
            if level_key(entry.level) == level_key(level):
                targets = list(entry.targets)
    return [v for v in dict.fromkeys([*runners, *targets]) if v in idx.vms]


def _phase_specs(bed: Bed, configuration: str) -> list[tuple[MatrixEntry | None, Scenario | None, Any]]:
    scenarios = {s.id: s for s in bed.scenarios}
    specs: list[tuple[MatrixEntry | None, Scenario | None, Any]] = []
    for entry in bed.test_matrix:
        in_scope = [scenarios[s] for s in entry.scenarios if s in scenarios]
        if entry.scenarios and not in_scope:
            continue            # its scenarios run in another configuration
        levels: list[Any] = list(entry.levels) or [None]
        if entry.variable == MATRIX_VARIABLE:
            # the levels are configurations: this procedure is one of them
            if configuration and configuration not in (str(lv) for lv in entry.levels):
                continue
            levels = [None]
        states: list[Scenario | None] = list(in_scope) or [None]
        for scenario in states:
            specs.extend((entry, scenario, lv) for lv in levels)
    if not specs:
        specs = [(None, s, None) for s in bed.scenarios] or [(None, None, None)]
    return specs


def phases(bed: Bed, idx: BedIndex | None = None, configuration: str = "") -> list[Phase]:
    """The bed's phases in run order, each with its transition from the one before."""
    idx = idx or BedIndex(bed)
    out: list[Phase] = []
    by_id = {w.id: w for w in bed.workloads}
    specs = _phase_specs(bed, configuration)
    # the VMs any phase loads: the ones the first phase must see stopped when it does not load them
    every_load_vm: dict[str, None] = {}
    built = []
    for entry, scenario, level in specs:
        names = entry.workloads if entry is not None and entry.workloads else [w.id for w in bed.workloads]
        workloads = [by_id[n] for n in names if n in by_id]
        runners = {w.id: _runners(idx, w, level) for w in workloads}
        vms = list(dict.fromkeys(v for w in workloads for v in _load_vms(idx, w, level, runners[w.id])))
        if scenario is not None and scenario.vms:
            vms = [v for v in vms if v in scenario.vms]
        every_load_vm.update(dict.fromkeys(vms))
        built.append((entry, scenario, level, workloads, runners, vms))
    previous_vms: list[str] | None = None
    previous_failed: list[str] = []
    for k, (entry, scenario, level, workloads, runners, vms) in enumerate(built):
        failed = [str(c) for c in (scenario.failed if scenario is not None else [])]
        under_load = _under_load(scenario) if failed else None
        # under load the parts go out inside each run: between phases the bed is as the runs begin
        between = [] if under_load is not None else failed
        if previous_vms is None:
            stop = [v for v in every_load_vm if v not in vms]
            start = list(vms)
        else:
            stop = [v for v in previous_vms if v not in vms]
            start = [v for v in vms if v not in previous_vms]
        fail = [c for c in between if c not in previous_failed]
        restore = [c for c in previous_failed if c not in between]
        # a VM on a host that goes down stops with it: it is not stopped by hand first
        down = {c for c in fail if c in idx.servers}
        stop = [v for v in stop if _host_of(idx, v) not in down]
        start = [v for v in start if _host_of(idx, v) not in {c for c in failed if c in idx.servers}
                 or (scenario is not None and v in scenario.placement)]
        begins = scenario is not None and (k == 0 or bool(out) and out[-1].scenario is not scenario)
        checks = [str(c) for c in (scenario.checks if scenario is not None else [])] \
            if scenario is not None and (fail or restore or begins) and under_load is None else []
        setup = (stated(scenario.description) or "").strip() if begins and scenario is not None else ""
        out.append(Phase(k, entry, scenario, level, workloads, runners, vms, load_groups(workloads),
                         Transition(stop, start, fail, restore, checks, str(setup)), failed, under_load))
        previous_vms, previous_failed = vms, between
    return out


def _under_load(scenario: Scenario | None) -> tuple[float, float | None] | None:
    """When a scenario takes its parts out while the loads run (`fail_after_minutes`), and brings them back."""
    if scenario is None:
        return None
    fail = stated(scenario.fail_after_minutes)
    return None if fail is None else (fail, stated(scenario.restore_after_minutes))


def _host_of(idx: BedIndex, vm: str) -> str:
    v = idx.vms.get(vm)
    return v.host if v is not None else ""


def component_kind(idx: BedIndex, ref: str) -> str:
    """What a failed component is: host, switch, array, vm, chassis, port, switch_port,
    array_port, controller, drive, or '' when the index does not know it."""
    if ref in idx.servers:
        return "host"
    if ref in idx.vms:
        return "vm"
    for kind, table in (("switch", "switches"), ("array", "arrays"), ("chassis", "chassis")):
        if any(c.id == ref for c in getattr(idx.bed, table)):
            return kind
    device, _, rest = ref.partition(SEP)
    if not rest:
        return ""
    if device in idx.servers:
        return "port"
    if any(s.id == device for s in idx.bed.switches):
        return "switch_port"
    array = next((a for a in idx.bed.arrays if a.id == device), None)
    if array is not None:
        if any(c.name == rest for c in array.controllers):
            return "controller"
        if any(p.name == rest for c in array.controllers for p in c.ports):
            return "array_port"
        if rest.count(SEP) == 1:
            return "drive"
    return ""


@dataclass
class ConfigurationRun:
    """The configuration a procedure is for, when a bed compares several: its place among them and
    what changes from the one before (`topology.configurations.differences`)."""
    name: str
    number: int
    count: int
    description: str = ""
    previous: str = ""
    changes: list[str] = field(default_factory=list)      # "hs22-1 hypervisor: RHEV -> Hyper-V"
