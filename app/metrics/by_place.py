"""A run's results by their place in the test: configuration, phase, scenario, level and
repetition (the run section's steps carry it, `app.run.positions` keeps it with the run).

One run of a bed's run section holds every phase and every repetition of the test.  Its figures
are never added or averaged across places unless asked (`results RUN --merge`): a per-second
sample belongs to the place of the step that ran on its host when it was measured (the journal's
start and end of each step), a result file to the place it was fetched or imported at.  "Median of
N" is then taken over the repetitions of one place: runs of one configuration, phase and level."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from app.metrics.results import Summary, Verdict, format_value, judge_criteria, results_table, summarize
from app.metrics.run_results import AttachedResult, attached
from app.metrics.sample import Sample
from app.run.positions import KEYS, read_positions

# samples are stamped by the host's clock, steps by the driver's: a little skew is forgiven
CLOCK_SLACK_S = 30.0
OUTSIDE: tuple[str, ...] = ("",) * (len(KEYS) - 1) + ("outside",)      # measured while no step of the test ran


def place_key(position: dict | None, configuration: str = "") -> tuple[str, ...]:
    pos = dict(position or {})
    if configuration and not pos.get("configuration"):
        pos["configuration"] = configuration
    return tuple(str(pos.get(k, "") or "") for k in KEYS)


def place_label(key: Sequence[str]) -> str:
    """'configuration hyperv, cells, 2 active cells, scenario degraded, run 2'."""
    if tuple(key) == OUTSIDE:
        return "outside the test's steps"
    configuration, phase, scenario, level, repetition = key
    parts = [f"configuration {configuration}" if configuration else "", phase,
             f"scenario {scenario}" if scenario and scenario != phase else "", level,
             f"run {repetition}" if repetition else ""]
    return ", ".join(p for p in parts if p) or "the test"


def without_repetition(key: Sequence[str]) -> tuple[str, ...]:
    return tuple(key[:-1]) + ("",)


def _time(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def step_windows(run_dir: Path, positions: dict[str, dict]) -> dict[str, list[tuple[float, float, tuple]]]:
    """Per host: (start, end, place) of every attempt of a step that has a place in the test."""
    from app.run import journal as J
    info_configuration = ""
    try:
        info_configuration = J.open_run(str(run_dir)).configuration
    except ValueError:
        pass
    open_: dict[tuple[str, str], float] = {}
    out: dict[str, list[tuple[float, float, tuple]]] = {}
    for r in J.read_journal(Path(run_dir)).records:
        step, host = str(r.get("step", "")), str(r.get("host", ""))
        if step not in positions or r.get("kind") not in ("start", "end"):
            continue
        t = _time(r.get("time"))
        if t is None:
            continue
        if r["kind"] == "start":
            open_[(step, host)] = t
        elif (step, host) in open_:
            started = open_.pop((step, host))
            seconds = r.get("seconds")
            if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 <= seconds < math.inf:
                # an adopted attempt starts when the resumed driver took it up; its end record's
                # seconds are the job's own time on the host, so its samples from before the kill
                # belong to the same window
                started = min(started, t - seconds)
            out.setdefault(host, []).append((started, t, place_key(positions[step], info_configuration)))
    for (step, host), started in open_.items():          # still running (or the driver died)
        out.setdefault(host, []).append((started, math.inf, place_key(positions[step], info_configuration)))
    for windows in out.values():
        windows.sort()
    return out


def samples_by_place(samples: Sequence[Sample], windows: dict[str, list[tuple[float, float, tuple]]]
                     ) -> dict[tuple, list[Sample]]:
    out: dict[tuple, list[Sample]] = {}
    for s in samples:
        host = s.source.partition("/")[0]
        out.setdefault(_place_at(s.timestamp, windows.get(host, ())), []).append(s)
    return out


def _place_at(t: float, windows: Sequence[tuple[float, float, tuple]]) -> tuple[str, ...]:
    """The place of the step that ran at `t` (the latest to begin, when steps overlap); else the
    nearest step within the clock slack; else outside the test."""
    inside = [key for start, end, key in windows if start <= t <= end]
    if inside:
        return inside[-1]
    near = [(min(abs(t - start), abs(t - end)), key) for start, end, key in windows]
    near = [(d, key) for d, key in near if d <= CLOCK_SLACK_S]
    return min(near, key=lambda x: x[0])[1] if near else OUTSIDE


@dataclass
class PlacedResults:
    key: tuple[str, ...]
    samples: list[Sample] = field(default_factory=list)
    files: list[AttachedResult] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    covers: list = field(default_factory=list)      # app.metrics.coverage.Coverage: what its figures rest on

    @property
    def label(self) -> str:
        return place_label(self.key)

    @property
    def short(self) -> list:
        return [c for c in self.covers if not c.enough]


@dataclass
class PlacedRun:
    run_id: str
    places: list[PlacedResults]

    @property
    def failed(self) -> bool:
        return any(not v.passed for p in self.places for v in p.verdicts) or any(p.short for p in self.places)

    def text(self, hosts_only: bool = True) -> str:
        lines: list[str] = []
        for p in self.places:
            lines.append(f"== {p.label} ==")
            if p.covers:
                lines.append("rests on: " + "; ".join(c.text() for c in p.covers))
            lines += [f"INCOMPLETE: {c.host}'s figures rest on {c.covered_s} s of the step's {c.span_s:.0f} s; resume "
                      "the run (the step is adopted and its samples collected from the host) or run the step again"
                      for c in p.short]
            if p.summaries:
                lines.append(results_table(p.summaries, p.verdicts, hosts_only).rstrip("\n"))
            for f in p.files:
                lines.append(f"result file {f.stored} ({f.tool}{', ' + f.host if f.host else ''}): "
                             + file_figures(f))
            lines.append("")
        lines += self.scores()
        return "\n".join(lines).rstrip("\n") + "\n"

    def scores(self) -> list[str]:
        """The median of each place's repetitions: figures of one configuration, phase and level only."""
        groups: dict[tuple, list[PlacedResults]] = {}
        for p in self.places:
            if p.key[-1]:
                groups.setdefault(without_repetition(p.key), []).append(p)
        out = []
        for key, reps in groups.items():
            if len(reps) < 2:
                continue
            for subject, metric, values in _per_subject(reps):
                known = [v for v in values if not math.isnan(v)]
                if len(known) >= 2:
                    out.append(f"median of {len(known)} runs of {place_label(key)}: {subject} {metric} "
                               f"{format_value(statistics.median(known))}")
        return ([""] if out else []) + out


