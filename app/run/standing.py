"""Where a run stands, computed in one place for every presenter: the `runs` listing, the
terminal run, the Run tab's history, banner, progress bar and step tree."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.run import journal as J
from app.run.plan import step_sort_key

# how each status reads, in the step list, the run list and `runs`
STATUS_WORDS = {
    J.PENDING: "not run yet", J.RUNNING: "running", J.OK: "succeeded", J.DONE: "done by hand", J.SKIPPED: "skipped",
    J.FAILED: "failed", J.TIMEOUT: "timed out", J.CANCELLED: "stopped", J.LOST: "connection lost",
    J.INTERRUPTED: "interrupted", J.UNREACHABLE: "host unreachable", J.AUTH_FAILED: "login refused",
    J.HOST_KEY: "host key not trusted",
}


@dataclass(frozen=True)
class TaskLook:
    host: str
    manual: bool
    status: str
    message: str = ""
    seconds: float | None = None


@dataclass(frozen=True)
class StepLook:
    number: str
    status: str
    tasks: tuple[TaskLook, ...]


@dataclass(frozen=True)
class RunStanding:
    run_id: str
    complete: bool                  # the journal says so, or every selected step succeeded
    tasks_done: int                 # tasks that succeeded (ran, ticked off or skipped)
    tasks_failed: int               # tasks with a problem other than an interruption
    tasks_interrupted: int
    steps_total: int = 0            # 0 when the steps are not known (a listing without the bed)
    steps_succeeded: int = 0
    next_step: str | None = None    # the first step that did not succeed
    next_status: str = J.PENDING
    waiting_manual: bool = False    # that step is done by hand and not yet ticked off
    problems: tuple[TaskLook, ...] = ()     # the next step's hosts that did not succeed
    automated_left: int = 0
    average_task_seconds: float | None = None
    journal_problems: tuple[str, ...] = ()
    distrust: str | None = None
    bed_changed: bool = False
    running_steps: tuple[str, ...] = ()     # steps with a task running now, in step order
    failed_step: str | None = None          # the first step with a task that failed
    failed_status: str = J.FAILED           # how it failed (failed, timed out, stopped ...)
    interrupted_step: str | None = None     # the first step a dead driver left unfinished
    waiting_step: str | None = None         # the manual step the run waits at (also known from the journal)
    tasks_skipped: int = 0                  # of tasks_done, those skipped

    @property
    def failed(self) -> bool:
        return self.next_status in J.PROBLEMS

    def summary(self) -> str:
        """Where the run stands in a few words, as the run list and `runs` print it."""
        if self.complete:
            return "complete"
        if self.running_steps:
            more = len(self.running_steps) - 1
            return f"running step {self.running_steps[0]}" + (f" (+{more} more)" if more else "")
        done = f", {self.done_words()}" if self.tasks_done else ""
        if self.failed_step:
            return f"{STATUS_WORDS.get(self.failed_status, 'failed')} at step {self.failed_step}{done}"
        if self.interrupted_step:
            return f"interrupted at step {self.interrupted_step}{done}"
        if self.waiting_step:
            return f"waiting for manual step {self.waiting_step}{done}"
        if self.tasks_done:
            return self.done_words() + (f", next step {self.next_step}" if self.next_step else "")
        return "not started"

    def done_words(self) -> str:
        """'13 task(s) done, 92 skipped': a run whose first 92 steps were skipped read '105 task(s) done'."""
        ran = self.tasks_done - self.tasks_skipped
        return ", ".join(([f"{ran} task(s) done"] if ran else []) + ([f"{self.tasks_skipped} skipped"]
                                                                        if self.tasks_skipped else []))


def step_look(step, status_of_task: Callable) -> StepLook:
    tasks = tuple(TaskLook(t.host, t.manual, st.status, st.message, st.seconds)
                  for t in step.tasks for st in (status_of_task(t),))
    return StepLook(step.number, aggregate(step.manual, [t.status for t in tasks]), tasks)


def aggregate(manual: bool, statuses: Sequence[str]) -> str:
    """One status for a step from its tasks' statuses (the engine and every view use this rule)."""
    if any(s == J.RUNNING for s in statuses):
        return J.RUNNING
    problems = [s for s in statuses if s in J.PROBLEMS]
    if problems:
        return problems[0]
    if all(s in J.SUCCEEDED for s in statuses):
        if all(s == J.SKIPPED for s in statuses):
            return J.SKIPPED
        return J.DONE if manual else J.OK
    return J.PENDING


def _first_step(numbers) -> str | None:
    return min(numbers, key=step_sort_key, default=None)


