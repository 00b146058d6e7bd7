"""One current scenario for every view: the placement view's scenario box and the validation
panel's scenario box set it, and the other box, the findings listed and the canvas badges
follow it (issue 12 item 2, the GUI part)."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_designer_e2e import open_window

from topology.fileformat import load
from topology.model import Scenario
from widgets.main_window import MainWindow

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"
ARRAY_PORTS = [f"MD3000i:C{c}-iSCSI{p}" for c in (0, 1) for p in (0, 1)]


@pytest.fixture
def window(qtbot, tmp_path):
    bed = load(SEED_000)
    bed.scenarios.append(Scenario(id="san-down", failed=list(ARRAY_PORTS)))
    w = open_window(qtbot, bed, tmp_path)
    w.document.validation.wait(20000)
    qtbot.waitUntil(lambda: w.document.validation.revision_shown == w.document.revision, timeout=20000)
    return w


def badge_lines(w: MainWindow, device: str) -> tuple[str, ...]:
    badge = w.canvas.badges.get(device)
    return badge.messages if badge is not None else ()


def test_the_placement_box_sets_the_scenario_the_findings_and_badges_follow(qtbot, window):
    w = window
    w.tabs.setCurrentWidget(w.placement)
    combo = w.placement.scenario_combo
    qtbot.waitUntil(lambda: combo.count() == 3)
    assert w.document.scenario.value == "*"         # all scenarios until someone picks one
    combo.setCurrentIndex([combo.itemData(i) for i in range(combo.count())].index("san-down"))
    assert w.document.scenario.value == "san-down"
    assert w.findings.scenario_box.currentText() == "Scenario: san-down"
    lost = [f for f in w.findings.visible_findings() if f.code == "PATH-001"]
    assert lost and {f.scenario for f in lost} == {"san-down"}
    # the array's badge now counts the paths the scenario loses
    assert any(line.startswith("[scenario san-down] PATH-001") for line in badge_lines(w, "MD3000i"))


def test_the_validation_box_moves_the_placement_view_and_the_badges(qtbot, window):
    w = window
    panel = w.findings
    panel.scenario_box.setCurrentIndex(panel.scenario_box.findData("degraded"))
    assert w.document.scenario.value == "degraded"
    w.tabs.setCurrentWidget(w.placement)
    qtbot.waitUntil(lambda: w.placement.scenario_combo.currentData() == "degraded")
    assert w.placement.scenario_id == "degraded"
    assert not any("san-down" in line for d in w.canvas.badges for line in badge_lines(w, d))
    panel.scenario_box.setCurrentIndex(panel.scenario_box.findData("san-down"))
    qtbot.waitUntil(lambda: w.placement.scenario_combo.currentData() == "san-down")
    assert any("[scenario san-down] PATH-001" in line for line in badge_lines(w, "MD3000i"))
    # the reference configuration alone: nothing of any scenario on the drawing
    panel.scenario_box.setCurrentIndex(panel.scenario_box.findData(""))
    assert w.document.scenario.value == ""
    assert not any(line.startswith("[") for d in w.canvas.badges for line in badge_lines(w, d))
    assert w.placement.scenario_combo.currentData() == "optimized"     # the bed's reference scenario


def test_undoing_the_scenario_shown_goes_back_to_all_scenarios(qtbot, window):
    from topology import operations
    w = window
    w.document.apply(operations.delete(w.document.bed, ["degraded"]))
    w.tabs.setCurrentWidget(w.placement)
    w.placement.toggle_failed("R710-1", True)       # a new failure scenario, shown at once
    made = w.document.scenario.value
    assert made == "degraded" and made in {s.id for s in w.document.bed.scenarios}
    assert w.findings.scenario_box.currentData() == made
    w.document.undo_stack.undo()                    # the scenario is gone again
    assert "degraded" not in {s.id for s in w.document.bed.scenarios}
    assert w.document.scenario.value == "*"
    assert w.findings.scenario_box.currentData() == "*"
