"""The run section's domains: the run plan, test matrix, scenarios, and the steps of each run of
each phase of the test (`topology.methodology.run_timeline`): its reset and procedure steps, the
hosts restarted and watched, the loads in their order.  The transitions between phases are in
`run_changes`.  The run plan's own values (run.*) are bed-wide: see `bed_wide`.

A timeline item's group is (phase, run, part): part 0 holds a run's preparation and its first
group of loads, part g its g-th group of loads, the last part the collection of its results, so
the generator orders the steps as the test happens (`Item.position`)."""
from __future__ import annotations

from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.hosts import HOST_NAMES, host_values
from topology.methodology.domains.load_disk import LOAD_DISK_NAMES, load_disk_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.domains.workloads import RUNNER_NAMES, WORKLOAD_NAMES, runner_values, workload_values
from topology.methodology.run_timeline import Phase
from topology.methodology.values import (
    Val,
    ValueKind,
    Values,
    as_any,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    format_number,
    plain,
    put,
    put_fields,
    scaled,
)
from topology.unknown import NOT_STATED, stated
from topology.workload_time import duration_minutes, spoken_duration
from topology.workload_tools import varied_parameter


@domain("run", set(), "the run plan (one item when the bed has one, else one item with run.present = false)")
def _run(ctx: BedContext) -> list[Item]:
    return [Item({}, "", "", (), 0)]


_MATRIX_FIELDS: dict[str, ValueKind] = {
    "id": as_text, "variable": as_text, "scenarios": as_list, "workloads": as_list, "criteria": as_text,
    "note": as_text}


@domain("matrix", field_names("matrix", *_MATRIX_FIELDS, "levels", "constants"), "each entry of the test matrix")
def _matrix(ctx: BedContext) -> list[Item]:
    out = []
    for k, m in enumerate(ctx.bed.test_matrix):
        vals: Values = {}
        src = f"test_matrix.{m.id}"
        put_fields(vals, "matrix", m, src, _MATRIX_FIELDS)
        put(vals, "matrix.levels", as_list([plain(x) for x in m.levels], f"{src}.levels"))
        put(vals, "matrix.constants", as_text(plain(m.constants), f"{src}.constants"))
        out.append(Item(vals, "", "", (), k))
    return out


_SCENARIO_FIELDS: dict[str, ValueKind] = {
    "id": as_text, "description": as_text, "failed": as_list, "excluded": as_list, "reference": as_bool,
    "note": as_text}


@domain("scenario", field_names("scenario", *_SCENARIO_FIELDS, "placement", "how"), "each scenario (state) of the bed")
def _scenarios(ctx: BedContext) -> list[Item]:
    out = []
    for k, s in enumerate(ctx.bed.scenarios):
        vals: Values = {}
        src = f"scenarios.{s.id}"
        put_fields(vals, "scenario", s, src, _SCENARIO_FIELDS)
        put(vals, "scenario.placement", as_text(", ".join(f"{v} on {h}" for v, h in s.placement.items()),
                                                f"{src}.placement"))
        put(vals, "scenario.how", as_text(plain(s.settings.get("how", "")), f"{src}.settings.how"))
        for key, v in s.settings.items():
            put(vals, f"scenario.settings.{key}", as_any(v, f"{src}.settings.{key}"))
        out.append(Item(vals, "", "", (), 100 + k))
    return out


# ------------------------------------------------------------------ the runs of each phase

BLOCK_NAMES = field_names("phase", "title", "number", "count", "level", "scenario", "loads", "vms", "runs",
                          "runs_text") | field_names("block", "repetition", "runs", "title")


def _runs(ctx: BedContext) -> int:
    rp = ctx.bed.run_plan
    n = stated(rp.repetitions) if rp is not None else None
    return n or 1


def runs_per_phase(ctx: BedContext) -> int:
    """How many runs each phase has (the run plan's repetitions, else one)."""
    return _runs(ctx)


def _repetitions_stated(ctx: BedContext) -> bool:
    rp = ctx.bed.run_plan
    return rp is not None and bool(stated(rp.repetitions))


def loads_text(ctx: BedContext, phase: Phase, workloads: list | None = None) -> str:
    """'sqlio (sqlio-oltp) on sql-1, sql-2; Iometer (iometer-fs) on fs-1'."""
    out = []
    for w in workloads if workloads is not None else phase.workloads:
        runners = [str(r) for r in phase.runners.get(w.id, []) if r]
        out.append(f"{w.tool} ({w.id}) on {', '.join(runners)}" if runners else f"{w.tool} ({w.id})")
    return "; ".join(out)


