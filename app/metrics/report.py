"""A run's measured results as the appendices print them: a summary table per run (average,
95th percentile, range, seconds measured and missing per host and metric), the pass
criteria judged on those figures, and the per-second series the charts draw.

Qt-free: the charts themselves are drawn by app.metrics.chart.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.metrics import sample as M
from app.metrics.results import Summary, Verdict, format_value, judge_criteria, load_samples, summarize, threshold_lines
from app.metrics.sample import Sample
from app.metrics.series import is_host_series
from app.metrics.storage_series import kind_of
from topology.vocabulary import UNITS

KIND_WORDS = {"volume": "volume", "group": "disk group", "pool": "pool", "vm": "VM"}

# what the charts show, in this order: metric, title, unit
CHARTED = ((M.IOPS, "IOPS", UNITS["iops"]), (M.READ_LATENCY_MS, "Read latency", UNITS["ms"]),
           (M.WRITE_LATENCY_MS, "Write latency", UNITS["ms"]), (M.THROUGHPUT_MBPS, "Throughput", UNITS["mbps"]))
METRIC_NAMES = {M.IOPS: "IOPS", M.READ_IOPS: "Read IOPS", M.WRITE_IOPS: "Write IOPS",
                M.READ_LATENCY_MS: "Read latency", M.WRITE_LATENCY_MS: "Write latency",
                M.LATENCY_MS: "Latency", M.THROUGHPUT_MBPS: "Throughput", M.QUEUE_LENGTH: "Queue length",
                M.AVG_QUEUE_LENGTH: "Avg. queue length"}


@dataclass
class Chart:
    metric: str
    title: str
    unit: str
    series: dict[str, tuple[list[float], list[float]]]      # host -> seconds since the start, values
    thresholds: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class RunResults:
    run_id: str
    started: str
    samples: list[Sample]
    summaries: list[Summary]
    verdicts: list[Verdict]
    storage: list = field(default_factory=list)       # app.metrics.storage_series.StorageRow per group/pool
    unmapped: list[str] = field(default_factory=list)  # HOST/DEVICE series no volume's drive names
    record: Any = None                                 # app.run.as_run.AsRun: the run as it happened
    places: list = field(default_factory=list)         # app.metrics.by_place.PlacedResults, when it has several

    @property
    def start_time(self) -> float:
        return min((s.timestamp for s in self.samples), default=0.0)

    def charts(self, bed=None) -> list[Chart]:
        t0 = self.start_time
        out = []
        for metric, title, unit in CHARTED:
            series: dict[str, tuple[list[float], list[float]]] = {}
            for s in self.samples:
                if s.metric == metric and is_host_series(s.source):
                    ts, vs = series.setdefault(s.source, ([], []))
                    ts.append(s.timestamp - t0)
                    vs.append(s.value)
            if series:
                out.append(Chart(metric, title, unit, dict(sorted(series.items())), _thresholds(bed, metric)))
        for kind in ("volume", "group", "pool", "vm"):      # the bed's storage and VMs, when the run mapped any
            series = {}
            for s in self.samples:
                if s.metric == M.IOPS and kind_of(s.source) == kind:
                    ts, vs = series.setdefault(s.source.partition("/")[2], ([], []))
                    ts.append(s.timestamp - t0)
                    vs.append(s.value)
            if series:
                out.append(Chart(M.IOPS, f"IOPS per {KIND_WORDS[kind]}", "IO/s", dict(sorted(series.items()))))
        return out


def _thresholds(bed, metric: str) -> list[tuple[float, str]]:
    return [(value, label) for m, _cmp, value, label in threshold_lines(bed) if m == metric] if bed is not None else []


def load_run_results(ref: str, bed=None, runs_root: Path | None = None) -> RunResults:
    """A run by id or directory.  ValueError (with the reason) when it cannot be used."""
    from app.run import journal as J
    info = J.open_run(ref, runs_root)
    samples = load_samples(info.dir)
    from app.run.as_run import as_run
    record = as_run(info.dir, *_plan_and_text(info, bed))
    if not samples and not record.rows and not record.as_built:
        raise ValueError(f"run {info.id} recorded no metrics and no step (nothing ran)")
    verdicts: list[Verdict] = []
    storage: list = []
    unmapped: list[str] = []
    if bed is not None:
        from app.metrics.storage_series import predicted_vs_measured, with_storage_series
        from topology.configurations import configured
        seen_as = configured(bed, info.configuration) if info.configuration and bed.configurations else bed
        samples, mapping = with_storage_series(samples, seen_as)
        storage = predicted_vs_measured(samples, mapping)
        unmapped = sorted(mapping.unmapped)
    summaries = summarize(samples)
    if bed is not None:
        verdicts = judge_criteria(summaries, bed, samples)
    from app.metrics.by_place import placed_report
    placed = placed_report(info.dir, samples, bed, info.configuration)
    return RunResults(info.id, info.created, samples, summaries, verdicts, storage, unmapped, record,
                      placed.places if placed is not None else [])


def _plan_and_text(info, bed) -> tuple[list[tuple[str, str]], str | None]:
    """The procedure the run's configuration has now, and the project file's text now."""
    if bed is None:
        return [], None
    from topology.configurations import procedures
    try:
        (_, meth), = procedures(bed, info.configuration or None)
        planned = [(s.number, s.text) for s in meth.steps()]
    except (KeyError, ValueError):
        planned = []
    try:
        text: str | None = Path(info.bed_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    return planned, text


def summary_rows(results: RunResults, kind: str = "host") -> list[tuple[str, str, str, str, str, str, str]]:
    """host (or volume, group, pool, VM), metric, average, 95th percentile, min - max, seconds
    measured, seconds missing."""
    rows = []
    for s in results.summaries:
        if kind_of(s.source) != kind:
            continue
        unit = f" {s.unit}" if s.unit else ""
        rows.append((s.source.partition("/")[2] if kind != "host" else s.source,
                     METRIC_NAMES.get(s.metric, s.metric.replace("_", " ")),
                     _fmt(s.average) + unit, _fmt(s.p95) + unit, f"{_fmt(s.minimum)} – {_fmt(s.maximum)}",
                     str(s.seconds), str(s.gaps) if s.gaps else ""))
    return rows


def _fmt(v: float) -> str:
    return format_value(v, missing="–")
