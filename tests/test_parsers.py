"""Every tool's result file read right: real captures from public repositories (sources and the
hand-checked figures in tests/data/captures/README.md), real fio and iostat on this machine,
and `testbed-studio parse`."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.metrics import sample as M
from app.metrics.counter_files import GetCounterTextParser, parse_iostat_json
from app.metrics.registry import PARSERS, detect, parse_text
from app.metrics.streams import FioStatusParser, IostatJsonParser, fio_final_summary
from app.metrics.windows import TypeperfCsvParser

CAPTURES = Path(__file__).parent / "data" / "captures"
OLD = Path(__file__).parent / "data" / "metrics"


def parse(path: Path, tool: str | None = None):
    return parse_text(path.read_text(encoding="utf-8"), tool)


# ---- fio single reports, 2.1.4 to 3.33 -------------------------------------------------------

def test_fio_2_17_group_report_rates_use_the_directions_runtime_and_latency_is_in_microseconds():
    r = parse(CAPTURES / "fio" / "fio-2.17_pkb_group_reporting_numjobs2.json")
    assert (r.tool, r.version) == ("fio", "2.17") and not r.problems
    read, write = r.jobs
    assert read.read_iops == pytest.approx(80891 / 10.003) == pytest.approx(8086.673998)
    assert write.write_iops == pytest.approx(24580 / 10.004)
    assert read.read_latency_ms == pytest.approx(0.238357679)      # 238.36 µs, not 0.0 and not 238 ms
    assert write.write_latency_ms == pytest.approx(0.800193694)
    assert read.mb_per_s == pytest.approx(1294256 * 1024 / 10.003 / 1e6)   # io_bytes counts KiB in 2.x
    assert read.duration_s == pytest.approx(10.003) and read.extra["numjobs"] == "2"
    assert any("2 reporting groups" in n for n in r.notes)


def test_fio_3_1_without_job_runtime_is_not_divided_by_one_second():
    r = parse(CAPTURES / "fio" / "fio-3.1_fioplot_randread_numjobs4.json")
    assert r.version == "3.1" and not r.problems
    assert r.iops == pytest.approx(2809290 / 60.001) == pytest.approx(46820.719655)
    assert r.duration_s == pytest.approx(60.001)
    assert r.read_latency_ms == pytest.approx(0.328597099451)
    assert math.isnan(r.write_latency_ms) and "no writes: write latency does not apply" in r.notes
    assert r.mb_per_s == pytest.approx(11506851840 / 60.001 / 1e6)


def test_fio_3_26_single_job():
    r = parse(CAPTURES / "fio" / "fio-3.26_virtualclient_randwrite.json")
    assert r.version == "3.26" and r.read_iops == 0.0
    assert r.write_iops == pytest.approx(262144 / 120.958) == pytest.approx(2167.231601)
    assert r.write_latency_ms == pytest.approx(0.418473267365) and math.isnan(r.read_latency_ms)
    assert r.duration_s == pytest.approx(120.958)


def test_fio_3_33_group_reporting_is_not_divided_by_the_summed_job_runtime():
    path = CAPTURES / "fio" / "fio-3.33_local_group_reporting_numjobs4.json"
    job = json.loads(path.read_text())["jobs"][0]
    assert job["job_runtime"] == 12002 and job["read"]["runtime"] == 3002      # 4 jobs x 3 s, summed
    r = parse(path)
    assert r.read_iops == pytest.approx(207254 / 3.002) == pytest.approx(job["read"]["iops"])
    assert r.write_iops == pytest.approx(207487 / 3.002) == pytest.approx(job["write"]["iops"])
    assert r.duration_s == pytest.approx(3.002)


def test_fio_2_1_4_without_timestamp_or_total_ios_is_read_not_rejected():
    r = parse(CAPTURES / "fio" / "fio-2.1.4_pkb_four_groups.json")
    assert r.version == "2.1.4" and not r.problems
    rows = {j.name: j for j in r.jobs}
    seq_write = rows["sequential_write"]
    assert seq_write.write_iops == pytest.approx(133) and seq_write.read_iops == 0.0
    assert seq_write.write_latency_ms == pytest.approx(477.73484)
    assert seq_write.mb_per_s == pytest.approx(361984 * 1024 / 5.314 / 1e6)
    assert rows["random_read_test"].read_latency_ms == pytest.approx(3.11762)
    assert any("reporting groups" in n for n in r.notes)


def test_a_fio_report_without_jobs_or_latency_says_what_is_missing():
    assert "no fio JSON report" in parse_text('{"fio version": "fio-3.1"}', "fio").problems[0]
    report = json.loads((CAPTURES / "fio" / "fio-3.1_fioplot_randread_numjobs4.json").read_text())
    del report["jobs"][0]["read"]["clat_ns"], report["jobs"][0]["read"]["lat_ns"]
    r = parse_text(json.dumps(report), "fio")
    assert math.isnan(r.read_latency_ms) and any("read latency unknown" in p for p in r.problems)


def test_fio_unified_rw_reporting_and_a_note_before_the_report():
    report = json.loads((CAPTURES / "fio" / "fio-3.1_fioplot_randread_numjobs4.json").read_text())
    job = report["jobs"][0]
    job["mixed"] = job.pop("read")                     # the shape fio gives with unified_rw_reporting=1
    del job["write"], job["trim"]
    r = parse_text(json.dumps(report))
    assert r.iops == pytest.approx(46820.719655) and math.isnan(r.read_iops)
    assert any("unified_rw_reporting" in p for p in r.problems)
    assert r.jobs[0].extra["latency ms (reads and writes)"] == pytest.approx(0.328597099451)
    noted = parse_text("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be "
                       "capped at 1\n" + (CAPTURES / "fio" / "fio-3.26_virtualclient_randwrite.json").read_text())
    assert noted.tool == "fio" and noted.iops == pytest.approx(2167.231601)


def test_a_saved_status_stream_gives_the_whole_runs_figures():
    r = parse(OLD / "fio_status_stream.json")
    final = json.loads((OLD / "fio_status_stream.json").read_text()[
        (OLD / "fio_status_stream.json").read_text().rindex("\n{") + 1:])["jobs"][0]
    assert r.extra["status reports"] == 4
    assert r.read_iops == pytest.approx(final["read"]["iops"]) and r.version == "3.33"


# ---- fio live stream, real fio -----------------------------------------------------------------

@pytest.mark.parametrize("group_reporting", [False, True])
def test_real_fio_numjobs_4_status_stream_matches_fios_own_final_report(tmp_path, group_reporting):
    if shutil.which("fio") is None:
        pytest.skip("needs fio (installed by .ci/setup.sh)")
    cmd = ["fio", "--name=nj", f"--filename={tmp_path / 'f'}", "--size=16M", "--rw=randrw", "--bs=4k",
           "--ioengine=psync", "--numjobs=4", "--runtime=4", "--time_based", "--status-interval=1",
           "--output-format=json"] + (["--group_reporting"] if group_reporting else [])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    parser = FioStatusParser("c1")
    samples = []
    for line in out.stdout.splitlines():
        samples += parser.feed(line)
    samples += parser.close()
    assert parser.reports >= 4 and not parser.problems
    final = fio_final_summary(parser.final_report)
    first = json.JSONDecoder().raw_decode(out.stdout[out.stdout.index("{"):])[0]
    host = [s for s in samples if s.source == "c1" and s.metric == M.IOPS]
    first_interval = max(max(j[d]["runtime"] for d in ("read", "write")) for j in first["jobs"]) / 1000
    intervals = [first_interval] + [b.timestamp - a.timestamp for a, b in zip(host, host[1:])]
    recorded = sum(s.value * dt for s, dt in zip(host, intervals)) / sum(intervals)
    assert recorded == pytest.approx(final["iops"], rel=0.05)
    # every clone is its own series and the first second is not diluted (was 1/4 of the rate)
    jobs = {s.source for s in samples if s.metric == M.IOPS and s.source != "c1"}
    assert len(jobs) == (1 if group_reporting else 4)
    assert host[0].value > 0.5 * final["iops"]


# ---- iostat ------------------------------------------------------------------------------------

def test_pretty_printed_iostat_json_gives_per_device_figures_live_and_from_the_file():
    text = (CAPTURES / "iostat" / "iostat_pretty_pkb.json").read_text()
    r = parse_iostat_json(text)
    # the first report (17:53:14) is iostat's since-boot average: only 17:53:15 counts
    sda = next(j for j in r.jobs if j.name == "test-instance/sda")
    assert (sda.read_iops, sda.write_iops, sda.write_latency_ms, sda.mb_per_s) == (0.0, 4.0, 0.25, 0.0)
    assert math.isnan(sda.read_latency_ms)                  # no reads: r_await 0.00 is not a latency
    assert r.extra["intervals"] == 1 and r.duration_s == 1.0 and not r.problems
    assert any("since boot" in n for n in r.notes)
    live = IostatJsonParser("h", clock=lambda: 0.0)                  # the same text, line by line
    out = [s for line in text.splitlines() for s in live.feed(line)]
    assert {s.source for s in out} == {"h/dm-0", "h/dm-1", "h/sda"} and not live.problems
    first_sda = [s.value for s in out if s.source == "h/sda" and s.metric == M.THROUGHPUT_MBPS][0]
    assert first_sda == pytest.approx((72.02 + 432.19) * 1024 / 1e6)           # iostat's kB is 1024 B
    assert len([s for s in out if s.metric == M.IOPS]) == 6


def test_sysstats_own_iostat_json_test_files():
    x = parse(CAPTURES / "iostat" / "sysstat_expected.iostat-x-p-ALL-JSON.json")
    names = [j.name for j in x.jobs]
    assert "SYSSTAT.TEST/sda" in names and "SYSSTAT.TEST/sda12" in names and len(names) == 21
    assert math.isnan(x.duration_s) and any("iostat ran without -t" in p for p in x.problems)
    live = IostatJsonParser("h", clock=lambda: 0.0)
    out = [s for line in (CAPTURES / "iostat" / "sysstat_expected.iostat-x-p-ALL-JSON.json").read_text().splitlines()
           for s in live.feed(line)]
    sda = [s.value for s in out if s.source == "h/sda" and s.metric in (M.READ_IOPS, M.WRITE_IOPS, M.READ_LATENCY_MS)]
    assert sda[:3] == [6.90, 1.69, 12.58]                                # the first interval, line 14
    assert live.problems == ["iostat on h: device dm-2 disappeared"]      # dm-2 is in interval 1 only
    g = parse(CAPTURES / "iostat" / "sysstat_expected.iostat-g-JSON.json")
    assert {j.name for j in g.jobs} >= {"SYSSTAT.TEST/disks", "SYSSTAT.TEST/other", "SYSSTAT.TEST/sda"}
    assert any("iostat ran without -x" in p for p in g.problems)
    plain = IostatJsonParser("h", clock=lambda: 0.0)
    got = [s for line in (CAPTURES / "iostat" / "sysstat_expected.iostat-g-JSON.json").read_text().splitlines()
           for s in plain.feed(line) if s.source == "h/sda"]
    assert [(s.metric, s.value) for s in got[:2]] == [(M.IOPS, 8.59),
                                                      (M.THROUGHPUT_MBPS, pytest.approx(0.28 * 1.048576))]


def test_compact_iostat_json_from_this_machine_reads_as_a_file():
    r = parse_text((OLD / "iostat_stream.json").read_text())
    assert r.tool == "iostat" and r.jobs and r.extra["intervals"] == 1      # of 2: the first is since boot
    assert all(not math.isnan(j.iops) for j in r.jobs) and any("since boot" in n for n in r.notes)


def test_live_iostat_pretty_printed_by_python_parses(tmp_path):
    if shutil.which("iostat") is None:
        pytest.skip("needs sysstat")
    raw = subprocess.run(["iostat", "-d", "-x", "-o", "JSON", "1", "2"], capture_output=True, text=True, timeout=20)
    pretty = json.dumps(json.loads(raw.stdout), indent=4)
    r = parse_text(pretty)
    assert r.tool == "iostat" and r.jobs and not [p for p in r.problems if "could not" in p]


# ---- typeperf, Export-Counter, Get-Counter -----------------------------------------------------

def test_current_and_average_disk_queue_length_are_two_series():
    header = ('"(PDH-CSV 4.0)","\\\\H\\PhysicalDisk(_Total)\\Current Disk Queue Length",'
              '"\\\\H\\PhysicalDisk(_Total)\\Avg. Disk Queue Length"')     # inline, not a capture
    p = TypeperfCsvParser("")
    out = p.feed(header) + p.feed('"04/19/2013 21:43:48.823","3.000000","1.250000"')
    assert {(s.metric, s.value) for s in out} == {(M.QUEUE_LENGTH, 3.0), (M.AVG_QUEUE_LENGTH, 1.25)}
    r = parse(CAPTURES / "counters" / "typeperf_winrs_avg_queue.csv")
    (host,) = r.jobs
    assert host.extra == {M.AVG_QUEUE_LENGTH: 0.0, "memory\\pages/sec": 0.0,
                          "processor\\% processor time": 0.00566}         # every counter its own series
    assert any("no _Total disk transfers/sec" in p for p in r.problems)


def test_typeperf_csv_totals_and_gaps():
    r = parse(OLD / "typeperf_sample.csv")
    assert r.tool == "typeperf" and r.iops == pytest.approx((1701.2 + 1690.0 + 1650.0) / 3)
    assert any("1 of 3 intervals have no value" in n for n in r.notes)


def test_get_counter_default_output_from_powershells_docs():
    r = parse(CAPTURES / "counters" / "get_counter_docs_example2_processor.txt")
    assert r.tool == "Get-Counter" and r.extra["intervals"] == 3
    (cpu,) = r.jobs
    assert cpu.extra["processor\\% processor time"] == pytest.approx(
        (20.7144271584086 + 10.4391790575511 + 37.5968799396998) / 3)
    two = parse(CAPTURES / "counters" / "get_counter_docs_example6_two_computers.txt")
    assert {j.name: j.read_iops for j in two.jobs} == {"Server01/c:": 0.0, "Server02/c:": 0.983050344269146}
    assert any("single sample" in p for p in two.problems)
    five = parse(CAPTURES / "counters" / "get_counter_docs_example7_instances.txt")
    values = {j.name: j.extra["processor\\% processor time"] for j in five.jobs}
    assert values["Server01"] == 5.35768447160776 and values["Server01/2"] == 9.64189975649925
    assert len(values) == 5


def test_get_counter_value_on_the_path_line_and_am_pm_times():
    p = GetCounterTextParser()
    out = p.feed("12/15/2023 10:40:15 AM   \\\\HV\\physicaldisk(_total)\\disk transfers/sec : 25.5")
    assert [(s.source, s.metric, s.value) for s in out] == [("HV", M.IOPS, 25.5)]


def test_a_counter_file_with_no_values_says_so():
    r = parse_text('"(PDH-CSV 4.0)","\\\\H\\PhysicalDisk(_Total)\\Disk Transfers/sec"\n', "typeperf")
    assert any("no counter values" in p for p in r.problems) and math.isnan(r.iops)
    assert "Get-Counter" in parse_text("Timestamp  CounterSamples\n", "get-counter").tool


# ---- DiskSpd, Jetstress, sqlio, Iometer, DVD Store --------------------------------------------

def test_diskspd_xml_without_latency_says_latency_is_unknown():
    r = parse(CAPTURES / "diskspd" / "diskspd-2.0.21a_pkb_seqread.xml")
    assert (r.tool, r.version, r.duration_s) == ("DiskSpd", "2.0.21a", 30.02)
    assert r.read_iops == pytest.approx(90970 / 30.02) and r.write_iops == 0
    assert r.mb_per_s == pytest.approx(5961809920 / 30.02 / 1e6)
    assert math.isnan(r.read_latency_ms) and any("run DiskSpd with -L" in p for p in r.problems)


def test_diskspd_text_read_write_mix():
    r = parse(CAPTURES / "diskspd" / "diskspd_virtualclient_readwrite.txt")
    assert (r.iops, r.read_iops, r.write_iops) == (1189.03, 834.98, 354.05)
    assert (r.read_latency_ms, r.write_latency_ms, r.duration_s) == (0.272, 2.179, 30.01)
    assert r.mb_per_s == pytest.approx(4.64 * 1.048576) and r.extra["read latency 99th ms"] == 0.877


def test_jetstress_latencies_and_a_report_without_them():
    r = parse(CAPTURES / "jetstress" / "jetstress_report_SYNTHETIC.html")
    assert (r.iops, r.read_latency_ms, r.write_latency_ms) == (1234.567, 14.812, 2.031)
    assert r.extra["overall test result"] == "pass"
    bare = parse_text("<html><body>Jetstress<table><tr><td>Overall Test Result</td><td>Fail</td></tr>"
                      "<tr><td>Achieved Transactional I/O per Second</td><td>900</td></tr></table></body></html>")
    assert bare.tool == "Jetstress" and bare.iops == 900 and math.isnan(bare.read_latency_ms)
    assert any("I/O Database Reads Average Latency" in p for p in bare.problems)
    assert any("I/O Log Writes Average Latency" in p for p in bare.problems)


def test_jetstress_latencies_from_the_per_instance_table_weighted_by_their_rates():
    r = parse(CAPTURES / "jetstress" / "jetstress_instances_SYNTHETIC.html")
    assert (r.iops, r.extra["overall test result"], r.version) == (3456.789, "pass", "2013")
    assert r.read_latency_ms == pytest.approx((10 * 1000 + 16 * 500) / 1500)       # 12 ms, not NaN
    assert r.write_latency_ms == pytest.approx((2 * 300 + 4 * 100) / 400)          # log writes: 2.5 ms
    assert [(j.name, j.read_iops, j.write_iops) for j in r.jobs] == [("Instance3104.1", 1000, 500),
                                                                     ("Instance3104.2", 500, 250)]
    assert r.jobs[1].extra["database writes average latency ms"] == 22 and not r.problems


def test_jetstress_xml_report_with_seed_002s_figures():
    """SYNTHETIC (no public XML report found): the report's labels, SUN141's figures (reference/002 6.4)."""
    r = parse(CAPTURES / "jetstress" / "jetstress_performance_SYNTHETIC.xml")
    assert (r.tool, r.version, r.iops, r.extra["overall test result"]) == ("Jetstress", "14.01.0180.003", 778.951,
                                                                          "pass")
    assert r.read_iops == pytest.approx(493.305) and r.write_iops == pytest.approx(285.647)
    assert r.read_latency_ms == pytest.approx(15.6235, abs=1e-4)      # by reads; the report's own mean: 15.6
    assert r.write_latency_ms == pytest.approx(4.0710, abs=1e-4)      # log writes, by their rate: 4.1
    assert [j.name for j in r.jobs][0] == "Instance3308.1" and len(r.jobs) == 5 and not r.problems
    assert detect((CAPTURES / "jetstress" / "jetstress_performance_SYNTHETIC.xml").read_text()) == "jetstress"


def test_a_jetstress_xml_that_cannot_be_read_says_why():
    bomb = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><JetstressReport>'
            '<Item name="Overall Test Result">&a;</Item></JetstressReport>')
    assert "DOCTYPE or entities" in parse_text(bomb, "jetstress").problems[0]
    broken = parse_text('<?xml version="1.0"?><JetstressReport><Item name="Overall Test Result">Pass', "jetstress")
    assert "cannot be read" in broken.problems[0] and math.isnan(broken.iops)
    bare = parse_text('<JetstressReport><Item name="Achieved Transactional I/O per Second">900</Item>'
                      '</JetstressReport>', "jetstress")
    assert bare.iops == 900 and any("I/O Database Reads Average Latency" in p for p in bare.problems)


def test_sqlio_figures_and_latency_histogram():
    r = parse(CAPTURES / "sqlio" / "sqlio_linchi_shea_blog.txt")
    assert (r.tool, r.version, r.iops, r.write_iops, r.read_iops) == ("sqlio", "1.5.SG", 7851.80, 7851.80, 0.0)
    assert r.write_latency_ms == 3 and r.duration_s == 30 and r.extra["threads"] == 32
    assert r.mb_per_s == pytest.approx(61.34 * 1.048576)
    assert "4 ms: 30 %" in r.extra["latency histogram"] and "24+ ms: 0 %" in r.extra["latency histogram"]


def test_iometer_results_csv_all_row():
    r = parse(CAPTURES / "iometer" / "iometer_results_SYNTHETIC.csv")
    assert (r.tool, r.version, r.iops, r.read_iops, r.write_iops) == ("Iometer", "1.1.0", 4000, 2800, 1200)
    assert (r.read_latency_ms, r.write_latency_ms, r.mb_per_s) == (1.5, 3.166667, 32.768)
    assert [j.name for j in r.jobs] == ["ALL All", "MANAGER HV1"]


def test_dvdstore_orders_per_minute_from_the_wrapped_final_line_after_the_warm_up():
    text = (CAPTURES / "dvdstore" / "ds2webdriver_doc_typical_run.txt").read_text()
    r = parse_text(text)
    assert (r.tool, r.extra["orders per minute"], r.duration_s) == ("DVD Store 2", 147, 61.0)
    assert (r.extra["orders"], r.extra["average response time ms"], r.extra["rollbacks"]) == (150, 137, 5)
    assert r.extra["progress lines"] == 6 and r.extra["threads"] == 1 and not r.problems   # after Stats reset
    cut = parse_text(text.split("Run over")[0], "dvdstore")
    assert cut.extra["orders per minute"] == 147 and "no 'Final:' line" in cut.problems[0]
    assert cut.duration_s == 60.9


def test_dvdstore_2_1_aggregate_final_comes_first_and_servers_are_rows():
    # inline, laid out from ds2 2.1's format strings: "Final (DATE):" then one "Final:" per server
    text = ("et=   10.0 n_overall=100 opm=600 rt_tot_lastn_max_msec=50 rt_tot_avg_msec=20 rt_tot_sampled=20 "
            "rollbacks: n=0 %=  0.0\n"
            "Final (3/17/2015 10:00:00 AM): et=   60.0 n_overall=700 opm=700 rt_tot_lastn_max=60 rt_tot_avg=21 "
            "n_rollbacks_overall=3 rollback_rate =   0.4%\n"
            "Individual Stats for each DB / Web Server: \n"
            "Final: et=   60.0 n_overall=300 opm=300 rt_tot_lastn_max=55 rt_tot_avg=19 n_rollbacks_overall=1\n"
            "Final: et=   60.0 n_overall=400 opm=400 rt_tot_lastn_max=60 rt_tot_avg=23 n_rollbacks_overall=2\n")
    r = parse_text(text)
    assert r.extra["orders per minute"] == 700 and r.extra["rollbacks"] == 3
    assert [(j.name, j.extra["orders per minute"]) for j in r.jobs] == [("server 1", 300), ("server 2", 400)]


# ---- detection and the command ---------------------------------------------------------------

@pytest.mark.parametrize("path,tool", [
    ("fio/fio-2.1.4_pkb_four_groups.json", "fio"), ("fio/fio-3.26_virtualclient_randwrite.json", "fio"),
    ("iostat/iostat_pretty_pkb.json", "iostat"), ("diskspd/diskspd-2.0.21a_pkb_seqread.xml", "diskspd"),
    ("diskspd/diskspd_virtualclient_readwrite.txt", "diskspd"), ("counters/typeperf_winrs_avg_queue.csv", "typeperf"),
    ("counters/get_counter_docs_example6_two_computers.txt", "get-counter"),
    ("jetstress/jetstress_report_SYNTHETIC.html", "jetstress"), ("sqlio/sqlio_linchi_shea_blog.txt", "sqlio"),
    ("iometer/iometer_results_SYNTHETIC.csv", "iometer"), ("dvdstore/ds2webdriver_doc_typical_run.txt", "dvdstore")])
def test_the_tool_is_told_from_the_content(path, tool):
    assert detect((CAPTURES / path).read_text()) == tool


@pytest.mark.parametrize("tool", sorted(PARSERS))
def test_every_parser_names_what_is_missing_in_a_file_it_cannot_read(tool):
    r = parse_text("this is not a result file\n", tool)
    assert r.problems and all(math.isnan(v) for v in (r.iops, r.read_latency_ms, r.write_latency_ms))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", "parse", *args], capture_output=True, text=True,
                          timeout=60)


def test_parse_command_prints_json_and_text():
    r = _cli(str(CAPTURES / "fio" / "fio-2.17_pkb_group_reporting_numjobs2.json"), "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["tool"], d["version"]) == ("fio", "2.17") and d["iops"] == pytest.approx(10543.69, rel=1e-5)
    assert d["read_latency_ms"] == pytest.approx(0.2384, rel=1e-3) and d["duration_s"] == 10.004
    assert [j["name"] for j in d["jobs"]] == ["rand_16k_read_100%-io-depth-1-num-jobs-2",
                                              "rand_16k_write_100%-io-depth-1-num-jobs-2"]
    text = _cli(str(CAPTURES / "diskspd" / "diskspd-2.0.21a_pkb_seqread.xml"))
    assert text.returncode == 0 and "tool: DiskSpd 2.0.21a" in text.stdout
    assert "latency: read unknown" in text.stdout and "missing: read latency unknown" in text.stdout


def test_parse_command_tool_override_and_unreadable_files(tmp_path):
    forced = _cli(str(CAPTURES / "counters" / "typeperf_winrs_avg_queue.csv"), "--tool", "export-counter",
                  "--format", "json")
    assert forced.returncode == 0 and json.loads(forced.stdout)["tool"] == "typeperf"
    missing = _cli(str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot be read" in missing.stderr and "Traceback" not in missing.stderr
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    r = _cli(str(junk))
    assert r.returncode == 2 and "--tool" in r.stderr and "Traceback" not in r.stderr
    utf16 = tmp_path / "typeperf.csv"
    utf16.write_bytes((CAPTURES / "counters" / "typeperf_winrs_avg_queue.csv").read_text().encode("utf-16"))
    assert json.loads(_cli(str(utf16), "--format", "json").stdout)["tool"] == "typeperf"
