"""The path view (issue 12 item 6), in the real main window: reached from a finding, the component
tree and the canvas's menu; the paths listed hop by hop and highlighted on the diagram; where
none carries the volume, the first hop that fails — also a port the chosen scenario fails — said
in the panel and ringed on the diagram; the highlight goes with the view."""
from __future__ import annotations

import pytest
from test_derived_paths import NEW_USER_BED
from test_designer_e2e import open_window
from test_designer_ux import trigger

from topology.fileformat import loads
from topology.model import Scenario
from widgets.context_menus import canvas_menu, tree_menu
from widgets.validation_panel import add_finding_entries

VOL = "array-1:VMStore"
ARRAY_PORTS = ["array-1:A0", "array-1:A1", "array-1:B0", "array-1:B1"]


@pytest.fixture
def window(qtbot, tmp_path):
    bed = loads(NEW_USER_BED, "new.yaml")
    bed.scenarios.append(Scenario(id="array-down", failed=list(ARRAY_PORTS)))
    return open_window(qtbot, bed, tmp_path)


def settle(qtbot, w) -> None:
    w.paths.wait()
    qtbot.waitUntil(lambda: not w.paths._job.busy and w.paths.explanation is not None, timeout=10000)


def rows(w) -> list[str]:
    return [w.paths.tree.topLevelItem(i).text(0) for i in range(w.paths.tree.topLevelItemCount())]


def test_from_the_component_tree_the_paths_are_listed_and_highlighted(qtbot, window):
    w = window
    trigger(tree_menu(w.tree, ["host-2"], False), "Storage paths…")
    assert w.docks["paths"].isVisible()
    settle(qtbot, w)
    assert w.paths.host_box.currentData() == "host-2" and w.paths.volume_box.currentData() == VOL
    assert len(rows(w)) == 4 and rows(w)[0].startswith("1. host-2:p1 → switch-1 → array-1:")
    hops = w.paths.tree.topLevelItem(0)
    words = [hops.child(i).text(1) for i in range(hops.childCount())]
    assert words == ["host port", "cable", "switch", "cable", "array port", "controller", "volume"]
    assert len(w.canvas.shown_paths) == 4
    # a hop row picks its path: the diagram shows that one alone
    w.paths.tree.setCurrentItem(w.paths.tree.topLevelItem(3).child(2))
    assert len(w.canvas.shown_paths) == 1
    # the view hidden: the highlight goes with it
    w.docks["findings"].raise_()
    qtbot.waitUntil(lambda: w.canvas.shown_paths == [])
    w.docks["paths"].raise_()                            # and back with it
    qtbot.waitUntil(lambda: len(w.canvas.shown_paths) == 1)


def test_from_the_canvas_menu_of_a_host(qtbot, window):
    w = window
    item = w.canvas.devices["host-1"]
    pos = w.canvas.mapFromScene(item.mapToScene(item.w / 2, 14))
    trigger(canvas_menu(w.canvas, pos), "Storage paths…")
    settle(qtbot, w)
    assert w.paths.host_box.currentData() == "host-1" and len(rows(w)) == 4


def test_from_a_finding_the_first_hop_that_fails_is_said_and_ringed(qtbot, window):
    w = window
    doc = w.document
    from topology import storage_ops
    doc.apply(storage_ops.unmap(doc.bed, "array-1", "VMStore", "cluster"))
    from topology.edits import InsertItem
    from topology.model import VM, VirtualDisk
    doc.apply(InsertItem(doc.bed.vms, VM(id="vm-1", host="host-1", memory_gb=1,
                                         disks=[VirtualDisk(name="os", volume=VOL)])))
    doc.validation.wait()
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=10000)
    panel = w.findings
    finding = next(f for f in panel.findings if f.code == "PATH-001" and "host-1" in f.subjects)
    panel.tree.setCurrentIndex(panel.index_for(finding))
    assert "Show the paths of host-1 to array-1:VMStore" in panel.detail.toHtml()
    from PySide6.QtWidgets import QMenu
    menu = QMenu()
    add_finding_entries(panel, menu, finding)
    trigger(menu, "Paths of host-1 to array-1:VMStore…")
    settle(qtbot, w)
    assert rows(w) == []
    status = w.paths.status.text()
    assert "no path" in status and "is not mapped to host-1" in status and "VM vm-1 has disk os on it" in status
    assert w.canvas.shown_trouble


def test_in_a_scenario_the_failed_ports_are_said_and_ringed(qtbot, window):
    w = window
    w.open_paths("host-1", VOL)
    settle(qtbot, w)
    assert len(rows(w)) == 4 and w.paths.where.text() == "In the reference configuration"
    w.findings.set_scenario("array-down")              # the scenario every view follows
    settle(qtbot, w)
    qtbot.waitUntil(lambda: w.paths.where.text() == "In scenario array-down", timeout=10000)
    assert rows(w) == []
    status = w.paths.status.text()
    assert "no path" in status and "In the reference configuration it has 4 paths" in status
    assert all(p in status for p in ARRAY_PORTS)
    assert set(ARRAY_PORTS) <= set(w.canvas.shown_trouble)
    w.findings.set_scenario("")                        # back to the reference configuration
    qtbot.waitUntil(lambda: len(rows(w)) == 4, timeout=10000)


def test_an_edit_updates_the_paths_shown(qtbot, window):
    w = window
    w.open_paths("host-1", VOL)
    settle(qtbot, w)
    assert len(rows(w)) == 4
    from topology import operations
    cable = next(lk for lk in w.document.bed.links if lk.a == "host-1:p1")
    w.document.apply(operations.delete(w.document.bed, [], [cable]))
    qtbot.waitUntil(lambda: len(rows(w)) == 2, timeout=10000)
    assert "2 paths" in w.paths.status.text()
    w.document.undo_stack.undo()
    qtbot.waitUntil(lambda: len(rows(w)) == 4, timeout=10000)
