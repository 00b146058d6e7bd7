"""The validation panel, driven as a person would: read the counts, filter, click a finding
(its components get selected), read why it matters and how to fix it, accept it as a
documented exception with a reason (undoable, saved with the bed), and withdraw it."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtWidgets import QApplication, QLabel

from app.document import Document
from app.selection import Selection
from topology.edits import SetField
from topology.exception_ops import ExceptionError, accept, matching_exceptions, unaccept
from topology.fileformat import dumps, load, loads
from topology.validation import validate
from widgets.validation_panel import ValidationPanel

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"


@pytest.fixture
def panel(qtbot, doc):
    selection = Selection()
    widget = ValidationPanel(doc, selection)
    qtbot.addWidget(widget)
    widget.resize(1100, 520)
    widget.show()
    doc.validation.wait()
    qtbot.waitUntil(lambda: bool(widget.findings), timeout=5000)
    return widget


def settle(qtbot, doc, panel, predicate) -> None:
    """Wait for the live validator to catch up with the last edit and the panel to show it."""
    doc.validation.wait()
    qtbot.waitUntil(lambda: bool(predicate()), timeout=5000)


def click(qtbot, panel: ValidationPanel, index) -> None:
    assert index.isValid()
    panel.tree.scrollTo(index)
    rect = panel.tree.visualRect(index)
    qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def finding(panel: ValidationPanel, code: str, subject: str):
    return next(f for f in panel.findings if f.code == code and subject in f.subjects)


def answer_reason_dialog(text: str | None, seen_state: dict | None = None) -> list[str]:
    """Type `text` into the reason dialog when it opens and click Accept (None: Cancel).  With
    `seen_state`, note whether Accept could be clicked and what the dialog says, then cancel."""
    from PySide6.QtTest import QTest

    from widgets.exception_dialog import ExceptionReasonDialog
    seen: list[str] = []

    def respond() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ExceptionReasonDialog):
            QTimer.singleShot(20, respond)
            return
        seen.append(dialog.findChild(QLabel).text())
        if text is None:
            dialog.reject()
            return
        dialog.reason.setPlainText(text)
        if seen_state is not None:
            seen_state["accept enabled"] = dialog.accept_button.isEnabled()
            dialog.accept()                     # Enter on the default button: with no reason it must not close
            seen_state["still open"] = dialog.isVisible()
            seen_state["says"] = dialog.problem.text()
            dialog.reject()
            return
        QTest.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    QTimer.singleShot(0, respond)
    return seen


def test_counts_groups_and_the_expected_seed_findings(panel):
    # the six ports with an address and no cable are one fact (CON-003), accepted in the example itself
    # (its LAN cabling is not stated); the two nodes without a heartbeat port are one (NET-004)
    assert panel.summary() == "0 errors, 3 warnings, 0 notes, 1 accepted"
    counts = panel.counts.text()
    assert "<b" in counts and "3</b> warnings" in counts and "1</b> accepted" in counts
    assert panel.group_titles() == ["Warnings (3)", "Accepted as documented (1)"]
    cabling = finding(panel, "CON-003", "DC:NIC1")
    assert cabling.count == 6 and cabling.message.startswith("6 ports have an address but no cable")
    codes = [f.code for f in panel.visible_findings()]
    assert {"NET-004", "RAID-003"} <= set(codes) and "CAP-003" not in codes   # the brief's expectations


def test_errors_come_first_and_filters_narrow_the_list(qtbot, doc, panel):
    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    doc.apply(SetField(host, "memory_gb", 8, owner="R710-1"))
    settle(qtbot, doc, panel, lambda: any(f.code == "CAP-001" for f in panel.findings))
    groups = panel.group_titles()
    assert groups[0].startswith("Errors (") and groups[1].startswith("Warnings (")
    assert panel.visible_findings()[0].severity == "error"

    panel.filter_buttons["warning"].click()
    assert {f.severity for f in panel.visible_findings() if not f.accepted} == {"error"}
    panel.filter_buttons["warning"].click()
    qtbot.keyClicks(panel.search, "heartbeat")
    qtbot.waitUntil(lambda: {f.code for f in panel.visible_findings()} == {"NET-004"}, timeout=2000)
    assert panel.group_titles() == ["Warnings (1 of 3)"]
    panel.search.clear()
    qtbot.keyClicks(panel.search, "MD3000i:group:SQL")             # by component id
    qtbot.waitUntil(lambda: [f.code for f in panel.visible_findings()] == ["RAID-003"], timeout=2000)
    qtbot.keyClicks(panel.search, " nothing-like-this")
    qtbot.waitUntil(lambda: panel.visible_findings() == [], timeout=2000)
    assert panel.group_titles() == ["No finding matches the filter."]


def test_clicking_a_finding_selects_its_components_and_shows_why_and_how(qtbot, panel):
    selection = panel.selection
    centred: list[frozenset] = []
    selection.centre_requested.connect(centred.append)
    raid = finding(panel, "RAID-003", "MD3000i")
    click(qtbot, panel, panel.index_for(raid))
    assert selection.ids == set(raid.subjects)
    assert centred == [frozenset(raid.subjects)], "one click, one focus request"
    detail = panel.detail.toPlainText()
    assert raid.message in detail and raid.hint in detail
    assert raid.reason in detail and f"Source: {raid.source}" in detail
    assert panel.accept_button.isEnabled() and not panel.unaccept_button.isEnabled()

    heartbeat = finding(panel, "NET-004", "R710-2")
    qtbot.keyClick(panel.tree, Qt.Key.Key_Up)                      # the keyboard walks the list too
    assert panel.current_finding() == heartbeat
    assert selection.ids == set(heartbeat.subjects) and len(centred) == 2
    selection.set(["DC"])                                          # the person clicked elsewhere...
    click(qtbot, panel, panel.index_for(heartbeat))                 # ...and clicks the same finding again
    assert selection.ids == set(heartbeat.subjects)
    panel.detail.anchorClicked.emit(QUrl("subject:MD3000-Cluster"))  # a component link in the detail pane
    assert selection.ids == {"MD3000-Cluster"}


def test_accept_with_a_reason_survives_save_and_load_then_withdraw(qtbot, doc, panel, tmp_path):
    target = finding(panel, "NET-004", "R710-1")
    assert target.count == 2            # one fact: neither node has a heartbeat port
    click(qtbot, panel, panel.index_for(target))
    asked = answer_reason_dialog("The report configures no heartbeat network; we model what was tested.")
    own = list(doc.bed.exceptions)         # the example's own (CON-003: its LAN cabling is not stated)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    assert asked and "NET-004 on R710-1, R710-2" in asked[0]
    # each case gets its record (a later third node is not accepted unseen), in one undoable step
    assert [(e.code, e.subject) for e in doc.bed.exceptions[len(own):]] == [("NET-004", "R710-1"),
                                                                            ("NET-004", "R710-2")]
    assert doc.undo_stack.count() == 1
    assert doc.undo_stack.text(0) == "Accept NET-004 on 2 cases as documented exception"

    settle(qtbot, doc, panel, lambda: finding(panel, "NET-004", "R710-1").accepted)
    accepted = finding(panel, "NET-004", "R710-1")
    assert accepted.count == 2 and accepted is finding(panel, "NET-004", "R710-2")
    row = panel.index_for(accepted)
    assert panel.group_title_of(row) == "Accepted as documented (2)"
    assert "accepted: The report configures no heartbeat network" in row.siblingAtColumn(1).data()
    assert panel.summary() == "0 errors, 2 warnings, 0 notes, 2 accepted"
    assert panel.current_finding() == accepted, "the picked finding stays picked across re-validation"
    assert "Accepted as a documented exception: The report configures" in panel.detail.toPlainText()
    assert panel.unaccept_button.isEnabled() and not panel.accept_button.isEnabled()

    saved = tmp_path / "accepted.yaml"
    doc.save(saved)
    reopened = Document()
    reopened.open(saved)
    other = ValidationPanel(reopened, Selection())
    qtbot.addWidget(other)
    reopened.validation.wait()
    qtbot.waitUntil(lambda: bool(other.findings), timeout=5000)
    again = finding(other, "NET-004", "R710-1")
    assert again.accepted and again.exception_reason.startswith("The report configures no heartbeat")

    click(qtbot, panel, panel.index_for(accepted))
    qtbot.mouseClick(panel.unaccept_button, Qt.MouseButton.LeftButton)
    assert doc.bed.exceptions == own and doc.undo_stack.count() == 2
    settle(qtbot, doc, panel, lambda: not finding(panel, "NET-004", "R710-1").accepted)
    assert panel.summary() == "0 errors, 3 warnings, 0 notes, 1 accepted"
    doc.undo_stack.undo()                                          # the withdrawal is undoable too
    settle(qtbot, doc, panel, lambda: finding(panel, "NET-004", "R710-1").accepted)
    doc.undo_stack.undo()
    settle(qtbot, doc, panel, lambda: not finding(panel, "NET-004", "R710-1").accepted)
    reopened.undo_stack.clear()


def test_an_empty_reason_keeps_the_dialog_open_saying_what_it_needs_and_cancel_records_nothing(qtbot, doc, panel):
    click(qtbot, panel, panel.index_for(finding(panel, "RAID-003", "MD3000i")))
    own = list(doc.bed.exceptions)
    state: dict = {}
    answer_reason_dialog("   ", state)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    assert state == {"accept enabled": False, "still open": True,
                     "says": "A reason is needed: it is saved in the bed and printed with the findings."}
    assert doc.bed.exceptions == own and doc.undo_stack.count() == 0
    answer_reason_dialog(None)
    qtbot.mouseClick(panel.accept_button, Qt.MouseButton.LeftButton)
    assert doc.bed.exceptions == own and doc.undo_stack.count() == 0


def test_the_panel_shows_results_and_says_when_it_is_checking(qtbot, doc, panel):
    summaries: list[str] = []
    panel.summary_changed.connect(summaries.append)
    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    doc.apply(SetField(host, "memory_gb", 8, owner="R710-1"))
    assert panel.state.text() == "checking…"          # the edit returned before any validation ran
    assert not any(f.code == "CAP-001" for f in panel.findings)
    settle(qtbot, doc, panel, lambda: any(f.code == "CAP-001" for f in panel.findings))
    assert panel.state.text() == ""
    assert summaries[-1] == "2 errors, 3 warnings, 0 notes, 1 accepted" == panel.summary()
    panel.show_message("validation failed: RuntimeError('boom')")
    assert "validation failed" in panel.counts.text() and panel.visible_findings() == []


def test_grab_the_validation_panel(qtbot, doc, panel):
    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    doc.apply(SetField(host, "memory_gb", 8, owner="R710-1"))
    doc.apply(accept(doc.bed, "RAID-003", ["MD3000i"], "The report's configuration has no spare slot."))
    settle(qtbot, doc, panel, lambda: any(f.accepted for f in panel.findings)
           and any(f.code == "CAP-001" for f in panel.findings))
    click(qtbot, panel, panel.index_for(finding(panel, "CAP-001", "R710-1")))
    qtbot.wait(50)
    assert panel.grab().save("/tmp/testbed-validation-panel.png")


# ============================================================================ exception edits, Qt-free

def test_accept_and_unaccept_are_exact_reversible_edits():
    bed = load(SEED_000)
    original = dumps(bed)
    own = list(bed.exceptions)
    edit = accept(bed, "NET-004", ("R710-1", "MD3000-Cluster"), "  no  heartbeat\nnetwork  ")
    edit.apply()
    assert [(e.code, e.subject, e.reason) for e in bed.exceptions[len(own):]] == [
        ("NET-004", "R710-1", "no heartbeat network")]
    assert "R710-1" in edit.touched()
    flags = {(f.code, f.subjects[0]): f.accepted for f in validate(bed)}
    assert flags[("NET-004", "R710-1")] and not flags[("NET-004", "R710-2")]
    assert loads(dumps(bed)).exceptions == bed.exceptions
    with pytest.raises(ExceptionError, match="already accepted"):
        accept(bed, "NET-004", ("R710-1",), "again")
    withdraw = unaccept(bed, "NET-004", ("R710-1", "MD3000-Cluster"))
    withdraw.apply()
    assert bed.exceptions == own and dumps(bed) == original
    withdraw.revert()
    edit.revert()
    assert dumps(bed) == original


def test_unaccept_removes_a_wildcard_and_refuses_when_nothing_matches():
    bed = load(SEED_000)
    from topology.model import ExceptionRecord
    bed.exceptions.clear()          # the example's own (CON-003) play no part here
    bed.exceptions.append(ExceptionRecord(code="NET-004", subject="*", reason="lab policy"))
    assert len(matching_exceptions(bed, "NET-004", ["R710-2"])) == 1
    edit = unaccept(bed, "NET-004", ["R710-2"])
    edit.apply()
    assert bed.exceptions == []
    edit.revert()
    assert bed.exceptions[0].subject == "*"
    with pytest.raises(ExceptionError, match="not accepted"):
        unaccept(bed, "RAID-003", ["MD3000i"])
    with pytest.raises(ExceptionError, match="needs a reason"):
        accept(bed, "RAID-003", ["MD3000i"], " ")


def test_the_panel_names_each_findings_scenario_and_follows_the_one_chosen(qtbot, tmp_path):
    from topology.model import Scenario
    bed = load(SEED_000)
    ports = [f"MD3000i:C{c}-iSCSI{p}" for c in (0, 1) for p in (0, 1)]
    bed.scenarios.append(Scenario(id="san-down", failed=ports))
    path = tmp_path / "san-down.yaml"
    path.write_text(dumps(bed))
    document = Document()
    document.open(path)
    widget = ValidationPanel(document, Selection())
    qtbot.addWidget(widget)
    widget.show()
    document.validation.wait()
    qtbot.waitUntil(lambda: bool(widget.findings), timeout=10000)
    lost = [f for f in widget.findings if f.code == "PATH-001"]
    assert lost and {f.scenario for f in lost} == {"san-down"}
    row = widget.index_for(lost[0])
    assert row.isValid() and row.siblingAtColumn(1).data().startswith("[scenario san-down] ")
    boxes = [widget.scenario_box.itemText(i) for i in range(widget.scenario_box.count())]
    assert boxes == ["All scenarios", "Reference configuration", "Scenario: optimized",
                     "Scenario: degraded", "Scenario: san-down"]
    chosen = []
    widget.scenario_chosen.connect(chosen.append)
    widget.scenario_box.setCurrentIndex(1)          # the reference configuration alone
    assert chosen == [""] and not [f for f in widget.visible_findings() if f.code == "PATH-001"]
    assert "0 errors" in widget.counts.text().replace("</b>", "").replace("<b style=\"color:palette(mid)\">", "")
    widget.set_scenario("san-down")
    assert widget.scenario_box.currentText() == "Scenario: san-down"
    shown = widget.visible_findings()
    assert [f for f in shown if f.code == "PATH-001"] and {f.scenario for f in shown} <= {None, "san-down"}
    widget.tree.setCurrentIndex(widget.index_for(lost[0]))
    assert "scenario san-down" in widget.detail.toPlainText()
    document.validation.wait()
    document.undo_stack.clear()


def test_the_severity_filter_is_kept_for_the_next_panel(qtbot, doc, panel):
    panel.filter_buttons["info"].click()
    panel.filter_buttons["accepted"].click()
    try:
        again = ValidationPanel(doc, Selection())
        qtbot.addWidget(again)
        shown = {k: b.isChecked() for k, b in again.filter_buttons.items()}
        assert shown == {"error": True, "warning": True, "info": False, "accepted": False}
        qtbot.waitUntil(lambda: bool(again.findings), timeout=5000)
        assert again.group_titles() == ["Warnings (3)"]
    finally:
        panel.filter_buttons["info"].click()
        panel.filter_buttons["accepted"].click()
    assert {k: b.isChecked() for k, b in ValidationPanel(doc, Selection()).filter_buttons.items()} == dict.fromkeys(
        ("error", "warning", "info", "accepted"), True)


def test_a_fact_lists_its_cases_and_what_its_cause_explains(qtbot, tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    from fact_beds import fc_blade_bed
    path = tmp_path / "left-out.yaml"
    path.write_text(dumps(fc_blade_bed(left_out="hs22-6")))
    document = Document()
    document.open(path)
    widget = ValidationPanel(document, Selection())
    qtbot.addWidget(widget)
    widget.resize(1100, 700)
    widget.show()
    document.validation.wait()
    qtbot.waitUntil(lambda: bool(widget.findings), timeout=10000)
    assert widget.summary() == "1 error, 3 warnings, 1 note"
    root = finding(widget, "MAP-002", "hs22-6")
    click(qtbot, widget, widget.index_for(root))
    detail = widget.detail.toPlainText()
    assert "24 cases:" in detail and "ds5020:LUN9 is mapped to host group HV-Cluster" in detail
    assert "Explains 54 other case(s)" in detail and "PATH-001 error: hs22-6 has no path to 24 volumes" in detail
    assert widget.grab().save("/tmp/testbed-validation-panel-fact.png")
    document.validation.wait()
    document.undo_stack.clear()
