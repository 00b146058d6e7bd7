"""A step that timed out while its link was cut: the driver's stop never reached the host and the
step's job kept running there.  Resume asks the host and settles it without a question and
without a refusal: a copy still running is stopped (by the job folder of this run, step and
attempt) and the step runs again; a copy that ended meanwhile is taken as it ended, never run
twice.  Real jobs on this machine (local transport, app.remote.jobs); the cut link itself is
tests/test_run_remote.py's (sshd in a network namespace)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from datetime import datetime
from pathlib import Path

import pytest

from app.remote import jobs
from app.run import events as E
from app.run import journal as J
from app.run import leftover_choice as L
from app.run.session import RunSession
from tests.safety_beds import HOLD_S, long_step_bed, pid_alive, release
from tests.waiting import wait_for


@pytest.mark.parametrize(("journal", "host", "expected"), [
    (J.TIMEOUT, jobs.RUNNING, L.STOP), (J.CANCELLED, jobs.RUNNING, L.STOP),
    (J.INTERRUPTED, jobs.RUNNING, L.ASK), (J.LOST, jobs.RUNNING, L.ASK),
    (J.TIMEOUT, jobs.ENDED, L.ADOPT), (J.LOST, jobs.ENDED, L.ADOPT),
    (J.TIMEOUT, jobs.DEAD, L.RUN), (J.TIMEOUT, jobs.GONE, L.RUN), (J.INTERRUPTED, jobs.GONE, L.RUN)])
def test_what_a_resume_does_with_a_job_its_host_still_holds(journal, host, expected):
    assert L.choice(journal, host) == expected


def _timed_out_with_its_stop_cut_off(tmp_path: Path) -> tuple[Path, str, Path, int]:
    """A run whose one step timed out while its link was cut, as that driver leaves it: its journal
    says the attempt started (with its process) and timed out, and on the host the step's job
    still runs, its follower gone with the connection.  (bed, templates, runs dir, job's pid)"""
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    runs = tmp_path / "runs"
    first = RunSession.from_file(bed, templates=[templates], runs_dir=runs, timeout=0.5)
    assert first.start_new()
    pid = _time_out_with_the_stop_cut_off(first)
    first.close()
    assert pid_alive(pid), "the step's job should outlive the cut-off stop"
    return bed, templates, runs, pid


def _time_out_with_the_stop_cut_off(session: RunSession) -> int:
    """What the session's driver does and leaves when its one step times out while the link is cut:
    the job runs on, the journal says timeout.  The job's pid."""
    engine = session.engine
    task = session.steps[0].tasks[0]
    engine.journal.record("start", step=task.step, host=task.host, shell=task.shell, attempt=1)
    transport = engine.connections.get(task.host)
    job = jobs.Job(session.run_id, task.step, task.host, attempt=1)
    follower = subprocess.Popen(["sh", "-s"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True, text=True)
    follower.stdin.write(jobs.start_script(job, task.script, task.shell, transport.job_base, str(transport.workdir)))
    follower.stdin.close()
    mark = follower.stderr.readline()
    assert mark.startswith(jobs.PID_MARK), mark
    pid = int(mark[len(jobs.PID_MARK):])
    engine.journal.record("process", step=task.step, host=task.host, pid=pid)
    os.killpg(follower.pid, signal.SIGKILL)          # the connection is cut: its follower is gone
    follower.wait(timeout=10)
    message = "still running after 0.5 s; the stop did not reach the host"
    engine.journal.record("end", step=task.step, host=task.host, status=J.TIMEOUT, exit_code=None,
                          message=message, seconds=0.5, tail=[])
    engine._set(J.TaskState(task.step, task.host, J.TIMEOUT, None, message, attempts=1))
    return pid


def _resume(bed: Path, templates: str, runs: Path, events: list, questions: list) -> RunSession:
    session = RunSession.from_file(bed, templates=[templates], runs_dir=runs, timeout=60, on_event=events.append,
                                   ask=lambda q: questions.append(q))
    assert session.resume(next(runs.iterdir()).name)
    return session


def test_resume_stops_the_copy_a_timed_out_step_left_running_and_runs_the_step_again(tmp_path):
    bed, templates, runs, pid = _timed_out_with_its_stop_cut_off(tmp_path)
    events, questions = [], []
    session = _resume(bed, templates, runs, events, questions)
    try:
        assert session.settle_leftovers() is None
        assert not pid_alive(pid)                 # stopped before anything ran again
        release(tmp_path)
        standing = session.run(session.steps)
    finally:
        session.close()
    assert questions == []                         # the journal said it timed out: nobody is asked
    stopping = [e for e in events if isinstance(e, E.Leftover)]
    assert [e.what for e in stopping] == ["stopping"] and stopping[0].number == pid
    assert "timed out" in stopping[0].detail and "never reached the host" in stopping[0].detail
    # the first copy was stopped before its end, the second ran to its end: one copy at a time
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nbegin\nend\n"
    records = J.read_records(runs / session.run_id)[0]
    ends = [r["status"] for r in records if r["kind"] == "end"]
    assert ends == [J.TIMEOUT, J.OK]               # the timeout stays recorded, one result per attempt
    stop = next(r["message"] for r in records if r["kind"] == "note")
    assert stop.startswith("stopped the copy that kept running after its timeout"), stop
    assert re.search(r"after it had run \d+ s there$", stop), stop      # its real time on the host
    state = J.replay(records)[(session.steps[0].number, "h1")]
    assert state.status == J.OK and state.attempts == 2
    assert standing.failed_step is None


def test_a_copy_that_ended_after_its_timeout_is_taken_as_it_ended_not_run_again(tmp_path):
    bed, templates, runs, pid = _timed_out_with_its_stop_cut_off(tmp_path)
    release(tmp_path)
    wait_for(lambda: not pid_alive(pid), what="the left copy's end", seconds=30)
    events, questions = [], []
    session = _resume(bed, templates, runs, events, questions)
    try:
        standing = session.run(session.steps)
    finally:
        session.close()
    assert questions == []
    ended = [e for e in events if isinstance(e, E.Leftover)]
    assert [(e.what, e.number) for e in ended] == [("ended", 0)] and "timed out" in ended[0].detail
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"       # never a second copy
    records = J.read_records(runs / session.run_id)[0]
    state = J.replay(records)[(session.steps[0].number, "h1")]
    assert state.status == J.OK and state.exit_code == 0 and state.attempts == 1
    # the adopted end says what ran on the host (the metrics' coverage windows follow it): from the
    # job's own start, before the timeout was journalled, to its end after it
    timed_out, adopted = [r for r in records if r["kind"] == "end"]
    at = {k: datetime.fromisoformat(v) for k, v in (("from", adopted["ran_from"]), ("timeout", timed_out["time"]),
                                                   ("until", adopted["ran_until"]), ("end", adopted["time"]))}
    assert at["from"] < at["timeout"] < at["until"] <= at["end"]
    assert standing.failed_step is None


def test_a_start_that_reaches_the_host_after_a_later_attempt_began_starts_nothing(tmp_path):
    """A cut link can hold a start back until after its driver gave up and a resume ran the step
    again: that late start must not run the step a second time."""
    base, ran = str(tmp_path / "jobs"), tmp_path / "ran"

    def start(attempt: int) -> subprocess.CompletedProcess:
        text = jobs.start_script(jobs.Job("run-1", "1.1", "h1", attempt=attempt), f"echo {attempt} >> {ran}",
                                 "sh", base, str(tmp_path))
        return subprocess.run(["sh", "-s"], input=text, capture_output=True, text=True, timeout=30)

    assert start(2).returncode == 0
    late = start(1)
    assert late.returncode == 125 and "attempt 2 of this step already started here" in late.stderr
    assert ran.read_text() == "2\n"
    assert start(3).returncode == 0 and ran.read_text() == "2\n3\n"      # a later attempt still runs


def test_running_a_step_again_in_the_same_session_stops_the_copy_its_cut_off_timeout_left(tmp_path):
    """The Run page's Retry (the same driver, no resume in between) settles it the same way."""
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    events, questions = [], []
    session = RunSession.from_file(bed, templates=[templates], runs_dir=tmp_path / "runs", timeout=60,
                                   on_event=events.append, ask=lambda q: questions.append(q))
    try:
        assert session.start_new()
        session.run([])                           # this driver has settled the run once already
        pid = _time_out_with_the_stop_cut_off(session)
        assert pid_alive(pid)
        # the copy has begun its work (on a loaded machine a stop can come before its first line)
        wait_for(lambda: (tmp_path / "marks" / "h1.log").exists(), what="the copy's start", seconds=30)
        retry = threading.Thread(target=session.run, args=(session.steps[:1],))
        retry.start()
        wait_for(lambda: not pid_alive(pid), what="the left copy stopped", seconds=30)
        release(tmp_path)
        retry.join(timeout=60)
        assert not retry.is_alive()
        state = session.task_state(session.steps[0].tasks[0])
    finally:
        session.close()
    assert questions == [] and [e.what for e in events if isinstance(e, E.Leftover)] == ["stopping"]
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nbegin\nend\n"
    assert state.status == J.OK and state.attempts == 2



def _resume_beside_a_late_start(tmp_path: Path, late_copy_ends_first: bool, ends_before_the_start: bool = False,
                                driver_died: bool = False):
    """A run whose one attempt timed out while its start was held up in the cut link, resumed: the
    resume finds nothing on the host, and the held-up start lands just before the resume's own
    (with `late_copy_ends_first`, that late copy ends right after refusing it; with
    `ends_before_the_start`, it runs to its end before the resume's start reaches the host; with
    `driver_died`, the attempt did not time out: its driver died, and the journal says interrupted).
    (session's final state of the task, the journal's notes, the late copy's pid, the events, what the
    host says of the job of the task's last attempt)"""
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    runs = tmp_path / "runs"
    first = RunSession.from_file(bed, templates=[templates], runs_dir=runs, timeout=0.5)
    assert first.start_new()
    task = first.steps[0].tasks[0]
    first.engine.journal.record("start", step=task.step, host=task.host, shell=task.shell, attempt=1)
    if not driver_died:
        first.engine.journal.record("end", step=task.step, host=task.host, status=J.TIMEOUT, exit_code=None,
                                    message="still running after 0.5 s; the stop did not reach the host",
                                    seconds=0.5, tail=[])
    run_id = first.run_id
    first.close()
    questions: list = []
    events: list = []
    session = _resume(bed, templates, runs, events, questions)
    transport = session.engine.connections.get(task.host)
    real_run, late = transport.run, []

    def held_up_start_lands_first(script, **kw):
        if kw.get("job") is None or late:
            return real_run(script, **kw)
        job = jobs.Job(run_id, task.step, task.host, attempt=1)
        follower = subprocess.Popen(["sh", "-s"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True, text=True)
        follower.stdin.write(jobs.start_script(job, task.script, task.shell, transport.job_base,
                                               str(transport.workdir)))
        follower.stdin.close()
        late.append(int(follower.stderr.readline()[len(jobs.PID_MARK):]))
        os.killpg(follower.pid, signal.SIGKILL)     # its driver gave up on it long ago
        follower.wait(timeout=10)
        if ends_before_the_start:
            release(tmp_path)
            wait_for(lambda: not pid_alive(late[0]), what="the late copy's end", seconds=30)
        refused = real_run(script, **kw)
        if late_copy_ends_first and not ends_before_the_start:
            release(tmp_path)
            wait_for(lambda: not pid_alive(late[0]), what="the late copy's end", seconds=30)
        return refused

    transport.run = held_up_start_lands_first
    try:
        assert session.settle_leftovers() is None          # the host held nothing of it yet
        running = threading.Thread(target=session.run, args=(session.steps,))
        running.start()
        if driver_died and not (late_copy_ends_first or ends_before_the_start):
            wait_for(lambda: any(isinstance(e, E.Leftover) and e.what == "adopting" for e in events),
                     what="the late copy adopted", seconds=30)
            release(tmp_path)
        elif not (late_copy_ends_first or ends_before_the_start):
            wait_for(lambda: late and not pid_alive(late[0]), what="the late copy stopped", seconds=30)
            wait_for(lambda: (tmp_path / "marks" / "h1.log").read_text().count("begin") == 2,
                     what="the step's own start", seconds=30)
            release(tmp_path)
        running.join(timeout=60)
        assert not running.is_alive()
        state = session.task_state(task)
        # what a resume after this driver's death would ask about: this attempt's job
        asked = transport.job_status(jobs.Job(run_id, task.step, task.host, attempt=state.attempts))
    finally:
        release(tmp_path)
        session.close()
    assert questions == []
    notes = [r["message"] for r in J.read_records(runs / run_id)[0] if r["kind"] == "note"]
    return state, notes, late[0], events, asked


def test_a_timed_out_attempts_start_that_lands_after_the_resume_looked_is_stopped_and_the_step_runs_once(tmp_path):
    state, notes, _, _, _ = _resume_beside_a_late_start(tmp_path, late_copy_ends_first=False)
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nbegin\nend\n"     # one copy at a time
    assert state.status == J.OK and state.attempts == 2
    assert any("reached the host late" in n and "stopped it" in n for n in notes), notes


def test_a_late_copy_that_ended_before_it_could_be_stopped_is_taken_as_it_ended(tmp_path):
    state, notes, _, _, asked = _resume_beside_a_late_start(tmp_path, late_copy_ends_first=True)
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"            # never run twice
    assert state.status == J.OK and state.exit_code == 0
    assert any("reached the host late" in n and "taken as it ended" in n for n in notes), notes
    assert asked == (jobs.ENDED, 0)       # the copy taken is this attempt's: a later resume finds it


def test_a_late_start_that_ran_to_its_end_before_the_resumes_own_start_is_taken_not_run_again(tmp_path):
    """The held-up start of the timed-out attempt lands after the resume looked and runs to its end
    before the resume's start reaches the host: that start finds the ended job of the earlier
    attempt and starts nothing; its output and status are the step's, journalled as taken."""
    state, notes, _, events, asked = _resume_beside_a_late_start(tmp_path, late_copy_ends_first=False,
                                                                 ends_before_the_start=True)
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"            # never run twice
    assert state.status == J.OK and state.exit_code == 0
    assert any("reached the host late" in n and "to its end before this attempt's start" in n
               and "not run again" in n for n in notes), notes
    records = J.read_records(next((tmp_path / "runs").iterdir()))[0]
    end = [r for r in records if r["kind"] == "end"][-1]
    assert end["taken_attempt"] == 1 and end["tail"][-1] == "done"          # attempt 1's output and status
    said = [e for e in events if isinstance(e, E.Leftover)]
    assert [(e.what, e.number) for e in said] == [("ended", 0)] and "reached the host late" in said[0].detail
    assert asked == (jobs.ENDED, 0)       # the copy taken is this attempt's: a later resume finds it


def test_a_late_start_of_an_attempt_whose_driver_died_is_followed_to_its_end_and_taken_not_refused(tmp_path):
    """The driver died while its start was held up in a cut link; the resume found nothing and
    started the step, and the held-up start landed first.  A refusal would fail the step while its
    copy runs on unwatched (and a later resume, seeing a failed step, would run it a second time):
    the copy is followed to its end instead and its outcome taken (stopping it is a person's call)."""
    state, notes, late, events, asked = _resume_beside_a_late_start(tmp_path, late_copy_ends_first=False,
                                                                    driver_died=True)
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"            # never run twice
    assert state.status == J.OK and state.exit_code == 0
    assert any("reached the host late" in n and "followed it to its end" in n for n in notes), notes
    said = [e for e in events if isinstance(e, E.Leftover)]
    assert [(e.what, e.number) for e in said] == [("adopting", late)], said
    assert asked == (jobs.ENDED, 0)       # the copy taken is this attempt's: a later resume finds it