def phase_values(ctx: BedContext, phase: Phase, count: int) -> Values:
    vals: Values = {}
    src = f"test_matrix.{phase.entry.id}" if phase.entry is not None else \
        f"scenarios.{phase.scenario.id}" if phase.scenario is not None else "run_plan"
    put(vals, "phase.title", as_text(phase.title, src))
    put(vals, "phase.number", as_number(phase.index + 1))
    put(vals, "phase.count", as_number(count))
    put(vals, "phase.level", as_text(phase.level_text, f"{src}.levels"))
    put(vals, "phase.scenario", as_text(phase.scenario.id if phase.scenario is not None else "", src))
    put(vals, "phase.loads", as_text(loads_text(ctx, phase), "workloads"))
    put(vals, "phase.vms", as_list(phase.load_vms, "workloads.targets"))
    runs = _runs(ctx)
    if _repetitions_stated(ctx):
        put(vals, "phase.runs", as_number(runs, "run_plan.repetitions"))
        put(vals, "phase.runs_text", as_text(f"{runs} runs" if runs != 1 else "one run", "run_plan.repetitions"))
    return vals


def _block_values(ctx: BedContext, phase: Phase, count: int, rep: int) -> Values:
    vals = phase_values(ctx, phase, count)
    put(vals, "block.repetition", as_number(rep))
    if _repetitions_stated(ctx):
        put(vals, "block.runs", as_number(_runs(ctx), "run_plan.repetitions"))
        title = f"run {rep} of {_runs(ctx)}"
    else:
        title = f"run {rep}"
    put(vals, "block.title", as_text(title))
    return vals


def block_values(ctx: BedContext, phase: Phase, count: int, rep: int) -> Values:
    """The values every step of one run of a phase carries (block.*, phase.*)."""
    return _block_values(ctx, phase, count, rep)


def heading(phase: Phase, count: int, rep: int | None, ctx: BedContext) -> str:
    """'Phase 2 of 6 (cells, 1 active cells): run 1 of 3'."""
    base = f"Phase {phase.index + 1} of {count} ({phase.title})" if count > 1 else phase.title[:1].upper() + \
        phase.title[1:]
    if rep is None:
        return f"{base}: setting the bed up"
    return f"{base}: run {rep} of {_runs(ctx)}" if _repetitions_stated(ctx) else f"{base}: run {rep}"


def part_count(phase: Phase) -> int:
    """The parts of a run: one per group of loads (at least one), then the collection."""
    return max(1, len(phase.groups))


def blocks(ctx: BedContext):
    """(phase, count, repetition) for each run of each phase, in run order."""
    ps = ctx.phases
    for phase in ps:
        for rep in range(1, _runs(ctx) + 1):
            yield phase, len(ps), rep


def timeline_item(ctx: BedContext, vals: Values, target: str, platform: str, phase: Phase, count: int,
                  rep: int | None, part: int, sub: int) -> Item:
    item = Item(vals, target, platform, (phase.index, rep or 0, part), sub)
    item.position = phase.position(rep)
    if ctx.configuration is not None:
        item.position["configuration"] = ctx.configuration.name
    item.heading = heading(phase, count, rep, ctx)
    return item


@domain("run_block", BLOCK_NAMES, "each run of each phase of the test (idle, the lab's own procedure)")
def _run_blocks(ctx: BedContext) -> list[Item]:
    return [timeline_item(ctx, _block_values(ctx, p, n, r), "", "", p, n, r, 0, 0) for p, n, r in blocks(ctx)]


@domain("phase_end", BLOCK_NAMES, "each phase of the test, after its last run (the score)")
def _phase_ends(ctx: BedContext) -> list[Item]:
    return [timeline_item(ctx, _block_values(ctx, p, n, r), "", "", p, n, r, part_count(p) + 1, 0)
            for p, n, r in blocks(ctx) if r == _runs(ctx)]


