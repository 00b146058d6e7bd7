"""The test itself in the procedure: phases (characterisation, cell levels, a degraded state), each
reached by a transition from the one before, each run repeated with its reset, loads in their
order for their own durations, counters started and stopped under one name, and where each step
stands in the test recorded with it (issue 29)."""
from __future__ import annotations

import re

import pytest

from resources import example_names, example_path
from tests.run_phase_beds import DEGRADED_PORTS, cell_vms, cells_bed
from topology import methodology as M
from topology.configurations import procedures
from topology.errors import BedFileError
from topology.fileformat import load, loads
from topology.synthetic_platforms import cases, platform_bed
from topology.unknown import NOT_STATED

PLACEHOLDERS = re.compile(r"«missing|not stated of|on not stated|the not stated")


@pytest.fixture(scope="module")
def cells_run():
    meth = M.generate(cells_bed())
    return next(s for s in meth.sections if s.key == "run").steps


def _phase_of(step) -> tuple[str, str]:
    return step.position["phase"], step.position["level"]


def test_the_phases_follow_the_test_characterisation_four_cell_levels_then_the_degraded_state(cells_run):
    phases = list(dict.fromkeys(_phase_of(s) for s in cells_run))
    assert phases == [("characterisation", "32 streams"), ("cells", "1 active cells"), ("cells", "2 active cells"),
                      ("cells", "3 active cells"), ("cells", "4 active cells"), ("degraded", "4 active cells")]
    # each phase is run three times, one after the other, and scored once after its last run
    for phase in phases:
        reps = [s.position.get("repetition") for s in cells_run if _phase_of(s) == phase]
        assert [r for r in dict.fromkeys(reps) if r] == ["1", "2", "3"]
        scores = [s for s in cells_run if _phase_of(s) == phase and s.template.endswith("#score")]
        assert len(scores) == 1 and "median run of the 3 runs" in scores[0].text


def test_each_level_loads_exactly_its_cells_vms_and_stops_the_others(cells_run):
    for level in range(1, 5):
        steps = [s for s in cells_run if _phase_of(s) == ("cells", f"{level} active cells")]
        first_run = [s for s in steps if s.position.get("repetition") == "1"]
        loaded = {s.target for s in first_run if s.template.endswith("#load")}
        assert loaded == {vm for c in range(1, level + 1) for vm in cell_vms(c)}
    # the characterisation loads 8 VMs; entering 1 cell stops cell 2's four, 2 cells starts them again
    char = [s for s in cells_run if _phase_of(s) == ("characterisation", "32 streams")
            and s.position.get("repetition") == "1" and s.template.endswith("#load")]
    assert {s.target for s in char} == set(cell_vms(1) + cell_vms(2))
    one = [s for s in cells_run if _phase_of(s) == ("cells", "1 active cells") and not s.position.get("repetition")]
    assert {re.match(r"Shut down (\S+) on", s.text).group(1) for s in one if s.template.endswith("#vm-stop")} == \
        set(cell_vms(2))
    three = [s for s in cells_run if _phase_of(s) == ("cells", "3 active cells") and not s.position.get("repetition")]
    assert {re.match(r"Start (\S+) on", s.text).group(1) for s in three if s.template.endswith("#vm-start")} == \
        set(cell_vms(3))


def test_sqlio_oltp_runs_before_dss_each_tool_for_its_own_duration(cells_run):
    for phase in dict.fromkeys(_phase_of(s) for s in cells_run):
        for rep in ("1", "2", "3"):
            run = [s for s in cells_run if _phase_of(s) == phase and s.position.get("repetition") == rep]
            loads = [s for s in run if s.template.endswith("#load")]
            if phase[0] == "characterisation":
                assert all("for 30 minutes" in s.text for s in loads)
                continue
            oltp = [run.index(s) for s in loads if "(sqlio-oltp)" in s.text]
            dss = [run.index(s) for s in loads if "(sqlio-dss)" in s.text]
            # OLTP starts with Jetstress and Iometer; a wait for all of them; DSS after that wait
            wait = next(run.index(s) for s in run if s.template.endswith("#wait"))
            assert max(oltp) < wait < min(dss)
            assert "about 120 minutes" in run[wait].text           # the longest of the group: Jetstress
            texts = {s.target + " " + s.text for s in loads}
            assert any("sql-1 Start sqlio (sqlio-oltp) on sql-1 for 45 minutes" in t for t in texts)
            assert any("exch-1 Start Jetstress (jetstress) on exch-1 for 120 minutes" in t for t in texts)
            together = [s for s in run if s.template.endswith("#loads-together")]
            # DSS alone on one VM at 1 cell starts by itself
            assert len(together) == (1 if phase[1] == "1 active cells" else 2)
            assert "sqlio (sqlio-oltp)" in together[0].text and "sqlio (sqlio-dss)" not in together[0].text


