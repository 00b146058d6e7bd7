"""The workloads section's domains: workloads, the machines they run on, their parameters, access
specifications and pass criteria."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    ValueKind,
    Values,
    as_any,
    as_bool,
    as_list,
    as_number,
    as_plain_text,
    as_text,
    as_token,
    field_names,
    format_number,
    not_stated,
    put,
    put_fields,
    scaled,
    setting_entries,
)
from topology.model import VM
from topology.safe_paths import file_name_for
from topology.unknown import MARKER, NOT_STATED
from topology.workload_time import duration_minutes

_COMPARISON_TEXT = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "equal to",
                    "between": "between"}

_WORKLOAD_FIELDS: dict[str, ValueKind] = {
    "id": as_text, "tool": as_text, "targets": as_list, "driver": as_text, "note": as_text, "demand_iops": as_number,
    "read_pct": as_number}
WORKLOAD_NAMES = field_names("workload", *_WORKLOAD_FIELDS, "duration_minutes", "duration_s", "access_count",
                             "fio_bssplit", "fio_rw", "rwmixread", "criteria_text", "report_file")


def workload_values(ctx: BedContext, w: Any) -> Values:
    out: Values = {}
    r = w.id
    put_fields(out, "workload", w, r, _WORKLOAD_FIELDS)
    # the id as a plain file name: a workload called `../x` must not write outside the host's folder
    put(out, "workload.report_file", as_text(file_name_for(str(w.id)) + ".json", f"{r}.id"))
    params = w.parameters
    dur = duration_minutes(ctx.bed, w)
    if dur is not None:
        put(out, "workload.duration_minutes", as_number(dur[0], dur[1]))
        put(out, "workload.duration_s", scaled(dur[0], 60, dur[1]))
    for k, v in params.items():
        put(out, f"workload.parameters.{k}", as_any(v, f"{r}.parameters.{k}"))
    access_unstated = any(NOT_STATED in (a.share_pct, a.block_kb, a.read_pct, a.random_pct) for a in w.access)
    if access_unstated:   # the mix the tool is given cannot be worked out: say so, build no parameter
        for name in ("rwmixread", "fio_rw", "fio_bssplit"):
            put(out, f"workload.{name}", not_stated(f"{r}.access"))
    elif w.access:
        put(out, "workload.access_count", as_number(len(w.access), f"{r}.access"))
        total = sum(a.share_pct for a in w.access) or 1
        read = sum(a.share_pct * a.read_pct for a in w.access) / total
        rand = sum(a.share_pct * a.random_pct for a in w.access) / total
        put(out, "workload.rwmixread", as_number(round(read), f"{r}.access"))
        rw = ("randrw" if rand >= 50 else "rw") if 0 < read < 100 else \
             ("randread" if read >= 100 else "randwrite") if rand >= 50 else ("read" if read >= 100 else "write")
        put(out, "workload.fio_rw", as_token(rw, f"{r}.access"))

        def kb(x: float) -> str:
            return f"{int(x * 1024)}" if x < 1 else f"{format_number(x)}k"
        split = ":".join(f"{kb(a.block_kb)}/{format_number(a.share_pct)}" for a in w.access)
        put(out, "workload.fio_bssplit", as_token(split, f"{r}.access"))
    crit = [f"{c.metric} {_COMPARISON_TEXT.get(c.comparison, c.comparison)} {_number_text(c.threshold)}"
            + (f"–{_number_text(c.upper)}" if c.comparison == "between" and c.upper is not None else "")
            + (f" {c.unit}" if c.unit else "") for c in w.criteria]
    put(out, "workload.criteria_text", as_text("; ".join(crit), f"{r}.criteria"))
    return out



def _complement(pct: Any) -> Any:
    """100 less a percentage (writes from reads); None and not stated stay as they are."""
    return pct if pct is None or pct is NOT_STATED else 100 - pct


def _number_text(x: Any) -> str:
    return MARKER if x is NOT_STATED else format_number(x)


RUNNER_NAMES = field_names("runner", "id", "platform", "kind", "index", "has_tool", "where", "from")


def _lists_tool(comp: Any, tool: str) -> bool:
    """Whether the machine's own software list already names the tool (installed there, once)."""
    words = re.findall(r"[a-z0-9]+", str(tool).lower())
    if comp is None or not words:
        return False
    pattern = re.compile(r"\b" + re.escape(words[0]) + r"\b", re.I)
    return any(pattern.search(str(s)) for s in getattr(comp, "software", None) or [])


