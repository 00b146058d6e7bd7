"""`testbed-studio run --engine ansible`: the same run, driven through Ansible.

The engine is a RunEngine (app/run/engine.py) whose steps are carried out by ansible-playbook,
started by ansible-runner, instead of by the built-in transports.  Everything else is the
built-in engine's: the run's journal and its records, the run lock, pre-flight, manual steps,
the session's events (so `runs`, `results`, the Run tab and the appendix read an Ansible run
as they read any other).

Each stage is one play of the tasks of that stage that have not succeeded yet
(app.ansible.playbook, each host its own task list), so a resume starts at the first task that
did not succeed, on every host and across plays; tasks that succeeded are never in it.  A run
of stages that no person and no earlier outcome has to decide is one pass of ansible-playbook,
with a gate between its plays (app.ansible.passes).
ansible-runner's per-task events become the journal's start and end records and the session's
step events as they arrive.  Stages run one after the other and a stage with a failure ends
the run, as in the built-in engine.

A bash or sh script runs as a job (app.remote.jobs) that outlives a driver that dies: resume
asks its host whether it still runs (adopt or stop, as with the built-in engine) or ended
meanwhile (its status is taken), so no step runs twice.  ansible-playbook itself is started
so that it dies with its driver (PR_SET_PDEATHSIG): nothing goes on in the background after a
`kill -9` of `testbed-studio run`.
"""
from __future__ import annotations

import importlib
import os
import queue
import re
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.ansible import passes, runner_events
from app.ansible.chain_runs import ChainRuns, _raw
from app.ansible.inventory import inventory, inventory_name, reach
from app.ansible.pass_files import PASS_INVENTORY, keep_results, write_pass
from app.ansible.playbook import Book, Lane, automated_play
from app.ansible.playbook_settings import ansible_environment
from app.ansible.runner_events import message_of as _message
from app.ansible.runner_events import rc_of as _rc
from app.ansible.runner_events import status_of as _status_of
from app.ansible.stage_gates import GATE_STOPPED, StageGates, write_plugin
from app.ansible.tasks import result_tasks, step_tasks
from app.ansible.wrapper import PDEATHSIG_WRAPPER, end_leftovers
from app.ansible.yaml_out import name
from app.remote import jobs
from app.remote.base import RemoteError
from app.run import journal as J
from app.run.engine import DEFAULT_TIMEOUT_S, RunEngine
from app.run.extra_vars import SecretVars
from app.run.journal import TaskState
from app.run.leftover_choice import MAY_BE_LEFT
from app.run.plan import RunStep, Stage, Task, stages

ENGINE_NAME = "ansible"
INSTALL_HINT = ("pip install 'testbed-studio[ansible]' (or, into this environment: "
                f"{sys.executable} -m pip install ansible-runner ansible-core)")
_STEP_OF_TASK = re.compile(r"^(\d+(?:\.\d+)*) ")
_TIMES_MARK = "@testbed-studio-job-times "
# a script's failure says "non-zero return code": its exit status and output say it better
_ENDED = ("runner_on_ok", "runner_on_failed", "runner_on_unreachable")
_SCRIPT_ACTIONS = ("ansible.builtin.shell", "shell", "ansible.builtin.raw", "raw",
                   "ansible.windows.win_shell", "win_shell")


def ansible_playbook() -> Path | None:
    beside = Path(sys.executable).with_name("ansible-playbook")
    if beside.is_file():
        return beside
    found = shutil.which("ansible-playbook")
    return Path(found) if found else None


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def missing() -> str | None:
    """Why `--engine ansible` cannot run here, with how to get it; None when it can."""
    lacking = [n for n, ok in (("ansible-runner", _importable("ansible_runner")),
                               ("ansible-core (ansible-playbook)", ansible_playbook() is not None)) if not ok]
    if not lacking:
        return None
    return f"the ansible engine needs {' and '.join(lacking)}, not installed here: {INSTALL_HINT}"


