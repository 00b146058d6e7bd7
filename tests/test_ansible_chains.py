"""A host's consecutive steps as one Ansible task (app.ansible.chains), run by a real sh as
Ansible's `raw` runs it on a host: each step is still its own job, journalled from its own marks;
a failure or a step's own timeout ends the chain at that step; a chain killed (its driver died)
starts no further step, and its host then says which steps ran, so a resume runs none twice."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from app.ansible import chains
from app.remote import jobs
from tests.waiting import wait_for

RUN, HOST = "run-1", "h1"


def _members(marks: Path, scripts: list[str], timeout_s: int = 60) -> list[chains.Member]:
    return [chains.Member(f"1.{n}", 1, f"{script}\necho 1.{n} >> {marks}", "bash", timeout_s)
            for n, script in enumerate(scripts, 1)]


def _run(tmp_path: Path, members: list[chains.Member], **popen) -> subprocess.Popen:
    script = chains.chain_script(RUN, HOST, members, str(tmp_path / "jobs"), str(tmp_path))
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **popen)


def _host_says(tmp_path: Path, member: chains.Member) -> tuple[str, int | None]:
    out = subprocess.run(["sh", "-c", chains.status_script(RUN, HOST, member, str(tmp_path / "jobs"))],
                         capture_output=True, text=True, timeout=30).stdout
    return jobs.parse_status(out)


def _marks(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_a_chain_runs_each_step_as_its_own_job_and_reports_each_steps_output_and_end_apart(tmp_path):
    marks = tmp_path / "marks"
    chain = _run(tmp_path, _members(marks, ["echo one; echo e-one >&2", "sleep 0.3; echo two", "echo three"]))
    out, err = chain.communicate(timeout=60)
    assert chain.returncode == 0, err
    reports = chains.parse(out, err)
    assert list(reports) == ["1.1", "1.2", "1.3"] and _marks(marks) == ["1.1", "1.2", "1.3"]
    assert reports["1.1"].lines == [("stdout", "one"), ("stderr", "e-one")]
    assert reports["1.2"].lines == [("stdout", "two")] and reports["1.3"].lines == [("stdout", "three")]
    assert all(r.ended and r.exit_code == 0 and not r.timed_out for r in reports.values())
    # each step's own time on its host, not the chain's
    two = reports["1.2"]
    assert 0.25 <= two.ended_at - two.started_at < 5
    assert reports["1.1"].ended_at <= two.started_at and two.ended_at <= reports["1.3"].started_at
    # every step left its status where a resume asks for it
    assert [_host_says(tmp_path, m) for m in _members(marks, ["", "", ""])] == [(jobs.ENDED, 0)] * 3


def test_a_failed_step_ends_the_chain_there_and_no_later_step_starts(tmp_path):
    marks = tmp_path / "marks"
    members = _members(marks, ["true", "exit 3", "true"])
    chain = _run(tmp_path, members)
    out, err = chain.communicate(timeout=60)
    reports = chains.parse(out, err)
    assert chain.returncode == 3
    assert list(reports) == ["1.1", "1.2"] and reports["1.2"].exit_code == 3 and not reports["1.2"].timed_out
    assert _marks(marks) == ["1.1"]
    assert _host_says(tmp_path, members[2]) == (jobs.GONE, None)


def test_a_killed_chain_starts_no_further_step_and_its_host_says_which_steps_ran(tmp_path):
    """What a resume relies on after a driver died in the middle of a chain (app.ansible.chain_runs):
    the chain is killed first, then the host is asked about each step the chain may have started."""
    marks = tmp_path / "marks"
    release = tmp_path / "release"
    members = _members(marks, ["true", f"while [ ! -e {release} ]; do sleep 0.05; done", "true"])
    chain = _run(tmp_path, members)
    try:
        wait_for(lambda: _host_says(tmp_path, members[1])[0] == jobs.RUNNING, seconds=30, what="step 1.2 running")
        subprocess.run(["sh", "-c", chains.kill_script(RUN, HOST, str(tmp_path / "jobs"))], timeout=30, check=True)
        assert chain.wait(timeout=10) != 0
        assert _host_says(tmp_path, members[0]) == (jobs.ENDED, 0)
        # the step the chain was in goes on in its own session (a resume adopts or stops it) ...
        assert _host_says(tmp_path, members[1])[0] == jobs.RUNNING
        release.write_text("")
        wait_for(lambda: _host_says(tmp_path, members[1]) == (jobs.ENDED, 0), seconds=30, what="step 1.2 ended")
        time.sleep(0.5)
        # ... and nothing started the next one: the resume runs it, once
        assert _marks(marks) == ["1.1", "1.2"]
        assert _host_says(tmp_path, members[2]) == (jobs.GONE, None)
    finally:
        if chain.poll() is None:
            os.killpg(chain.pid, signal.SIGKILL)
        release.write_text("")


def test_a_second_chain_of_the_run_is_refused_while_one_runs_on_the_host(tmp_path):
    marks = tmp_path / "marks"
    release = tmp_path / "release"
    first = _run(tmp_path, _members(marks, [f"while [ ! -e {release} ]; do sleep 0.05; done"]))
    try:
        wait_for(lambda: (tmp_path / "jobs" / RUN / f"chain@{HOST}" / "pid").exists(), seconds=30,
                 what="the first chain running")
        second = _run(tmp_path, [chains.Member("2.1", 1, f"echo 2.1 >> {marks}", "bash", 60)])
        _, err = second.communicate(timeout=30)
        assert second.returncode == 125 and "already running" in err
    finally:
        release.write_text("")
        first.communicate(timeout=30)
    assert _marks(marks) == ["1.1"]


# ---------------------------------------------------------------- the engine's side (app.ansible.chain_runs)

def _chain_engine(tmp_path: Path, scripts: dict[tuple[str, str], str], timeout: float, info=None):
    from tests.test_ansible_passes import _engine, _plan
    marks = tmp_path / "marks"
    marks.mkdir(exist_ok=True)
    steps = [s for s in _plan(marks, scripts, (3, 0, 0)) if s.target == "h1"]
    engine, info = _engine(tmp_path, steps, info)
    engine.timeout = timeout
    return engine, info, steps, marks


def _start_chain(engine, steps):
    """What a pass does with h1's three steps before and as Ansible starts its task."""
    from app.ansible.engine import _Progress
    engine._chains, engine._shared_tasks = {}, {}
    lanes = engine._chain_lanes({"h1": [(s, s.tasks[0]) for s in steps]})
    assert [step.number for step, _ in lanes["h1"]] == ["1.1"]      # one task for the three steps
    chain = engine._chains[steps[0].tasks[0].key]
    progress = {s.tasks[0].key: _Progress(s.tasks[0], 1) for s in steps}
    engine._begin(steps[0].tasks[0], progress[steps[0].tasks[0].key])     # Ansible's runner_on_start
    script = engine._chain_script(steps[0].tasks[0])
    return chain, progress, script


