"""The run record's parts, quickly (the real-X runs of tests/test_run_record_x.py use them whole):
the journal refuses another run's or another bed's record, an adopted job is read on from where
the dead driver stopped and counted once, samples are written once and read back whole and
fast with their gaps, coverage, time left from stated durations, fio's reports as figures."""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pytest

from app.metrics import sample as M
from app.metrics.sample import Sample
from app.run import journal as J


def test_the_journal_refuses_a_record_for_another_run_or_from_another_bed(tmp_path):
    owner = J.Writer("run-a", "a" * 64)
    journal = J.Journal(tmp_path, owner=owner)
    journal.record("mark", step="3.3", host="-", status=J.DONE, writer=owner)
    for stranger in (J.Writer("run-b", "a" * 64), J.Writer("run-a", "b" * 64)):
        with pytest.raises(J.JournalRefused, match="nothing was written"):
            journal.record("mark", step="3.4", host="-", status=J.DONE, writer=stranger)
    journal.close()
    marks = [r for r in J.read_records(tmp_path)[0] if r["kind"] == "mark"]
    assert [m["step"] for m in marks] == ["3.3"] and marks[0]["bed"] == "a" * 12


def test_an_adopted_job_is_one_attempt_from_its_first_start_and_read_on_after_the_lines_taken(tmp_path):
    log = tmp_path / "3.2@h.log"
    log.write_bytes(b"--- attempt 1 at T\n{\n  \"a\" : 1\n[stderr] warn\n--- adopted the job of attempt 1 at U\n"
                    b"}\n[check] test -s x\n")
    taken_out, taken_err, tail = J.taken_output(log)
    assert (taken_out, taken_err) == (3, 1) and tail == ["{", '  "a" : 1', "}"]
    records = [{"kind": "start", "step": "3.2", "host": "h", "time": "2026-01-01T00:00:00+00:00", "attempt": 1},
               {"kind": "process", "step": "3.2", "host": "h", "pid": 7},
               {"kind": "start", "step": "3.2", "host": "h", "time": "2026-01-01T00:00:30+00:00", "attempt": 1,
                "adopted": True}]
    state = J.replay(records, driven=True)[("3.2", "h")]
    assert state.attempts == 1 and state.started == "2026-01-01T00:00:00+00:00"


def test_a_report_the_dead_driver_logged_but_never_recorded_is_recorded_by_the_driver_that_adopts_the_step(tmp_path):
    """A driver killed between writing fio's report to the step's output log and recording its
    samples: the adopting driver reads on after the lines taken, so the report is not streamed
    again; its samples are recorded from the taken lines, each sample once."""
    from app.metrics.results import load_samples
    from app.metrics.streams import FioStatusParser
    from app.run.metrics_tap import MetricsTap
    from app.run.plan import Task
    lines = (Path(__file__).parent / "data" / "metrics" / "fio_status_stream.json").read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line == "{"]
    assert len(starts) == 4
    task = Task("3.2", "c1", "bash", "fio --name=t1 --output-format=json --status-interval=1")
    dead = MetricsTap(tmp_path)
    dead.task_started(task)
    for line in lines[:starts[2]]:              # reports 1 and 2 recorded
        dead.output(task, "stdout", line)
    dead.recorder.close()                       # killed: report 3 was in the output log, not recorded
    adopting = MetricsTap(tmp_path)
    adopting.task_started(task)
    adopting.output_taken(task, lines[:starts[3]])
    for line in lines[starts[3]:]:
        adopting.output(task, "stdout", line)
    adopting.task_finished(task, J.TaskState("3.2", "c1", J.OK))
    adopting.close()
    whole = FioStatusParser("c1")
    expected = [s.timestamp for line in lines for s in whole.feed(line) if s.source == "c1" and s.metric == M.IOPS]
    recorded = [s.timestamp for s in load_samples(tmp_path) if s.source == "c1" and s.metric == M.IOPS]
    assert len(expected) == 4 and recorded == expected


