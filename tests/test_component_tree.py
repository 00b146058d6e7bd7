"""The component tree, driven as a person would: it lists the bed, marks components with
findings, keeps its rows (and what is open or selected) through edits and undo, follows
the shared selection both ways, and offers "Select on canvas" in its context menu."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from app.selection import Selection
from topology.edits import InsertItem, SetField
from topology.exception_ops import accept
from topology.fileformat import dumps
from topology.rename_ops import rename
from widgets.component_tree import ID_ROLE, ComponentTree, outline

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"


@pytest.fixture
def tree(qtbot, doc):
    widget = ComponentTree(doc, Selection())
    qtbot.addWidget(widget)
    widget.resize(460, 800)
    widget.show()
    doc.validation.wait()
    qtbot.waitUntil(lambda: widget.marker("R710-1") != "", timeout=5000)
    return widget


def redrawn(qtbot, doc, tree) -> None:
    """Wait out the tree's debounce and the live validation after an edit."""
    doc.validation.wait()
    qtbot.wait(tree._refresh.interval() + 50)
    doc.validation.wait()
    qtbot.wait(20)


def row(tree: ComponentTree, ident: str):
    """The component's row; rows under a device appear when the person opens the device."""
    rows = [i for i in tree.items_for(ident) if i.data(0, Qt.ItemDataRole.UserRole + 2) != "node"]
    if not rows and ":" in ident:
        row(tree, ident.split(":", 1)[0]).setExpanded(True)
        return row(tree, ident)
    return rows[0]


