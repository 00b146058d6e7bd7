"""The storage editor driven by mouse and keyboard: select free disks in the slot map, build a
RAID 10 group, a volume and a mapping, undo and redo; the slot maps of seeds 000 and 002
checked pixel by pixel against their disk groups."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton

from app.document import Document
from app.selection import Selection
from topology.fileformat import dumps, load, loads
from topology.storage_ops import expand
from widgets.slot_map import EMPTY_FILL, FREE_FILL
from widgets.storage.editor import StorageEditor

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
SHOTS = Path("/tmp/testbed-shots")

NEW_ARRAY = """\
format_version: 1
bed:
  name: a new array
servers:
  - {id: h1, role: hypervisor, memory_gb: 64}
  - {id: h2, role: hypervisor, memory_gb: 64}
arrays:
  - id: arr
    model: dual-controller iSCSI array
    controllers:
      - name: c0
        cache_gb: 2
        ports:
          - {name: c0-a, roles: [iscsi], address: 10.1.0.101/24, mtu: 9000, speed_gbps: 10}
      - name: c1
        cache_gb: 2
        ports:
          - {name: c1-a, roles: [iscsi], address: 10.1.0.102/24, mtu: 9000, speed_gbps: 10}
    enclosures:
      - name: E0
        slots: 12
        disks:
          - {slots: 0-10, size_gb: 600, rpm: 15000, media: hdd, interface: sas}
