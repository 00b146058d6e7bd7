"""`testbed-studio compare RUN|CONFIG ... [--baseline NAME] [--metric M] [--bed FILE] [--chart OUT.png]`:
configurations and runs side by side (app.metrics.comparison)."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

EXIT_OK, EXIT_UNUSABLE = 0, 2


def add_arguments(sub) -> None:
    c = sub.add_parser("compare", help="put runs and configurations side by side: per host/VM and total, the "
                                       "median of N runs, the percentage difference from a baseline with its formula")
    c.add_argument("sides", nargs="+", metavar="RUN|CONFIG",
                   help="a run (id or folder), a configuration (every run of it; with --bed also the bed's recorded "
                        "results), or a scenario of the bed's recorded results")
    c.add_argument("--baseline", metavar="NAME", help="the side the others are measured against: the denominator of "
                                                       "every percentage (default: the first)")
    c.add_argument("--metric", metavar="M",
                   help="orders_per_minute (opm), iops, read_iops, write_iops, mb_per_s, read_latency_ms, "
                        "write_latency_ms, or a metric of the bed's results (default: the first the sides have)")
    c.add_argument("--bed", metavar="FILE", help="project file: its recorded results, and only its runs")
    c.add_argument("--every-baseline", action="store_true",
                   help="also every side against every other side as the denominator, in one table")
    c.add_argument("--chart", metavar="OUT.png", help="also draw the bar chart (bars per side, per host/VM and total)")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)


def _err(msg: str) -> None:
    print(f"testbed-studio: {msg}", file=sys.stderr)


def build(ns, bed=None):
    """The comparison the arguments ask for (shared with `appendix --compare`); ValueError says why not."""
    from app.metrics.comparison import METRICS, attach_published, compare_sides, metric_key, resolve_sides
    if bed is None and ns.bed:
        from topology.errors import BedFileError
        from topology.fileformat import load
        try:
            bed = load(ns.bed)
        except BedFileError as exc:
            raise ValueError(exc.format()) from None
    runs_root = Path(ns.runs_dir) if getattr(ns, "runs_dir", None) else None
    recorded = list(dict.fromkeys(r.metric for r in bed.results)) if bed is not None else []
    # the metrics the bed records for every side named come first: a bed of Jetstress mailboxes has no OPM
    shared = [metric_key(m) for m in recorded if all(any(r.metric == m and side in (r.configuration, r.scenario)
                                             for r in bed.results) for side in ns.sides)] if bed is not None else []
    metrics = [metric_key(ns.metric)] if ns.metric else list(dict.fromkeys(shared + list(METRICS) + recorded))
    problem = None
    for metric in metrics:
        try:
            sides = resolve_sides(ns.sides, metric, runs_root=runs_root, bed=bed, bed_file=ns.bed)
        except ValueError as exc:
            problem = problem or exc
            continue
        table = compare_sides(sides, metric, ns.baseline)
        attach_published(table, bed)
        return table
    if not ns.metric and recorded:
        raise ValueError(f"{problem}; the bed records {', '.join(recorded)}: name one with --metric")
    raise problem or ValueError("nothing to compare")


def appendix_comparisons(bed, ns) -> list:
    """What `appendix` compares: the sides of --compare; without it, a bed's configurations
    when they have figures to compare (else nothing).  ValueError for --compare sides that cannot be."""
    if not ns.compare:
        return configuration_comparisons(bed, ns.file, ns.runs_dir, baseline=ns.baseline, metric=ns.metric)
    asked = argparse.Namespace(sides=list(ns.compare), baseline=ns.baseline, metric=ns.metric, bed=ns.file,
                               runs_dir=ns.runs_dir)
    return [build(asked, bed)]


def configuration_comparisons(bed, bed_file, runs_dir=None, *, baseline: str | None = None,
                              metric: str | None = None) -> list:
    """A bed's configurations side by side, once they have figures (its runs', its recorded
    results'); nothing before that.  The appendix prints it by itself, from the CLI and the GUI."""
    if len(bed.configurations) < 2:
        return []
    asked = argparse.Namespace(sides=[c.id for c in bed.configurations], baseline=baseline, metric=metric,
                               bed=str(bed_file) if bed_file else None, runs_dir=runs_dir)
    try:
        return [build(asked, bed)]
    except ValueError:
        return []       # not measured yet: nothing to compare


def cmd_compare(ns) -> int:
    try:
        table = build(ns)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    if ns.format == "json":
        def num(v: float):
            return None if math.isnan(v) else v
        print(json.dumps({
            "metric": table.metric, "unit": table.unit, "higher_is_better": table.higher_is_better,
            "baseline": table.baseline, "sides": [{"name": s.name, "origin": s.origin, "runs": len(s.runs),
                                                    "score": sc.how} for s, sc in zip(table.sides, table.scores)],
            "rows": [{"subject": r.subject, "values": dict(zip(table.names, map(num, r.values))),
                      "differences": {n: {"percent": d.percent, "formula": d.formula}
                                      for n, d in zip(table.names, r.differences) if d is not None}}
                     for r in table.rows],
            "published": [{"side": p.side, "subject": p.subject, "against": p.against, "percent": p.percent,
                           "denominator": p.against,
                           "computed": None if p.computed is None else {"percent": p.computed.percent,
                                                                        "formula": p.computed.formula}}
                          for p in table.published],
            "aligned": table.aligned}, indent=2))
    else:
        sys.stdout.write(table.text(every_baseline=getattr(ns, "every_baseline", False)))
    if ns.chart:
        from app.metrics.chart import chart_png
        from app.report.qt_app import ensure_gui_app
        ensure_gui_app()
        try:
            Path(ns.chart).write_bytes(chart_png(table, 975, 360))
        except OSError as exc:
            _err(f"cannot write {ns.chart}: {exc.strerror or exc}")
            return EXIT_UNUSABLE
        print(f"wrote {ns.chart}", file=sys.stderr if ns.format == "json" else sys.stdout)
    return EXIT_OK