def _per_subject(reps: list[PlacedResults]) -> list[tuple[str, str, list[float]]]:
    """(subject, metric, one figure per repetition): the host's IOPS averages, the files' own figures."""
    rows: dict[tuple[str, str], list[float]] = {}
    for k, p in enumerate(reps):
        for s in p.summaries:
            if "/" not in s.source and s.metric == "iops":
                rows.setdefault((s.source, "IOPS"), [math.nan] * len(reps))[k] = s.average
        for f in p.files:
            for name, word in (("orders_per_minute", "orders per minute"), ("iops", "IOPS (file)")):
                value = f.figure(name)
                if not math.isnan(value):
                    rows.setdefault((f.host or f.stored, word), [math.nan] * len(reps))[k] = value
                    break
    return [(subject, metric, values) for (subject, metric), values in rows.items()]


def file_figures(f: AttachedResult) -> str:
    parts = []
    for name, word, unit in (("orders_per_minute", "orders per minute", ""), ("iops", "IOPS", ""),
                             ("read_latency_ms", "read latency", " ms"), ("write_latency_ms", "write latency", " ms"),
                             ("mb_per_s", "throughput", " MB/s")):
        value = f.figure(name)
        if not math.isnan(value):
            parts.append(f"{word} {format_value(value)}{unit}")
    rt = f.figures.get("extra", {}).get("average response time ms")
    if isinstance(rt, (int, float)) and not isinstance(rt, bool):
        parts.append(f"average response time {format_value(float(rt))} ms")
    return "; ".join(parts) or "no figure"