def test_a_timeout_in_a_chain_is_journalled_on_its_step_once_and_nothing_after_it_starts(tmp_path):
    from app.run import journal as J
    pid_file = tmp_path / "sleeper"
    engine, info, steps, marks = _chain_engine(tmp_path, {("1.2", "h1"): f"echo $$ > {pid_file}; sleep 60"}, timeout=1)
    try:
        chain, progress, script = _start_chain(engine, steps)
        t0, began = time.monotonic(), time.time()
        ran = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
        assert time.monotonic() - t0 < 15        # the step's own second, not its sleep's minute
        engine._chain_event(chain, "runner_on_failed", {"res": {"stdout": ran.stdout, "stderr": ran.stderr,
                                                                "rc": ran.returncode}}, progress)
    finally:
        engine.close()
    records = J.read_records(info.dir)[0]
    states = J.replay(records)
    assert states[("1.1", "h1")].status == J.OK
    assert states[("1.2", "h1")].status == J.TIMEOUT and "timed out after 1 s" in states[("1.2", "h1")].message
    assert ("1.3", "h1") not in states and _marks(marks / "h1") == ["1.1"]
    assert [(r["kind"], r.get("step")) for r in records if r["kind"] in ("start", "end")] == [
        ("start", "1.1"), ("end", "1.1"), ("start", "1.2"), ("end", "1.2")]
    # the chain was journalled before it ran, and its end: a resume has nothing of it to ask about
    assert [r["steps"] for r in records if r["kind"] == "chain"] == [[["1.1", 1], ["1.2", 1], ["1.3", 1]]]
    assert sum(r["kind"] == "chain-end" for r in records) == 1
    # the step that ended says when it ran on the host, as a pass's step does
    ran = [datetime.fromisoformat(r[k]).timestamp() for r in records if r["kind"] == "end" and r["step"] == "1.1"
           for k in ("ran_from", "ran_until")]
    assert began <= ran[0] <= ran[1] <= time.time()
    # the step itself was stopped on its host, not only the chain's wait for it
    sleeper = int(pid_file.read_text())
    wait_for(lambda: not Path(f"/proc/{sleeper}").exists(), seconds=10, what="the timed-out step stopped")


