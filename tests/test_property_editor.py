"""The property editor, driven as a person would: pick a component in the component tree,
type into the generated form, press Enter; and the Qt-free rename edit behind the Name
field (every reference follows, the renamed bed loads, undo restores the file exactly)."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLineEdit, QSplitter

from app.document import Document
from app.selection import Selection
from topology.edits import SetField
from topology.fileformat import check_references, dumps, load, loads
from topology.index import BedIndex
from topology.rename_ops import RenameError, check_name, locate, rename
from topology.unknown import NOT_STATED
from topology.validation import validate
from widgets.component_tree import ComponentTree
from widgets.forms.fields import BoolField, ChoiceCombo, NumberBox, RefCombo
from widgets.forms.values import parse_number
from widgets.property_editor import PropertyEditor
from widgets.validation_panel import ValidationPanel

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.yaml"))


@pytest.fixture
def studio(qtbot):
    """Seed 000 open, with the three panels a person uses here side by side."""
    doc = Document()
    doc.open(SEED_000)
    selection = Selection()
    window = QSplitter()                           # one window, as in the main window's docks
    tree = ComponentTree(doc, selection, window)
    editor = PropertyEditor(doc, selection, window)
    panel = ValidationPanel(doc, selection, window)
    for w in (tree, editor, panel):
        window.addWidget(w)
    qtbot.addWidget(window)
    window.resize(1500, 900)
    window.setSizes([420, 420, 660])
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    doc.validation.wait()
    qtbot.waitUntil(lambda: bool(panel.findings), timeout=5000)
    yield doc, selection, tree, editor, panel
    doc.validation.wait()
    doc.undo_stack.clear()     # while the document is alive: its cleanChanged handler needs it


def click_row(qtbot, tree: ComponentTree, ident: str) -> None:
    rows = [i for i in tree.items_for(ident) if i.data(0, Qt.ItemDataRole.UserRole + 2) != "node"]
    if not rows:                                   # a port or volume: open its device first
        device = next(i for i in tree.items_for(ident.split(":", 1)[0])
                      if i.data(0, Qt.ItemDataRole.UserRole + 2) != "node")
        device.setExpanded(True)
        rows = [i for i in tree.items_for(ident) if i.data(0, Qt.ItemDataRole.UserRole + 2) != "node"]
    item = rows[0]
    parent = item.parent()
    while parent is not None:
        parent.setExpanded(True)
        parent = parent.parent()
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    # on the row's name: the row runs on past a narrow dock's edge, so its centre may not be on screen
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.left() + 12, rect.center().y()))


def type_into(qtbot, widget, text: str) -> None:
    """Click into a field, replace its text and press Enter, the way a person edits a value."""
    target = widget.lineEdit() if isinstance(widget, (NumberBox, RefCombo)) else widget
    target.setFocus()
    target.selectAll()
    qtbot.keyClick(target, Qt.Key.Key_Backspace)
    qtbot.keyClicks(target, text)
    qtbot.keyClick(target, Qt.Key.Key_Return)


def codes_listed(panel: ValidationPanel) -> set[str]:
    return {f.code for f in panel.visible_findings()}


def server(doc: Document, ident: str):
    return next(s for s in doc.bed.servers if s.id == ident)


# ============================================================================ the form

def test_memory_edit_brings_cap001_and_undo_takes_it_away(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    click_row(qtbot, tree, "R710-1")
    assert selection.ids == {"R710-1"}
    assert editor.title.text() == "Server R710-1"
    memory = editor.editor("memory_gb")
    assert isinstance(memory, NumberBox) and memory.text() == "48"
    assert "CAP-001" not in codes_listed(panel)

    type_into(qtbot, memory, "8 GB")
    assert server(doc, "R710-1").memory_gb == 8
    assert doc.undo_stack.count() == 1
    assert doc.undo_stack.text(0) == "Set memory (GB) of R710-1"
    assert memory.text() == "8"
    doc.validation.wait()
    qtbot.waitUntil(lambda: "CAP-001" in codes_listed(panel), timeout=5000)
    cap = next(f for f in panel.visible_findings() if f.code == "CAP-001")
    assert cap.severity == "error" and "R710-1" in cap.subjects

    doc.undo_stack.undo()
    assert server(doc, "R710-1").memory_gb == 48
    assert memory.text() == "48", "the form follows undo"
    doc.validation.wait()
    qtbot.waitUntil(lambda: "CAP-001" not in codes_listed(panel), timeout=5000)


def test_a_value_can_be_marked_not_stated_and_the_rules_then_cannot_judge_it(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    click_row(qtbot, tree, "R710-1")
    memory = editor.editor("memory_gb")
    marker = editor._binding("memory_gb").marker
    assert marker is not None and not marker.isChecked()
    memory.setFocus()                                # the field's own shortcut (or its right-click menu)
    qtbot.keyClick(memory.lineEdit(), Qt.Key.Key_U, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    assert server(doc, "R710-1").memory_gb is NOT_STATED
    assert doc.undo_stack.text(0) == "Mark memory (GB) of R710-1 as not stated"
    assert marker.isChecked() and memory.text() == "" and memory.lineEdit().placeholderText() == "not stated"
    assert "memory_gb: not stated" in dumps(doc.bed)
    doc.validation.wait()
    qtbot.waitUntil(lambda: any(f.message.startswith("could not judge") and "R710-1 memory not stated" in f.message
                                for f in panel.findings), timeout=5000)
    type_into(qtbot, memory, "64")                   # typing a value states it
    assert server(doc, "R710-1").memory_gb == 64 and not marker.isChecked()
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert server(doc, "R710-1").memory_gb == 48 and not marker.isChecked()
    # typed as the file writes it, into a text field and into a number field
    click_row(qtbot, tree, "MD3000i:Logs")
    type_into(qtbot, editor.editor("size_gb"), "not stated")
    assert locate(doc.bed, "MD3000i:Logs").obj.size_gb is NOT_STATED
    # a field that names something (the port's own name) has no toggle
    assert editor._binding("name").marker is None


@pytest.mark.parametrize("typed, message", [("-5", "must be at least 0"), ("abc", "'abc' is not a number"),
                                            ("1e999", "is not a number")])
def test_bad_size_is_refused_with_a_message_and_nothing_changes(qtbot, studio, typed, message):
    doc, selection, tree, editor, panel = studio
    click_row(qtbot, tree, "MD3000i:Logs")
    assert editor.title.text() == "Volume MD3000i:Logs"
    volume = locate(doc.bed, "MD3000i:Logs").obj
    before, text_before = volume.size_gb, dumps(doc.bed)
    size = editor.editor("size_gb")
    type_into(qtbot, size, typed)
    assert message in editor.message("size_gb")
    assert volume.size_gb == before and dumps(doc.bed) == text_before
    assert doc.undo_stack.count() == 0
    type_into(qtbot, size, "200")                    # a good value clears the message
    assert volume.size_gb == 200 and editor.message("size_gb") == ""
    assert doc.undo_stack.count() == 1


def test_whole_number_fields_refuse_fractions_and_required_numbers_refuse_empty(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set(["R710-1"])
    type_into(qtbot, editor.editor("cpu.sockets"), "1.5")
    assert "not a whole number" in editor.message("cpu.sockets")
    type_into(qtbot, editor.editor("cpu.sockets"), "")
    assert editor.message("cpu.sockets") == "a value is required — still 2"
    type_into(qtbot, editor.editor("numa_nodes"), "")          # optional: empty means not stated
    assert editor.message("numa_nodes") == "" and doc.undo_stack.count() == 0
    assert server(doc, "R710-1").cpu.sockets == 2


def test_nested_cpu_group_edits_the_cpu_as_one_step_owned_by_the_server(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set(["R710-1"])
    touched: list[set] = []
    doc.changed.connect(touched.append)
    sockets = editor.editor("cpu.sockets")
    sockets.setFocus()
    qtbot.keyClick(sockets, Qt.Key.Key_Up)                    # the spin arrow, by keyboard
    assert server(doc, "R710-1").cpu.sockets == 3
    assert touched == [{"R710-1"}] and doc.undo_stack.count() == 1
    qtbot.keyClick(sockets, Qt.Key.Key_Down)
    qtbot.keyClick(sockets, Qt.Key.Key_Down)
    qtbot.keyClick(sockets, Qt.Key.Key_Down)                  # not below the minimum of 1
    assert server(doc, "R710-1").cpu.sockets == 1
    doc.undo_stack.undo()
    assert sockets.text() == "2"


def test_choice_bool_and_list_fields_each_commit_one_edit(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    click_row(qtbot, tree, "R710-1:SAN1")
    port = locate(doc.bed, "R710-1:SAN1").obj
    kind = editor.editor("kind")
    assert isinstance(kind, ChoiceCombo) and kind.currentData() == "ethernet"
    kind.setFocus()
    qtbot.keyClick(kind, Qt.Key.Key_Down)
    assert port.kind == "fc" and doc.undo_stack.count() == 1

    flow = editor.editor("flow_control")
    assert isinstance(flow, BoolField) and flow.text() == "yes"
    qtbot.mouseClick(flow, Qt.MouseButton.LeftButton, pos=QPoint(8, flow.height() // 2))
    assert port.flow_control is False and flow.text() == "no"
    qtbot.mouseClick(flow, Qt.MouseButton.LeftButton, pos=QPoint(8, flow.height() // 2))
    assert port.flow_control is None and flow.text() == "not stated"   # tri-state: report silent
    qtbot.mouseClick(flow, Qt.MouseButton.LeftButton, pos=QPoint(8, flow.height() // 2))
    assert port.flow_control is True and doc.undo_stack.count() == 4
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.undo_stack.count() == 4 and doc.undo_stack.index() == 2

    roles = editor.editor("roles")
    roles.toggle("lan")
    assert port.roles == ["iscsi", "lan"] and roles.text() == "iscsi, lan"
    assert doc.undo_stack.count() == 3, "redo history gave way to the new edit"
    doc.validation.wait()
    qtbot.waitUntil(lambda: any(f.code == "NET-001" and "R710-1:SAN1" in f.subjects
                                for f in panel.visible_findings()), timeout=5000)
    for _ in range(3):
        doc.undo_stack.undo()
    assert (port.kind, port.flow_control, port.roles) == ("ethernet", True, ["iscsi"])
    assert roles.text() == "iscsi" and flow.text() == "yes"


def test_list_mapping_and_note_editors(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set(["R710-1"])
    r710 = server(doc, "R710-1")
    software = editor.editor("software")
    editor.scroll.ensureWidgetVisible(software)                 # scrolled to, the way a person gets there
    before = list(r710.software)
    qtbot.mouseClick(software.add_button, Qt.MouseButton.LeftButton)       # a new, empty row opens for typing
    line = software.list.findChild(QLineEdit)
    assert line is not None and doc.undo_stack.count() == 0
    qtbot.waitUntil(line.hasFocus, timeout=1000)
    qtbot.keyClicks(line, "fio 3.33")
    qtbot.keyClick(line, Qt.Key.Key_Return)            # Qt commits an item editor on the next event-loop turn
    qtbot.waitUntil(lambda: doc.undo_stack.count() == 1, timeout=1000)
    assert r710.software == before + ["fio 3.33"] and editor.message("software") == ""
    software.list.setCurrentRow(0)
    qtbot.mouseClick(software.remove_button, Qt.MouseButton.LeftButton)
    assert r710.software == before[1:] + ["fio 3.33"] and doc.undo_stack.count() == 2

    bios = editor.editor("bios")
    editor.scroll.ensureWidgetVisible(bios)
    assert bios.table.item(0, 0).text() == "virtualization_technology"
    bios.table.setCurrentCell(0, 1)
    bios.table.editItem(bios.table.item(0, 1))
    cell = bios.table.findChild(QLineEdit)
    qtbot.waitUntil(cell.hasFocus, timeout=1000)
    cell.selectAll()
    qtbot.keyClicks(cell, "false")
    qtbot.keyClick(cell, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: doc.undo_stack.count() == 3, timeout=1000)
    assert r710.bios == {"virtualization_technology": False}, "typed values keep their type"

    note = editor.editor("note")
    editor.scroll.ensureWidgetVisible(note)
    note.setFocus()
    note.selectAll()
    qtbot.keyClicks(note, "Rack 4, slot 12")
    editor.editor("model").setFocus()                          # leaving the note commits it
    assert r710.note == "Rack 4, slot 12" and doc.undo_stack.count() == 4
    for _ in range(4):
        doc.undo_stack.undo()
    assert r710.software == before and r710.bios == {"virtualization_technology": True}
    assert software.list.count() == len(before)


def test_a_record_the_report_left_out_can_be_added_and_cleared(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    vm = next(v for v in doc.bed.vms if v.dynamic_memory is None)
    selection.set([vm.id])
    add = editor.group_add_button("dynamic_memory")
    editor.scroll.ensureWidgetVisible(add)
    assert add.isVisible() and not editor.editor("dynamic_memory.max_gb").isVisible()
    qtbot.mouseClick(add, Qt.MouseButton.LeftButton)
    assert vm.dynamic_memory is not None and doc.undo_stack.text(0) == f"Add dynamic memory of {vm.id}"
    maximum = editor.editor("dynamic_memory.max_gb")
    assert maximum.isVisible() and not add.isVisible()
    type_into(qtbot, maximum, "16")
    assert vm.dynamic_memory.max_gb == 16
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert vm.dynamic_memory is None and add.isVisible()


def test_reference_fields_accept_only_ids_that_exist(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    vm = doc.bed.vms[0]
    selection.set([vm.id])
    host = editor.editor("host")
    assert isinstance(host, RefCombo) and host.currentText() == vm.host
    other = "R710-2" if vm.host == "R710-1" else "R710-1"
    type_into(qtbot, host, "R710-9")
    assert "does not name a server" in editor.message("host") and vm.host != "R710-9"
    type_into(qtbot, host, other)
    assert vm.host == other and editor.message("host") == ""
    assert doc.undo_stack.text(doc.undo_stack.count() - 1) == f"Set host of {vm.id}"


def test_rename_a_server_references_follow_and_undo_restores(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    original = dumps(doc.bed)
    vms_before = sorted(v.id for v in doc.bed.vms if v.host == "R710-2")
    assert vms_before
    click_row(qtbot, tree, "R710-2")
    name = editor.editor("id")

    type_into(qtbot, name, "R710-1")                           # taken
    assert editor.message("id") == "'R710-1' is already used by a server — still R710-2"
    type_into(qtbot, name, "R710:B")
    assert "cannot contain ':'" in editor.message("id")
    assert dumps(doc.bed) == original and doc.undo_stack.count() == 0

    type_into(qtbot, name, "R710-B")
    assert doc.undo_stack.count() == 1 and doc.undo_stack.text(0) == "Rename R710-2 to R710-B"
    bed = doc.bed
    assert sorted(v.id for v in bed.vms if v.host == "R710-B") == vms_before
    assert "R710-B" in bed.clusters[0].nodes and "R710-2" not in bed.clusters[0].nodes
    assert not [p for p in bed.paths if p.host == "R710-2" or p.initiator.startswith("R710-2:")]
    assert not [link for link in bed.links if "R710-2" in (link.a.split(":")[0], link.b.split(":")[0])]
    assert all("R710-2" not in sc.failed for sc in bed.scenarios)
    assert check_references(loads(dumps(bed))) == []
    assert selection.ids == {"R710-B"}, "the selection follows the renamed server"
    assert editor.title.text() == "Server R710-B"
    qtbot.waitUntil(lambda: bool(tree.items_for("R710-B")), timeout=2000)
    assert not tree.items_for("R710-2")

    doc.undo_stack.undo()
    assert dumps(doc.bed) == original
    assert selection.ids == {"R710-2"} and editor.title.text() == "Server R710-2"
    assert name.text() == "R710-2"


def test_rename_a_port_from_its_form(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set(["R710-1:SAN1"])
    type_into(qtbot, editor.editor("name"), "iSCSI-1")
    assert selection.ids == {"R710-1:iSCSI-1"}
    assert any(p.initiator == "R710-1:iSCSI-1" for p in doc.bed.paths)
    assert editor.title.text() == "Port R710-1:iSCSI-1"
    type_into(qtbot, editor.editor("name"), "SAN2")
    assert editor.message("name").startswith("R710-1 already has a port named 'SAN2'")


def test_nothing_selected_shows_the_bed_and_policy_and_many_offers_links(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.clear()
    assert editor.title.text() == "Test bed" and editor.shown_subject == ""
    type_into(qtbot, editor.editor("policy.memory_reserve_gb"), "-1")
    assert "at least 0" in editor.message("policy.memory_reserve_gb")
    type_into(qtbot, editor.editor("policy.memory_reserve_gb"), "4")
    assert doc.bed.policy.memory_reserve_gb == 4
    selection.set(["R710-1", "R710-2"])
    assert editor.title.text() == "2 components selected"
    editor.subtitle.linkActivated.emit("R710-2")
    assert selection.ids == {"R710-2"} and editor.title.text() == "Server R710-2"


def test_form_follows_edits_made_elsewhere_and_deletion(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set(["R710-1"])
    r710 = server(doc, "R710-1")
    doc.apply(SetField(r710, "model", "Dell PowerEdge R720", owner="R710-1"))
    assert editor.editor("model").text() == "Dell PowerEdge R720"
    from topology.edits import RemoveItem
    doc.apply(RemoveItem(doc.bed.servers, r710))
    assert "names nothing" in editor.subtitle.text()
    doc.undo_stack.undo()
    assert editor.title.text() == "Server R710-1"


def test_grab_the_property_editor(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set(["R710-1"])
    type_into(qtbot, editor.editor("memory_gb"), "-5")
    editor.resize(380, 1200)
    qtbot.wait(50)                                             # let the layout settle before the grab
    assert editor.message("memory_gb") == "must be at least 0 — still 48"
    assert editor.grab().save("/tmp/testbed-property-editor.png")
    selection.set(["MD3000i"])
    qtbot.wait(50)
    assert editor.grab().save("/tmp/testbed-property-editor-array.png")


def test_parse_number_reads_units_and_refuses_what_the_model_cannot_take():
    assert parse_number("8 GB", integer=False, minimum=0, optional=False, unit="GB") == 8.0
    assert parse_number(" 12 ", integer=True, minimum=1, optional=False) == 12
    assert parse_number("", integer=True, minimum=1, optional=True) is None
    for bad in ("nan", "inf", "-1", "x"):
        with pytest.raises(ValueError):
            parse_number(bad, integer=False, minimum=0, optional=False)


# ============================================================================ rename, Qt-free

def _subjects(bed) -> list[str]:
    idx = BedIndex(bed)
    out = list(idx.components) + [p for p, ref in idx.ports.items() if not ref.implicit] + list(idx.volumes)
    for a in bed.arrays:
        out += [f"{a.id}:group:{g.name}" for g in a.disk_groups] + [f"{a.id}:pool:{p.name}" for p in a.pools]
        out += [f"{a.id}:{c.name}" for c in a.controllers] + [f"{a.id}:{e.name}" for e in a.enclosures]
    return out


def _findings_shape(bed) -> list[tuple]:
    return sorted((f.code, f.severity, len(f.subjects)) for f in validate(bed))


def _check_rename(bed, subject: str, new_name: str, original: str, findings: list[tuple]) -> None:
    loc = locate(bed, subject)
    assert loc is not None, subject
    new = loc.subject_with(new_name)
    edit = rename(bed, subject, new)
    edit.apply()
    renamed = loads(dumps(bed))                                # the loader checks every reference
    assert check_references(renamed) == []
    assert locate(renamed, new) is not None and locate(renamed, subject) is None
    assert _findings_shape(bed) == findings, f"renaming {subject} changed the findings"
    assert {loc.device.id, new.split(":")[0]} <= edit.touched()
    edit.revert()
    assert dumps(bed) == original, f"undoing the rename of {subject} did not restore the file"


def test_every_subject_of_seed_000_renames_cleanly():
    bed = load(SEED_000)
    original, findings = dumps(bed), _findings_shape(bed)
    subjects = _subjects(bed)
    assert len(subjects) > 60
    for n, subject in enumerate(subjects):
        _check_rename(bed, subject, f"Renamed {n}", original, findings)


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p != SEED_000], ids=lambda p: p.stem)
def test_renames_in_the_other_examples(path):
    bed = load(path)
    original, findings = dumps(bed), _findings_shape(bed)
    array = next((a for a in bed.arrays if a.volumes), bed.arrays[0])     # a group member may hold none
    picks = [bed.servers[0].id, array.id] + [f"{array.id}:{v.name}" for v in array.volumes[:1]]
    picks += [c.id for c in (bed.vms[:1] or bed.switches[:1])]
    picks += [f"{a.id}:pool:{p.name}" for a in bed.arrays for p in a.pools][:1]
    for n, subject in enumerate(picks):
        _check_rename(bed, subject, f"X{n}", original, findings)


def test_rename_carries_documented_exceptions_and_scenario_placement():
    bed = load(SEED_000)
    from topology.model import ExceptionRecord, Scenario
    bed.exceptions.append(ExceptionRecord(code="RAID-003", subject="MD3000i:group:SQL", reason="lab"))
    vm = bed.vms[0]
    bed.scenarios.append(Scenario(id="moved", placement={vm.id: "R710-1"}))
    edit = rename(bed, "MD3000i", "PV-1")
    edit.apply()
    assert bed.exceptions[-1].subject == "PV-1:group:SQL"
    edit2 = rename(bed, "R710-1", "HostA")
    edit2.apply()
    assert bed.scenarios[-1].placement == {vm.id: "HostA"}
    edit3 = rename(bed, vm.id, "VM-renamed")
    edit3.apply()
    assert bed.scenarios[-1].placement == {"VM-renamed": "HostA"}
    assert all(validate(bed)) is not None
    for e in (edit3, edit2, edit):
        e.revert()
    assert bed.scenarios[-1].placement == {vm.id: "R710-1"}


def test_rename_refuses_what_would_break_the_bed():
    bed = load(SEED_000)
    with pytest.raises(RenameError, match="already used by a storage array"):
        rename(bed, "R710-1", "MD3000i")
    with pytest.raises(RenameError, match="already has a volume"):
        rename(bed, "MD3000i:Logs", "MD3000i:SQL")             # volumes and ports share ARRAY:NAME
    with pytest.raises(RenameError, match="needs a name"):
        rename(bed, "R710-1", "")
    with pytest.raises(RenameError, match="nothing in the bed"):
        rename(bed, "R710-9", "R710-10")
    with pytest.raises(RenameError, match="no name of its own"):
        rename(bed, "MD3000i:E0:3", "MD3000i:E0:4")
    loc = locate(bed, "MD3000i:group:SQL")
    assert check_name(bed, loc, "Logs") == "MD3000i already has a disk group named 'Logs'"
    assert check_name(bed, loc, " SQL2") == "a name cannot start or end with a space"