def runner_values(ctx: BedContext, rid: str, k: int, tool: str = "") -> Values:
    vals: Values = {}
    comp = ctx.server_or_vm(rid)
    put(vals, "runner.has_tool", as_bool(_lists_tool(comp, tool)))
    put(vals, "runner.id", as_text(rid, "workload.driver"))
    # prose that reads well when the bed does not name the machine
    named = bool(rid) and rid is not NOT_STATED
    put(vals, "runner.where", as_text(f"on {rid}" if named else
                                      "on the machine that runs it (the bed does not name it)", "workload.driver"))
    put(vals, "runner.from", as_text(f"from {rid}" if named else
                                     "from the machine that ran it (the bed does not name it)", "workload.driver"))
    put(vals, "runner.platform", as_token(platform_of(comp)))
    put(vals, "runner.kind", as_token("vm" if isinstance(comp, VM) else "server" if comp is not None else ""))
    put(vals, "runner.index", as_number(k + 1))
    return vals


def _workload_items(ctx: BedContext, sub: int, per_workload: Callable[[Any, Values], Iterable[Values]],
                    on_runner: bool = True) -> list[Item]:
    """Items of each workload: `per_workload` gets a workload and its values.  An item is done on the
    workload's first runner, or (`on_runner` False) on no machine: a pass criterion is a judgement."""
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        base = workload_values(ctx, w)
        target = ctx.runners(w)[0] if on_runner else ""
        platform = platform_of(ctx.server_or_vm(target)) if on_runner else ""
        for k, vals in enumerate(per_workload(w, base)):
            out.append(Item(vals, target, platform, (i,), sub + k))
    return out


@domain("workload", WORKLOAD_NAMES | RUNNER_NAMES | field_names("workload", "runners"),
        "each workload (target: the machine that drives it, or its first target)")
def _workloads(ctx: BedContext) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        vals = workload_values(ctx, w)
        runners = ctx.runners(w)
        put(vals, "workload.runners", as_list(runners, f"{w.id}.driver" if w.driver else f"{w.id}.targets"))
        vals.update(runner_values(ctx, runners[0], 0, w.tool))
        out.append(Item(vals, runners[0], platform_of(ctx.server_or_vm(runners[0])), (i,), 0))
    return out


@domain("workload_runner", WORKLOAD_NAMES | RUNNER_NAMES, "each machine each workload's tool runs on")
def _workload_runners(ctx: BedContext) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        base = workload_values(ctx, w)
        for k, rid in enumerate(ctx.runners(w)):
            vals = dict(base)
            vals.update(runner_values(ctx, rid, k, w.tool))
            out.append(Item(vals, rid, platform_of(ctx.server_or_vm(rid)), (i,), 10 + k))
    return out


@domain("workload_param", WORKLOAD_NAMES | field_names("param", "name", "label", "value", "index"),
        "each parameter of each workload")
def _workload_params(ctx: BedContext) -> list[Item]:
    def per(w: Any, base: Values):
        for k, vals, _, _ in setting_entries(base, "param", w.parameters, f"{w.id}.parameters", as_plain_text):
            put(vals, "param.index", as_number(k + 1))
            yield vals
    return _workload_items(ctx, 100, per)


@domain("access_spec", WORKLOAD_NAMES | field_names("spec", "n", "share_pct", "block_kb", "read_pct", "write_pct",
                                                    "random_pct", "sequential_pct"),
        "each access-specification line of each workload")
def _access_specs(ctx: BedContext) -> list[Item]:
    def per(w: Any, base: Values):
        for k, a in enumerate(w.access):
            vals = dict(base)
            src = f"{w.id}.access[{k}]"
            put(vals, "spec.n", as_number(k + 1))
            put(vals, "spec.share_pct", as_number(a.share_pct, f"{src}.share_pct"))
            put(vals, "spec.block_kb", as_number(a.block_kb, f"{src}.block_kb"))
            put(vals, "spec.read_pct", as_number(a.read_pct, f"{src}.read_pct"))
            put(vals, "spec.write_pct", as_number(_complement(a.read_pct), f"{src}.read_pct"))
            put(vals, "spec.random_pct", as_number(a.random_pct, f"{src}.random_pct"))
            put(vals, "spec.sequential_pct", as_number(_complement(a.random_pct), f"{src}.random_pct"))
            yield vals
    return _workload_items(ctx, 500, per)


_CRITERION_FIELDS: dict[str, ValueKind] = {
    "metric": as_text, "comparison": as_text, "threshold": as_number, "upper": as_number, "unit": as_text,
    "source": as_text, "note": as_text}


@domain("criterion", WORKLOAD_NAMES | field_names("criterion", *_CRITERION_FIELDS, "comparison_text"),
        "each pass criterion of each workload")
def _criteria(ctx: BedContext) -> list[Item]:
    def per(w: Any, base: Values):
        for k, c in enumerate(w.criteria):
            vals = dict(base)
            src = f"{w.id}.criteria[{k}]"
            put_fields(vals, "criterion", c, src, _CRITERION_FIELDS)
            put(vals, "criterion.comparison_text", as_text(_COMPARISON_TEXT.get(c.comparison, c.comparison),
                                                           f"{src}.comparison"))
            yield vals
    return _workload_items(ctx, 900, per, on_runner=False)

