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
    """One table per workload, and per configuration when the bed compares several (figures of
    different configurations are never reduced together).  Repeated runs of one measurement (same
    configuration, scenario, level, subject and metric) are reduced to the run plan's score (the
    median of N by default), with the run count shown."""
    if not bed.results:
        return []
    score = (bed.run_plan.score if bed.run_plan and bed.run_plan.score else "median")
    scorer = _SCORERS.get(score, statistics.median)
    criteria = {(w.id, c.metric): c for w in bed.workloads for c in w.criteria}
    grouped: dict[tuple[str, str], dict[tuple, list]] = defaultdict(lambda: defaultdict(list))
    for r in bed.results:
        grouped[(r.configuration, r.workload)][(r.scenario, r.level, r.subject, r.metric, r.unit, r.bound)].append(r)
    tables = []
    for (configuration, workload), measurements in sorted(
            grouped.items(), key=lambda kv: (_configuration_rank(bed, kv[0][0]), list(grouped).index(kv[0]))):
        has_criteria = any((workload, key[3]) in criteria for key in measurements)
        has_runs = any(len(v) > 1 for v in measurements.values())
        cols = ["Scenario", "Level", "Subject", "Metric", "Value"]
        if has_runs:
            cols.append("Runs")
        if has_criteria:
            cols.append("Criterion")
        if configuration:
            t = Table(f"results-{slug(configuration)}-{slug(workload)}",
                      f"Results: {workload}, configuration {configuration}", cols, compact=True)
        else:
            t = Table(f"results-{slug(workload)}", f"Results: {workload}", cols, compact=True)
        previous = ("", "", "")
        for (scenario, level, subject, metric, unit, bound), rs in measurements.items():
            values = [r.value for r in rs if r.value is not NOT_STATED]
            value = (scorer(values) if len(values) > 1 else values[0]) if values else NOT_STATED
            shown_value = f"{bound} {number(value)}" if bound and value is not NOT_STATED else number(value)
            head = (scenario, level, subject)
            # repeated group values are printed once, as published result tables do
            shown, changed = [], False
            for x, p in zip(head, previous, strict=True):
                changed = changed or x != p
                shown.append(x if changed else "")
            previous = head
            row = [Cell(shown[0], ref=scenario), shown[1], Cell(shown[2], ref=subject.split("/")[0]),
                   humanize_metric(metric), Cell(f"{shown_value} {unit}".strip(), bold=True)]
            if has_runs:
                row.append(f"{score} of {len(values)}" if len(values) > 1 else "1")
            if has_criteria:
                c = criteria.get((workload, metric))
                if c is None:
                    row.append("")
                elif NOT_STATED in (value, c.threshold) or c.comparison == "between" and c.upper is NOT_STATED or \
                        bound and _bound_verdict(bound, value, c) is None:
                    why = " (value not stated)" if value is NOT_STATED else \
                        f" (the source gives {bound} {number(value)})" if bound else ""
                    row.append(Cell("not judged: " + criterion_text(c) + why))
                else:
                    ok = _bound_verdict(bound, value, c) if bound else criterion_met(c, value)
                    row.append(Cell(("pass: " if ok else "FAIL: ") + criterion_text(c), bold=not ok,
                                    fill="" if ok else "#f8d0d0"))
            t.add(*row)
        tables.append(without_empty_columns(t, keep=4))
    return tables


def _bound_verdict(bound: str, value: float, c: Any) -> bool | None:
    """Whether a figure known only as a bound ('< 10') meets a criterion; None when the bound cannot
    say (an upper bound against a lower limit, or a bound on the wrong side of the threshold)."""
    upper = bound in ("<", "<=")
    if c.comparison in ("<", "<=") and upper:
        return True if value < c.threshold or value == c.threshold and (bound == "<" or c.comparison == "<=") \
            else None
    if c.comparison in (">", ">=") and not upper:
        return True if value > c.threshold or value == c.threshold and (bound == ">" or c.comparison == ">=") \
            else None
    if c.comparison in ("<", "<=") and not upper and value >= c.threshold:
        return False        # at least the value, and the value already breaks an upper limit
    if c.comparison in (">", ">=") and upper and value <= c.threshold:
        return False
    return None


def _configuration_rank(bed: Bed, name: str) -> int:
    order = [c.id for c in bed.configurations]
    return order.index(name) + 1 if name in order else (0 if not name else len(order) + 1)


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