def test_a_follower_starts_after_the_lines_already_taken_and_keeps_the_output_when_its_driver_is_gone():
    from app.remote import jobs
    script = jobs.follow_script(jobs.Job("r", "3.2", "h", skip_out=120, skip_err=2), "/tmp/x")
    assert '-n +121 out' in script and '-n +3 err' in script
    # a tail killed by a broken pipe (its driver died): out/err kept for the resume that adopts it
    assert "kept() { [ $o -ge 128 ] || [ $r -ge 128 ]; }" in script and "kept || rm -f script out err" in script
    kept = jobs.follow_script(jobs.Job("r", "3.2", "h", keep_files=True), "/tmp/x")
    assert "kept() { true; }" in kept and "-n +1 out" in kept            # (the Ansible engine's followers)
    assert jobs.parse_times("1795850000.25 1795850060.75") == (1795850000.25, 1795850060.75)
    assert jobs.parse_times("1795850000.%N -") == (1795850000.0, None)


def _samples(t0: float, seconds: range, host: str = "h1") -> list[Sample]:
    return [Sample(t0 + i, host, metric, float(i), unit) for i in seconds
            for metric, unit in ((M.IOPS, "IO/s"), (M.READ_LATENCY_MS, "ms"))]


def test_samples_are_recorded_once_and_read_back_whole_with_the_lines_the_index_missed(tmp_path):
    from app.metrics.history import load_series
    from app.metrics.record import METRICS_FILE, MetricsRecorder
    rec = MetricsRecorder(tmp_path)
    rec.append(_samples(1000.0, range(10)))
    rec.close()
    rec = MetricsRecorder(tmp_path)            # a driver that adopts the step: the same reports again, then new
    rec.append(_samples(1000.0, range(5, 15)))
    rec.close()
    lines = (tmp_path / METRICS_FILE).read_text().splitlines()
    assert len(lines) == 30
    # a line the index does not hold (the driver died between the two writes)
    with open(tmp_path / METRICS_FILE, "a") as fh:
        fh.write(json.dumps([1015.0, "h1", M.IOPS, 15.0, "IO/s"]) + "\n")
    series = {(s.source, s.metric): s for s in load_series(tmp_path)}
    assert series[("h1", M.IOPS)].t.tolist() == [1000.0 + i for i in range(16)]
    assert series[("h1", M.READ_LATENCY_MS)].t.size == 15


def test_a_run_recorded_before_the_index_is_read_from_its_text(tmp_path):
    from app.metrics.history import load_series
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps([1000.0 + i, "h1", M.IOPS, None if i == 3 else 5.0,
                                                                "IO/s"]) + "\n" for i in range(6)) + '[1006.0, "h1"')
    (s,) = load_series(tmp_path)
    assert s.t.size == 6 and math.isnan(s.v[3])


def test_coverage_names_how_much_of_its_step_a_run_rests_on():
    from app.metrics.coverage import coverage
    start = {"kind": "start", "step": "3.2", "host": "h1", "time": "2026-11-28T08:00:00+00:00", "stated_s": 60}
    t0 = 1795852800.0         # 2026-11-28 08:00:00 UTC
    cut = coverage([start], _samples(t0 + 1, range(9)))
    assert cut[0].covered_s == 9 and cut[0].span_s == 60 and not cut[0].enough and not cut[0].ended
    end = {"kind": "end", "step": "3.2", "host": "h1", "time": "2026-11-28T08:01:00.6+00:00", "seconds": 60.6}
    whole = coverage([start, end], _samples(t0 + 1, range(60)))
    assert whole[0].enough and "60 s of samples over the 60 s step 3.2 states, ran 60.6 s (100%)" in whole[0].text()
    gap = coverage([start, end], _samples(t0 + 1, [*range(20), *range(45, 60)]))
    assert not gap[0].enough and "no samples between" in gap[0].text() and "(26 s)" in gap[0].text()


