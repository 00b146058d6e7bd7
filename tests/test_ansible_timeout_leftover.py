"""`run --engine ansible` resumed after a step timed out while its link was cut: the driver's stop
never reached the host and the step's job went on there.  The resume settles it as the built-in
engine does, through the same choice (app.run.leftover_choice, RunSession.settle_leftovers): a
copy that ended meanwhile is taken as it ended, never run a second time; one still running is
stopped without a question before the step runs again.  Real ansible-playbook on a local host,
real jobs (app.remote.jobs)."""
from __future__ import annotations

import os
import signal
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from app.remote import jobs
from app.run import events as E
from app.run import journal as J
from app.run.session import RunSession
from bench.sandbox_hosts import host_python
from tests.safety_beds import HOLD_S, long_step_bed, pid_alive, release
from tests.test_run_timeout_leftover import _time_out_with_the_stop_cut_off
from tests.waiting import wait_for

EXTRA = [f"ansible_python_interpreter={host_python()}"]


@pytest.fixture(autouse=True)
def _ansible_here():
    from app.ansible.engine import missing
    if missing():
        pytest.skip(missing())


def _session(bed: Path, templates: str, runs: Path, **options) -> RunSession:
    return RunSession.from_file(bed, templates=[templates], runs_dir=runs, engine="ansible", extra_vars=EXTRA,
                                **options)


def _timed_out_in_ansible_with_its_stop_cut_off(tmp_path: Path) -> tuple[Path, str, Path, int]:
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    runs = tmp_path / "runs"
    first = _session(bed, templates, runs, timeout=0.5)
    assert first.start_new() and first.engine_in_use == "ansible"
    pid = _time_out_with_the_stop_cut_off(first)
    first.close()
    assert pid_alive(pid), "the step's job should outlive the cut-off stop"
    return bed, templates, runs, pid


def _resume(bed: Path, templates: str, runs: Path) -> tuple[RunSession, list, list]:
    events: list = []
    questions: list = []
    session = _session(bed, templates, runs, timeout=60, on_event=events.append, ask=questions.append)
    assert session.resume(next(runs.iterdir()).name) and session.engine_in_use == "ansible"
    return session, events, questions


def test_an_ansible_resume_takes_a_timed_out_steps_copy_that_ended_on_its_host_and_never_runs_it_again(tmp_path):
    bed, templates, runs, pid = _timed_out_in_ansible_with_its_stop_cut_off(tmp_path)
    release(tmp_path)
    wait_for(lambda: not pid_alive(pid), what="the left copy's end", seconds=30)
    session, events, questions = _resume(bed, templates, runs)
    try:
        standing = session.run(session.steps)
    finally:
        session.close()
    assert questions == []
    said = [e for e in events if isinstance(e, E.Leftover)]
    assert [(e.what, e.number) for e in said] == [("ended", 0)] and "timed out" in said[0].detail
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"       # never a second copy
    records = J.read_records(runs / session.run_id)[0]
    assert [r.get("adopted", False) for r in records if r["kind"] == "start"] == [False, True]
    # the adopted end says what ran on the host (the metrics' coverage windows follow it)
    timed_out, taken = [r for r in records if r["kind"] == "end"]
    at = {k: datetime.fromisoformat(v) for k, v in (("from", taken["ran_from"]), ("timeout", timed_out["time"]),
                                                   ("until", taken["ran_until"]))}
    assert at["from"] < at["timeout"] < at["until"]
    state = J.replay(records)[(session.steps[0].number, "h1")]
    assert state.status == J.OK and state.exit_code == 0 and state.attempts == 1
    assert standing.failed_step is None


