"""What a run engine does with a step's job that its host may still hold: the job a dead (or cut-off)
driver left, asked about on resume, adopted or stopped (the choice is app.run.leftover_choice's);
and an earlier attempt's start that reached the host late, after the resume looked there, found by
the next attempt's start (app.remote.jobs.Job.unseen_end) and taken or stopped, so that no step
runs twice.  A mixin of app.run.engine.RunEngine: it works on the engine's connections, journal
and task states.
"""
from __future__ import annotations

import dataclasses
import time

from app.remote import jobs
from app.remote.base import CommandResult, RemoteError
from app.run import journal as J
from app.run.journal import TaskState
from app.run.leftover_choice import MAY_BE_LEFT, STOPPED_BY_DRIVER
from app.run.plan import Task


class Leftovers:
    """Leftover jobs of a RunEngine's steps on their hosts."""

    def leftovers(self) -> list[Task]:
        """Tasks whose job may still exist on its host: interrupted (the driver died) or lost (the
        connection dropped) after their start was journalled, with its process or without (a
        driver that died between starting the job and journalling its pid), or ended by the
        driver's own stop (timeout, Stop) that a cut link may have kept from the host: the host
        is asked (app.run.leftover_choice says what then)."""
        return [t for s in self.steps for t in s.tasks
                if self.task_state(t).status in MAY_BE_LEFT
                and (self.task_state(t).pid or (t.shell in jobs.SHELLS and not t.manual))]

    def leftover_status(self, task: Task) -> tuple[str, int | None]:
        """What the host says about the task's job; raises RemoteError when it cannot be asked."""
        transport = self.connections.get(task.host)
        if not transport.supports_jobs:
            return jobs.GONE, None
        return transport.job_status(self._job(task))

    def adopt(self, task: Task) -> bool:
        """Follow the job a dead driver left on its host to its end and take its outcome as the
        step's, instead of starting the step again."""
        return self._execute(task, adopt=True)

    def stop_leftover(self, task: Task) -> tuple[str, int | None]:
        """Stop the job's whole process group unless it has ended meanwhile (decided on the host,
        app.remote.jobs.stop_script): jobs.STOPPED (the step then runs again like any interrupted
        one), jobs.ENDED (take it as it ended: adopt it) or jobs.GONE.  RemoteError when the host
        cannot be asked.  With the exit status when it ended, how long it had run when stopped."""
        status, number = self.connections.get(task.host).stop_job(self._job(task))
        self._stopped(task, status, number)
        return status, number

    def _stopped(self, task: Task, status: str, number: int | None) -> None:
        ended = self.task_state(task).status
        copy = (f"the copy that kept running after {'its timeout' if ended == J.TIMEOUT else 'the user stopped it'} "
                "(that stop never reached the host)" if ended in STOPPED_BY_DRIVER else "the copy a dead driver left")
        ran = f" after it had run {number} s there" if status == jobs.STOPPED and number is not None else ""
        message = (f"stopped {copy}{ran}" if status == jobs.STOPPED else
                   f"{copy} ended (exit status {number}) before it could be stopped: "
                   "taken as it ended" if status == jobs.ENDED else
                   f"{copy} was gone when it was to be stopped")
        self.journal.record("note", step=task.step, host=task.host, message=message)
        if status != jobs.ENDED:
            with self._states_lock:
                st = self.states.get(task.key)
                if st is not None:
                    st.pid = None
                    self._bump(task.step)

    def _past_the_late_copy(self, task: Task, previous: TaskState, sink, cancel,
                            ended_first: bool) -> tuple[CommandResult, jobs.Job | None]:
        """This start was refused for a copy of the step's `previous` attempt, whose end the driver
        never saw from the host (its timeout, Stop, death or lost link), because that attempt's
        start reached the host late, after the resume looked there (`ended_first`: and ran to its
        end before this start).  One that ended is taken as it ended (its output and status), never
        run a second time; one still running is stopped by its own job folder and the step started
        once more when the driver had ended it (timeout, Stop), else followed to its end and taken
        (stopping a step its driver never gave up on is a person's call, as on resume): (the
        outcome, the job taken or None)."""
        attempt = previous.attempts
        late = jobs.Job(self.info.id, task.step, task.host, attempt=attempt)
        try:
            transport = self.connections.get(task.host)
            ours = previous.status in STOPPED_BY_DRIVER
            status, number = transport.stop_job(late) if ours else transport.job_status(late)
        except RemoteError as exc:
            return CommandResult(exc.status, None, str(exc)), None
        taken = dataclasses.replace(late, becomes=attempt + 1)      # this attempt's outcome from now on
        said = (f"the start of attempt {attempt}, whose end this driver's side never saw, reached the host late "
                "(after the resume looked there) and ran there "
                + ("to its end before this attempt's start" if ended_first else "beside this attempt's start"))
        if status == jobs.RUNNING and not ours:
            self.journal.record("note", step=task.step, host=task.host, taken_attempt=attempt,
                                message=f"{said}; followed it to its end and took its outcome, not started again")
            self._notify("late_copy", task, "adopting", number, said)
            sink("info", f"[resume] {said}: following it to its end; not started again")
            return transport.follow_job(taken, on_output=sink, timeout=self._timeout(task.host), cancel=cancel), late
        if status == jobs.ENDED:
            self.journal.record("note", step=task.step, host=task.host, taken_attempt=attempt,
                                message=f"{said}; it ended (exit status {number}): taken as it ended, not run again")
            self._notify("late_copy", task, "ended", number, said)
            sink("info", f"[resume] {said}; it ended (exit status {number}): taken as it ended, not run again")
            return transport.follow_job(taken, on_output=sink, timeout=self._timeout(task.host), cancel=cancel), late
        self.journal.record("note", step=task.step, host=task.host,
                            message=f"{said}; {'stopped it' if status == jobs.STOPPED else 'it was gone'}, "
                                    "and started this attempt again")
        if status == jobs.STOPPED:
            self._notify("late_copy", task, "stopping", number, said)
        sink("info", f"[resume] {said}: {'stopped it' if status == jobs.STOPPED else 'it was gone'}; starting "
                     "this attempt again")
        return self._run_on_host(task, task.script, sink, cancel), None

    def _adopted_start(self, task: Task, state: TaskState, start: float, job: jobs.Job | None = None,
                       ran: dict[str, object] | None = None) -> float:
        """Where an adopted task's time is counted from: when its job (default: the task's) started
        on its host (its own clock: ended - started), else the start record of the attempt that
        started it, so that the journal holds the step's real duration, not how long this driver
        waited.  The job's own start and end go into `ran` (the end record's ran_from, ran_until):
        what ran on the host, which the metrics' coverage windows follow."""
        started = ended = None
        try:
            started, ended = self.connections.get(task.host).job_times(job or self._job(task))
        except (RemoteError, NotImplementedError):
            pass
        now = time.monotonic()
        if started is not None and ended is not None and ended >= started:
            from datetime import datetime
            state.started = datetime.fromtimestamp(started).astimezone().isoformat(timespec="milliseconds")
            if ran is not None:
                ran["ran_from"] = state.started
                ran["ran_until"] = datetime.fromtimestamp(ended).astimezone().isoformat(timespec="milliseconds")
            self._state_changed(task.step)
            return now - (ended - started)
        try:
            from datetime import datetime
            return now - max(0.0, time.time() - datetime.fromisoformat(state.started).timestamp())
        except ValueError:
            return start
