"""File › Open of a big bed: the diagram first (issue 32, "first frame < 2 s").  While a big bed's
canvas is built in slices, its devices are painted from the model, and the work no view on screen
waits for (the methodology and path workers, the component tree) is held
(app/background.py DrawingFirst); every way out of the build lets it go.  These count work and
check order, not time: bench.big_bed_gui times it."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from app.background import DrawingFirst
from app.document import Document
from app.selection import Selection
from tests.frame_watch import FrameWatch
from topology.operations import move
from topology.synthetic import generate
from widgets.canvas.building import SlicedBuild
from widgets.canvas.view import Canvas
from widgets.component_tree import ComponentTree
from widgets.methodology_view import MethodologyView
from widgets.path_view import PathView


@pytest.fixture(autouse=True)
def _slices(monkeypatch):
    """A bed of a few dozen devices is built in slices of a step or two each (quick, and every step
    of the build is a point where the window answers)."""
    from widgets.canvas import building
    monkeypatch.setattr(building, "SLICED_FROM", 30)
    monkeypatch.setattr(building, "FREE_SLICE_S", 0.0005)
    monkeypatch.setattr(building, "SLICE_S", 0.0005)
    monkeypatch.setattr(building, "BACKOFF_MS", 0)


def _big_bed(hosts: int = 24):
    bed = generate(hosts=hosts, vms=0, arrays=1, disks=8, rack_size=8)
    assert SlicedBuild.builds_in_slices(bed), "the bed must be big enough to be built in slices"
    return bed


def _window(qtbot):
    doc, selection = Document(), Selection()
    canvas = Canvas(doc, selection)
    qtbot.addWidget(canvas)
    canvas.resize(1000, 700)
    canvas.show()
    methodology = MethodologyView(doc, selection)      # after the canvas, as in the main window
    paths = PathView(doc, selection)
    tree = ComponentTree(doc, selection)
    for view in (methodology, paths, tree):
        qtbot.addWidget(view)
    methodology.wait(30000)
    paths.wait(30000)
    qtbot.waitUntil(lambda: not methodology._job.busy and not paths._job.busy, timeout=30000)
    return doc, canvas, methodology, paths, tree


def _components(bed) -> int:
    return sum(len(getattr(bed, attr)) for attr in (
        "servers", "switches", "networks", "arrays", "array_groups", "vms", "clusters", "workloads"))


def _started(job) -> bool:
    return job.busy


def test_the_methodology_and_paths_wait_for_a_big_beds_diagram_and_start_once_it_is_built(qtbot):
    doc, canvas, methodology, paths, tree = _window(qtbot)
    doc.replace(_big_bed(), None)
    assert canvas.building
    hold = DrawingFirst.of(doc)
    assert hold.holding
    # no worker shares the interpreter with the build's slices
    assert not _started(methodology._job) and not _started(paths._job)
    assert tree.component_count() == 0, "the component tree is listed after the diagram"
    starts_seen_building: list[bool] = []
    methodology._job.busy_changed.connect(lambda busy: busy and starts_seen_building.append(canvas.building))
    qtbot.waitUntil(lambda: not canvas.building, timeout=60000)
    assert not hold.holding
    qtbot.waitUntil(lambda: not tree.filling, timeout=60000)
    assert tree.component_count() == _components(doc.bed)
    qtbot.waitUntil(lambda: methodology.revision_shown == doc.revision, timeout=60000)
    assert starts_seen_building == [False], "the methodology ran once, after the build"


def test_a_small_bed_holds_nothing(qtbot):
    doc, canvas, methodology, paths, tree = _window(qtbot)
    doc.replace(generate(hosts=4, vms=0, arrays=1, disks=8), None)
    assert not canvas.building and not DrawingFirst.of(doc).holding
    assert _started(methodology._job)
    assert tree.component_count() > 0


def test_an_edit_during_the_build_is_kept_and_lets_the_workers_go(qtbot):
    doc, canvas, methodology, paths, tree = _window(qtbot)
    doc.replace(_big_bed(), None)
    assert canvas.building and not _started(methodology._job)
    host = doc.bed.servers[0]
    doc.apply(move(doc.bed, {host.id: (12340.0, 5670.0)}))
    assert not canvas.building and not DrawingFirst.of(doc).holding
    item = canvas.devices[host.id]
    assert (item.pos().x(), item.pos().y()) == (12340.0, 5670.0)
    assert (host.x, host.y) == (12340.0, 5670.0)
    assert doc.undo_stack.count() == 1
    qtbot.waitUntil(lambda: methodology.revision_shown == doc.revision, timeout=60000)
    qtbot.waitUntil(lambda: not tree.filling, timeout=60000)
    assert tree.component_count() == _components(doc.bed)


def test_the_component_tree_is_listed_a_slice_at_a_time_and_an_edit_meanwhile_lists_it_whole(qtbot, monkeypatch):
    from PySide6.QtCore import QTimer

    from widgets import tree_filling
    monkeypatch.setattr(tree_filling, "CHUNK", 5)
    monkeypatch.setattr(tree_filling, "LIST_AT_ONCE", 0)
    doc, canvas, methodology, paths, tree = _window(qtbot)
    doc.replace(_big_bed(), None)
    host = doc.bed.servers[-1]
    seen: list[tuple[bool, int]] = []

    def edit_when_partly_listed() -> None:      # between two of the listing's turns
        if tree.filling and tree.component_count() > 0:
            seen.append((tree.filling, tree.component_count()))
            doc.apply(move(doc.bed, {host.id: (100.0, 200.0)}))
        elif not seen:
            QTimer.singleShot(0, edit_when_partly_listed)
    canvas.built.connect(edit_when_partly_listed)
    qtbot.waitUntil(lambda: bool(seen), timeout=60000)
    assert seen[0][1] < _components(doc.bed), "listed between the event loop's turns"
    qtbot.waitUntil(lambda: not tree.filling and not tree._refresh.isActive(), timeout=60000)
    QApplication.processEvents()
    assert tree.component_count() == _components(doc.bed)
    assert len(tree.items_for(host.id)) == 1, "each component listed once"


def test_another_bed_during_the_build_keeps_the_workers_held_for_its_own_build(qtbot):
    doc, canvas, methodology, paths, tree = _window(qtbot)
    doc.replace(_big_bed(), None)
    second = _big_bed(26)
    doc.replace(second, None)
    assert canvas.building and DrawingFirst.of(doc).holding
    assert not _started(methodology._job) and not _started(paths._job)
    qtbot.waitUntil(lambda: not canvas.building, timeout=60000)
    qtbot.waitUntil(lambda: methodology.revision_shown == doc.revision, timeout=60000)
    assert len(canvas.devices) == len(second.servers) + len(second.switches) + len(second.arrays)


def test_the_canvas_gone_during_the_build_holds_nothing(qtbot):
    doc, selection = Document(), Selection()
    canvas = Canvas(doc, selection)
    methodology = MethodologyView(doc, selection)
    qtbot.addWidget(methodology)
    methodology.wait(30000)
    qtbot.waitUntil(lambda: not methodology._job.busy, timeout=30000)
    doc.replace(_big_bed(), None)
    assert DrawingFirst.of(doc).holding
    canvas.deleteLater()
    qtbot.waitUntil(lambda: not DrawingFirst.of(doc).holding, timeout=5000)
    qtbot.waitUntil(lambda: methodology.revision_shown == doc.revision, timeout=60000)


def test_printing_does_not_wait_for_the_diagram(qtbot):
    doc, canvas, methodology, paths, tree = _window(qtbot)
    doc.replace(_big_bed(), None)
    assert canvas.building
    assert methodology.wait(60000)      # what printing and the tests call: it runs now
    qtbot.waitUntil(lambda: methodology.revision_shown == doc.revision, timeout=60000)


def test_the_first_frame_paints_every_device_from_the_model_before_its_items_exist(qtbot):
    doc, canvas, methodology, paths, tree = _window(qtbot)
    bed = _big_bed()
    made_at_preview: list[int] = []     # counted as the preview starts: a poll may come after the build's next slices
    preview_ready = canvas._preview_ready
    canvas._preview_ready = lambda: (made_at_preview.append(len(canvas.devices)), preview_ready())
    doc.replace(bed, None)
    qtbot.waitUntil(lambda: canvas.previewing or bool(made_at_preview), timeout=30000)
    drawn = [s for s in (*bed.servers, *bed.switches, *bed.arrays)]
    assert made_at_preview[0] < len(drawn), "painted before every item is made"
    frame = canvas.viewport().grab().toImage()
    white = QColor("#ffffff").rgb()
    inside = unpainted = 0
    for dev in drawn:
        box = canvas._position_box(dev.id, dev)
        at = canvas.mapFromScene(box.x + box.w / 2, box.y + box.h / 2)
        if 0 <= at.x() < frame.width() and 0 <= at.y() < frame.height():
            inside += 1
            unpainted += frame.pixel(at) == white
    assert inside > len(drawn) * 0.9, "the frame is fitted to the bed"
    assert unpainted == 0, f"{unpainted} of {inside} devices in view not painted"
    qtbot.waitUntil(lambda: not canvas.building, timeout=60000)
    QApplication.processEvents()
    assert not canvas.previewing


def test_the_slice_that_works_out_the_layout_ends_there_and_the_first_frame_comes_before_any_item(
        qtbot, monkeypatch):
    """A slice ran on to its deadline (60 ms) making items after the layout was known, before the
    frame that paints the devices from the model."""
    from widgets.canvas import building
    doc, canvas, methodology, paths, tree = _window(qtbot)
    monkeypatch.setattr(building, "FREE_SLICE_S", 30.0)
    made: list[int] = []        # device items made when the first frame that shows the bed is painted

    paints = FrameWatch(canvas, lambda: made.append(len(canvas.devices)))
    doc.replace(_big_bed(), None)
    qtbot.waitUntil(lambda: bool(made), timeout=30000)
    canvas.viewport().removeEventFilter(paints)
    assert made == [0]


def test_the_first_frames_turn_fits_the_view_and_paints_it_with_no_layout_work_before_them(qtbot, monkeypatch):
    """The slice that finished the layout went on to fit the view, and the first frame's paint
    followed in the same turn: a stall of the three together (issue 33, no stall over 100 ms while
    the first findings are worked out)."""
    from widgets.canvas import building
    doc, canvas, methodology, paths, tree = _window(qtbot)
    monkeypatch.setattr(building, "FREE_SLICE_S", 30.0)     # a slice ends only where the build says so
    slices, at = [0], {}
    build_slice, free_spot, fit = canvas._build_slice, canvas._set_free_spot, canvas._fit_layout
    monkeypatch.setattr(canvas, "_build_slice", lambda: (slices.__setitem__(0, slices[0] + 1), build_slice()))
    monkeypatch.setattr(canvas, "_set_free_spot", lambda: (at.setdefault("layout known", slices[0]), free_spot()))
    monkeypatch.setattr(canvas, "_fit_layout", lambda: (at.setdefault("fitted", slices[0]), fit()))
    doc.replace(_big_bed(), None)
    qtbot.waitUntil(lambda: "fitted" in at, timeout=30000)
    assert at["fitted"] == at["layout known"] + 1, at


def test_live_validation_starts_after_a_big_beds_first_frame_not_after_its_build(qtbot, tmp_path):
    """Its worker took the interpreter from the layout and the first frame (0.3-0.5 s of a
    5,000-device bed's File › Open); the findings are on screen, so they do not wait for the build."""
    from topology.fileformat import save
    doc, canvas, methodology, paths, tree = _window(qtbot)
    path = tmp_path / "big.yaml"
    save(_big_bed(), path)
    seen: list[str] = []
    paints = FrameWatch(canvas, lambda: seen.append("frame"))
    doc.validation._job.busy_changed.connect(
        lambda busy: busy and seen.append("validation while building" if canvas.building else "validation"))
    assert doc.open(path)
    assert canvas.building and seen == [], "nothing started while the bed was read and its layout begun"
    qtbot.waitUntil(lambda: len(seen) >= 2, timeout=30000)
    assert seen[:2] == ["frame", "validation while building"]
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=60000)
    canvas.viewport().removeEventFilter(paints)


