"""A run, composed once for every presenter: the terminal (`testbed-studio run`) and the Run tab.

A RunSession turns a bed into a run: the methodology is generated, its steps planned onto the
hosts, a transport factory built (passwords and unknown host keys are questions the caller
answers), and, when a run is started or resumed, its journal, metrics tap and engine opened.
Everything that happens is told as app.run.events; where the run stands is a RunStanding
(app.run.standing), and the session writes the run's "complete" record itself.

Qt-free and blocking: the GUI calls the slow parts (pre-flight, running) on a worker thread.
"""
from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.run import events as E
from app.run import journal as J
from app.run.engine import DEFAULT_WORKERS, RunEngine, RunListener, dry_run_text
from app.run.plan import RunStep, run_steps, select_steps
from app.run.standing import RunStanding, StepLook, stand, step_look

Ask = Callable[[E.Question], Any]
BUILTIN, ANSIBLE = "builtin", "ansible"        # the run engines
OnEvent = Callable[[E.Event], None]


class RunSession:
    def __init__(self, bed, bed_path: str | Path | None, *, templates: Sequence[str] = (),
                 runs_dir: Path | None = None, credentials=None, ask: Ask | None = None,
                 on_event: OnEvent | None = None,
                 workers: int = DEFAULT_WORKERS, timeout: float | None = None, known_hosts: Path | None = None,
                 bed_bytes: bytes | None = None, configuration: str | None = None, engine: str = "",
                 extra_vars: Sequence[str] = ()):
        """`configuration`: which of the bed's configurations the run uses (required when it has
        any: ValueError naming them otherwise); steps, hosts and access come from its view.
        `engine`: "ansible" drives the run through Ansible (app/ansible/engine.py), "builtin"
        through this application's transports; "" takes what a resumed run started with."""
        from app.remote.connect import TransportFactory
        from app.remote.credentials import CredentialStore
        from topology.methodology import generate
        self.configuration = configuration or ""
        bed = bed_to_run(bed, configuration)
        self.bed = bed
        self.bed_path = Path(bed_path).resolve() if bed_path else None
        if bed_bytes is None and self.bed_path is not None and self.bed_path.is_file():
            bed_bytes = self.bed_path.read_bytes()
        self.digest = hashlib.sha256(bed_bytes).hexdigest() if bed_bytes is not None else ""
        self._bed_bytes = bed_bytes
        self.runs_dir = runs_dir
        self.workers, self.timeout = workers, timeout
        self.engine_kind, self.extra_vars = engine, list(extra_vars)
        self._ask = ask
        self._on_event = on_event or (lambda event: None)
        self.factory = TransportFactory(bed, credentials or CredentialStore(), decider=self._trust_host_key,
                                        known_hosts=known_hosts, ask_password=self._password)
        self.all_steps: list[RunStep] = run_steps(generate(bed, extra_dirs=list(templates)),
                                                  self.factory.transports())
        self.steps: list[RunStep] = []
        self.by_number: dict[str, RunStep] = {}
        self.engine: RunEngine | None = None
        self.engine_in_use = ""     # BUILTIN or ANSIBLE once a run is open
        self.info: J.RunInfo | None = None
        self._tap = None
        self._completed = False
        self._settled = False
        self._adopted: set[tuple[str, str]] = set()
        self._settled_as: dict[tuple[str, str], tuple[str, int]] = {}    # task -> its state when settled
        self._bed_changed = False
        self._waiting_recorded: str | None = None
        self._close_lock = threading.Lock()
        # where the run stands and each step's look, kept until a task's state changes: a view asks
        # many times per event, and each answer walks every task of a big bed
        self._standing_memo: tuple[tuple, RunStanding] | None = None
        self._looks: dict[str, tuple[int, StepLook]] = {}      # step -> (engine state_version, its look)
        self.standings_worked_out = 0       # how often standing() really computed (a test counts it)

    @classmethod
    def from_file(cls, path: str | Path, **options) -> RunSession:
        """Raises BedFileError (the file's problems) or OSError (it cannot be read)."""
        from topology.fileformat import loads, read_regular_file
        raw = read_regular_file(Path(path))     # a FIFO or a device is refused, never waited on
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            from topology.fileformat import read_text
            text = read_text(path)              # raises the loader's own message
        return cls(loads(text, str(path)), path, bed_bytes=raw, **options)

    # ------------------------------------------------------------------ planning

    def select(self, spec: str) -> list[RunStep]:
        """Steps by numbers, sections or ranges ('3', '3.1-3.4,5.2'); ValueError when none match."""
        return select_steps(self.all_steps, spec) if spec else list(self.all_steps)

    def describe(self, host: str) -> str:
        return self.factory.describe(host)

    def dry_run_text(self, steps: Sequence[RunStep]) -> str:
        return dry_run_text(steps, self.describe)

    def runs(self) -> list[tuple[J.RunInfo, RunStanding]]:
        return runs_of_bed(self.bed_path, self.runs_dir)

    def driven_runs(self) -> list[tuple[str, str]]:
        """Runs of this bed some process is driving now: (run id, who)."""
        from app.run.runlock import LOCK_NAME, holder_text, is_driven
        return [(info.id, holder_text(info.dir / LOCK_NAME)) for info, _ in self.runs() if is_driven(info.dir)]

    # ------------------------------------------------------------------ opening

    def start_new(self, spec: str = "", *, concurrent: bool = True) -> bool:
        """A new run of the selected steps; False (with a REFUSED warning) when it cannot start."""
        from app.run.runlock import RunLocked, bed_claim
        steps = self.select(spec)
        root = self.runs_dir or J.runs_root()
        try:
            # checking for a driver, creating the run and locking it are one step: a second start of
            # this bed waits for the claim, then finds this run driven
            with bed_claim(root, self.bed_path):
                return self._start_claimed(steps, spec, concurrent)
        except RunLocked as exc:
            self._warn(E.REFUSED, str(exc), run_id="")
        except OSError as exc:
            self._warn(E.REFUSED, f"cannot start a run under {root}: {exc.strerror or exc}"
                                  f"{f' ({exc.filename})' if exc.filename else ''}; nothing ran. Free space "
                                  "there or fix its permissions, then start again", run_id="")
        return False

    def _start_claimed(self, steps: list[RunStep], spec: str, concurrent: bool) -> bool:
        if not concurrent:
            busy = self.driven_runs()
            if busy:
                self._warn(E.REFUSED, f"run {busy[0][0]} of {self.bed_path} is being driven by {busy[0][1]}; two "
                                      "runs of one bed would work on the same hosts at once. Wait for it, or start "
                                      "this one anyway with --concurrent", run_id="")
                return False
        self._warn_no_access(steps)
        kind = "" if self.engine_kind in ("", BUILTIN) else self.engine_kind
        if kind and not self._engine_available(kind, run_id=""):
            return False
        from app.run.extra_vars import for_resume
        kept, withheld = for_resume(self.extra_vars)        # a secret never reaches run.json
        info = J.new_run(str(self.bed_path), self.digest, spec, self.runs_dir, configuration=self.configuration,
                         engine=kind, extra_vars=kept, withheld_vars=withheld)
        # what the bed and its procedure said when the run began: the as-run record's reference
        import json

        from topology.fileformat import write_atomic
        if self._bed_bytes is not None:
            write_atomic(info.dir / J.BED_AT_START, self._bed_bytes)
        write_atomic(info.dir / J.PLAN, json.dumps([[s.number, s.text] for s in self.all_steps]).encode())
        from app.run.positions import write_positions
        write_positions(info.dir, self.all_steps, self.configuration)
        self._emit(E.Notice(info.id, f"run {info.id}  ({info.dir})"))
        return self._open(info, steps)

    def resume(self, ref: str, spec: str = "") -> bool:
        """Open a recorded run (id or directory) to continue it; False (with a REFUSED warning)
        when it cannot be."""
        try:
            info = J.open_run(ref, self.runs_dir)
            steps = self.select(spec or info.steps)
        except ValueError as exc:
            self._warn(E.REFUSED, str(exc), run_id="")
            return False
        if info.configuration != self.configuration:
            ran = info.configuration or "none (the bed as drawn)"
            self._warn(E.REFUSED, f"run {info.id} ran in configuration {ran}, not {self.configuration or 'none'}: "
                                  "resume it in its own configuration", run_id=info.id)
            return False
        self._warn_no_access(steps)
        self._emit(E.Notice(info.id, f"resuming run {info.id}  ({info.dir})"))
        if info.bed_sha256 and self.digest and info.bed_sha256 != self.digest:
            self._bed_changed = True
            self._warn(E.BED_CHANGED, "the project file changed since this run started; steps are matched by "
                                      "number", run_id=info.id)
        return self._open(info, steps)

    def _warn_no_access(self, steps: Sequence[RunStep]) -> None:
        if not any(not s.manual for s in steps) and not self.bed.access:
            self._warn(E.NO_ACCESS, f"{self.bed_path}: {no_access_text(self.bed)}", run_id="")

    def _open(self, info: J.RunInfo, steps: list[RunStep]) -> bool:
        from app.run.metrics_tap import MetricsTap
        from app.run.runlock import RunLocked
        self.close()
        for finding in access_warnings(self.bed):
            self._warn(E.ACCESS, finding, run_id=info.id)
        kind = self.engine_kind or info.engine or BUILTIN
        if kind != BUILTIN and not self._engine_available(kind, run_id=info.id):
            return False
        try:
            options = dict(workers=self.workers, timeout=self.timeout, host_timeouts=self.factory.timeouts(),
                           bed_sha256=self.digest)
            if kind == BUILTIN:
                engine = RunEngine(info, steps, self.factory, **options)
            else:
                from app.ansible.engine import AnsibleEngine
                if info.withheld_vars and not self.extra_vars:
                    self._warn(E.REFUSED, f"run {info.id} started with -e values of {', '.join(info.withheld_vars)}, "
                                          "which are never kept in the run's folder (they may be secrets); resume it "
                                          "with the same -e arguments", run_id=info.id)
                    return False
                # a resume without -e keeps the variables the run started with
                extra = self.extra_vars or info.extra_vars
                if info.extra_vars and self.extra_vars != info.extra_vars:
                    self._emit(E.Notice(info.id, f"run {info.id} started with {len(info.extra_vars)} -e argument(s); "
                                        + ("this resume uses the ones given now" if self.extra_vars else
                                           "this resume uses them again")))
                engine = AnsibleEngine(info, steps, self.factory, bed=self.bed, known_hosts=self.factory.known_hosts,
                                       extra_vars=extra, **options)
        except RunLocked as exc:
            self._warn(E.REFUSED, str(exc), run_id=info.id)
            return False
        except OSError as exc:
            self._warn(E.REFUSED, f"cannot open run {info.id} in {info.dir}: {exc.strerror or exc}"
                                  f"{f' ({exc.filename})' if exc.filename else ''}; nothing ran", run_id=info.id)
            return False
        if engine.distrust:
            engine.close()
            self._warn(E.REFUSED, f"cannot resume run {info.id}: {engine.distrust}", run_id=info.id)
            return False
        if kind == ANSIBLE:
            self._emit(E.Notice(info.id, f"driven through Ansible (ansible-playbook, started by ansible-runner); "
                                         f"its playbooks and events: {info.dir / 'ansible'}"))
        self.engine, self.info, self.steps = engine, info, list(steps)
        self.by_number = {s.number: s for s in self.steps}
        self._looks, self._standing_memo = {}, None      # the memos were of the engine before
        self._completed = any(r.get("kind") == "run" and r.get("event") == "complete"
                              for r in J.read_journal(info.dir).records)
        self._settled, self._settled_as, self._adopted = False, {}, set()
        self.engine_in_use = kind
        self._tap = MetricsTap(info.dir, _Forward(self),
                               on_samples=lambda samples: self._emit(E.Samples(info.id, tuple(samples))),
                               on_problem=lambda text: self._emit(E.MetricsProblem(info.id, text)),
                               counter_transports=self.factory)
        engine.listener = self._tap
        for problem in engine.journal_problems:
            self._warn(E.JOURNAL, problem, run_id=info.id)
        return True

    def _engine_available(self, kind: str, *, run_id: str) -> bool:
        if kind != ANSIBLE:
            self._warn(E.REFUSED, f"there is no run engine {kind!r}: use {BUILTIN} or {ANSIBLE}", run_id=run_id)
            return False
        from app.ansible.engine import missing
        problem = missing()
        if problem:
            self._warn(E.REFUSED, problem, run_id=run_id)
        return problem is None

    def close(self) -> None:
        """Close the open run: its connections, its metrics, its hold on the run; says so in the journal."""
        with self._close_lock:
            engine, tap, self.engine, self._tap = self.engine, self._tap, None, None
        if engine is None:
            return
        engine.cancel()
        try:
            engine.journal.record("session-end")
        except OSError:
            pass        # a full disk was reported when it stopped the run
        engine.close()
        if tap is not None:
            tap.close()

    # ------------------------------------------------------------------ where it stands

    @property
    def run_id(self) -> str:
        return self.info.id if self.info else ""

    def _memo_key(self, engine: RunEngine) -> tuple:
        # read before the states are: a change during the computation leaves the memo stale, never wrong
        return (id(engine), engine.state_version, self._completed, self._bed_changed, len(engine.journal_problems))

    def standing(self) -> RunStanding:
        engine = self.engine
        if engine is None:
            return RunStanding(self.run_id, False, 0, 0, 0)
        key = self._memo_key(engine)
        memo = self._standing_memo
        if memo is not None and memo[0] == key:
            return memo[1]
        self.standings_worked_out += 1
        standing = stand(engine.info.id, [], steps=engine.steps, task_state=engine.task_state,
                         journal_problems=engine.journal_problems, bed_changed=self._bed_changed,
                         completed=self._completed)
        self._standing_memo = (key, standing)
        return standing

    def look(self, number: str) -> StepLook | None:
        engine, step = self.engine, self.by_number.get(number)
        if engine is None or step is None:
            return None
        memo = self._looks.get(number)
        if memo is not None and memo[0] >= engine.step_changed.get(number, -1):
            return memo[1]
        version = engine.state_version      # read first: a change while the look is made leaves it stale
        look = step_look(step, engine.task_state)
        self._looks[number] = (version, look)
        return look

    def first_unfinished(self) -> RunStep | None:
        number = self.standing().next_step
        return self.by_number.get(number) if number else None

    def task_state(self, task) -> J.TaskState:
        return self.engine.task_state(task) if self.engine else J.TaskState(task.step, task.host)

    def failed_tasks(self) -> list[J.TaskState]:
        return self.engine.failed_tasks() if self.engine else []

    # ------------------------------------------------------------------ working

    def preflight(self, steps: Sequence[RunStep] | None = None) -> list:
        """Connect to every host the steps use and look for their programs; changes nothing."""
        checks = self.engine.preflight(steps)
        note = ""
        if not checks:
            note = (no_access_text(self.bed) if not self.bed.access else
                    "none of these steps runs on a host (each is done by hand), so there is nothing to check; "
                    "hosts with remote access: " + ", ".join(a.host for a in self.bed.access))
        self._emit(E.PreflightChecked(self.run_id, tuple(checks), note))
        return checks

    def check_bed(self, hosts: Sequence[str] | None = None, scenario: str | None = None, on_host=None):
        """The as-built check (app/asbuilt/check.py) over this run's transports and lanes; kept with
        the run when one is open.  Blocking: the Run tab calls it on a worker thread."""
        from app.asbuilt.check import check_bed, record
        # an open run's connections are the check's too: its steps then do not connect again
        connections = self.engine.connections if self.engine is not None else None
        result = check_bed(self.bed, self.factory, hosts=hosts, scenario=scenario, workers=self.workers,
                           on_host=on_host, connections=connections)
        if self.info is not None:
            record(self.info.dir, result)
        return result

    def settle_leftovers(self, steps: Sequence[RunStep] | None = None) -> str | None:
        """A step's job still on its host is adopted or stopped before anything else runs: never
        started a second time beside it.  Which of the two is app.run.leftover_choice's: a job that
        ended is taken as it ended; one still running is stopped when the journal says the driver
        ended it (its timeout or Stop never reached the host), else the presenter is asked
        (StillRunning).  `steps`: only theirs (default: the run's).  None when all is settled,
        else "unreachable" or "undecided" (nothing was started)."""
        from app.remote import jobs
        from app.remote.base import RemoteError
        from app.run import leftover_choice as L
        engine, run_id = self.engine, self.run_id
        wanted = None if steps is None else {s.number for s in steps}
        for task in engine.leftovers():
            if (wanted is not None and task.step not in wanted) or self._settled_as.get(task.key) == self._as(task):
                continue        # not asked for, or settled by this driver and unchanged since
            try:
                status, number = engine.leftover_status(task)
            except RemoteError as exc:
                self._emit(E.Leftover(run_id, task.step, task.host, "unreachable", None, str(exc)))
                return "unreachable"
            ended = engine.task_state(task)
            action = L.choice(ended.status, status)
            # said beside what is done: the driver's own stop of this step never reached the host
            why = L.why_stopped(ended.status) if ended.status in L.STOPPED_BY_DRIVER else ""
            if action == L.ASK:
                action = self._question(E.StillRunning(task.host, task.step, number))
                if action not in (L.ADOPT, L.STOP):
                    self._emit(E.Leftover(run_id, task.step, task.host, "undecided", number))
                    return "undecided"
            if action == L.ADOPT:
                self._emit(E.Leftover(run_id, task.step, task.host, "ended" if status == jobs.ENDED else "adopting",
                                      number, why))
                self._adopted.add(task.key)
                engine.adopt(task)
            elif action == L.STOP:
                self._emit(E.Leftover(run_id, task.step, task.host, "stopping", number, why))
                try:
                    stopped, code = engine.stop_leftover(task)
                except RemoteError as exc:
                    self._emit(E.Leftover(run_id, task.step, task.host, "unreachable", None, str(exc)))
                    return "unreachable"
                if stopped == jobs.ENDED:
                    # it ended between the question and the stop: taken as it ended, never run again
                    self._emit(E.Leftover(run_id, task.step, task.host, "ended", code, why))
                    self._adopted.add(task.key)
                    engine.adopt(task)
            self._settled_as[task.key] = self._as(task)
        self._settled = True
        return None

    def _as(self, task) -> tuple[str, int]:
        state = self.engine.task_state(task)
        return state.status, state.attempts

    def run(self, steps: Sequence[RunStep], rerun: bool = False, writer: J.Writer | None = None) -> RunStanding:
        """Run these steps' automated tasks (stages in order, lanes in parallel) after settling
        what a dead driver left behind; a lane stops at a manual step or a failure.  Every way
        into a step a dead driver left (Run all, Run step, Retry, resume) adopts it here, once:
        a task adopted in this call is never started again by it, even when `rerun`.
        `writer`: the run and bed the asking view shows (JournalRefused when not this one's)."""
        self.engine.journal.check(writer)
        # once per driver for the whole run; then again for the steps asked for, whose own timeout,
        # Stop or lost connection in this session may have left their job on the host (a Retry after
        # a cut link).  Ansible's engine asks its hosts once per driver (one playbook for all)
        again = self._settled and self.engine_in_use == BUILTIN
        if (not self._settled or again) and self.settle_leftovers(steps if again else None) is not None:
            return self._ended()
        adopted, self._adopted = frozenset(self._adopted), set()
        self.engine.run_steps(steps, rerun=rerun, keep=adopted, writer=writer)
        return self._ended()

    def writer(self, bed_sha256: str | None = None) -> J.Writer:
        """This run as a view that shows the bed with this sha256 (default: the session's) writes to it."""
        return J.Writer(self.run_id, self.digest if bed_sha256 is None else bed_sha256)

    def mark(self, step: RunStep, status: str, note: str = "", writer: J.Writer | None = None) -> RunStanding:
        """The user ticks a step off (DONE) or skips it (SKIPPED), on all its hosts; JournalRefused
        (nothing written) when `writer` is another run or bed than this driver's."""
        self.engine.mark(step, status, note, writer=writer)
        return self._ended()

    def record_stop(self, number: str) -> None:
        self.engine.journal.record("run", event="stopped", step=number)

    def cancel(self) -> None:
        if self.engine is not None:
            self.engine.cancel()

    def _ended(self) -> RunStanding:
        standing = self.standing()
        completed_now = False
        if standing.steps_total and standing.next_step is None and not self._completed:
            self._completed = completed_now = True
            self.engine.journal.record("run", event="complete")
        elif standing.waiting_step and standing.waiting_step != self._waiting_recorded:
            # so that a listing from the journal alone (another window, `runs`) says what the run waits for
            self._waiting_recorded = standing.waiting_step
            self.engine.journal.record("run", event="waiting", step=standing.waiting_step)
        self._emit(E.RunEnded(self.run_id, standing, completed_now))
        return standing

    # ------------------------------------------------------------------ questions and events

    def _question(self, question: E.Question) -> Any:
        if self._ask is None:
            return None
        return self._ask(question)

    def _trust_host_key(self, q) -> bool:
        return bool(self._question(E.TrustHostKey(q.host, q.address, q.key_type, q.fingerprint)))

    def _password(self, access) -> str | None:
        from app.remote.credentials import entry_name
        entry = entry_name(access)
        answer = self._question(E.PasswordNeeded(access.host, access.user, access.credential, entry))
        if not isinstance(answer, E.PasswordAnswer) or not answer.password:
            return None
        # kept in the store (and the keyring when asked): the next connection finds it there
        self.factory.credentials.set(entry, answer.password, remember=answer.remember)
        return answer.password

    def _emit(self, event: E.Event) -> None:
        self._on_event(event)

    def _warn(self, kind: str, text: str, *, run_id: str) -> None:
        self._emit(E.RunWarning(run_id, kind, text))