def test_the_degraded_phase_names_the_four_ports_it_disables_and_checks_the_paths(cells_run):
    end = next(k for k, s in enumerate(cells_run) if s.heading.startswith("After the last phase"))
    setup = [s for s in cells_run[:end]
             if _phase_of(s) == ("degraded", "4 active cells") and not s.position.get("repetition")]
    disable = [s for s in setup if s.template.endswith("#part-disable")]
    assert len(disable) == 4
    for ref, step in zip(sorted(DEGRADED_PORTS), sorted(disable, key=lambda s: s.text), strict=True):
        port = ref.split(":")[1]
        assert f"host port {port} of ds5020 controller {port[0]}" in step.text
        # the port it faces on the Brocade switch module is disabled there, by its own CLI
        assert step.target in ("fcsm-a", "fcsm-b") and step.automation[0].script.startswith("portdisable ")
    assert any("Storage Manager shows host ports A3, A4, B3 and B4" in s.text for s in setup)
    paths = [s for s in setup if s.template.endswith("#check-paths")]
    assert {s.target for s in paths} == {"hs22-1", "hs22-2", "hs22-3", "hs22-4"}
    assert all("over 4 path(s) (8 with every part in service)" in s.text for s in paths)
    # nothing is disabled before the degraded phase; after its last run the four ports are enabled again
    assert not any(s.template.endswith("#part-disable") for s in cells_run if s.position["phase"] != "degraded")
    back = [s for s in cells_run[end:] if s.template.endswith("#part-enable")]
    assert len(back) == 4 and all(s.automation[0].script.startswith("portenable ") for s in back)
    assert all("over 8 path(s)" in s.text for s in cells_run[end:] if s.template.endswith("#check-paths"))


def test_counters_are_started_and_stopped_under_one_name_in_every_run(cells_run):
    for phase in dict.fromkeys(_phase_of(s) for s in cells_run):
        run = [s for s in cells_run if _phase_of(s) == phase and s.position.get("repetition") == "1"]
        start = [s for s in run if s.template.endswith("#counters-start")]
        stop = [s for s in run if s.template.endswith("#counters-stop")]
        copy = [s for s in run if s.template.endswith("#collect-counters")]
        assert [s.target for s in start] == [s.target for s in stop] == [s.target for s in copy]
        for s in start:
            assert "data collector set testbed-run" in s.text
            assert "logman create counter 'testbed-run'" in s.automation[0].script
        assert all(s.automation[0].script == "logman stop 'testbed-run'" for s in stop)
        first_load = next(run.index(s) for s in run if s.template.endswith("#load"))
        assert max(run.index(s) for s in start) < first_load < min(run.index(s) for s in stop)


def test_the_run_wizard_gets_each_steps_place_in_the_test(cells_run):
    """Every step of the run section carries its phase, scenario, level and repetition, and a heading
    is printed where each part of the test begins."""
    assert all(s.position is not None for s in cells_run)
    headings = [s.heading for s in cells_run if s.heading]
    assert headings[0] == "Phase 1 of 6 (characterisation, 32 streams): setting the bed up"
    assert "Phase 6 of 6 (degraded, 4 active cells, scenario ds3950): run 3 of 3" in headings
    assert len(headings) == 6 + 6 * 3 + 1 and headings[-1] == "After the last phase: every part back in service"
    md = M.to_markdown(M.generate(cells_bed()))
    assert "### Phase 2 of 6 (cells, 1 active cells): run 1 of 3" in md


def test_a_configurations_procedure_says_which_configuration_its_runs_are_for():
    bed = load(example_path("bladecenter-fc-hyperv-2008r2"))
    from topology.configuration_spec import Configuration
    bed.configurations = [Configuration(id="rdac"), Configuration(id="mpio", overrides={
        "hs22-1": {"multipath": "Microsoft MPIO"}})]
    made = procedures(bed)
    run = next(s for s in made[1][1].sections if s.key == "run").steps
    assert run[0].text.startswith("The runs below are of configuration mpio (2 of 2)")
    assert "from configuration rdac" in run[0].text and "Microsoft MPIO" in run[0].text
    assert all(s.position.get("configuration") == "mpio" for s in run)


# ---------------------------------------------------------------------------------- no placeholders

def _run_and_workload_texts(bed):
    for _, meth in procedures(bed):
        for sec in meth.sections:
            if sec.key in ("run", "workloads"):
                yield from ((sec.key, s) for s in sec.steps)


def _beds():
    for name in example_names():
        yield name, load(example_path(name))
    for case, transport in cases():
        yield f"{case.id}/{transport}", platform_bed(case, transport)
    yield "cells", cells_bed()
    blank = cells_bed()
    blank.workloads[0].targets = [NOT_STATED]
    blank.workloads[0].duration_minutes = NOT_STATED
    blank.workloads[1].driver = NOT_STATED
    rp = blank.run_plan
    rp.repetitions = rp.score = rp.idle_minutes = rp.sample_interval_s = NOT_STATED
    rp.counter_hosts = [NOT_STATED, "hs22-1"]
    yield "cells with values not stated", blank
    bare = cells_bed()
    bare.run_plan = None
    yield "cells without a run plan", bare


