"""Results per configuration and comparisons as an analyst makes them (issue 29): Appendix G per
configuration, the published percentage reproduced beside the computed one with both denominators,
every side against every baseline, sides measured at different levels, and a bar chart whose value
labels never overlap or leave the image."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.metrics.comparison import RunFigures, Side, compare_sides
from tests.run_phase_beds import THREE_CONFIGURATION_OPM, three_configuration_bed
from topology.fileformat import save

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("study") / "three.yaml"
    save(three_configuration_bed(), path)
    return path


def test_appendix_g_prints_each_configurations_figures_apart():
    from app.report.tables.results import results_tables
    tables = results_tables(three_configuration_bed())
    titles = [t.title for t in tables]
    assert titles[:2] == ["Results: DS2-SQL1, configuration rhev", "Results: DS2-SQL2, configuration rhev"]
    assert len(tables) == 6 and len({t.key for t in tables}) == 6
    for t in tables:
        cfg = t.title.rsplit(" ", 1)[1]
        vm = t.title.split("DS2-")[1].split(",")[0]
        (row,) = t.rows
        shown = [c.text for c in row.cells]
        assert f"{THREE_CONFIGURATION_OPM[cfg][vm]:,} OPM" in shown
        assert not any("median of" in s for s in shown)     # one figure of one configuration: no median


def test_one_compare_call_reproduces_the_published_percentage_with_its_denominator(study):
    r = cli("compare", "rhev", "hyperv", "hyperv-sriov", "--bed", str(study), "--baseline", "hyperv")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # the default metric is the one the bed records (OPM), not a run metric it has none of
    assert out.startswith("Orders per minute (OPM, higher is better); baseline: hyperv")
    # the table's own column: RHEV +4.8 % over Hyper-V, the denominator Hyper-V
    assert "SQL2: +4.8 % = (rhev 26,000 OPM − hyperv 24,804 OPM) / hyperv 24,804 OPM; the denominator is hyperv" \
        in out
    # the report's -4.6 % is printed beside it, worked out again with the report's denominator (RHEV)
    assert ("SQL2: the report prints -4.6 % for hyperv against rhev (the denominator is rhev); worked out from the "
            "table: -4.6 % = (hyperv 24,804 OPM − rhev 26,000 OPM) / rhev 26,000 OPM; the denominator is rhev") in out
    data = json.loads(cli("compare", "rhev", "hyperv", "hyperv-sriov", "--bed", str(study), "--format", "json").stdout)
    (published,) = data["published"]
    assert published["denominator"] == "rhev" and published["computed"]["percent"] == pytest.approx(-4.6, abs=0.01)


def test_every_configuration_against_every_baseline_in_one_table(study):
    out = cli("compare", "rhev", "hyperv", "hyperv-sriov", "--bed", str(study), "--every-baseline").stdout
    block = out.split("Every side against every baseline")[1]
    sql2 = block.split("  SQL2\n")[1].split("  Total")[0].splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in sql2[1:]}
    # (24,804 - 26,000) / 26,000 = -4.6 %; (26,000 - 24,804) / 24,804 = +4.8 %; 27,765 over 24,804 = +11.9 %
    assert rows["hyperv"] == ["-4.6", "%", "-", "-10.7", "%"]
    assert rows["rhev"] == ["-", "+4.8", "%", "-6.4", "%"]
    assert rows["hyperv-sriov"][2:4] == ["+11.9", "%"]


def test_sides_measured_at_different_levels_are_aligned_per_vm_and_per_level_step():
    one = Side("1 cell", [RunFigures("a", {"1 cell: exch-1": 2_000.0})])
    four = Side("4 cells", [RunFigures("b", {"4 cells: exch-1": 1_900.0, "4 cells: exch-2": 1_950.0,
                                             "4 cells: exch-3": 1_850.0, "4 cells: exch-4": 1_800.0})])
    table = compare_sides([one, four], "mailbox_iops")
    rows = {r.subject: r for r in table.rows}
    assert rows["exch-1"].differences[1].percent == pytest.approx(-5.0)
    assert rows["Per VM (total / VMs)"].values == [2_000.0, 1_875.0]
    assert rows["Per level step (total / level)"].values == [2_000.0, 1_875.0]
    assert rows["Total"].values == [2_000.0, 7_500.0]
    assert "Measured at different levels (1 cell at 1 cell; 4 cells at 4 cells)" in table.text()
    assert table.heading == "Mailbox iops (higher is better)"           # no empty unit in front


def _crowded_table():
    clients = {f"client {k}": 27_350.0 + 317 * k for k in range(1, 9)}
    sides = [Side(name, [RunFigures(name, {c: v * f for c, v in clients.items()})])
             for name, f in (("rhev", 1.0), ("hyperv", 0.955), ("hyperv-sriov", 1.012))]
    return compare_sides(sides, "orders_per_minute")


@pytest.mark.parametrize("size", [(975, 360), (640, 260), (1600, 500)])
def test_the_bar_charts_value_labels_never_overlap_or_leave_the_image(size, tmp_path):
    from app.metrics.bar_chart import label_boxes
    from app.metrics.chart import chart_png
    from app.report.qt_app import ensure_gui_app
    ensure_gui_app()
    width, height = size
    table = _crowded_table()
    boxes = label_boxes(table, width, height)
    texts = [t for t, _ in boxes]
    assert len(boxes) == 3 * 9 and "222,048" not in texts    # every bar labelled (the totals' too)
    assert any(t.startswith("2") and len(t) == 7 for t in texts)   # 6-digit totals printed whole, e.g. 222,926
    for i, (ta, (x, y, w, h)) in enumerate(boxes):
        assert 0 <= x and x + w <= width and 0 <= y and y + h <= height, (ta, x, y, w, h)
        for tb, (x2, y2, w2, h2) in boxes[i + 1:]:
            apart = x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y
            assert apart, f"{ta} and {tb} overlap at {size}"
    png = tmp_path / "chart.png"
    png.write_bytes(chart_png(table, width, height))
    assert png.stat().st_size > 1000


# ---------------------------------------------------------------------------------- results on real output

DS2 = ROOT / "tests" / "data" / "captures" / "dvdstore" / "ds2webdriver_doc_typical_run.txt"


def test_a_dvd_store_header_naming_its_target_by_address_is_read_not_a_traceback():
    """The real driver output (captures/dvdstore) with the target an IP address, as `--target=IP` prints
    it in the header line: the address is not a figure, the Final line's are."""
    from app.metrics.dvdstore import parse_dvdstore
    text = DS2.read_text().replace("rhel32", "192.168.30.201")
    assert "target= 192.168.30.201  n_threads= 1" in text
    parsed = parse_dvdstore(text)
    assert parsed.extra["orders per minute"] == 147 and parsed.extra["threads"] == 1
    assert parsed.duration_s == 61.0


def test_results_weight_each_sample_by_the_time_it_covers():
    """A 6 s fio run whose collector paused: five samples, the last after 2 s.  The average is the
    time-weighted one (I/Os over seconds), not the mean of the samples."""
    from app.metrics.results import summarize
    from app.metrics.sample import Sample
    times = [1.0, 2.0, 3.0, 4.0, 6.0]
    values = [1000.0, 1000.0, 1000.0, 1000.0, 1500.0]    # the last stands for 2 s at 1,500 IO/s
    (s,) = summarize([Sample(t, "h1", "iops", v, "IO/s") for t, v in zip(times, values, strict=True)])
    assert s.average == pytest.approx((4 * 1000 + 2 * 1500) / 6)       # 1,166.7, not 1,100
