"""VM placement: the Qt-free edits (topology/placement_ops.py) and the placement view driven
by mouse — drag a VM chip to another host, fail a host, watch the load bars."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from app.document import Document
from app.selection import Selection
from topology import placement_ops as ops
from topology.fileformat import dumps, load, loads
from widgets.placement_cards import AMBER, GREEN, RED
from widgets.placement_view import PlacementView

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
SHOTS = Path("/tmp/testbed-shots")


@pytest.fixture(scope="module")
def seed000_text() -> str:
    return dumps(load(EXAMPLES / "md3000i-hyperv-cluster.yaml"))


def without_degraded(text: str):
    bed = loads(text)
    bed.scenarios = [s for s in bed.scenarios if s.id != "degraded"]
    return bed


# ------------------------------------------------------------------------------- the edits

def roundtrip(bed, edit):
    before = dumps(bed)
    edit.apply()
    after = dumps(bed)
    assert after != before
    loads(after)
    edit.revert()
    assert dumps(bed) == before
    edit.apply()
    return after


def test_place_vm_without_scenario_moves_the_vm_itself(seed000_text):
    bed = loads(seed000_text)
    roundtrip(bed, ops.place_vm(bed, "Exchange", "R710-2"))
    assert next(v for v in bed.vms if v.id == "Exchange").host == "R710-2"
    loads_ = ops.host_loads(bed)
    assert (loads_["R710-1"]["memory_used_gb"], loads_["R710-2"]["memory_used_gb"]) == (14, 22)
    assert (loads_["R710-1"]["vcpu"], loads_["R710-2"]["vcpu"]) == (7, 15)


def test_place_vm_in_a_scenario_writes_an_override_and_moving_back_drops_it(seed000_text):
    bed = loads(seed000_text)
    sc = next(s for s in bed.scenarios if s.id == "degraded")
    sc.failed = []
    roundtrip(bed, ops.place_vm(bed, "Exchange", "R710-2", "degraded"))
    assert sc.placement["Exchange"] == "R710-2"
    assert next(v for v in bed.vms if v.id == "Exchange").host == "R710-1"   # reference untouched
    ops.place_vm(bed, "SQL2008", "R710-2", "degraded").apply()               # back home: no override
    assert "SQL2008" not in sc.placement


def test_the_reference_scenario_is_the_vms_own_host(seed000_text):
    bed = loads(seed000_text)
    ops.place_vm(bed, "Exchange", "R710-2", "optimized").apply()
    assert next(v for v in bed.vms if v.id == "Exchange").host == "R710-2"
    assert next(s for s in bed.scenarios if s.id == "optimized").placement == {}


def test_mark_failed_creates_the_degraded_scenario_and_fails_vms_over(seed000_text):
    bed = without_degraded(seed000_text)
    roundtrip(bed, ops.mark_failed(bed, "optimized", "R710-2"))
    assert [s.id for s in bed.scenarios] == ["optimized", "degraded"]
    loads_ = ops.host_loads(bed, "degraded")
    r1 = loads_["R710-1"]
    assert (r1["memory_used_gb"], r1["memory_gb"], r1["vcpu"], r1["threads"], len(r1["vms"])) == (36, 48, 22, 16, 16)
    assert loads_["R710-2"]["failed"] and loads_["R710-2"]["vms"] == []
    out = ops.outcome(bed, "degraded")
    assert len(out.failed_over) == 8 and set(out.failed_over.values()) == {"R710-2"} and not out.stranded


def test_vms_that_are_not_highly_available_have_nowhere_to_go(seed000_text):
    bed = without_degraded(seed000_text)
    for v in bed.vms:
        if v.id in ("SQL2008", "SMS"):
            v.highly_available = False
    ops.mark_failed(bed, None, "R710-2").apply()
    out = ops.outcome(bed, "degraded")
    assert set(out.stranded) == {"SQL2008", "SMS"}
    assert "not highly available" in out.stranded["SMS"]
    assert ops.host_loads(bed, "degraded")["R710-1"]["memory_used_gb"] == 18 + 6 * 2


@pytest.mark.parametrize("build, reason", [
    (lambda b: ops.place_vm(b, "Exchange", "R710-1"), "Exchange already runs on R710-1"),
    (lambda b: ops.place_vm(b, "Nope", "R710-1"), "there is no VM 'Nope'"),
    (lambda b: ops.place_vm(b, "Exchange", "MD3000i"), "'MD3000i' is not a server"),
    (lambda b: ops.place_vm(b, "Exchange", "R710-2", "degraded"), "R710-2 is failed in scenario degraded"),
    (lambda b: ops.place_vm(b, "Exchange", "R710-2", "nope"), "there is no scenario 'nope'"),
    (lambda b: ops.mark_failed(b, "degraded", "R710-2"), "R710-2 is already failed in scenario degraded"),
    (lambda b: ops.mark_failed(b, "degraded", "R710-1", failed=False), "R710-1 is not failed in scenario degraded"),
])
def test_impossible_moves_are_refused(seed000_text, build, reason):
    bed = loads(seed000_text)
    with pytest.raises(ops.PlacementRefused, match=reason):
        build(bed)
    assert dumps(bed) == seed000_text


# ------------------------------------------------------------------------------- the view

_DOCUMENTS: list = []


@pytest.fixture(autouse=True)
def _quiet_documents():
    yield
    while _DOCUMENTS:   # app/document.py connects a lambda that outlives the document on teardown
        _DOCUMENTS.pop().undo_stack.blockSignals(True)


def make_view(qtbot, bed):
    doc = Document(bed)
    _DOCUMENTS.append(doc)
    view = PlacementView(doc, Selection())
    qtbot.addWidget(view)
    view.resize(1000, 900)
    with qtbot.waitExposed(view):
        view.show()
    return doc, view


def drag(view, chip, target, accepts: bool = True) -> None:
    """Press on the chip, move in steps over the target card, release: as a hand would."""
    start = chip.rect().center()
    end = chip.mapFromGlobal(target.mapToGlobal(target.rect().center()))
    QTest.mousePress(chip, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for i in range(1, 6):
        QTest.mouseMove(chip, start + (end - start) * i / 5)
    assert view.ghost.isVisible(), "no drag feedback while dragging"
    highlighted = target.property("state") == "drop"
    assert highlighted == accepts, "the card under the cursor should show whether it takes the VM"
    QTest.mouseRelease(chip, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)


def chip(view, host, vm_id):
    return next(c for c in view.cards[host].chips if c.vm_id == vm_id)


def test_drag_a_vm_to_the_other_host_and_watch_the_load_bars(qtbot, seed000_text):
    doc, view = make_view(qtbot, loads(seed000_text))
    assert view.scenario_combo.currentText() == "optimized (reference)"
    r1, r2 = view.cards["R710-1"], view.cards["R710-2"]
    assert r1.ram_bar.text == "RAM 18 of 48 GB (46 usable)" and r1.ram_bar.colour == GREEN
    assert r1.cpu_bar.text == "vCPU 11 on 16 threads (0.69/thread)"
    SHOTS.mkdir(exist_ok=True)
    view.grab().save(str(SHOTS / "placement-seed000-before.png"))

    drag(view, chip(view, "R710-1", "Exchange"), r2)

    assert next(v for v in doc.bed.vms if v.id == "Exchange").host == "R710-2"
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Move Exchange to R710-2 in scenario optimized"
    r1, r2 = view.cards["R710-1"], view.cards["R710-2"]
    assert r1.ram_bar.text == "RAM 14 of 48 GB (46 usable)"
    assert r2.ram_bar.text == "RAM 22 of 48 GB (46 usable)"
    assert r2.cpu_bar.text == "vCPU 15 on 16 threads (0.94/thread)"
    assert "Exchange" in [c.vm_id for c in r2.chips] and len(r1.chips) == 7 and len(r2.chips) == 9
    view.grab().save(str(SHOTS / "placement-seed000-after-drag.png"))

    doc.undo_stack.undo()
    assert view.cards["R710-1"].ram_bar.text == "RAM 18 of 48 GB (46 usable)"
    assert "Exchange" in [c.vm_id for c in view.cards["R710-1"].chips]
    doc.undo_stack.redo()
    assert view.cards["R710-2"].ram_bar.text == "RAM 22 of 48 GB (46 usable)"


def test_dropping_on_no_host_changes_nothing(qtbot, seed000_text):
    doc, view = make_view(qtbot, loads(seed000_text))
    c = chip(view, "R710-1", "IIS1")
    start = c.rect().center()
    QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    far = c.mapFromGlobal(view.summary.mapToGlobal(QPoint(2, 2)))
    QTest.mouseMove(c, far)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, far)
    assert doc.undo_stack.count() == 0 and not view.ghost.isVisible()
    assert "Drop the VM on a host card" in view.message.text()


def test_mark_r710_2_failed_and_see_its_vms_counted_on_r710_1(qtbot, seed000_text):
    doc, view = make_view(qtbot, without_degraded(seed000_text))
    qtbot.mouseClick(view.cards["R710-2"].fail_button, Qt.MouseButton.LeftButton)

    assert [s.id for s in doc.bed.scenarios] == ["optimized", "degraded"]
    assert doc.undo_stack.count() == 1
    assert view.scenario_combo.currentText() == "degraded (R710-2 failed)"
    r1, r2 = view.cards["R710-1"], view.cards["R710-2"]
    assert r1.ram_bar.text == "RAM 36 of 48 GB (46 usable)" and r1.ram_bar.colour == AMBER
    assert r1.cpu_bar.text == "vCPU 22 on 16 threads (1.38/thread)"
    assert len(r1.chips) == 16 and not r2.chips
    assert sum(1 for c in r1.chips if c.note == "↪ from R710-2 (failed)") == 8
    assert r2.fail_button.isChecked() and r2.fail_button.text() == "Bring back"
    failed_note = r2.findChild(type(view.summary), "failedNote").text()
    assert "8 of its VMs now run elsewhere" in failed_note and "SQL2008 → R710-1" in failed_note
    assert "every VM has a host" in view.summary.text()
    SHOTS.mkdir(exist_ok=True)
    view.grab().save(str(SHOTS / "placement-seed000-R710-2-failed.png"))

    # a failed host takes no VM
    drag(view, chip(view, "R710-1", "IIS1"), view.cards["R710-2"], accepts=False)
    assert doc.undo_stack.count() == 1
    assert "Not moved: R710-2 is failed in scenario degraded" in view.message.text()

    doc.undo_stack.undo()
    assert [s.id for s in doc.bed.scenarios] == ["optimized"]
    assert view.scenario_combo.currentText() == "optimized (reference)"
    assert view.cards["R710-1"].ram_bar.text == "RAM 18 of 48 GB (46 usable)"


def test_a_failure_the_bed_already_has_is_shown_not_duplicated(qtbot, seed000_text):
    doc, view = make_view(qtbot, loads(seed000_text))
    qtbot.mouseClick(view.cards["R710-2"].fail_button, Qt.MouseButton.LeftButton)
    assert doc.undo_stack.count() == 0
    assert view.scenario_id == "degraded"
    assert view.cards["R710-1"].ram_bar.text == "RAM 36 of 48 GB (46 usable)"
    qtbot.mouseClick(view.cards["R710-2"].fail_button, Qt.MouseButton.LeftButton)   # bring it back
    assert doc.undo_stack.count() == 1
    assert next(s for s in doc.bed.scenarios if s.id == "degraded").failed == []
    assert not view.cards["R710-2"].fail_button.isChecked()


def test_vms_with_nowhere_to_go_are_listed_and_overload_turns_red(qtbot, seed000_text):
    bed = without_degraded(seed000_text)
    for v in bed.vms:
        if v.id in ("SQL2008", "SMS"):
            v.highly_available = False
    next(s for s in bed.servers if s.id == "R710-1").memory_gb = 32
    doc, view = make_view(qtbot, bed)
    qtbot.mouseClick(view.cards["R710-2"].fail_button, Qt.MouseButton.LeftButton)
    assert view.stopped_card is not None
    stopped = [c.vm_id for c in view.stopped_card.findChildren(type(view.cards["R710-1"].chips[0]))]
    assert sorted(stopped) == ["SMS", "SQL2008"]
    assert "2 with nowhere to go" in view.summary.text()
    r1 = view.cards["R710-1"]
    assert r1.ram_bar.text == "RAM 30 of 32 GB (30 usable)" and r1.ram_bar.colour == AMBER
    # SMS is put on R710-1 by hand: the highly available VMs restart only in the room left
    # (as CAP-003 counts it), so one of them now finds none and stops; nothing runs over RAM
    doc.apply(ops.place_vm(doc.bed, "SMS", "R710-1", "degraded"))
    stopped = [c.vm_id for c in view.stopped_card.findChildren(type(view.cards["R710-1"].chips[0]))]
    assert sorted(stopped) == ["SQL2008", "SharePoint2"]
    assert "finds no room" in ops.outcome(doc.bed, "degraded").stranded["SharePoint2"]
    assert view.cards["R710-1"].ram_bar.text == "RAM 30 of 32 GB (30 usable)"
    # a person can still put more on a host than it holds: that shows red
    view.show_scenario(None)
    for v in [v.id for v in doc.bed.vms if v.host == "R710-2"]:
        doc.apply(ops.place_vm(doc.bed, v, "R710-1"))
    assert view.cards["R710-1"].ram_bar.colour == RED
    assert "over RAM: R710-1" in view.summary.text()
    view.grab().save(str(SHOTS / "placement-seed000-stranded.png"))


@pytest.mark.parametrize("name", ["md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp"])
def test_every_example_renders_in_every_scenario(qtbot, name):
    doc, view = make_view(qtbot, load(EXAMPLES / f"{name}.yaml"))
    SHOTS.mkdir(exist_ok=True)
    for i in range(view.scenario_combo.count()):
        view.scenario_combo.setCurrentIndex(i)
        sid = view.scenario_combo.itemData(i)
        loads_ = ops.host_loads(doc.bed, sid)
        assert set(view.cards) == set(loads_)
        for host, card in view.cards.items():
            assert len(card.chips) == len(loads_[host]["vms"])
        view.grab().save(str(SHOTS / f"placement-{name}-{sid or 'reference'}.png"))
    if name.startswith("ams2500"):
        assert view.summary.text() == "This bed has no hypervisor hosts and no VMs to place."


def test_clicking_a_chip_selects_the_vm_and_the_view_follows_the_selection(qtbot, seed000_text):
    doc, view = make_view(qtbot, loads(seed000_text))
    qtbot.mouseClick(chip(view, "R710-2", "SMS"), Qt.MouseButton.LeftButton)
    assert view.selection.ids == {"SMS"} and chip(view, "R710-2", "SMS").selected
    assert doc.undo_stack.count() == 0
    view.selection.set(["IIS1", "R710-1"])
    assert chip(view, "R710-1", "IIS1").selected and not chip(view, "R710-2", "SMS").selected
