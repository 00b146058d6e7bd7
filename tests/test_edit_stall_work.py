"""After an edit, the GUI thread does only the work the edit calls for (issue 32: on the 5,000-device
bed every tab open, one move stalled the window for seconds).  Counted, not timed: an edit that
changes no finding rebuilds no findings list, no readiness list and no finding markers, and the bed
is copied or serialised on the GUI thread by nobody (the methodology, the path view and the
autosave read it on their workers).  An edit that runs into the autosave's snapshot is not lost:
the snapshot is taken again and the autosave has the edit."""
from __future__ import annotations

import pickle
import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

import app.autosave as autosave
import resources
from topology.edits import SetField
from topology.model import Bed
from topology.operations import move

DEFAULT = resources.example_path(resources.DEFAULT_EXAMPLE)


@pytest.fixture
def window(laptop_window):
    return laptop_window


def _settled(w) -> bool:
    doc = w.document
    return doc.validation.revision_shown == doc.revision and w.methodology.revision_shown == doc.revision \
        and not w.paths._job.busy


def test_a_move_rebuilds_no_list_and_copies_no_bed_on_the_gui_thread(qtbot, window, monkeypatch):
    w = window
    assert w.open_path(DEFAULT)
    for i in range(w.tabs.count()):          # every tab open once
        w.tabs.setCurrentIndex(i)
        QTest.qWait(10)
    w.tabs.setCurrentWidget(w.canvas)
    qtbot.waitUntil(lambda: _settled(w) and bool(w.findings.findings) and bool(w.readiness.gaps), timeout=60000)
    titles = w.findings.group_titles()

    gui = threading.get_ident()
    copies: list[str] = []                   # the bed copied or serialised on the GUI thread
    real_dumps, real_to_data = pickle.dumps, autosave.to_data

    def dumps(obj, *args, **kwargs):
        if isinstance(obj, Bed) and threading.get_ident() == gui:
            copies.append("pickle")
        return real_dumps(obj, *args, **kwargs)

    def to_data(bed, *args, **kwargs):
        if threading.get_ident() == gui:
            copies.append("to_data")
        return real_to_data(bed, *args, **kwargs)
    monkeypatch.setattr(pickle, "dumps", dumps)
    monkeypatch.setattr(autosave, "to_data", to_data)
    rebuilt = {"findings list": 0, "readiness list": 0, "finding markers": 0}

    def count(what):
        def counted(*_args):
            rebuilt[what] += 1
        return counted
    w.findings.model.modelAboutToBeReset.connect(count("findings list"))
    w.readiness.tree.model().modelAboutToBeReset.connect(count("readiness list"))
    apply_markers = w.tree._apply_markers

    def markers():
        rebuilt["finding markers"] += 1
        apply_markers()
    monkeypatch.setattr(w.tree, "_apply_markers", markers)

    doc = w.document
    server = doc.bed.servers[0].id
    item = w.canvas.devices[server]
    x = item.pos().x() + 20
    doc.apply(move(doc.bed, {server: (x, item.pos().y())}))
    written: list = []
    w.files.autosave.written.connect(written.append)
    w.files.autosave.write_now()
    qtbot.waitUntil(lambda: _settled(w) and bool(written), timeout=60000)
    QTest.qWait(50)

    assert rebuilt == {"findings list": 0, "readiness list": 0, "finding markers": 0}
    assert copies == [], "the bed was copied or serialised on the GUI thread"
    # the list still shows the findings, of this revision
    assert w.findings.group_titles() == titles
    assert w.findings.findings == doc.validation.findings
    assert w.findings.visible_findings()[0] is doc.validation.findings[w.findings.model.groups[0][1][0]]
    # and the autosave has the move
    assert written[-1].read_text(encoding="utf-8") == doc.snapshot_text()


def test_an_edit_that_runs_into_the_autosave_snapshot_is_written_next(qtbot, window, monkeypatch):
    w = window
    assert w.open_path(DEFAULT)
    doc = w.document
    saver = w.files.autosave
    assert saver.active
    started, go = threading.Event(), threading.Event()
    real_to_data = autosave.to_data
    calls: list[bool] = []          # each snapshot: taken on the GUI thread?

    def to_data(bed, *args, **kwargs):
        calls.append(threading.get_ident() == gui)
        if len(calls) == 1:         # the first snapshot waits while the test edits the bed
            started.set()
            go.wait(3)
        return real_to_data(bed, *args, **kwargs)
    gui = threading.get_ident()
    monkeypatch.setattr(autosave, "to_data", to_data)

    doc.apply(SetField(doc.bed.bed, "name", "first edit"))
    saver.write_now()
    qtbot.waitUntil(started.is_set, timeout=5000)
    doc.apply(SetField(doc.bed.bed, "name", "edited while the autosave copied"))
    go.set()
    text = saver.directory or autosave.autosave_dir()
    qtbot.waitUntil(lambda: any("edited while the autosave copied" in p.read_text(encoding="utf-8")
                                for p in text.glob("*.yaml")), timeout=10000)
    assert calls[:2] == [False, False], "the snapshots were taken on the GUI thread"
    assert saver.gui_snapshots == 0


def test_a_changed_list_of_thousands_asks_only_for_the_rows_in_sight(qtbot, monkeypatch):
    """A tree view laid out every row of an open group each time the findings changed (a Python
    call per row: seconds on a big bed); the list now asks for the rows it shows."""
    from app.document import Document
    from app.selection import Selection
    from topology.fileformat import load
    from topology.validation.registry import Finding
    from widgets.findings_model import FindingsModel
    from widgets.validation_panel import ValidationPanel
    asked = {"flags": 0}
    real_flags = FindingsModel.flags

    def flags(self, index):
        asked["flags"] += 1
        return real_flags(self, index)
    monkeypatch.setattr(FindingsModel, "flags", flags)
    doc = Document(load(DEFAULT))
    panel = ValidationPanel(doc, Selection())
    qtbot.addWidget(panel)
    panel.resize(1100, 520)
    panel.show()
    doc.validation.wait()
    qtbot.waitUntil(lambda: bool(panel.findings), timeout=5000)

    def many(n: int, word: str) -> list:
        return [Finding(code="NET-007", severity="error" if i % 3 else "warning", subjects=(f"host-{i}",),
                        message=f"{word} address {i}", reason="", source="", hint="") for i in range(n)]
    for n, word in ((5000, "duplicate"), (5001, "repeated")):
        asked["flags"] = 0
        panel.show_findings(many(n, word))
        qtbot.wait(20)          # painted
        assert len(panel.visible_findings()) == n
        assert asked["flags"] < 500, asked
    # grouping, counts and the keyboard as before
    assert panel.group_titles() == ["Errors (3334)", "Warnings (1667)"]
    panel.tree.setCurrentIndex(panel.index_for(panel.visible_findings()[1]))
    qtbot.keyClick(panel.tree, Qt.Key.Key_Up)
    assert panel.current_finding() is panel.visible_findings()[0]
    qtbot.keyClick(panel.tree, Qt.Key.Key_Left)                     # to its group ...
    qtbot.keyClick(panel.tree, Qt.Key.Key_Left)                     # ... and closed
    assert not panel.index_for(panel.visible_findings()[0]).isValid()
    assert panel.index_for(panel.visible_findings()[3334]).row() == 2   # the warnings follow the closed group
    qtbot.keyClick(panel.tree, Qt.Key.Key_Right)                    # open again
    assert panel.index_for(panel.visible_findings()[0]).row() == 1
