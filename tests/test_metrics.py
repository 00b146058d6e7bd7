"""Metric parsers on output captured from the real tools on this machine (fio 3.33 and
sysstat's iostat, tests/data/metrics/), bad input, and the results the reports publish."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.metrics import sample as M
from app.metrics.results import (
    MetricsRecorder,
    compare,
    load_samples,
    median_of_runs,
    results_table,
    summarize,
    write_csv,
)
from app.metrics.sample import Sample
from app.metrics.streams import FioStatusParser, IostatJsonParser, fio_final_summary

DATA = Path(__file__).parent / "data" / "metrics"


def _feed(parser, lines):
    out = []
    for line in lines:
        out += parser.feed(line)
    return out + parser.close()


def test_fio_status_reports_become_per_second_figures_that_add_up_to_fios_totals():
    parser = FioStatusParser("c1")
    samples = _feed(parser, (DATA / "fio_status_stream.json").read_text().splitlines())
    assert parser.problems == [] and parser.reports == 4
    iops = [s for s in samples if s.source == "c1" and s.metric == M.IOPS]
    assert len(iops) == 4 and all(s.unit == "IO/s" for s in iops)
    # the sum of per-interval I/Os is fio's own total, to rounding
    final = parser.final_report["jobs"][0]
    total_ios = final["read"]["total_ios"] + final["write"]["total_ios"]
    t = [s.timestamp for s in iops]
    first_report, _ = json.JSONDecoder().raw_decode((DATA / "fio_status_stream.json").read_text())
    # the first report covers the job's run time so far; later ones the time since the last
    intervals = [first_report["jobs"][0]["job_runtime"] / 1000] + [b - a for a, b in zip(t, t[1:])]
    counted = sum(s.value * dt for s, dt in zip(iops, intervals))
    assert counted == pytest.approx(total_ios, rel=0.02)
    fio = fio_final_summary(parser.final_report)
    lat = [s.value for s in samples if s.source == "c1" and s.metric == M.READ_LATENCY_MS]
    assert sum(lat) / len(lat) == pytest.approx(fio["read_latency_ms"], rel=0.1)
    assert {s.source for s in samples} == {"c1", "c1/t1"}


def test_a_truncated_or_garbled_fio_report_leaves_a_gap_and_a_message_and_parsing_goes_on():
    lines = (DATA / "fio_status_stream.json").read_text().splitlines()
    second = lines.index("{", 1)
    damaged = lines[:second - 5] + ["}"] + ["this is not json"] + lines[second:]
    parser = FioStatusParser("c1")
    samples = _feed(parser, damaged)
    assert any("could not be read" in p for p in parser.problems)
    assert any("outside any report" in p for p in parser.problems)
    iops = [s.value for s in samples if s.source == "c1" and s.metric == M.IOPS]
    assert any(math.isnan(v) for v in iops) and sum(1 for v in iops if not math.isnan(v)) == 3


def test_a_collector_that_dies_mid_report_ends_with_a_gap_not_an_exception():
    lines = (DATA / "fio_status_stream.json").read_text().splitlines()
    parser = FioStatusParser("c1")
    samples = _feed(parser, lines[:400])
    assert "ended in the middle of a report" in parser.problems[-1]
    assert math.isnan(samples[-1].value)


def test_iostat_json_stream_gives_per_device_samples_and_notes_a_device_that_disappears():
    parser = IostatJsonParser("c1", clock=lambda: 1000.0)
    samples = _feed(parser, (DATA / "iostat_stream.json").read_text().splitlines())
    devices = {s.source for s in samples}
    assert devices and all(d.startswith("c1/") for d in devices)
    assert {s.metric for s in samples} >= {M.IOPS, M.READ_LATENCY_MS, M.WRITE_LATENCY_MS, M.QUEUE_LENGTH}
    p = IostatJsonParser("c1", clock=lambda: 1.0)
    _feed(p, ['"disk": [', '{"disk_device": "sda", "r/s": 1, "w/s": 2, "r_await": 1, "w_await": 1}', "]"])
    out = _feed(p, ['"disk": [', '{"disk_device": "sdb", "r/s": 1, "w/s": 2}', "]"])
    assert "sda disappeared" in p.problems[-1]
    assert any(s.source == "c1/sda" and math.isnan(s.value) for s in out)


def test_live_iostat_output_from_this_machine_parses():
    r = subprocess.run(["iostat", "-d", "-x", "-o", "JSON", "1", "2"], capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        pytest.skip(f"iostat cannot run here: {r.stderr.strip()}")
    json.loads(r.stdout)            # the whole document is valid JSON
    samples = _feed(IostatJsonParser("me"), r.stdout.splitlines())
    assert samples and not any(math.isnan(s.value) for s in samples if s.metric == M.IOPS)


def test_summaries_give_average_95th_percentile_and_gaps():
    samples = [Sample(1000 + i, "h1", M.READ_LATENCY_MS, float(i + 1), "ms") for i in range(100)]
    samples.append(Sample(1100, "h1", M.READ_LATENCY_MS, math.nan, "ms"))
    (s,) = summarize(samples)
    assert s.average == pytest.approx(50.5) and s.p95 == pytest.approx(95.05)
    assert (s.minimum, s.maximum, s.seconds, s.gaps) == (1.0, 100.0, 100, 1)
    table = results_table([s])
    assert "read_latency_ms" in table and "(1 s gap)" in table


def test_median_of_runs_and_the_comparison_say_how_they_are_computed():
    assert median_of_runs([5.0, 1.0, 3.0]) == 3.0
    assert median_of_runs([4.0, 1.0, 2.0, 3.0]) == 2.5          # even N: mean of the two middle runs
    c = compare(12345, 12913, "one path", "two paths", "IOPS")
    assert c.percent == pytest.approx(4.6, abs=0.05)
    assert c.formula.startswith("+4.6 % = (two paths 12,913 IOPS − one path 12,345 IOPS) / one path")
    assert "the denominator is one path" in c.formula
    with pytest.raises(ValueError):
        compare(0, 1)


def test_recorded_samples_survive_a_torn_last_line_and_export_as_csv(tmp_path):
    rec = MetricsRecorder(tmp_path)
    rec.append([Sample(1.0, "h1", M.IOPS, 10.0, "IO/s"), Sample(2.0, "h1", M.IOPS, math.nan, "IO/s")])
    rec.close()
    with open(tmp_path / "metrics.jsonl", "a") as fh:
        fh.write('[3.0, "h1", "io')                       # killed mid-write
    samples = load_samples(tmp_path)
    assert len(samples) == 2 and math.isnan(samples[1].value)
    out = tmp_path / "r.csv"
    write_csv(out, summarize(samples), samples)
    text = out.read_text()
    assert text.startswith("kind,source,metric")
    assert "summary,h1,iops,IO/s,10" in text and "sample,2.000,h1,iops,IO/s," in text


def test_the_results_command_prints_the_table_and_judges_the_criteria(tmp_path):
    from app.run import journal as J
    bed = tmp_path / "bed.yaml"
    bed.write_text("""\
