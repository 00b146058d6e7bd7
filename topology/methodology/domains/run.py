"""The run section's domains: the run plan, test matrix, scenarios, reset and procedure steps, and
the hosts restarted or watched during a run.  The run plan's own values (run.*) are bed-wide:
see `bed_wide`."""
from __future__ import annotations

from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.hosts import HOST_NAMES, host_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    Val,
    ValueKind,
    Values,
    as_any,
    as_bool,
    as_list,
    as_text,
    field_names,
    plain,
    put,
    put_fields,
)


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


@domain("reset_step", field_names("reset", "text", "index"), "each reset step of the run plan")
def _reset_steps(ctx: BedContext) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    return [Item({"reset.text": Val(str(t).strip().rstrip("."), f"run_plan.reset_steps[{k}]"),
                  "reset.index": Val(str(k + 1), "", "number")},
                 "", "", (), 200 + k) for k, t in enumerate(rp.reset_steps) if str(t).strip()]


@domain("procedure_step", field_names("procedure", "text", "index"), "each step of the run plan's own procedure")
def _procedure_steps(ctx: BedContext) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    return [Item({"procedure.text": Val(str(t).strip().rstrip("."), f"run_plan.procedure[{k}]"),
                  "procedure.index": Val(str(k + 1), "", "number")}, "", "", (), 600 + k)
            for k, t in enumerate(rp.procedure) if str(t).strip()]


def _machines_under_test(ctx: BedContext) -> list[str]:
    rp = ctx.bed.run_plan
    hosts = [h for h in (rp.counter_hosts if rp else []) if h in ctx.idx.servers]
    if not hosts:
        hosts = [s.id for s in ctx.bed.servers if s.role == "hypervisor" and not s.simulated]
    return hosts


@domain("reboot_host", HOST_NAMES, "each server restarted before a run (the counter hosts, else the hypervisors)")
def _reboot_hosts(ctx: BedContext) -> list[Item]:
    return [Item(host_values(ctx, ctx.idx.servers[h]), h, platform_of(ctx.idx.servers[h]), (), 300 + k)
            for k, h in enumerate(_machines_under_test(ctx))]


@domain("counter_host", HOST_NAMES, "each server performance counters are collected on")
def _counter_hosts(ctx: BedContext) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    out = []
    for k, h in enumerate(rp.counter_hosts):
        comp = ctx.server_or_vm(h)
        vals = host_values(ctx, comp) if comp is not None else {"host.id": Val(h, "run_plan.counter_hosts")}
        out.append(Item(vals, h, platform_of(comp), (), 400 + k))
    return out