class _Forward(RunListener):
    """The engine's callbacks (on worker threads) as events that carry what a view draws."""

    def __init__(self, session: RunSession):
        self.session = session
        self.run_id = session.run_id
        self.engine = session.engine

    def _look(self, task) -> StepLook:
        step = self.session.by_number.get(task.step)
        return step_look(step, self.engine.task_state) if step else StepLook(task.step, J.PENDING, ())

    def task_started(self, task) -> None:
        self.session._emit(E.StepStarted(self.run_id, task.step, task.host, self._look(task)))

    def output(self, task, stream, line) -> None:
        self.session._emit(E.OutputLine(self.run_id, task.step, task.host, stream, str(line), time.monotonic()))

    def late_copy(self, task, what, number, detail) -> None:
        self.session._emit(E.Leftover(self.run_id, task.step, task.host, what, number, detail))

    def task_finished(self, task, state) -> None:
        # the step's look only: where the whole run stands is O(tasks), too dear per task on a big bed
        self.session._emit(E.StepEnded(self.run_id, task.step, task.host, state.status, state.message,
                                       state.seconds, self._look(task)))


def bed_to_run(bed, configuration: str | None):
    """The bed a run works on: the view of the configuration it names.  ValueError when the
    bed has configurations and none (or an unknown one) is named."""
    if configuration:
        from topology.configurations import configured
        try:
            return configured(bed, configuration)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
    if bed.configurations:
        raise ValueError("this bed has configurations (" + ", ".join(c.id for c in bed.configurations)
                         + "): name the one the run uses (--configuration NAME, or the configuration "
                           "chooser)")
    return bed


