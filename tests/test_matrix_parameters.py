"""A test matrix that varies a load's parameter (4k random reads at queue depth 1, then 32): each phase's
command runs at that phase's level, not at the workload's own value, which would measure queue depth 1
twice under a heading that says 32."""
from __future__ import annotations

import re

import pytest

from topology import methodology as M
from topology.fileformat import loads
from topology.workload_tools import varied_parameter

BED = """format_version: 1
bed: {name: queue depth sweep}
servers:
  - {id: deb1, role: load_client, os: Debian GNU/Linux 12 (bookworm), platform: linux}
workloads:
  - id: rr4k
    tool: fio
    driver: deb1
    targets: [deb1]
    access: [{block_kb: 4, read_pct: 100, random_pct: 100}]
    parameters: {filename: /srv/fio.dat, size: 16m, iodepth: 1}
    duration_minutes: 0.05
scenarios:
  - {id: optimal, reference: true}
test_matrix:
  - {id: qd-sweep, variable: VARIABLE, levels: [1, 32], workloads: [rr4k], scenarios: [optimal]}
"""


def _depths(variable: str) -> list[str]:
    meth = M.generate(loads(BED.replace("VARIABLE", variable), "sweep.yaml"))
    scripts = [s.automation[0].script for s in meth.steps() if s.template == "linux/run.yaml#load"]
    return [m.group(1) for s in scripts for m in re.finditer(r"--iodepth=(\d+)", s)]


@pytest.mark.parametrize("variable", ["queue depth", "iodepth", "IODepth"])
def test_each_phase_runs_at_its_level(variable):
    assert _depths(variable) == ["1", "32"]


def test_a_variable_that_names_no_parameter_changes_no_command():
    assert _depths("active cells") == ["1", "1"]
    assert varied_parameter("fio", "size", {}) == "size" and varied_parameter("DiskSpd", "queue depth", {}) == ""
