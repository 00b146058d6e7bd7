"""Faults at the narrow places of a run, for real (`testbed-studio run` processes, local jobs):
a driver that dies between starting a step's job and journalling its process, and a run
that ran before on the same step.  What a user relies on: a resume finds the job on its host
and adopts it; no step runs twice, and a job an earlier attempt left is never taken for a
later one."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.run import journal as J
from app.run.cli_run import EXIT_OK, EXIT_UNUSABLE
from app.run.fault_points import ENV as DIE_AT
from tests.safety_beds import HOLD_S, adopted, long_step_bed, release
from tests.waiting import wait_for


def _cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env)


@pytest.mark.slow
def test_a_driver_killed_before_it_journalled_the_jobs_process_is_resumed_by_adopting_the_job(tmp_path):
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)
    runs = tmp_path / "runs"
    common = ("--runs-dir", str(runs), "--templates", templates, "--skip-manual")
    died = _cli("run", str(bed), *common, "--no-preflight", env=os.environ | {DIE_AT: "job-started"})
    assert died.returncode == -9, died.stdout + died.stderr
    run_dir = next(runs.iterdir())
    records = J.read_records(run_dir)[0]
    assert [r["kind"] for r in records if r.get("step")].count("start") == 1
    assert not any(r["kind"] == "process" for r in records)     # died before the pid was journalled
    marks = tmp_path / "marks"
    assert (marks / "h1.log").read_text() == "begin\n"       # the job runs on without its driver

    # the host is asked by the job's folder: still running, so a plain resume refuses to start it again
    r = _cli("run", str(bed), "--resume", run_dir.name, *common)
    assert r.returncode == EXIT_UNUSABLE, r.stdout + r.stderr
    assert "still running there" in r.stderr and "--still-running adopt" in r.stderr
    release(tmp_path)
    r = _cli("run", str(bed), "--resume", run_dir.name, *common, "--still-running", "adopt")
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert (marks / "h1.log").read_text() == "begin\nend\n"      # one copy, followed to its end
    records = J.read_records(run_dir)[0]
    starts = [r for r in records if r["kind"] == "start"]
    assert len(starts) == 2 and starts[1].get("adopted"), starts
    state = next(iter(J.replay(records).values()))
    assert state.status == J.OK and state.attempts == 1


def test_the_job_folder_of_an_earlier_attempt_is_not_taken_for_a_later_attempt_that_never_started(tmp_path):
    """Attempt 1 ended (its exit status stays in the job folder); attempt 2 was journalled but its
    driver died before the job reached the host: resume runs the step, not attempt 1's status."""
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    runs = tmp_path / "runs"
    common = ("--runs-dir", str(runs), "--templates", templates, "--skip-manual")
    r = _cli("run", str(bed), *common, "--no-preflight")
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    run_dir = next(runs.iterdir())
    records = J.read_records(run_dir)[0]
    step = next(r["step"] for r in records if r["kind"] == "start")
    # a second attempt whose start was journalled and whose driver died at once (no job started)
    with J.Journal(run_dir) as journal:
        journal.record("start", step=step, host="h1", shell="bash", attempt=2)
    assert J.replay(J.read_records(run_dir)[0])[(step, "h1")].status == J.INTERRUPTED
    r = _cli("run", str(bed), "--resume", run_dir.name, *common)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert "ended on its own" not in r.stdout, r.stdout
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\nbegin\nend\n"