format_version: 1
bed: {name: r}
servers:
  - {id: c1, role: load_client}
workloads:
  - id: db
    tool: fio
    driver: c1
    criteria:
      - {metric: db_read_latency_avg_ms, comparison: "<", threshold: 20, unit: ms}
""")
    info = J.new_run(str(bed), "", root=tmp_path / "runs")
    rec = MetricsRecorder(info.dir)
    rec.append([Sample(1000 + i, "c1", M.READ_LATENCY_MS, 25.0, "ms") for i in range(5)])
    rec.close()
    r = subprocess.run([sys.executable, "-m", "app.cli", "results", info.id, "--runs-dir", str(tmp_path / "runs"),
                        "--csv", str(tmp_path / "out.csv")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "FAIL  db: DB read latency avg < 20 ms - average 25 ms on c1; 5 s of 5 s beyond the line" in r.stdout
    assert (tmp_path / "out.csv").exists()


def test_all_hosts_series_sums_iops_averages_latency_per_second_and_keeps_gaps():
    from app.metrics.series import SeriesStore
    store = SeriesStore(capacity=10)
    nan = float("nan")
    t0 = 1_700_000_000.0
    a = [(t0 + 0.2, 100.0, 2.0), (t0 + 1.2, 110.0, 4.0), (t0 + 2.2, nan, nan), (t0 + 3.2, nan, nan)]
    b = [(t0 + 0.7, 50.0, 6.0), (t0 + 1.7, nan, nan), (t0 + 2.7, 70.0, 8.0), (t0 + 3.7, nan, nan)]
    for src, rows in (("h1", a), ("h2", b)):
        store.ingest([Sample(t, src, M.IOPS, iops, "IO/s") for t, iops, _ in rows]
                     + [Sample(t, src, M.READ_LATENCY_MS, lat, "ms") for t, _, lat in rows])
    t, iops = store.aggregate(M.IOPS, ["h1", "h2"], "sum")
    assert list(t) == [t0, t0 + 1, t0 + 2, t0 + 3]
    assert list(iops[:3]) == [150.0, 110.0, 70.0] and math.isnan(iops[3])   # both hosts silent: a gap
    _, lat = store.aggregate(M.READ_LATENCY_MS, ["h1", "h2"], "mean")
    assert list(lat[:3]) == [4.0, 4.0, 8.0] and math.isnan(lat[3])
    for metric, how in ((M.IOPS, "sum"), (M.READ_LATENCY_MS, "mean")):     # kept as samples arrive
        np.testing.assert_array_equal(np.array(store.all_hosts(metric, how)),
                                      np.array(store.aggregate(metric, ["h1", "h2"], how)))
    store.ingest([Sample(t0 + 0.5, "h1/sdb", M.IOPS, 999.0, "IO/s")])         # a device: not a host
    assert store.all_hosts(M.IOPS)[1][0] == 150.0
    assert store.time_span() == (t0 + 0.2, t0 + 3.7)
    # a ring full of newer samples forgets the oldest and the sum follows
    store.ingest([Sample(t0 + 4 + i, "h1", M.IOPS, 1.0, "IO/s") for i in range(10)])
    t, iops = store.aggregate(M.IOPS, ["h1", "h2"], "sum")
    assert t[0] == t0 and iops[-1] == 1.0 and store.series("h1", M.IOPS)[0][0] == t0 + 4


def test_two_samples_of_one_host_in_one_second_count_once_in_the_all_hosts_line():
    """fio's last status report and its final one land in the same wall-clock second (seen in the
    Run tab: lnx1 28,857 and 11,394 IOPS at 12:08:33, lnx2 35,500 and 34,176): the thick all-hosts
    line drew 110,000 IOPS where the two hosts together did about 55,000, at the end of every load.
    A host counts once per second (the mean of its samples in it), then the hosts are added up."""
    from app.metrics.series import SeriesStore
    t0 = 1_700_000_000.0
    rows = [("h1", 0.1, 28_857.0, 1.0), ("h1", 0.9, 11_394.0, 3.0), ("h2", 0.4, 35_500.0, 2.0),
            ("h2", 0.95, 34_176.0, 2.0), ("h1", 1.1, 30_000.0, 1.0), ("h2", 1.4, 30_000.0, 2.0)]
    live, recorded = SeriesStore(capacity=10), SeriesStore(capacity=10)
    for src, dt, iops, lat in rows:                        # live: one sample at a time
        live.ingest([Sample(t0 + dt, src, M.IOPS, iops, "IO/s"), Sample(t0 + dt, src, M.READ_LATENCY_MS, lat, "ms")])
    for src in ("h1", "h2"):                               # a recorded run: each series as one array
        mine = [r for r in rows if r[0] == src]
        recorded.ingest_arrays(src, M.IOPS, "IO/s", np.array([t0 + r[1] for r in mine]), np.array([r[2] for r in mine]))
        recorded.ingest_arrays(src, M.READ_LATENCY_MS, "ms", np.array([t0 + r[1] for r in mine]),
                               np.array([r[3] for r in mine]))
    batched = SeriesStore(capacity=10)                       # every host's samples in one batch
    batched.ingest([Sample(t0 + dt, src, m, x, u) for src, dt, iops, lat in rows
                    for m, x, u in ((M.IOPS, iops, "IO/s"), (M.READ_LATENCY_MS, lat, "ms"))])
    expected_iops = [(28_857.0 + 11_394.0) / 2 + (35_500.0 + 34_176.0) / 2, 60_000.0]
    for store in (live, recorded, batched):
        for t, iops in (store.all_hosts(M.IOPS, "sum"), store.aggregate(M.IOPS, ["h1", "h2"], "sum")):
            assert list(t) == [t0, t0 + 1]
            np.testing.assert_allclose(iops, expected_iops)
        for _, lat in (store.all_hosts(M.READ_LATENCY_MS, "mean"),
                       store.aggregate(M.READ_LATENCY_MS, ["h1", "h2"], "mean")):
            np.testing.assert_allclose(lat, [2.0, 1.5])    # each host's mean, then the mean of the hosts


def test_one_sample_a_second_is_held_as_an_array_batch_would_be_gaps_and_wrap_included():
    """The dashboard's collectors send one sample per series a second; that path writes the
    ring sample by sample and must hold what the array path holds: a silence drawn as a gap
    (a NaN between the two ends), the oldest forgotten when the ring wraps, None as a gap."""
    from app.metrics.series import SeriesStore
    t0 = 1_700_000_000.0
    times = [t0 + i for i in range(6)] + [t0 + 20 + i for i in range(8)]    # 14 s silent after 5
    values = [float(i) for i in range(len(times))]
    values[3] = None
    one_by_one, arrays = SeriesStore(capacity=10), SeriesStore(capacity=10)
    for t, v in zip(times, values):
        one_by_one.ingest([Sample(t, "h1", M.IOPS, v, "IO/s")])
        arrays.ingest_arrays("h1", M.IOPS, "IO/s", np.array([t]), np.array([np.nan if v is None else v]))
    t, v = one_by_one.series("h1", M.IOPS)
    np.testing.assert_array_equal(t, arrays.series("h1", M.IOPS)[0])
    np.testing.assert_array_equal(v, arrays.series("h1", M.IOPS)[1])
    assert t[0] == t0 + 5 and t[1] == (t0 + 5 + t0 + 20) / 2 and math.isnan(v[1])
    assert t[-1] == t0 + 27 and len(t) == 10
    assert [math.isnan(x) for x in v].count(True) == 1      # the silence; sample 3 was forgotten
    np.testing.assert_array_equal(np.array(one_by_one.all_hosts(M.IOPS)),
                                  np.array(arrays.all_hosts(M.IOPS)))


def test_peak_decimation_keeps_spikes_gaps_and_the_window_edges():
    from app.metrics.series import peak_decimate
    t = np.arange(3600.0)
    v = np.full(3600, 100.0)
    v[1234] = 5000.0               # a one-second spike
    v[2000:2003] = np.nan          # a three-second gap
    dt, dv = peak_decimate(t, v, 0.0, 3599.0, 450)
    assert dt.size <= 2 * 450 + 8 and np.nanmax(dv) == 5000.0 and np.nanmin(dv) == 100.0
    gap_at = dt[np.isnan(dv)]
    assert gap_at.size and all(1990 <= x <= 2010 for x in gap_at)
    # a window: only its points plus one on each side
    wt, wv = peak_decimate(t, v, 100.0, 160.0, 450)
    assert wt[0] == 99.0 and wt[-1] == 161.0 and wt.size == 63


def test_a_disk_counter_collector_that_dies_says_so_once_and_leaves_a_gap(tmp_path):
    """Real iostat on this machine through the local transport; it is made to stop after two
    intervals, as a collector does when its host goes away."""
    import shutil
    if shutil.which("iostat") is None:
        pytest.skip("needs sysstat (installed by .ci/setup.sh)")
    from dataclasses import replace

    from app.metrics.collectors import IOSTAT, HostCollector, tool_for
    from app.remote.local import LocalTransport
    samples, problems = [], []
    short = replace(IOSTAT, command="exec iostat -d -x -o JSON 1 2")
    c = HostCollector("here", short, lambda h: LocalTransport(h, workdir=tmp_path), samples.extend, problems.append)
    c.start()
    c._thread.join(20)
    assert not c.running
    devices = {s.source for s in samples if s.metric == M.IOPS}
    assert devices and all(d.startswith("here/") for d in devices)
    assert len(problems) == 1 and "iostat on here stopped" in problems[0] and "the load goes on" in problems[0]
    last = {s.source: s for s in samples if s.metric == M.IOPS}
    assert all(math.isnan(s.value) for s in last.values())          # every series ends in a gap
    assert tool_for("Windows Server 2019").name == "typeperf" and tool_for("Debian 12").name == "iostat"
    # stopped on purpose (the load ended): no message, no gap
    samples.clear(), problems.clear()
    c = HostCollector("here", IOSTAT, lambda h: LocalTransport(h, workdir=tmp_path), samples.extend, problems.append)
    c.start()
    import time as _time
    deadline = _time.monotonic() + 10
    while not samples and _time.monotonic() < deadline:
        _time.sleep(0.1)
    c.stop()
    assert not c.running and not problems and samples and not any(math.isnan(s.value) for s in samples)