"""


@pytest.fixture
def open_editor(qtbot):
    made = []

    def make(bed):
        doc = Document(bed)
        selection = Selection()
        editor = StorageEditor(doc, selection)
        qtbot.addWidget(editor)
        editor.resize(1200, 860)
        with qtbot.waitExposed(editor):
            editor.show()
        made.append(doc)
        return doc, selection, editor

    yield make
    for doc in made:   # app/document.py connects a lambda that outlives the document on teardown
        doc.undo_stack.blockSignals(True)


def _button(editor, name: str) -> QPushButton:
    return editor.findChild(QPushButton, name)


def centre(editor, slot) -> QPoint:
    return editor.slot_map.slot_rect(slot).center()


def pixel(image, editor, slot) -> QColor:
    """The fill drawn inside a slot, away from its text and border."""
    r = editor.slot_map.slot_rect(slot)
    return image.pixelColor(r.left() + 3, r.center().y())


def test_build_a_group_a_volume_and_a_mapping_by_mouse_then_undo_and_redo(qtbot, open_editor):
    doc, selection, editor = open_editor(loads(NEW_ARRAY))
    original = dumps(doc.bed)
    smap = editor.slot_map
    assert "c0 — 2 GB cache · active" in editor.controllers.topLevelItem(0).text(0)
    assert editor.controllers.topLevelItem(0).child(0).text(3) == "10.1.0.101/24"

    # drag a rectangle from slot 0 to slot 3
    QTest.mousePress(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre(editor, ("E0", 0)))
    QTest.mouseMove(smap, centre(editor, ("E0", 2)))
    QTest.mouseMove(smap, centre(editor, ("E0", 3)))
    QTest.mouseRelease(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre(editor, ("E0", 3)))
    assert smap.selected_slots() == [("E0", 0), ("E0", 1), ("E0", 2), ("E0", 3)]
    assert selection.ids == {"arr:E0:0", "arr:E0:1", "arr:E0:2", "arr:E0:3"}
    assert "RAID 10 gives 1,200 GB usable" in editor.groups_tab.pick_info.text()

    editor.groups_tab.raid_combo.setCurrentIndex(editor.groups_tab.raid_combo.findText("RAID 10"))
    qtbot.keyClicks(editor.groups_tab.group_name, "DB")
    assert editor.groups_tab.owner_combo.currentText() == "c0"
    qtbot.mouseClick(_button(editor, "createGroup"), Qt.MouseButton.LeftButton)
    group = doc.bed.arrays[0].disk_groups[-1]
    assert (group.name, group.raid, group.members, group.owner) == ("DB", "raid10", ["E0:0-3"], "c0")
    assert editor.message.text() == "Done: Create disk group DB (RAID 10, 4 disks)."
    assert selection.ids == {"arr:group:DB"}
    image = smap.grab().toImage()
    db = smap.colours["DB"]
    assert all(pixel(image, editor, ("E0", s)) == db for s in range(4))
    assert pixel(image, editor, ("E0", 4)) == FREE_FILL and pixel(image, editor, ("E0", 11)) == EMPTY_FILL
    row = editor.groups_tab.groups.topLevelItem(0)
    assert [row.text(i) for i in range(6)] == ["DB", "RAID 10", "4", "E0:0-3", "1,200", "1,200"]

    # a volume in the new group
    editor.tabs.setCurrentIndex(1)
    assert editor.volumes_tab.container_combo.currentText() == "group DB — 1,200 GB free"
    qtbot.keyClicks(editor.volumes_tab.volume_name, "sql-data")
    editor.volumes_tab.volume_size.selectAll()
    qtbot.keyClicks(editor.volumes_tab.volume_size, "300")
    editor.volumes_tab.purpose_combo.setCurrentIndex(editor.volumes_tab.purpose_combo.findData("database"))
    qtbot.mouseClick(_button(editor, "createVolume"), Qt.MouseButton.LeftButton)
    vol = doc.bed.arrays[0].volumes[-1]
    assert (vol.name, vol.size_gb, vol.group, vol.purpose) == ("sql-data", 300, "DB", ["database"])
    assert editor.groups_tab.groups.topLevelItem(0).text(5) == "900"

    # map it to server h1: its array host is created, LUN 0 proposed
    editor.tabs.setCurrentIndex(2)
    editor.mappings_tab.map_to_combo.setCurrentIndex(editor.mappings_tab.map_to_combo.findData("h1"))
    tab = editor.mappings_tab
    assert tab.map_volume_combo.currentText() == "sql-data" and tab.lun_spin.value() == 0
    qtbot.mouseClick(_button(editor, "mapVolume"), Qt.MouseButton.LeftButton)
    a = doc.bed.arrays[0]
    assert [(h.name, h.server) for h in a.hosts] == [("h1", "h1")]
    assert [(m.volume, m.to, m.lun) for m in a.mappings] == [("sql-data", "h1", 0)]
    assert editor.mappings_tab.mappings.topLevelItem(0).text(1) == "h1"
    built = dumps(doc.bed)
    loads(built)

    for _ in range(3):
        doc.undo_stack.undo()
    assert dumps(doc.bed) == original
    assert editor.groups_tab.groups.topLevelItemCount() == 0 and editor.mappings_tab.mappings.topLevelItemCount() == 0
    image = smap.grab().toImage()
    assert pixel(image, editor, ("E0", 0)) == FREE_FILL
    for _ in range(3):
        doc.undo_stack.redo()
    assert dumps(doc.bed) == built
    SHOTS.mkdir(exist_ok=True)
    editor.grab().save(str(SHOTS / "storage-new-array-built.png"))


def test_refusals_are_explained_and_change_nothing(qtbot, open_editor):
    doc, selection, editor = open_editor(loads(NEW_ARRAY))
    smap = editor.slot_map
    qtbot.mouseClick(smap, Qt.MouseButton.LeftButton, pos=centre(editor, ("E0", 4)))
    qtbot.mouseClick(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, centre(editor, ("E0", 6)))
    assert smap.selected_slots() == [("E0", 4), ("E0", 5), ("E0", 6)]
    editor.groups_tab.raid_combo.setCurrentIndex(editor.groups_tab.raid_combo.findText("RAID 6"))
    assert "RAID 6 needs at least 4 disks" in editor.groups_tab.pick_info.text()
    qtbot.mouseClick(_button(editor, "createGroup"), Qt.MouseButton.LeftButton)
    assert editor.message.text() == "Not done: RAID 6 needs at least 4 disks; 3 selected."
    assert doc.undo_stack.count() == 0

    qtbot.mouseClick(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, centre(editor, ("E0", 11)))
    qtbot.mouseClick(_button(editor, "markSpare"), Qt.MouseButton.LeftButton)
    assert editor.message.text() == "Not done: slot E0:11 is empty: insert a disk there first."

    qtbot.mouseClick(smap, Qt.MouseButton.LeftButton, pos=centre(editor, ("E0", 10)))
    qtbot.mouseClick(_button(editor, "markSpare"), Qt.MouseButton.LeftButton)
    assert doc.bed.arrays[0].spares == ["E0:10"]
    image = smap.grab().toImage()
    assert "SPARE" == smap.cell(("E0", 10)).state.upper() and "hot spare" in smap.legend_texts()
    assert pixel(image, editor, ("E0", 10)) != FREE_FILL
    assert "hot spare" in smap.describe(("E0", 10))
    assert doc.undo_stack.count() == 1


def test_seed_000_slot_map_shows_four_groups_and_one_empty_slot(qtbot, open_editor):
    doc, selection, editor = open_editor(load(EXAMPLES / "md3000i-hyperv-cluster.yaml"))
    smap = editor.slot_map
    image = smap.grab().toImage()
    drawn = [pixel(image, editor, ("E0", s)) for s in range(15)]
    spans = {"SQL": range(0, 4), "Exchange": range(4, 8), "Logs": range(8, 10), "OS": range(10, 14)}
    for group, slots in spans.items():
        assert {drawn[s].name() for s in slots} == {smap.colours[group].name()}, group
    assert len({drawn[s].name() for s in range(14)}) == 4
    assert drawn[14] == EMPTY_FILL and smap.cell(("E0", 14)).state == "empty"
    assert smap.legend_texts() == [
        "SQL: RAID 10 · 4 × 300 GB 15K SAS · Controller 0",
        "Exchange: RAID 10 · 4 × 300 GB 15K SAS · Controller 1",
        "Logs: RAID 1 · 2 × 146 GB 15K SAS · Controller 0",
        "OS: RAID 10 · 4 × 500 GB 7.2K SATA · Controller 1",
        "empty slot"]
    assert smap.describe(("E0", 10)).splitlines() == [
        "E0:10 — Hitachi HUA721050KLA330", "500 GB · 7,200 RPM · HDD · SATA",
        "disk group OS (RAID 10, owner Controller 1)"]
    SHOTS.mkdir(exist_ok=True)
    editor.grab().save(str(SHOTS / "storage-seed000.png"))


def test_seed_002_slot_map_shows_53_groups_on_32_trays(qtbot, open_editor):
    doc, selection, editor = open_editor(load(EXAMPLES / "ams2500-exchange-esrp.yaml"))
    assert editor.array_combo.currentData() == "AMS2500"
    smap = editor.slot_map
    array = doc.bed.arrays[0]
    assert len(array.enclosures) == 32
    image = smap.grab().toImage()
    seen: dict[str, set[str]] = {}
    for g in array.disk_groups:
        for slot in expand(g.members):
            seen.setdefault(g.name, set()).add(pixel(image, editor, slot).name())
    assert len(seen) == 53
    assert all(len(colours) == 1 for colours in seen.values()), "a group drawn in two colours"
    assert len({next(iter(c)) for c in seen.values()}) == 53, "two groups drawn alike"
    assert all(seen[name] == {smap.colours[name].name()} for name in seen)
    assert [pixel(image, editor, ("RKA31", s)) == EMPTY_FILL for s in (11, 12, 13, 14)] == [False, True, True, True]
    # RG2 spans two trays
    assert seen["RG2"] == {pixel(image, editor, ("RKA1", 2)).name()} == {pixel(image, editor, ("RKA0", 9)).name()}
    SHOTS.mkdir(exist_ok=True)
    smap.grab().save(str(SHOTS / "storage-seed002-slotmap.png"))
    editor.grab().save(str(SHOTS / "storage-seed002.png"))


def test_follows_and_publishes_the_shared_selection(qtbot, open_editor):
    doc, selection, editor = open_editor(load(EXAMPLES / "equallogic-ps6110-hyperv.yaml"))
    assert editor.array_combo.currentData() == "PS6110XV-1"
    second = doc.bed.arrays[1]
    selection.set([f"{second.id}:group:{second.disk_groups[0].name}"])
    assert editor.array_combo.currentData() == second.id
    assert set(editor.slot_map.selected_slots()) == set(expand(second.disk_groups[0].members))
    assert editor.groups_tab.groups.topLevelItem(0).isSelected()

    doc, selection, editor = open_editor(load(EXAMPLES / "md3000i-hyperv-cluster.yaml"))
    selection.set(["MD3000i:group:Logs"])
    assert editor.slot_map.selected_slots() == [("E0", 8), ("E0", 9)]
    selection.set(["MD3000i:Witness"])            # a volume: the slots of its group
    assert editor.slot_map.selected_slots() == [("E0", 8), ("E0", 9)]
    selection.set(["R710-1"])                     # not storage: the map keeps what it shows
    assert editor.slot_map.selected_slots() == [("E0", 8), ("E0", 9)]

    item = editor.groups_tab.groups.topLevelItem(0)           # SQL
    editor.groups_tab.groups.scrollToItem(item)
    rect = editor.groups_tab.groups.visualItemRect(item)
    qtbot.mouseClick(editor.groups_tab.groups.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert selection.ids == {"MD3000i:group:SQL"}
    assert editor.slot_map.selected_slots() == [("E0", s) for s in range(4)]
    editor.grab().save(str(SHOTS / "storage-seed000-SQL-selected.png"))


@pytest.mark.parametrize("name", ["md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp"])
def test_every_example_renders(qtbot, open_editor, name):
    doc, selection, editor = open_editor(load(EXAMPLES / f"{name}.yaml"))
    SHOTS.mkdir(exist_ok=True)
    for i in range(editor.array_combo.count()):
        editor.array_combo.setCurrentIndex(i)
        array = doc.bed.arrays[i]
        assert editor.groups_tab.groups.topLevelItemCount() == len(array.disk_groups)
        assert editor.volumes_tab.volumes.topLevelItemCount() == len(array.volumes)
        assert editor.mappings_tab.mappings.topLevelItemCount() == len(array.mappings)
        for tab in range(editor.tabs.count()):
            editor.tabs.setCurrentIndex(tab)
            editor.grab().save(str(SHOTS / f"storage-{name}-{array.id}-tab{tab}.png"))


def _click_row(qtbot, tree, row: int, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    item = tree.topLevelItem(row)
    tree.scrollToItem(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, modifier, tree.visualItemRect(item).center())


def test_pool_from_two_groups_then_a_thin_volume_in_it(qtbot, open_editor):
    doc, selection, editor = open_editor(loads(NEW_ARRAY))
    smap = editor.slot_map
    for first, last, level in ((0, 2, "RAID 5"), (3, 5, "RAID 5")):
        qtbot.mouseClick(smap, Qt.MouseButton.LeftButton, pos=centre(editor, ("E0", first)))
        qtbot.mouseClick(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier,
                         centre(editor, ("E0", last)))
        editor.groups_tab.raid_combo.setCurrentIndex(editor.groups_tab.raid_combo.findText(level))
        qtbot.mouseClick(_button(editor, "createGroup"), Qt.MouseButton.LeftButton)
    assert [g.name for g in doc.bed.arrays[0].disk_groups] == ["Group 1", "Group 2"]
    assert [g.owner for g in doc.bed.arrays[0].disk_groups] == ["c0", "c1"]   # new groups alternate owners

    _click_row(qtbot, editor.groups_tab.groups, 0)
    _click_row(qtbot, editor.groups_tab.groups, 1, Qt.KeyboardModifier.ControlModifier)
    assert selection.ids == {"arr:group:Group 1", "arr:group:Group 2"}
    assert len(smap.selected_slots()) == 6
    qtbot.keyClicks(editor.groups_tab.pool_name, "Pool A")
    editor.groups_tab.pool_thin.setCurrentText("thin")
    qtbot.mouseClick(_button(editor, "createPool"), Qt.MouseButton.LeftButton)
    pool = doc.bed.arrays[0].pools[0]
    assert (pool.name, pool.provisioning) == ("Pool A", "thin")
    assert {g.pool for g in doc.bed.arrays[0].disk_groups} == {"Pool A"}
    assert "pool Pool A" in smap.legend_texts()[0]

    editor.tabs.setCurrentIndex(1)
    assert editor.volumes_tab.container_combo.currentText() == "pool Pool A (thin) — 2,400 GB free"
    qtbot.keyClicks(editor.volumes_tab.volume_name, "thin-data")
    editor.volumes_tab.volume_size.selectAll()
    qtbot.keyClicks(editor.volumes_tab.volume_size, "3000")          # thin: more than the pool holds is allowed
    qtbot.mouseClick(_button(editor, "createVolume"), Qt.MouseButton.LeftButton)
    assert doc.bed.arrays[0].volumes[0].pool == "Pool A"
    assert editor.volumes_tab.pools.topLevelItem(0).text(5) == "overcommitted 1.25:1"
    assert doc.undo_stack.count() == 4


def test_deleting_a_volume_in_use_is_refused_in_words(qtbot, open_editor):
    doc, selection, editor = open_editor(load(EXAMPLES / "md3000i-hyperv-cluster.yaml"))
    editor.tabs.setCurrentIndex(1)
    _click_row(qtbot, editor.volumes_tab.volumes, 3)                  # Logs
    assert selection.ids == {"MD3000i:Logs"}
    assert editor.slot_map.selected_slots() == [("E0", 8), ("E0", 9)]
    qtbot.mouseClick(_button(editor, "deleteVolume"), Qt.MouseButton.LeftButton)
    assert editor.message.text().startswith("Not done: volume Logs is used by VM Exchange (disk Logs)")
    assert doc.undo_stack.count() == 0 and len(doc.bed.arrays[0].volumes) == 5
