"""The GUI thread owns every Qt object's life (issue 24).

Python's cyclic collector runs on whichever thread trips its threshold; a Qt object in a cycle
was then destroyed on a worker, and PySide6 deadlocked (worker in ~QObject holding the
interpreter lock, GUI thread holding Qt's lock).  Now automatic collection is off in the GUI
process and the GUI thread collects from a timer (app/gc_owner.py); menus and dialogs end when
they close; live samples reach the dashboard as run events, so no worker holds a widget.
"""
from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from app.gc_owner import CollectionWatch, GuiCollector
from topology import gc_pause

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"


def _delete_later_now() -> None:
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()


# ------------------------------------------------------------------ the collector's owner

def test_the_gui_process_has_one_owner_and_automatic_collection_stays_off():
    assert GuiCollector.installed() is not None and gc_pause.owned()
    assert not gc.isenabled()
    with gc_pause.collector_paused():        # a pause on a worker never turns it back on
        pass
    assert not gc.isenabled()


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _no_bulk_job_left_running():
    """An earlier test's worker may still hold the collector's pause (a bed just opened has its
    plain data made on a worker, app/document.py SourceLater): the counts start once it is done."""
    deadline = time.monotonic() + 30
    while gc_pause.held() and time.monotonic() < deadline:
        time.sleep(0.01)
    yield


def _collected_generation(collector: GuiCollector) -> int:
    """Make generation 2 due by count (and generation 0 by allocation), let COLLECTOR pick."""
    for _ in range(collector.thresholds[2] + 1):
        gc.collect(1)
    young = [[] for _ in range(collector.thresholds[0] + 100)]
    before = list(collector.collections)
    collector.collect_due()
    del young
    return next(g for g in range(3) if collector.collections[g] > before[g])


