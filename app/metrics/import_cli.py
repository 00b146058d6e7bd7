"""`testbed-studio results import RUN FILE... [--step N] [--host H] [--tool T]`: load tools' result
files attached to a recorded run (app.metrics.run_results), all of them or none.  Given a bed
file instead of a run, the files' figures are recorded in the bed at a place in the test
(app.metrics.recorded_import)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_UNUSABLE = 0, 2


def _err(msg: str) -> None:
    print(f"testbed-studio: {msg}", file=sys.stderr)


def cmd_import(ns: argparse.Namespace) -> int:
    """`results import RUN FILE...`: every file is read first; nothing is attached unless all can be."""
    from app.metrics.registry import PARSERS
    from app.metrics.run_results import ResultFileError, attach_file
    from app.run import journal as J
    if not ns.files:
        _err("results import needs a run and at least one file: testbed-studio results import RUN FILE...")
        return EXIT_UNUSABLE
    from app.metrics.recorded_import import cmd_import_recorded, is_bed_file
    if is_bed_file(ns.files[0]):          # published figures onto the bed itself: no run, no hosts
        return cmd_import_recorded(ns)
    ref, files = ns.files[0], [Path(f) for f in ns.files[1:]]
    if not files:
        _err(f"no result file given to attach to run {ref}")
        return EXIT_UNUSABLE
    if ns.tool and ns.tool.lower() not in PARSERS:
        _err(f"unknown tool {ns.tool!r}: one of {', '.join(PARSERS)}")
        return EXIT_UNUSABLE
    try:
        info = J.open_run(ref, Path(ns.runs_dir) if ns.runs_dir else None)
        host = step_host(info.dir, ns.step, ns.host)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    from app.metrics.registry import parse_text
    from app.metrics.run_results import decode, nothing_read
    for f in files:        # all or nothing: a typo in the third file leaves the run as it was
        try:
            parsed = parse_text(decode(f.read_bytes()), ns.tool)
        except OSError as exc:
            _err(f"{f}: cannot be read ({exc.strerror or exc}); nothing was attached")
            return EXIT_UNUSABLE
        except ValueError as exc:       # a ResultFileError (with its line) or an unknown --tool
            _err(f"{f}: {exc}; nothing was attached")
            return EXIT_UNUSABLE
        if parsed.tool == "unknown" or nothing_read(parsed):
            _err(f"{f}: nothing could be read - {'; '.join(parsed.problems)}; nothing was attached")
            return EXIT_UNUSABLE
    for f in files:
        try:
            rec = attach_file(info.dir, f, step=ns.step, host=host, tool=ns.tool)
        except (ResultFileError, OSError) as exc:
            _err(f"{exc}")
            return EXIT_UNUSABLE
        where = " ".join(x for x in (f"step {rec.step}" if rec.step else "",
                                     f"host {rec.host}" if rec.host else "") if x)
        print(f"attached {f} to run {info.id}{' (' + where + ')' if where else ''}: {rec.tool} -> {rec.stored}")
    return EXIT_OK


def step_host(run_dir: Path, step: str, host: str) -> str:
    """The host a result is about: as given, else the step's one host in the journal.  ValueError
    for a step the run never reached, or one with several hosts and no --host."""
    from app.run import journal as J
    if not step:
        return host
    hosts = list(dict.fromkeys(str(r.get("host")) for r in J.read_journal(run_dir).records
                               if r.get("step") == step and r.get("host")))
    if not hosts:
        raise ValueError(f"the run's journal has no step {step}: give a step the run reached "
                         "(`testbed-studio runs` lists runs; the journal lists their steps)")
    if host:
        return host
    if len(hosts) > 1:
        raise ValueError(f"step {step} ran on {', '.join(hosts)}: say which one the files are about with --host")
    return hosts[0] if hosts[0] != "-" else ""
