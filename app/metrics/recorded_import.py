"""`testbed-studio results import BED FILE... --configuration C [--scenario S] [--level L]
[--workload W] [--subject VM] [--dry-run]`: published (recorded) results attached to the bed at
their place in the test, with no run and no hosts made up for them.

Each file is read by the parser `parse` uses; each figure it gives (orders per minute, IOPS, read
and write latency, MB/s) becomes one entry of the bed's `results:` with the place given, the
workload and subject, and a note naming the file.  A second file for the same place is one more
run of it (Appendix G and `compare` take the run plan's score, the median of N, over them).  The
entries are added as one edit and the bed is saved over its own text, comments kept; a file that
cannot be read, or a place the bed does not have, changes nothing."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

EXIT_OK, EXIT_UNUSABLE = 0, 2

# (figure of the parsed file, metric name written, unit): names `compare` and Appendix G read
FIGURES = (("orders_per_minute", "opm", "OPM"), ("iops", "iops", "IO/s"), ("read_latency_ms", "read_latency_ms", "ms"),
           ("write_latency_ms", "write_latency_ms", "ms"), ("mb_per_s", "mb_per_s", "MB/s"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--configuration", default="", metavar="C", help="import onto a bed: the configuration the "
                                                                    "figures were measured in")
    p.add_argument("--scenario", default="", metavar="S", help="import onto a bed: the scenario (state)")
    p.add_argument("--level", default="", metavar="L", help="import onto a bed: the test matrix level "
                                                            "(e.g. '2 active cells')")
    p.add_argument("--workload", default="", metavar="W", help="import onto a bed: the bed's workload "
                                                               "(default: the one whose tool wrote the files)")
    p.add_argument("--subject", default="", metavar="VM", help="import onto a bed: the server or VM the figures "
                                                               "are for")
    p.add_argument("--dry-run", action="store_true", help="import onto a bed: show the entries, change nothing")


def is_bed_file(ref: str) -> bool:
    """`results import` names a bed (a project file) rather than a run (an id or a run folder)."""
    path = Path(ref)
    return path.is_file() and path.suffix.lower() in (".yaml", ".yml")


def _err(msg: str) -> None:
    print(f"testbed-studio: {msg}", file=sys.stderr)


def cmd_import_recorded(ns: argparse.Namespace) -> int:
    from topology import roundtrip
    from topology.errors import BedFileError
    bed_path, files = ns.files[0], [Path(f) for f in ns.files[1:]]
    if not files:
        _err(f"no result file given to import onto {bed_path}")
        return EXIT_UNUSABLE
    try:
        bed, text = roundtrip.load(bed_path)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        parsed = [(f, _read(f, ns.tool)) for f in files]
        entries = plan_entries(bed, parsed, configuration=ns.configuration, scenario=ns.scenario,
                               level=ns.level, workload=ns.workload, subject=ns.subject)
    except ValueError as exc:
        _err(f"{exc}; {bed_path} is unchanged")
        return EXIT_UNUSABLE
    for r in entries:
        where = ", ".join(x for x in (f"configuration {r.configuration}" if r.configuration else "",
                                      f"scenario {r.scenario}" if r.scenario else "", r.level) if x)
        print(f"result {r.workload}{' / ' + r.subject if r.subject else ''} at {where}: {r.metric} = "
              f"{r.value:g} {r.unit}".rstrip() + f"  ({r.note})")
    if ns.dry_run:
        print(f"{len(entries)} result(s) from {len(files)} file(s) (dry run: {bed_path} is unchanged)")
        return EXIT_OK
    from topology.edits import Compound, InsertItem
    Compound([InsertItem(bed.results, r, text=f"Add result {r.metric}") for r in entries],
             text="Import recorded results").apply()
    try:
        roundtrip.save(bed, bed_path, text)
    except OSError as exc:
        _err(f"cannot write {bed_path}: {exc.strerror or exc}; it is unchanged")
        return EXIT_UNUSABLE
    print(f"{len(entries)} result(s) from {len(files)} file(s) added to {bed_path}")
    return EXIT_OK


def _read(path: Path, tool: str | None):
    from app.metrics.registry import parse_text
    from app.metrics.run_results import decode, nothing_read
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    result = parse_text(decode(raw), tool)
    if result.tool == "unknown" or nothing_read(result):
        raise ValueError(f"{path}: nothing could be read - {'; '.join(result.problems)}")
    return result


def plan_entries(bed, parsed, *, configuration: str = "", scenario: str = "", level: str = "", workload: str = "",
                 subject: str = "") -> list:
    """The `results:` entries for the parsed files at the place given.  ValueError naming what the
    bed does not have (a configuration, scenario, workload or subject) or what is missing."""
    from topology.model import Result
    if not (configuration or scenario or level):
        raise ValueError("say where in the test the figures were measured: --configuration, --scenario and/or "
                         "--level")
    if configuration and configuration not in {c.id for c in bed.configurations}:
        known = ", ".join(c.id for c in bed.configurations) or "none"
        raise ValueError(f"the bed has no configuration {configuration!r} (it has: {known})")
    if scenario and scenario not in {s.id for s in bed.scenarios}:
        raise ValueError(f"the bed has no scenario {scenario!r} (it has: "
                         f"{', '.join(s.id for s in bed.scenarios) or 'none'})")
    if subject and subject not in {x.id for x in (*bed.servers, *bed.vms)}:
        raise ValueError(f"the bed has no server or VM {subject!r}")
    out = []
    for path, result in parsed:
        w = _workload(bed, workload, result.tool, subject)
        figures = [(name, unit, result.extra.get("orders per minute") if key == "orders_per_minute"
                    else getattr(result, key)) for key, name, unit in FIGURES]
        figures = [(n, u, float(v)) for n, u, v in figures if isinstance(v, (int, float)) and math.isfinite(v)]
        if not figures:
            raise ValueError(f"{path}: gives none of {', '.join(n for _, n, _ in FIGURES)}")
        note = f"from {path.name} ({result.tool}{' ' + result.version if result.version else ''})"
        for name, unit, value in figures:
            out.append(Result(workload=w, metric=name, value=value, unit=unit, scenario=scenario, level=level,
                              subject=subject, configuration=configuration, note=note))
    return out


def _workload(bed, named: str, tool: str, subject: str = "") -> str:
    ids = [w.id for w in bed.workloads]
    if named:
        if named not in ids:
            raise ValueError(f"the bed has no workload {named!r} (it has: {', '.join(ids) or 'none'})")
        return named

    def squash(text: str) -> str:
        return "".join(ch for ch in str(text).lower() if ch.isalpha())
    fits = [w.id for w in bed.workloads if squash(w.tool) and (squash(w.tool) in squash(tool)
                                                              or squash(tool) in squash(w.tool))]
    if subject and len(fits) > 1:          # the one that loads the subject
        on = [w.id for w in bed.workloads if w.id in fits and (subject == w.driver or subject in w.targets
                                                               or any(subject in lv.targets for lv in w.levels))]
        fits = on or fits
    if len(fits) == 1:
        return fits[0]
    if len(ids) == 1:
        return ids[0]
    raise ValueError(f"say which workload the {tool} figures are for with --workload "
                     f"({', '.join(fits or ids) or 'the bed has none'})")
