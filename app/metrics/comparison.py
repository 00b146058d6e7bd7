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
from typing import TYPE_CHECKING

from topology.unknown import NOT_STATED

if TYPE_CHECKING:
    from app.metrics.results import Comparison

# app.metrics.results, run_results and series are imported where a comparison is made: they bring
# numpy and the result file parsers, which the window's start (its Compare page lists the sides
# and figures from this module) does not need

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
        return self.subject == TOTAL or self.subject.endswith(LEVEL_SEP + TOTAL) or self.subject.startswith("Per ")


@dataclass
class Published:
    """A percentage the report prints for one figure, beside the same figure worked out from the
    table, each with its denominator."""
    side: str
    subject: str
    against: str
    percent: float
    computed: Comparison | None


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
    published: list[Published] = field(default_factory=list)
    aligned: str = ""               # how figures of different levels were set side by side

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sides]

    @property
    def heading(self) -> str:
        better = "higher is better" if self.higher_is_better else "lower is better"
        return f"{self.title} ({', '.join(x for x in (self.unit, better) if x)})"

    def against_every_baseline(self) -> list[str]:
        """Each row's figure of every side against every other side as the denominator."""
        names = self.names
        width = max([len(n) for n in names] + [10]) + 5
        lines = ["Every side against every baseline (row: the side, column: the denominator):"]
        for r in self.rows:
            lines.append(f"  {r.subject}")
            lines.append("    " + f"{'':<{width}}" + "".join(f"{'vs ' + n:>{width}}" for n in names))
            for i, n in enumerate(names):
                cells = []
                for j in range(len(names)):
                    a, b = r.values[i], r.values[j]
                    ok = i != j and not math.isnan(a) and not math.isnan(b) and b != 0
                    cells.append(f"{((a - b) / b * 100):+.1f} %" if ok else "-")
                lines.append("    " + f"{n:<{width}}" + "".join(f"{c:>{width}}" for c in cells))
        return lines

    def published_lines(self) -> list[str]:
        lines = []
        for p in self.published:
            said = (f"{p.subject}: the report prints {p.percent:+.1f} % for {p.side} against {p.against} "
                    f"(the denominator is {p.against})")
            if p.computed is None:
                lines.append(said + "; the table has no figure to work it out from")
                continue
            lines.append(said + f"; worked out from the table: {p.computed.formula}")
            row = next((r for r in self.rows if r.subject == p.subject), None)
            if p.against != self.baseline and row is not None:
                # the same two sides in the table's own column, over the table's denominator
                other = p.against if p.side == self.baseline else p.side
                d = row.differences[self.names.index(other)]
                if d is not None:
                    lines.append(f"  the table's column takes {self.baseline} as the denominator: {d.formula}")
        return lines

    def text(self, every_baseline: bool = False) -> str:
        """The table as `testbed-studio compare` prints it, formulas under it."""
        better = "higher is better" if self.higher_is_better else "lower is better"
        width = max([len(r.subject) for r in self.rows] + [8]) + 2
        col = max([len(n) for n in self.names] + [14]) + 2
        vs = max([len(f"{n} vs {self.baseline}") for n in self.names] + [14]) + 2
        head = f"{'':<{width}}" + "".join(f"{n:>{col}}" for n in self.names) + \
            "".join(f"{n + ' vs ' + self.baseline:>{vs}}" for n in self.names if n != self.baseline)
        del better
        lines = [f"{self.heading}; baseline: {self.baseline}", head, "-" * len(head)]
        for r in self.rows:
            cells = "".join(f"{_fmt(v):>{col}}" for v in r.values)
            diffs = "".join(f"{(f'{d.percent:+.1f} %' if d else '-'):>{vs}}"
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
        if self.aligned:
            lines += ["", self.aligned]
        if self.published:
            lines += ["", "Published percentages beside the computed ones:"] + self.published_lines()
        if every_baseline:
            lines += [""] + self.against_every_baseline()
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

def run_figures(run_dir: Path, metric: str, label: str = "") -> list[RunFigures]:
    """A run's figures per subject, one set per repetition of the test it ran (a run of the run
    section holds them all: each is one run of the median of N); figures of different phases,
    scenarios and levels are different subjects ("2 active cells: SQL1"), never added together.
    From its result files, else from its recorded series' averages."""
    from app.metrics.by_place import OUTSIDE, samples_by_place, step_windows
    from app.metrics.results import load_samples
    from app.metrics.run_results import attached
    from app.metrics.series import is_host_series
    from app.run.positions import read_positions
    total_rule = describe(metric)[3]
    per: dict[tuple, dict[str, list[float]]] = {}
    for rec in attached(run_dir):
        value = rec.figure(metric)
        if not math.isnan(value):
            place = _stage_and_run(rec.position) if rec.position else ("", "", "")
            per.setdefault(place, {}).setdefault(rec.host or rec.step or rec.stored, []).append(value)
    if not per and metric in _SERIES:
        samples = [s for s in load_samples(run_dir) if s.metric == _SERIES[metric] and is_host_series(s.source)
                   and not math.isnan(s.value)]
        positions = read_positions(run_dir)
        grouped = samples_by_place(samples, step_windows(run_dir, positions)) if positions else {OUTSIDE: samples}
        for key, group in grouped.items():
            place = _stage_and_run(dict(zip(("configuration", "phase", "scenario", "level", "repetition"), key))) \
                if key != OUTSIDE else ("", "", "")
            for smp in group:
                per.setdefault(place, {}).setdefault(smp.source, []).append(smp.value)
        reduce = statistics.fmean
    else:       # several files of one subject: loads that ran side by side add up (latency: their mean)
        reduce = sum if total_rule == "sum" else statistics.fmean
    name = label or Path(run_dir).name
    runs: dict[str, RunFigures] = {}
    several = len({scenario for scenario, _, _ in per}) > 1
    for (scenario, level, rep), subjects in per.items():
        figures = runs.setdefault(rep, RunFigures(f"{name} run {rep}" if rep else name, {}))
        for subject, values in subjects.items():
            figures.values[_subject(scenario if several else "", level, subject)] = reduce(values)
    return [f for f in runs.values() if f.values]


def _stage_and_run(position: dict) -> tuple[str, str, str]:
    """(scenario, level, repetition) of a place in the test."""
    return (str(position.get("scenario", "") or ""), str(position.get("level", "") or ""),
            str(position.get("repetition", "") or ""))


def _subject(scenario: str, level: str, subject: str) -> str:
    """'2 active cells: SQL1', 'degraded, 2 active cells: SQL1' (the scenario only where a side's
    figures come from several), 'SQL1'."""
    stage = ", ".join(x for x in (scenario, level) if x)
    return f"{stage}{LEVEL_SEP}{subject}" if stage else subject


def bed_figures(bed, name: str, metric: str) -> list[RunFigures]:
    """The figures a bed records (`results:`) for a configuration or scenario `name`: a repeated
    figure (same workload, level and subject) is one more run."""
    wanted = {metric, *(k for k, v in ALIASES.items() if v == metric)}
    runs: list[RunFigures] = []
    seen: dict[str, int] = {}
    mine = [r for r in bed.results if name in (r.configuration, r.scenario)
            and (metric_key(r.metric) in wanted or r.metric in wanted)]
    several = len({r.scenario for r in mine}) > 1
    for r in mine:
        if r.value is NOT_STATED or r.bound:
            continue            # a figure the source does not give, or gives only as a bound, is no run
        scenario = r.scenario if several and r.scenario != name else ""
        subject = _subject(scenario, r.level, r.subject or r.workload)
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
    sides, aligned, per_level = _aligned(list(sides))
    subjects = list(dict.fromkeys(k for s in sides for r in s.runs for k in r.values))
    scores = [score(s, metric, subjects) for s in sides]
    table = ComparisonTable(metric, title, unit, higher, list(sides), base, scores,
                            total_how="sum of the hosts and VMs" if rule == "sum" else "mean of the hosts and VMs")
    b = names.index(base)
    _add_rows(table, subjects, scores, names, b, metric, unit)
    if aligned:
        table.aligned = aligned
        if rule == "sum":       # a total over different numbers of VMs and cells: also per VM and per level step
            _add_per_rows(table, scores, per_level, names, b, unit)
    return table


def _aligned(sides: list[Side]) -> tuple[list[Side], str, list[float | None]]:
    """Sides measured at different levels (1 cell against 4 cells), each at one level: their
    subjects set side by side without the level, and each side's level as a number (for the
    figures per level step); unchanged when the sides share their levels."""
    from topology.run_levels import level_key
    levels = [{_level(k) for r in s.runs for k in r.values} for s in sides]
    if len(sides) < 2 or any(len(x) != 1 for x in levels) or len({next(iter(x)) for x in levels}) < 2 \
            or any(not next(iter(x)) for x in levels):
        return sides, "", []
    out = []
    numbers: list[float | None] = []
    for s, lv in zip(sides, levels, strict=True):
        level = next(iter(lv))
        runs = [RunFigures(r.label, {k.partition(LEVEL_SEP)[2]: v for k, v in r.values.items()}) for r in s.runs]
        out.append(Side(s.name, runs, s.origin))
        try:
            numbers.append(float(level_key(level)))
        except ValueError:
            numbers.append(None)
    said = "; ".join(f"{s.name} at {next(iter(lv))}" for s, lv in zip(sides, levels, strict=True))
    return out, (f"Measured at different levels ({said}): the hosts and VMs are set side by side, and each total "
                 "is also given per VM and per level step."), numbers


def _add_per_rows(table: ComparisonTable, scores: list[Scored], levels: list[float | None], names: list[str],
                  b: int, unit: str) -> None:
    from app.metrics.results import compare
    per_vm = [total_of(sc.values, table.metric) / max(1, sum(1 for v in sc.values.values() if not math.isnan(v)))
              for sc in scores]
    per_level = [total_of(sc.values, table.metric) / n if n else math.nan for sc, n in zip(scores, levels,
                                                                                            strict=True)]
    for subject, values in (("Per VM (total / VMs)", per_vm), ("Per level step (total / level)", per_level)):
        diffs: list[Comparison | None] = []
        for i, v in enumerate(values):
            ok = i != b and not math.isnan(v) and not math.isnan(values[b]) and values[b] != 0
            diffs.append(compare(values[b], v, names[b], names[i], unit) if ok else None)
        table.rows.append(Row(subject, values, diffs))


def _add_rows(table: ComparisonTable, subjects: list[str], scores: list[Scored], names: list[str], b: int,
              metric: str, unit: str) -> None:
    from app.metrics.results import compare
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


def _rests(info) -> str:
    """"; rests on HOST 30 s of 30 s (100 %)" for a side's origin; ValueError for a run whose
    samples cover too little of its step to be compared (app.metrics.coverage)."""
    from app.metrics.coverage import rests_on
    text, problem = rests_on(info.dir, info.id)
    if problem:
        raise ValueError(problem)
    return f"; {text}" if text else ""


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
            if not figures:
                raise ValueError(f"run {info.id} has no {describe(metric)[0].lower()} figure: attach its result "
                                 f"files with `testbed-studio results import {info.id} FILE...`")
            within = f" in configuration {info.configuration}" if info.configuration else ""
            sides.append(Side(info.id, figures, f"run {info.id}{within}"
                              + (f", {len(figures)} repetitions" if len(figures) > 1 else "") + _rests(info)))
            continue
        infos = [i for i in J.list_runs(runs_root) if i.configuration == ref
                 and (bed_file is None or Path(i.bed_file).resolve() == Path(bed_file).resolve())]
        runs = [f for i in infos for f in run_figures(i.dir, metric, i.id)]
        rests = "".join(f"; {i.id}{said}" for i in infos if runs for said in (_rests(i),) if said)
        recorded = bed_figures(bed, ref, metric) if bed is not None else []
        if not runs and not recorded:
            raise ValueError(f"{ref!r} is neither a run nor a configuration or scenario with "
                             f"{describe(metric)[0].lower()} figures (runs: `testbed-studio runs`)")
        origin = ", ".join(x for x in (f"{len(runs)} run(s) of configuration {ref}" if runs else "",
                                       "the bed's recorded results" if recorded else "") if x)
        sides.append(Side(ref, runs + recorded, origin + rests.replace("; rests on", " rests on")))
    return sides


def attach_published(table: ComparisonTable, bed) -> None:
    """The percentages the bed's results record (`published_percent` against `published_against`)
    for the sides and metric of the table, each worked out again from the table's figures."""
    from app.metrics.results import compare
    if bed is None:
        return
    names = table.names
    wanted = {table.metric, *(k for k, v in ALIASES.items() if v == table.metric)}
    for r in bed.results:
        pct = r.published_percent
        if pct is None or pct is NOT_STATED or metric_key(r.metric) not in wanted and r.metric not in wanted:
            continue
        side = next((n for n in (r.configuration, r.scenario) if n in names), None)
        against = r.published_against
        if side is None or against not in names:
            continue
        subject = f"{r.level}{LEVEL_SEP}{r.subject or r.workload}" if r.level else (r.subject or r.workload)
        if subject not in {row.subject for row in table.rows}:
            subject = r.subject or r.workload
        row = next((x for x in table.rows if x.subject == subject), None)
        computed = None
        if row is not None:
            a, b = row.values[names.index(side)], row.values[names.index(against)]
            if not math.isnan(a) and not math.isnan(b) and b != 0:
                computed = compare(b, a, against, side, table.unit)
        table.published.append(Published(side, subject, against, float(pct), computed))
