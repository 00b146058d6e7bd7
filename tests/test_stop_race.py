"""`--still-running stop` after a killed driver, for the built-in engine and `--engine ansible`:
the stop is decided on the host in the same command that stops (app.remote.jobs.stop_script), so
a step that ended between resume's question "does it still run?" and the stop is taken as it
ended, never run a second time.

The first test puts the end exactly in that gap (the question is answered only once the step has
ended); the table test kills the driver at random points and stops at random delays, many times,
and checks that whatever the timing the step's script ran to its end exactly once."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.run import events as E
from app.run import journal as J
from app.run.cli_run import EXIT_OK
from bench.sandbox_hosts import SandboxLab
from tests.run_beds import write_bed
from tests.waiting import wait_for

ANSIBLE = Path(sys.executable).with_name("ansible-playbook")
_ANSIBLE_MARKS = [pytest.mark.skipif(not ANSIBLE.exists(), reason="ansible-core is not installed (pip install -e "
                                                                   ".[test])"),
                  pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                                     reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")]
# the built-in engine on this machine; Ansible on a sandbox sshd host (a local Ansible job is a
# child of ansible-playbook, which takes its children with it when its driver dies)
ENGINES = ["builtin", pytest.param("ansible", marks=_ANSIBLE_MARKS)]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if SandboxLab.unavailable_reason() is not None:
        yield None
        return
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(1)
        yield lab


@pytest.fixture(autouse=True)
def _known_hosts(lab, tmp_path, monkeypatch):
    if lab is not None:
        known = tmp_path / "known_hosts"
        shutil.copyfile(lab.known_hosts_path, known)
        monkeypatch.setenv("TESTBED_STUDIO_KNOWN_HOSTS", str(known))


def _access(lab, engine: str) -> dict:
    if engine == "builtin":
        return {"transport": "local"}
    h = lab.hosts["h1"]
    return {"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
            "key_file": str(lab.client_key_path)}

# begin, work for a given time (or until released), end: the marks file shows every copy that ran
STEP = """section: hosts
steps:
  - id: work
    foreach: server
    text: Work on {host.id}.
    automation:
      - shell: bash
        script: >-
          mkdir -p {server.settings.mark_dir};
          echo begin >> {server.settings.mark_dir}/{host.id}.log;
          n=0; while [ ! -e {server.settings.mark_dir}/{host.id}.release ] && [ $n -lt 1200 ];
          do sleep 0.05; n=$((n+1)); done;
          echo end >> {server.settings.mark_dir}/{host.id}.log
