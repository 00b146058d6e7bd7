"""Issue 12's "Done when", in the real main window, as a new user would: from an empty bed, place
two hosts, two switches and a dual-controller array with the palette, cable them by mouse (each
cable dropped on a switch lands on a port of it), build a volume in the storage view and map it
to both hosts — and the paths appear: PATH-001 goes away once the array is cabled, the path view
lists 4 paths per host hop by hop and the diagram highlights them, and the saved file has no
`paths:` section."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QPushButton
from test_designer_e2e import WindowHands, findings_now, group_and_volume_by_hand, window  # noqa: F401  (fixture)

from topology.fileformat import load

HOST_CABLES = (("host-1:SAN1", "sw-1"), ("host-1:SAN2", "sw-2"), ("host-2:SAN1", "sw-1"), ("host-2:SAN2", "sw-2"))
ARRAY_CABLES = (("array-1:A0", "sw-1"), ("array-1:A1", "sw-2"), ("array-1:B0", "sw-1"), ("array-1:B1", "sw-2"))
VOL = "array-1:VMStore"


def path_rows(view) -> list[str]:
    return [view.tree.topLevelItem(i).text(0) for i in range(view.tree.topLevelItemCount())]


def settle_paths(qtbot, w) -> None:
    w.paths.wait()
    qtbot.waitUntil(lambda: not w.paths._job.busy, timeout=10000)


def test_cabled_from_scratch_the_paths_appear_and_none_is_written(qtbot, window, tmp_path):
    w = window
    w.files.new()
    hands = WindowHands(qtbot, w)
    hands.place("server:hypervisor", QPointF(120, 80))
    hands.place("server:hypervisor", QPointF(460, 80))
    hands.place("switch:ethernet", QPointF(120, 330))
    hands.place("switch:ethernet", QPointF(460, 330))
    hands.place("array", QPointF(290, 560))
    w.selection.clear()
    for a, b in HOST_CABLES:
        hands.drag(hands.port(a), hands.centre(b))
    assert len(w.document.bed.links) == 4

    # --- storage: four disks by mouse into a RAID 10 group, a volume, mapped to both hosts
    group_and_volume_by_hand(qtbot, w, "VMStore")
    editor = w.storage
    editor.tabs.setCurrentIndex(2)
    tab = editor.mappings_tab
    for host in ("host-1", "host-2"):
        tab.choose_volume("VMStore")
        tab.map_to_combo.setCurrentIndex(tab.map_to_combo.findData(host))
        qtbot.mouseClick(editor.findChild(QPushButton, "mapVolume"), Qt.MouseButton.LeftButton)
    assert {(m.volume, m.to) for m in w.document.bed.arrays[0].mappings} == {("VMStore", "host-1"),
                                                                            ("VMStore", "host-2")}

    # --- the array is not cabled yet: no path, and the validator and the path view say why
    found = findings_now(qtbot, w)
    lost = {subjects for code, subjects in found if code == "PATH-001"}
    assert lost == {("host-1", VOL), ("host-2", VOL)}
    w.open_paths("host-1", VOL)
    settle_paths(qtbot, w)
    assert path_rows(w.paths) == [] and "no path" in w.paths.status.text()
    assert "has no cable" in w.paths.status.text()
    assert w.canvas.shown_trouble, "the diagram rings the hop that fails"

    # --- cable the array by mouse: four more cables, each on a switch port
    w.tabs.setCurrentWidget(w.canvas)
    for a, b in ARRAY_CABLES:
        hands.drag(hands.port(a), hands.centre(b))
    links = w.document.bed.links
    assert len(links) == 8 and all(":" in lk.a and ":" in lk.b for lk in links)
    found = findings_now(qtbot, w)
    assert not [f for f in found if f[0] == "PATH-001"], "PATH-001 is gone"

    # --- the path view: 4 paths per host, each host port -> switch ports -> array port
    for host in ("host-1", "host-2"):
        w.paths.host_box.setCurrentIndex(w.paths.host_box.findData(host))
        settle_paths(qtbot, w)
        rows = path_rows(w.paths)
        assert len(rows) == 4, rows
        assert all(r.split(". ", 1)[1].startswith(f"{host}:SAN") for r in rows)
        assert {r.split(" → ")[4] for r in rows} == {"array-1:A0", "array-1:A1", "array-1:B0", "array-1:B1"}
        assert "4 paths" in w.paths.status.text()
        assert len(w.canvas.shown_paths) == 4 and not w.canvas.shown_trouble
        cables = [s.ends for p in w.canvas.shown_paths for s in p if s.kind == "cable"]
        assert len(cables) == 8 and all(w.canvas.link_item_between(*ends) is not None for ends in cables)
    # one path picked in the list: the diagram shows that one
    w.paths.tree.setCurrentItem(w.paths.tree.topLevelItem(2))
    assert len(w.canvas.shown_paths) == 1

    # --- saved: the cabling, the mapping, and no paths
    target = tmp_path / "from-scratch.yaml"
    assert w.files._save_to(target)
    text = target.read_text()
    assert "paths:" not in text
    assert len(load(target).links) == 8
