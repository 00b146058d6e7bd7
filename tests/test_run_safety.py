"""Run safety on this machine (local transport, real `testbed-studio run` processes): one driver
per run, a step a killed driver left running is never started twice, a full disk ends a step at
once, a damaged journal or run folder is reported, not trusted."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.run import journal as J
from app.run.cli_run import EXIT_OK, EXIT_UNUSABLE
from tests.safety_beds import HOLD_S, adopted, long_step_bed, pid_alive, release
from tests.waiting import wait_for


def _cli(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def _only_run(runs: Path) -> Path:
    wait_for(lambda: runs.is_dir() and any(runs.iterdir()), what="the run folder")
    return next(runs.iterdir())


def _journalled_pid(run_dir: Path) -> int | None:
    return next((r["pid"] for r in J.read_records(run_dir)[0] if r["kind"] == "process"), None)


@pytest.fixture
def slow_bed(tmp_path):
    return long_step_bed(tmp_path, {"transport": "local"}, work_s=HOLD_S)


def _killed_mid_step(slow_bed, runs: Path) -> tuple[Path, int]:
    bed, templates = slow_bed
    proc = _start("run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual", "--no-preflight")
    run_dir = _only_run(runs)
    wait_for(lambda: _journalled_pid(run_dir) is not None, what="the step's process in the journal")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    pid = _journalled_pid(run_dir)
    assert pid_alive(pid), "the step should outlive its killed driver"
    return run_dir, pid


@pytest.mark.slow
def test_a_second_driver_of_a_run_is_refused_and_told_who_holds_it(slow_bed, tmp_path):
    bed, templates = slow_bed
    runs = tmp_path / "runs"
    first = _start("run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual",
                   "--no-preflight")
    try:
        run_dir = _only_run(runs)
        wait_for(lambda: _journalled_pid(run_dir) is not None, what="the first driver's step")
        second = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
                      "--skip-manual")
        assert second.returncode == EXIT_UNUSABLE, second.stdout + second.stderr
        assert f"is being driven by process {first.pid} on" in second.stderr
        other = _cli("run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual",
                     "--no-preflight")
        assert other.returncode == EXIT_UNUSABLE and "--concurrent" in other.stderr, other.stderr
        release(tmp_path)
        assert first.wait(timeout=60) == EXIT_OK
    finally:
        if first.poll() is None:
            first.kill()
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"
    assert len(list(runs.iterdir())) == 1


@pytest.mark.slow
def test_resume_after_kill_9_refuses_to_start_a_second_copy_then_adopts_the_running_step(slow_bed, tmp_path):
    bed, templates = slow_bed
    runs = tmp_path / "runs"
    run_dir, pid = _killed_mid_step(slow_bed, runs)
    r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
             "--skip-manual")
    assert r.returncode == EXIT_UNUSABLE, r.stdout + r.stderr
    assert f"still running there (process group {pid})" in r.stderr and "--still-running adopt" in r.stderr
    adopter = _start("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
                     "--skip-manual", "--still-running", "adopt")
    wait_for(lambda: adopted(run_dir), what="the resumed driver adopting the step", seconds=90)
    time.sleep(2)
    release(tmp_path)
    out, err = adopter.communicate(timeout=90)
    assert adopter.returncode == EXIT_OK, out + err
    assert "waiting for it" in out and "done" in out        # the job's output, followed to its end
    # the time it spent following the adopted step to its end is the resumed run's time
    took = re.search(r"complete: \d+ step\(s\) in ([\d.]+) s", out)
    assert took and float(took.group(1)) >= 2.0, out
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"      # one copy only
    state = next(iter(J.replay(J.read_records(run_dir)[0]).values()))
    assert state.status == J.OK and state.exit_code == 0


def test_resume_can_stop_the_step_a_killed_driver_left_and_run_it_again(slow_bed, tmp_path):
    bed, templates = slow_bed
    runs = tmp_path / "runs"
    run_dir, pid = _killed_mid_step(slow_bed, runs)
    stopper = _start("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
                     "--skip-manual", "--still-running", "stop")
    wait_for(lambda: not pid_alive(pid), what="the left step stopped", seconds=90)
    release(tmp_path)                      # the second copy may now run to its end
    out, err = stopper.communicate(timeout=90)
    assert stopper.returncode == EXIT_OK, out + err
    # the first copy was stopped before it ended, the second ran to the end on its own
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nbegin\nend\n"


@pytest.mark.slow
def test_a_step_that_ended_while_no_driver_ran_is_taken_as_it_ended_not_run_again(tmp_path):
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=2)
    runs = tmp_path / "runs"
    run_dir, pid = _killed_mid_step((bed, templates), runs)
    wait_for(lambda: (tmp_path / "marks" / "h1.log").read_text().endswith("end\n"), what="the orphaned step")
    r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
             "--skip-manual")
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert "ended on its own while no driver ran (exit status 0)" in r.stdout
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"


@pytest.fixture
def tiny_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_ends_a_local_step_at_once_with_a_clear_message(tiny_disk, tmp_path):
    """The step prints without end; its output log fills the disk.  It must end then, not at its
    one-hour timeout (the test's own timeout is far shorter)."""
    from app.remote.local import LocalTransport
    from app.run.engine import RunEngine
    from app.run.plan import RunStep, Task
    info = J.new_run(str(tmp_path / "bed.yaml"), "", root=tiny_disk)
    task = Task("1.1", "h1", "bash", "while :; do echo 0123456789abcdef0123456789abcdef; done")
    step = RunStep("1.1", "print without end", "hosts", "Hosts", "h1", [task])
    engine = RunEngine(info, [step], lambda host: LocalTransport(host, workdir=tmp_path / "work"))
    try:
        engine.run_steps([step])
        state = engine.task_state(task)
    finally:
        engine.close()
    assert state.status == J.FAILED
    assert "cannot write the step's output" in state.message and "No space left on device" in state.message
    assert "Free space there, then resume" in state.message


@pytest.mark.slow
def test_runs_lists_good_runs_and_names_each_damaged_one(tmp_path):
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    runs = tmp_path / "runs"
    for _ in range(2):
        assert _cli("run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual",
                    "--no-preflight", "--concurrent").returncode == EXIT_OK
    good = sorted(d.name for d in runs.iterdir())
    list_run = runs / "listed"
    list_run.mkdir()
    (list_run / "run.json").write_text("[1, 2, 3]\n")
    tail_run = runs / "tail-number"
    tail_run.mkdir()
    (tail_run / "run.json").write_text(json.dumps({"id": "tail-number", "bed_file": str(bed)}))
    (tail_run / "journal.jsonl").write_text(
        '{"kind":"end","step":"1","host":"h1","status":"ok","tail":5}\n{"kind":"session-end"}\n')
    deep_run = runs / "deep"
    deep_run.mkdir()
    (deep_run / "run.json").write_text(json.dumps({"id": "deep", "bed_file": str(bed)}))
    (deep_run / "journal.jsonl").write_text("[" * 100000 + "]" * 100000 + "\n{\"kind\":\"session-end\"}\n")
    r = _cli("runs", "--runs-dir", str(runs))
    assert r.returncode == EXIT_OK and "Traceback" not in r.stderr, r.stderr
    for name in good:
        assert name in r.stdout
    assert "listed" in r.stderr and "is a list, not a mapping" in r.stderr
    assert "tail-number" in r.stderr and "'tail' is not a list of lines" in r.stderr
    assert "deep" in r.stderr and "journal.jsonl:1" in r.stderr

    for name in ("listed", "tail-number", "deep"):
        r = _cli("run", str(bed), "--resume", name, "--runs-dir", str(runs), "--templates", templates, "--skip-manual")
        assert r.returncode == EXIT_UNUSABLE and "Traceback" not in r.stderr, r.stderr
        assert name in r.stderr and ("cannot resume" in r.stderr or "not a mapping" in r.stderr), r.stderr


@pytest.mark.slow
def test_resume_refuses_a_journal_emptied_after_steps_ran(tmp_path):
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    runs = tmp_path / "runs"
    assert _cli("run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual",
                "--no-preflight").returncode == EXIT_OK
    run_dir = next(runs.iterdir())
    (run_dir / "journal.jsonl").write_bytes(b"")
    r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
             "--skip-manual")
    assert r.returncode == EXIT_UNUSABLE, r.stdout + r.stderr
    assert "records no step" in r.stderr and "start a new run" in r.stderr
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"      # nothing ran again


@pytest.mark.slow
def test_a_torn_last_record_is_still_resumable_after_a_second_resume(tmp_path):
    bed, templates = long_step_bed(tmp_path, {"transport": "local"}, work_s=0)
    runs = tmp_path / "runs"
    assert _cli("run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual",
                "--no-preflight").returncode == EXIT_OK
    run_dir = next(runs.iterdir())
    with open(run_dir / "journal.jsonl", "ab") as fh:
        fh.write(b'{"kind":"note","mess')           # killed mid-write
    for _ in range(2):
        r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", templates,
                 "--skip-manual")
        assert r.returncode == EXIT_OK, r.stdout + r.stderr
