"""An array group's property form (issue 30): picked by its card, its fields are edited as any
component's are -- each commit one undoable edit, 'not stated' a state of the field, refused where the
loader would refuse -- and what is edited is saved and opens again."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel
from test_property_editor import type_into

from app.document import Document
from app.selection import Selection
from resources import example_path
from topology.fileformat import load
from topology.unknown import NOT_STATED
from widgets.property_editor import PropertyEditor

R710 = "r710-rhev-hyperv-equallogic"
MEMBERS = [f"PS5000XV-{i}" for i in range(1, 7)]


@pytest.fixture
def form(qtbot):
    doc = Document()
    doc.open(example_path(R710))
    selection = Selection()
    editor = PropertyEditor(doc, selection)
    qtbot.addWidget(editor)
    editor.resize(520, 900)
    editor.show()
    qtbot.waitExposed(editor)
    selection.set(["eql-group"])                   # as a click on the group's card selects it
    yield doc, selection, editor
    doc.validation.wait()
    doc.undo_stack.clear()


def _group(doc):
    return doc.bed.array_groups[0]


def test_the_group_has_a_form_with_its_members_pools_and_volumes(form):
    doc, _selection, editor = form
    assert editor.title.text() == "Array group eql-group"
    texts = [w.text() for w in editor.findChildren(QLabel)]
    assert "Members" in texts
    members = [w.text() for w in editor.findChildren(QLabel) if 'href="PS5000XV-1"' in w.text()]
    assert len(members) == 1 and all(f'href="{m}"' in members[0] for m in MEMBERS)     # each member a link
    assert any('href="eql-group:pool:default"' in t for t in texts)              # its pool
    assert any('href="eql-group:guest1-data"' in t for t in texts)               # its volumes
    for field in ("address", "network", "vlan", "model", "firmware", "note"):
        editor.editor(field)


def test_editing_a_group_field_is_one_undoable_edit_that_is_saved(qtbot, form, tmp_path):
    doc, _selection, editor = form
    group = _group(doc)
    was = group.model
    before = doc.undo_stack.count()
    type_into(qtbot, editor.editor("model"), "PS Series group, firmware 5")
    assert group.model == "PS Series group, firmware 5"
    assert doc.undo_stack.count() == before + 1
    assert doc.undo_stack.text(before) == "Set model of eql-group"
    doc.undo_stack.undo()
    assert group.model == was and editor.editor("model").text() == was
    doc.undo_stack.redo()
    assert editor.editor("model").text() == "PS Series group, firmware 5"
    # 'not stated' is a state of the field: the address the report leaves open shows as such
    marker = editor._binding("address").marker
    assert group.address is NOT_STATED and marker is not None and marker.isChecked()
    type_into(qtbot, editor.editor("address"), "192.168.10.10/24")
    assert group.address == "192.168.10.10/24" and not marker.isChecked()
    path = doc.save(tmp_path / "bed.yaml")
    reopened = load(path).array_groups[0]
    assert reopened.model == "PS Series group, firmware 5" and reopened.address == "192.168.10.10/24"
    doc.undo_stack.undo()
    assert group.address is NOT_STATED and marker.isChecked()


def test_what_the_loader_refuses_is_refused_and_nothing_changes(qtbot, form):
    doc, _selection, editor = form
    group = _group(doc)
    before = doc.undo_stack.count()
    type_into(qtbot, editor.editor("vlan"), "5000")
    assert "4095" in editor.message("vlan") and group.vlan is None
    type_into(qtbot, editor.editor("network"), "no-such-net")
    assert "does not name a network" in editor.message("network")
    assert doc.undo_stack.count() == before


def test_renaming_the_group_renames_its_members_group_and_reopens(qtbot, form, tmp_path):
    doc, selection, editor = form
    type_into(qtbot, editor.editor("name"), "eql-A")
    assert [a.group for a in doc.bed.arrays if a.id in MEMBERS] == ["eql-A"] * 6
    assert selection.ids == {"eql-A"} and editor.title.text() == "Array group eql-A"
    reopened = load(doc.save(tmp_path / "renamed.yaml"))
    assert reopened.array_groups[0].name == "eql-A"
    assert {a.group for a in reopened.arrays if a.id in MEMBERS} == {"eql-A"}
    doc.undo_stack.undo()                                     # one edit: everything back
    assert _group(doc).name == "eql-group" and {a.group for a in doc.bed.arrays if a.id in MEMBERS} == {"eql-group"}


def test_a_group_volume_opens_its_own_form(qtbot, form, tmp_path):
    doc, selection, editor = form
    selection.set(["eql-group:guest2-data"])
    assert editor.title.text() == "Volume eql-group:guest2-data"
    assert editor.editor("pool").currentText() == "default"
    # renamed there, the group's access records and every GROUP:VOLUME reference follow, in one edit
    type_into(qtbot, editor.editor("name"), "guest2-db")
    group = doc.bed.array_groups[0]
    assert "guest2-db" in [m.volume for m in group.mappings] and "guest2-data" not in [m.volume for m in group.mappings]
    assert selection.ids == {"eql-group:guest2-db"}
    assert load(doc.save(tmp_path / "vol.yaml")).array_groups[0].volumes[1].name == "guest2-db"
    doc.undo_stack.undo()
    assert "guest2-data" in [m.volume for m in group.mappings]


def test_a_pool_spans_only_members_of_its_group(qtbot, form, tmp_path):
    """The loader refuses a group's pool that names an array outside the group: so does the form."""
    from topology.edits import SetField
    doc, selection, editor = form
    sixth = next(a for a in doc.bed.arrays if a.id == "PS5000XV-6")
    doc.apply(SetField(sixth, "group", "", text="Take PS5000XV-6 out of the group", owner="PS5000XV-6"))
    selection.set(["eql-group:pool:default"])
    assert editor.title.text() == "Pool eql-group:pool:default"
    pool = doc.bed.array_groups[0].pools[0]
    binding = editor._binding("members")
    before = doc.undo_stack.count()
    editor._commit(binding, ["PS5000XV-1", "PS5000XV-6"])       # as the tick menu commits a choice
    assert pool.members is NOT_STATED and "PS5000XV-6" in editor.message("members")
    assert doc.undo_stack.count() == before
    editor._commit(binding, ["PS5000XV-1", "PS5000XV-2"])
    assert pool.members == ["PS5000XV-1", "PS5000XV-2"] and doc.undo_stack.count() == before + 1
    assert load(doc.save(tmp_path / "pool.yaml")).array_groups[0].pools[0].members == ["PS5000XV-1", "PS5000XV-2"]


def test_the_component_tree_lists_the_group_and_opens_its_form(qtbot, form):
    from test_property_editor import click_row

    from widgets.component_tree import ComponentTree
    doc, selection, editor = form
    tree = ComponentTree(doc, selection)
    qtbot.addWidget(tree)
    tree.resize(420, 700)
    tree.show()
    qtbot.waitExposed(tree)
    selection.set([])
    click_row(qtbot, tree, "eql-group")
    assert selection.ids == {"eql-group"} and editor.title.text() == "Array group eql-group"
    click_row(qtbot, tree, "eql-group:hyperv-vhds")
    assert editor.title.text() == "Volume eql-group:hyperv-vhds"
