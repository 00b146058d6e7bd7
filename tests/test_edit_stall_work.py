"""After an edit, the GUI thread does only the work the edit calls for (issue 32: on the 5,000-device
bed every tab open, one move stalled the window for seconds).  Counted, not timed: an edit that
changes no finding rebuilds no findings list, no readiness list and no finding markers, and the bed
is copied or serialised on the GUI thread by nobody (the methodology, the path view and the
autosave read it on their workers).  An edit that runs into the autosave's snapshot is not lost:
the snapshot is taken again and the autosave has the edit.

The same counted for what the window does with an edit on the big bed: a device moved redraws that
device and its cables without the canvas walking every device and cable again; findings that came
back equal are neither counted again nor compared badge by badge; a changed readiness list keeps
the rows of the gaps still there; a bulk result is frozen without following the frozen set's list.
"""
from __future__ import annotations

import gc
import pickle
import sys
import threading
import weakref

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

import app.autosave as autosave
import resources
from app.document import Document
from app.selection import Selection
from topology.edits import SetField
from topology.model import Bed
from topology.operations import apply_layout, connect, delete, move
from topology.rename_ops import rename
from topology.synthetic import generate
from widgets.canvas.view import Canvas

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
    w.readiness.view.model().modelAboutToBeReset.connect(count("readiness list"))
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


def _canvas(qtbot, hosts: int) -> tuple[Document, Canvas]:
    doc = Document()
    canvas = Canvas(doc, Selection())
    qtbot.addWidget(canvas)
    doc.replace(generate(hosts=hosts, vms=hosts, arrays=2, disks=12, rack_size=20), None)
    canvas.finish_build()
    return doc, canvas


