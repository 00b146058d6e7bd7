"""`testbed-studio run FILE`: the run wizard on a terminal.

Exit codes: 0 every selected step succeeded, 1 a step failed (resume continues from it),
2 the input cannot be used, 3 pre-flight found a host that cannot be used (nothing was
changed), 4 the run waits for a manual step, 130 interrupted.
"""
from __future__ import annotations

import argparse
import hashlib
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
    r.add_argument("--templates", action="append", default=[], metavar="DIR",
                   help="extra step templates, as for `testbed-studio methodology`")
    r.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)

    ax = sub.add_parser("export-ansible", help="write the bed's hosts and automated steps as an Ansible "
                                              "inventory and playbook")
    ax.add_argument("file")
    ax.add_argument("-o", "--output", required=True, metavar="DIR", help="directory for inventory.yml and playbook.yml")
    ax.add_argument("--steps", default="", metavar="SPEC", help="only these steps (as for run)")
    ax.add_argument("--templates", action="append", default=[], metavar="DIR", help="extra step templates")

    re_ = sub.add_parser("results", help="print a run's metrics: average, 95th percentile, pass/fail per criterion")
    re_.add_argument("run", help="run id (see `testbed-studio runs`) or run directory")
    re_.add_argument("--csv", metavar="OUT", help="also write the summaries and per-second samples as CSV")
    re_.add_argument("--all-series", action="store_true", help="include per-job and per-device series")
    re_.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)

    rs = sub.add_parser("runs", help="list the recorded runs and where each stands")
    rs.add_argument("--runs-dir", metavar="DIR", help=argparse.SUPPRESS)


def _err(msg: str) -> None:
    print(f"testbed-studio: {msg}", file=sys.stderr)


class _Printer:
    """Prints output and results as they come; one lock so lines from parallel hosts do not mix."""

    def __init__(self, quiet: bool):
        from app.run.engine import RunListener
        self.quiet = quiet
        self.lock = threading.Lock()
        printer = self

        class Listener(RunListener):
            def output(self, task, stream, line):
                if not printer.quiet:
                    printer.say(f"  [{task.step} {task.host}] {line}")

            def task_finished(self, task, state):
                extra = f": {state.message}" if state.message else ""
                printer.say(f"{task.step} on {task.host}: {state.status.upper()} ({state.seconds:.1f} s){extra}")

        self.listener = Listener()

    def say(self, text: str) -> None:
        with self.lock:
            print(text, flush=True)


def _decider(trusted: list[str]):
    from app.remote.base import HostKeyQuestion

    def decide(q: HostKeyQuestion) -> bool:
        if q.fingerprint in trusted:
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
    return decide


