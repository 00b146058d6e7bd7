"""Windows counter and result-file parsers.  No Windows host runs here.  The *_capture_*
fixtures are real output published by people who ran the tools (DiskSpd 2.0 reports,
typeperf through winrs); the *_sample.* fixtures follow the documented formats for what no
capture was found (Get-Counter through our own line format, DiskSpd -Rxml, the Jetstress
performance report) and are labelled as such."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.metrics import sample as M
from app.metrics.windows import (
    GET_COUNTER_COMMAND,
    GetCounterLineParser,
    TypeperfCsvParser,
    parse_diskspd_text,
    parse_diskspd_xml,
    parse_jetstress_html,
    typeperf_command,
)

DATA = Path(__file__).parent / "data" / "metrics"


def test_typeperf_csv_gives_per_disk_and_total_series_in_milliseconds_with_gaps():
    p = TypeperfCsvParser("HV1")
    out = []
    for line in (DATA / "typeperf_sample.csv").read_text().splitlines():
        out += p.feed(line)
    iops = [s for s in out if s.source == "HV1/0 C:" and s.metric == M.IOPS]
    assert [round(s.value, 3) for s in iops[:2]] == [1523.456, 1498.1] and math.isnan(iops[2].value)
    total = [s.value for s in out if s.source == "HV1" and s.metric == M.IOPS]
    assert total == [1701.2, 1690.0, 1650.0]
    read = [s.value for s in out if s.metric == M.READ_LATENCY_MS]
    assert read[0] == pytest.approx(12.345) and read[1] == pytest.approx(21.0)
    assert any("no value" in q for q in p.problems)
    assert iops[1].timestamp - iops[0].timestamp == pytest.approx(1.001)


def test_get_counter_lines_parse_and_a_missing_value_is_a_gap():
    p = GetCounterLineParser("")
    out = []
    for line in (DATA / "get_counter_sample.txt").read_text().splitlines():
        out += p.feed(line)
    assert out[0].source == "hv2/1 e:" and out[0].metric == M.IOPS and out[0].value == 812.5
    assert out[1].metric == M.READ_LATENCY_MS and out[1].value == pytest.approx(18.5)
    assert out[2].source == "hv2" and math.isnan(out[3].value)
    assert "Continuous" in GET_COUNTER_COMMAND and "Avg. Disk sec/Read" in typeperf_command()


def test_diskspd_text_and_xml_results():
    text = parse_diskspd_text((DATA / "diskspd_sample.txt").read_text())
    assert (text.iops, text.read_iops, text.write_iops) == (5461.33, 3822.93, 1638.40)
    assert text.avg_latency_ms == 2.929 and text.read_latency_ms == 3.201
    assert text.percentiles_ms["95th"] == {"read": 5.203, "write": 3.807, "total": 4.905}
    xml = parse_diskspd_xml((DATA / "diskspd_sample.xml").read_text())
    assert xml.iops == pytest.approx(5461.33, rel=1e-4) and xml.percentiles_ms["95"]["read"] == 5.203
    assert parse_diskspd_text("garbage").problems and parse_diskspd_xml("<unclosed").problems


def test_jetstress_report_figures_and_verdict():
    # synthetic (no public Jetstress report was found): tests/data/captures/README.md says so
    r = parse_jetstress_html((DATA.parent / "captures" / "jetstress" / "jetstress_report_SYNTHETIC.html").read_text())
    assert r.iops == pytest.approx(1234.567) and r.read_latency_ms == 14.812 and r.write_latency_ms == 2.031
    assert r.passed is True
    assert parse_jetstress_html("<html></html>").problems


def test_diskspd_text_captured_from_real_runs_whatever_columns_the_options_add():
    # Published DiskSpd 2.0.x reports (GitHub READMEs): a -L mixed run with latency columns
    # and percentiles, and a -D write-only run whose tables carry IopsStdDev instead of
    # AvgLat and have no Total IO table.  Tables verbatim; the second file keeps only the
    # lines around them.
    mixed = parse_diskspd_text((DATA / "diskspd_capture_mixed_latency.txt").read_text())
    assert (mixed.iops, mixed.read_iops, mixed.write_iops) == (48202.48, 24083.62, 24118.86)
    assert (mixed.avg_latency_ms, mixed.read_latency_ms, mixed.write_latency_ms) == (1.327, 1.563, 1.091)
    assert mixed.mib_per_s == 188.29 and mixed.percentiles_ms["95th"]["read"] == 2.814
    assert mixed.percentiles_ms["3-nines"]["total"] == 7.472 and not mixed.problems
    write_only = parse_diskspd_text((DATA / "diskspd_capture_write_iopsstddev.txt").read_text())
    assert write_only.write_iops == 69980.93 and write_only.iops == 69980.93
    assert math.isnan(write_only.write_latency_ms), "IopsStdDev must not be read as a latency"
    assert write_only.mib_per_s == 273.36 and not write_only.problems


def test_typeperf_capture_with_crlf_other_counters_and_its_closing_messages():
    # typeperf run through winrs on a Windows Server (published in a WinRM client's docs):
    # CRLF lines, counters we do not plot, and "Exiting, please wait..." at the end.
    p = TypeperfCsvParser("")
    out = []
    for line in open(DATA / "typeperf_capture_winrs.csv", newline="").read().split("\r\n"):
        out += p.feed(line)
    # "Avg. Disk Queue Length" is the interval's average, not the instantaneous queue
    assert [(s.source, s.metric, s.value) for s in out] == [("AMAZONA-SDFU7B1", M.AVG_QUEUE_LENGTH, 0.0)]
    assert not p.problems