def click(qtbot, tree: ComponentTree, ident: str, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    item = row(tree, ident)
    parent = item.parent()
    while parent is not None:
        parent.setExpanded(True)
        parent = parent.parent()
    tree.scrollToItem(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, modifier, tree.visualItemRect(item).center())


def test_lists_every_component_under_its_section(tree, doc):
    sections = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert sections == ["Servers (5)", "Switches (2)", "Networks (3)", "Storage arrays (1)",
                        "Virtual machines (16)", "Clusters (1)", "Workloads (" + str(len(doc.bed.workloads)) + ")"]
    server = row(tree, "R710-1")
    assert server.childCount() == 0 and not server.isExpanded()   # made when opened: big beds stay quick
    server.setExpanded(True)
    ports = [server.child(i).data(0, ID_ROLE) for i in range(server.childCount())]
    assert ports == ["R710-1:SAN1", "R710-1:SAN2", "R710-1:LAN1", "R710-1:LAN2", "R710-1:LAC4"]
    array = row(tree, "MD3000i")
    array.setExpanded(True)
    kids = {array.child(i).data(0, ID_ROLE) for i in range(array.childCount())}
    assert {"MD3000i:group:SQL", "MD3000i:Logs", "MD3000i:Controller 0"} <= kids


def test_findings_mark_their_components_and_the_device_above(qtbot, doc, tree):
    assert tree.marker("R710-1") == "warning"                 # NET-004: no heartbeat port
    assert tree.marker("MD3000i") == "warning"                # RAID-003, before the array is opened
    row(tree, "MD3000i").setExpanded(True)
    assert tree.marker("MD3000i:group:SQL") == "warning"      # RAID-003: no hot spare
    assert tree.marker("MD3000i") == "warning"
    assert tree.marker("DC") == ""
    assert "NET-004" in row(tree, "R710-1").toolTip(0)

    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    doc.apply(SetField(host, "memory_gb", 8, owner="R710-1"))
    redrawn(qtbot, doc, tree)
    assert tree.marker("R710-1") == "error"                   # CAP-001 outranks the warning
    assert "CAP-001" in row(tree, "R710-1").toolTip(0)
    doc.undo_stack.undo()
    redrawn(qtbot, doc, tree)
    assert tree.marker("R710-1") == "warning"

    doc.apply(accept(doc.bed, "RAID-003", ["MD3000i"], "no spare slot in the tested configuration"))
    redrawn(qtbot, doc, tree)
    assert tree.marker("MD3000i:group:SQL") == "", "an accepted finding no longer marks its components"


def test_a_port_finding_marks_the_port_and_its_server(qtbot, doc, tree):
    port = next(p for ad in doc.bed.servers[0].adapters for p in ad.ports if p.name == "SAN1")
    doc.apply(SetField(port, "roles", ["iscsi", "lan"], owner="R710-1"))     # NET-001: SAN shares a port
    redrawn(qtbot, doc, tree)
    assert tree.marker("R710-1") == "error"
    row(tree, "R710-1").setExpanded(True)
    assert tree.marker("R710-1:SAN1") == "error" and tree.marker("R710-1") == "error"
    assert tree.marker("R710-1:SAN2") == "error"              # NET-002: only one dedicated iSCSI port left
    assert tree.marker("R710-1:LAN1") == ""


def test_edits_update_rows_in_place_keeping_what_is_open(qtbot, doc, tree):
    array = row(tree, "MD3000i")
    array.setExpanded(True)
    logs = row(tree, "MD3000i:Logs")
    volume = next(v for v in doc.bed.arrays[0].volumes if v.name == "Logs")
    doc.apply(SetField(volume, "size_gb", 200, owner="MD3000i"))
    redrawn(qtbot, doc, tree)
    assert row(tree, "MD3000i:Logs") is logs and logs.text(2).startswith("200 GB")
    r710 = row(tree, "R710-1")
    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    doc.apply(SetField(host, "memory_gb", 96, owner="R710-1"))
    redrawn(qtbot, doc, tree)
    assert row(tree, "R710-1") is r710, "the row was updated, not rebuilt"
    assert "96 GB RAM" in r710.text(2)
    assert row(tree, "MD3000i") is array and array.isExpanded()

    new_server = copy.deepcopy(host)
    new_server.id = "R710-3"
    doc.apply(InsertItem(doc.bed.servers, new_server))
    redrawn(qtbot, doc, tree)
    assert tree.topLevelItem(0).text(0) == "Servers (6)"
    assert row(tree, "R710-1") is r710 and row(tree, "MD3000i") is array and array.isExpanded()
    assert row(tree, "R710-3").parent() is tree.topLevelItem(0)
    doc.undo_stack.undo()
    redrawn(qtbot, doc, tree)
    assert tree.topLevelItem(0).text(0) == "Servers (5)" and not tree.items_for("R710-3")
    assert tree.component_count() == 5 + 2 + 3 + 1 + 16 + 1 + len(doc.bed.workloads)


def test_a_rename_renames_the_row_and_keeps_the_selection_on_it(qtbot, doc, tree):
    click(qtbot, tree, "R710-2")
    doc.apply(rename(doc.bed, "R710-2", "R710-B"))
    tree.selection.set(["R710-B"])          # what the property editor does after its rename
    redrawn(qtbot, doc, tree)
    row(tree, "MD3000-Cluster").setExpanded(True)
    assert [i.data(0, ID_ROLE) for i in tree.selectedItems()] == ["R710-B"]
    cluster_nodes = [i.text(0) for i in tree.items_for("R710-B")]
    assert cluster_nodes.count("R710-B") == 2, "the server row and its cluster-node row"
    doc.undo_stack.undo()
    redrawn(qtbot, doc, tree)
    assert tree.items_for("R710-2") and not tree.items_for("R710-B")


def test_selection_follows_both_ways(qtbot, tree):
    selection = tree.selection
    click(qtbot, tree, "R710-1")
    assert selection.ids == {"R710-1"}
    click(qtbot, tree, "MD3000i:Logs", Qt.KeyboardModifier.ControlModifier)
    assert selection.ids == {"R710-1", "MD3000i:Logs"}

    row(tree, "R710-2").setExpanded(False)
    selection.set(["R710-2:SAN2", "PC5448-1"])          # picked on the canvas
    selected = {i.data(0, ID_ROLE) for i in tree.selectedItems()}
    assert selected == {"R710-2:SAN2", "PC5448-1"}
    assert row(tree, "R710-2").isExpanded(), "the selected port is brought into sight"
    selection.clear()
    assert tree.selectedItems() == []


def test_context_menu_selects_on_canvas(qtbot, tree):
    selection = tree.selection
    centred: list[frozenset] = []
    selection.centre_requested.connect(centred.append)
    storage: list[list[str]] = []
    tree.storage_view_requested.connect(storage.append)
    titles: list[list[str]] = []

    def pick(title: str) -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, lambda: pick(title))
            return
        titles.append([a.text() for a in menu.actions() if a.text()])
        next(a for a in menu.actions() if a.text() == title).trigger()
        menu.close()

    item = row(tree, "MD3000i:group:SQL")
    tree.scrollToItem(item)
    QTimer.singleShot(0, lambda: pick("Show in storage view"))
    tree.customContextMenuRequested.emit(tree.visualItemRect(item).center())
    assert selection.ids == {"MD3000i:group:SQL"} and centred == [frozenset({"MD3000i:group:SQL"})]
    assert {"Select on canvas", "Show in storage view"} <= set(titles[0])
    assert storage == [["MD3000i:group:SQL"]]

    item = row(tree, "DC")
    QTimer.singleShot(0, lambda: pick("Select on canvas"))
    tree.customContextMenuRequested.emit(tree.visualItemRect(item).center())
    assert selection.ids == {"DC"} and "Show in storage view" not in titles[1]
    assert centred[-1] == frozenset({"DC"}) and len(storage) == 1


def test_outline_is_plain_data_matching_the_bed(doc):
    sections = outline(doc.bed)
    servers = sections[0]
    assert servers.label == "Servers (5)" and [n.id for n in servers.children][:2] == ["R710-1", "R710-2"]
    assert dumps(doc.bed)                    # outline never changed the model while reading it


def test_grab_the_component_tree(qtbot, doc, tree):
    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    doc.apply(SetField(host, "memory_gb", 8, owner="R710-1"))
    redrawn(qtbot, doc, tree)
    row(tree, "MD3000i").setExpanded(True)
    qtbot.wait(20)
    assert tree.grab().save("/tmp/testbed-component-tree.png")