@pytest.mark.slow
def test_the_ansible_engine_reads_the_result_files_it_fetched_as_the_builtin_engine_does(tmp_path):
    """Hostile files a step leaves (100,000-deep JSON, a DiskSpd count written 1.5e3, fio `jobs`
    holding a number) are problems of the step, journalled with what is wrong; the good file is
    kept with its figures and the run goes on to the next step."""
    import json

    from app.ansible.engine import AnsibleEngine, missing
    from app.metrics.run_results import attached
    from app.remote.local import LocalTransport
    from app.run.plan import RunStep, Task
    from tests.test_hostile_inputs import _diskspd_with_count, _fio
    from topology.fileformat import load
    if missing():
        pytest.skip(missing())
    files = tmp_path / "files"
    files.mkdir()
    (files / "deep.json").write_text('{"fio version": "fio-3.33", "jobs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (files / "count.xml").write_text(_diskspd_with_count("1.5e3"))
    doc = _fio()
    doc["jobs"].append(7)
    (files / "jobs.json").write_text(json.dumps(doc))
    (files / "good.json").write_text(json.dumps(_fio()))
    out = tmp_path / "out"
    out.mkdir()
    names = ["deep.json", "count.xml", "jobs.json", "good.json"]
    load_task = Task("3.1", "h1", "bash", f"cp {files}/* {out}/",
                     ansible={"results": [str(out / n) for n in names]})
    after = Task("3.2", "h1", "bash", f"echo after > {out}/after")
    steps = [RunStep("3.1", "load", "run", "Run", "h1", [load_task]),
             RunStep("3.2", "after", "run", "Run", "h1", [after])]
    bed_file = write_bed_local(tmp_path)
    info = J.new_run(str(bed_file), "", root=tmp_path / "runs", engine="ansible")
    engine = AnsibleEngine(info, steps, lambda host: LocalTransport(host), bed=load(bed_file),
                           extra_vars=[f"ansible_python_interpreter={sys.executable}"])
    try:
        assert engine.run_steps(steps)
    finally:
        engine.close()
    records = J.read_records(info.dir)[0]
    notes = [r["message"] for r in records if r["kind"] == "note" and r.get("step") == "3.1"]
    assert len(notes) == 2, notes
    assert "deep.json" in notes[0] and "nests deeper" in notes[0]
    assert "count.xml" in notes[1] and "line " in notes[1]
    # a `jobs` entry that is a number is left out, the rest of the report read
    assert [r.source for r in attached(info.dir)] == [f"h1:{out}/jobs.json", f"h1:{out}/good.json"]
    assert all(r.figures["read_iops"] for r in attached(info.dir))
    states = J.replay(records)
    assert states[("3.1", "h1")].status == J.OK and states[("3.2", "h1")].status == J.OK
    assert (out / "after").exists()
    output = (info.dir / "output" / "3.1@h1.log").read_text()
    assert "nests deeper" in output and "good.json" in output


def write_bed_local(tmp_path):
    from tests.run_beds import write_bed
    return write_bed(tmp_path / "bed.yaml", [{"id": "h1", "transport": "local"}], mark_dir=tmp_path / "marks")


@pytest.mark.slow      # ~30 s: two ansible-playbook drivers and a kill -9 between them
@pytest.mark.timeout(600)
def test_an_ansible_step_adopted_after_kill_9_keeps_its_whole_output_and_its_own_time(tmp_path):
    """Ansible hands a task's output over when the task ends, so the killed driver took none of the
    job's: the adopting pass reads it from line 1 (the dead driver's follower, which cannot tell
    its driver is gone, leaves it in place when the job ends); the journal records the job's own
    time on its host (from its start before the kill), not how long the adopting pass took.  (An
    sshd host: a local host's job is a descendant of ansible-playbook and dies with its driver.)"""
    from app.ansible.engine import missing
    from bench.sandbox_hosts import SandboxLab
    if missing() or SandboxLab.unavailable_reason():
        pytest.skip(missing() or SandboxLab.unavailable_reason())
    with SandboxLab(tmp_path / "lab") as lab:
        host = lab.start_many(1)[0]
        access = {"transport": "ssh", "address": host.address, "port": host.port, "user": "root",
                  "key_file": str(lab.client_key_path)}
        known = tmp_path / "known_hosts"
        shutil.copyfile(lab.known_hosts_path, known)
        _adopt_after_kill_9(tmp_path, access, os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)})


