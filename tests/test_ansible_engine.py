"""`testbed-studio run --engine ansible` for real: ansible-playbook (through ansible-runner) on
sandbox sshd hosts, the driver killed with kill -9 in the middle of a step, then resumed.

What a user relies on: the run's own journal holds the same records as a built-in run (so
`runs` and the Run tab read it), a resume starts at the first step that did not succeed on
each host, across plays, and no step runs twice — not one that finished, not one that was
still running on its host when the driver died."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.run import journal as J
from app.run.cli_run import EXIT_FAILED, EXIT_MANUAL, EXIT_OK, EXIT_UNUSABLE
from bench.sandbox_hosts import SandboxLab, host_python
from tests.run_beds import write_bed
from tests.waiting import wait_for

TEMPLATES = str(Path(__file__).parent / "ansible_engine_templates")
ANSIBLE = Path(sys.executable).with_name("ansible-playbook")

pytestmark = [pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                                 reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}"),
              pytest.mark.skipif(not ANSIBLE.exists(), reason="ansible-core is not installed (pip install -e .[test])")]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(2)
        yield lab


def _bed(lab, tmp_path: Path) -> Path:
    hosts = [{"id": n, "transport": "ssh", "address": lab.hosts[n].address, "port": lab.hosts[n].port,
              "user": "root", "key_file": str(lab.client_key_path)} for n in ("h1", "h2")]
    return write_bed(tmp_path / "bed.yaml", hosts, mark_dir=tmp_path / "marks", manual_check=True)


class _Driver:
    def __init__(self, lab, tmp_path: Path):
        self.bed = _bed(lab, tmp_path)
        self.runs = tmp_path / "runs"
        known = tmp_path / "known_hosts"
        shutil.copyfile(lab.known_hosts_path, known)
        self.env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)}

    def args(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "app.cli", "run", str(self.bed), "--engine", "ansible",
                "--runs-dir", str(self.runs), "--templates", TEMPLATES,
                "-e", f"ansible_python_interpreter={host_python()}", *extra]

    def start(self, *extra: str) -> subprocess.Popen:
        return subprocess.Popen(self.args(*extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, env=self.env)

    def run(self, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(self.args(*extra), capture_output=True, text=True, timeout=400,
                              stdin=subprocess.DEVNULL, env=self.env)


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(f"{entry.name}: {cmdline.replace(bytes(1), b' ').decode(errors='replace')[:300]}")
    return found


def _playbooks_under(folder: Path) -> list[int]:
    """Live ansible-playbook processes whose command line names a file under `folder`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(") ", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(w.endswith(b"/ansible-playbook") for w in words[:2]) and \
                any(str(folder).encode() in w for w in words):
            found.append(int(entry.name))
    return found


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_kill_9_mid_step_then_resume_at_the_failed_step_runs_no_step_twice(lab, tmp_path):
    d = _Driver(lab, tmp_path)
    marks = tmp_path / "marks"
    driver = d.start()
    try:
        # both hosts are inside their "hold" step, which runs until the test releases it
        wait_for(lambda: _read(marks / "h1.log") == "begin\n" and _read(marks / "h2.log") == "begin\n",
                 seconds=240, what="both hosts in their long step")
        run_dir = next(d.runs.iterdir())
        os.kill(driver.pid, signal.SIGKILL)
        driver.communicate(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    # each host's steps of the section run as one task, a chain (app.ansible.chains): the journal
    # named every step each chain may start before it started, so a resume asks about all of them
    chained = {(step, r["host"]) for r in J.read_records(run_dir)[0] if r["kind"] == "chain" for step, _ in r["steps"]}
    assert {("1.1", "h1"), ("1.2", "h1"), ("1.3", "h2"), ("1.4", "h2")} <= chained
    # ansible-playbook and its workers died with their driver: nothing goes on in the background
    wait_for(lambda: not _processes_mentioning(str(run_dir)), seconds=30,
             what=f"ansible-playbook of the killed driver to end: {_processes_mentioning(str(run_dir))}")

    # the steps are still running on their hosts: resume refuses to start them a second time
    r = d.run("--resume", run_dir.name)
    assert r.returncode == EXIT_UNUSABLE, r.stdout + r.stderr
    assert "is still running there" in r.stderr and "--still-running adopt" in r.stderr
    assert _read(marks / "h1.log") == "begin\n"

    (marks / "h2.fail").write_text("")
    (marks / "release").write_text("")
    # adopts both running steps, then the next play: h1 passes its gate and stops at its manual
    # step, h2's gate fails
    r = d.run("--resume", run_dir.name, "--still-running", "adopt")
    assert r.returncode == EXIT_MANUAL, r.stdout + r.stderr
    assert "step 2.2 is done by hand" in r.stdout and "--done 2.2" in r.stdout
    assert "2.4 on h2: FAILED" in r.stdout, r.stdout
    assert _read(marks / "h1.gate") == "passed\n" and not (marks / "h1.after").exists()

    # the cause fixed and the manual steps ticked off: each host goes on at its own first step
    # that did not succeed (h1 after its manual step, h2 at the gate that failed), in the second play
    (marks / "h2.fail").unlink()
    r = d.run("--resume", run_dir.name, "--done", "2.2,2.5", "--skip", "3")      # 3: the bed has no run plan
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert "continuing at step 2.3" in r.stdout and "complete" in r.stdout

    # every script ran exactly once on its host
    for host in ("h1", "h2"):
        assert _read(marks / f"{host}.visits") == "visit\n"
        assert _read(marks / f"{host}.log") == "begin\nend\n"
        assert _read(marks / f"{host}.gate") == "passed\n"
        assert _read(marks / f"{host}.after") == "after\n"
    # and the journal says so: once a step ended well on a host it never started there again
    records = J.read_records(run_dir)[0]
    ended_ok: set[tuple[str, str]] = set()
    for rec in records:
        key = (rec.get("step"), rec.get("host"))
        if rec["kind"] == "start":
            assert key not in ended_ok, f"{key} started again after it succeeded"
        elif rec["kind"] == "end" and rec["status"] == J.OK:
            ended_ok.add(key)
    adopted = {(r["step"], r["host"]) for r in records if r["kind"] == "start" and r.get("adopted")}
    # the steps the chains ran before the kill were taken as their hosts say they ended, never run again
    assert adopted == {("1.1", "h1"), ("1.2", "h1"), ("1.3", "h2"), ("1.4", "h2")}
    fresh_starts = [(r["step"], r["host"]) for r in records if r["kind"] == "start" and not r.get("adopted")]
    assert fresh_starts.count(("2.4", "h2")) == 2          # failed once, then ran again after the fix
    assert all(fresh_starts.count(k) == 1 for k in set(fresh_starts) - {("2.4", "h2")}), fresh_starts
    assert any(r["kind"] == "run" and r.get("event") == "complete" for r in records)
    assert json.loads((run_dir / "run.json").read_text())["engine"] == "ansible"

    runs = subprocess.run([sys.executable, "-m", "app.cli", "runs", "--runs-dir", str(d.runs)],
                          capture_output=True, text=True, timeout=60)
    assert run_dir.name in runs.stdout and "complete" in runs.stdout.split(run_dir.name, 1)[1].splitlines()[0]


def test_without_ansible_runner_the_engine_says_how_to_get_it(tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", [{"id": "h1", "transport": "local"}], mark_dir=tmp_path / "marks")
    # a machine without the [ansible] extra: ansible_runner cannot be imported
    blocker = tmp_path / "site"
    (blocker / "ansible_runner").mkdir(parents=True)
    (blocker / "ansible_runner" / "__init__.py").write_text("raise ImportError('No module named ansible_runner')\n")
    r = subprocess.run([sys.executable, "-m", "app.cli", "run", str(bed), "--engine", "ansible",
                        "--runs-dir", str(tmp_path / "runs"), "--templates", TEMPLATES],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                       env=os.environ | {"PYTHONPATH": str(blocker)})
    assert r.returncode == EXIT_UNUSABLE, r.stdout + r.stderr
    assert "the ansible engine needs ansible-runner" in r.stderr
    assert "pip install 'testbed-studio[ansible]'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_cancelling_an_ansible_run_stops_the_step_on_its_host_and_a_new_pass_runs_it_again(lab, tmp_path):
    from app.run.session import RunSession
    d = _Driver(lab, tmp_path)
    marks = tmp_path / "marks"
    events = []
    session = RunSession.from_file(d.bed, templates=[TEMPLATES], runs_dir=d.runs, engine="ansible",
                                   extra_vars=[f"ansible_python_interpreter={host_python()}"], on_event=events.append,
                                   known_hosts=Path(d.env["TESTBED_STUDIO_KNOWN_HOSTS"]))
    assert session.start_new()
    try:
        hosts_steps = [s for s in session.steps if s.section == "hosts"]
        worker = threading.Thread(target=session.run, args=(hosts_steps,))
        worker.start()
        wait_for(lambda: _read(marks / "h1.log") == "begin\n" and _read(marks / "h2.log") == "begin\n",
                 seconds=240, what="both hosts in their long step")
        session.cancel()
        worker.join(120)
        assert not worker.is_alive()
        # the cancelled pass's ansible-playbook (a session of its own) is gone, not left sleeping for good
        wait_for(lambda: not _playbooks_under(d.runs), seconds=20, what="the cancelled pass's ansible-playbook ended")
        hold = [s for s in hosts_steps if "until the test releases" in s.text]
        assert all(session.look(s.number).status == J.CANCELLED for s in hold)
        # the steps were stopped on their hosts, not left running there
        (marks / "release").write_text("")
        time.sleep(2)
        assert _read(marks / "h1.log") == "begin\n" and _read(marks / "h2.log") == "begin\n"
        session.run(hosts_steps)
        assert all(session.look(s.number).status == J.OK for s in hosts_steps)
        assert _read(marks / "h1.log") == "begin\nbegin\nend\n"
        assert _read(marks / "h1.visits") == "visit\n"      # what had succeeded did not run again
        assert any(type(e).__name__ == "StepEnded" and e.status == J.CANCELLED for e in events)
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_step_past_its_timeout_ends_timed_out_and_is_stopped_on_its_host(lab, tmp_path):
    d = _Driver(lab, tmp_path)
    marks = tmp_path / "marks"
    r = d.run("--steps", "1", "--timeout", "10")
    assert r.returncode == EXIT_FAILED, r.stdout + r.stderr
    assert "1.2 on h1: TIMEOUT" in r.stdout and "1.4 on h2: TIMEOUT" in r.stdout, r.stdout
    (marks / "release").write_text("")
    time.sleep(3)
    # stopped on the host: it never reached its end once released
    assert _read(marks / "h1.log") == "begin\n" and _read(marks / "h2.log") == "begin\n"