def cmd_run(ns: argparse.Namespace) -> int:
    from app.remote.connect import TransportFactory
    from app.run import journal as J
    from app.run.engine import RunEngine, dry_run_text
    from app.run.plan import run_steps, select_steps
    from topology.errors import BedFileError
    from topology.fileformat import load
    from topology.methodology import generate

    path = Path(ns.file)
    try:
        raw = path.read_bytes()
        bed = load(path)
        meth = generate(bed, extra_dirs=ns.templates)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    except OSError as exc:
        _err(f"cannot read {path}: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    runs_dir = Path(ns.runs_dir) if ns.runs_dir else None
    info = None
    if ns.resume:
        try:
            info = J.open_run(ns.resume, runs_dir)
        except ValueError as exc:
            _err(str(exc))
            return EXIT_UNUSABLE
    if info is None and not ns.concurrent:
        busy = _driven_runs_of(path, runs_dir)
        if busy:
            _err(f"run {busy[0][0]} of {path} is being driven by {busy[0][1]}; two runs of one bed would "
                 "work on the same hosts at once. Wait for it, or start this one anyway with --concurrent")
            return EXIT_UNUSABLE
    factory = TransportFactory(bed, decider=_decider(ns.trust), ask_password=_password_prompt(ns.ask_password))
    all_steps = run_steps(meth, factory.transports())
    spec = ns.steps or (info.steps if info else "")
    try:
        steps = select_steps(all_steps, spec) if spec else all_steps
        done = select_steps(all_steps, ns.done) if ns.done else []
        skip = select_steps(all_steps, ns.skip) if ns.skip else []
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    if ns.dry_run:
        sys.stdout.write(dry_run_text(steps, factory.describe))
        return EXIT_OK
    if not any(not s.manual for s in steps) and not bed.access:
        _err(f"{path}: no host has remote access set, so every step is manual; add an 'access:' list "
             "(host, transport, address, user) to the project file")
    digest = hashlib.sha256(raw).hexdigest()
    if info is None:
        info = J.new_run(str(path.resolve()), digest, spec, runs_dir)
        print(f"run {info.id}  ({info.dir})")
    else:
        print(f"resuming run {info.id}  ({info.dir})")
        if info.bed_sha256 and info.bed_sha256 != digest:
            print("note: the project file changed since this run started; steps are matched by number",
                  file=sys.stderr)
    for finding in _access_warnings(bed):
        print(f"warning: {finding}", file=sys.stderr)
    printer = _Printer(ns.quiet)
    from app.run.metrics_tap import MetricsTap
    from app.run.runlock import RunLocked
    try:
        engine = RunEngine(info, steps, factory, workers=ns.parallel, timeout=ns.timeout,
                           host_timeouts=factory.timeouts())
    except RunLocked as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    if engine.distrust:
        engine.close()
        _err(f"cannot resume run {info.id}: {engine.distrust}")
        return EXIT_UNUSABLE
    tap = MetricsTap(info.dir, printer.listener, on_problem=lambda text: printer.say(f"metrics: {text}"),
                     counter_transports=factory)
    engine.listener = tap
    for problem in engine.journal_problems:
        print(f"note: {problem}", file=sys.stderr)
    try:
        for s in done:
            engine.mark(s, J.DONE, "ticked off with --done")
        for s in skip:
            engine.mark(s, J.SKIPPED, "skipped with --skip")
        return _drive(engine, ns, path, printer)
    except OSError as exc:
        engine.cancel()
        _err(f"cannot write the run's journal in {info.dir}: {exc.strerror or exc}; the run stopped. "
             f"Free space or fix permissions, then resume: testbed-studio run {path} --resume {info.id}")
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        engine.cancel()
        print(f"\ninterrupted; resume with: testbed-studio run {path} --resume {info.id}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        try:
            engine.journal.record("session-end")
        except OSError:
            pass    # already reported above
        engine.close()
        tap.close()


def _driven_runs_of(bed_path: Path, runs_dir: Path | None) -> list[tuple[str, str]]:
    from app.run import journal as J
    from app.run.runlock import LOCK_NAME, holder_text, is_driven
    wanted = str(bed_path.resolve())
    return [(info.id, holder_text(info.dir / LOCK_NAME)) for info in J.list_runs(runs_dir)
            if info.bed_file == wanted and is_driven(info.dir)]


def _access_warnings(bed) -> list[str]:
    """The access findings (plain-text WinRM Basic, TLS checks off), said again when a run starts."""
    from topology.validation import validate
    return [f"{f.code} {f.message}" for f in validate(bed, codes=("ACC-001", "ACC-002")) if not f.accepted]


def _password_prompt(asked: bool):
    """How a missing password is asked for: on a terminal (always offered there), else nowhere."""
    if not (asked or sys.stdin.isatty()):
        return None
    import getpass

    def ask(access) -> str | None:
        if not sys.stdin.isatty():
            return None
        from app.remote.credentials import entry_name
        try:
            return getpass.getpass(f"password for {access.user or '(no user)'} on {access.host} "
                                   f"(keyring entry {entry_name(access)!r}, kept for this run only): ") or None
        except (EOFError, OSError):
            return None
    return ask


def _drive(engine, ns, path: Path, printer: _Printer) -> int:
    from app.run import journal as J
    resume_hint = f"testbed-studio run {path} --resume {engine.info.id}"
    first = engine.first_unfinished()
    if first is None:
        print("every selected step has already succeeded")
        return EXIT_OK
    if first is not engine.steps[0]:
        print(f"continuing at step {first.number}")
    if not ns.no_preflight:
        remaining = engine.steps[engine.steps.index(first):]
        checks = engine.preflight(remaining)
        bad = [c for c in checks if not c.ok]
        for c in checks:
            print(f"pre-flight {c.host}: {'ok' if c.ok else 'PROBLEM'} - {c.message}")
        if bad:
            print(f"pre-flight: {len(bad)} of {len(checks)} host(s) cannot be used; nothing was changed. "
                  f"Fix them, then run again (or resume with: {resume_hint})", file=sys.stderr)
            return EXIT_PREFLIGHT
    code = _settle_leftovers(engine, ns, resume_hint)
    if code is not None:
        return code
    started = time.monotonic()
    attempted: set[str] = set()
    while True:
        first = engine.first_unfinished()
        if first is None:
            total = len(engine.steps)
            print(f"run {engine.info.id} complete: {total} step(s) in {time.monotonic() - started:.1f} s")
            engine.journal.record("run", event="complete")
            return EXIT_OK
        status = engine.step_status(first)
        if first.manual and status == J.PENDING:
            if ns.skip_manual:
                engine.mark(first, J.SKIPPED, "skipped with --skip-manual")
                continue
            if sys.stdin.isatty():
                answer = _ask_manual(first)
                if answer == "d":
                    engine.mark(first, J.DONE, "ticked off on the terminal")
                    continue
                if answer == "s":
                    engine.mark(first, J.SKIPPED, "skipped on the terminal")
                    continue
            print(f"\nstep {first.number} is done by hand: {first.text}"
                  + (f"\n  (not automated: {first.why_manual})" if first.why_manual else "")
                  + f"\nwhen it is done: {resume_hint} --done {first.number}   (or --skip {first.number})")
            return EXIT_MANUAL
        if first.number in attempted:
            failed = engine.failed_tasks()
            print(f"\nstopped at step {first.number}: {len(failed)} task(s) did not succeed:", file=sys.stderr)
            for st in failed:
                print(f"  {st.step} on {st.host}: {st.status} - {st.message}", file=sys.stderr)
            print(f"output: {engine.info.dir / 'output'}\nfix the cause, then: {resume_hint}", file=sys.stderr)
            engine.journal.record("run", event="stopped", step=first.number)
            return EXIT_FAILED
        remaining = engine.steps[engine.steps.index(first):]
        engine.run_steps(remaining)
        # a step that failed in this session stops the run; one that failed before is retried
        attempted = {s.number for s in remaining if engine.step_status(s) in J.PROBLEMS}


def _settle_leftovers(engine, ns, resume_hint: str) -> int | None:
    """A step a dead driver left on its host is waited for and adopted, or stopped, before
    anything else runs: never started a second time beside it."""
    from app.remote import jobs
    from app.remote.base import RemoteError
    for task in engine.leftovers():
        try:
            status, number = engine.leftover_status(task)
        except RemoteError as exc:
            _err(f"step {task.step} on {task.host} may still be running there, and the host cannot be asked: "
                 f"{exc}. Nothing was started; when the host answers again: {resume_hint}")
            return EXIT_PREFLIGHT
        if status == jobs.ENDED:
            print(f"step {task.step} on {task.host} ended on its own while no driver ran (exit status {number}); "
                  "taking its result")
            engine.adopt(task)
        elif status == jobs.RUNNING:
            choice = ns.still_running or (_ask_leftover(task, number) if sys.stdin.isatty() else None)
            if choice is None or choice == "q":
                _err(f"step {task.step} on {task.host} is still running there (process group {number}), started "
                     "by a driver that is gone; nothing was started. Resume with --still-running adopt to wait "
                     "for it and take its result, or --still-running stop to stop it and run it again:\n  "
                     f"{resume_hint} --still-running adopt")
                return EXIT_UNUSABLE
            if choice == "adopt":
                print(f"step {task.step} on {task.host} is still running (process group {number}); waiting for it")
                engine.adopt(task)
            else:
                print(f"stopping step {task.step} on {task.host} (process group {number}); it runs again below")
                engine.stop_leftover(task)
    return None


def _ask_leftover(task, pid) -> str:
    print(f"\nstep {task.step} is still running on {task.host} (process group {pid}), left by a driver that died.")
    while True:
        answer = input("[a]dopt it (wait and take its result), [s]top it and run it again, or [q]uit? ")
        answer = answer.strip().lower()[:1]
        if answer in ("a", "s", "q"):
            return {"a": "adopt", "s": "stop", "q": "q"}[answer]


def _ask_manual(step) -> str:
    print(f"\n{step.number}  {step.text}")
    while True:
        answer = input("[d]one, [s]kip or [q]uit and resume later? ").strip().lower()[:1]
        if answer in ("d", "s", "q"):
            return answer


def cmd_runs(ns: argparse.Namespace) -> int:
    from app.run import journal as J
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
        records = read.records
        states = J.replay(records).values()
        ok = sum(1 for s in states if s.status in J.SUCCEEDED)
        bad = sum(1 for s in states if s.status in J.PROBLEMS)
        complete = any(r.get("kind") == "run" and r.get("event") == "complete" for r in records)
        where = "complete" if complete else (f"{bad} problem(s)" if bad else "in progress")
        print(f"{info.id:<40}{info.created[:19]:<21}{ok:>4} ok  {where:<16}{info.bed_file}")
    if not found:
        print("no runs yet")
    return EXIT_OK


def cmd_export_ansible(ns: argparse.Namespace) -> int:
    from app.remote.connect import access_by_host
    from app.run.ansible_export import export
    from app.run.plan import run_steps, select_steps
    from topology.errors import BedFileError
    from topology.fileformat import load
    from topology.methodology import generate
    try:
        bed = load(ns.file)
        meth = generate(bed, extra_dirs=ns.templates)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    steps = run_steps(meth, {h: a.transport for h, a in access_by_host(bed).items()})
    try:
        steps = select_steps(steps, ns.steps) if ns.steps else steps
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    try:
        paths = export(bed, steps, Path(ns.output))
    except OSError as exc:
        _err(f"cannot write {ns.output}: {exc.strerror or exc}")
        return EXIT_UNUSABLE
    automated = sum(1 for s in steps if not s.manual)
    print(f"wrote {paths['inventory']} and {paths['playbook']} ({automated} automated step(s), "
          f"{len(steps) - automated} manual); run: ansible-playbook -i {paths['inventory']} {paths['playbook']}")
    return EXIT_OK


def cmd_results(ns: argparse.Namespace) -> int:
    from app.metrics.results import judge_criteria, load_samples, results_table, summarize, write_csv
    from app.run import journal as J
    try:
        info = J.open_run(ns.run, Path(ns.runs_dir) if ns.runs_dir else None)
    except ValueError as exc:
        _err(str(exc))
        return EXIT_UNUSABLE
    samples = load_samples(info.dir)
    if not samples:
        print(f"run {info.id} recorded no metrics (no workload step streamed figures)")
        return EXIT_OK
    summaries = summarize(samples)
    verdicts = []
    try:
        from topology.fileformat import load
        verdicts = judge_criteria(summaries, load(info.bed_file), samples)
    except Exception:  # noqa: BLE001 - the bed may have moved; the figures still stand
        pass
    print(f"run {info.id}: {len(samples)} samples")
    sys.stdout.write(results_table(summaries, verdicts, hosts_only=not ns.all_series))
    if ns.csv:
        try:
            write_csv(Path(ns.csv), summaries, samples)
        except OSError as exc:
            _err(f"cannot write {ns.csv}: {exc.strerror or exc}")
            return EXIT_UNUSABLE
        print(f"wrote {ns.csv}")
    return EXIT_FAILED if any(not v.passed for v in verdicts) else EXIT_OK