@dataclass
class _Progress:
    """One task (a step on a host) in the pass that runs it."""
    task: Task
    expected: int                       # Ansible tasks it is made of
    seen: int = 0
    started: float | None = None
    state: TaskState | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)
    host_seconds: float | None = None   # an adopted job's own time on its host (its start to its end)
    ran: dict[str, str] = field(default_factory=dict)   # an adopted job's own start and end (the end record's)
    stopped_on_host: bool = False       # a chain stopped it at its timeout: nothing left to stop


class AnsibleEngine(ChainRuns, StageGates, RunEngine):
    def __init__(self, info: J.RunInfo, steps: Sequence[RunStep], connect, *, bed,
                 known_hosts: Path | None = None, extra_vars: Sequence[str] = (), **options):
        super().__init__(info, steps, connect, **options)
        self.bed = bed
        self.reached = reach(bed)
        self.known_hosts = known_hosts
        self.extra_vars = list(extra_vars)
        self.folder = info.dir / "ansible"
        self._by_name = {inventory_name(h): h for h in self.reached.transports}
        self._leftover_status: dict[tuple[str, str], tuple[str, int | None]] | None = None
        self._passes = 0
        self._write_lock = threading.Lock()
        self._places: dict[str, tuple[str | None, str | None]] = {}
        self._stages: list[Stage] = []
        self._covered: set[tuple[tuple[str, str], ...]] = set()      # stages a pass of this run_steps took
        self._chains_init()
        self._gates_init()

    # ------------------------------------------------------------------ running
    # run_steps is the built-in engine's (stages in order, a stage with a failure ends the run);
    # a run of stages nothing but Ansible decides is one pass of ansible-playbook (app.ansible.passes)

    def run_steps(self, steps: Sequence[RunStep], **options) -> bool:
        self._stages, self._covered = stages(steps), set()
        return super().run_steps(steps, **options)

    def _stage_lanes(self, stage: Stage, rerun: bool, ahead: bool = False) -> dict[str, Lane] | None:
        """Each host's tasks of the stage still to run; None when `ahead` (looking past the stage
        that runs now) meets a manual step: the stage waits for what the ones before it do."""
        lanes: dict[str, Lane] = {}
        for lane_steps in stage.lanes.values():
            for step in lane_steps:
                if self.succeeded(step) and not rerun:
                    continue
                if step.manual and ahead:
                    return None
                if step.manual and not self.take_fetched(step):
                    break       # the host's lane waits for a person, as in the built-in engine
                for task in step.tasks:
                    if task.key in self._kept:
                        continue        # adopted just before: its outcome is the one taken
                    if not task.manual and (rerun or self.task_state(task).status not in J.SUCCEEDED):
                        lanes.setdefault(task.host, []).append((step, task))
        return lanes

    def _run_stage(self, stage: Stage, rerun: bool) -> None:
        if passes.stage_key(stage) in self._covered:
            return      # ran in the pass of a stage before it
        keys = [passes.stage_key(s) for s in self._stages]
        at = keys.index(passes.stage_key(stage)) if passes.stage_key(stage) in keys else len(keys)
        following = ((s, self._stage_lanes(s, rerun, ahead=True)) for s in self._stages[at + 1:])

        def unattended(planned: tuple[Stage, dict[str, Lane] | None]) -> bool:
            return planned[1] is not None and passes.runs_unattended(
                planned[0], planned[1], lambda t: self.task_state(t).status,
                lambda h: bool(self.reached.refused.get(h) or self._unreachable_why(h)))
        group = passes.one_pass((stage, self._stage_lanes(stage, rerun)), following, unattended)
        self._covered |= {passes.stage_key(s) for s, _ in group}
        plays = [(s.title, lanes, s.steps[0].section == "run") for s, lanes in group if lanes]
        if plays:
            self._pass(plays)

    def _place(self, host: str) -> tuple[str | None, str | None]:
        """(the folder of the host's jobs, the folder its steps start in), where the built-in
        engine keeps them: under the login's home on a remote host, the host's own folder in the
        application's state for a local one; None for Ansible's default."""
        if host not in self._places:
            if self.reached.transports.get(host) == "local":
                from app.remote.local import LocalTransport
                local = LocalTransport(host)
                local.open()
                self._places[host] = (local.job_base, str(local.workdir))
            elif self.reached.transports.get(host) == "ssh":
                self._places[host] = (None, "~")
            else:
                self._places[host] = (None, None)
        return self._places[host]

    def _job_of(self, task: Task, attempt: int | None = None, **found) -> jobs.Job:
        return jobs.Job(self.info.id, task.step, task.host, keep_files=True,
                        attempt=self.task_state(task).attempts if attempt is None else attempt, **found)

    def _job_script(self, step: RunStep, task: Task) -> str:
        base, workdir = self._place(task.host)
        # the pass journals the task's start (its next attempt) before the job starts
        chained = self._chain_script(task)
        if chained is not None:
            return chained
        # a copy of this step its host holds that no record of this driver's says started (a late start
        # of an attempt it never saw end, or one whose driver died before its start record) is followed
        previous = self.task_state(task)
        job = self._job_of(task, previous.attempts + 1, follow_found=True,
                           unseen_end=previous.attempts if previous.status in MAY_BE_LEFT else 0)
        return jobs.start_script(job, task.script, task.shell, base, workdir or "")

    def _follow_script(self, step: RunStep, task: Task) -> str:
        # Ansible hands a task's output over only when it ends, so a dead driver took none of the
        # job's: it is read from line 1.  The job's own start and end on its host follow it (on
        # stderr, marked), so the adopted step's time is the job's, not how long this pass waited.
        job, base = self._job_of(task), self._place(task.host)[0]
        return (f"( {jobs.follow_script(job, base)}\n); s=$?\n"
                f"t=$( {jobs.times_script(job, base)}\n)\necho \"{_TIMES_MARK}$t\" >&2\nexit $s")

    def _pass(self, plays: list[tuple[str, dict[str, Lane], bool]], adopt: bool = False) -> None:
        """One ansible-playbook run of these stages (title, each host's lane, whether it is a
        measurement), one play each with a gate between them; its events journalled as they come."""
        for _, lanes, _ in plays:
            refused = {h: why for h in lanes if (why := self.reached.refused.get(h) or self._unreachable_why(h))}
            for host in refused:
                for _, task in lanes.pop(host):
                    self._begin(task)
                    self._finish(task, J.FAILED, refused[host])
        plays = [play for play in plays if play[1]]
        if not plays:
            return
        script = self._follow_script if adopt else self._job_script
        self._chains, self._shared_tasks = {}, {}
        self._gates_init()
        if not adopt:
            plays = [(title, self._chain_lanes(lanes), measurement) for title, lanes, measurement in plays]
        book = Book()
        def chdir(host: str) -> str | None:
            return self._place(host)[1]
        progress: dict[tuple[str, str], _Progress] = {}
        hosts: dict[str, None] = {}
        for title, lanes, measurement in plays:
            if hosts:
                book.plays.append(passes.gate_play([*hosts, *(h for h in lanes if h not in hosts)]))
            hosts.update(dict.fromkeys(lanes))
            files = "tasks" if len(plays) == 1 else f"tasks/play_{len(book.plays) + 1:02d}"
            play = automated_play(book, name(title), lanes, measurement, files, job_script=script, chdir=chdir)
            for host, lane in lanes.items():
                for index, (step, task) in enumerate(lane):
                    count = (len(step_tasks(step, task, index, measurement, script, chdir(host)))
                             + len(result_tasks(step, task)))
                    progress[task.key] = _Progress(task, count)
                    if task.key in self._chains:
                        for _, member in self._chains[task.key].tasks[1:]:
                            progress[member.key] = _Progress(member, 1)
            self._add_timeouts(book, play, files, lanes)
            self._one_task_each(book, play, files, lanes)
        folder = self._write_pass(book)
        if self._gate_of:
            write_plugin(folder)
            self._gate_folder = folder
        try:
            outcome = self._run_playbook(folder, lambda event: self._on_event(event, progress, adopt),
                                         lambda: self._poll_reports(progress, adopt))
        finally:
            self._close_gates()
        self._settle_pass(progress, outcome)
        self._keep_results(folder, progress)

    def _unreachable_why(self, host: str) -> str | None:
        return None if host in self.reached.transports else (
            f"{host} is not in the Ansible inventory (no access entry Ansible can use); run its steps "
            "with the built-in engine or by hand")

    def _add_timeouts(self, book: Book, play: dict, folder: str, lanes: dict[str, Lane]) -> None:
        """The built-in engine's step timeouts, as Ansible's task `timeout:`."""
        for host in lanes:
            seconds = int(self.timeout or self.host_timeouts.get(host) or DEFAULT_TIMEOUT_S)
            tasks = book.task_files.get(f"{folder}/{inventory_name(host)}.yml")
            if tasks is None:
                tasks = [t for t in play["tasks"] if "ansible.builtin.include_tasks" not in t]
            for t in tasks:
                t.setdefault("timeout", seconds)
                backstop = self.chain_backstop(str(t.get("name", "")), host)
                if backstop is not None:
                    t["timeout"] = backstop

    def _write_pass(self, book: Book) -> Path:
        with self._write_lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            existing = [int(p.name.split("-")[1]) for p in self.folder.glob("pass-*") if p.name[5:].isdigit()]
            self._passes = max([self._passes, *existing]) + 1
            folder = self.folder / f"pass-{self._passes:03d}"
        write_pass(folder, self.info.id, inventory(self.bed, self.reached), book)
        return folder

    # ------------------------------------------------------------ ansible-runner

    def _run_playbook(self, folder: Path, on_event: Callable[[dict], None],
                      on_idle: Callable[[], None] = lambda: None) -> tuple[str, int | None, str]:
        """(runner status, exit code, last lines of ansible-playbook's output).

        Events are taken over by a thread of their own: reading ansible-playbook's output never
        waits for the journal's fsync, and ansible-playbook never waits for its reader.  The same
        thread calls `on_idle` every 50 ms (what the hosts report beside Ansible's events)."""
        import ansible_runner
        wrapper = folder / "ansible-playbook"
        # -e arguments that may hold a secret reach ansible-playbook as files outside the run folder
        secrets = SecretVars(self.extra_vars)
        wrapper.write_text(PDEATHSIG_WRAPPER.format(python=sys.executable, driver=os.getpid(),
                                                    playbook=str(ansible_playbook()),
                                                    secrets=str(secrets.folder or "")))
        wrapper.chmod(0o700)
        events: queue.SimpleQueue = queue.SimpleQueue()
        failure: list[OSError] = []

        def consume() -> None:
            for event in runner_events.taken(events):
                if failure:
                    continue
                try:
                    on_event(event) if event else on_idle()
                except OSError as exc:
                    failure.append(exc)         # the journal cannot be written: stop, as the built-in engine
                    self._cancel.set()
                except Exception as exc:
                    self._notify_problem(f"an Ansible event could not be read: {exc!r}")

        def take(event: dict) -> bool:
            events.put(event)
            return False        # no copy in the pass folder: the journal and ansible-playbook's stdout are kept

        consumer = threading.Thread(target=consume, name="ansible-events", daemon=True)
        consumer.start()
        # with its own binary ansible-runner passes the command line as given: the playbook is part of it
        cmdline = shlex.join([*secrets.words, str(folder / "play.yml")])
        try:
            runner = ansible_runner.run(
                private_data_dir=str(folder), project_dir=str(folder),
                inventory=str(pass_inventory if (pass_inventory := folder / PASS_INVENTORY).is_file()
                              else self.folder / "inventory.yml"), binary=str(wrapper), forks=self.workers,
                envvars=ansible_environment(self.known_hosts), cmdline=cmdline, quiet=True,
                event_handler=take, cancel_callback=self._cancel.is_set,
                # how often a cancel is looked for while ansible-playbook runs
                settings={"pexpect_timeout": 0.25, "suppress_ansible_output": True})
        finally:
            secrets.remove()
            end_leftovers(folder / "play.yml")      # a cancel's: ansible's workers outlive the wrapper
            events.put(None)
            consumer.join()
        if failure:
            raise failure[0]
        try:
            tail = runner.stdout.read()[-3000:]
        except Exception:
            tail = ""
        return runner.status, runner.rc, tail

    def _notify_problem(self, text: str) -> None:
        if not getattr(self, "_listener_failed", False):
            self._listener_failed = True
            self.journal.record("note", message=text)

    # ------------------------------------------------------------------ events

    def _take_event(self, kind: str, data: dict, title: str, host: str | None,
                    progress: dict[tuple[str, str], _Progress], adopt: bool) -> None:
        """A task's event (StageGates._on_event: a stage's end counts as its own task's)."""
        if self._gated(title) and (kind == "runner_on_start" or (data.get("res") or {}).get("msg") == GATE_STOPPED):
            return      # waiting for its gate, or stopped there: its step begins when the gate opens, or never
        with self.journal.batched():        # one fsync for what one event says of its steps
            self._on_step_event(kind, data, host, progress, adopt)
        if host is not None and (title, host) in self._shared_tasks and kind in _ENDED:
            self._stage_host_ended(title, host, kind == "runner_on_ok", progress, adopt)

    def _on_step_event(self, kind: str, data: dict, host: str | None, progress: dict[tuple[str, str], _Progress],
                       adopt: bool) -> None:
        match = _STEP_OF_TASK.match(str(data.get("task", "")))
        if host is None or data.get("task") == passes.GATE_TASK:
            return      # the gate's failure is no step's: the steps that failed before it say why
        step = match.group(1) if match else self._shared_tasks.get((str(data.get("task", "")), host))
        item = progress.get((step, host)) if step else None
        if item is None:
            if kind in ("runner_on_failed", "runner_on_unreachable") and not data.get("ignore_errors"):
                # a task of no step (the vault check) failed: the host's next step cannot run
                item = next((p for p in progress.values() if p.task.host == host and p.state is None), None)
                if item is not None:
                    self._begin(item.task, item, adopt)
                    self._finish(item.task, _status_of(kind, data), _message(data), item, _rc(data))
            return
        if kind == "runner_on_start":
            if item.started is None:
                self._begin(item.task, item, adopt)
            return
        chain = self._chains.get(item.task.key)
        if chain is not None and kind in ("runner_on_ok", "runner_on_failed", "runner_on_unreachable"):
            if item.started is None:
                self._begin(item.task, item, adopt)
            self._chain_event(chain, kind, data, progress)
            return
        if item.started is None:
            self._begin(item.task, item, adopt)
        self._output(item, data)
        if kind in ("runner_on_ok", "runner_on_skipped"):
            item.seen += 1
            if item.seen >= item.expected:
                self._finish(item.task, J.OK, "", item, _rc(data))
        elif kind in ("runner_on_failed", "runner_on_unreachable") and not data.get("ignore_errors"):
            self._finish(item.task, _status_of(kind, data), _message(data), item, _rc(data))

    def _begin(self, task: Task, item: _Progress | None = None, adopt: bool = False) -> None:
        previous = self.task_state(task)
        state = TaskState(task.step, task.host, J.RUNNING, attempts=previous.attempts + (0 if adopt else 1),
                          started=(previous.started if adopt and previous.started else J.now_iso()))
        self._set(state)
        self.journal.record("start", step=task.step, host=task.host, shell=task.shell, attempt=state.attempts,
                            engine=ENGINE_NAME, **({"adopted": True} if adopt else {}))
        if item is not None:
            item.started, item.state = time.monotonic(), state
        self._write_output(task, f"--- {'adopted the job of ' if adopt else ''}attempt {state.attempts} at "
                                 f"{state.started} (ansible)")
        self._notify("task_started", task)

    def _host_started(self, item: _Progress, started: float) -> None:
        """An adopted job's start, on its host's clock, as the start of the step's attempt."""
        if item.state is not None:
            item.state.started = J.iso_of(started)
            self._state_changed(item.task.step)

    def _output(self, item: _Progress, data: dict) -> None:
        res = data.get("res") or {}
        if not isinstance(res, dict):
            return
        for stream in ("stdout", "stderr"):
            text = res.get(stream)
            if not isinstance(text, str) or not text:
                continue
            for line in text.splitlines():
                if stream == "stderr" and line.startswith(_TIMES_MARK):
                    started, ended = jobs.parse_times(line[len(_TIMES_MARK):])
                    if started is not None and ended is not None and ended >= started:
                        item.host_seconds = round(ended - started, 3)
                        item.ran = {"ran_from": J.iso_of(started), "ran_until": J.iso_of(ended)}
                        self._host_started(item, started)
                    continue
                if stream == "stderr" and line.startswith(jobs.FOLLOWED):
                    item.ran["taken_attempt"] = int(line[len(jobs.FOLLOWED):].strip() or 0)
                    continue
                if stream == "stderr" and line.startswith(jobs.PID_MARK):
                    continue        # the job wrapper's own line
                item.lines.append((stream, line))
                self._write_output(item.task, ("[stderr] " if stream == "stderr" else "") + line)
                self._notify("output", item.task, stream, line)
        msg = res.get("msg")
        if isinstance(msg, str) and msg and not res.get("stdout") and data.get("task_action") not in _SCRIPT_ACTIONS:
            line = f"[{data.get('task', '')}] {msg}"
            item.lines.append(("info", line))
            self._write_output(item.task, line)
            self._notify("output", item.task, "info", line)

    def _write_output(self, task: Task, line: str) -> None:
        try:
            with open(self.journal.output_path(task.step, task.host), "ab") as out:
                out.write(line.encode("utf-8", "replace") + b"\n")
        except OSError as exc:
            self._notify_problem(f"cannot write the output of {task.step} on {task.host}: {exc.strerror or exc}")

    def _finish(self, task: Task, status: str, message: str, item: _Progress | None = None,
                exit_code: int | None = None) -> None:
        current = self.task_state(task)
        if current.status != J.RUNNING:
            return
        seconds = round(time.monotonic() - item.started, 3) if item and item.started is not None else 0.0
        if item is not None and item.host_seconds is not None:
            seconds = item.host_seconds
        tail = [line for _, line in (item.lines if item else [])][-50:]
        state = TaskState(task.step, task.host, status, exit_code, message, current.started, J.now_iso(), seconds,
                          current.attempts, tail)
        self._notify("task_ending", task)
        self.journal.record("end", step=task.step, host=task.host, status=status, exit_code=exit_code,
                            message=message, seconds=seconds, tail=tail, **(item.ran if item else {}))
        self._set(state)
        if item is not None and "taken_attempt" in item.ran:
            self._notify("late_copy", task, "ended", exit_code, f"attempt {item.ran['taken_attempt']} of this step had "
                         "started on the host without a record of it here: followed to its end, not run again")
        self._notify("task_finished", task, state)

    def _keep_results(self, folder: Path, progress: dict[tuple[str, str], _Progress]) -> None:
        """The result files the pass fetched to results/HOST/, attached to the run as the built-in
        engine attaches them (app.metrics.run_results): `results`, `compare` and the appendix read the
        tool's own figures of either engine."""
        for p in progress.values():
            if self.task_state(p.task).status in (J.OK, J.FAILED):
                keep_results(self, folder, p.task)

    def _settle_pass(self, progress: dict[tuple[str, str], _Progress], outcome: tuple[str, int | None, str]) -> None:
        status, rc, tail = outcome
        cancelled = self._cancel.is_set() or status == "canceled"
        self._settle_chains(progress, cancelled)
        running = [p for p in progress.values() if self.task_state(p.task).status == J.RUNNING]
        timed_out = [p for p in progress.values()
                     if self.task_state(p.task).status == J.TIMEOUT and not p.stopped_on_host]
        # the built-in engine stops a cancelled or timed-out step on its host: so does this one
        # (Ansible's task timeout ends only the task that follows the job)
        stop = [p.task for p in (running if cancelled else []) + timed_out if p.task.shell in jobs.SHELLS]
        ended = self._stop_jobs(stop) if stop else {}
        for p in running:
            status, code = ended.get(p.task.key, ("", None))
            if status == jobs.ENDED and code is not None:
                # it ended before the stop reached it: taken as it ended
                self._finish(p.task, J.OK if code == 0 else J.FAILED,
                             "" if code == 0 else f"exit status {code}", p, code)
                continue
            why = ("stopped" if cancelled else
                   f"ansible-playbook ended (exit status {rc}) before this step did; see {self.folder}")
            self._finish(p.task, J.CANCELLED if cancelled else J.FAILED, why, p)
        failed_somewhere = any(self.task_state(p.task).status in J.PROBLEMS for p in progress.values())
        if status != "successful" and not cancelled and not failed_somewhere:
            # ansible-playbook refused the pass as a whole (a syntax error, a bad -e): each lane's
            # first step carries its words, so the run stops at it instead of trying forever
            why = "ansible-playbook failed before any step: " + " / ".join(
                ln.strip() for ln in tail.strip().splitlines()[-6:] if ln.strip())
            first: dict[str, _Progress] = {}
            for p in progress.values():
                first.setdefault(p.task.host, p)
            for p in first.values():
                if self.task_state(p.task).status not in J.SUCCEEDED:
                    self._begin(p.task, p)
                    self._finish(p.task, J.FAILED, why, p, rc)

    # ------------------------------------------------- steps a dead driver left behind

    def leftovers(self) -> list[Task]:
        """Scripts that may still be jobs on their hosts, as the built-in engine's: a driver that died
        or lost its connection never saw them end, or it ended them itself (timeout, Stop) and that
        stop may never have reached the host (app.run.leftover_choice settles each)."""
        left = [t for s in self.steps for t in s.tasks
                if t.shell in jobs.SHELLS and self.task_state(t).status in MAY_BE_LEFT]
        return left + [t for t in self._chain_leftovers() if t not in left]

    def leftover_status(self, task: Task) -> tuple[str, int | None]:
        if self._leftover_status is None:
            self._leftover_status = answers = self._ask_hosts(self.leftovers())
            by_key = {t.key: t for s in self.steps for t in s.tasks}
            for key, (status, _) in answers.items():
                self._took_chain_member(by_key[key], status)
            self._chains_resumed({h for _, h in answers})
        found = self._leftover_status.get(task.key)
        if found is None:
            raise RemoteError(f"{task.host} could not be asked about step {task.step} through Ansible (see the run's "
                              "ansible/ folder)")
        return found

    def _ask_hosts(self, tasks: list[Task]) -> dict[tuple[str, str], tuple[str, int | None]]:
        """Each job's status, asked of its host in one ansible-playbook run (its chain killed first)."""
        return self._answers(self._resume_lanes(tasks), "Steps a stopped run left on their hosts")

    def _answers(self, lanes: dict[str, list[dict]], title: str) -> dict[tuple[str, str], tuple[str, int | None]]:
        """One pass of these tasks, never cancelled; what each task named after a step printed."""
        answers: dict[tuple[str, str], tuple[str, int | None]] = {}
        if not lanes:
            return answers
        passes.plain_play(book := Book(), title, lanes)

        def on_event(event: dict) -> None:
            data = event.get("event_data") or {}
            host = self._by_name.get(str(data.get("host", "")))
            match = _STEP_OF_TASK.match(str(data.get("task", "")))
            if event.get("event") == "runner_on_ok" and host and match:
                answers[(match.group(1), host)] = jobs.parse_status(str((data.get("res") or {}).get("stdout", "")))
        cancel = self._cancel
        self._cancel = threading.Event()        # a stop or a question must not be cancelled itself
        try:
            self._run_playbook(self._write_pass(book), on_event)
        finally:
            self._cancel = cancel
        return answers

    def stop_leftover(self, task: Task) -> tuple[str, int | None]:
        """Stop the job unless it ended meanwhile, decided on the host (jobs.stop_script)."""
        found = self._stop_jobs([task]).get(task.key)
        if found is None:
            raise RemoteError(f"{task.host} could not be asked to stop step {task.step} "
                                             "through Ansible (see the run's ansible/ folder)")
        self._stopped(task, *found)
        return found

    def _stop_jobs(self, tasks: list[Task], chains_to_settle=()) -> dict[tuple[str, str], tuple[str, int | None]]:
        """Each job stopped unless it has ended (and each chain killed first, then each step it may
        have started settled): what each stop reported, by task."""
        lanes = self._chain_stop_lanes(list(chains_to_settle))
        for task in tasks:
            if task.host in self.reached.transports:
                lanes.setdefault(task.host, []).append(_raw(name(f"{task.step} stop the job"), jobs.stop_script(
                    self._job_of(task), self._place(task.host)[0])))
        return self._answers(lanes, "Stop the steps of a stopped run")
