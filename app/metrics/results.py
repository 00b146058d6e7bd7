"""A run's metrics on disk, and the results the reports publish from them.

Layout: `<run_dir>/metrics.jsonl`, one sample per line, appended and flushed as samples
arrive (a torn last line after a crash is ignored when read back).

Summaries follow the reports: per workload series the average, the 95th percentile, the
minimum and maximum and the seconds spent beyond each pass criterion; pass or fail per
criterion with the figure that decided it; the median of N runs; and a comparison of two
configurations that says which figure is the denominator.
"""
from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.metrics.record import METRICS_FILE, MetricsRecorder  # noqa: F401 - written there, read here
from app.metrics.sample import Sample
from app.metrics.series import is_host_series, time_beyond
from topology.unknown import NOT_STATED
from topology.vocabulary import criterion_words


def load_samples(run_dir: Path) -> list[Sample]:
    out: list[Sample] = []
    try:
        text = (Path(run_dir) / METRICS_FILE).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return out
    for line in text.splitlines():
        try:
            t, src, metric, value, unit = json.loads(line)
            t, value = float(t), math.nan if value is None else float(value)
        except (ValueError, TypeError, RecursionError, OverflowError):
            continue        # a line torn by a crash, or one no run wrote
        if math.isfinite(t) and not math.isinf(value) and all(isinstance(x, str) for x in (src, metric, unit)):
            out.append(Sample(t, src, metric, value, unit))
    return out


@dataclass
class Summary:
    source: str
    metric: str
    unit: str
    average: float
    p95: float
    minimum: float
    maximum: float
    seconds: int               # samples with a value
    gaps: int                  # seconds without one


def covered_seconds(times: np.ndarray) -> np.ndarray:
    """The time each sample covers: since the sample before it (the first one: the series' usual
    interval).  A sample after a pause stands for the whole pause, as fio's and iostat's do."""
    if times.size < 2:
        return np.ones(times.size)
    order = np.argsort(times, kind="stable")
    dt = np.empty(times.size)
    steps = np.diff(times[order])
    positive = steps[steps > 0]
    dt[order[1:]] = np.maximum(steps, 0.0)
    dt[order[0]] = float(np.median(positive)) if positive.size else 1.0
    return dt


def summarize(samples: Sequence[Sample]) -> list[Summary]:
    """Per series: the average weighted by the time each sample covers (a sample after a 3 s pause
    counts three times one a second after the last), the 95th percentile, range and seconds."""
    by_key: dict[tuple[str, str], list[Sample]] = {}
    for s in samples:
        by_key.setdefault((s.source, s.metric), []).append(s)
    out = []
    for (source, metric), items in sorted(by_key.items()):
        v = np.array([s.value for s in items], dtype=float)
        ok = np.isfinite(v)
        finite = v[ok]
        if finite.size == 0:
            out.append(Summary(source, metric, items[0].unit, math.nan, math.nan, math.nan, math.nan, 0, v.size))
            continue
        weights = covered_seconds(np.array([s.timestamp for s in items], dtype=float))[ok]
        average = float(np.average(finite, weights=weights)) if weights.sum() > 0 else float(finite.mean())
        out.append(Summary(source, metric, items[0].unit, average, float(np.percentile(finite, 95)),
                           float(finite.min()), float(finite.max()), int(finite.size), int(v.size - finite.size)))
    return out


@dataclass
class Verdict:
    workload: str
    criterion: str             # "db read latency < 20 ms"
    measured: float
    passed: bool
    reason: str
    host: str = ""
    incomplete: str = ""       # why it is not judged: its samples cover too little of the step (app.metrics.coverage)


_OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
        "==": lambda a, b: a == b}


def criterion_metric(criterion_metric: str, unit: str) -> str | None:
    """The measured series a pass criterion is about ("db_read_latency_avg_ms", "ms" -> read
    latency), or None when no collector measures it."""
    n = (criterion_metric + "_" + unit).lower()
    if "lat" in n or n.endswith("_ms"):
        return "write_latency_ms" if "write" in n or "log" in n else "read_latency_ms"
    if "iops" in n or "transfers" in n or "io/s" in n:
        return "iops"
    if "mb" in n or "throughput" in n:
        return "throughput_mbps"
    return None


def criterion_text(c) -> str:
    return criterion_words(c.metric, c.comparison, c.threshold, c.unit)


def threshold_lines(bed) -> list[tuple[str, str, float, str]]:
    """The criteria a plot can draw as a line: (metric, comparison, value, label "WORKLOAD: text")."""
    return [(metric, c.comparison, float(c.threshold), f"{w.id}: {criterion_text(c)}")
            for w in bed.workloads for c in w.criteria
            if c.comparison in ("<", "<=", ">", ">=") and c.threshold is not NOT_STATED
            and (metric := criterion_metric(c.metric, c.unit))]


