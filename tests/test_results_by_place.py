"""Results kept apart by their place in the test (issue 29): a run of the run section holds every
repetition, and `results`, `compare` never add them up unless asked; published figures are
recorded onto a configuration, scenario or level of the bed with no run and no hosts made up."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.metrics.run_results import attached
from app.run import journal as J

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "tests" / "data" / "captures"
DS2 = CAPTURES / "dvdstore" / "ds2webdriver_doc_typical_run.txt"
TWO_HYPERVISORS = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"


def _cli(*args: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=ROOT, env=env)


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^== (.+) ==$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _host_average(section: str, host: str, metric: str) -> float:
    line = next(ln for ln in section.splitlines() if ln.split()[:2] == [host, metric])
    return float(line.split()[2].replace(",", ""))


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A real run of the run section on this machine (the local transport, real fio): one load,
    repeated twice by the run plan, each repetition's fio report fetched and kept."""
    if shutil.which("fio") is None:
        pytest.skip("needs fio (installed by .ci/setup.sh)")
    from tests.run_beds import write_fio_bed
    tmp = tmp_path_factory.mktemp("two-runs")
    bed = write_fio_bed(tmp / "fio.yaml", "lc1", tmp / "lc1.dat", access={"transport": "local"}, minutes=0.05)
    doc = yaml.safe_load(bed.read_text())
    doc["run_plan"]["repetitions"] = 2
    bed.write_text(yaml.safe_dump(doc, sort_keys=False))
    env = os.environ | {"TESTBED_STUDIO_STATE_DIR": str(tmp / "state")}
    runs = tmp / "runs"
    r = _cli("run", str(bed), "--steps", "3", "--skip-manual", "--runs-dir", str(runs), env=env, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    (run_dir,) = runs.iterdir()
    return run_dir, runs, env


@pytest.mark.slow
def test_each_repetition_of_a_run_is_its_own_table_with_its_own_result_file(two_runs):
    run_dir, runs, env = two_runs
    files = attached(run_dir)
    assert [f.position.get("repetition") for f in files] == ["1", "2"]
    r = _cli("results", run_dir.name, "--runs-dir", str(runs), env=env)
    assert r.returncode == 0, r.stderr
    sections = _sections(r.stdout)
    assert list(sections) == ["run 1", "run 2"]
    for (name, section), file in zip(sections.items(), files, strict=True):
        # the per-second samples of that repetition only: their average is that repetition's fio figure
        assert f"result file {file.stored} (fio, lc1): IOPS" in section
        assert _host_average(section, "lc1", "iops") == pytest.approx(file.figure("iops"), rel=0.25), name
    assert "median of 2 runs of the test: lc1 IOPS (file)" in r.stdout
    merged = _cli("results", run_dir.name, "--runs-dir", str(runs), "--merge", env=env)
    assert merged.returncode == 0 and "==" not in merged.stdout and "lc1" in merged.stdout


def test_compare_counts_each_repetition_as_a_run_of_the_median(two_runs):
    from app.metrics.comparison import compare_sides, resolve_sides
    run_dir, runs, _env = two_runs
    (side,) = resolve_sides([run_dir.name], "iops", runs_root=runs)
    assert [r.label for r in side.runs] == [f"{run_dir.name} run 1", f"{run_dir.name} run 2"]
    assert [r.values["lc1"] for r in side.runs] == [f.figure("iops") for f in attached(run_dir)]
    table = compare_sides([side], "iops")
    assert "median of 2 runs" in table.text()


def test_results_prints_dvd_store_files_imported_into_a_run(tmp_path):
    info = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path)
    with J.Journal(info.dir) as journal:
        journal.record("start", step="6.3", host="SQL1")
        journal.record("end", step="6.3", host="SQL1", status="ok")
    r = _cli("results", "import", info.id, str(DS2), "--step", "6.3", "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    r = _cli("results", info.id, "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    # the capture's Final line: opm=147, rt_tot_avg=137
    assert "(DVD Store 2, SQL1): orders per minute 147" in r.stdout
    assert "average response time 137 ms" in r.stdout and "recorded no metrics" not in r.stdout


@pytest.mark.slow
def test_published_results_are_recorded_onto_a_configuration_without_a_run(tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text(TWO_HYPERVISORS.read_text() + "# the lab's own closing comment\n")
    env = os.environ | {"TESTBED_STUDIO_STATE_DIR": str(tmp_path / "state")}
    faster = tmp_path / "ds2-hyperv.txt"
    faster.write_text(DS2.read_text().replace("opm=147", "opm=160"))
    r = _cli("results", "import", str(bed), str(DS2), "--configuration", "esxi", "--subject", "SQL1", env=env)
    assert r.returncode == 0, r.stderr
    assert "result DS2-SQL1 / SQL1 at configuration esxi: opm = 147 OPM" in r.stdout
    for _ in range(3):          # three published runs of the other configuration
        r = _cli("results", "import", str(bed), str(faster), "--configuration", "hyperv", "--subject", "SQL1",
                 env=env)
        assert r.returncode == 0, r.stderr
    text = bed.read_text()
    assert text.endswith("# the lab's own closing comment\n")
    doc = yaml.safe_load(text)
    assert [(x["configuration"], x["subject"], x["metric"], x["value"]) for x in doc["results"]] == \
        [("esxi", "SQL1", "opm", 147)] + [("hyperv", "SQL1", "opm", 160)] * 3
    assert not (tmp_path / "state" / "runs").exists()          # no run was made for them
    r = _cli("compare", "--bed", str(bed), "hyperv", "esxi", env=env)
    assert r.returncode == 0, r.stderr
    assert "hyperv: the median run of 3" in r.stdout and "-8.1 %" in r.stdout


@pytest.mark.parametrize("args, words", [
    (["--configuration", "vmware"], "no configuration 'vmware' (it has: hyperv, esxi)"),
    ([], "say where in the test"),
    (["--configuration", "esxi"], "--workload (DS2-SQL1, DS2-SQL2)"),
    (["--configuration", "esxi", "--subject", "SQL9"], "no server or VM 'SQL9'"),
    (["--configuration", "esxi", "--subject", "SQL1", "--dry-run"], "dry run"),
])
def test_a_recorded_import_that_cannot_be_placed_changes_nothing(tmp_path, args, words):
    bed = tmp_path / "bed.yaml"
    shutil.copyfile(TWO_HYPERVISORS, bed)
    before = bed.read_bytes()
    r = _cli("results", "import", str(bed), str(DS2), *args)
    assert words in r.stdout + r.stderr and "Traceback" not in r.stderr
    assert r.returncode == (0 if "--dry-run" in args else 2)
    assert bed.read_bytes() == before


def test_appendix_g_prints_a_runs_repetitions_in_tables_of_their_own(two_runs, tmp_path):
    run_dir, runs, env = two_runs
    bed = next(Path(run_dir).glob("bed-at-start.yaml"))
    out = tmp_path / "appendix.md"
    r = _cli("appendix", str(bed), "--run", str(run_dir), "-o", str(out), "--format", "md", env=env)
    assert r.returncode == 0, r.stderr
    g = out.read_text().split("# Appendix G", 1)[1]
    for rep in ("1", "2"):
        assert f"Measured per host: run {run_dir.name}, run {rep}**" in g
        assert f"Result files: run {run_dir.name}, run {rep}**" in g
    assert f"Measured per host: run {run_dir.name}**" not in g        # never one table over both runs


def test_an_adopted_attempt_keeps_the_samples_from_before_the_kill_in_its_place(two_runs, tmp_path):
    """A step adopted after the application was killed has a start record of the resumed driver,
    long after the job began on its host; the end record's seconds are the job's own time.  The
    samples taken before the kill belong to the step, not to 'outside the test's steps' or to the
    repetition before.  The real run's clock is stretched 40 times (its 3 s loads become 2 minutes,
    beyond the clock slack), then each start is moved to three quarters of its step."""
    import json
    from datetime import datetime, timedelta

    from app.metrics.by_place import placed_report
    from app.metrics.results import load_samples
    run_dir, _runs, _env = two_runs
    adopted = tmp_path / run_dir.name
    shutil.copytree(run_dir, adopted, ignore=shutil.ignore_patterns("driver.lock"))
    journal, metrics = adopted / "journal.jsonl", adopted / "metrics.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    t0 = min(datetime.fromisoformat(r["time"]).timestamp() for r in records if "time" in r)

    def stretch(t: float) -> float:
        return t0 + (t - t0) * 40

    for r in records:
        if "time" in r:
            r["time"] = datetime.fromtimestamp(stretch(datetime.fromisoformat(r["time"]).timestamp()),
                                               datetime.fromisoformat(r["time"]).tzinfo).isoformat()
        if r["kind"] == "end" and isinstance(r.get("seconds"), (int, float)):
            r["seconds"] *= 40
    rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    metrics.write_text("".join(json.dumps([stretch(float(row[0])), *row[1:]]) + "\n" for row in rows))
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    samples = load_samples(adopted)
    before = placed_report(adopted, samples)
    assert before is not None and len(before.places) == 2 and all(p.samples for p in before.places)

    ends = {(r["step"], r.get("host")): r for r in records if r["kind"] == "end" and r.get("seconds", 0) > 60}
    shifted = 0
    for r in records:
        end = ends.get((r.get("step"), r.get("host")))
        if r["kind"] == "start" and end is not None:        # the resumed driver took it up late
            began = datetime.fromisoformat(r["time"])
            r["time"] = (began + timedelta(seconds=end["seconds"] * 0.75)).isoformat()
            shifted += 1
    assert shifted == 2
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    after = placed_report(adopted, samples)
    assert [(p.key, len(p.samples)) for p in after.places] == [(p.key, len(p.samples)) for p in before.places]