def test_coverage_follows_what_ran_on_the_host_when_a_timed_out_steps_copy_was_adopted():
    """The step timed out at 10 s while its stop never reached the host; its copy ran its 60 s there
    and a resume at 40 s adopted it: the samples of those 60 s are the step's, not split between a
    10 s window and one from the resume's time."""
    from app.metrics.coverage import coverage
    t0 = 1795852800.0         # 2026-11-28 08:00:00 UTC
    at = "2026-11-28T08:{:02d}:{:04.1f}+00:00".format
    step = {"step": "3.2", "host": "h1"}
    records = [{"kind": "start", "time": at(0, 0), "stated_s": 60, "attempt": 1, **step},
               {"kind": "end", "time": at(0, 10), "status": J.TIMEOUT, "seconds": 10.0, **step},
               {"kind": "start", "time": at(0, 40), "stated_s": 60, "attempt": 1, "adopted": True, **step},
               {"kind": "end", "time": at(1, 10.6), "status": J.OK, "seconds": 60.6, **step,
                "ran_from": at(0, 0.2), "ran_until": at(1, 0.8)}]
    (cover,) = coverage(records, _samples(t0 + 1, range(60)))
    assert cover.covered_s == 60 and cover.enough and cover.ran_s == 60.6, cover.text()


def test_time_left_comes_from_the_load_s_stated_duration_not_the_mean_of_quick_steps():
    from app.run.plan import RunStep, Task
    from app.run.standing import estimate_left
    steps = [RunStep("1.1", "install", "s", "S", "h", [Task("1.1", "h", "bash", "true")]),
             RunStep("3.2", "load", "run", "R", "h", [Task("3.2", "h", "bash", "fio")], stated_seconds=90)]
    states = {"1.1": J.TaskState("1.1", "h", J.OK, seconds=2.0), "3.2": J.TaskState("3.2", "h")}
    left, unknown = estimate_left(steps, lambda t: states[t.step])
    assert (left, unknown) == (90.0, 0)
    states["3.2"] = J.TaskState("3.2", "h", J.RUNNING, started=J.now_iso())
    left, _ = estimate_left(steps, lambda t: states[t.step], now=time.time() + 30)
    assert 59 <= left <= 61


FIO = Path(__file__).parent / "data" / "captures" / "fio"


def _status_lines(t_ms: int, ios: int) -> list[str]:
    job = {"jobname": "oltp", "job_runtime": 1000,
           "read": {"io_bytes": ios * 4096, "total_ios": ios, "runtime": 1000, "clat_ns": {"mean": 100000.0}},
           "write": {"io_bytes": 0, "total_ios": 0, "runtime": 0, "clat_ns": {"mean": 0.0}}}
    return json.dumps({"timestamp_ms": t_ms, "jobs": [job]}, indent=2).splitlines()


def test_the_output_pane_shows_fio_s_figures_and_the_raw_report_one_click_away(qtbot):
    from app.run.events import OutputLine
    from widgets.run_output import OutputPane
    pane = OutputPane()
    qtbot.addWidget(pane)
    pane.follow_fio("3.2", "h1")
    lines = ["starting"] + _status_lines(1795852801000, 1000) + _status_lines(1795852802000, 3000)
    pane.add([OutputLine("r", "3.2", "h1", "stdout", line, 0.0) for line in lines])
    shown = pane.toPlainText()
    assert "[3.2 h1] starting" in shown and "[3.2 h1] fio 08:00:02  2,000 IOPS · read 0.1 ms" in shown
    assert '"jobs"' not in shown
    pane.raw.setChecked(True)
    assert '"jobs"' in pane.toPlainText()


def test_a_reopened_run_draws_its_gap_as_a_gap_and_names_it(qtbot, tmp_path):
    from app.metrics.record import MetricsRecorder
    from widgets.dashboard import MetricsDashboard
    rec = MetricsRecorder(tmp_path)
    rec.append(_samples(1795852800.0, [*range(20), *range(50, 60)]))
    rec.close()
    dash = MetricsDashboard()
    qtbot.addWidget(dash)
    assert dash.show_history(tmp_path) == 60
    t, v = dash.store.series("h1", M.IOPS)
    assert np.isnan(v[(t > 1795852819) & (t < 1795852850)]).all() and np.isfinite(v).sum() == 30
    assert "no samples between 08:00:19 and 08:00:50 (31 s)" in dash.problems.toPlainText()
    dash.shutdown()


