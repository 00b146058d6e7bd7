"""Configurations and runs side by side, as comparison reports print them: one figure per host
or VM and in total for each side, the score of N runs, and the percentage difference of each
side from a named baseline with its formula and its denominator.

A side is one run, every run of one configuration, or the figures a bed records for a
configuration or scenario (`results:`).  Where a run's figures come from: the result files
kept with it (app.metrics.run_results: DVD Store's orders per minute, a tool's IOPS), else
the per-second series it recorded (the host's average).

The score of N runs is the reports' median run: for an odd N the run whose total is the
median, with that run's own per-VM figures (so the VMs add up to the total); for an even N
each figure's median on its own (the mean of the two middle runs), said so.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.metrics.results import Comparison, compare, load_samples
from app.metrics.run_results import attached
from app.metrics.series import is_host_series
from topology.unknown import NOT_STATED

# metric name -> (what it is called, unit, higher is better, how the total is made)
METRICS: dict[str, tuple[str, str, bool, str]] = {
    "orders_per_minute": ("Orders per minute", "OPM", True, "sum"),
    "iops": ("IOPS", "IO/s", True, "sum"),
    "read_iops": ("Read IOPS", "IO/s", True, "sum"),
    "write_iops": ("Write IOPS", "IO/s", True, "sum"),
    "mb_per_s": ("Throughput", "MB/s", True, "sum"),
    "read_latency_ms": ("Read latency", "ms", False, "mean"),
    "write_latency_ms": ("Write latency", "ms", False, "mean"),
}
ALIASES = {"opm": "orders_per_minute", "orders": "orders_per_minute", "throughput_mbps": "mb_per_s",
           "mbps": "mb_per_s", "read_latency": "read_latency_ms", "write_latency": "write_latency_ms"}
# a run's per-second series, for a run no result file was attached to
_SERIES = {"iops": "iops", "read_iops": "read_iops", "write_iops": "write_iops", "mb_per_s": "throughput_mbps",
           "read_latency_ms": "read_latency_ms", "write_latency_ms": "write_latency_ms"}
TOTAL = "Total"


def metric_key(name: str) -> str:
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    return ALIASES.get(key, key)


def describe(metric: str) -> tuple[str, str, bool, str]:
    """(title, unit, higher is better, total rule); a metric not listed is read from its name:
    a time or latency (`..._ms`) is better lower and is averaged, not added."""
    if metric in METRICS:
        return METRICS[metric]
    timed = any(w in metric for w in ("latency", "response", "time")) or metric.endswith("_ms")
    unit = "ms" if metric.endswith("_ms") else "s" if metric.endswith("_s") else ""
    words = metric.removesuffix("_ms").removesuffix("_s").replace("_", " ")
    return words[:1].upper() + words[1:], unit, not timed, "mean" if timed else "sum"


LEVEL_SEP = ": "        # "500 users: SQL2008" - a figure of one level of a test matrix


@dataclass
class RunFigures:
    """One run's figure per subject (host or VM; a level such as "500 users" in front when the
    figures have levels)."""
    label: str
    values: dict[str, float]


@dataclass
class Side:
    name: str
    runs: list[RunFigures]
    origin: str = ""                    # "3 runs of configuration esxi", "run R", "the bed's results"


@dataclass
class Scored:
    """A side's score: its figure per subject and the total, and how they were taken."""
    values: dict[str, float]
    how: str


@dataclass
class Row:
    subject: str
    values: list[float]                   # one per side
    differences: list[Comparison | None]  # one per side; None for the baseline and missing figures

    @property
    def is_total(self) -> bool:
        return self.subject == TOTAL or self.subject.endswith(LEVEL_SEP + TOTAL)


