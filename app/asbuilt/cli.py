"""`testbed-studio check BED`: read the hosts with read-only commands and hold what they say
against the bed; `--learn` takes the values they showed that the bed does not state into it (one
edit, saved over the bed's own text, comments kept; `--dry-run` shows it).

Exit codes: 0 the hosts are as drawn (no error), 1 an as-built error, 2 the input cannot be used."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


def add_arguments(sub) -> None:
    c = sub.add_parser("check", help="read the hosts (read-only) and hold what they say against the bed: "
                                     "addresses, MTUs, links, LUNs, sessions, OS, memory ...")
    c.add_argument("file", help="project file; its 'access:' entries say how each host is reached")
    c.add_argument("--configuration", metavar="NAME", help="the bed's configuration the hosts should be in")
    c.add_argument("--scenario", metavar="NAME", help="the scenario the hosts should be in (its placement, its "
                                                      "failed parts left out)")
    c.add_argument("--hosts", metavar="H1,H2", help="only these hosts (default: every host with an access entry)")
    c.add_argument("--format", choices=("text", "json"), default="text")
    c.add_argument("--learn", action="store_true", help="write the values the hosts showed that the bed does not "
                                                        "state (WWNs, serials, targets, MACs, speeds, IQNs) into "
                                                        "it, as one change")
    c.add_argument("--dry-run", action="store_true", help="with --learn: show the change, write nothing")
    c.add_argument("--record", metavar="RUN", help="keep the result with this run (id or directory)")
    c.add_argument("--parallel", type=int, default=64, metavar="N", help="hosts read at once (default 64)")
    c.add_argument("--trust", action="append", default=[], metavar="SHA256:...",
                   help="accept an unknown SSH host key with exactly this fingerprint (repeatable)")
    c.add_argument("--ask-password", action="store_true", help="ask on the terminal for passwords the keyring "
                                                               "does not hold")
    c.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)


def cmd_check(ns: argparse.Namespace) -> int:
    from app.asbuilt.check import record, text_report
    from app.run.cli_run import _Terminal
    from app.run.session import RunSession
    from topology.errors import BedFileError

    path = Path(ns.file)
    ns.quiet, ns.still_running = True, None
    terminal = _Terminal(ns, path)
    try:
        session = RunSession.from_file(path, ask=terminal.ask, on_event=terminal.event, workers=ns.parallel,
                                       configuration=ns.configuration,
                                       runs_dir=Path(ns.runs_dir) if ns.runs_dir else None)
        hosts = [h.strip() for h in ns.hosts.split(",") if h.strip()] if ns.hosts else None
        result = session.check_bed(hosts, ns.scenario)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    except OSError as exc:
        print(f"testbed-studio: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except ValueError as exc:
        print(f"testbed-studio: {path}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if ns.record:
        from app.run import journal as J
        try:
            record(J.open_run(ns.record, session.runs_dir).dir, result)
        except ValueError as exc:
            print(f"testbed-studio: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
    if ns.format == "json":
        print(json.dumps(result.as_dict(), indent=1))
    else:
        print(text_report(result))
    if ns.learn:
        code = _learn(path, result, dry_run=ns.dry_run, configuration=ns.configuration)
        if code:
            return code
    return EXIT_FINDINGS if result.counts()["error"] else EXIT_OK


def _learn(path: Path, result, *, dry_run: bool, configuration: str | None) -> int:
    """The learnt values into the file's own bed (not a configuration's view), saved over its text."""
    from topology import roundtrip
    from topology.asbuilt.learn import learn_edit
    from topology.errors import BedFileError
    try:
        bed, text = roundtrip.load(str(path))
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    plan = learn_edit(bed, result.asbuilt.learnt)
    for change in plan.changes:
        print(f"learn: {change}")
    for note in plan.notes:
        print(f"note: {note}")
    if plan.edit is None:
        print("learn: nothing the bed does not already state")
        return EXIT_OK
    if dry_run:
        print(f"learn: {len(plan.changes)} change(s) (dry run: {path} is unchanged)")
        return EXIT_OK
    plan.edit.apply()
    try:
        roundtrip.save(bed, str(path), text)
    except OSError as exc:
        print(f"testbed-studio: cannot write {path}: {exc.strerror or exc}; it is unchanged", file=sys.stderr)
        return EXIT_UNUSABLE
    print(f"learn: {len(plan.changes)} change(s); saved {path}")
    return EXIT_OK
