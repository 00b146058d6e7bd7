"""Values every step can use, whatever its `foreach`: the bed's own (bed.*) and its run plan's (run.*).

The run plan's values live here, not with the run domains: they are bed-wide like bed.*, so a
template of any section may read them, and every domain's set of known names includes them.
"""
from __future__ import annotations

import re

from topology.methodology.context import BedContext
from topology.methodology.values import (
    Values,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    format_number,
    put,
    scaled,
)
from topology.model import BedInfo
from topology.unknown import stated

BED_FIELDS = ("name", "domain", "publisher", "dns", "dns_csv")


def bed_values(ctx: BedContext) -> Values:
    b = ctx.bed.bed or BedInfo(name="")
    out: Values = {}
    put(out, "bed.name", as_text(b.name, "bed.name"))
    put(out, "bed.domain", as_text(b.domain, "bed.domain"))
    put(out, "bed.publisher", as_text(b.publisher, "bed.publisher"))
    dns = []
    src = ""
    for s in ctx.dc_servers:
        ip = ctx.primary_ip(s)
        if ip:
            dns.append(ip[0])
            src = src or ip[1]
    put(out, "bed.dns", as_list(dns, src))
    put(out, "bed.dns_csv", as_text(",".join(dns), src))
    return out


RUN_FIELDS = ("present", "repetitions", "repeat_more", "score", "score_text", "reboot", "needs_reboot", "needs_idle",
              "idle_minutes", "idle_s", "duration_minutes", "duration_s", "counters", "counter_hosts",
              "sample_interval_s", "sampling", "has_procedure", "loads", "note")
# a reset procedure that already restarts the hosts needs no extra reboot step
_RESTART = re.compile(r"\b(restart|reboot)", re.I)


def run_values(ctx: BedContext) -> Values:
    rp = ctx.bed.run_plan
    out: Values = {}
    put(out, "run.present", as_bool(rp is not None))
    if rp is None:
        return out
    put(out, "run.repetitions", as_number(rp.repetitions, "run_plan.repetitions"))
    if rp.repetitions:
        put(out, "run.repeat_more", as_number(rp.repetitions - 1, "run_plan.repetitions"))
    put(out, "run.score", as_token(rp.score, "run_plan.score"))
    put(out, "run.score_text", as_text({"median": "median run", "mean": "mean of the runs", "max": "best run",
                                        "min": "worst run", "last": "last run"}.get(rp.score, rp.score),
                                       "run_plan.score"))
    put(out, "run.reboot", as_bool(rp.reboot, "run_plan.reboot"))
    put(out, "run.needs_reboot", as_bool(rp.reboot and not any(_RESTART.search(s) for s in rp.reset_steps),
                                         "run_plan.reboot"))
    put(out, "run.idle_minutes", as_number(rp.idle_minutes, "run_plan.idle_minutes"))
    idle_minutes = stated(rp.idle_minutes)
    if idle_minutes:
        # the lab's own procedure may already hold the idle wait ("Wait 10 minutes")
        idle = re.compile(rf"\b(wait|idle)\b.*\b{format_number(idle_minutes)}\s*min", re.I)
        put(out, "run.needs_idle", as_bool(not any(idle.search(str(s)) for s in rp.procedure), "run_plan.idle_minutes"))
    put(out, "run.idle_s", scaled(rp.idle_minutes, 60, "run_plan.idle_minutes"))
    put(out, "run.duration_minutes", as_number(rp.duration_minutes, "run_plan.duration_minutes"))
    put(out, "run.duration_s", scaled(rp.duration_minutes, 60, "run_plan.duration_minutes"))
    put(out, "run.counters", as_list(rp.counters, "run_plan.counters"))
    put(out, "run.counter_hosts", as_list(rp.counter_hosts, "run_plan.counter_hosts"))
    put(out, "run.sample_interval_s", as_number(rp.sample_interval_s, "run_plan.sample_interval_s"))
    if rp.sample_interval_s is not None:     # prose that reads well when the bed does not state it
        every = stated(rp.sample_interval_s)
        put(out, "run.sampling", as_text(f"one sample every {format_number(every)} s" if every is not None else
                                         "at a sample interval the bed does not state", "run_plan.sample_interval_s"))
    put(out, "run.has_procedure", as_bool(bool(rp.procedure), "run_plan.procedure"))
    loads = []
    for w in ctx.bed.workloads:
        runners = [r for r in ctx.runners(w) if r]
        loads.append(f"{w.tool} on {', '.join(runners)}" if runners else w.tool)
    put(out, "run.loads", as_list(loads, "workloads"))
    put(out, "run.note", as_text(rp.note, "run_plan.note"))
    return out



BED_WIDE_NAMES = field_names("bed", *BED_FIELDS) | field_names("run", *RUN_FIELDS)
