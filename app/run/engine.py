"""Executes run steps on their hosts and journals every task.

Qt-free and blocking: the command line calls it directly, the GUI from a worker thread.
Listener callbacks arrive on worker threads; a GUI forwards them through queued signals.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from app.remote import base as remote
from app.remote import jobs
from app.remote.base import CommandResult, RemoteError, Transport
from app.run import journal as J
from app.run.fault_points import reached as fault_point
from app.run.journal import Journal, RunInfo, TaskState, distrust, read_journal, replay
from app.run.leftover_choice import MAY_BE_LEFT, late_copy_ended, late_copy_refused
from app.run.leftovers import Leftovers
from app.run.plan import RunStep, Stage, Task, hosts_of, stages
from app.run.result_fetch import fetch_results, result_paths
from app.run.runlock import RunLock
from app.run.standing import aggregate
from app.run.tool_needs import Need, describe_unmet, tool_needs, unmet
from topology import quoting

DEFAULT_TIMEOUT_S = 3600.0      # a step with no timeout of its own: long loads run for hours
DEFAULT_WORKERS = 64            # hosts worked on at once


class JournalDistrusted(Exception):
    """The run's journal cannot say what already ran; running on could repeat steps."""


class _Either:
    """Set when either event is: the run's cancel or one task's own stop."""

    def __init__(self, *events: threading.Event):
        self.events = events

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


class RunListener:
    """Override what you need.  Called from worker threads."""

    def task_started(self, task: Task) -> None: ...

    def output(self, task: Task, stream: str, line: str) -> None: ...

    def task_ending(self, task: Task) -> None:
        """The task ended on its host; its end is recorded next.  What the run keeps of the task
        (its samples) is made durable here, so that no record says a step ended whose figures a
        crash can still lose."""

    def task_finished(self, task: Task, state: TaskState) -> None: ...

    def output_taken(self, task: Task, lines: list[str]) -> None:
        """The last stdout lines of an adopted task that a driver before this one already took
        (and recorded): what follows continues them.  Called after task_started."""

    def late_copy(self, task: Task, what: str, number: int | None, detail: str) -> None:
        """An earlier attempt's start of this task reached its host late (after the resume looked):
        what became of that copy, in app.run.events.Leftover's words ("ended": taken as it ended,
        with its exit status; "adopting": followed to its end and taken; "stopping": stopped, the
        step starts again)."""


@dataclass
class HostCheck:
    host: str
    ok: bool
    message: str = ""
    missing_tools: list[str] = field(default_factory=list)


class Connections:
    """One open transport per host, opened on first use, reopened after a lost connection."""

    def __init__(self, factory: Callable[[str], Transport]):
        self._factory = factory
        self._open: dict[str, Transport] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, host: str) -> Transport:
        with self._guard:
            lock = self._locks.setdefault(host, threading.Lock())
        with lock:
            t = self._open.get(host)
            if t is None:
                t = self._factory(host)
                t.open()
                self._open[host] = t
            return t

    def drop(self, host: str) -> None:
        with self._guard:
            t = self._open.pop(host, None)
        if t is not None:
            try:
                t.close()
            except Exception:
                pass

    def close_all(self) -> None:
        for host in list(self._open):
            self.drop(host)


def step_needs(steps: Iterable[RunStep]) -> dict[str, list[Need]]:
    """host -> the programs its automated tasks call (each need a choice of alternatives)."""
    needs: dict[str, dict[Need, None]] = {}
    for s in steps:
        for t in s.tasks:
            if not t.manual:
                bucket = needs.setdefault(t.host, {})
                for need in tool_needs(t.script, t.shell):
                    bucket[need] = None
    return {host: list(bucket) for host, bucket in needs.items()}