def _waiting_step(records: list[dict]) -> str | None:
    """The manual step the journal says the run stopped at, unless a task moved on since."""
    waiting = None
    for r in records:
        if r.get("kind") == "run" and r.get("event") == "waiting":
            waiting = str(r.get("step"))
        elif r.get("kind") in ("start", "end", "mark"):
            waiting = None
    return waiting


def stand(run_id: str, records: list[dict], *, steps: Sequence | None = None,
          task_state: Callable | None = None, journal_problems: Sequence[str] = (),
          distrust: str | None = None, bed_changed: bool = False, completed: bool = False,
          driven: bool = False) -> RunStanding:
    """`records` from the journal; `steps` and `task_state` (a live engine's) when known.
    `driven`: some process drives the run now (its unfinished steps are running, not interrupted)."""
    states = (list(J.replay(records, driven=driven).values()) if task_state is None
              else [task_state(t) for s in steps for t in s.tasks])
    interrupted = sum(1 for s in states if s.status == J.INTERRUPTED)
    failed = sum(1 for s in states if s.status in J.PROBLEMS and s.status != J.INTERRUPTED)
    done = sum(1 for s in states if s.status in J.SUCCEEDED)
    complete = completed or any(r.get("kind") == "run" and r.get("event") == "complete" for r in records)
    running = tuple(sorted({s.step for s in states if s.status == J.RUNNING}, key=step_sort_key))
    failures = [s for s in states if s.status in J.PROBLEMS and s.status != J.INTERRUPTED]
    first_failure = min(failures, key=lambda s: step_sort_key(s.step), default=None)
    common = dict(run_id=run_id, tasks_done=done, tasks_skipped=sum(1 for s in states if s.status == J.SKIPPED),
                  tasks_failed=failed, tasks_interrupted=interrupted,
                  journal_problems=tuple(journal_problems), distrust=distrust, bed_changed=bed_changed,
                  running_steps=running,
                  failed_step=first_failure.step if first_failure else None,
                  failed_status=first_failure.status if first_failure else J.FAILED,
                  interrupted_step=_first_step(s.step for s in states if s.status == J.INTERRUPTED))
    if steps is None or task_state is None:
        return RunStanding(complete=complete, waiting_step=_waiting_step(records), **common)
    looks = [step_look(s, task_state) for s in steps]
    unfinished = [(s, look) for s, look in zip(steps, looks, strict=True) if look.status not in J.SUCCEEDED]
    nxt, look = unfinished[0] if unfinished else (None, None)
    durations = [t.seconds for lk in looks if lk.status in J.SUCCEEDED for t in lk.tasks
                 if not t.manual and t.seconds is not None]
    waiting = bool(nxt and nxt.manual and look.status == J.PENDING)
    return RunStanding(
        complete=complete or not unfinished, steps_total=len(steps), steps_succeeded=len(steps) - len(unfinished),
        next_step=nxt.number if nxt else None, next_status=look.status if look else J.PENDING,
        waiting_manual=waiting, waiting_step=nxt.number if waiting and nxt else None,
        problems=tuple(t for t in look.tasks if t.status in J.PROBLEMS) if look else (),
        automated_left=sum(1 for s, _ in unfinished if not s.manual),
        average_task_seconds=sum(durations) / len(durations) if durations else None, **common)


def estimate_left(steps: Sequence, task_state: Callable, now: float | None = None) -> tuple[float, int]:
    """(seconds, steps not estimated) the automated steps that have not succeeded still take.
    A step that states how long it runs (a load: its workload's duration) counts that, less
    what it has run so far; any other counts the mean time of the unstated steps that ran.
    Before any has run, such a step is not estimated: a guess from a 2 s install must not
    stand for a 90 s load."""
    import time
    from datetime import datetime
    now = time.time() if now is None else now
    ran = [st.seconds for s in steps if not getattr(s, "stated_seconds", None) for t in s.tasks if not t.manual
           for st in (task_state(t),) if st.status in J.SUCCEEDED and st.seconds is not None]
    typical = sum(ran) / len(ran) if ran else None
    left, unknown = 0.0, 0
    for s in steps:
        if s.manual:
            continue
        states = [task_state(t) for t in s.tasks if not t.manual]
        if all(st.status in J.SUCCEEDED for st in states):
            continue
        stated = getattr(s, "stated_seconds", None)
        if stated:
            running = 0.0
            for st in states:
                if st.status == J.RUNNING and st.started:
                    try:
                        running = max(running, now - datetime.fromisoformat(st.started).timestamp())
                    except ValueError:
                        pass
            left += max(stated - running, 0.0)
        elif typical is not None:
            left += typical
        else:
            unknown += 1
    return left, unknown
