"""`run --engine ansible` resumed after a step timed out while its link was cut: the driver's stop
never reached the host and the step's job went on there.  The resume settles it as the built-in
engine does, through the same choice (app.run.leftover_choice, RunSession.settle_leftovers): a
copy that ended meanwhile is taken as it ended, never run a second time; one still running is
stopped without a question before the step runs again.  Real ansible-playbook on a local host,
real jobs (app.remote.jobs)."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

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