@domain("reset_step", BLOCK_NAMES | field_names("reset", "text", "index"), "each reset step, in each run")
def _reset_steps(ctx: BedContext) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    out = []
    for p, n, r in blocks(ctx):
        for k, t in enumerate(rp.reset_steps):
            if str(t).strip():
                vals = _block_values(ctx, p, n, r)
                vals["reset.text"] = Val(str(t).strip().rstrip("."), f"run_plan.reset_steps[{k}]")
                vals["reset.index"] = Val(str(k + 1), "", "number")
                out.append(timeline_item(ctx, vals, "", "", p, n, r, 0, k))
    return out


@domain("procedure_step", BLOCK_NAMES | field_names("procedure", "text", "index"),
        "each step of the run plan's own procedure, in each run")
def _procedure_steps(ctx: BedContext) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    out = []
    for p, n, r in blocks(ctx):
        for k, t in enumerate(rp.procedure):
            if str(t).strip():
                vals = _block_values(ctx, p, n, r)
                vals["procedure.text"] = Val(str(t).strip().rstrip("."), f"run_plan.procedure[{k}]")
                vals["procedure.index"] = Val(str(k + 1), "", "number")
                out.append(timeline_item(ctx, vals, "", "", p, n, r, 0, 100 + k))
    return out


def _machines_under_test(ctx: BedContext, phase: Phase | None = None) -> list[str]:
    rp = ctx.bed.run_plan
    hosts = [h for h in (rp.counter_hosts if rp else []) if h in ctx.idx.servers]
    if not hosts:
        hosts = [s.id for s in ctx.bed.servers if s.role == "hypervisor" and not s.simulated]
    failed = set(phase.failed) if phase is not None else set()
    return [h for h in hosts if h not in failed]


@domain("reboot_host", HOST_NAMES | BLOCK_NAMES,
        "each server restarted before each run (the counter hosts, else the hypervisors; not those out of service)")
def _reboot_hosts(ctx: BedContext) -> list[Item]:
    out = []
    for p, n, r in blocks(ctx):
        for k, h in enumerate(_machines_under_test(ctx, p)):
            vals = host_values(ctx, ctx.idx.servers[h])
            vals.update(_block_values(ctx, p, n, r))
            out.append(timeline_item(ctx, vals, h, platform_of(ctx.idx.servers[h]), p, n, r, 0, 300 + k))
    return out


COLLECTOR_NAMES = field_names("collector", "when", "name", "kind", "file", "log", "log_text", "pid")
# what each platform's collector is and the files it writes, named after run_plan.collector:
# (kind, log, log as text, pid file, what is copied to the results)
_COLLECTORS = {
    "windows": ("Performance Monitor data collector set", "C:\\PerfLogs\\{n}", "", "", "C:\\PerfLogs\\{n}*.csv"),
    "linux": ("iostat log", "{n}-iostat.json", "{n}-iostat.txt", "{n}-iostat.pid", "{n}-iostat.json"),
    "esxi": ("esxtop log", "/tmp/{n}-esxtop.csv", "", "/tmp/{n}-esxtop.pid", "/tmp/{n}-esxtop.csv"),
    "": ("performance counter log", "", "", "", ""),
    "array": ("performance monitor", "", "", "", "")}


@domain("counter_host", HOST_NAMES | BLOCK_NAMES | COLLECTOR_NAMES,
        "each component counters are collected on, in each run: collector.when is start (before the loads) "
        "or stop (after them)")
def _counter_hosts(ctx: BedContext) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    out = []
    for p, n, r in blocks(ctx):
        for k, h in enumerate(rp.counter_hosts):
            if h in p.failed or h is NOT_STATED:
                continue        # out of service in this phase (or not named): nothing to collect
            comp = ctx.server_or_vm(h)
            platform = platform_of(comp)
            is_array = any(a.id == h for a in ctx.bed.arrays)
            kind, *files = _COLLECTORS["array" if is_array else platform if platform in _COLLECTORS else ""]
            for when, part in (("start", 0), ("stop", part_count(p) + 1)):
                vals = host_values(ctx, comp) if comp is not None else {"host.id": Val(h, "run_plan.counter_hosts")}
                vals.update(_block_values(ctx, p, n, r))
                put(vals, "collector.when", as_token(when))
                put(vals, "collector.name", as_token(rp.collector, "run_plan.collector"))
                put(vals, "collector.kind", as_text(kind))
                for name, pattern in zip(("log", "log_text", "pid", "file"), files, strict=True):
                    if pattern:
                        put(vals, f"collector.{name}", as_text(pattern.format(n=rp.collector), "run_plan.collector"))
                out.append(timeline_item(ctx, vals, h, platform, p, n, r, part, 400 + k))
    return out