def runs_of_bed(bed_path: str | Path | None, runs_dir: Path | None = None) -> list[tuple[J.RunInfo, RunStanding]]:
    """The recorded runs of a bed file, newest first, each with where it stands."""
    if not bed_path:
        return []
    wanted = Path(bed_path).resolve()
    return [(info, standing_of(info)) for info in J.list_runs(runs_dir) if Path(info.bed_file) == wanted]


def standing_of(info: J.RunInfo, read: J.JournalRead | None = None) -> RunStanding:
    """Where a recorded run stands, from its journal alone (no bed needed)."""
    from app.run.runlock import is_driven
    read = read or J.read_journal(info.dir)
    return stand(info.id, read.records, journal_problems=read.notes + read.damage,
                 distrust=J.distrust(info.dir, read), driven=is_driven(info.dir))


def no_access_text(bed) -> str:
    """Why every step is manual when the bed says how to reach no host, and how to change that."""
    host = next((s.id for s in bed.servers), "HOST")
    return ("no host has remote access set, so every step is done by hand and no host can be checked. "
            "To run steps on a host, add an 'access:' list to the project file, one entry per host with its "
            "id, transport (ssh, winrm or local), address and user, e.g.\n"
            f"  access:\n    - {{host: {host}, transport: ssh, address: 192.0.2.10, user: root}}\n"
            "Passwords are asked for when the run connects and kept in the system keyring, never in the file.")


def access_warnings(bed) -> list[str]:
    """The access findings (plain-text WinRM Basic, TLS checks off), said again when a run starts."""
    from topology.validation import validate
    return [f"{f.code} {f.message}" for f in validate(bed, codes=("ACC-001", "ACC-002")) if not f.accepted]
