"""What `app.readiness` says a run cannot reach is what the run planner itself decides: every
step the planner leaves manual for want of an access entry, counted per host, and nothing else
(readiness plans only the steps that could run, which on a big bed is a small part of them)."""
from __future__ import annotations

import pytest

import resources
from app import readiness
from app.run.plan import run_steps
from topology.fileformat import load
from topology.methodology import generate


def _planner_says(bed, methodology) -> dict[str, list[str]]:
    transports = {a.host: a.transport for a in bed.access}
    held: dict[str, list[str]] = {}
    for rs in run_steps(methodology, transports):
        if rs.manual and rs.why_manual.startswith("no remote access is set for "):
            for host in rs.why_manual[len("no remote access is set for "):].split(", "):
                held.setdefault(host, []).append(rs.number)
    return held


@pytest.mark.parametrize("example", ["bladecenter-fc-hyperv-2008r2", "rhel-kvm-sriov-iscsi"])
def test_the_hosts_a_run_cannot_reach_are_the_planners(example):
    bed = load(resources.example_path(example))
    methodology = generate(bed)
    gaps = readiness.assess(bed, methodology)
    said = {g.subject: list(g.steps) for g in gaps
            if g.area == readiness.REACH and g.message.startswith("no access entry for ")}
    expected = _planner_says(bed, methodology)
    assert said == expected
    assert said, "the example has hosts without access: the comparison must compare something"