GROUP_NAMES = field_names("group", "number", "count", "loads", "minutes", "duration", "runners", "after")


def _group_values(ctx: BedContext, phase: Phase, g: int) -> Values:
    vals: Values = {}
    group = phase.groups[g]
    put(vals, "group.number", as_number(g + 1))
    put(vals, "group.count", as_number(len(phase.groups)))
    put(vals, "group.loads", as_text(loads_text(ctx, phase, group.workloads), "workloads"))
    minutes = group.minutes
    if minutes is None and ctx.bed.run_plan is not None:
        minutes = stated(ctx.bed.run_plan.duration_minutes)
    if minutes is not None:
        put(vals, "group.minutes", as_number(round(minutes, 3), "workloads.duration_minutes"))
        put(vals, "group.duration", as_text(spoken_duration(minutes), "workloads.duration_minutes"))
    runners = [r for w in group.workloads for r in phase.runners.get(w.id, []) if r]
    put(vals, "group.runners", as_number(len(runners)))
    if g:
        put(vals, "group.after", as_text(loads_text(ctx, phase, phase.groups[g - 1].workloads), "workloads.order"))
    return vals


@domain("load_group", BLOCK_NAMES | GROUP_NAMES,
        "each group of loads that start together, in each run (loads of one order)")
def _load_groups(ctx: BedContext) -> list[Item]:
    out = []
    for p, n, r in blocks(ctx):
        for g in range(len(p.groups)):
            vals = _block_values(ctx, p, n, r)
            vals.update(_group_values(ctx, p, g))
            out.append(timeline_item(ctx, vals, "", "", p, n, r, g, 0))
    return out


LOAD_NAMES = WORKLOAD_NAMES | RUNNER_NAMES | BLOCK_NAMES | GROUP_NAMES | LOAD_DISK_NAMES | field_names(
    "load", "when", "ramp_minutes", "ramp_s", "targets", "length")


@domain("load", LOAD_NAMES,
        "each machine each load runs on, in each run, in its group (load.when: start), and again after the run "
        "(load.when: collect)")
def _loads(ctx: BedContext) -> list[Item]:
    out = []
    for p, n, r in blocks(ctx):
        for g, group in enumerate(p.groups):
            gvals = _group_values(ctx, p, g)
            for w in group.workloads:
                base = workload_values(ctx, w)
                # a matrix that varies one of the load's parameters (queue depth 1, then 32): the phase's level is
                # that parameter's value in this phase's command, not the workload's own
                varied = varied_parameter(w.tool, p.entry.variable, w.parameters) \
                    if p.entry is not None and p.level is not None else ""
                if varied:
                    put(base, f"workload.parameters.{varied}", as_any(p.level, f"{p.entry.id}.levels"))
                base.update(gvals)
                base.update(_block_values(ctx, p, n, r))
                ramp = stated(w.ramp_minutes)
                if ramp:
                    put(base, "load.ramp_minutes", as_number(ramp, f"{w.id}.ramp_minutes"))
                    put(base, "load.ramp_s", scaled(ramp, 60, f"{w.id}.ramp_minutes"))
                put(base, "load.targets", as_list([t for t in p.runners.get(w.id, []) if t], f"{w.id}.levels"))
                found = duration_minutes(ctx.bed, w)
                if found is not None:
                    length = (f"for {format_number(found[0])} minutes" if found[0] is not NOT_STATED
                              else "for a time the bed does not state")
                    put(base, "load.length", as_text(length, found[1]))
                wi = ctx.bed.workloads.index(w)
                for k, rid in enumerate(p.runners.get(w.id, []) or [""]):
                    comp = ctx.server_or_vm(rid) if rid else None
                    for when, part in (("start", g), ("collect", part_count(p) + 1)):
                        vals = dict(base)
                        vals.update(runner_values(ctx, rid, k, w.tool))
                        vals.update(load_disk_values(ctx, w, rid if isinstance(rid, str) else "", vals))
                        put(vals, "load.when", as_token(when))
                        out.append(timeline_item(ctx, vals, rid if isinstance(rid, str) else "", platform_of(comp),
                                                 p, n, r, part, 1000 + wi * 1000 + k))
    return out