def test_a_resume_after_a_driver_died_in_a_chain_asks_about_every_step_the_chain_may_have_started(tmp_path):
    """The driver died while the chain ran 1.2, whose start no journal record holds (Ansible hands
    the chain's output over when it ends): the resume must ask the host about 1.2 and 1.3 too,
    or it would start 1.2 beside the copy still running, and 1.3 maybe a second time."""
    from app.run import journal as J
    engine, info, steps, marks = _chain_engine(
        tmp_path, {("1.2", "h1"): f"while [ ! -e {tmp_path / 'release'} ]; do sleep 0.05; done"}, timeout=60)
    try:
        chain, _, script = _start_chain(engine, steps)
        running = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        member = chain.members[1]
        base = engine._place("h1")[0]
        asked = chains.Member(member.step, member.attempt, "", "bash", 0)
        say = ["sh", "-c", chains.status_script(info.id, "h1", asked, base)]
        try:
            wait_for(lambda: subprocess.run(say, capture_output=True, text=True).stdout.startswith(jobs.RUNNING),
                     seconds=90, what="1.2 running in the chain")
        except pytest.fail.Exception:
            os.killpg(running.pid, signal.SIGKILL)
            out, err = running.communicate(timeout=10)
            said = subprocess.run(say, capture_output=True, text=True).stdout
            pytest.fail(f"1.2 never ran in the chain (the host says {said!r}); the chain's output:\n{out}\n{err}")
        os.killpg(running.pid, signal.SIGKILL)      # the driver and its connection die: so does the chain
        running.wait(10)
    finally:
        engine.close()
    resumed, _, _, _ = _chain_engine(tmp_path, {}, timeout=60, info=info)
    try:
        left = [t.key for t in resumed.leftovers()]
        assert left == [("1.1", "h1"), ("1.2", "h1"), ("1.3", "h1")], (left, J.read_records(info.dir)[0])
        assert resumed._resume_lanes(resumed.leftovers())["h1"][0]["name"] == "Stop the chain of steps"
    finally:
        (tmp_path / "release").write_text("")
        resumed.close()


def _look_while_its_start_is_held(tmp_path, tools: dict[str, str], before_its_pid: bool = False) -> None:
    """A one-step chain whose start is held by slow `tools` (wrappers first in PATH: name -> script)
    while the host is asked about the step: the look finds it started (never removes its folder as a
    start that never happened), and the step runs once.  `before_its_pid`: the look comes before the
    job's pid exists."""
    slow = tmp_path / "bin"
    slow.mkdir()
    for tool, text in tools.items():
        (slow / tool).write_text(text)
        (slow / tool).chmod(0o755)
    marks = tmp_path / "marks"
    members = _members(marks, ["true"])
    chain = _run(tmp_path, members, env={**os.environ, "PATH": f"{slow}:{os.environ['PATH']}"})
    try:
        folder = tmp_path / "jobs" / RUN / f"1.1@{HOST}"
        wait_for(folder.exists, seconds=30, what="the step's folder made by its start")
        if before_its_pid:
            assert not (folder / "pid").exists()
        assert _host_says(tmp_path, members[0])[0] in (jobs.RUNNING, jobs.ENDED)
        out, err = chain.communicate(timeout=30)
        assert chain.returncode == 0, err
        assert _marks(marks) == ["1.1"] and chains.parse(out, err)["1.1"].exit_code == 0
    finally:
        if chain.poll() is None:
            os.killpg(chain.pid, signal.SIGKILL)


def test_a_look_at_a_step_whose_start_is_under_way_waits_for_it_instead_of_removing_its_folder(tmp_path):
    """A step's folder exists before its job's pid does: a look in that instant took the start for one
    that never happened, removed the folder, and the start then failed (its files had nowhere to go),
    while the look told the resume to run the step again.  Here the start is held in that instant by
    a slow setsid (the start launches the job's own session with it) while the host is asked."""
    _look_while_its_start_is_held(
        tmp_path, {"setsid": f"#!/bin/sh\nsleep 0.6\nexec {shutil.which('setsid')} \"$@\"\n"}, before_its_pid=True)


def test_a_look_the_instant_a_steps_folder_appears_finds_its_start_and_never_removes_it(tmp_path):
    """The folder appeared (mkdir) before its starter's mark: a look in between that outlasted its
    half-second grace took the start for one that never happened and removed the folder, and the
    start failed ("cannot make the step's job folder").  Here the starter is held right after the
    folder appears, by a slow mkdir and a slow mv (each makes the folder, then sleeps 1.5 s)."""
    # held only where the step's folder itself appears
    _look_while_its_start_is_held(tmp_path, {
        tool: f'#!/bin/sh\n{shutil.which(tool)} "$@" || exit\n'
              f'for last; do :; done; case "$last" in *@{HOST}) sleep 1.5 ;; esac\n' for tool in ("mkdir", "mv")})
