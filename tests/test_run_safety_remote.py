"""Run safety over real SSH (sandbox sshd hosts on loopback): a step a killed driver left on its
host is found by resume and never started twice; a known_hosts line the app cannot honour is a
pre-flight problem, not a crash."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.run import journal as J
from app.run.cli_run import EXIT_OK, EXIT_PREFLIGHT, EXIT_UNUSABLE
from bench.sandbox_hosts import SandboxLab
from tests.safety_beds import HOLD_S, adopted, long_step_bed, release
from tests.waiting import wait_for

pytestmark = pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                                reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(1)
        yield lab


def _access(lab) -> dict:
    h = lab.hosts["h1"]
    return {"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
            "key_file": str(lab.client_key_path)}


def _env(known: Path) -> dict:
    return os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)}


def _cli(*args: str, known: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=_env(known))


def _journalled_pid(run_dir: Path) -> int | None:
    return next((r["pid"] for r in J.read_records(run_dir)[0] if r["kind"] == "process"), None)


def test_resume_after_kill_9_over_ssh_adopts_the_running_step_and_never_starts_a_second(lab, tmp_path):
    bed, templates = long_step_bed(tmp_path, _access(lab), work_s=HOLD_S)
    known = tmp_path / "known_hosts"
    shutil.copyfile(lab.known_hosts_path, known)
    runs = tmp_path / "runs"
    args = ["--runs-dir", str(runs), "--templates", templates, "--skip-manual"]
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(bed), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=_env(known))
    wait_for(lambda: runs.is_dir() and any(runs.iterdir()), what="the run folder")
    run_dir = next(runs.iterdir())
    wait_for(lambda: _journalled_pid(run_dir) is not None, what="the remote process in the journal")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    pid = _journalled_pid(run_dir)
    os.kill(pid, 0)      # the sandbox host is this machine: the remote job still runs

    r = _cli("run", str(bed), "--resume", run_dir.name, *args, known=known)
    assert r.returncode == EXIT_UNUSABLE, r.stdout + r.stderr
    assert f"still running there (process group {pid})" in r.stderr
    adopter = subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(bed), "--resume", run_dir.name, *args,
                                "--still-running", "adopt"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, env=_env(known))
    wait_for(lambda: adopted(run_dir), what="the resumed driver adopting the step", seconds=90)
    release(tmp_path)
    out, err = adopter.communicate(timeout=120)
    assert adopter.returncode == EXIT_OK, out + err
    assert "waiting for it" in out
    assert (tmp_path / "marks" / "h1.log").read_text() == "begin\nend\n"
    state = next(iter(J.replay(J.read_records(run_dir)[0]).values()))
    assert state.status == J.OK


@pytest.mark.parametrize("bad_line, says", [
    ("@revoked {name} ssh-ed25519 {key}", "a @revoked line"),
    ("{name} ssh-ed25519 AAAA!!not-base64", "a damaged line"),
])
def test_a_known_hosts_line_the_app_cannot_honour_is_a_preflight_problem(lab, tmp_path, bad_line, says):
    bed, templates = long_step_bed(tmp_path, _access(lab), work_s=0)
    h = lab.hosts["h1"]
    known = tmp_path / "known_hosts"
    good = Path(lab.known_hosts_path).read_text()
    known.write_text(good + bad_line.format(name=h.known_hosts_name, key=h.host_key_public.split()[1]) + "\n")
    line = len(good.splitlines()) + 1
    r = _cli("run", str(bed), "--runs-dir", str(tmp_path / "runs"), "--templates", templates, "--skip-manual",
             known=known)
    assert r.returncode == EXIT_PREFLIGHT, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert f"pre-flight h1: PROBLEM - h1: {known}:{line}: {says}" in r.stdout
    assert not (tmp_path / "marks").exists()
