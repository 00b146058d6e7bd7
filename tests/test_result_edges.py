"""Issue 29's results edges, each on a real capture (tests/data/captures/README.md names where each
file comes from): figures a lab would quote must come out right, never negative, never dropped."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from app.metrics import sample as M
from app.metrics.registry import detect, parse_text
from app.metrics.streams import FioStatusParser

CAPTURES = Path(__file__).parent / "data" / "captures"


def _reports(text: str) -> list[dict]:
    decoder, out, i = json.JSONDecoder(), [], 0
    while (start := text.find("{", i)) >= 0:
        doc, i = decoder.raw_decode(text, start)
        out.append(doc)
    return out


def _stream(path: Path, host: str = "h") -> tuple[FioStatusParser, list]:
    parser = FioStatusParser(host)
    samples = []
    for line in path.read_text().splitlines():
        samples += parser.feed(line)
    return parser, samples + parser.close()


# ---- fio --ramp_time: counts restart from zero when the ramp ends -------------------------------

def test_ramp_time_never_makes_a_live_second_negative():
    path = CAPTURES / "fio" / "fio-3.33_local_ramp_time_status_stream.json"
    parser, samples = _stream(path)
    assert not parser.problems
    rates = [s for s in samples if s.metric in (M.IOPS, M.READ_IOPS, M.THROUGHPUT_MBPS)]
    assert rates and all(s.value >= 0 for s in rates)
    reports = _reports(path.read_text())
    # the third report is the first after the ramp: fio's counts start again (1223 I/Os in 999 ms)
    before, after = reports[1]["jobs"][0]["read"], reports[2]["jobs"][0]["read"]
    assert after["total_ios"] < before["total_ios"]
    at = reports[2]["timestamp_ms"] / 1000
    host = {s.timestamp: s.value for s in samples if s.source == "h" and s.metric == M.IOPS}
    assert host[at] == pytest.approx(after["total_ios"] / (after["runtime"] / 1000))
    # from the ramp's end on, the seconds add up to fio's own figure for the run
    last = reports[-1]["jobs"][0]["read"]
    measured = [(t, v) for t, v in sorted(host.items()) if t >= at]
    spans = [after["runtime"] / 1000] + [b[0] - a[0] for a, b in zip(measured, measured[1:])]
    assert sum(v * dt for (_, v), dt in zip(measured, spans)) == pytest.approx(last["total_ios"], rel=1e-6)


# ---- fio stonewall: a later group waits; the first second is the first job's own -----------------

def test_stonewall_first_second_is_the_running_jobs_rate_and_every_io_is_counted_once():
    path = CAPTURES / "fio" / "fio-3.33_local_stonewall_status_stream.json"
    parser, samples = _stream(path)
    assert not parser.problems
    reports = _reports(path.read_text())
    first, waiting = reports[0]["jobs"]
    # fio's first report: 'first' has run 685 ms; 'second' waits (no I/O, but a job_runtime of 1062 ms)
    assert waiting["read"]["total_ios"] + waiting["write"]["total_ios"] == 0 and waiting["job_runtime"] > 0
    host = [s for s in samples if s.source == "h" and s.metric == M.IOPS]
    expected = first["read"]["total_ios"] / (first["read"]["runtime"] / 1000)
    assert host[0].value == pytest.approx(expected)          # was 2,284 IO/s against 3,541: 35 % low
    assert not [s for s in samples if s.source == "h/second" and s.timestamp == host[0].timestamp]
    # each second covers the time since the one before; together they hold every I/O fio counted
    spans = [first["read"]["runtime"] / 1000] + [b.timestamp - a.timestamp for a, b in zip(host, host[1:])]
    total = sum(j[d]["total_ios"] for j in reports[-1]["jobs"] for d in ("read", "write"))
    assert sum(s.value * dt for s, dt in zip(host, spans)) == pytest.approx(total, rel=1e-6)
    # the jobs ran one after the other: the host never shows their rates added up
    second_alone = max(s.value for s in samples if s.source == "h/second" and s.metric == M.IOPS)
    assert max(s.value for s in host) <= second_alone * 1.0001


# ---- sqlio appended to one file (`sqlio ... >> results.txt`) ---------------------------------------

def test_a_second_sqlio_run_appended_to_the_file_is_read_as_a_second_run():
    one = (CAPTURES / "sqlio" / "sqlio_linchi_shea_blog.txt").read_text()
    two = one + "\n" + one.replace("32 threads writing for 30 secs", "32 threads writing for 90 secs") \
        .replace("IOs/sec: 7851.80", "IOs/sec: 3925.90")
    r = parse_text(two)
    assert r.tool == "sqlio" and [j.name for j in r.jobs] == ["run 1 (32 threads, 30 s)", "run 2 (32 threads, 90 s)"]
    assert [j.iops for j in r.jobs] == [7851.80, 3925.90]
    # the file's figure is over both runs: I/Os added over the seconds added
    assert r.iops == pytest.approx((7851.80 * 30 + 3925.90 * 90) / 120) and r.duration_s == 120
    assert any("2 sqlio runs" in n for n in r.notes)
    assert parse_text(one).jobs == [] and parse_text(one).iops == 7851.80    # one run stays one figure


# ---- Jetstress per instance: the counter names as a published report prints them ----------------

def test_jetstress_instances_read_with_the_published_reports_column_names():
    r = parse_text((CAPTURES / "jetstress" / "jetstress2010_esrp_ams2500_sun141_TRANSCRIBED.html").read_text())
    assert r.tool == "Jetstress" and r.version == "14.01.0043.000" and r.extra["overall test result"] == "pass"
    assert r.iops == pytest.approx(778.951)
    # the Transactional table only (the Total I/O table repeats the instances with other figures)
    assert [j.name for j in r.jobs] == [f"Instance 3308.{k}" for k in range(1, 6)]
    one = r.jobs[0]
    assert (one.read_iops, one.write_iops, one.extra["log writes/sec"]) == (98.299, 57.001, 44.238)
    assert r.read_iops == pytest.approx(493.305) and r.write_iops == pytest.approx(285.647)
    # log write latency weighted by log writes/s (reference/002: 4.1 ms)
    assert r.write_latency_ms == pytest.approx(4.07, abs=0.01)
    assert not [p for p in r.problems if "per-instance" in p]


def test_a_jetstress_table_without_a_per_instance_column_says_so():
    html = (CAPTURES / "jetstress" / "jetstress2010_esrp_ams2500_sun141_TRANSCRIBED.html").read_text()
    cut = html.replace("I/O Log Writes /sec", "I/O Log Flushes")
    r = parse_text(cut)
    assert math.isnan(r.jobs[0].extra["log writes/sec"])
    assert any("per-instance log writes/s unknown" in p for p in r.problems)


# ---- fio client/server (`fio --client=...`): client_stats ------------------------------------------

def test_fio_client_server_report_gives_each_servers_job_and_the_sum():
    text = (CAPTURES / "fio" / "fio-3.43_client_server_two_clients.json").read_text()
    assert detect(text) == "fio"
    r = parse_text(text)
    assert not [p for p in r.problems if "jobs" in p]
    assert [j.name for j in r.jobs] == ["127.0.0.1:18802/test", "127.0.0.1:18801/test"]
    every = json.loads(text)["client_stats"][-1]          # fio's own "All clients" sum
    assert every["jobname"] == "All clients"
    assert r.iops == pytest.approx(every["read"]["iops"])
    assert r.read_latency_ms == pytest.approx(every["read"]["clat_ns"]["mean"] / 1e6, rel=1e-6)
    assert any("client/server" in n for n in r.notes)


def test_fio_client_server_status_reports_stream_live():
    text = (CAPTURES / "fio" / "fio-3.43_client_server_two_clients.json").read_text()
    parser = FioStatusParser("ctl")
    samples = [s for line in text.splitlines() for s in parser.feed(line)]
    assert not parser.problems
    host = [s for s in samples if s.source == "ctl" and s.metric == M.IOPS]
    assert host and host[0].value == pytest.approx(1110589 + 1113931)


# ---- cifsiostat -----------------------------------------------------------------------------------

def test_cifsiostat_human_pretty_capture_is_read_per_share():
    text = (CAPTURES / "cifsiostat" / "cifsiostat-12_h_t_m_azurefile_smb.txt").read_text()
    assert detect(text) == "cifsiostat"
    r = parse_text(text)
    share = "\\\\f5fec18f1094a4c1d9c9058.file.core.windows.net\\pvc-5ab68046-c9b7-41af-94cb-b0b877ca463d"
    assert [j.name for j in r.jobs] == [share]
    # the first report (since boot) is left out: 964 and 962 writes/s remain; 3.8 MiB/s written
    assert r.write_iops == pytest.approx(963.0) and r.read_iops == 0.0
    assert r.mb_per_s == pytest.approx(3.8 * 1048576 / 1e6)
    assert r.duration_s == 2.0
    assert any("latency unknown" in p for p in r.problems)


def test_cifsiostat_plain_layout_from_sysstats_header():
    # the plain layout as sysstat's write_cifs_stat_header prints it (share first, bytes per second)
    head = "Filesystem:        " + "".join(f"{c:>13}" for c in ("rB/s", "wB/s", "rops/s", "wops/s", "fo/s", "fc/s",
                                                                  "fd/s"))

    def row(share, *figures):
        return f"{share:<19}" + "".join(f"{x:>13.2f}" for x in figures)
    text = "\n".join(["Linux 5.15.0 (client) \t09/22/23 \t_x86_64_\t(2 CPU)", "",
                      head, row("\\\\10.0.0.100\\tmp", 1e6, 3e6, 10, 30, 0, 0, 0), "",
                      head, row("\\\\10.0.0.100\\tmp", 2e6, 2e6, 20, 20, 0, 0, 0),
                      row("\\\\10.0.0.101\\data", 1e6, 0, 5, 0, 0, 0, 0)]) + "\n"
    r = parse_text(text)
    assert {j.name: j.iops for j in r.jobs} == {"\\\\10.0.0.100\\tmp": 40.0, "\\\\10.0.0.101\\data": 5.0}
    assert r.iops == 45.0 and r.mb_per_s == pytest.approx(5.0)
