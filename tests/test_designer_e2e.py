"""The designer end to end, in the real main window, as a person uses it: from an empty bed,
place two hosts, two switches and an array with the palette, cable four iSCSI links by
mouse, build a disk group and a volume in the storage view, watch the findings change,
undo everything and redo it, save, reopen, and get the same bed back."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton
from test_canvas import Studio

from topology.fileformat import dumps, load
from widgets.main_window import MainWindow


class WindowHands(Studio):
    """The canvas helpers of test_canvas, working on the main window's own palette and canvas."""

    def __init__(self, qtbot, window: MainWindow):
        self.qtbot = qtbot
        self.window = window
        self.document = window.document
        self.selection = window.selection
        self.palette = window.palette
        self.canvas = window.canvas


def findings_now(qtbot, window: MainWindow) -> set[tuple[str, tuple[str, ...]]]:
    """The findings the panel shows for the bed as it is now (live validation is asynchronous)."""
    v = window.document.validation
    v.run_now()
    qtbot.waitUntil(lambda: v.revision_shown == window.document.revision, timeout=10000)
    return {(f.code, f.subjects) for f in v.findings}


def slot_centre(editor, slot) -> QPoint:
    return editor.slot_map.slot_rect(slot).center()


def group_and_volume_by_hand(qtbot, w: MainWindow, volume: str, size: str = "500") -> None:
    """In the storage view: four disks by mouse into a RAID 10 group 'data', then a volume in it."""
    w.tabs.setCurrentWidget(w.storage)
    editor = w.storage
    qtbot.waitUntil(lambda: editor.array_combo.currentData() == "array-1")
    smap = editor.slot_map
    QTest.mousePress(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, slot_centre(editor, ("E0", 0)))
    QTest.mouseMove(smap, slot_centre(editor, ("E0", 2)))
    QTest.mouseMove(smap, slot_centre(editor, ("E0", 3)))
    QTest.mouseRelease(smap, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       slot_centre(editor, ("E0", 3)))
    assert smap.selected_slots() == [("E0", 0), ("E0", 1), ("E0", 2), ("E0", 3)]
    editor.groups_tab.raid_combo.setCurrentIndex(editor.groups_tab.raid_combo.findText("RAID 10"))
    qtbot.keyClicks(editor.groups_tab.group_name, "data")
    qtbot.mouseClick(editor.findChild(QPushButton, "createGroup"), Qt.MouseButton.LeftButton)
    editor.tabs.setCurrentIndex(1)
    qtbot.keyClicks(editor.volumes_tab.volume_name, volume)
    editor.volumes_tab.volume_size.selectAll()
    qtbot.keyClicks(editor.volumes_tab.volume_size, size)
    qtbot.mouseClick(editor.findChild(QPushButton, "createVolume"), Qt.MouseButton.LeftButton)


def open_window(qtbot, bed=None, tmp_path=None) -> MainWindow:
    """The main window shown at 1500×950, with `bed` opened from a file when given."""
    w = MainWindow()
    # pytest-qt closes the window before fixtures tear down: a failed test must not leave it
    # waiting on "save your changes?"
    qtbot.addWidget(w, before_close_func=lambda win: win.document.undo_stack.setClean())
    w.resize(1500, 950)
    w.show()
    qtbot.waitExposed(w)
    if bed is not None:
        from topology.fileformat import dumps as write
        path = tmp_path / "bed.yaml"
        path.write_text(write(bed))
        assert w.files.open_path(path, remember=False)
    return w


@pytest.fixture
def window(qtbot):
    return open_window(qtbot)


def test_build_check_undo_save_and_reopen(qtbot, window, tmp_path):
    w = window
    w.files.new()
    empty = dumps(w.document.bed)
    hands = WindowHands(qtbot, w)

    # --- the drawing: devices from the palette, cables port to port
    hands.place("server:hypervisor", QPointF(120, 80))
    hands.place("server:hypervisor", QPointF(420, 80))
    hands.place("switch:ethernet", QPointF(120, 330))
    hands.place("switch:ethernet", QPointF(420, 330))
    hands.place("array", QPointF(270, 520))
    for a, b in (("host-1:SAN1", "sw-1"), ("host-1:SAN2", "sw-2"), ("host-2:SAN1", "sw-1"), ("host-2:SAN2", "sw-2")):
        hands.drag(hands.port(a), hands.centre(b))
    assert len(w.document.bed.links) == 4
    assert "*" in w.windowHandle().title(), "an edited bed shows the modified marker"
    before_storage = findings_now(qtbot, w)

    # --- the storage view: four disks by mouse into a RAID 10 group, then a volume in it
    group_and_volume_by_hand(qtbot, w, "db")
    array = w.document.bed.arrays[0]
    assert [(g.name, g.raid, g.members) for g in array.disk_groups] == [("data", "raid10", ["E0:0-3"])]
    assert [(v.name, v.size_gb, v.group) for v in array.volumes] == [("db", 500, "data")]

    # --- the validator follows: a disk group without a hot spare is now reported
    after_storage = findings_now(qtbot, w)
    added = after_storage - before_storage
    assert ("RAID-003", ("array-1", "array-1:group:data")) in added
    panel_codes = {f.code for f in w.findings.findings} if hasattr(w.findings, "findings") else set()
    assert not panel_codes or "RAID-003" in panel_codes

    # --- undo every step back to the empty bed, then redo them all
    built = dumps(w.document.bed)
    steps = w.document.undo_stack.count()
    assert steps == 5 + 4 + 2, "one undo step per placement, per cable and per storage edit"
    for _ in range(steps):
        w.actions_by_name["undo"].trigger()
    assert dumps(w.document.bed) == empty
    assert not w.canvas.devices
    for _ in range(steps):
        w.actions_by_name["redo"].trigger()
    assert dumps(w.document.bed) == built
    assert set(w.canvas.devices) == {"host-1", "host-2", "sw-1", "sw-2", "array-1"}
    assert findings_now(qtbot, w) == after_storage

    # --- save, reopen, compare
    target = tmp_path / "lab.yaml"
    assert w.files._save_to(target)
    assert "*" not in w.windowHandle().title()
    saved_text = target.read_text()
    assert saved_text == built
    w.files.new()
    assert w.files.open_path(target)
    assert dumps(w.document.bed) == built
    assert load(target) == w.document.bed
