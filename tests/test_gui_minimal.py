"""The minimal main window, driven the way a person would: it opens the default example,
shows the bed's components and findings, and refuses a broken file with the loader's
message while keeping the open document."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

import resources
import widgets.file_controller as file_controller
from topology.errors import BedFileError
from topology.fileformat import load, save
from topology.synthetic import generate
from widgets.main_window import MainWindow

BROKEN = {
    "malformed-yaml": "format_version: 1\nbed: {name: broken\nservers: [\n",
    "unknown-kind": "format_version: 1\nbed: {name: broken}\nservers:\n- id: h1\n  role: toaster\n",
    "dangling-reference": ("format_version: 1\nbed: {name: broken}\nservers:\n- id: h1\n"
                           "clusters:\n- id: c1\n  nodes: [h1, h2]\n"),
    "not-a-bed": "- just\n- a list\n",
}


@pytest.fixture
def dialogs(monkeypatch) -> list[tuple[str, str]]:
    """Capture QMessageBox.critical instead of blocking on a modal dialog."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(file_controller.QMessageBox, "critical",
                        lambda parent, title, text, *a, **k: shown.append((title, text)))
    return shown


@pytest.fixture
def window(qtbot, dialogs) -> MainWindow:
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    return w


@pytest.fixture
def small_bed(tmp_path) -> Path:
    """A small synthetic bed with two planted faults: a duplicate IP and no hot spare."""
    bed = generate(hosts=4, vms=8, arrays=1, disks=20, rack_size=4)
    bed.arrays[0].spares = []
    bed.servers[0].adapters[0].ports[0].address = bed.servers[1].adapters[0].ports[0].address
    path = tmp_path / "small.yaml"
    save(bed, path)
    return path


def test_opens_the_default_example(window, dialogs, examples_dir):
    default = examples_dir / "md3000i-hyperv-cluster.yaml"
    assert resources.example_path(resources.DEFAULT_EXAMPLE) == default
    assert default.is_file(), "the default example is missing from resources/examples"
    assert window.open_initial() is True
    assert dialogs == []
    name = window.bed.bed.name
    assert name and name in window.windowTitle()
    assert window.tree.topLevelItemCount() > 0
    assert window.tree.component_count() > 0
    assert window.findings.topLevelItemCount() > 0
    assert window.validation_dock.windowTitle().startswith("Validation — ")


def test_tree_lists_every_kind_of_component(window, small_bed):
    assert window.open_path(small_bed)
    sections = [window.tree.topLevelItem(i).text(0) for i in range(window.tree.topLevelItemCount())]
    for title in ("Servers", "Switches", "Storage arrays", "Virtual machines", "Clusters"):
        assert any(s.startswith(title + " (") for s in sections), sections
    servers = window.tree.topLevelItem(0)
    host = servers.child(0)
    assert host.text(0) == "host0" and host.childCount() > 0  # its ports
    assert "synthetic 4 hosts" in window.windowTitle()


def test_panel_lists_the_findings(window, small_bed):
    assert window.open_path(small_bed)
    panel = window.findings
    rows = [[panel.topLevelItem(i).text(c) for c in range(4)] for i in range(panel.topLevelItemCount())]
    codes = {row[0] for row in rows}
    assert {"NET-007", "RAID-003"} <= codes, rows
    dup = next(row for row in rows if row[0] == "NET-007")
    assert dup[1] == "error" and "host0:lan" in dup[3] and "10.0.0." in dup[2]
    assert "1 error" in window.validation_dock.windowTitle()


@pytest.mark.parametrize("code", ["NET-007", "RAID-003"])
def test_finding_selects_its_components(window, small_bed, code):
    assert window.open_path(small_bed)
    panel = window.findings
    index = next(i for i, f in enumerate(panel.findings) if f.code == code)
    panel.setCurrentItem(panel.topLevelItem(index))
    selected = {item.data(0, Qt.ItemDataRole.UserRole) for item in window.tree.selectedItems()}
    assert selected and selected <= set(panel.findings[index].subjects)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_file_shows_the_loader_message_and_keeps_the_document(window, dialogs, small_bed,
                                                                     tmp_path, case):
    assert window.open_path(small_bed)
    title_before, bed_before = window.windowTitle(), window.bed
    count_before = window.tree.component_count()

    broken = tmp_path / f"{case}.yaml"
    broken.write_text(BROKEN[case], encoding="utf-8")
    with pytest.raises(BedFileError) as expected:
        load(broken)

    assert window.open_path(broken) is False
    assert dialogs == [("Cannot open test bed", str(expected.value))]
    assert "Traceback" not in dialogs[0][1]
    assert window.bed is bed_before and window.path == small_bed
    assert window.windowTitle() == title_before
    assert window.tree.component_count() == count_before


def test_missing_file_shows_a_message(window, dialogs, tmp_path):
    assert window.open_path(tmp_path / "nope.yaml") is False
    assert len(dialogs) == 1 and "nope.yaml" in dialogs[0][1]
    assert window.bed is None


def test_file_menu_actions_and_shortcuts(window):
    actions = window.actions_by_name
    assert actions["open"].shortcut() == QKeySequence("Ctrl+O")
    assert actions["quit"].shortcut() == QKeySequence("Ctrl+Q")
    file_menu = window.menuBar().actions()[0]
    assert file_menu.text().replace("&", "") == "File"
    assert [a.objectName() for a in file_menu.menu().actions()] == ["action_open", "action_quit"]


def test_quit_closes_the_window(window, qtbot):
    window.actions_by_name["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible())