def test_a_full_collection_waits_until_generation_two_grew_by_a_quarter():
    """A full walk of the heap (150–600 ms on the largest example) runs as CPython's own automatic
    mode runs it: when what reached generation 2 since the last one is a quarter of what it kept,
    not every time the count says so."""
    collector = GuiCollector()
    assert _collected_generation(collector) == 2          # nothing kept yet: the first one runs
    assert _collected_generation(collector) != 2          # a few young survivors: not worth a walk
    kept = len(gc.get_objects(2))
    survivors = [_Cycle() for _ in range(kept // 3)]     # long-lived objects, a third of those kept
    gc.collect(1)
    gc.collect(1)                                          # ... now in generation 2
    assert _collected_generation(collector) == 2
    assert collector.full_deferred >= 1
    del survivors


def test_due_collections_wait_while_a_worker_makes_a_bulk_job_and_run_when_it_ends():
    """Validating the 5,000-device bed makes its containers on a worker for seconds; the GUI
    thread walking them at every tick stalled the window (0.1–0.25 s each)."""
    collector = GuiCollector()
    inside, done = threading.Event(), threading.Event()

    def bulk_job() -> None:
        with gc_pause.collector_paused():
            inside.set()
            done.wait(10)
    worker = threading.Thread(target=bulk_job)
    worker.start()
    try:
        assert inside.wait(10)
        young = [[] for _ in range(collector.thresholds[0] + 100)]
        before = sum(collector.collections)
        collector.collect_due()
        assert sum(collector.collections) == before and collector.waited_for_pause == 1
    finally:
        done.set()
        worker.join(10)
    collector.collect_due()
    assert sum(collector.collections) == before + 1
    del young


def test_a_bulk_result_is_frozen_when_it_arrives_not_walked():
    """The 5,000-device bed's procedure and findings (a million objects) arrive from the workers
    after each edit; walked young, then middle, then full, they stalled the window a second."""
    from app import gc_owner
    collector = GuiCollector()
    result = [_Cycle() for _ in range(gc_owner.BULK_YOUNG + 1000)]
    gone = weakref.ref(result[0])
    try:
        collector.settle(large=False)        # a bed is open (in the application, always)
        frozen = gc.get_freeze_count()
        with gc_pause.collector_paused():        # a worker's bulk job (validation, the methodology)
            result += [_Cycle() for _ in range(gc_owner.BULK_YOUNG + 1000)]
        before = list(collector.collections)
        collector.collect_due()
        assert collector.collections == before and collector.bulk_frozen == 1
        assert gc.get_freeze_count() > frozen + gc_owner.BULK_YOUNG
    finally:
        gc.unfreeze()
    del result
    gc.collect()
    assert gone() is None


def test_a_loaded_bed_is_frozen_and_opening_the_next_one_frees_it():
    """What lives as long as the document is frozen after a load, so the periodic collections do
    not walk it; the next open unfreezes and collects it, so a closed bed's cycles are freed."""
    collector = GuiCollector()
    old_bed = _Cycle()
    gone = weakref.ref(old_bed)
    try:
        collector.settle(large=False)
        frozen = gc.get_freeze_count()
        assert frozen > 0
        late_view = _Cycle()                 # built after the load, in an idle turn
        assert _collected_generation(collector) == 2
        assert gc.get_freeze_count() > frozen, "the first full collection after a load freezes what it kept"
        del old_bed, late_view
        gc.collect()
        assert gone() is not None, "frozen: not walked, so not collected"
        collector.settle(large=False)
        assert gone() is None
    finally:
        gc.unfreeze()


def test_a_large_bed_opened_first_is_frozen_without_a_walk_and_the_next_open_walks_once():
    """Loading the 5,000-device bed leaves no cycle to free; walking its 394,000 objects held the GUI
    thread 0.1–0.4 s just as its validation started.  The next open still frees the first bed's cycles."""
    collector = GuiCollector()
    first_bed = _Cycle()
    gone = weakref.ref(first_bed)
    walks: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            walks.append(info["generation"])
    gc.callbacks.append(count)
    try:
        collector.settle(large=True)
        assert walks == [] and gc.get_freeze_count() > 0
        del first_bed
        collector.settle(large=True)
        assert walks == [2] and gone() is None
    finally:
        gc.callbacks.remove(count)
        gc.unfreeze()


def test_without_an_owner_a_pause_is_counted_across_threads_and_restores_collection():
    """The command line keeps automatic collection outside its pauses; two threads that pause at
    once nest, and only the last one out turns it back on."""
    code = ("import gc, threading\n"
            "from topology.gc_pause import collector_paused\n"
            "inside, out = threading.Event(), threading.Event()\n"
            "def worker():\n"
            "    with collector_paused():\n"
            "        inside.set(); out.wait(5)\n"
            "t = threading.Thread(target=worker); t.start(); inside.wait(5)\n"
            "with collector_paused():\n"
            "    pass\n"
            "a = gc.isenabled()\n"
            "out.set(); t.join()\n"
            "print(a, gc.isenabled())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_a_dropped_pyqtgraph_item_is_finalised_on_the_gui_thread_while_workers_allocate(qtbot):
    import pyqtgraph as pg
    gui = threading.get_ident()
    where: list[int] = []
    line = pg.InfiniteLine(pos=1.0, angle=0, label="limit")
    line.cycle = line                       # only the collector can end it
    weakref.finalize(line, lambda: where.append(threading.get_ident()))
    del line

    def allocate():                          # what a validation or a procedure does on its worker
        junk = []
        for i in range(200_000):
            junk.append({"i": i, "self": junk})
    workers = [threading.Thread(target=allocate, name=f"busy-{k}") for k in range(2)]
    with CollectionWatch() as watch:
        for t in workers:
            t.start()
        for t in workers:
            t.join(60)
        qtbot.waitUntil(lambda: bool(where), timeout=5000)     # the GUI thread's timer collects it
    assert where == [gui]
    assert watch.off_thread == []


# ------------------------------------------------------------------ the application at work

@pytest.mark.timeout(240)
def test_no_collection_off_the_gui_thread_while_a_run_streams_and_the_bed_is_edited(qtbot, tmp_path):
    """The main window open, a local fio run streaming samples to the dashboard, the bed edited
    while the methodology preview and live validation regenerate: every collection is the GUI
    thread's, and the samples reach the plots as run events."""
    from app.metrics import sample as M
    from tests.run_beds import write_fio_bed
    from topology import operations
    from widgets.main_window import MainWindow
    bed = write_fio_bed(tmp_path / "fio.yaml", "c1", tmp_path / "c1.dat", access={"transport": "local"},
                        minutes=0.1)
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    window.document.open(bed)
    run = window.run
    try:
        with CollectionWatch() as watch:
            run.new_button.click()
            load = next(s for s in run.steps if s.template.endswith("run.yaml#load"))
            run._run([load])
            window.tabs.setCurrentWidget(window.methodology)
            n = 0
            while run.controller.busy:
                n += 1
                doc = window.document
                doc.apply(operations.move(doc.bed, {"c1": (50.0 + n % 5 * 30, 80.0)}))
                doc.validation.run_now()
                window.methodology.regenerate()
                qtbot.wait(150)
                assert n < 600, "the run did not end"
            window.methodology.wait(30000)
            window.document.validation.wait(30000)
            qtbot.wait(300)
        assert n > 5
        assert watch.off_thread == [], f"collections on workers: {watch.off_thread}"
        assert watch.on_thread > 0
        curve = run.dashboard._curves.get(("c1", M.IOPS))
        assert curve is not None and len(curve.getData()[1]) >= 3
    finally:
        run.shutdown()
        window.document.undo_stack.setClean()       # the moves were the test's, not the person's


# ------------------------------------------------------------------ menus and dialogs end

def _close_popup_soon() -> None:
    def close() -> None:
        popup = QApplication.activePopupWidget()
        if popup is not None:
            popup.close()
        else:
            QTimer.singleShot(10, close)
    QTimer.singleShot(10, close)


def test_twenty_right_clicks_leave_no_menu_behind(qtbot):
    from PySide6.QtGui import QContextMenuEvent

    from app.document import Document
    from widgets.main_window import MainWindow
    doc = Document()
    doc.open(EXAMPLE)
    window = MainWindow(doc)
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    while window.run._warm_steps:     # the dashboard (pyqtgraph's own menus) is built in idle turns
        window.run._warm_up()         # after the window shows: on a slow machine, mid-test
    _delete_later_now()
    before = len(window.findChildren(QMenu))
    view = window.canvas.view if hasattr(window.canvas, "view") else window.canvas
    viewport = view.viewport()
    for i in range(20):
        _close_popup_soon()
        pos = QPoint(200 + i * 5, 200)
        QApplication.sendEvent(viewport, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos,
                                                           viewport.mapToGlobal(pos)))
    # the validation panel's menu on a finding, and the component tree's, too
    window.document.validation.wait(30000)
    qtbot.waitUntil(lambda: window.findings.model.rowCount() > 0, timeout=10000)
    tree = window.findings.tree
    model = window.findings.model
    index = next(model.index(r, 0) for r in range(model.rowCount())
                 if model.item_index(model.index(r, 0)) is not None)
    for _ in range(5):
        _close_popup_soon()
        window.findings._context_menu(tree.visualRect(index).center())
    _delete_later_now()
    assert len(window.findChildren(QMenu)) == before


def test_the_dashboard_reuses_its_threshold_lines_and_ends_the_ones_it_drops(qtbot):
    from widgets.dashboard import MetricsDashboard, Threshold
    d = MetricsDashboard()
    qtbot.addWidget(d)
    first = [Threshold("read", "<", 20.0, "read latency < 20 ms")]
    d.set_thresholds(first)
    line = d._lines[first[0]]
    d.set_thresholds(list(first))                   # a run of the same bed: the same line
    assert d._lines[first[0]] is line
    ended: list[bool] = []
    line.destroyed.connect(lambda *_: ended.append(True))
    d.set_thresholds([Threshold("read", "<", 10.0, "read latency < 10 ms")])
    _delete_later_now()
    assert ended == [True]
    d.shutdown()


# ------------------------------------------------------------------ the stress that deadlocked

STRESS_S = 25
SILENCE_S = 20          # no tick for this long once ticking: the process is stuck
START_S = 120           # to the first tick (imports, the window, the bed) on a busy machine


@pytest.mark.slow
@pytest.mark.timeout(STRESS_S + START_S + 120)
def test_the_stress_that_deadlocked_runs_clean_and_a_hang_would_fail_not_stall():
    """Windows opened and dropped, pyqtgraph items dropped, the bed edited while the preview and
    live validation regenerate, in a process of its own watched from here: on the code before
    issue 24 it froze for good (or finalised Qt objects on the workers); now every collection and
    every finaliser runs on the GUI thread."""
    env = os.environ | {"QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.Popen([sys.executable, "-m", "tests.gui_stress", str(STRESS_S)], cwd=ROOT, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last = {"at": time.monotonic() + START_S - SILENCE_S, "lines": []}

    def read() -> None:
        for text in child.stdout:
            last["at"] = time.monotonic()
            last["lines"].append(text.strip())
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stuck = False
    while child.poll() is None:
        time.sleep(0.5)
        if time.monotonic() - last["at"] > SILENCE_S:
            stuck = True
            child.send_signal(signal.SIGABRT)       # faulthandler in the child dumps every thread
            break
    try:
        _out, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        _out, err = child.communicate()
    reader.join(5)
    assert not stuck, (f"the GUI process made no progress for {SILENCE_S} s after "
                       f"{last['lines'][-1:] or 'nothing'}; its threads:\n{err[-6000:]}")
    assert child.returncode == 0, err[-4000:]
    summary = json.loads(last["lines"][-1])
    # enough rounds of open, drop and regenerate to have met the deadlock; how many fit in the
    # time is the machine's load, not the application's behaviour (the watchdog judges stalls)
    assert summary["ticks"] >= STRESS_S // 2
    assert summary["off_thread_collections"] == 0, summary
    assert set(summary["finalised_on"]) == {"gui"}, summary


def test_a_large_beds_frozen_set_is_counted_after_its_first_frame_not_before_it(monkeypatch):
    """Counting the frozen set follows its list: 25-70 ms of the GUI thread on the 5,000-device bed,
    spent between its read and its first frame (issue 32, File › Open to the first frame).  It is
    counted once the first frame lets go of its hold, and a result arriving after needs no count."""
    from app import gc_owner
    from app.background import FirstFrame
    from app.document import Document, new_bed
    from topology.model import VM
    counts: list[int] = []
    real = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: counts.append(1) or real())
    monkeypatch.setattr(gc_owner, "BULK_YOUNG", 20_000)
    collector = GuiCollector()
    monkeypatch.setattr(GuiCollector, "_installed", collector)
    document = Document()
    first_frame = FirstFrame.of(document)
    try:
        first_frame.hold("drawing")         # as a big bed's canvas holds it until its first frame is painted
        bed = new_bed()
        bed.vms = [VM(id=f"vm{i}", memory_gb=1) for i in range(gc_owner.LARGE_BED)]
        document.replace(bed, None)
        assert collector.bulk_frozen == 0 and counts == [], "counted before the first frame"
        first_frame.release("drawing")
        assert counts == [1], "counted once the first frame is painted"
        with gc_pause.collector_paused():     # as validation and the methodology make their results
            result = [_Cycle() for _ in range(gc_owner.BULK_YOUNG + 1000)]
        collector.collect_due()
        assert collector.bulk_frozen == 1 and counts == [1]
        del result
    finally:
        gc.unfreeze()
        document.deleteLater()
