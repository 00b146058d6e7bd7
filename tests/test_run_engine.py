"""The run engine and `testbed-studio run` on this machine's own shell (the local transport).
The same engine over real sshd hosts is in test_run_remote.py."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.run import journal as J
from app.run.cli_run import EXIT_FAILED, EXIT_MANUAL, EXIT_OK, EXIT_PREFLIGHT
from app.run.plan import run_steps, select_steps, stages
from tests.run_beds import TEMPLATES, write_bed
from topology.fileformat import load
from topology.methodology import generate

LOCAL = [{"id": f"lin{i}", "transport": "local"} for i in range(1, 4)]


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=os.environ.copy())


def _host_steps(bed_path: Path):
    bed = load(bed_path)
    meth = generate(bed, extra_dirs=[TEMPLATES])
    steps = run_steps(meth, {a.host: a.transport for a in bed.access})
    return [s for s in steps if s.section == "hosts"]


def _number(steps, template_id: str, host: str) -> str:
    return next(s.number for s in steps if s.template.endswith("#" + template_id) and s.target == host)


def _section(steps) -> str:
    return steps[0].number.split(".")[0]


@pytest.fixture
def bed(tmp_path):
    return write_bed(tmp_path / "bed.yaml", LOCAL, mark_dir=tmp_path / "marks", work_s=0)


def test_the_same_step_on_every_host_runs_in_one_stage_with_a_lane_per_host(bed):
    steps = _host_steps(bed)
    (stage,) = stages(steps)
    assert sorted(stage.lanes) == ["lin1", "lin2", "lin3"]
    assert [s.template.split("#")[1] for s in stage.lanes["lin2"]] == ["hello", "mark", "work"]


@pytest.mark.slow
def test_a_run_executes_every_step_and_journals_start_and_end_per_host(bed, tmp_path):
    runs = tmp_path / "runs"
    steps = _host_steps(bed)
    r = _cli("run", str(bed), "--steps", _section(steps), "--runs-dir", str(runs), "--templates", TEMPLATES)
    assert r.returncode == EXIT_OK, r.stderr
    assert "complete" in r.stdout
    (run_dir,) = runs.iterdir()
    records, problems = J.read_records(run_dir)
    assert not problems
    ends = [x for x in records if x["kind"] == "end"]
    assert len(ends) == 9 and all(x["status"] == "ok" and x["exit_code"] == 0 for x in ends)
    starts = {(x["step"], x["host"]) for x in records if x["kind"] == "start"}
    assert starts == {(x["step"], x["host"]) for x in ends}
    hello = _number(steps, "hello", "lin2")
    log = (run_dir / "output" / f"{hello}@lin2.log").read_text()
    assert "host=lin2" in log and "[check] test -d /tmp" in log
    assert f"[{hello} lin2] host=lin2" in r.stdout          # output echoed live
    assert (tmp_path / "marks" / "lin1.visits").read_text() == "visit\n"


@pytest.mark.slow
def test_a_failed_step_stops_the_run_and_resume_reruns_only_what_did_not_succeed(bed, tmp_path):
    runs, marks = tmp_path / "runs", tmp_path / "marks"
    marks.mkdir()
    (marks / "lin2.fail").touch()          # the 'work' step fails on lin2 only
    steps = _host_steps(bed)
    r = _cli("run", str(bed), "--steps", _section(steps), "--runs-dir", str(runs), "--templates", TEMPLATES)
    assert r.returncode == EXIT_FAILED
    work2 = _number(steps, "work", "lin2")
    assert f"{work2} on lin2: failed - exit status 1" in r.stderr
    assert "--resume" in r.stderr
    (run_dir,) = runs.iterdir()
    state = J.replay(J.read_records(run_dir)[0])
    assert state[(work2, "lin2")].status == J.FAILED
    assert state[(_number(steps, "work", "lin1"), "lin1")].status == J.OK     # other lanes went on

    (marks / "lin2.fail").unlink()
    r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", TEMPLATES)
    assert r.returncode == EXIT_OK, r.stderr
    assert f"continuing at step {work2}" in r.stdout
    # the steps that had succeeded were not run again
    assert all((marks / f"lin{i}.visits").read_text() == "visit\n" for i in (1, 2, 3))
    state = J.replay(J.read_records(run_dir)[0])
    assert state[(work2, "lin2")].status == J.OK and state[(work2, "lin2")].attempts == 2


def test_a_step_past_its_timeout_is_stopped_and_reported(tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", LOCAL[:1], mark_dir=tmp_path / "m", work_s=30)
    steps = _host_steps(bed)
    t0 = time.monotonic()
    r = _cli("run", str(bed), "--steps", _section(steps), "--timeout", "1", "--runs-dir", str(tmp_path / "runs"),
             "--templates", TEMPLATES)
    assert time.monotonic() - t0 < 20
    assert r.returncode == EXIT_FAILED
    assert f"{_number(steps, 'work', 'lin1')} on lin1: timeout - still running after 1 s: stopped" in r.stderr


def test_dry_run_prints_every_command_and_where_it_runs_without_running_it(bed, tmp_path):
    steps = _host_steps(bed)
    r = _cli("run", str(bed), "--dry-run", "--steps", _section(steps), "--runs-dir", str(tmp_path / "runs"),
             "--templates", TEMPLATES)
    assert r.returncode == EXIT_OK, r.stderr
    assert "lin3 via this machine (bash)" in r.stdout
    assert f"$ mkdir -p {tmp_path / 'marks'} && echo visit >>" in r.stdout
    assert "(3 hosts in parallel)" in r.stdout
    assert not (tmp_path / "marks").exists() and not (tmp_path / "runs").exists()


def test_a_manual_step_stops_a_non_interactive_run_until_it_is_ticked_off(tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", LOCAL[:1], mark_dir=tmp_path / "m", manual_check=True)
    steps = _host_steps(bed)
    cabling = _number(steps, "cabling", "lin1")
    runs = tmp_path / "runs"
    r = _cli("run", str(bed), "--steps", _section(steps), "--runs-dir", str(runs), "--templates", TEMPLATES)
    assert r.returncode == EXIT_MANUAL
    assert f"step {cabling} is done by hand: Check by eye that the cables of lin1 are seated." in r.stdout
    run_id = next(runs.iterdir()).name
    assert f"--resume {run_id} --done {cabling}" in r.stdout
    r = _cli("run", str(bed), "--resume", run_id, "--done", cabling, "--runs-dir", str(runs), "--templates", TEMPLATES)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    state = J.replay(J.read_records(runs / run_id)[0])
    assert state[(cabling, "lin1")].status == J.DONE


def test_preflight_finds_a_missing_tool_before_anything_changes(tmp_path):
    tdir = tmp_path / "tpl" / "linux"
    tdir.mkdir(parents=True)
    (tdir / "hosts.yaml").write_text(
        "section: hosts\nsteps:\n  - id: x\n    foreach: server\n    text: Use the tool on {host.id}.\n"
        "    automation:\n      - shell: bash\n        script: touch {server.settings.mark_dir}; "
        "no-such-tool-xyz --go\n")
    bed = write_bed(tmp_path / "bed.yaml", LOCAL[:1], mark_dir=tmp_path / "touched")
    runs = tmp_path / "runs"
    r = _cli("run", str(bed), "--runs-dir", str(runs), "--templates", str(tmp_path / "tpl"), "--skip-manual")
    assert r.returncode == EXIT_PREFLIGHT, r.stdout + r.stderr
    assert "pre-flight lin1: PROBLEM - not installed: no-such-tool-xyz" in r.stdout
    assert not (tmp_path / "touched").exists()
    records, _ = J.read_records(next(runs.iterdir()))
    assert not any(x["kind"] == "start" for x in records)


def test_killing_the_application_mid_step_leaves_the_journal_readable_and_resume_reruns_that_step(tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", LOCAL[:2], mark_dir=tmp_path / "marks", work_s=3)
    steps = _host_steps(bed)
    runs = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(bed), "--steps", _section(steps),
                             "--runs-dir", str(runs), "--templates", TEMPLATES],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    work1 = _number(steps, "work", "lin1")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run_dirs = list(runs.iterdir()) if runs.exists() else []
        if run_dirs and any(x["kind"] == "start" and x["step"] == work1
                            for x in J.read_records(run_dirs[0])[0]):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the work step never started")
    os.killpg(proc.pid, signal.SIGKILL)      # the application dies at once
    proc.wait(timeout=10)
    (run_dir,) = runs.iterdir()
    records, problems = J.read_records(run_dir)
    assert not problems or all("incomplete record" in p for p in problems)
    state = J.replay(records)
    assert state[(work1, "lin1")].status == J.INTERRUPTED
    assert state[(_number(steps, "mark", "lin1"), "lin1")].status == J.OK

    # the step runs as a job of its own on the host and may outlive the driver: stop it and run it again
    # (tests/test_run_safety.py covers waiting for it and adopting it)
    r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", TEMPLATES,
             "--still-running", "stop")
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert f"continuing at step {_number(steps, 'work', 'lin1')}" in r.stdout or "continuing at step" in r.stdout
    assert (tmp_path / "marks" / "lin1.visits").read_text() == "visit\n"   # 'mark' was not repeated
    state = J.replay(J.read_records(run_dir)[0])
    assert state[(work1, "lin1")].status == J.OK


def test_a_torn_last_journal_line_is_reported_and_ignored(tmp_path):
    run_dir = tmp_path / "r"
    with J.Journal(run_dir) as j:
        j.record("start", step="1.1", host="a")
        j.record("end", step="1.1", host="a", status="ok", exit_code=0)
        j.record("start", step="1.2", host="a")
    with open(run_dir / "journal.jsonl", "ab") as fh:
        fh.write(b'{"kind":"end","step":"1.2","ho')          # killed mid-write
    records, problems = J.read_records(run_dir)
    assert len(records) == 3 and len(problems) == 1 and "incomplete record" in problems[0]
    state = J.replay(records)
    assert state[("1.1", "a")].status == J.OK and state[("1.2", "a")].status == J.INTERRUPTED
    with J.Journal(run_dir) as j:        # appending after a torn line does not glue onto it
        j.record("end", step="1.2", host="a", status="ok", exit_code=0)
    records, _ = J.read_records(run_dir)
    assert J.replay(records)[("1.2", "a")].status == J.OK


def test_step_selection_understands_sections_and_ranges(bed):
    steps = _host_steps(bed)
    sec = _section(steps)
    assert len(select_steps(steps, sec)) == 9
    assert [s.number for s in select_steps(steps, f"{sec}.2-{sec}.4")] == [f"{sec}.{i}" for i in (2, 3, 4)]
    with pytest.raises(ValueError, match="matches no step"):
        select_steps(steps, "99")


def test_runs_lists_each_run_with_where_it_stands(bed, tmp_path):
    runs = tmp_path / "runs"
    steps = _host_steps(bed)
    _cli("run", str(bed), "--steps", _section(steps), "--runs-dir", str(runs), "--templates", TEMPLATES)
    r = _cli("runs", "--runs-dir", str(runs))
    assert "complete" in r.stdout and "9 ok" in r.stdout


def test_a_password_answered_to_the_session_is_kept_by_the_session_for_the_next_connection(tmp_path):
    from app.remote.credentials import CredentialStore
    from app.run import events as E
    from app.run.session import RunSession
    from topology.model import Bed, BedInfo, HostAccess
    bed = Bed(bed=BedInfo(name="b"), access=[HostAccess(host="hv1", transport="winrm", address="127.0.0.1",
                                                        user="labadmin", credential="lab-admins")])
    asked: list = []

    def ask(question):
        asked.append(question)
        return E.PasswordAnswer("typed-secret", remember=False) if isinstance(question, E.PasswordNeeded) else None
    store = CredentialStore(service="testbed-studio-test-no-such")
    session = RunSession(bed, None, credentials=store, ask=ask, runs_dir=tmp_path / "runs")
    session.factory("hv1")
    session.factory("hv1")
    assert [(q.host, q.user, q.entry) for q in asked] == [("hv1", "labadmin", "lab-admins")]   # asked once
    assert store.get("lab-admins") == "typed-secret"
    assert "typed-secret" not in repr(asked) and "typed-secret" not in repr(E.PasswordAnswer("typed-secret"))