def _calls_during(action) -> int:
    """Python and C function calls made on this thread while `action` runs (a walk over the bed's
    devices or cables makes one or more per component)."""
    calls = 0

    def count(_frame, event, _arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1
    sys.setprofile(count)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls


def _moved(doc: Document, canvas: Canvas) -> int:
    host = doc.bed.servers[0].id
    item = canvas.devices[host]
    x, y = item.pos().x() + 40, item.pos().y()
    calls = _calls_during(lambda: doc.apply(move(doc.bed, {host: (x, y)})))
    assert (canvas.devices[host].pos().x(), canvas.devices[host].pos().y()) == (x, y)
    return calls


def test_moving_one_device_costs_the_same_on_a_bed_four_times_as_big(qtbot, monkeypatch):
    from app import diagram
    monkeypatch.setattr(diagram, "ROUTED_MAX", 0)      # as on a big bed: cables are not routed around devices
    small = _moved(*_canvas(qtbot, 20))
    big = _moved(*_canvas(qtbot, 80))
    # the same 407 calls on both now; the old redraw rebuilt the id maps, compared every cable and
    # worked out the dashed paths again: 885 and 2,091 calls
    assert big < small + 400, (small, big)


def test_a_move_redraws_the_device_and_its_cables_and_leaves_the_rest(qtbot):
    doc, canvas = _canvas(qtbot, 30)
    host = doc.bed.servers[0].id
    refreshed: list[str] = []
    refresh = canvas._refresh_device
    canvas._refresh_device = lambda item, obj: (refreshed.append(item.ident), refresh(item, obj))
    cables = {key: item.path().boundingRect().getRect() for key, item in canvas.links.items()}
    ours = canvas._links_at[host]
    doc.apply(move(doc.bed, {host: (canvas.devices[host].pos().x(), canvas.devices[host].pos().y() + 300)}))
    assert refreshed == [host]
    after = {key: item.path().boundingRect().getRect() for key, item in canvas.links.items()}
    assert {key for key in cables if after[key] != cables[key]} <= ours
    assert any(after[key] != cables[key] for key in ours & set(cables)), "the device's cables follow it"


def test_a_move_redraws_without_walking_the_bed_to_see_that_nothing_else_changed(qtbot):
    """A move sets plain fields the drawing's shape does not depend on (the edit says so): the canvas
    redraws the device without comparing every component, cable and VM of the bed with what it drew
    (30 ms of the GUI thread per edit on the 5,000-device bed).  A rename still compares."""
    doc, canvas = _canvas(qtbot, 20)
    walked: list[str] = []

    class Watched(list):
        def __iter__(self):
            walked.append(self.name)
            return super().__iter__()
    for name in ("servers", "switches", "arrays", "vms", "links"):
        watched = Watched(getattr(doc.bed, name))
        watched.name = name
        setattr(doc.bed, name, watched)
    host = doc.bed.servers[0].id
    x, y = canvas.devices[host].pos().x() + 40, canvas.devices[host].pos().y()
    edit = move(doc.bed, {host: (x, y)})
    walked.clear()          # making the edit looked the device up
    doc.apply(edit)
    assert (canvas.devices[host].pos().x(), canvas.devices[host].pos().y()) == (x, y)
    assert walked == []
    edit = rename(doc.bed, doc.bed.servers[1].id, "RENAMED")
    walked.clear()
    doc.apply(edit)
    assert "RENAMED" in canvas.devices and walked


def _drawing(canvas: Canvas) -> tuple:
    return (sorted((i, d.pos().x(), d.pos().y(), d.w, d.h) for i, d in canvas.devices.items()),
            sorted(i for i in canvas.chips),
            sorted((tuple(item.ends), tuple(item.path().boundingRect().getRect()))
                   for item in canvas.links.values()),
            len(canvas.paths), sorted(canvas.cabled.items()))


def test_after_each_kind_of_edit_the_canvas_is_the_one_a_fresh_drawing_makes(qtbot):
    """The quick redraw is taken only when no component, cable, path or VM placement changed: an
    edit that changes one of those is drawn as a fresh canvas draws the bed."""
    doc, canvas = _canvas(qtbot, 6)
    first, second = doc.bed.servers[0], doc.bed.servers[1]
    cable = next(lk for lk in doc.bed.links if lk.a.partition(":")[0] == second.id)
    ends = (cable.a, cable.b)
    edits = [lambda: apply_layout(doc.bed),      # every device's place in the model, as a fresh drawing reads it
             lambda: move(doc.bed, {first.id: (900.0, 900.0)}),
             lambda: rename(doc.bed, first.id, "RENAMED-HOST"),
             lambda: move(doc.bed, {"RENAMED-HOST": (1200.0, 40.0)}),
             lambda: delete(doc.bed, [], links=[cable]),
             lambda: connect(doc.bed, *ends),
             lambda: delete(doc.bed, [second.id])]
    for make in edits:
        doc.apply(make())
        _same(_drawing(canvas), _drawing(_fresh(qtbot, doc)))
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    _same(_drawing(canvas), _drawing(_fresh(qtbot, doc)))


def _fresh(qtbot, doc: Document) -> Canvas:
    """The bed drawn by a canvas of its own (a document of its own: the edits do not reach it)."""
    own = Document()
    canvas = Canvas(own, Selection())
    qtbot.addWidget(canvas)
    own.replace(doc.bed, None)
    canvas.finish_build()
    return canvas


def _same(a, b):
    for part, (x, y) in enumerate(zip(a, b)):
        if x != y:
            xs, ys = (set(x), set(y)) if isinstance(x, list) else ({x}, {y})
            raise AssertionError(f"part {part}: only here {sorted(xs - ys)[:5]}, only fresh {sorted(ys - xs)[:5]}")


def test_findings_that_come_back_equal_are_not_counted_or_compared_again(qtbot, monkeypatch):
    from widgets import validation_panel
    from widgets.validation_panel import ValidationPanel
    doc, canvas = _canvas(qtbot, 20)
    panel = ValidationPanel(doc, Selection())
    qtbot.addWidget(panel)
    doc.validation.run_now()
    assert doc.validation.wait(20000)
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=20000)
    findings = doc.validation.findings
    assert findings and panel.summary()
    counted = []
    words = validation_panel.count_words
    monkeypatch.setattr(validation_panel, "count_words", lambda f: counted.append(len(f)) or words(f))
    looked_up: list[str] = []
    devices = canvas.devices
    canvas.devices = _Spy(devices, looked_up)
    equal = list(findings)          # the live validator hands back the list it showed when none changed
    panel.show_findings(equal)
    canvas._on_findings(equal)
    assert counted == [] and looked_up == []
    canvas.devices = devices
    panel.show_findings(equal[1:])   # one fewer: counted again
    assert counted == [len(equal) - 1]