@dataclass
class ComparisonTable:
    metric: str
    title: str
    unit: str
    higher_is_better: bool
    sides: list[Side]
    baseline: str
    scores: list[Scored]
    rows: list[Row] = field(default_factory=list)
    total_how: str = ""

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sides]

    def text(self) -> str:
        """The table as `testbed-studio compare` prints it, formulas under it."""
        better = "higher is better" if self.higher_is_better else "lower is better"
        width = max([len(r.subject) for r in self.rows] + [8]) + 2
        head = f"{'':<{width}}" + "".join(f"{n:>16}" for n in self.names) + \
            "".join(f"{'vs ' + self.baseline:>16}" for n in self.names if n != self.baseline)
        lines = [f"{self.title} ({self.unit}, {better}); baseline: {self.baseline}", head, "-" * len(head)]
        for r in self.rows:
            cells = "".join(f"{_fmt(v):>16}" for v in r.values)
            diffs = "".join(f"{(f'{d.percent:+.1f} %' if d else '-'):>16}"
                            for n, d in zip(self.names, r.differences, strict=True) if n != self.baseline)
            lines.append(f"{r.subject:<{width}}{cells}{diffs}")
        lines.append("")
        for side, score in zip(self.sides, self.scores, strict=True):
            lines.append(f"{side.name}: {score.how}" + (f" ({side.origin})" if side.origin else ""))
        if self.total_how and any(r.is_total for r in self.rows):
            lines.append(f"{TOTAL}: {self.total_how}")
        lines.append("")
        for r in self.rows:
            for name, d in zip(self.names, r.differences, strict=True):
                if d is not None:
                    lines.append(f"{r.subject}: {d.formula}{self.verdict(name, d)}")
        return "\n".join(lines) + "\n"


    def verdict(self, name: str, d: Comparison) -> str:
        """Which way a difference goes, where a lower figure is the better one (latency)."""
        if self.higher_is_better or d.percent == 0:
            return ""
        return f" (lower is better: {name} is {'worse' if d.percent > 0 else 'better'})"


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


# ====================================================================== where figures come from

def run_figures(run_dir: Path, metric: str, label: str = "") -> RunFigures | None:
    """A run's figure per subject: its result files', else its recorded series' averages."""
    total_rule = describe(metric)[3]
    per: dict[str, list[float]] = {}
    for rec in attached(run_dir):
        value = rec.figure(metric)
        if not math.isnan(value):
            per.setdefault(rec.host or rec.step or rec.stored, []).append(value)
    if not per and metric in _SERIES:
        for s in load_samples(run_dir):
            if s.metric == _SERIES[metric] and is_host_series(s.source) and not math.isnan(s.value):
                per.setdefault(s.source, []).append(s.value)
        values = {k: statistics.fmean(v) for k, v in per.items()}
    else:       # several files of one subject: loads that ran side by side add up (latency: their mean)
        values = {k: (sum(v) if total_rule == "sum" else statistics.fmean(v)) for k, v in per.items()}
    return RunFigures(label or Path(run_dir).name, values) if values else None


def bed_figures(bed, name: str, metric: str) -> list[RunFigures]:
    """The figures a bed records (`results:`) for a configuration or scenario `name`: a repeated
    figure (same workload, level and subject) is one more run."""
    wanted = {metric, *(k for k, v in ALIASES.items() if v == metric)}
    runs: list[RunFigures] = []
    seen: dict[str, int] = {}
    for r in bed.results:
        if name not in (r.configuration, r.scenario) or metric_key(r.metric) not in wanted and r.metric not in wanted:
            continue
        if r.value is NOT_STATED or r.bound:
            continue            # a figure the source does not give, or gives only as a bound, is no run
        subject = f"{r.level}{LEVEL_SEP}{r.subject or r.workload}" if r.level else (r.subject or r.workload)
        n = seen.get(subject, 0)
        seen[subject] = n + 1
        while len(runs) <= n:
            runs.append(RunFigures(f"{name} #{len(runs) + 1}", {}))
        runs[n].values[subject] = float(r.value)
    return runs


# ====================================================================== scoring and comparing

def total_of(values: dict[str, float], metric: str) -> float:
    known = [v for v in values.values() if not math.isnan(v)]
    if not known:
        return math.nan
    return sum(known) if describe(metric)[3] == "sum" else statistics.fmean(known)