def placed_report(run_dir: Path, samples: Sequence[Sample], bed=None, configuration: str = "") -> PlacedRun | None:
    """The run's results place by place; None when it has one place and no result file (the plain
    table then says it all)."""
    positions = read_positions(run_dir)
    files = attached(run_dir)
    by_samples = samples_by_place(samples, step_windows(run_dir, positions)) if positions else \
        ({OUTSIDE: list(samples)} if samples else {})
    by_files: dict[tuple, list[AttachedResult]] = {}
    for f in files:
        by_files.setdefault(place_key(f.position, configuration) if f.position else OUTSIDE, []).append(f)
    keys = list(dict.fromkeys([*by_samples, *by_files]))
    if len(keys) <= 1 and not files:
        return None
    order = {tuple(place_key(p, configuration)): k for k, p in enumerate(positions.values())}
    keys.sort(key=lambda key: order.get(key, len(order)))
    from app.metrics.coverage import MIN_COVERAGE, coverage
    from app.run.journal import read_journal
    records = read_journal(Path(run_dir)).records
    places = []
    for key in keys:
        p = PlacedResults(key, by_samples.get(key, []), by_files.get(key, []))
        p.summaries = summarize(p.samples) if p.samples else []
        p.covers = coverage(records, p.samples) if p.samples else []
        if bed is not None and p.summaries:
            p.verdicts = judge_criteria(p.summaries, bed, p.samples)
        short = {c.host: c for c in p.short}
        for v in p.verdicts:
            if v.host in short:     # a figure of part of the load is not the load's figure: never a PASS
                c = short[v.host]
                v.passed, v.incomplete = False, (f"not judged: its samples cover {c.fraction:.0%} of step {c.step} "
                                                 f"on {v.host}, under {MIN_COVERAGE:.0%}")
        places.append(p)
    return PlacedRun(Path(run_dir).name, places)


def print_placed(info, samples: Sequence[Sample], csv_path: str | None, hosts_only: bool) -> bool | None:
    """`results RUN` for a run with more than one place in the test, or with result files: the
    tables place by place.  Returns whether a pass criterion failed; None when the run has one
    place and no file (the plain table is printed instead).  OSError from writing the CSV."""
    import sys
    bed = None
    try:
        from topology.fileformat import load
        bed = load(info.bed_file)
    except Exception:            # the bed moved or no longer loads: the figures are printed unjudged
        bed = None
    report = placed_report(info.dir, samples, bed, info.configuration)
    if report is None:
        return None
    files = sum(len(p.files) for p in report.places)
    print(f"run {info.id}: {len(samples)} samples, {files} result file(s), {len(report.places)} place(s) in the "
          "test (each on its own; --merge for one table)")
    sys.stdout.write(report.text(hosts_only))
    if csv_path:
        write_placed_csv(Path(csv_path), report)
        print(f"wrote {csv_path}")
    return report.failed


def write_placed_csv(path: Path, report: PlacedRun) -> None:
    import csv
    import io

    from topology.fileformat import write_atomic
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["kind", *KEYS, "source", "metric", "unit", "average", "p95", "min", "max", "seconds", "gaps"])
    for p in report.places:
        for s in p.summaries:
            w.writerow(["summary", *p.key, s.source, s.metric, s.unit, *(_csv(v) for v in (
                s.average, s.p95, s.minimum, s.maximum)), s.seconds, s.gaps])
        for f in p.files:
            for name in ("iops", "read_latency_ms", "write_latency_ms", "mb_per_s", "orders_per_minute"):
                if not math.isnan(f.figure(name)):
                    w.writerow(["file", *p.key, f.host or f.stored, name, "", _csv(f.figure(name)), "", "", "", "", ""])
    write_atomic(path, buf.getvalue().encode("utf-8"))


def _csv(v: float) -> str:
    return "" if math.isnan(v) else f"{v:.6g}"
