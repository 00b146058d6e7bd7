"""The printed run section reads like a published Appendix F ("repeat steps X–Y for each run")
while the run engine keeps one step per run: every engine step is printed or named in a repeat."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.report.assembly import build_appendix
from app.report.export import to_markdown
from topology.fileformat import load
from topology.methodology import generate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "resources" / "examples"


def _run_section(bed) -> tuple[list, str]:
    meth = generate(bed)
    run = next(s for s in meth.sections if s.key == "run")
    text = to_markdown(build_appendix(bed, methodology=meth))
    start = text.index(f"## {run.number}. {run.title}")
    return run.steps, text[start:text.index("# Appendix G", start) if "# Appendix G" in text[start:] else None]


def _numbers_named(printed: str, section: str) -> set[str]:
    """Step numbers printed in full, and those a repeat names (spans 'A–B')."""
    named = set(re.findall(rf"^\*\*({section}\.\d+)\.\*\*", printed, flags=re.M))
    for a, b in re.findall(rf"\b{section}\.(\d+)–{section}\.(\d+)\b", printed):
        named |= {f"{section}.{k}" for k in range(int(a), int(b) + 1)}
    return named


@pytest.mark.parametrize("name", ["md3000i-hyperv-cluster", "equallogic-ps6110-hyperv"])
def test_every_engine_step_is_printed_or_named_by_a_repeat(name):
    bed = load(EXAMPLES / f"{name}.yaml")
    steps, printed = _run_section(bed)
    section = steps[0].number.split(".")[0]
    assert _numbers_named(printed, section) >= {s.number for s in steps}
    full = re.findall(rf"^\*\*{section}\.\d+\.\*\*", printed, flags=re.M)
    # the run engine still has a step of its own for every run; the print holds far fewer
    assert len(full) < len(steps) / 2


def test_a_phases_three_runs_print_once_with_the_record_numbers_of_the_others():
    bed = load(EXAMPLES / "md3000i-hyperv-cluster.yaml")
    steps, printed = _run_section(bed)
    first = [s for s in steps if s.position.get("level") == "200 simulated users"
             and s.position.get("scenario") == "optimized" and s.position.get("repetition")]
    runs = {r: [s.number for s in first if s.position["repetition"] == r] for r in ("1", "2", "3")}
    assert len(runs["1"]) == len(runs["2"]) == len(runs["3"]) - 1          # run 3 ends with the score
    assert (f"Repeat steps {runs['1'][0]}–{runs['1'][-1]} for each of the other 2 runs of this phase, in the "
            f"same order: the run record numbers them {runs['2'][0]}–{runs['2'][-1]} (run 2), "
            f"{runs['3'][0]}–{runs['3'][-2]} (run 3).") in printed
    assert f"**{runs['3'][-1]}.** Report the median run of the 3 runs" in printed
    assert "Phase 1 of 4 (users, 200 simulated users): each of the 3 runs" in printed
    for number in runs["2"]:
        assert f"**{number}.**" not in printed


def test_levels_that_load_other_machines_are_printed_in_full():
    from tests.run_phase_beds import cells_bed
    bed = cells_bed()
    steps, printed = _run_section(bed)
    # one cell and two cells start different VMs: the two-cell run is its own, never "carry out ... again"
    assert not re.search(r"Carry out steps .* for cells, 2 active cells", printed)
    two_cells = [s for s in steps if s.position.get("level") == "2 active cells" and s.position.get("repetition")]
    assert f"**{two_cells[0].number}.**" in printed


def test_the_pdf_prints_the_repeats(tmp_path):
    out = tmp_path / "md3000i.pdf"
    r = subprocess.run([sys.executable, "-m", "app.cli", "appendix", str(EXAMPLES / "md3000i-hyperv-cluster.yaml"),
                        "-o", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True).stdout
    assert "Repeat steps" in re.sub(r"\s+", " ", text) and "Carry out steps" in re.sub(r"\s+", " ", text)
