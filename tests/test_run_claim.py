"""Two `testbed-studio run` processes of one bed started at the same instant: one runs the steps,
the other is refused, whatever the timing (creating a run and locking it are one step), over
the local transport and over real SSH (sandbox sshd hosts)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.run.cli_run import EXIT_OK, EXIT_UNUSABLE
from bench.sandbox_hosts import SandboxLab
from tests.safety_beds import HOLD_S, long_step_bed, release

# each process imports the application first, then waits for the same go file: the two starts
# are then microseconds apart, not a Python start-up apart
_STARTER = """
import os, sys, time
from app.cli import main
import app.run.session, app.run.engine, app.run.cli_run, app.remote.local, app.remote.ssh, app.remote.connect
import paramiko, topology.methodology, topology.validation, app.run.metrics_tap
go, ready, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.0005)
time.sleep(delay)
sys.exit(main(sys.argv[4:]))
"""


def _race(bed: Path, templates: str, runs: Path, go: Path, delay: float,
          env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """Both started at once, the second `delay` seconds after the first."""
    args = ["run", str(bed), "--runs-dir", str(runs), "--templates", templates, "--skip-manual", "--no-preflight"]
    ready = [go.with_name(f"{go.name}.ready{i}") for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", _STARTER, str(go), str(ready[i]), str(wait), *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              env=env)
             for i, wait in enumerate((0.0, delay))]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    # the step works until released: released once one driver has ended (refused), or after 15 s
    # (both run): a busy machine that starts the second late cannot let the first finish first
    deadline = time.monotonic() + 15
    while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    release(go.parent)
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def _races(tmp_path: Path, access: dict, rounds: int, env: dict | None = None) -> None:
    bed, templates = long_step_bed(tmp_path, access, work_s=HOLD_S)
    marks = tmp_path / "marks" / "h1.log"
    for n in range(rounds):
        runs = tmp_path / f"runs-{n}"
        for stale in (marks, tmp_path / "marks" / "h1.release"):
            if stale.exists():
                stale.unlink()
        results = _race(bed, templates, runs, tmp_path / f"go-{n}", delay=(0.0, 0.002, 0.006)[n % 3], env=env)
        codes = sorted(r.returncode for r in results)
        said = "\n".join(r.stdout + r.stderr for r in results)
        assert codes == [EXIT_OK, EXIT_UNUSABLE], f"round {n}: exit codes {codes}\n{said}"
        refused = next(r for r in results if r.returncode == EXIT_UNUSABLE)
        assert "is being driven by process" in refused.stderr and "--concurrent" in refused.stderr, said
        assert "Traceback" not in said
        assert marks.read_text() == "begin\nend\n", f"round {n}: the step ran {marks.read_text().count('begin')} times"


@pytest.mark.slow
def test_two_local_runs_of_one_bed_started_together_run_each_step_once(tmp_path):
    _races(tmp_path, {"transport": "local"}, rounds=6)


@pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                    reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")
@pytest.mark.slow
def test_two_ssh_runs_of_one_bed_started_together_run_each_step_once(tmp_path):
    with SandboxLab(tmp_path / "lab") as lab:
        lab.start_many(1)
        h = lab.hosts["h1"]
        known = tmp_path / "known_hosts"
        shutil.copyfile(lab.known_hosts_path, known)
        access = {"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
                  "key_file": str(lab.client_key_path)}
        _races(tmp_path, access, rounds=4, env=os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)})


def test_runs_of_same_named_beds_started_in_one_second_from_two_runs_folders_get_their_own_job_folders(
        tmp_path, monkeypatch):
    """A run's jobs live on its hosts under its id; two drivers (two laptops, two runs folders)
    starting a bed of the same name in the same second once shared those folders, so one
    driver's attempt 2 made the other's attempt 1 refuse to start."""
    from app.remote.jobs import Job
    from app.run import journal as J
    monkeypatch.setattr(J.time, "strftime", lambda _format: "20261129-001500")
    ids = {J.new_run("lab/bed.yaml", "0" * 64, root=tmp_path / f"laptop{n}").id for n in range(20)}
    assert len(ids) == 20 and all(i.startswith("bed-20261129-001500-") for i in ids)
    assert len({Job(i, "1.1", "h1").name for i in ids}) == 20
