"""`testbed-studio run FILE`: the run wizard on a terminal.

Exit codes: 0 every selected step succeeded, 1 a step failed (resume continues from it),
2 the input cannot be used, 3 pre-flight found a host that cannot be used (nothing was
changed), 4 the run waits for a manual step, 130 interrupted.
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE, EXIT_PREFLIGHT, EXIT_MANUAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130


def add_arguments(sub) -> None:
    r = sub.add_parser("run", help="run the methodology's automated steps on the bed's hosts (SSH, WinRM), "
                                   "journalled, resumable")
    r.add_argument("file", help="project file; its 'access:' entries say how each host is reached")
    r.add_argument("--steps", default="", metavar="SPEC",
                   help="only these steps: numbers, sections or ranges, e.g. '3', '3.1-3.4,5.2'")
    r.add_argument("--dry-run", action="store_true", help="print what would run where, connect to nothing")
    r.add_argument("--resume", metavar="RUN", help="continue RUN (an id from `testbed-studio runs` or its "
                                                   "directory) at the first step that did not succeed")
    r.add_argument("--done", default="", metavar="SPEC", help="tick these manual steps off before running on")
    r.add_argument("--skip", default="", metavar="SPEC", help="skip these steps")
    r.add_argument("--skip-manual", action="store_true", help="skip every manual step (automated steps only)")
    r.add_argument("--parallel", type=int, default=64, metavar="N", help="hosts worked on at once (default 64)")
    r.add_argument("--timeout", type=float, metavar="SECONDS", help="per-step timeout (default: the host's "
                                                                     "timeout_s, else one hour)")
    r.add_argument("--trust", action="append", default=[], metavar="SHA256:...",
                   help="accept an unknown SSH host key with exactly this fingerprint (repeatable)")
    r.add_argument("--no-preflight", action="store_true", help="skip the reachability and tool checks")
    r.add_argument("--ask-password", action="store_true",
                   help="ask on the terminal for each password the keyring does not hold (kept for this run "
                        "only; store one for good with `testbed-studio credentials set`)")
    r.add_argument("--still-running", choices=("adopt", "stop"),
                   help="on resume, what to do with a step a dead driver left running on its host: adopt "
                        "(wait for it, follow its output, take its exit status) or stop it (then run it "
                        "again); asked on a terminal, required otherwise")
    r.add_argument("--concurrent", action="store_true",
                   help="start a new run even though another run of the same project file is being driven")
    r.add_argument("--quiet", action="store_true", help="do not echo the commands' output")
    r.add_argument("--yes-destructive", action="store_true",
                   help="go ahead with the steps that write to disks (partition, format, mkfs) without asking; "
                        "--dry-run lists the disks each would write to")
    r.add_argument("--templates", action="append", default=[], metavar="DIR",
                   help="extra step templates, as for `testbed-studio methodology`")
    r.add_argument("--configuration", metavar="NAME",
                   help="the bed's configuration to run (required when it has configurations; a resumed run "
                        "keeps its own)")
    r.add_argument("--engine", choices=("builtin", "ansible"),
                   help="what drives the run: builtin (this application's SSH/WinRM transports, the default) or "
                        "ansible (ansible-playbook through ansible-runner; needs the [ansible] extra). A resumed "
                        "run keeps the engine it started with unless this says otherwise")
    r.add_argument("-e", "--extra-vars", action="append", default=[], metavar="VARS",
                   help="with --engine ansible: passed to ansible-playbook as -e VARS (key=value ... or @file)")
    r.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)

    ax = sub.add_parser("export-ansible", help="write the bed's hosts and automated steps as an Ansible "
                                              "inventory and playbook")
    ax.add_argument("file")
    ax.add_argument("-o", "--output", required=True, metavar="DIR", help="directory for inventory.yml and playbook.yml")
    ax.add_argument("--steps", default="", metavar="SPEC", help="only these steps (as for run)")
    ax.add_argument("--templates", action="append", default=[], metavar="DIR", help="extra step templates")

    re_ = sub.add_parser("results", help="print a run's metrics: average, 95th percentile, pass/fail per criterion; "
                                         "`results import RUN FILE...` attaches load tools' result files to a run",
                         usage="testbed-studio results RUN [--csv OUT] [--all-series] [--merge]\n"
                               "       testbed-studio results import RUN FILE... [--step N] [--host H] [--tool T]\n"
                               "       testbed-studio results import BED FILE... --configuration C [--scenario S] "
                               "[--level L] [--workload W] [--subject VM] [--dry-run]")
    re_.add_argument("run", help="run id (see `testbed-studio runs`) or run directory; or the word import")
    re_.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    re_.add_argument("--step", default="", metavar="N", help="import: the step whose workload wrote the files")
    re_.add_argument("--host", default="", metavar="H", help="import: the host or VM the files are about "
                                                              "(default: the step's one host)")
    re_.add_argument("--tool", metavar="T", help="import: the tool that wrote the files (default: told from "
                                                  "their content)")
    re_.add_argument("--csv", metavar="OUT", help="also write the summaries and per-second samples as CSV")
    re_.add_argument("--all-series", action="store_true", help="include per-job and per-device series")
    re_.add_argument("--merge", action="store_true", help="one table for the whole run: its configurations, "
                                                           "phases, levels and repetitions together")
    from app.metrics.recorded_import import add_arguments as add_recorded_arguments
    add_recorded_arguments(re_)
    re_.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)

    rs = sub.add_parser("runs", help="list the recorded runs and where each stands")
    rs.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)


def _err(msg: str) -> None:
    print(f"testbed-studio: {msg}", file=sys.stderr)


class _Terminal:
    """The session's events on a terminal, its questions asked there.  One lock so lines from
    parallel hosts do not mix."""

    def __init__(self, ns: argparse.Namespace, path: Path):
        self.ns = ns
        self.path = path
        self.lock = threading.Lock()

    def say(self, text: str, err: bool = False) -> None:
        with self.lock:
            print(text, file=sys.stderr if err else sys.stdout, flush=True)

    def resume_hint(self, run_id: str) -> str:
        return f"testbed-studio run {self.path} --resume {run_id}"

    def event(self, e) -> None:
        from app.run import events as E
        if isinstance(e, E.OutputLine):
            if not self.ns.quiet:
                self.say(f"  [{e.step} {e.host}] {e.line}")
        elif isinstance(e, E.StepEnded):
            extra = f": {e.message}" if e.message else ""
            self.say(f"{e.step} on {e.host}: {e.status.upper()} ({(e.seconds or 0):.1f} s){extra}")
        elif isinstance(e, E.RunWarning):
            if e.kind in (E.REFUSED, E.NO_ACCESS):
                _err(e.text)
            else:
                self.say(f"{'warning' if e.kind == E.ACCESS else 'note'}: {e.text}", err=True)
        elif isinstance(e, E.Notice):
            self.say(e.text)
        elif isinstance(e, E.PreflightChecked):
            for c in e.checks:
                self.say(f"pre-flight {c.host}: {'ok' if c.ok else 'PROBLEM'} - {c.message}")
            if e.note:
                self.say(f"pre-flight: {e.note}")
        elif isinstance(e, E.MetricsProblem):
            self.say(f"metrics: {e.text}")
        elif isinstance(e, E.Leftover):
            self._leftover(e)

    def _leftover(self, e) -> None:
        hint = self.resume_hint(e.run_id)
        if e.what == "unreachable":
            _err(f"step {e.step} on {e.host} may still be running there, and the host cannot be asked: "
                 f"{e.detail}. Nothing was started; when the host answers again: {hint}")
        elif e.what == "ended" and e.detail:
            self.say(f"step {e.step} on {e.host}: {e.detail}; it has ended there since (exit status {e.number}): "
                     "taking its result")
        elif e.what == "ended":
            self.say(f"step {e.step} on {e.host} ended on its own while no driver ran (exit status {e.number}); "
                     "taking its result")
        elif e.what == "undecided":
            _err(f"step {e.step} on {e.host} is still running there (process group {e.number}), started "
                 "by a driver that is gone; nothing was started. Resume with --still-running adopt to wait "
                 "for it and take its result, or --still-running stop to stop it and run it again:\n  "
                 f"{hint} --still-running adopt")
        elif e.what == "adopting":
            self.say(f"step {e.step} on {e.host} is still running (process group {e.number}); waiting for it")
        else:
            why = f": {e.detail}" if e.detail else ""
            self.say(f"stopping step {e.step} on {e.host} (process group {e.number}){why}; it runs again below")

    def ask(self, q):
        from app.run import events as E
        if isinstance(q, E.TrustHostKey):
            return self._trust(q)
        if isinstance(q, E.PasswordNeeded):
            return self._password(q)
        if isinstance(q, E.StillRunning):
            return self.ns.still_running or (_ask_leftover(q) if sys.stdin.isatty() else None)
        return None

    def _trust(self, q) -> bool:
        if q.fingerprint in self.ns.trust:
            print(f"accepting the host key of {q.host} ({q.address}), {q.key_type} {q.fingerprint}: "
                  "given with --trust", file=sys.stderr)
            return True
        if sys.stdin.isatty():
            print(f"\nThe SSH host key of {q.host} ({q.address}) is not known yet:\n"
                  f"    {q.key_type} {q.fingerprint}\n"
                  "Compare it with the host's own (`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` "
                  "on its console).", file=sys.stderr)
            answer = input("Trust this key and remember it? Type yes to accept: ").strip().lower()
            return answer == "yes"
        print(f"refusing the unknown SSH host key of {q.host} ({q.address}): {q.key_type} {q.fingerprint}\n"
              f"  if it is the right key, run again with --trust {q.fingerprint}", file=sys.stderr)
        return False

    def _password(self, q):
        """Asked on a terminal (always offered there), else nowhere; kept for this run only."""
        from app.run.events import PasswordAnswer
        if not sys.stdin.isatty():
            return None
        import getpass
        try:
            typed = getpass.getpass(f"password for {q.user or '(no user)'} on {q.host} "
                                    f"(keyring entry {q.entry!r}, kept for this run only): ")
        except (EOFError, OSError):
            return None
        return PasswordAnswer(typed, remember=False) if typed else None


def _destructive_confirmed(session, first, ns, resume_hint: str) -> bool:
    """Before the first step that writes to a disk: the user's yes (a terminal, or --yes-destructive),
    having seen every disk the run will write to."""
    from app.run.destructive import pending_writes, writes_text
    pending = pending_writes(session.steps[session.steps.index(first):], session.task_state)
    if not pending or ns.yes_destructive:
        return True
    print(writes_text(pending))
    if sys.stdin.isatty():
        try:
            answer = input("type yes to write to these disks, anything else to stop: ").strip().lower()
        except EOFError:
            answer = ""
        if answer == "yes":
            return True
    print(f"stopped before writing to any disk; to go ahead: {resume_hint} --yes-destructive", file=sys.stderr)
    return False


def cmd_run(ns: argparse.Namespace) -> int:
    from app.run import journal as J
    from app.run.session import RunSession
    from topology.errors import BedFileError

    path = Path(ns.file)
    terminal = _Terminal(ns, path)
    runs_dir = Path(ns.runs_dir) if ns.runs_dir else None
    configuration = ns.configuration
    if ns.resume and configuration is None:
        try:
            configuration = J.open_run(ns.resume, runs_dir).configuration or None
        except ValueError:
            pass        # resume() says why the run cannot be opened
    if ns.extra_vars and ns.engine == "builtin":
        _err("--extra-vars is for --engine ansible (ansible-playbook's -e); the built-in engine has no use for it")
        return EXIT_UNUSABLE
    try:
        session = RunSession.from_file(path, templates=ns.templates, runs_dir=runs_dir,
                                       ask=terminal.ask, on_event=terminal.event, workers=ns.parallel,
                                       timeout=ns.timeout, configuration=configuration, engine=ns.engine or "",
                                       extra_vars=ns.extra_vars)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    except OSError as exc:
        _err(f"cannot read {path}: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    except ValueError as exc:
        _err(f"{path}: {exc}")
        return EXIT_UNUSABLE
    try:
        done = session.select(ns.done) if ns.done else []
        skip = session.select(ns.skip) if ns.skip else []
        if ns.dry_run:
            spec = ns.steps or (J.open_run(ns.resume, session.runs_dir).steps if ns.resume else "")
            sys.stdout.write(session.dry_run_text(session.select(spec)))
            return EXIT_OK
        opened = session.resume(ns.resume, ns.steps) if ns.resume else session.start_new(
            ns.steps, concurrent=ns.concurrent)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    if not opened:
        return EXIT_UNUSABLE
    run_id, run_dir = session.info.id, session.info.dir
    try:
        for s in done:
            session.mark(s, J.DONE, "ticked off with --done")
        for s in skip:
            session.mark(s, J.SKIPPED, "skipped with --skip")
        return _drive(session, ns, terminal)
    except OSError as exc:
        session.cancel()
        _err(f"cannot write the run's journal in {run_dir}: {exc.strerror or exc}; the run stopped. "
             f"Free space or fix permissions, then resume: testbed-studio run {path} --resume {run_id}")
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        session.cancel()
        print(f"\ninterrupted; resume with: testbed-studio run {path} --resume {run_id}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        session.close()


def _drive(session, ns, terminal: _Terminal) -> int:
    from app.run import journal as J
    run_id = session.info.id
    # the whole of this invocation's work: pre-flight and the steps a stopped run left on their
    # hosts, which a resume follows to their end before going on, are part of it
    started = time.monotonic()
    resume_hint = terminal.resume_hint(run_id)
    first = session.first_unfinished()
    if first is None:
        print("every selected step has already succeeded")
        return EXIT_OK
    if first is not session.steps[0]:
        print(f"continuing at step {first.number}")
    if not ns.no_preflight:
        checks = session.preflight(session.steps[session.steps.index(first):])
        bad = [c for c in checks if not c.ok]
        if bad:
            print(f"pre-flight: {len(bad)} of {len(checks)} host(s) cannot be used; nothing was changed. "
                  f"Fix them, then run again (or resume with: {resume_hint})", file=sys.stderr)
            return EXIT_PREFLIGHT
    unsettled = session.settle_leftovers()
    if unsettled is not None:
        return EXIT_PREFLIGHT if unsettled == "unreachable" else EXIT_UNUSABLE
    if not _destructive_confirmed(session, first, ns, resume_hint):
        return EXIT_MANUAL
    attempted: set[str] = set()
    while True:
        standing = session.standing()
        if standing.next_step is None:
            print(f"run {run_id} complete: {standing.steps_total} step(s) in {time.monotonic() - started:.1f} s")
            return EXIT_OK
        first = session.by_number[standing.next_step]
        if standing.waiting_manual:
            if ns.skip_manual:
                session.mark(first, J.SKIPPED, "skipped with --skip-manual")
                continue
            if sys.stdin.isatty():
                answer = _ask_manual(first)
                if answer == "d":
                    session.mark(first, J.DONE, "ticked off on the terminal")
                    continue
                if answer == "s":
                    session.mark(first, J.SKIPPED, "skipped on the terminal")
                    continue
            from app.run.plan import table_text
            table = table_text(first)
            print(f"\nstep {first.number} is done by hand: {first.text}"
                  + ("\n" + "\n".join("  " + ln for ln in table.splitlines()) if table else "")
                  + (f"\n  (not automated: {first.why_manual})" if first.why_manual else "")
                  + f"\nwhen it is done: {resume_hint} --done {first.number}   (or --skip {first.number})")
            return EXIT_MANUAL
        if first.number in attempted:
            failed = session.failed_tasks()
            print(f"\nstopped at step {first.number}: {len(failed)} task(s) did not succeed:", file=sys.stderr)
            for st in failed:
                print(f"  {st.step} on {st.host}: {st.status} - {st.message}", file=sys.stderr)
            print(f"output: {session.info.dir / 'output'}\nfix the cause, then: {resume_hint}", file=sys.stderr)
            session.record_stop(first.number)
            return EXIT_FAILED
        remaining = session.steps[session.steps.index(first):]
        session.run(remaining)
        # a step that failed in this session stops the run; one that failed before is retried
        attempted = {s.number for s in remaining if session.look(s.number).status in J.PROBLEMS}


def _ask_leftover(q) -> str | None:
    print(f"\nstep {q.step} is still running on {q.host} (process group {q.pid}), left by a driver that died.")
    while True:
        answer = input("[a]dopt it (wait and take its result), [s]top it and run it again, or [q]uit? ")
        answer = answer.strip().lower()[:1]
        if answer in ("a", "s", "q"):
            return {"a": "adopt", "s": "stop", "q": None}[answer]


def _ask_manual(step) -> str:
    from app.run.plan import table_text
    print(f"\n{step.number}  {step.text}" + (f"\n{table_text(step)}" if step.table else ""))
    while True:
        answer = input("[d]one, [s]kip or [q]uit and resume later? ").strip().lower()[:1]
        if answer in ("d", "s", "q"):
            return answer


def cmd_runs(ns: argparse.Namespace) -> int:
    from app.run import journal as J
    from app.run.session import standing_of
    runs_dir = Path(ns.runs_dir) if ns.runs_dir else None
    found = False
    for info in J.scan_runs(runs_dir):
        found = True
        if isinstance(info, J.DamagedRun):
            print(f"{info.dir.name:<40}DAMAGED, skipped: {info.problem}", file=sys.stderr)
            continue
        read = J.read_journal(info.dir)
        if read.damage:
            print(f"{info.id:<40}DAMAGED journal, skipped: {read.damage[0]}", file=sys.stderr)
            continue
        standing = standing_of(info, read)
        ok = standing.tasks_done - standing.tasks_skipped
        print(f"{info.id:<40}{info.created[:19]:<21}{ok:>4} ok  {standing.summary():<28}"
              f"{info.bed_file}")
    if not found:
        print("no runs yet")
    return EXIT_OK


def cmd_results(ns: argparse.Namespace) -> int:
    from app.metrics.results import judge_criteria, load_samples, results_table, summarize, write_csv
    from app.run import journal as J
    if ns.run == "import":
        from app.metrics.import_cli import cmd_import
        return cmd_import(ns)
    if ns.files:
        _err(f"unexpected {ns.files[0]!r}: to attach result files write `testbed-studio results import RUN FILE...`")
        return EXIT_UNUSABLE
    try:
        info = J.open_run(ns.run, Path(ns.runs_dir) if ns.runs_dir else None)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    samples = load_samples(info.dir)
    if not ns.merge:            # one table per place in the test, result files with them
        from app.metrics.by_place import print_placed
        try:
            shown = print_placed(info, samples, ns.csv, not ns.all_series)
        except OSError as exc:
            _err(f"cannot write {ns.csv}: {exc.strerror or exc}")
            return EXIT_UNUSABLE
        if shown is not None:
            return EXIT_FAILED if shown else EXIT_OK
    if not samples:
        print(f"run {info.id} recorded no metrics (no workload step streamed figures)")
        return EXIT_OK
    summaries = summarize(samples)
    verdicts = []
    try:
        from topology.fileformat import load
        verdicts = judge_criteria(summaries, load(info.bed_file), samples)
    except Exception:
        pass
    from app.metrics.coverage import MIN_COVERAGE, run_coverage
    covers = run_coverage(info.dir, samples)
    short = {c.host: c for c in covers if not c.enough}
    for v in verdicts:
        if v.host in short:
            # a figure of part of the load is not the load's figure: never a PASS
            v.passed, v.incomplete = False, (f"not judged: its samples cover {short[v.host].fraction:.0%} of "
                                             f"step {short[v.host].step} on {v.host}, under {MIN_COVERAGE:.0%}")
    print(f"run {info.id}: {len(samples)} samples")
    print("rests on: " + "; ".join(c.text() for c in covers))
    for c in short.values():
        print(f"INCOMPLETE: {c.host}'s figures rest on {c.covered_s} s of the step's {c.span_s:.0f} s; resume the "
              "run (the step is adopted and its samples collected from the host) or run the step again")
    sys.stdout.write(results_table(summaries, verdicts, hosts_only=not ns.all_series))
    if ns.csv:
        try:
            write_csv(Path(ns.csv), summaries, samples)
        except OSError as exc:
            _err(f"cannot write {ns.csv}: {exc.strerror or exc}")
            return EXIT_UNUSABLE
        print(f"wrote {ns.csv}")
    return EXIT_FAILED if short or any(not v.passed for v in verdicts) else EXIT_OK

