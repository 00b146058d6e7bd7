"""Appendix G: results per workload (repeated runs reduced to the run plan's score) and
the figures Testbed Studio measured in a run."""
from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from app.report.tables.model import Cell, Table, without_empty_columns
from app.report.tables.procedure import criterion_met, criterion_text
from app.report.tables.values import humanize_metric, number, slug
from topology.model import Bed
from topology.unknown import NOT_STATED

_SCORERS = {"median": statistics.median, "mean": statistics.fmean, "max": max, "min": min,
            "last": lambda xs: xs[-1]}


def results_tables(bed: Bed) -> list[Table]:
    """One table per workload.  Repeated runs of one measurement are reduced to the run
    plan's score (the median of N by default), with the run count shown."""
    if not bed.results:
        return []
    score = (bed.run_plan.score if bed.run_plan and bed.run_plan.score else "median")
    scorer = _SCORERS.get(score, statistics.median)
    criteria = {(w.id, c.metric): c for w in bed.workloads for c in w.criteria}
    grouped: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))
    for r in bed.results:
        grouped[r.workload][(r.scenario, r.level, r.subject, r.metric, r.unit)].append(r)
    tables = []
    for workload, measurements in grouped.items():
        has_criteria = any((workload, key[3]) in criteria for key in measurements)
        has_runs = any(len(v) > 1 for v in measurements.values())
        cols = ["Scenario", "Level", "Subject", "Metric", "Value"]
        if has_runs:
            cols.append("Runs")
        if has_criteria:
            cols.append("Criterion")
        t = Table(f"results-{slug(workload)}", f"Results: {workload}", cols, compact=True)
        previous = ("", "", "")
        for (scenario, level, subject, metric, unit), rs in measurements.items():
            values = [r.value for r in rs if r.value is not NOT_STATED]
            value = (scorer(values) if len(values) > 1 else values[0]) if values else NOT_STATED
            head = (scenario, level, subject)
            # repeated group values are printed once, as published result tables do
            shown, changed = [], False
            for x, p in zip(head, previous, strict=True):
                changed = changed or x != p
                shown.append(x if changed else "")
            previous = head
            row = [Cell(shown[0], ref=scenario), shown[1], Cell(shown[2], ref=subject.split("/")[0]),
                   humanize_metric(metric), Cell(f"{number(value)} {unit}".strip(), bold=True)]
            if has_runs:
                row.append(f"{score} of {len(values)}" if len(values) > 1 else "1")
            if has_criteria:
                c = criteria.get((workload, metric))
                if c is None:
                    row.append("")
                elif NOT_STATED in (value, c.threshold) or c.comparison == "between" and c.upper is NOT_STATED:
                    row.append(Cell("not judged: " + criterion_text(c) + (" (value not stated)"
                                                                           if value is NOT_STATED else "")))
                else:
                    ok = criterion_met(c, value)
                    row.append(Cell(("pass: " if ok else "FAIL: ") + criterion_text(c), bold=not ok,
                                    fill="" if ok else "#f8d0d0"))
            t.add(*row)
        tables.append(without_empty_columns(t, keep=4))
    return tables


def run_summary_table(run: Any) -> Table:
    from app.metrics.report import summary_rows
    t = Table(f"run-{slug(run.run_id)}-summary", f"Measured per host: run {run.run_id}",
              ["Host", "Metric", "Average", "95th percentile", "Range", "Seconds", "Gaps (s)"], compact=True)
    previous = ""
    for host, *rest in summary_rows(run):
        t.add(Cell(host if host != previous else "", ref=host), *rest[:1], Cell(rest[1], bold=True), *rest[2:])
        previous = host
    return t


def run_verdict_table(run: Any) -> Table | None:
    if not run.verdicts:
        return None
    t = Table(f"run-{slug(run.run_id)}-criteria", f"Pass criteria: run {run.run_id}",
              ["Workload", "Criterion", "Result", "Measured"], compact=True)
    for v in run.verdicts:
        t.add(v.workload, v.criterion, Cell("PASS" if v.passed else "FAIL", bold=True,
                                            fill="#dff0d8" if v.passed else "#f8d7da"), v.reason)
    return t