def run_storage_tables(run: Any) -> list[Table]:
    """The run's figures per volume, disk group or pool and VM (the device series mapped to the
    bed's storage), then each group's or pool's measured IOPS beside the predicted."""
    from app.metrics.report import KIND_WORDS, summary_rows
    from app.metrics.results import format_value
    tables = []
    for kind, word in KIND_WORDS.items():
        rows = summary_rows(run, kind)
        if not rows:
            continue
        t = Table(f"run-{slug(run.run_id)}-{kind}", f"Measured per {word}: run {run.run_id}",
                  [word.capitalize(), "Metric", "Average", "95th percentile", "Range", "Seconds", "Gaps (s)"],
                  compact=True)
        previous = ""
        for subject, *rest in rows:
            t.add(Cell(subject if subject != previous else "", ref=subject), *rest[:1], Cell(rest[1], bold=True),
                  *rest[2:])
            previous = subject
        tables.append(t)
    if run.storage:
        t = Table(f"run-{slug(run.run_id)}-predicted",
                  f"Predicted and measured IOPS per group and pool: run {run.run_id}",
                  ["Group / pool", "Disks", "RAID", "Measured IOPS", "At the mix", "Predicted IOPS",
                   "Measured / predicted", "Demand"], compact=True)
        assumptions: list[str] = []
        t.widths = [15, 6, 15, 10, 22, 10, 10, 12]
        for r in run.storage:
            array, _, rest = r.ref.partition(":")
            t.add(Cell(f"{rest.partition(':')[2]} ({r.kind}, {array})", ref=r.ref), str(r.disks), r.levels,
                  Cell(format_value(r.measured_iops), bold=True), r.mix_text, number(round(r.predicted_iops)),
                  f"{r.ratio:.2g}", number(round(r.demand_iops)) if r.demand_iops else "not stated")
            assumptions += [a for a in r.assumptions + r.notes if a not in assumptions]
        t.note = "The model's assumptions: " + "; ".join(assumptions) + "."
        tables.append(t)
    if run.unmapped:
        t = Table(f"run-{slug(run.run_id)}-unmapped", f"Disks not mapped to a volume: run {run.run_id}",
                  ["Series", "Why"], compact=True)
        for source in run.unmapped[:40]:
            t.add(source, "no volume this host uses names the device in its drive (e.g. drive: sdb or E:)")
        tables.append(t)
    return tables


def run_record_tables(run: Any) -> list[Table]:
    """The run as it happened: each step on each host, then every deviation from the plan."""
    record = getattr(run, "record", None)
    if record is None or not record.rows:
        return as_built_tables(run)
    title = f"As run: run {run.run_id}" + (f", configuration {record.configuration}" if record.configuration else "")
    t = Table(f"run-{slug(run.run_id)}-as-run", title,
              ["Step", "Host", "Status", "Started", "Ended", "Attempts", "Note"], compact=True)
    t.widths = [6, 10, 29, 10, 10, 10, 25]
    for r in record.rows:
        problem = (r.status not in ("done", "done by hand", "done by the engine")
                   and not r.status.startswith("failed, then done"))
        t.add(r.step, Cell(r.host, ref=r.host), Cell(r.status, bold=problem, fill="#f8d7da" if problem else ""),
              r.started[11:19], r.ended[11:19], str(r.attempts), r.note)
    days = sorted({x[:10] for r in record.rows for x in (r.started, r.ended) if x})
    t.note = f"Times of day on {' to '.join(dict.fromkeys([days[0], days[-1]]))} (the driver's clock)." if days else ""
    tables = [t]
    d = Table(f"run-{slug(run.run_id)}-deviations", f"Deviations from the plan: run {run.run_id}", ["Deviation"],
              compact=True)
    for line in record.deviations or ["none: every planned step ran, and the bed is as it was when the run began"]:
        d.add(line)
    tables.append(d)
    return tables + as_built_tables(run)


def as_built_tables(run: Any) -> list[Table]:
    """The as-built check kept with the run: each fact compared, the bed's value and the host's."""
    record = getattr(run, "record", None)
    rows = getattr(record, "as_built", None) or []
    if not rows:
        return []
    t = Table(f"run-{slug(run.run_id)}-as-built", f"As built: run {run.run_id}", ["Host", "Fact", "Bed", "Seen",
                                                                                 "Verdict"], compact=True)
    previous = ""
    for r in rows:
        host = str(r.get("host", ""))
        code = str(r.get("code") or "")
        t.add(Cell(host if host != previous else "", ref=host), str(r.get("fact", "")), str(r.get("expected", "")),
              Cell(str(r.get("seen", "")), bold=bool(code), fill="#f8d7da" if code else ""), code or "as drawn")
        previous = host
    t.note = "The hosts as the check read them before the run (read-only commands), against the bed."
    return [t]