def judge_criteria(summaries: Sequence[Summary], bed, samples: Sequence[Sample] = ()) -> list[Verdict]:
    verdicts: list[Verdict] = []
    by_key = {(s.source, s.metric): s for s in summaries}
    for w in bed.workloads:
        hosts = [w.driver] if w.driver else list(w.targets)
        for c in w.criteria:
            metric = criterion_metric(c.metric, c.unit)
            text = criterion_text(c)
            for host in hosts:
                s = by_key.get((host, metric)) if metric else None
                if s is None or math.isnan(s.average):
                    continue
                op = _OPS.get(c.comparison)
                if op is None or c.threshold is NOT_STATED:   # no threshold to judge against
                    continue
                passed = bool(op(s.average, c.threshold))
                series = [x for x in samples if x.source == host and x.metric == metric]
                beyond = time_beyond(np.array([x.timestamp for x in series]), np.array([x.value for x in series]),
                                     c.threshold, c.comparison) if series else 0.0
                reason = (f"average {s.average:.3g} {s.unit} on {host}"
                          + (f"; {beyond:.0f} s of {s.seconds} s beyond the line" if beyond else ""))
                verdicts.append(Verdict(w.id, text, s.average, passed, reason, host))
    return verdicts


def median_of_runs(values: Sequence[float]) -> float:
    """The reports' score of N runs: the middle run; for an even N the mean of the two middle
    runs (statistics.median)."""
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        raise ValueError("no run has a value")
    return statistics.median(finite)


@dataclass
class Comparison:
    baseline: float
    candidate: float
    percent: float
    formula: str


def compare(baseline: float, candidate: float, baseline_name: str = "baseline",
            candidate_name: str = "candidate", unit: str = "") -> Comparison:
    """Percent change of `candidate` over `baseline`, the baseline being the denominator."""
    if baseline == 0:
        raise ValueError("the baseline is 0: a percentage change is undefined")
    pct = (candidate - baseline) / baseline * 100.0
    u = f" {unit}" if unit else ""
    formula = (f"{pct:+.1f} % = ({candidate_name} {candidate:,.6g}{u} − {baseline_name} {baseline:,.6g}{u}) "
               f"/ {baseline_name} {baseline:,.6g}{u}; the denominator is {baseline_name}")
    return Comparison(baseline, candidate, pct, formula)


def write_csv(path: Path, summaries: Sequence[Summary], samples: Sequence[Sample] = ()) -> None:
    """Summaries first, then every per-second sample; written to a temporary file and renamed."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["kind", "source", "metric", "unit", "average", "p95", "min", "max", "seconds", "gaps"])
    for s in summaries:
        w.writerow(["summary", s.source, s.metric, s.unit, _num(s.average), _num(s.p95), _num(s.minimum),
                    _num(s.maximum), s.seconds, s.gaps])
    w.writerow([])
    w.writerow(["kind", "timestamp", "source", "metric", "unit", "value"])
    for x in samples:
        w.writerow(["sample", f"{x.timestamp:.3f}", x.source, x.metric, x.unit, _num(x.value)])
    from topology.fileformat import write_atomic
    write_atomic(Path(path), buf.getvalue().encode("utf-8"))


def _num(v: float) -> str:
    return "" if math.isnan(v) else f"{v:.6g}"


def results_table(summaries: Sequence[Summary], verdicts: Sequence[Verdict] = (), hosts_only: bool = True) -> str:
    rows = [s for s in summaries if not hosts_only or is_host_series(s.source)]
    head = f"{'source':<22}{'metric':<20}{'average':>12}{'95th pct':>12}{'min':>11}{'max':>11}{'seconds':>9}  unit"
    lines = [head, "-" * len(head)]
    for s in rows:
        lines.append(f"{s.source:<22}{s.metric:<20}{format_value(s.average):>12}{format_value(s.p95):>12}"
                     f"{format_value(s.minimum):>11}{format_value(s.maximum):>11}{s.seconds:>9}  {s.unit}"
                     + (f"  ({s.gaps} s gap)" if s.gaps else ""))
    if verdicts:
        lines += ["", "pass criteria:"]
        for v in verdicts:
            word = "NOT JUDGED" if v.incomplete else "PASS" if v.passed else "FAIL"
            lines.append(f"  {word}  {v.workload}: {v.criterion} - {v.incomplete or v.reason}")
    return "\n".join(lines) + "\n"


def format_value(v: float, missing: str = "-") -> str:
    """A measured figure as the tables print it: whole numbers from 100 up, else 3 digits."""
    if math.isnan(v):
        return missing
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
