"""The failover-under-load part of a run as a person follows it in the Run tab, next to the printed
procedure: a matrix that fails fabric A, gives everything back, fails fabric B and gives it back again
(the h37u bed: path-a-down, all-paths, path-b-down, all-paths)."""
from __future__ import annotations

import re

from app.run.plan import run_steps
from app.run.positions import place_text
from tests.test_path_failover_bed import bed
from topology import methodology as M
from topology.fileformat import loads

MATRIX = """scenarios:
  - {id: all-paths, reference: true}
  - {id: path-a-down, failed: ['lnx1:san0', 'lnx2:san0'], fail_after_minutes: 0.05, restore_after_minutes: 0.15}
  - {id: path-b-down, failed: ['swB:1', 'swB:2'], fail_after_minutes: 0.05}
test_matrix:
  - {id: baseline, variable: queue depth, levels: [1, 8], scenarios: [all-paths], workloads: [oltp-1]}
  - {id: failover, variable: failed fabric, scenarios: [path-a-down, all-paths, path-b-down, all-paths],
     workloads: [oltp-1]}
run_plan: {repetitions: 2}
"""


def _methodology():
    return M.generate(loads(bed() + MATRIX, "under-load.yaml"))


def test_the_run_tab_numbers_each_phase_as_the_printed_procedure_does():
    """The second all-paths phase of the failover matrix is 'Phase 6 of 6' on paper; the Run tab said
    'phase 4 of 5' for it (and for phase 4), keying phases by (matrix entry, scenario, level) alone."""
    meth = _methodology()
    printed = {s.number: s.heading for s in meth.steps()}
    steps = run_steps(meth, {"lnx1": "local", "lnx2": "local"})
    checked = set()
    for step in steps:
        said = place_text(step, steps)
        heading = re.match(r"Phase (\d+) of (\d+)", printed[step.number])
        if not said or heading is None:
            continue
        assert f"phase {heading[1]} of {heading[2]}" in said, (step.number, printed[step.number], said)
        run = re.search(r"run (\d+) of (\d+)", printed[step.number])
        if run:
            assert f"run {run[1]} of {run[2]}" in said, (step.number, printed[step.number], said)
        checked.add(heading[1])
    assert checked == {"1", "2", "3", "4", "5", "6"}