def _start_on_the_host(session: RunSession, attempt: int) -> int:
    """What a pass's start of the step's `attempt` does on the host, landed here directly: the job
    starts (its follower, Ansible's task, is gone with its driver).  The job's pid."""
    engine = session.engine
    task = session.steps[0].tasks[0]
    base, workdir = engine._place(task.host)
    job = jobs.Job(session.run_id, task.step, task.host, attempt=attempt, keep_files=True)
    follower = subprocess.Popen(["sh", "-s"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True, text=True)
    follower.stdin.write(jobs.start_script(job, task.script, task.shell, base, workdir or ""))
    follower.stdin.close()
    pid = int(follower.stderr.readline()[len(jobs.PID_MARK):])
    os.killpg(follower.pid, signal.SIGKILL)
    follower.wait(timeout=10)
    return pid


def _ran_once(tmp_path: Path, session: RunSession, events: list) -> None:
    records = J.read_records(tmp_path / "runs" / session.run_id)[0]
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"       # never a second copy
    state = J.replay(records)[(session.steps[0].number, "h1")]
    assert state.status == J.OK and state.exit_code == 0
    assert [r for r in records if r["kind"] == "end"][-1]["taken_attempt"] >= 1
    # the copy followed is this attempt's now: a resume after this driver's death would find it
    from app.remote.local import LocalTransport
    job = jobs.Job(session.run_id, state.step, "h1", attempt=state.attempts)
    assert LocalTransport("h1").job_status(job) == (jobs.ENDED, 0)
    said = [e for e in events if isinstance(e, E.Leftover)]
    assert [(e.what, e.number) for e in said] == [("ended", 0)], said


def test_a_step_ansible_started_but_its_dead_driver_never_journalled_is_followed_on_resume_not_run_again(tmp_path):
    """The driver died between Ansible starting the step's job and the start's event reaching the
    journal: the resume's pass, starting that same attempt, finds it and follows it to its end."""
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    runs = tmp_path / "runs"
    first = _session(bed, templates, runs, timeout=60)
    assert first.start_new()
    pid = _start_on_the_host(first, attempt=1)
    first.close()
    release(tmp_path)
    wait_for(lambda: not pid_alive(pid), what="the step's end", seconds=30)
    session, events, questions = _resume(bed, templates, runs)
    try:
        session.run(session.steps)
    finally:
        session.close()
    assert questions == []
    _ran_once(tmp_path, session, events)


def test_a_timed_out_steps_start_that_lands_after_the_ansible_resume_looked_is_taken_not_run_again(tmp_path):
    """The timed-out attempt's start, held up in a cut link, lands after the resume's status pass
    found nothing and runs to its end before the resume's own pass starts the step.  (That status
    pass, one ansible-playbook run which here would find nothing, is left out: the first test of
    this file shows a resume asks about a timed-out step; what matters is the start that finds the
    copy.)"""
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    runs = tmp_path / "runs"
    first = _session(bed, templates, runs, timeout=0.5)
    assert first.start_new()
    task = first.steps[0].tasks[0]
    first.engine.journal.record("start", step=task.step, host=task.host, shell=task.shell, attempt=1)
    first.engine.journal.record("end", step=task.step, host=task.host, status=J.TIMEOUT, exit_code=None,
                                message="still running after 0.5 s; the stop did not reach the host",
                                seconds=0.5, tail=[])
    first.close()
    session, events, questions = _resume(bed, templates, runs)
    try:
        pid = _start_on_the_host(session, attempt=1)
        release(tmp_path)
        wait_for(lambda: not pid_alive(pid), what="the late copy's end", seconds=30)
        session.engine.run_steps(session.steps)
    finally:
        session.close()
    assert questions == []
    _ran_once(tmp_path, session, events)


def test_a_chain_follows_a_copy_of_its_step_that_an_earlier_attempt_left_ended_on_the_host_not_run_again(tmp_path):
    """A chain (a host's run of steps as one Ansible task, app.ansible.chains) whose first step's
    earlier attempt timed out and whose held-up start then ran to its end on the host: the chain
    takes that copy's output and status for the step and goes on with the next, running none twice.
    A real sh, as Ansible's `raw` runs it."""
    from app.ansible import chains
    marks, base = tmp_path / "marks", str(tmp_path / "jobs")
    first = "echo first; echo 1.1 >> " + str(marks)
    late = jobs.start_script(jobs.Job("run-1", "1.1", "h1", attempt=1, keep_files=True), first, "bash", base,
                             str(tmp_path))
    assert subprocess.run(["sh", "-c", late], capture_output=True, timeout=30).returncode == 0
    members = [chains.Member("1.1", 2, first, "bash", 60, unseen_end=1, follow_found=True),
               chains.Member("1.2", 1, "echo 1.2 >> " + str(marks), "bash", 60, follow_found=True)]
    chain = subprocess.run(["sh", "-c", chains.chain_script("run-1", "h1", members, base, str(tmp_path))],
                           capture_output=True, text=True, timeout=60)
    assert chain.returncode == 0, chain.stderr
    assert marks.read_text().split() == ["1.1", "1.2"]                 # 1.1 ran once, then 1.2
    reports = chains.parse(chain.stdout, chain.stderr)
    assert reports["1.1"].exit_code == 0 and ("stdout", "first") in reports["1.1"].lines
    assert ("stderr", f"{jobs.FOLLOWED}1") in reports["1.1"].lines       # the engine journals it as taken
