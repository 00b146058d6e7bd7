"""File › Draft Bed from Lab… as a person uses it (issue 28): the menu asks which hosts to read (an
inventory, or the open bed's access entries), the hosts -- two sandbox sshd hosts in network
namespaces, as tests/test_asbuilt_draft.py builds them -- are read on a worker while the window goes
on, and the drafted bed opens as a new, unsaved document whose one undo step is the draft.  The
draft is the command line's (`import BED --from-hosts`): the same bed comes out of both.  A
screenshot is written to build/screenshots/draft-from-lab.png."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.dialogs import answer_modal, forget_changes
from tests.test_asbuilt_draft import BED, PORTAL, TARGET, WWN, lab, pytestmark  # noqa: F401 (the lab fixture)
from topology.fileformat import dumps, load
from widgets.main_window import MainWindow

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "screenshots"


@pytest.fixture
def window(qtbot, lab, tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TESTBED_STUDIO_KNOWN_HOSTS", str(lab["lab"].known_hosts_path))
    w = MainWindow()
    qtbot.addWidget(w, before_close_func=forget_changes)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    return w


def _read_hosts(inventory: str | None):
    """Answer the draft dialog: the inventory typed in (None: the bed's access entries), then 'Read the hosts'."""
    def act(dialog) -> None:
        if dialog.objectName() != "draftSourceDialog":
            dialog.reject()
            raise AssertionError(f"expected the draft dialog, got {dialog!r}")
        if inventory is not None:
            dialog.path.setText(inventory)
        else:
            assert dialog.from_access.isEnabled() and dialog.from_access.isChecked()
        QTest.mouseClick(dialog.read_button, Qt.MouseButton.LeftButton)
    return act


@pytest.mark.slow
def test_draft_from_an_inventory_opens_as_a_new_unsaved_bed_the_cli_would_make(qtbot, window, lab, tmp_path):
    doc = window.document
    answered = answer_modal(_read_hosts(str(lab["inventory"])))
    window.actions_by_name["draft_from_lab"].trigger()
    assert answered, "the menu action asks which hosts to read"
    qtbot.waitUntil(lambda: {s.id for s in doc.bed.servers} == {"h1", "h2"}, timeout=90_000)
    assert doc.path is None and doc.dirty and doc.undo_stack.count() == 1
    assert "Drafted from lab.ini: read 2 of 2 host(s)" in window.statusBar().currentMessage()
    (array,) = doc.bed.arrays
    (volume,) = array.volumes
    assert (volume.wwn, volume.target) == (f"naa.{WWN}", TARGET)
    assert sorted((m.to, m.lun) for m in array.mappings) == [("h1", 1), ("h2", 1)]
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.tabs.setCurrentWidget(window.canvas)
    window.canvas.fit()
    qtbot.wait(300)
    assert window.grab().save(str(SHOTS / "draft-from-lab.png"))
    # the command line drafts the same bed from the same inventory
    cli_bed = tmp_path / "cli.yaml"
    cli_bed.write_text("format_version: 1\nbed: {name: drafted from the lab}\n")
    env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(lab["lab"].known_hosts_path)}
    done = subprocess.run([sys.executable, "-m", "app.cli", "import", str(cli_bed), "--from-hosts",
                           str(lab["inventory"])], capture_output=True, text=True, timeout=180, env=env,
                          stdin=subprocess.DEVNULL, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert dumps(doc.bed) == dumps(load(str(cli_bed)))
    # one undo step takes the draft back to the empty bed it started from
    doc.undo_stack.undo()
    assert doc.bed.servers == [] and doc.bed.arrays == []


def test_draft_from_the_beds_access_entries_leaves_the_bed_file_alone(qtbot, window, lab, tmp_path):
    h = lab["lab"].hosts["h2"]
    path = tmp_path / "bed.yaml"
    text = BED + (f"servers:\n  - {{id: h2, role: application}}\naccess:\n  - {{host: h2, transport: ssh, "
                  f"address: {h.address}, port: {h.port}, user: root, key_file: {lab['lab'].client_key_path}}}\n")
    path.write_text(text)
    assert window.open_path(path)
    doc = window.document
    answer_modal(_read_hosts(None))
    window.actions_by_name["draft_from_lab"].trigger()
    qtbot.waitUntil(lambda: doc.path is None and bool(doc.bed.arrays), timeout=90_000)
    (server,) = doc.bed.servers
    assert server.role == "application"              # what the bed says of the host stays
    assert any(p.name == "san1" and p.address == "10.20.0.12/24" for ad in server.adapters for p in ad.ports)
    assert [a.controllers[0].ports[0].address for a in doc.bed.arrays] == [f"{PORTAL}/24"]
    assert doc.dirty and path.read_text() == text     # a new document: the file it came from is untouched
    doc.undo_stack.undo()
    assert [s.id for s in doc.bed.servers] == ["h2"] and not doc.bed.arrays


def test_a_file_that_is_not_there_is_named_and_nothing_is_read(qtbot, window, tmp_path):
    seen = []

    def act(dialog) -> None:
        dialog.path.setText(str(tmp_path / "nosuch.ini"))
        QTest.mouseClick(dialog.read_button, Qt.MouseButton.LeftButton)
        seen.append(dialog.problem.text())
        dialog.reject()
    answer_modal(act)
    assert window.draft_from_lab() is False
    assert seen and "No such file" in seen[0] and "nosuch.ini" in seen[0]
    assert window.lab_drafter.job.busy is False and window.document.bed.servers == []


def test_an_unknown_host_key_is_asked_on_the_gui_thread_and_remembered_when_trusted(qtbot, window, lab, tmp_path,
                                                                                    monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox
    known = tmp_path / "known_hosts"
    known.write_text("")
    monkeypatch.setenv("TESTBED_STUDIO_KNOWN_HOSTS", str(known))
    asked: list[str] = []

    def trust_each() -> None:          # the person trusts each key the draft asks about, one box at a time
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.windowTitle() == "Unknown host key":
            asked.append(box.text().split("(")[0])
            QTest.mouseClick(next(b for b in box.buttons() if b.text() == "Trust and remember"),
                             Qt.MouseButton.LeftButton)
    timer = QTimer()
    timer.timeout.connect(trust_each)
    timer.start(30)
    try:
        answer_modal(_read_hosts(str(lab["inventory"])))
        window.actions_by_name["draft_from_lab"].trigger()
        qtbot.waitUntil(lambda: {s.id for s in window.document.bed.servers} == {"h1", "h2"}, timeout=90_000)
    finally:
        timer.stop()
    assert sorted(asked) == ["The SSH host key of h1 ", "The SSH host key of h2 "]
    assert len([line for line in known.read_text().splitlines() if line.strip()]) == 2


def test_a_host_that_cannot_be_reached_is_named_beside_the_draft(qtbot, window, lab, tmp_path):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from widgets.problems_dialog import ProblemsDialog
    inventory = tmp_path / "more.ini"
    inventory.write_text(Path(lab["inventory"]).read_text() + "gone ansible_host=127.0.0.1 ansible_port=9 "
                         "ansible_user=root\n")
    seen: list[str] = []

    def close_notes() -> None:          # the person reads the notes and closes them (a timer: the box is modal)
        box = QApplication.activeModalWidget()
        if isinstance(box, ProblemsDialog):
            seen.extend(box.list.item(i).text() for i in range(box.list.count()))
            box.reject()
    timer = QTimer()
    timer.timeout.connect(close_notes)
    timer.start(30)
    try:
        answer_modal(_read_hosts(str(inventory)))
        window.actions_by_name["draft_from_lab"].trigger()
        qtbot.waitUntil(lambda: bool(seen), timeout=90_000)
    finally:
        timer.stop()
    assert any(item.startswith("gone: not reached") for item in seen), seen
    assert {s.id for s in window.document.bed.servers} == {"h1", "h2"}        # the others are drafted
