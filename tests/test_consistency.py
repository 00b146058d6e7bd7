"""What the views say agrees with itself and with the rules (issue 15 item 12): the fail-over
finding and the VM placement view count the same VMs, a host card offered as a drop target
takes the drop, an address without a prefix is refused as it is typed, RAID levels read one
way everywhere, an exception needs its reason before the dialog closes, and Open Recent lists
only the beds of this state directory."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter

import resources
from app.document import Document
from app.selection import Selection
from tests.test_placement import chip, drag, make_view
from tests.test_property_editor import click_row, type_into
from topology import placement_ops as ops
from topology.address_entry import address_problem
from topology.fileformat import load
from topology.rename_ops import locate
from topology.validation import validate
from topology.vocabulary import choice_label, raid_name
from widgets.component_tree import ComponentTree
from widgets.forms.fields import ChoiceCombo
from widgets.property_editor import PropertyEditor

EQUALLOGIC = "equallogic-ps6110-hyperv"


# ------------------------------------------------------------------ fail-over: one arithmetic

def test_the_failover_finding_and_the_placement_view_count_the_same_vms(qtbot):
    bed = load(resources.example_path(EQUALLOGIC))
    cap = [c for f in validate(bed) if f.code == "CAP-003" for c in f.cases() if "if R720-1 fails" in c.message]
    assert len(cap) == 1 and "9 of its 10 highly available VMs (140 GB) find no room" in cap[0].message
    finding_vms = set(cap[0].subjects) - {"HV-CLUSTER", "R720-1"}

    doc, view = make_view(qtbot, bed)
    # the report's scale-out case runs both blocks, every VM on its home host, as the finding reads
    view.scenario_combo.setCurrentIndex(view.scenario_combo.findData("scale-out-case2"))
    qtbot.mouseClick(view.cards["R720-1"].fail_button, Qt.MouseButton.LeftButton)
    assert view.scenario_id == "scale-out-case2"
    stopped = {c.vm_id for c in view.stopped_card.findChildren(type(next(iter(view.cards["R720-2"].chips))))}
    o = ops.outcome(doc.bed, view.scenario_id)
    assert set(o.no_room) == finding_vms == stopped
    assert "9 with nowhere to go" in view.summary.text()
    assert "every VM has a host" not in view.summary.text()
    # and the survivor is never drawn over its RAM by the fail-over
    loads = ops.host_loads(doc.bed, view.scenario_id)
    r2 = loads["R720-2"]
    assert r2["memory_used_gb"] <= r2["usable_memory_gb"]
    # the report's own fail-over state (10 VMs, the 164 GB block) fits, in the view and the rules
    assert ops.outcome(doc.bed, "cluster-case1-failover").stranded == {}
    assert not [f for f in validate(doc.bed) if f.code == "CAP-003" and f.scenario == "cluster-case1-failover"]


# ------------------------------------------------------------------ drag and drop

def test_a_host_card_refuses_a_drop_before_it_is_dropped_on_and_takes_one_it_shows_as_target(qtbot):
    doc, view = make_view(qtbot, load(resources.example_path(EQUALLOGIC)))
    view.show_scenario("standalone")                      # excludes R720-2
    assert "R720-2" in view.cards
    vm = view.cards["R720-1"].chips[0].vm_id
    assert view.drop_refusal(vm, "R720-2") == "R720-2 is not part of scenario standalone"
    drag(view, chip(view, "R720-1", vm), view.cards["R720-2"], accepts=False)
    assert view.cards["R720-2"].property("state") == ""   # the refusal look goes with the drag
    assert doc.undo_stack.count() == 0
    assert "Not moved: R720-2 is not part of scenario standalone" in view.message.text()

    # every card the drag shows as a target takes the drop, and no other does
    from PySide6.QtTest import QTest
    for host in list(view.cards):
        c = chip(view, "R720-1", vm)
        card = view.cards[host]
        start, end = c.rect().center(), c.mapFromGlobal(card.mapToGlobal(card.rect().center()))
        QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
        for i in range(1, 6):
            QTest.mouseMove(c, start + (end - start) * i / 5)
        shown_as_target = card.property("state") == "drop"
        before = doc.undo_stack.count()
        QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
        moved = doc.undo_stack.count() == before + 1
        assert shown_as_target == moved, (host, view.message.text())
        if moved:
            doc.undo_stack.undo()
    drag(view, chip(view, "R720-1", vm), view.cards["R620"], accepts=True)
    assert doc.undo_stack.count() == 1 and vm in [c.vm_id for c in view.cards["R620"].chips]


# ------------------------------------------------------------------ addresses

@pytest.mark.parametrize("typed, network, problem", [
    ("192.168.130.250/24", "", None),
    ("192.168.130.250", "192.168.130.0/24", None),           # the network gives the prefix
    ("10.9.9.9", "", "10.9.9.9 has no prefix length (the subnet mask): write it as 10.9.9.9/N, e.g. 10.9.9.9/24"),
    ("10.9.9.9", "192.168.130.0/24", "10.9.9.9 has no prefix length and is outside its network 192.168.130.0/24"),
    ("fe80::1/64", "", None),
    ("192.168.130.300/24", "", "'192.168.130.300/24' is not an IP address"),
    ("", "", None),
])
def test_an_interface_address_needs_a_prefix_or_a_network_that_gives_one(typed, network, problem):
    found = address_problem(typed, network)
    assert (found is None) == (problem is None) and (problem is None or found.startswith(problem)), found


@pytest.fixture
def editor_and_tree(qtbot):
    doc = Document()
    doc.open(resources.example_path("md3000i-hyperv-cluster"))
    selection = Selection()
    window = QSplitter()
    tree = ComponentTree(doc, selection, window)
    editor = PropertyEditor(doc, selection, window)
    window.addWidget(tree)
    window.addWidget(editor)
    qtbot.addWidget(window)
    window.resize(1000, 900)
    window.show()
    qtbot.waitExposed(window)
    yield doc, tree, editor
    doc.validation.wait()
    doc.undo_stack.clear()


def test_an_address_without_a_prefix_is_refused_as_it_is_typed_not_shown_later_as_missing_mask(qtbot,
                                                                                             editor_and_tree):
    doc, tree, editor = editor_and_tree
    click_row(qtbot, tree, "R710-1:SAN1")
    port = locate(doc.bed, "R710-1:SAN1").obj
    field = editor.editor("address")
    port.network = ""                                        # a port on no network: nothing gives the prefix
    type_into(qtbot, field, "192.168.130.250")
    assert "has no prefix length" in editor.message("address") and "192.168.130.250/24" in editor.message("address")
    assert port.address == "192.168.130.201/24" and doc.undo_stack.count() == 0
    type_into(qtbot, field, "192.168.130.250/24")
    assert port.address == "192.168.130.250/24" and editor.message("address") == ""
    from topology.methodology import generate
    text = "\n".join(s.text for sec in generate(doc.bed).sections for s in sec.steps)
    assert "192.168.130.250" in text and "missing: port.mask" not in text


# ------------------------------------------------------------------ one vocabulary

def test_raid_levels_read_the_same_in_the_tree_the_forms_and_the_prints(qtbot, editor_and_tree):
    doc, tree, editor = editor_and_tree
    assert raid_name("raid10") == choice_label("raid10") == "RAID 10"
    click_row(qtbot, tree, "MD3000i:group:SQL")
    row = tree.items_for("MD3000i:group:SQL")[0]
    shown = " ".join(row.text(c) for c in range(row.columnCount()))
    assert "RAID 10" in shown and "RAID10" not in shown and "raid10" not in shown
    combo = editor.editor("raid")
    assert isinstance(combo, ChoiceCombo) and combo.currentText() == "RAID 10"
    assert "raid10" not in [combo.itemText(i) for i in range(combo.count())]


# ------------------------------------------------------------------ Open Recent

def test_open_recent_lists_only_the_beds_of_this_state_directory(qtbot, tmp_path, monkeypatch):
    from tests.dialogs import forget_changes
    from topology.fileformat import save
    from widgets.main_window import MainWindow
    bed = tmp_path / "mine.yaml"
    save(load(resources.example_path("md3000i-hyperv-cluster")), bed)

    def recent_entries(state: str) -> list[str]:
        monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / state))
        window = MainWindow()
        qtbot.addWidget(window, before_close_func=forget_changes)
        return window, [a.text() for a in window.files._recent_menu.actions()]

    first, entries = recent_entries("profile-a")
    assert entries == []
    assert first.open_path(bed)
    _second, entries = recent_entries("profile-a")
    assert entries == [str(bed.resolve())]
    _other, entries = recent_entries("profile-b")             # another state directory: none of a's files
    assert entries == []
    assert (tmp_path / "profile-a" / "preferences.json").is_file()
