"""The as-run record in Appendix G: a real run (local transport, real bash) that fails a step,
is resumed and finishes it, skips a manual step with a reason, leaves another unreached, and
whose bed is edited afterwards; the PDF lists each step's status, host, start and end, and
every deviation from the plan."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.pdf_text import pdf_text
from tests.run_beds import TEMPLATES, write_bed

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env=env, stdin=subprocess.DEVNULL)


def test_the_appendix_prints_the_run_as_it_happened(tmp_path):
    env = os.environ | {"TESTBED_STUDIO_STATE_DIR": str(tmp_path / "state")}
    marks = tmp_path / "marks"
    marks.mkdir()
    bed = write_bed(tmp_path / "bed.yaml", [{"id": "h1", "transport": "local"}], mark_dir=marks, manual_check=True)
    runs = tmp_path / "runs"
    (marks / "h1.fail").write_text("fail the work step once\n")
    first = cli("run", str(bed), "--templates", TEMPLATES, "--runs-dir", str(runs), "--steps", "1", env=env)
    assert first.returncode == 1, first.stdout + first.stderr          # step 1.3 failed
    run_id = next(runs.iterdir()).name
    (marks / "h1.fail").unlink()
    again = cli("run", str(bed), "--templates", TEMPLATES, "--runs-dir", str(runs), "--resume", run_id,
                "--skip", "1.4", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    # the bed changes after the run began
    bed.write_text(bed.read_text().replace("os: Debian 12", "os: Debian 13"))
    pdf = tmp_path / "a.pdf"
    r = cli("appendix", str(bed), "-o", str(pdf), "--run", run_id, "--runs-dir", str(runs), env=env)
    assert r.returncode == 0, r.stderr
    text = pdf_text(pdf)
    record = text[text.index(f"As run: run {run_id}"):]
    rows = {m.group(1): line for line in record.splitlines() if (m := re.match(r"\s*(1\.\d)\s", line))}
    assert "done" in rows["1.1"] and "h1" in rows["1.1"] and re.search(r"\d\d:\d\d:\d\d", rows["1.1"])
    assert "failed, then done on attempt 2" in rows["1.3"] and rows["1.3"].split()[-1] == "2"
    assert "skipped" in rows["1.4"] and "skipped with --skip" in rows["1.4"]
    deviations = record[record.index("Deviations from the plan"):].replace("\n", " ")
    deviations = " ".join(deviations.split())
    skip = re.search(r"step 1\.4 on h1 \((.+?)\) was skipped: skipped with --skip", deviations)
    assert skip and skip[1] == "Check by eye that the cables of h1 are seated.", deviations   # what it asked
    assert "was added" not in deviations                                   # the procedure kept at the start
    assert "the run was started for steps 1 only: 1 step(s) of the procedure were not part of it (2.1)" \
        in deviations
    assert "changed since the run began: servers[h1].os: 'Debian 12' -> 'Debian 13'" in deviations
    assert (runs / run_id / "bed-at-start.yaml").read_text().count("Debian 12") == 1


def test_a_step_text_shortened_in_the_record_is_cut_at_a_word_and_says_so():
    """'step 7.136 of the procedure was not run: Report the median run of the 2 runs of failover for each
    metric, and compare it with the pass criteri' read as the step's whole text (h38w's appendix)."""
    from app.run.as_run import _shortened
    text = ("Report the median run of the 2 runs of failover for each metric, and compare it with the pass "
            "criteria of the workloads, and write both into the report.")
    short = _shortened(text, 120)
    assert len(short) <= 120 and short.endswith("…") and text.startswith(short[:-1])
    assert short == ("Report the median run of the 2 runs of failover for each metric, and compare it with the pass "
                     "criteria of the…")
    assert _shortened("Wait.", 120) == "Wait."