def test_live_validation_waits_for_a_big_beds_first_frame_when_the_bed_is_shown_without_a_file_open(qtbot):
    """An example, a recovered bed, a file opened to repair: the document's bed replaced directly.
    Live validation listens to the reset before the canvas, which holds it from its own reset
    handler on: its worker started first and took the interpreter from the layout and the first
    frame (a GUI stall of 0.15-0.25 s on the 5,000-device bed, python -m bench.canvas --live-only)."""
    doc, canvas, methodology, paths, tree = _window(qtbot)
    seen: list[str] = []
    paints = FrameWatch(canvas, lambda: seen.append("frame"))
    doc.validation._job.busy_changed.connect(lambda busy: busy and seen.append("validation"))
    methodology._job.busy_changed.connect(lambda busy: busy and seen.append("methodology"))
    doc.replace(_big_bed(), None, dirty=True)
    assert canvas.building and seen == [], "nothing started before the canvas's first frame"
    qtbot.waitUntil(lambda: len(seen) >= 2, timeout=30000)
    assert seen[:2] == ["frame", "validation"]
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=60000)
    canvas.viewport().removeEventFilter(paints)


def test_the_files_own_text_is_worked_out_off_the_gui_thread_and_an_edit_right_after_opening_keeps_it(
        qtbot, tmp_path, monkeypatch):
    import threading

    from topology.fileformat import save
    from topology.roundtrip import ProjectSource
    path = tmp_path / "bed.yaml"
    save(generate(hosts=3, vms=0, arrays=1, disks=8), path)
    text = path.read_text(encoding="utf-8").replace("\n", "\n# the lab's own note, kept on save\n", 1)
    path.write_text(text, encoding="utf-8")
    threads: list[str] = []
    of = ProjectSource.of.__func__

    def counted(cls, text, bed):
        threads.append(threading.current_thread().name)
        return of(cls, text, bed)
    monkeypatch.setattr(ProjectSource, "of", classmethod(counted))
    doc = Document()
    doc.open(path)
    assert threads == [], "not on the GUI thread while the bed opens"
    QApplication.processEvents()        # the event loop turns: the worker starts
    host = doc.bed.servers[0]
    doc.apply(move(doc.bed, {host.id: (777.0, 888.0)}))       # at once: the worker may still be at it
    assert threads == ["project-source"], "worked out once, on its worker"
    doc.save()
    saved = path.read_text(encoding="utf-8")
    assert "# the lab's own note, kept on save" in saved
    assert "777" in saved and saved.count("\n") <= text.count("\n") + 2, "only the edit is rewritten"