def score(side: Side, metric: str, subjects: Sequence[str]) -> Scored:
    runs = side.runs
    if len(runs) == 1:
        return Scored(dict(runs[0].values), f"run {runs[0].label}" if side.origin.startswith("run")
                      else "the one figure recorded")
    if len(runs) % 2:
        ranked = sorted(runs, key=lambda r: total_of(r.values, metric))
        middle = ranked[len(ranked) // 2]
        return Scored(dict(middle.values), f"the median run of {len(runs)} by total: {middle.label}")
    values = {}
    for s in subjects:
        known = [r.values[s] for r in runs if s in r.values and not math.isnan(r.values[s])]
        values[s] = statistics.median(known) if known else math.nan
    return Scored(values, f"median of {len(runs)} runs, each figure on its own (the mean of the two middle runs)")


def compare_sides(sides: Sequence[Side], metric: str, baseline: str | None = None) -> ComparisonTable:
    """Every side's figure per subject and in total, each against the baseline (the first side
    unless named).  ValueError for a baseline that is not one of the sides, or no sides."""
    if not sides:
        raise ValueError("nothing to compare: name runs or configurations")
    names = [s.name for s in sides]
    base = baseline or names[0]
    if base not in names:
        raise ValueError(f"the baseline {base!r} is not one of the compared: {', '.join(names)}")
    title, unit, higher, rule = describe(metric)
    subjects = list(dict.fromkeys(k for s in sides for r in s.runs for k in r.values))
    scores = [score(s, metric, subjects) for s in sides]
    table = ComparisonTable(metric, title, unit, higher, list(sides), base, scores,
                            total_how="sum of the hosts and VMs" if rule == "sum" else "mean of the hosts and VMs")
    b = names.index(base)
    for subject in _with_totals(subjects):
        level, _, total = subject.rpartition(LEVEL_SEP) if subject.endswith(TOTAL) else ("", "", "")
        if total == TOTAL:
            values = [total_of({k: v for k, v in sc.values.items() if _level(k) == level}, metric) for sc in scores]
        else:
            values = [sc.values.get(subject, math.nan) for sc in scores]
        diffs: list[Comparison | None] = []
        for i, v in enumerate(values):
            ok = i != b and not math.isnan(v) and not math.isnan(values[b]) and values[b] != 0
            diffs.append(compare(values[b], v, names[b], names[i], unit) if ok else None)
        table.rows.append(Row(subject, values, diffs))
    return table


def _level(subject: str) -> str:
    return subject.partition(LEVEL_SEP)[0] if LEVEL_SEP in subject else ""


def _with_totals(subjects: list[str]) -> list[str]:
    """The subjects, each level's followed by its total when it has more than one (the totals of
    different levels are different measurements: never added together)."""
    out: list[str] = []
    levels = list(dict.fromkeys(_level(s) for s in subjects))
    for level in levels:
        members = [s for s in subjects if _level(s) == level]
        out += members
        if len(members) > 1:
            out.append(f"{level}{LEVEL_SEP}{TOTAL}" if level else TOTAL)
    return out


def resolve_sides(refs: Iterable[str], metric: str, *, runs_root: Path | None = None, bed=None,
                  bed_file: str | None = None) -> list[Side]:
    """Each name as a side: a run (id or folder), else a configuration (every run of it, plus
    the bed's recorded figures), else a scenario of the bed's recorded figures.  ValueError
    naming a reference that is none of these, or one with no figure of the metric."""
    from app.run import journal as J
    sides = []
    for ref in refs:
        try:
            info = J.open_run(ref, runs_root)
        except ValueError:
            info = None
        if info is not None:
            figures = run_figures(info.dir, metric, info.id)
            if figures is None:
                raise ValueError(f"run {info.id} has no {describe(metric)[0].lower()} figure: attach its result "
                                 f"files with `testbed-studio results import {info.id} FILE...`")
            within = f" in configuration {info.configuration}" if info.configuration else ""
            sides.append(Side(info.id, [figures], f"run {info.id}{within}"))
            continue
        runs = [f for i in J.list_runs(runs_root) if i.configuration == ref
                and (bed_file is None or Path(i.bed_file).resolve() == Path(bed_file).resolve())
                if (f := run_figures(i.dir, metric, i.id)) is not None]
        recorded = bed_figures(bed, ref, metric) if bed is not None else []
        if not runs and not recorded:
            raise ValueError(f"{ref!r} is neither a run nor a configuration or scenario with "
                             f"{describe(metric)[0].lower()} figures (runs: `testbed-studio runs`)")
        origin = ", ".join(x for x in (f"{len(runs)} run(s) of configuration {ref}" if runs else "",
                                       "the bed's recorded results" if recorded else "") if x)
        sides.append(Side(ref, runs + recorded, origin))
    return sides