def test_findings_that_changed_are_told_apart_without_comparing_them_on_the_gui_thread(qtbot, monkeypatch):
    # the validator hands back findings equal to those shown as those very objects, any others as
    # new ones: comparing 25,000 findings up to the first that differs took tens of ms per view
    import dataclasses

    from topology.validation.registry import Finding
    from widgets.component_tree import ComponentTree
    from widgets.validation_panel import ValidationPanel
    doc, canvas = _canvas(qtbot, 20)
    panel, tree = ValidationPanel(doc, Selection()), ComponentTree(doc, Selection())
    for view in (panel, tree):
        qtbot.addWidget(view)
    hosts = [s.id for s in doc.bed.servers]
    findings = [Finding("NET-001", "warning", (host,), f"{host} has no address {n}", "r", "s", "h")
                for n in range(10) for host in hosts]
    panel.show_findings(findings)
    tree.show_findings(findings)
    changed = [dataclasses.replace(f) for f in findings]     # as the validator makes them anew
    changed[-1] = dataclasses.replace(changed[-1], message=changed[-1].message + " (changed)")
    compared = []
    equal = Finding.__eq__
    monkeypatch.setattr(Finding, "__eq__", lambda a, b: compared.append(1) or equal(a, b))
    panel.show_findings(changed)
    tree.show_findings(changed)
    assert compared == [], f"{len(compared)} findings compared on the GUI thread"
    assert panel.findings == changed and panel.model.findings == changed


class _Spy(dict):
    def __init__(self, data, seen):
        super().__init__(data)
        self.seen = seen

    def get(self, key, default=None):
        self.seen.append(key)
        return super().get(key, default)


class _Cycle:
    def __init__(self):
        self.me = self


class _Step:
    """A result's object in no cycle, as a procedure's steps and the findings are."""


def _made_by_a_bulk_job(size: int, kind: type = _Cycle) -> list:
    from topology.gc_pause import collector_paused
    with collector_paused():        # as validation and the methodology make their results
        return [kind() for _ in range(size)]


def test_a_beds_first_results_living_side_by_side_are_not_walked_as_garbage(monkeypatch):
    """After a big bed opens, its findings, procedure and paths arrive one after another and all
    live on: more than twice the largest result is frozen, yet none of it is garbage.  Walking
    it all then held the GUI thread 1.6 s after the 5,000-device bed's first frame."""
    from app import gc_owner
    from app.gc_owner import GuiCollector
    monkeypatch.setattr(gc_owner, "BULK_YOUNG", 20_000)
    size = gc_owner.BULK_YOUNG + 1000
    collector = GuiCollector()
    try:
        collector.settle(large=False)
        results = []
        for _ in range(4):          # findings, the procedure, the paths, the placement
            results.append(_made_by_a_bulk_job(size, _Step))
            collector.collect_due()
        assert collector.bulk_frozen == 4 and collector.collections[2] == 0
    finally:
        gc.unfreeze()
        gc.collect()


def test_a_bulk_result_is_frozen_without_counting_the_frozen_set_and_piled_up_garbage_is_walked(monkeypatch):
    """gc.get_freeze_count follows the frozen list (millions of objects on the big bed: 0.1–0.5 s
    with the interpreter held); a result that replaces the last one does not need it.  Results
    that pile up (garbage in cycles) are still walked once the frozen set passes twice the largest."""
    from app import gc_owner
    from app.gc_owner import GuiCollector
    counts = []
    real = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counts.append(1) or real())
    monkeypatch.setattr(gc_owner, "BULK_YOUNG", 20_000)     # a result of 200,000 objects behaves alike, slower
    size = gc_owner.BULK_YOUNG + 1000
    collector = GuiCollector()
    try:
        collector.settle(large=False)
        counts.clear()
        result = _made_by_a_bulk_job(size, _Step)
        collector.collect_due()
        assert collector.bulk_frozen == 1 and counts == []
        result = _made_by_a_bulk_job(size)        # the next edit's result replaces it (freed by count)
        # the old result's deallocation took the young count back near zero: the GUI's next objects
        # make a collection due
        busy = [[] for _ in range(collector.thresholds[0] + 100)]
        collector.collect_due()
        del busy
        assert collector.bulk_frozen == 2 and counts == []
        lost = weakref.ref(result[0])
        result = None          # garbage in cycles, frozen: only a walk frees it
        walked = collector.collections[2]
        piles = []
        for _ in range(6):     # the first crossing is taken for the bed's first results (next test)
            piles.append(_made_by_a_bulk_job(size))
            collector.collect_due()
            piles[-1] = None
        assert collector.collections[2] > walked, "the frozen set passed twice the largest result: walked"
        assert lost() is None
    finally:
        gc.unfreeze()
        gc.collect()