def test_the_trees_markers_are_set_a_few_rows_a_turn_and_findings_that_come_meanwhile_win(qtbot):
    """After a big bed's listing the markers of its 9,500 rows were set in one go (0.4 s).  Set a
    few hundred a turn, findings that arrive between two turns must leave the rows as a tree given
    them at once shows them (not the older findings' markers on the rows after the turn)."""
    from topology.validation import validate
    bed = generate(hosts=12, vms=12, arrays=1, disks=8, rack_size=8)
    findings = [f for f in validate(bed) if f.subjects]
    assert len({s for f in findings for s in f.subjects}) > 6, "enough subjects for several turns"
    later = findings[: len(findings) // 3]
    trees = []
    for _ in range(2):
        doc = Document()
        doc.replace(bed, None)
        tree = ComponentTree(doc, Selection())
        qtbot.addWidget(tree)
        qtbot.waitUntil(lambda t=tree: t.component_count() == _components(bed), timeout=30000)
        trees.append(tree)
    stepped, at_once = trees
    stepped.show_findings([])
    stepped.show_findings(findings)
    stepped.show_findings(later)
    assert sum(1 for _ in stepped._marking(every=2)) > 2, "a few subjects and rows a turn"
    stepped.show_findings(findings)
    stepped._marks.clear()
    steps = stepped._marking(every=2)
    next(steps)
    stepped.show_findings(later)          # the validator's next list, between two turns
    assert sum(1 for _ in steps) == 0, "the older findings' steps end there"
    at_once.show_findings(later)
    ids = [c.id for attr in ("servers", "vms", "switches", "arrays") for c in getattr(bed, attr)]
    assert [stepped.marker(i) for i in ids] == [at_once.marker(i) for i in ids]
    assert any(at_once.marker(i) for i in ids) and not all(at_once.marker(i) for i in ids)


def test_the_held_jobs_start_one_per_turn_of_the_event_loop_once_the_hold_ends(qtbot):
    from PySide6.QtCore import QTimer

    from app.background import BackgroundJob

    hold = DrawingFirst()
    turn = [0]
    beat = QTimer(interval=0, timeout=lambda: turn.__setitem__(0, turn[0] + 1))
    started: list[tuple[str, int]] = []
    jobs = []
    for name in ("methodology", "paths", "tree"):
        job = BackgroundJob(name=name, prepare=lambda: (1, lambda: None), waits_for=hold)
        job.busy_changed.connect(lambda busy, name=name: started.append((name, turn[0])) if busy else None)
        jobs.append(job)
    hold.hold("drawing")
    for job in jobs:
        job.run_now()
    assert not started, "held while the diagram is drawn"
    beat.start()
    hold.release("drawing")
    qtbot.waitUntil(lambda: len(started) == 3, timeout=5000)
    beat.stop()
    assert [name for name, _ in started] == ["methodology", "paths", "tree"], "in the order they were held"
    turns = [t for _, t in started]
    assert len(set(turns)) == 3, f"each in a turn of its own, not all at the release: {started}"
    for job in jobs:
        job.wait()


def test_the_run_pages_warm_up_waits_until_no_worker_is_at_work(qtbot):
    """pyqtgraph's import (the Run page's live plots, made ahead of need) took 0.35–0.5 s of the GUI
    thread's CPU; made while the bed's findings and procedure were worked out on workers holding
    the interpreter it stalled the window 1.5–2 s after a 5,000-device bed's first frame."""
    import threading

    from app.background import BackgroundJob
    from app.document import Document
    from widgets.run_wizard import RunWizard
    wizard = RunWizard(Document())
    qtbot.addWidget(wizard)
    qtbot.waitUntil(lambda: not BackgroundJob.any_working(), timeout=10_000)
    go = threading.Event()
    job = BackgroundJob(wizard, name="a bed's findings")
    job.start(1, lambda: go.wait(10))
    steps = len(wizard._warm_steps)
    wizard._warm_up()
    assert len(wizard._warm_steps) == steps and BackgroundJob.any_working()     # nothing done meanwhile
    go.set()
    qtbot.waitUntil(lambda: not BackgroundJob.any_working(), timeout=10_000)
    wizard._warm_up()
    assert len(wizard._warm_steps) == steps - 1


def test_a_job_dropped_while_its_worker_hands_on_an_outcome_waits_for_that_to_end(qtbot):
    """A view (a test's document) dropped on the GUI thread while its job's worker was handing its
    outcome on: the relay was deleted in the middle of the worker's emit, and the process crashed
    now and then (seen about 1 run in 10 of this file under load).  The job's end waits for an
    emit under way, and a worker that ends after it touches nothing."""
    import threading
    import time

    import shiboken6
    from PySide6.QtCore import QObject, Qt

    from app.background import BackgroundJob
    owner = QObject()
    job = BackgroundJob(owner, name="dropped")
    emitting, order = threading.Event(), []

    def slow_handing_on(_outcome) -> None:     # runs on the worker, inside its emit
        emitting.set()
        time.sleep(0.3)
        order.append("emit ended")
    job._relay.finished.connect(slow_handing_on, Qt.ConnectionType.DirectConnection)
    job.start(1, lambda: "done")
    assert emitting.wait(10)
    shiboken6.delete(owner)                    # the job and its relay go with their owner
    order.append("job deleted")
    assert order == ["emit ended", "job deleted"]

    late_owner = QObject()
    late = BackgroundJob(late_owner, name="ends after its owner")
    go = threading.Event()
    worker_error: list[BaseException] = []
    late.start(1, lambda: go.wait(10))
    thread = late._thread
    shiboken6.delete(late_owner)              # dropped while its worker still works
    real_excepthook = threading.excepthook
    threading.excepthook = lambda args: worker_error.append(args.exc_value)
    try:
        go.set()
        thread.join(10)
    finally:
        threading.excepthook = real_excepthook
    assert not thread.is_alive() and worker_error == []
