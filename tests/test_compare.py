"""Configurations and runs side by side: per host/VM and in total, the median of N runs, the
percentage difference with its formula and its denominator, and the bar chart on paper.

Figures: seed 000's own (Figure 3, median DVD Store OPM, optimized vs degraded, from
resources/examples/md3000i-hyperv-cluster.yaml, checked against reference/000 section 6), and
DVD Store driver outputs made from the real capture in tests/data/captures/dvdstore with only
the Final line's opm changed (each test says which figure it gave each file)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.metrics.comparison import RunFigures, Side, compare_sides
from app.run import journal as J

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"
STUDY = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"
DS2 = (ROOT / "tests" / "data" / "captures" / "dvdstore" / "ds2webdriver_doc_typical_run.txt").read_text()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, stdin=subprocess.DEVNULL)


def ds2_output(opm: int) -> str:
    """The real driver output with the Final line's orders per minute set to `opm`."""
    return re.sub(r"(Final: .*?opm=)147\b", rf"\g<1>{opm}", DS2, count=1)


def test_the_seed_reports_figures_compare_with_the_baseline_as_denominator():
    r = cli("compare", "optimized", "degraded", "--bed", str(SEED_000), "--metric", "opm", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    rows = {row["subject"]: row for row in data["rows"]}
    # Figure 3: 1,878 OPM optimized, 1,868 degraded at 500 users: (1868 - 1878) / 1878 = -0.53 %
    assert rows["500 users: SQL2008"]["values"] == {"optimized": 1878, "degraded": 1868}
    d = rows["500 users: SQL2008"]["differences"]["degraded"]
    assert d["percent"] == pytest.approx(-0.5325, abs=1e-3)
    assert d["formula"] == ("-0.5 % = (degraded 1,868 OPM − optimized 1,878 OPM) / optimized 1,878 OPM; "
                            "the denominator is optimized")
    assert "Total" not in rows            # 200 and 500 users are different measurements: never added up
    flipped = json.loads(cli("compare", "optimized", "degraded", "--bed", str(SEED_000), "--metric", "opm",
                             "--baseline", "degraded", "--format", "json").stdout)
    d = {row["subject"]: row for row in flipped["rows"]}["500 users: SQL2008"]["differences"]["optimized"]
    assert d["percent"] == pytest.approx(0.5353, abs=1e-3) and d["formula"].endswith("the denominator is degraded")
    # lower is better for LoadGen's response time: the text says which way a difference goes
    text = cli("compare", "optimized", "degraded", "--bed", str(SEED_000),
               "--metric", "weighted_p95_response_ms").stdout
    assert "lower is better" in text and "(lower is better: degraded is better)" in text
    assert cli("compare", "optimized", "degraded", "--bed", str(SEED_000), "--metric", "opm",
               "--baseline", "nominal").returncode == 2


def test_one_pair_of_figures_gives_two_percentages_depending_on_the_denominator():
    """The issue's case: 4.8 % over the slower side, 4.6 % over the faster; the table says which."""
    sides = [Side("A", [RunFigures("a", {"VM1": 1000.0})]), Side("B", [RunFigures("b", {"VM1": 1048.0})])]
    assert compare_sides(sides, "orders_per_minute").rows[0].differences[1].percent == pytest.approx(4.8)
    over_b = compare_sides(sides, "orders_per_minute", baseline="B").rows[0].differences[0]
    assert over_b.percent == pytest.approx(-4.58, abs=0.01) and "the denominator is B" in over_b.formula


def test_the_median_run_of_three_gives_its_own_per_vm_figures_and_an_even_count_says_so():
    runs = [RunFigures("r1", {"SQL1": 900.0, "SQL2": 1000.0}),      # total 1,900
            RunFigures("r2", {"SQL1": 1100.0, "SQL2": 950.0}),      # total 2,050: the median run
            RunFigures("r3", {"SQL1": 1200.0, "SQL2": 1150.0})]     # total 2,350
    table = compare_sides([Side("hyperv", runs), Side("esxi", [RunFigures("e1", {"SQL1": 1000.0,
                                                                                 "SQL2": 1000.0})])],
                          "orders_per_minute")
    rows = {r.subject: r for r in table.rows}
    assert rows["SQL1"].values[0] == 1100 and rows["SQL2"].values[0] == 950      # not each figure's own median
    assert rows["Total"].values == [2050, 2000]
    assert table.scores[0].how == "the median run of 3 by total: r2"
    even = compare_sides([Side("x", runs[:2])], "orders_per_minute")
    assert {r.subject: r.values[0] for r in even.rows}["SQL1"] == 1000      # (900 + 1100) / 2
    assert "mean of the two middle runs" in even.scores[0].how


def _runs_with_ds2(runs_dir: Path, configuration: str, figures: list[dict[str, int]], tmp: Path) -> list[str]:
    """One recorded run per entry, each with a DVD Store output per VM imported through the CLI."""
    ids = []
    for n, per_vm in enumerate(figures):
        info = J.new_run(str(STUDY), "", root=runs_dir, configuration=configuration)
        with J.Journal(info.dir) as journal:
            for vm in per_vm:
                journal.record("start", step="7.1", host=vm)
                journal.record("end", step="7.1", host=vm, status="ok")
        for vm, opm in per_vm.items():
            f = tmp / f"{configuration}-{n}-{vm}.txt"
            f.write_text(ds2_output(opm))
            r = cli("results", "import", info.id, str(f), "--step", "7.1", "--host", vm, "--runs-dir", str(runs_dir))
            assert r.returncode == 0, r.stderr
        ids.append(info.id)
    return ids


@pytest.mark.slow
def test_two_configurations_of_one_server_validate_get_a_procedure_each_and_compare_in_a_chart(tmp_path):
    """The issue's "done when": validate, a procedure per configuration, imported results, the chart."""
    v = cli("validate", str(STUDY))
    assert v.returncode in (0, 1) and "holds in: configuration esxi" in v.stdout
    m = cli("methodology", str(STUDY))
    assert m.stdout.count("# Test methodology:") == 2
    runs = tmp_path / "runs"
    # totals 10,000 (the median run), 10,400 and 9,800; then 10,480 (the median run), 10,700, 10,300
    _runs_with_ds2(runs, "hyperv", [{"SQL1": 5000, "SQL2": 5000}, {"SQL1": 5100, "SQL2": 5300},
                                    {"SQL1": 4900, "SQL2": 4900}], tmp_path)
    _runs_with_ds2(runs, "esxi", [{"SQL1": 5200, "SQL2": 5280}, {"SQL1": 5300, "SQL2": 5400},
                                  {"SQL1": 5100, "SQL2": 5200}], tmp_path)
    chart = tmp_path / "compare.png"
    r = cli("compare", "hyperv", "esxi", "--bed", str(STUDY), "--runs-dir", str(runs), "--chart", str(chart))
    assert r.returncode == 0, r.stderr
    assert "Orders per minute (OPM, higher is better); baseline: hyperv" in r.stdout
    total = next(line for line in r.stdout.splitlines() if line.startswith("Total "))
    assert total.split()[1:] == ["10,000", "10,480", "+4.8", "%"]
    assert "Total: +4.8 % = (esxi 10,480 OPM − hyperv 10,000 OPM) / hyperv 10,000 OPM; the denominator is hyperv" \
        in r.stdout
    assert re.search(r"SQL1\s+5,000\s+5,200\s+\+4\.0 %", r.stdout)        # the median runs' own VM figures
    assert "the median run of 3 by total" in r.stdout and "3 run(s) of configuration esxi" in r.stdout
    png = chart.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    # the appendix compares a bed's configurations by itself once they have figures
    pdf = tmp_path / "appendix.pdf"
    r = cli("appendix", str(STUDY), "-o", str(pdf), "--runs-dir", str(runs))
    assert r.returncode == 0, r.stderr
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    text = text.replace("\ufb01", "fi").replace("\ufb00", "ff")
    assert "Compared: hyperv / esxi" in text and "esxi vs hyperv" in text
    section = text[text.index("Compared: hyperv / esxi"):]
    assert re.search(r"Total\s+10,000\s+10,480\s+\+4\.8 %", section), section[:1500]
    assert "the denominator is always the baseline, hyperv" in section.replace("\n", " ")
    assert "Figure G.1: Orders per minute per host/VM and in total, hyperv / esxi" in section
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True).stdout
    assert len(images.strip().splitlines()) - 2 >= 2          # the diagram and the comparison chart
    # a run on its own is a side too; one that has no such figure says what to do
    bare = J.new_run(str(STUDY), "", root=runs, configuration="esxi")
    r = cli("compare", bare.id, "hyperv", "--runs-dir", str(runs), "--metric", "opm")
    assert r.returncode == 2 and f"results import {bare.id}" in r.stderr