def check_host(connections: Connections, host: str, host_needs: list[Need]) -> HostCheck:
    """Pre-flight of one host: connect, log in, look for the programs; changes nothing."""
    try:
        transport = connections.get(host)
    except RemoteError as exc:
        return HostCheck(host, False, str(exc))
    wanted = list(dict.fromkeys(t for need in host_needs for alt in need for t in alt))
    if not wanted:
        return HostCheck(host, True, "reachable, logged in")
    probe = (f"for t in {quoting.quote_list('bash', wanted)}; do "
             'command -v "$t" >/dev/null 2>&1 || echo "$t"; done')
    lines: list[str] = []
    result = transport.run(probe, shell="sh", on_output=lambda stream, line: lines.append(line)
                           if stream == "stdout" else None, timeout=60)
    if result.status != remote.OK:
        return HostCheck(host, False, f"the tool check did not run: {result.message}")
    missing = {ln.strip() for ln in lines if ln.strip()}
    lacking = unmet(host_needs, missing)
    if lacking:
        return HostCheck(host, False, describe_unmet(lacking), [t for need in lacking for alt in need for t in alt])
    return HostCheck(host, True, f"reachable, logged in, {len(wanted) - len(missing)} tool(s) present")


class RunEngine(Leftovers):
    def __init__(self, info: RunInfo, steps: Sequence[RunStep], connect: Callable[[str], Transport], *,
                 workers: int = DEFAULT_WORKERS, timeout: float | None = None,
                 host_timeouts: dict[str, float] | None = None, listener: RunListener | None = None,
                 bed_sha256: str | None = None):
        """`bed_sha256`: the project file the driver works from (default: the one the run began
        with); records a person's action asks for must name it (Journal.check)."""
        self.info = info
        self.steps = list(steps)
        self.by_number = {s.number: s for s in self.steps}
        self.connections = Connections(connect)
        self.workers = max(1, workers)
        self.timeout = timeout
        self.host_timeouts = host_timeouts or {}
        self.listener = listener or RunListener()
        # before anything is written: a second driver of the same run is refused here
        self._run_lock = RunLock(info.dir).acquire()
        try:
            read = read_journal(info.dir)
            self.journal_problems = read.notes + read.damage
            self.distrust = distrust(info.dir, read)
            self.writer = J.Writer(info.id, info.bed_sha256 if bed_sha256 is None else bed_sha256)
            self.journal = Journal(info.dir, owner=self.writer)
        except BaseException:
            self._run_lock.release()
            raise
        self.states: dict[tuple[str, str], TaskState] = replay(read.records)
        self._states_lock = threading.Lock()
        # bumped by every change to a task's state (set, or a field of one changed), under the lock:
        # where the run stands is worked out again only when it moved (RunSession.standing)
        self.state_version = 0
        self.step_changed: dict[str, int] = {}      # step number -> the state_version of its last change
        self._cancel = threading.Event()
        self._kept: frozenset[tuple[str, str]] = frozenset()
        self._pool: ThreadPoolExecutor | None = None
        self._hands_lock = threading.Lock()

    # ------------------------------------------------------------------ state

    def task_state(self, task: Task) -> TaskState:
        with self._states_lock:
            return self.states.get(task.key) or TaskState(task.step, task.host)

    def step_status(self, step: RunStep) -> str:
        return aggregate(step.manual, [self.task_state(t).status for t in step.tasks])

    def succeeded(self, step: RunStep) -> bool:
        return self.step_status(step) in J.SUCCEEDED

    def first_unfinished(self) -> RunStep | None:
        return next((s for s in self.steps if not self.succeeded(s)), None)

    def failed_tasks(self) -> list[TaskState]:
        return [self.task_state(t) for s in self.steps for t in s.tasks
                if self.task_state(t).status in J.PROBLEMS]

    # -------------------------------------------------------------- pre-flight

    def preflight(self, steps: Iterable[RunStep] | None = None) -> list[HostCheck]:
        """Connect to every host the steps use, log in and look for the programs the steps
        call.  Changes nothing on any host."""
        needs = step_needs(self.steps if steps is None else steps)

        def check(host: str) -> HostCheck:
            return check_host(self.connections, host, needs.get(host, []))

        results = list(self._hands().map(check, list(needs)))
        for r in results:
            self.journal.record("preflight", host=r.host, ok=r.ok, message=r.message)
        return results

    # ------------------------------------------------------------------ running

    def cancel(self) -> None:
        """Stop what is running (each running task ends CANCELLED) and start nothing new."""
        self._cancel.set()

    def run_steps(self, steps: Sequence[RunStep], *, rerun: bool = False,
                  keep: frozenset[tuple[str, str]] = frozenset(), writer: J.Writer | None = None) -> bool:
        """Run these steps' automated tasks (stages in order, lanes in parallel).  Tasks that
        already succeeded are left alone unless `rerun`; tasks in `keep` (adopted just before:
        their outcome is the one taken) never run here.  Manual steps are not touched: a lane
        stops at a manual step that is not ticked off.  True when every task succeeded."""
        if self.distrust:
            raise JournalDistrusted(self.distrust)
        self.journal.check(writer)
        self._cancel.clear()
        self._kept = frozenset(keep)
        for stage in stages(steps):
            self._run_stage(stage, rerun)
            if self._cancel.is_set():
                break
            if not all(self.succeeded(s) for s in stage.steps):
                break
        ran = {s.number for s in steps if self.succeeded(s)}
        for s in self.steps:
            if s.fetched_by in ran:
                self.take_fetched(s)        # a load run on its own: its results step is ticked off too
        return all(self.succeeded(s) for s in steps)

    def _run_stage(self, stage: Stage, rerun: bool) -> None:
        def lane(host: str, lane_steps: list[RunStep]) -> None:
            for step in lane_steps:
                if self._cancel.is_set():
                    return
                if self.succeeded(step) and not rerun:
                    continue
                if step.manual and not self.take_fetched(step):
                    return      # waits for a person
                for task in step.tasks:
                    if task.key in self._kept:
                        if self.task_state(task).status not in J.SUCCEEDED:
                            return      # adopted and failed: its outcome stands, the lane stops
                        continue
                    if task.manual or (self.task_state(task).status in J.SUCCEEDED and not rerun):
                        continue
                    if not self._execute(task):
                        return

        lanes = list(stage.lanes.items())
        if len(lanes) == 1:
            lane(*lanes[0])
            return
        pool = self._hands()
        for f in [pool.submit(lane, host, s) for host, s in lanes]:
            f.result()

    def _hands(self) -> ThreadPoolExecutor:
        """The threads that work on hosts at once, kept from pre-flight to close(): a stage's 50
        lanes start on threads already there.  Starting 50 threads each time waited for every new
        thread to get the GIL from the busy ones in turn, and the last lane began up to 0.5 s
        after the first."""
        with self._hands_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="run-host")
            return self._pool

    def take_fetched(self, step: RunStep) -> bool:
        """A "copy the results" step whose load step's files the engine already fetched is ticked
        off, saying which files; True when it was (or already is)."""
        if self.succeeded(step):
            return True
        if not step.fetched_by:
            return False
        from app.metrics.run_results import FETCHED, attached
        files = [r.stored for r in attached(self.info.dir)
                 if r.how == FETCHED and r.step == step.fetched_by and r.host == step.target]
        if not files:
            return False
        self.mark(step, J.DONE, f"the engine fetched {', '.join(files)} when step {step.fetched_by} ended",
                  by=J.BY_ENGINE)
        return True

    def _set(self, state: TaskState) -> None:
        with self._states_lock:
            self.states[(state.step, state.host)] = state
            self._bump(state.step)

    def _bump(self, step: str) -> None:
        """Under the states lock: a task of this step changed."""
        self.state_version += 1
        self.step_changed[step] = self.state_version

    def _state_changed(self, step: str) -> None:
        """A field of a task's state was changed in place (its pid, when it started)."""
        with self._states_lock:
            self._bump(step)

    def _job(self, task: Task, taken: tuple[int, int] = (0, 0), unseen_end: int = 0) -> jobs.Job:
        def started(pid: int) -> None:
            fault_point("job-started")
            self.journal.record("process", step=task.step, host=task.host, pid=pid)
            with self._states_lock:
                st = self.states.get(task.key)
                if st is not None:
                    st.pid = pid
                    self._bump(task.step)
        return jobs.Job(self.info.id, task.step, task.host, on_started=started, skip_out=taken[0],
                        skip_err=taken[1], attempt=self.task_state(task).attempts, unseen_end=unseen_end)

    def _execute(self, task: Task, adopt: bool = False) -> bool:
        previous = self.task_state(task)
        state = TaskState(task.step, task.host, J.RUNNING, attempts=previous.attempts + (0 if adopt else 1),
                          started=(previous.started if adopt and previous.started else J.now_iso()))
        out_path = self.journal.output_path(task.step, task.host)
        # an adopted job goes on from the lines the dead driver already took: none twice
        taken_out, taken_err, earlier = J.taken_output(out_path) if adopt else (0, 0, [])
        self._set(state)
        stated = getattr(self.by_number.get(task.step), "stated_seconds", None)
        self.journal.record("start", step=task.step, host=task.host, shell=task.shell, attempt=state.attempts,
                            **({"stated_s": stated} if stated else {}),
                            **({"adopted": True, "taken_lines": taken_out} if adopt else {}))
        self._notify("task_started", task)
        if earlier:
            self._notify("output_taken", task, earlier)
        start = time.monotonic()
        stop = threading.Event()
        write_error: list[OSError] = []
        out = None
        try:
            out = open(out_path, "ab", buffering=0)
            out.write(f"--- {'adopted the job of ' if adopt else ''}attempt {state.attempts} at {state.started}\n"
                      .encode())
        except OSError as exc:
            write_error.append(exc)

        def sink(stream: str, line: str) -> None:
            if not write_error:
                whole = getattr(line, "whole", None) or line.encode("utf-8", "replace")
                try:
                    out.write((b"[stderr] " if stream == "stderr" else b"") + whole + b"\n")
                except OSError as exc:
                    # a full disk: stop the step now rather than let it run blind until its timeout
                    write_error.append(exc)
                    stop.set()
            self._notify("output", task, stream, line)

        ran: dict[str, object] = {}     # an outcome taken from a job an earlier driver or attempt started
        if write_error:
            result = CommandResult(J.FAILED, None, "")
        else:
            # the earlier attempt's job, found ended by this start, ran late and is taken (jobs.Job.unseen_end)
            unseen = previous.attempts if not adopt and previous.status in MAY_BE_LEFT else 0
            result = self._run_on_host(task, task.script, sink, _Either(self._cancel, stop), adopt=adopt,
                                       taken=(taken_out, taken_err), unseen_end=unseen)
            if not adopt and (late_copy_refused(previous.status, result) or late_copy_ended(result)):
                result, taken_job = self._past_the_late_copy(task, previous, sink, _Either(self._cancel, stop),
                                                             late_copy_ended(result))
                if taken_job is not None:
                    ran["taken_attempt"] = taken_job.attempt
                    start = self._adopted_start(task, state, start, taken_job, ran)
            if adopt:
                start = self._adopted_start(task, state, start, ran=ran)
            if result.status == remote.OK and task.verify and not write_error:
                sink("info", f"[check] {task.verify}")
                check = self._run_on_host(task, task.verify, sink, _Either(self._cancel, stop))
                if check.status != remote.OK:
                    result = CommandResult(J.FAILED, check.exit_code,
                                           f"the step ran but its check failed ({check.message})",
                                           result.seconds + check.seconds, result.tail + check.tail)
            if result.status in (remote.OK, remote.FAILED) and not write_error and result_paths(task):
                self._fetch_results(task, sink)
        if out is not None:
            try:
                out.close()
            except OSError:
                pass
        if write_error:
            exc = write_error[0]
            result = CommandResult(J.FAILED, result.exit_code,
                                   f"cannot write the step's output to {out_path}: {exc.strerror or exc}; the step "
                                   "was stopped at once. Free space there, then resume", result.seconds, result.tail)
        state = TaskState(task.step, task.host, result.status, result.exit_code, result.message,
                          state.started, J.now_iso(), round(time.monotonic() - start, 3),
                          state.attempts, result.tail[-50:])
        self._notify("task_ending", task)
        self.journal.record("end", step=task.step, host=task.host, status=state.status,
                            exit_code=state.exit_code, message=state.message, seconds=state.seconds,
                            tail=state.tail, **ran)
        self._set(state)
        self._notify("task_finished", task, state)
        return state.status == J.OK

    def _fetch_results(self, task: Task, sink) -> None:
        """The files a workload step leaves (its template's results list), kept with the run."""
        try:
            transport = self.connections.get(task.host)
        except RemoteError as exc:
            sink("info", f"[results] not fetched: {exc}")
            return
        def problem(text: str) -> None:
            self.journal.record("note", step=task.step, host=task.host, message=text)
        try:
            fetch_results(transport, task, self.info.dir, lambda text: sink("info", text), problem=problem)
        except OSError:
            raise
        except Exception as exc:
            sink("info", f"[results] not kept: {type(exc).__name__}: {exc}")
            problem(f"the step's result files could not be kept: {type(exc).__name__}: {exc}")

    def _notify(self, event: str, *args) -> None:
        # a display that fails must not stop a run that is changing real hosts
        try:
            getattr(self.listener, event)(*args)
        except Exception as exc:
            if not getattr(self, "_listener_failed", False):
                self._listener_failed = True
                self.journal.record("note", message=f"the display stopped following the run: {exc!r}")

    def _timeout(self, host: str) -> float:
        """How long a step on `host` may run: the run's own limit, else the host's, else the default."""
        return self.timeout or self.host_timeouts.get(host) or DEFAULT_TIMEOUT_S

    def _run_on_host(self, task: Task, script: str, sink, cancel, adopt: bool = False,
                     taken: tuple[int, int] = (0, 0), unseen_end: int = 0) -> CommandResult:
        try:
            transport = self.connections.get(task.host)
        except RemoteError as exc:
            return CommandResult(exc.status, None, str(exc))
        timeout = self._timeout(task.host)
        as_job = transport.supports_jobs and task.shell in jobs.SHELLS and script is task.script
        if adopt:
            result = transport.follow_job(self._job(task, taken), on_output=sink, timeout=timeout, cancel=cancel)
        elif as_job:
            # a job outlives this process: resume can find it instead of starting a second copy
            result = transport.run(script, shell=task.shell, on_output=sink, timeout=timeout, cancel=cancel,
                                   job=self._job(task, unseen_end=unseen_end))
        else:
            result = transport.run(script, shell=task.shell, on_output=sink, timeout=timeout, cancel=cancel)
        if result.status == remote.LOST:
            self.connections.drop(task.host)    # the next attempt reconnects
        return result

    # ------------------------------------------------------------ manual steps

    def mark(self, step: RunStep, status: str, note: str = "", writer: J.Writer | None = None, by: str = "") -> None:
        """The user ticks a step off (DONE) or skips it (SKIPPED), on all its hosts.  `writer`:
        the run and bed the asking view shows (JournalRefused when they are not this driver's);
        `by`: ENGINE when the engine did the manual step's work itself (the record says so)."""
        assert status in (J.DONE, J.SKIPPED)
        self.journal.check(writer)
        for task in step.tasks:
            self.journal.record("mark", step=task.step, host=task.host, status=status, message=note, writer=writer,
                                **({"by": by} if by else {}))
            self._set(TaskState(task.step, task.host, status, None, note, ended=J.now_iso(),
                                attempts=self.task_state(task).attempts))

    def close(self) -> None:
        if self._pool is not None:
            # idle threads end now; close() never waits for a lane that still runs (it ends once
            # its connection is closed below)
            self._pool.shutdown(wait=False)
        self.connections.close_all()
        self.journal.close()
        self._run_lock.release()