"""


def _bed(tmp_path: Path, access: dict) -> tuple[Path, str]:
    templates = tmp_path / "templates"
    (templates / "linux").mkdir(parents=True)
    (templates / "common").mkdir()
    (templates / "linux" / "hosts.yaml").write_text(STEP)
    (templates / "common" / "hosts.yaml").write_text("section: hosts\nsteps: []\n")
    bed = write_bed(tmp_path / "bed.yaml", [{"id": "h1"} | access], mark_dir=tmp_path / "marks")
    return bed, str(templates)


def _args(bed: Path, templates: str, runs: Path, engine: str, *extra: str) -> list[str]:
    args = [sys.executable, "-m", "app.cli", "run", str(bed), "--runs-dir", str(runs), "--templates", templates,
            "--skip-manual", "--no-preflight", "--engine", engine, *extra]
    if engine == "ansible":
        args += ["-e", f"ansible_python_interpreter={sys.executable}"]
    return args


def _started(run_dir: Path, engine: str) -> bool:
    records = J.read_records(run_dir)[0] if run_dir.is_dir() else []
    return any(r["kind"] == ("process" if engine == "builtin" else "start") for r in records)


def _kill_mid_step(tmp_path: Path, bed: Path, templates: str, runs: Path, engine: str,
                   after: float = 0.0) -> Path:
    """A driver killed with kill -9 while its step runs on the host (`after` seconds into it)."""
    marks = tmp_path / "marks" / "h1.log"
    proc = subprocess.Popen(_args(bed, templates, runs, engine), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        wait_for(lambda: marks.exists() and marks.read_text().endswith("begin\n"), seconds=120,
                 what="the step to begin on its host")
        run_dir = next(runs.iterdir())
        wait_for(lambda: _started(run_dir, engine), what="the step's start in the journal")
        if after:
            import time
            time.sleep(after)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return run_dir


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_step_that_ends_between_the_question_and_the_stop_is_taken_as_it_ended(lab, tmp_path, engine):
    from app.run.session import RunSession
    bed, templates = _bed(tmp_path, _access(lab, engine))
    runs = tmp_path / "runs"
    marks = tmp_path / "marks" / "h1.log"
    run_dir = _kill_mid_step(tmp_path, bed, templates, runs, engine)
    assert marks.read_text() == "begin\n"
    events: list = []

    def ask(question):
        # the host said "still running"; before the answer reaches it, the step ends by itself
        assert isinstance(question, E.StillRunning)
        (tmp_path / "marks" / "h1.release").touch()
        wait_for(lambda: marks.read_text().endswith("end\n"), what="the step's end")
        import time
        time.sleep(0.5)             # and its exit status is recorded on the host
        return "stop"

    extra = [f"ansible_python_interpreter={sys.executable}"] if engine == "ansible" else []
    session = RunSession.from_file(bed, templates=[templates], runs_dir=runs, ask=ask, on_event=events.append,
                                   engine=engine, extra_vars=extra)
    try:
        assert session.resume(run_dir.name)
        session.run(session.steps)
    finally:
        session.close()
    leftovers = [(e.what, e.number) for e in events if isinstance(e, E.Leftover)]
    assert leftovers, "\n".join(map(repr, events))
    assert leftovers == [("stopping", leftovers[0][1]), ("ended", 0)], leftovers
    assert marks.read_text() == "begin\nend\n"          # never run a second time
    records = J.read_records(run_dir)[0]
    assert J.replay(records)[("1.1", "h1")].status == J.OK
    starts = [bool(r.get("adopted")) for r in records if r["kind"] == "start"]
    assert starts == [False, True]          # the first start, then its result taken over


# the table: (engine, case); each case draws its own kill point, end of the step and resume delay
TABLE = ([pytest.param("builtin", n, id=f"builtin-{n}") for n in range(4)]
         + [pytest.param("ansible", n, id=f"ansible-{n}", marks=_ANSIBLE_MARKS) for n in range(2)])


@pytest.mark.slow
@pytest.mark.parametrize("engine, case", TABLE)
def test_stop_at_random_points_never_runs_a_finished_step_again(lab, tmp_path, engine, case):
    import time
    rng = random.Random(f"{engine}-{case}")
    bed, templates = _bed(tmp_path, _access(lab, engine))
    runs = tmp_path / "runs"
    marks = tmp_path / "marks" / "h1.log"
    # Ansible asks and stops in two ansible-playbook passes seconds apart: its steps end later
    kill_after, resume_after = rng.uniform(0, 1.0), rng.uniform(0, 1.5)
    release_after = rng.uniform(0, 3.0 if engine == "builtin" else 8.0)
    run_dir = _kill_mid_step(tmp_path, bed, templates, runs, engine, after=kill_after)
    # the step ends by itself at a random moment, perhaps while the resume is deciding
    releaser = subprocess.Popen(["sh", "-c", f"sleep {release_after:.3f}; touch {tmp_path / 'marks' / 'h1.release'}"])
    time.sleep(resume_after)
    r = subprocess.run(_args(bed, templates, runs, engine, "--resume", run_dir.name, "--still-running", "stop"),
                       capture_output=True, text=True, timeout=100, stdin=subprocess.DEVNULL)
    releaser.wait(timeout=30)
    said = f"kill at {kill_after:.2f} s, step ends {release_after:.2f} s, resume at {resume_after:.2f} s:\n"
    assert r.returncode == EXIT_OK, said + r.stdout + r.stderr
    lines = marks.read_text().splitlines()
    # the script ran to its end exactly once: a stopped copy has no end, a finished one never ran again
    assert lines.count("end") == 1 and lines[-1] == "end", said + repr(lines) + r.stdout
    assert J.replay(J.read_records(run_dir)[0])[("1.1", "h1")].status == J.OK, said + r.stdout
    if "taking its result" in r.stdout:
        assert lines == ["begin", "end"], said + r.stdout