def test_no_placeholder_reaches_the_prose_of_the_test():
    """Every example, every platform variant and beds of the issue's shape (also with the run plan's
    values not stated, or no run plan): no «missing», no "not stated of", no "on not stated"."""
    found = []
    for name, bed in _beds():
        for _, step in _run_and_workload_texts(bed):
            if PLACEHOLDERS.search(step.text):
                found.append(f"{name} {step.number} ({step.template}): {step.text[:120]}")
    assert not found, "\n".join(found[:20])


def test_unstated_values_are_reworded():
    blank = dict(_beds())["cells with values not stated"]
    texts = [s.text for _, s in _run_and_workload_texts(blank)]
    assert "Install Iometer on the machine that runs it (the bed does not name it)." in texts
    assert any("at a sample interval the bed does not state" in t for t in texts)
    assert any(t.startswith("Start Iometer (characterise) on the machine that runs it (the bed does not name it) "
                            "for a time the bed does not state") for t in texts)
    assert any("the bed does not say how the runs are scored" in t for t in texts)


# ---------------------------------------------------------------------------------- the file format

BED = """\
format_version: 1
bed: {name: timing}
servers:
  - {id: h1, role: hypervisor}
vms:
  - {id: v1, host: h1, memory_gb: 1}
  - {id: v2, host: h1, memory_gb: 1}
workloads:
  - id: oltp
    tool: sqlio
    targets: [v1, v2]
    duration_minutes: 45
    ramp_minutes: 5
    order: 1
    together_with: [web]
    levels:
      - {level: '1', targets: [v1]}
      - {level: 2 cells, targets: [v1, v2]}
  - {id: web, tool: Iometer, targets: [v2], order: 1}
test_matrix:
  - {id: cells, variable: cells, levels: [1, 2], workloads: [oltp, web]}
run_plan: {repetitions: 3, score: median, collector: lab-set}
"""


def test_the_new_fields_load_save_and_appear_in_the_schema(tmp_path):
    from topology.fileformat import save
    from topology.schema import project_schema
    bed = loads(BED, "timing.yaml")
    w = bed.workloads[0]
    assert (w.duration_minutes, w.ramp_minutes, w.order, w.together_with) == (45, 5, 1, ["web"])
    assert [(x.level, x.targets) for x in w.levels] == [("1", ["v1"]), ("2 cells", ["v1", "v2"])]
    assert bed.run_plan.collector == "lab-set"
    out = tmp_path / "timing.yaml"
    save(bed, out)
    again = load(out)
    assert again.workloads[0].levels[1].targets == ["v1", "v2"] and again.workloads[0].together_with == ["web"]
    assert again.workloads[0].ramp_minutes == 5 and again.run_plan.collector == "lab-set"
    defs = project_schema()["$defs"]
    fields = set(defs["Workload"]["properties"])
    assert {"duration_minutes", "ramp_minutes", "order", "together_with", "levels"} <= fields
    assert "checks" in defs["Scenario"]["properties"] and "collector" in defs["RunPlan"]["properties"]
    assert {"published_percent", "published_against"} <= set(defs["Result"]["properties"])


@pytest.mark.parametrize("change, line, words", [
    ("{level: 2 cells, targets: [v1, v2]}", 18, "'3 cells' is not a level of a test_matrix entry"),
    ("{level: '2', targets: [v9]}", 18, "v9"),
])
def test_a_workload_level_that_is_no_matrix_level_or_names_no_machine_is_refused_with_its_line(change, line, words):
    text = BED.replace("      - {level: 2 cells, targets: [v1, v2]}",
                       "      - " + change.replace("2 cells", "3 cells"))
    with pytest.raises(BedFileError) as err:
        loads(text, "timing.yaml")
    message = err.value.format()
    assert f"timing.yaml:{line}" in message and words in message


def test_loads_started_together_must_share_their_order():
    with pytest.raises(BedFileError) as err:
        loads(BED.replace("  - {id: web, tool: Iometer, targets: [v2], order: 1}",
                          "  - {id: web, tool: Iometer, targets: [v2], order: 2}"), "timing.yaml")
    message = err.value.format()
    assert "timing.yaml:15" in message and "starts together with 'web', whose order is 2" in message


def test_a_bad_collector_name_is_refused():
    with pytest.raises(BedFileError) as err:
        loads(BED.replace("collector: lab-set", "collector: 'a b;c'"), "timing.yaml")
    assert "timing.yaml:22" in err.value.format()


def test_the_phase_loads_follow_the_levels_of_a_small_bed():
    bed = loads(BED, "timing.yaml")
    run = next(s for s in M.generate(bed).sections if s.key == "run").steps
    one = [s.target for s in run if s.template.endswith("#load") and s.position["level"] == "1 cells"
           and s.position["repetition"] == "1"]
    two = [s.target for s in run if s.template.endswith("#load") and s.position["level"] == "2 cells"
           and s.position["repetition"] == "1"]
    assert one == ["v1", "v2"] and two == ["v1", "v2", "v2"]      # oltp on v1 (then v1, v2), web on v2
    ramp = next(s for s in run if s.template.endswith("#load") and "(oltp)" in s.text)
    assert "for 45 minutes, of which the first 5 minutes are a ramp that is not measured" in ramp.text
