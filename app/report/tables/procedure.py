"""Appendix F: workload definitions, access specifications, pass criteria, scenarios,
the test matrix and the run plan."""
from __future__ import annotations

from typing import Any

from app.report.tables.model import Cell, Table, missing
from app.report.tables.values import add_notes, compress_names, flat, humanize, number, slug
from topology.model import Bed
from topology.unknown import MARKER, NOT_STATED


def workload_tables(bed: Bed) -> list[Table]:
    tables = []
    for w in bed.workloads:
        t = Table(f"workload-{slug(w.id)}", f"Workload: {w.id}", ["Parameter", "Value"], kind="keyvalue",
                  widths=[32, 68], compact=True)
        t.add("Tool", Cell(w.tool, ref=w.id) if w.tool else missing(w.id, w.tool))
        t.add("Targets", Cell(compress_names(list(w.targets)) if len(w.targets) > 12 else ", ".join(w.targets),
                              ref=w.targets[0] if w.targets else "") if w.targets else missing(w.id, w.targets))
        if w.driver:
            t.add("Driven from", Cell(w.driver, ref=w.driver))
        if w.demand_iops is not None:
            t.add("Demand (IOPS)", number(w.demand_iops))
        if w.read_pct is not None:
            t.add("Read share (%)", number(w.read_pct))
        for k, v in w.parameters.items():
            if isinstance(v, dict) and (len(v) > 6 or any(isinstance(x, dict) for x in v.values())):
                t.add_group(humanize(k))
                for k2, v2 in v.items():
                    t.add(humanize(k2), Cell(flat(v2), mono=isinstance(v2, str) and "\\" in v2))
            else:
                t.add(humanize(k), flat(v))
        if w.note:
            t.note = flat(w.note)
        tables.append(t)
        if w.access:
            at = Table(f"workload-{slug(w.id)}-access", f"Access specification: {w.id}",
                       ["Share of accesses (%)", "Transfer size", "Read (%)", "Random (%)"])
            for spec in w.access:
                kb = spec.block_kb
                size = MARKER if kb is NOT_STATED else f"{number(kb)} KB" if kb >= 1 else f"{number(kb * 1024)} bytes"
                at.add(number(spec.share_pct), size, number(spec.read_pct), number(spec.random_pct))
            tables.append(at)
        if w.criteria:
            ct = Table(f"workload-{slug(w.id)}-criteria", f"Pass criteria: {w.id}",
                       ["Metric", "Pass when", "Source"], widths=[28, 22, 50], compact=True)
            for c in w.criteria:
                ct.add(Cell(c.metric, mono=True), criterion_text(c), flat(c.source))
            tables.append(ct)
    return tables


def criterion_text(c: Any) -> str:
    unit = f" {c.unit}" if c.unit else ""
    if c.comparison == "between":
        return f"between {number(c.threshold)} and {number(c.upper)}{unit}"
    return f"{c.comparison} {number(c.threshold)}{unit}"


def criterion_met(c: Any, value: float) -> bool:
    ops = {"<": value < c.threshold, "<=": value <= c.threshold, ">": value > c.threshold,
           ">=": value >= c.threshold, "==": value == c.threshold}
    if c.comparison == "between":
        return c.threshold <= value <= (c.upper if c.upper is not None else c.threshold)
    return ops.get(c.comparison, False)


def scenario_tables(bed: Bed) -> list[Table]:
    tables = []
    if bed.scenarios:
        t = Table("scenarios", "Scenarios", ["Scenario", "Description", "Components down", "Placement changes"],
                  widths=[14, 52, 14, 20], compact=True)
        for s in bed.scenarios:
            t.add(Cell(s.id + (" (reference)" if s.reference else ""), ref=s.id, bold=True), flat(s.description),
                  ", ".join(s.failed), "; ".join(f"{vm} on {h}" for vm, h in s.placement.items()))
        tables.append(add_notes(t, [(s.id, s) for s in bed.scenarios]))
    if bed.test_matrix:
        t = Table("matrix", "Test matrix", ["Variable", "Levels", "Scenarios", "Workloads", "Held constant"],
                  compact=True)
        for m in bed.test_matrix:
            t.add(Cell(m.variable, bold=True), flat(m.levels), ", ".join(m.scenarios), ", ".join(m.workloads),
                  flat(m.constants))
        tables.append(add_notes(t, [(m.id, m) for m in bed.test_matrix]))
    rp = bed.run_plan
    if rp is not None:
        t = Table("runplan", "Run plan", ["Item", "Value"], kind="keyvalue", widths=[30, 70])
        t.add("Repetitions", number(rp.repetitions) if rp.repetitions else missing(value=rp.repetitions))
        t.add("Score reported", f"{rp.score} of the runs" if rp.score else missing(value=rp.score))
        for i, step in enumerate(rp.reset_steps, 1):
            t.add(f"Reset step {i}", flat(step))
        if rp.reboot:
            t.add("Reboot before each run", "Yes")
        if rp.idle_minutes is not None:
            t.add("Idle before starting (minutes)", number(rp.idle_minutes))
        if rp.duration_minutes is not None:
            t.add("Run duration (minutes)", number(rp.duration_minutes))
        for i, step in enumerate(rp.procedure, 1):
            t.add(f"Run step {i}", flat(step))
        if rp.counters:
            t.add("Counters", "; ".join(rp.counters))
        if rp.counter_hosts:
            t.add("Counters collected on", compress_names(rp.counter_hosts) if len(rp.counter_hosts) > 12
                  else ", ".join(rp.counter_hosts))
        if rp.sample_interval_s is not None:
            t.add("Sample interval (s)", number(rp.sample_interval_s))
        tables.append(add_notes(t, [("Run plan", rp)]))
    return tables