def _adopt_after_kill_9(tmp_path: Path, access: dict, env: dict) -> None:
    bed, templates = long_step_bed(tmp_path, access, work_s=HOLD_S)
    runs = tmp_path / "runs"
    common = ("--runs-dir", str(runs), "--templates", templates, "--skip-manual", "--engine", "ansible",
              "-e", f"ansible_python_interpreter={sys.executable}")
    marks = tmp_path / "marks"

    def start(*args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(bed), *common, *args], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    driver = start("--no-preflight")
    try:
        wait_for(lambda: (marks / "h1.log").exists(), seconds=120, what="the step running on its host")
        began = time.time()
        os.kill(driver.pid, signal.SIGKILL)
        driver.communicate(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    run_dir = next(runs.iterdir())
    time.sleep(3)           # the job goes on with no driver, and ends
    release(tmp_path)
    released = time.time()
    wait_for(lambda: (marks / "h1.log").read_text() == "begin\nend\n", what="the job's end on its host")
    time.sleep(1)           # (the dead driver's follower, still reading on the host, sees the end too)
    adopter = start("--resume", run_dir.name)
    out, err = adopter.communicate(timeout=180)
    assert adopted(run_dir)
    assert adopter.returncode == EXIT_OK, out + err
    assert (marks / "h1.log").read_text() == "begin\nend\n"        # one copy
    ends = [r for r in J.read_records(run_dir)[0] if r["kind"] == "end"]
    assert len(ends) == 1 and ends[0]["status"] == J.OK
    # the job ran from before the kill to the release: at least that long
    assert ends[0]["seconds"] >= released - began - 0.5, (ends[0]["seconds"], released - began)
    log = (run_dir / "output" / f"{ends[0]['step']}@h1.log").read_text()
    adopted_part = log.split("adopted the job of attempt 1", 1)[1]
    assert adopted_part.splitlines()[1:3] == ["working", "done"], log       # its output from line 1
    assert "@testbed-studio" not in log


def _files_holding(folder: Path, text: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.slow
def test_secret_extra_vars_reach_ansible_playbook_but_no_file_of_the_run(tmp_path):
    """`-e ansible_become_password=...` and a mapping holding a token: ansible-playbook gets them,
    the run folder (run.json, journal, outputs, ansible-runner's command and cmdline) never holds
    them; a resume is told to give them again instead of running without them."""
    from app.ansible.engine import ansible_playbook, missing
    from app.run.extra_vars import SecretVars
    if missing():
        pytest.skip(missing())
    password, token = "S3cr3t-canary-pw", "T0k3n-canary"
    secret_args = [f"ansible_become_password={password}", '{"api": {"auth_token": "' + token + '"}}']
    args = [*secret_args, "ntp_server=10.0.0.1", f"ansible_python_interpreter={sys.executable}"]
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    runs = tmp_path / "runs"
    common = ["--runs-dir", str(runs), "--templates", templates, "--engine", "ansible", "--no-preflight"]
    r = _cli("run", str(bed), *common, "--steps", "1", *(w for a in args for w in ("-e", a)))
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    run_dir = next(runs.iterdir())
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"
    for secret in (password, token):
        assert _files_holding(run_dir, secret) == [] and secret not in r.stdout + r.stderr
        assert _files_holding(Path("/dev/shm"), secret) == []        # the pass's private copy is gone
    info = J.open_run(run_dir.name, runs)
    assert info.extra_vars == args[2:] and info.withheld_vars == ["ansible_become_password", "auth_token"]

    # a resume without them is refused with what to give (with them it runs as the first driver did)
    r = _cli("run", str(bed), "--resume", run_dir.name, *common[:-1])
    assert r.returncode == EXIT_UNUSABLE and "ansible_become_password, auth_token" in r.stderr, r.stdout + r.stderr

    # what ansible-playbook reads is the values themselves
    play = tmp_path / "show.yml"
    play.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n    - ansible.builtin.copy:\n"
                    f"        dest: {tmp_path}/seen\n"
                    "        content: \"{{ ansible_become_password }} {{ api.auth_token }}\"\n")
    words = SecretVars(secret_args)
    try:
        shown = subprocess.run([str(ansible_playbook()), "-i", "localhost,", "-c", "local", *words.words, str(play),
                                "-e", f"ansible_python_interpreter={sys.executable}"],
                               capture_output=True, text=True, timeout=120)
    finally:
        words.remove()
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert (tmp_path / "seen").read_text() == f"{password} {token}"
    assert password not in " ".join(words.words) and not words.folder


def test_a_step_whose_job_still_runs_on_its_host_is_never_started_beside_it(tmp_path):
    """Whatever the journal says (a driver that died before journalling the start, a hand-edited
    journal), the host refuses to start a second copy of a step whose job is alive there."""
    import threading

    from app.remote import jobs
    from app.remote.base import OK
    from app.remote.local import LocalTransport
    marks = tmp_path / "marks"
    marks.mkdir()
    script = f"echo begin >> {marks}/log; while [ ! -e {marks}/release ]; do sleep 0.1; done; echo end >> {marks}/log"
    transport = LocalTransport("h1", workdir=tmp_path / "work")
    transport.open()
    job = jobs.Job("run-1", "1.1", "h1", attempt=1)
    first: list = []
    worker = threading.Thread(target=lambda: first.append(transport.run(script, shell="bash", job=job, timeout=60)))
    worker.start()
    try:
        wait_for(lambda: (marks / "log").exists(), what="the first copy")
        lines: list[str] = []
        second = transport.run(script, shell="bash", job=jobs.Job("run-1", "1.1", "h1", attempt=2), timeout=60,
                               on_output=lambda stream, line: lines.append(line))
        assert second.status != OK and second.exit_code == 125
        assert any(jobs.ALREADY_RUNNING in line for line in lines), lines
    finally:
        (marks / "release").touch()
        worker.join(60)
    assert first[0].status == OK and (marks / "log").read_text() == "begin\nend\n"
    # once it has ended, the step may run again
    (marks / "release").unlink()
    (marks / "release").touch()
    assert transport.run(script, shell="bash", job=jobs.Job("run-1", "1.1", "h1", attempt=2), timeout=60).status == OK
    assert (marks / "log").read_text() == "begin\nend\nbegin\nend\n"
