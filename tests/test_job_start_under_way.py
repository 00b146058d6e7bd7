"""A step's start that is under way on its host (its folder made, its job's pid not yet there) is
seen as a start, not as an empty folder: a look at the host waits for the job's pid, and a second
start of the step (a resume's, while a killed driver's start went on) finds the first's job
instead of starting the step beside it.  Real sh and real jobs on this machine; the first start is
held in that instant by a slow setsid (the start launches the job's session with it)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from app.remote import jobs
from tests.waiting import wait_for


def _held_start(tmp_path: Path, job: jobs.Job, script: str) -> subprocess.Popen:
    slow = tmp_path / "bin"
    slow.mkdir(exist_ok=True)
    (slow / "setsid").write_text(f"#!/bin/sh\nsleep 0.6\nexec {shutil.which('setsid')} \"$@\"\n")
    (slow / "setsid").chmod(0o755)
    start = jobs.start_script(job, script, "sh", str(tmp_path / "jobs"), str(tmp_path))
    proc = subprocess.Popen(["sh", "-c", start], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PATH": f"{slow}:{os.environ['PATH']}"})
    folder = tmp_path / "jobs" / job.name
    wait_for(lambda: (folder / "starting").exists(), seconds=30, what="the start under way")
    assert not (folder / "pid").exists()
    return proc


def test_the_hosts_status_of_a_start_under_way_is_its_job_not_a_dead_one(tmp_path):
    job = jobs.Job("run-1", "1.1", "h1", keep_files=True, attempt=1)
    marks = tmp_path / "marks"
    first = _held_start(tmp_path, job, f"echo ran >> {marks}; sleep 0.3")
    said = subprocess.run(["sh", "-c", jobs.status_script(job, str(tmp_path / "jobs"))],
                          capture_output=True, text=True, timeout=30).stdout
    assert jobs.parse_status(said)[0] in (jobs.RUNNING, jobs.ENDED), said
    first.communicate(timeout=30)
    assert marks.read_text().split() == ["ran"]


def test_a_second_start_of_a_step_while_the_first_is_under_way_does_not_run_it_again(tmp_path):
    job = jobs.Job("run-1", "1.1", "h1", keep_files=True, attempt=1)
    marks = tmp_path / "marks"
    script = f"echo ran >> {marks}; sleep 0.5"
    first = _held_start(tmp_path, job, script)
    again = jobs.Job("run-1", "1.1", "h1", keep_files=True, attempt=2)
    second = subprocess.run(["sh", "-c", jobs.start_script(again, script, "sh", str(tmp_path / "jobs"), str(tmp_path))],
                            capture_output=True, text=True, timeout=60)
    first.communicate(timeout=30)
    assert marks.read_text().split() == ["ran"], (second.returncode, second.stderr)


def test_starts_of_a_new_step_released_at_the_same_instant_run_it_once(tmp_path):
    """Two or more drivers that start the same step on a host where its folder does not exist yet
    (a resume racing a start that a killed driver's link still carries): each makes the folder, one
    only owns it (its mark is written first) and runs the step; the others wait for that start and
    find its job running, and never run the step beside it."""
    gate = tmp_path / "gate"
    for round_ in range(6):
        job = jobs.Job("run-1", f"1.{round_}", "h1", keep_files=True, attempt=1)
        marks = tmp_path / f"marks{round_}"
        start = jobs.start_script(job, f"echo ran >> {marks}; sleep 0.4", "sh", str(tmp_path / "jobs"), str(tmp_path))
        # every start spins at the gate, then all look for the folder at the same instant
        held = f'while [ ! -e {gate} ]; do :; done\n' + start
        starts = [subprocess.Popen(["sh", "-c", held], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for _ in range(5)]
        gate.touch()
        ended = [(p.wait(timeout=60), p.stderr.read()) for p in starts]
        gate.unlink()
        assert marks.read_text().split() == ["ran"], ended
        assert sorted(code for code, _ in ended) == [0, 125, 125, 125, 125], ended
        assert all(jobs.ALREADY_RUNNING in said for code, said in ended if code == 125), ended


def test_a_retried_steps_late_start_and_the_resumes_start_released_at_once_run_it_once(tmp_path):
    """The step's folder holds its earlier attempt, ended; the next attempt's start, held up in a cut
    link, reaches the host at the instant the resume's start of the attempt after it does.  Each
    finds the earlier job ended and may clear it and start the step: one only goes on at a time, and
    the other finds that start's job (refused, as a late copy the engine takes or stops), never
    running the step beside it, however short the step."""
    gate, base = tmp_path / "gate", str(tmp_path / "jobs")
    for round_ in range(4):
        step = f"1.{round_}"
        ended = jobs.Job("run-1", step, "h1", keep_files=True, attempt=1)
        first = subprocess.run(["sh", "-c", jobs.start_script(ended, "exit 3", "sh", base, str(tmp_path))],
                               capture_output=True, text=True, timeout=30)
        assert first.returncode == 3, first.stderr
        marks = tmp_path / f"marks{round_}"
        late, resumed = jobs.Job("run-1", step, "h1", attempt=2), jobs.Job("run-1", step, "h1", attempt=3, unseen_end=2)
        starts = [subprocess.Popen(["sh", "-c", f"while [ ! -e {gate} ]; do :; done\n"
                                    + jobs.start_script(job, f"echo ran >> {marks}", "sh", base, str(tmp_path))],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for job in (late, resumed)]
        gate.touch()
        said = [(p.wait(timeout=60), p.stderr.read()) for p in starts]
        gate.unlink()
        assert marks.read_text().split() == ["ran"], said
        refused = [text for code, text in said if code == 125]
        assert len(refused) == 1 and any(why in refused[0] for why in (
            jobs.ALREADY_RUNNING, jobs.EARLIER_ENDED, "came too late")), said