def dry_run_text(steps: Sequence[RunStep], describe_host: Callable[[str], str]) -> str:
    """What a run would do, stage by stage, without connecting to anything."""
    lines: list[str] = []
    for stage in stages(steps):
        lines.append(f"== {stage.title}  ({_stage_hosts(stage)})")
        for step in stage.steps:
            for device in step.devices:
                lines.append(f"  {step.number}  WRITES TO {device}")
            if step.manual:
                lines.append(f"  {step.number}  MANUAL  {step.text}")
                if step.why_manual:
                    lines.append(f"          (not automated: {step.why_manual})")
                continue
            for task in step.tasks:
                lines.append(f"  {step.number}  {task.host} via {describe_host(task.host)} ({task.shell})")
                for ln in task.script.splitlines():
                    lines.append(f"          $ {ln}")
                if task.verify:
                    lines.append(f"          check: {task.verify}")
    automated = sum(1 for s in steps if not s.manual)
    lines.append(f"{len(steps)} step(s): {automated} automated on {len(hosts_of(steps))} host(s), "
                 f"{len(steps) - automated} manual")
    return "\n".join(lines) + "\n"


def _stage_hosts(stage: Stage) -> str:
    """Where a stage's work happens: the hosts that run its automated tasks (a manual step's
    lane is a person, not a host)."""
    hosts = hosts_of(stage.steps)
    if not hosts:
        return "by hand"
    return "on 1 host" if len(hosts) == 1 else f"{len(hosts)} hosts in parallel"
