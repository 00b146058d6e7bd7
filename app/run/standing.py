"""Where a run stands, computed in one place for every presenter: the `runs` listing, the
terminal run, the Run tab's history, banner, progress bar and step tree."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.run import journal as J


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

    @property
    def failed(self) -> bool:
        return self.next_status in J.PROBLEMS

    def summary(self) -> str:
        if self.complete:
            return "complete"
        if self.tasks_interrupted:
            return f"interrupted, {self.tasks_done} task(s) done"
        if self.tasks_failed:
            return f"{self.tasks_failed} failed, {self.tasks_done} done"
        return f"{self.tasks_done} task(s) done" if self.tasks_done else "not started"


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


def stand(run_id: str, records: list[dict], *, steps: Sequence | None = None,
          task_state: Callable | None = None, journal_problems: Sequence[str] = (),
          distrust: str | None = None, bed_changed: bool = False, completed: bool = False) -> RunStanding:
    """`records` from the journal; `steps` and `task_state` (a live engine's) when known."""
    states = J.replay(records).values() if task_state is None else [task_state(t) for s in steps for t in s.tasks]
    interrupted = sum(1 for s in states if s.status == J.INTERRUPTED)
    failed = sum(1 for s in states if s.status in J.PROBLEMS and s.status != J.INTERRUPTED)
    done = sum(1 for s in states if s.status in J.SUCCEEDED)
    complete = completed or any(r.get("kind") == "run" and r.get("event") == "complete" for r in records)
    common = dict(run_id=run_id, tasks_done=done, tasks_failed=failed, tasks_interrupted=interrupted,
                  journal_problems=tuple(journal_problems), distrust=distrust, bed_changed=bed_changed)
    if steps is None or task_state is None:
        return RunStanding(complete=complete, **common)
    looks = [step_look(s, task_state) for s in steps]
    unfinished = [(s, look) for s, look in zip(steps, looks, strict=True) if look.status not in J.SUCCEEDED]
    nxt, look = unfinished[0] if unfinished else (None, None)
    durations = [t.seconds for lk in looks if lk.status in J.SUCCEEDED for t in lk.tasks
                 if not t.manual and t.seconds is not None]
    return RunStanding(
        complete=complete or not unfinished, steps_total=len(steps), steps_succeeded=len(steps) - len(unfinished),
        next_step=nxt.number if nxt else None, next_status=look.status if look else J.PENDING,
        waiting_manual=bool(nxt and nxt.manual and look.status == J.PENDING),
        problems=tuple(t for t in look.tasks if t.status in J.PROBLEMS) if look else (),
        automated_left=sum(1 for s, _ in unfinished if not s.manual),
        average_task_seconds=sum(durations) / len(durations) if durations else None, **common)