def test_a_changed_readiness_list_asks_only_for_the_rows_in_sight_and_keeps_the_gap_picked(qtbot, monkeypatch):
    """Filling in one host on the big bed changes one gap of thousands: the list is not made again
    row by row (an item per gap held the window half a second each time); the rows read as a
    fresh list's, and the gap a person picked stays picked."""
    from app.readiness import PROCEDURE, REACH, Gap
    from widgets.readiness_panel import ReadinessModel, ReadinessPanel

    def gaps(hosts, reach: bool = True) -> list:
        out = [Gap(PROCEDURE, f"h{n}", f"h{n} lacks its address", "fill in the address") for n in hosts]
        return out + ([Gap(REACH, "", "no host has access", "add access")] if reach else [])

    def rows(panel) -> list:
        model = panel.view.model()
        return [[model.index(r, c).data() for c in range(3)] for r in range(model.rowCount())]
    panel = ReadinessPanel(Document(), Selection())
    qtbot.addWidget(panel)
    panel.resize(900, 400)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_gaps(gaps(range(5000)))
    picked = panel.row_of(Gap(PROCEDURE, "h10", "h10 lacks its address", "fill in the address"))
    panel.view.setCurrentIndex(picked)
    asked = []
    real = ReadinessModel.item_data
    monkeypatch.setattr(ReadinessModel, "item_data",
                        lambda self, i, col, role: asked.append(i) or real(self, i, col, role))
    for changed in (gaps(range(1, 5000)), gaps(range(1, 5001)), gaps(range(1, 5001), reach=False),
                    gaps([7, *range(1, 5001)], reach=False)):
        asked.clear()
        panel.show_gaps(changed)
        QTest.qWait(20)                    # the view lays out and paints what is in sight
        assert 0 < len(set(asked)) < 100, "only the rows in sight are asked for"
        assert panel.gaps[panel.view.model().item_index(panel.view.currentIndex())].subject == "h10"
        fresh = ReadinessPanel(Document(), Selection())
        qtbot.addWidget(fresh)
        fresh.show_gaps(changed)
        assert rows(panel) == rows(fresh)
    assert rows(panel)[0][0] == "The procedure lacks values (5001)"


def test_a_bulk_result_is_sized_by_its_job_without_listing_the_young_generations(monkeypatch):
    """Listing generation 0 to count a million new objects held the GUI thread 0.1–0.2 s after
    each edit of the big bed; the bulk job measures what it leaves as it ends."""
    from app import gc_owner
    from app.gc_owner import GuiCollector
    listed = []
    real = gc.get_objects
    monkeypatch.setattr(gc, "get_objects", lambda generation=None: listed.append(generation) or real(generation))
    monkeypatch.setattr(gc_owner, "BULK_YOUNG", 20_000)
    collector = GuiCollector()
    try:
        collector.settle(large=False)
        listed.clear()
        result = _made_by_a_bulk_job(gc_owner.BULK_YOUNG + 1000, _Step)
        collector.collect_due()
        assert collector.bulk_frozen == 1 and not {0, 1} & set(listed)
        assert result
    finally:
        gc.unfreeze()
        gc.collect()


def test_the_trees_finding_markers_are_sorted_on_the_validation_worker(qtbot, window, monkeypatch):
    """Sorting a big bed's 25,000 findings by component held the GUI thread 0.2-0.3 s each time a
    list came in: the live validator hands its list on with the markers made on its worker, and
    the tree shows them."""
    from app import finding_marks, live_validation
    from widgets import tree_markers
    gui = threading.get_ident()
    sorted_on: list[bool] = []
    real = finding_marks.subject_marks

    def marks(findings):
        sorted_on.append(threading.get_ident() == gui)
        return real(findings)
    monkeypatch.setattr(live_validation, "subject_marks", marks)
    monkeypatch.setattr(tree_markers, "subject_marks", marks)
    w = window
    assert w.open_path(DEFAULT)
    qtbot.waitUntil(lambda: _settled(w) and bool(w.findings.findings), timeout=60000)
    doc = w.document
    server = doc.bed.servers[0].id
    item = w.canvas.devices[server]
    doc.apply(move(doc.bed, {server: (item.pos().x() + 20, item.pos().y())}))
    qtbot.waitUntil(lambda: _settled(w), timeout=60000)
    assert sorted_on and not any(sorted_on), "the markers were sorted on the GUI thread"
    open_finding = next(f for f in doc.validation.findings if not f.accepted)
    marked = next(s for s in open_finding.subjects if w.tree.marker(s))
    assert w.tree.marker(marked) in ("error", "warning", "info")
