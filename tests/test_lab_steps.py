"""Steps as a lab writes them: one install per machine and package, a workload's parameters as one
step with a table, one BIOS visit per server, scenario text as sentences, a step's target is where it
runs (zoning on the FC switch, array steps on the management station)."""
from __future__ import annotations

import copy

import pytest

from topology import methodology as M
from topology.model import Scenario, Server, Workload, Zone
from topology.synthetic_platforms import PLATFORM_CASES, platform_bed

WS2012R2 = next(c for c in PLATFORM_CASES if c.id == "ws2012r2")


def _steps(meth: M.Methodology, suffix: str) -> list[M.Step]:
    return [s for s in meth.steps() if s.template.endswith(suffix)]


@pytest.fixture(scope="module")
def fc_bed():
    return platform_bed(WS2012R2, "fc")


def test_two_workloads_of_one_tool_on_one_machine_install_it_once(fc_bed):
    bed = copy.deepcopy(fc_bed)
    first = bed.workloads[0]
    bed.workloads.append(Workload(id="second", tool=first.tool, targets=list(first.targets),
                                  parameters={"threads": 8}))
    meth = M.generate(bed)
    installs = [s for s in _steps(meth, "#install") if s.target == first.targets[0]]
    assert len(installs) == 1, [s.text for s in installs]
    # a machine whose software list names the tool installs it with its software, not again
    vm = next(v for v in bed.vms if v.id == first.targets[0])
    vm.software.append(f"{first.tool} 2.0.2")
    meth = M.generate(bed)
    assert not [s for s in _steps(meth, "workloads.yaml#install") if s.target == vm.id]
    assert any(f"install {first.tool} 2.0.2" in s.text for s in meth.steps() if s.target == vm.id)


def test_a_workloads_parameters_are_one_step_with_a_table(fc_bed):
    meth = M.generate(fc_bed)
    w = fc_bed.workloads[0]
    params = [s for s in _steps(meth, "#parameter") if f"workload {w.id} " in s.text]
    assert len(params) == 1
    header, rows = params[0].table
    assert header == ["Parameter", "Value"] and len(rows) == len(w.parameters)
    assert ["Iodepth", "8"] in rows
    md = M.to_markdown(meth)
    assert "| Parameter | Value |" in md and "| Iodepth | 8 |" in md
    criteria = [s for s in _steps(meth, "#criterion") if w.id in s.text]
    assert len(criteria) == 1 and criteria[0].table[1] == [["read_latency_avg_ms", "below", "20 ms"]]


def test_a_servers_bios_settings_are_one_step_and_one_job(fc_bed):
    meth = M.generate(fc_bed)
    bios = [s for s in _steps(meth, "#bios") if s.target == "node1"]
    assert len(bios) == 1
    step = bios[0]
    assert len(step.table[1]) == 3
    script = step.automation[0].script      # R720: 12th generation, RACADM sets the BIOS
    assert script.count("racadm set ") == 3 and script.count("jobqueue create") == 1
    assert script.splitlines()[-1].startswith("racadm jobqueue create")


def test_fc_zoning_is_a_step_on_the_fc_switch(fc_bed):
    meth = M.generate(fc_bed)
    zones = _steps(meth, "#fc-zone")
    assert zones and {s.target for s in zones} == {"fabric-a", "fabric-b"}
    assert all(s.platform == "switch" for s in zones)
    assert not [s for s in meth.steps() if "zone" in s.text.lower() and s.target in ("node1", "node2")]
    bed = copy.deepcopy(fc_bed)
    for sw in bed.switches:
        if sw.kind == "fc":
            sw.zones = [Zone(name=f"z-{sw.id}", members=["node1:fc1", "array:A-a"])]
    declared = M.generate(bed)
    assert not _steps(declared, "#fc-zone")
    zone = _steps(declared, "#zone")
    assert {s.target for s in zone} == {"fabric-a", "fabric-b"}
    assert "10:00:00:00:c9:00:01:01" in zone[0].text


def test_array_steps_run_on_the_management_station(fc_bed):
    bed = copy.deepcopy(fc_bed)
    assert {s.target for s in M.generate(bed).steps() if s.template.startswith("common/storage.yaml")} == {"array"}
    bed.servers.append(Server(id="mgmt", role="management", os="Windows Server 2012 R2"))
    targets = {s.target for s in M.generate(bed).steps() if s.template.startswith("common/storage.yaml")}
    assert targets == {"mgmt"}


def test_scenario_steps_are_whole_sentences(fc_bed):
    bed = copy.deepcopy(fc_bed)
    bed.scenarios = [Scenario(id="cells-1", description="Two cells of the matrix."),
                     Scenario(id="node-down", failed=["node1"], description="node1 is off.")]
    meth = M.generate(bed)
    texts = [s.text for s in _steps(meth, "#scenario-setup") + _steps(meth, "#part-disable")]
    assert "Before the runs of scenario node-down, set the bed up as the scenario describes: node1 is off." in texts
    assert "Take host node1 out of service." in texts
    assert ("Before the runs of scenario cells-1, set the bed up as the scenario describes: Two cells of the "
            "matrix.") in texts
    assert not any(".." in t or t.endswith(": before starting its runs.") for t in texts)


@pytest.mark.parametrize("example", ["ams2500-exchange-esrp", "md3000i-hyperv-cluster", "equallogic-ps6110-hyperv",
                                     "bladecenter-fc-hyperv-2008r2"])
def test_a_vendor_template_done_in_the_vendors_tool_never_says_it_has_no_template(example):
    """SNM2 and Modular Storage Manager work is done in the vendor's GUI: the step comes from the
    vendor's own template and is manual by nature, not for want of a template."""
    import resources
    from topology.fileformat import load
    meth = M.generate(load(resources.example_path(example)))
    vendor = [s for s in meth.steps() if s.template.startswith(("array/", "switch/"))]
    assert vendor
    wrong = [(s.number, s.manual_reason) for s in vendor if s.manual_reason.startswith("no template for")]
    assert wrong == []
    if example == "ams2500-exchange-esrp":
        # the generic array-host step has no SNM2 wording: that one does say so
        generic = [s for s in meth.steps() if s.template == "common/storage.yaml#host"]
        assert generic and all(s.manual_reason.startswith("no template for Hitachi") for s in generic)