def test_a_reopened_run_names_no_gap_between_two_loads_only_one_inside_a_load(qtbot, tmp_path):
    """A failover run's manual steps between two loads collect nothing because nothing runs: the
    reopened plots said "nothing was collected then (the run's driver was down …)" of those 14 minutes
    (h38w).  Only a stretch inside a load step's window is a gap."""
    from app.metrics.record import MetricsRecorder
    from app.run import journal as J
    from widgets.dashboard import MetricsDashboard
    t0 = 1795852800.0         # 2026-11-28 08:00:00 UTC
    rec = MetricsRecorder(tmp_path)
    # load 1: 08:00:00-08:00:20 whole; load 2: 08:02:00-08:02:30 with 10 s missing in its middle
    rec.append(_samples(t0, [*range(20), *range(120, 130), *range(140, 150)]))
    rec.close()
    with J.Journal(tmp_path) as journal:
        for step, start, seconds in (("7.46", 0, 20), ("7.64", 120, 30)):
            journal.record("start", step=step, host="h1", time=J.iso_of(t0 + start), stated_s=seconds)
            journal.record("end", step=step, host="h1", status=J.OK, time=J.iso_of(t0 + start + seconds),
                           seconds=seconds)
    dash = MetricsDashboard()
    qtbot.addWidget(dash)
    dash.show_history(tmp_path)
    said = dash.problems.toPlainText()
    assert "08:00:19" not in said, said                      # between the loads: nothing ran
    assert "no samples between 08:02:09 and 08:02:20" in said, said
    dash.shutdown()


def test_a_steps_samples_are_on_disk_before_the_journal_says_the_step_ended(tmp_path, monkeypatch):
    """A power cut right after a step's end is recorded keeps every figure of the step: the
    record of samples is synced (fsync) before the journal's end record is, with a real fio load
    run through the built-in engine on this machine."""
    from app.metrics.record import METRICS_FILE
    from app.run.session import RunSession
    from tests.run_beds import write_fio_bed
    bed = write_fio_bed(tmp_path / "fio.yaml", "c1", tmp_path / "c1.dat", {"transport": "local"}, minutes=0.04)
    session = RunSession.from_file(bed, runs_dir=tmp_path / "runs", ask=lambda q: None)
    load = next(s for s in session.all_steps if s.section == "run" and any("fio" in t.script for t in s.tasks))
    real_fsync, synced, seen = os.fsync, {}, {}

    def fsync(fd):
        real_fsync(fd)
        path = os.readlink(f"/proc/self/fd/{fd}")
        synced[path] = os.fstat(fd).st_size
        if path.endswith("journal.jsonl") and '"kind":"end"' in Path(path).read_text() and "end" not in seen:
            metrics = str(Path(path).parent / METRICS_FILE)
            seen["end"] = (synced.get(metrics), os.path.getsize(metrics))
    monkeypatch.setattr(os, "fsync", fsync)
    assert session.start_new(load.number)
    session.run([load])
    session.close()
    monkeypatch.undo()
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert J.replay(J.read_journal(run_dir).records)[(load.number, "c1")].status == J.OK
    synced_size, size_then = seen["end"]
    assert size_then > 0 and synced_size == size_then      # every sample there when the end was, and synced


def test_a_new_runs_folder_and_journal_are_named_on_disk_before_a_step_is_recorded(tmp_path, monkeypatch):
    """A power cut after a step's start was recorded keeps the run: the runs folder's entry for the
    run, and the run folder's entry for its journal, are synced (fsync of the folders)."""
    real_fsync, synced = os.fsync, []

    def fsync(fd):
        real_fsync(fd)
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        synced.append((path, sorted(p.name for p in path.iterdir()) if path.is_dir() else None))
    monkeypatch.setattr(os, "fsync", fsync)
    info = J.new_run("bed.yaml", "a" * 64, root=tmp_path / "runs")
    journal = J.Journal(info.dir)
    journal.record("start", step="3.1", host="h", shell="bash", attempt=1)
    journal.close()
    monkeypatch.undo()
    assert any(p == tmp_path / "runs" and info.id in names for p, names in synced if names is not None)
    names_before_record = [names for p, names in synced[:-1] if p == info.dir]
    assert any("journal.jsonl" in names for names in names_before_record)
