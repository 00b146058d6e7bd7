"""After an edit the three workers that read the bed (live validation, the methodology, the path
view) take turns instead of running side by side (issue 32: no GUI-thread stall over 100 ms after
an edit).  They run pure Python under one interpreter lock, so side by side they finish no sooner,
and the GUI thread had to win the lock back from all three at once: on the 5,000-device bed its
repaints waited 60-140 ms (`python -m bench.big_bed_gui`, edit_stall_s).  Remote work is no bed
reader and never waits behind one.  The path survey also holds the GUI's collector off while it
makes its containers, as validation and the methodology do: the collector walked 155,000 of them
on the GUI thread, 30-75 ms at a time."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from PySide6.QtTest import QTest

import resources
import widgets.methodology_view as methodology_view
import widgets.path_view as path_view
from app.background import BackgroundJob, Turns
from topology import gc_pause
from topology.operations import move

DEFAULT = resources.example_path(resources.DEFAULT_EXAMPLE)
HELD_S = 0.15           # each reader's work is held this long: side by side they would overlap


def _settled(w) -> bool:
    doc = w.document
    return doc.validation.revision_shown == doc.revision and w.methodology.revision_shown == doc.revision \
        and not w.paths._job.busy


def test_after_an_edit_validation_the_methodology_and_the_paths_never_run_side_by_side(
        qtbot, laptop_window, monkeypatch):
    w = laptop_window
    assert w.open_path(DEFAULT)
    for i in range(w.tabs.count()):          # every tab open once: every view keeps itself current
        w.tabs.setCurrentIndex(i)
        QTest.qWait(10)
    w.tabs.setCurrentWidget(w.canvas)
    qtbot.waitUntil(lambda: _settled(w), timeout=60000)

    spans: list[tuple[str, float, float]] = []

    def timed(name, work):
        def run(*args, **kwargs):
            start = time.perf_counter()
            time.sleep(HELD_S)
            try:
                return work(*args, **kwargs)
            finally:
                spans.append((name + "@" + threading.current_thread().name, start, time.perf_counter()))
        return run

    import topology.validation as validation
    monkeypatch.setattr(validation, "validate", timed("validation", validation.validate))
    monkeypatch.setattr(methodology_view, "_generate", timed("methodology", methodology_view._generate))
    monkeypatch.setattr(path_view, "_survey", timed("paths", path_view._survey))
    server = w.document.bed.servers[0].id
    item = w.canvas.devices[server]
    w.document.apply(move(w.document.bed, {server: (item.pos().x() + 20, item.pos().y())}))
    qtbot.waitUntil(lambda: {name.split("@")[0] for name, _, _ in spans} >= {"validation", "methodology", "paths"}
                    and _settled(w), timeout=60000)

    # (the methodology validates the bed itself, on its own worker: that is no second worker)
    overlaps = [(a[0], b[0]) for a in spans for b in spans
                if a[0].split("@")[1] != b[0].split("@")[1] and a[1] < b[1] < a[2]]
    assert not overlaps, f"ran side by side: {overlaps} ({spans})"


def test_readers_waiting_for_their_turn_go_lowest_rank_first_and_remote_work_waits_for_none(qtbot):
    turns = Turns()
    order: list[str] = []
    holding = threading.Event()
    go_on = threading.Event()

    def first():
        with turns.turn(5):
            holding.set()
            go_on.wait(10)

    def reader(name: str, rank: int):
        with turns.turn(rank):
            order.append(name)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    assert holding.wait(10)
    for name, rank in (("paths", 2), ("methodology", 1), ("validation", 0)):
        thread = threading.Thread(target=reader, args=(name, rank))
        thread.start()
        threads.append(thread)
    time.sleep(0.1)             # all three are waiting for the first reader's turn to end
    assert order == []
    go_on.set()
    for thread in threads:
        thread.join(10)
    assert order == ["validation", "methodology", "paths"]

    # a job with no turn (the run, a connection test) starts while a bed reader holds its turn
    ran = threading.Event()
    with _turn_held() as _release:
        remote = BackgroundJob(name="run-engine")
        assert remote.start(1, ran.set)
        assert ran.wait(5), "remote work waited behind a bed reader"


@contextmanager
def _turn_held():
    """A bed reader of the application holds its turn until the block lets it go (or ends)."""
    from app import background
    held, release = threading.Event(), threading.Event()

    def hold_the_turn():
        with background.BED_READERS.turn(0):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_turn)
    holder.start()
    try:
        assert held.wait(10)
        yield release
    finally:
        release.set()
        holder.join(10)


def test_the_path_survey_holds_the_gui_collector_off_while_it_makes_its_containers(monkeypatch):
    import topology.path_explain as path_explain
    from topology.fileformat import load

    seen: list[bool] = []
    uses = path_explain._uses

    def looking(ctx):
        seen.append(gc_pause.held())
        return uses(ctx)
    monkeypatch.setattr(path_explain, "_uses", looking)
    assert not gc_pause.held()
    path_explain.survey(load(DEFAULT))
    assert seen == [True]
    assert not gc_pause.held()


def test_a_reader_asked_again_while_it_waits_for_its_turn_does_not_run_for_the_bed_before(
        qtbot, laptop_window, monkeypatch):
    """An edit while the methodology waits behind validation: the waiting run would read the bed as
    edited, under the revision before, and be thrown away; then the next ran.  It is skipped instead:
    one generation per settled bed (on the 5,000-device bed a generation is 3 s of the interpreter)."""
    w = laptop_window
    assert w.open_path(DEFAULT)
    w.tabs.setCurrentWidget(w.methodology)
    qtbot.waitUntil(lambda: _settled(w), timeout=60000)
    release = threading.Event()
    generated: list[int] = []
    import topology.validation as validation
    validate, generate = validation.validate, methodology_view._generate

    def held_validate(*args, **kwargs):
        release.wait(20)        # validation keeps its turn until the second edit has asked again
        return validate(*args, **kwargs)

    def counted_generate(*args, **kwargs):
        generated.append(w.document.revision)
        return generate(*args, **kwargs)
    monkeypatch.setattr(validation, "validate", held_validate)
    monkeypatch.setattr(methodology_view, "_generate", counted_generate)
    job = w.methodology._job
    server = w.document.bed.servers[0].id
    item = w.canvas.devices[server]
    w.document.apply(move(w.document.bed, {server: (item.pos().x() + 20, item.pos().y())}))
    qtbot.waitUntil(lambda: job.busy, timeout=20000)            # launched, waiting behind validation
    w.document.apply(move(w.document.bed, {server: (item.pos().x() + 40, item.pos().y())}))
    qtbot.waitUntil(lambda: job._again, timeout=20000)          # the second edit asked again
    release.set()
    qtbot.waitUntil(lambda: _settled(w), timeout=60000)
    assert generated == [w.document.revision]


def test_a_reader_that_never_ends_holds_the_others_back_only_for_a_while():
    """A rule that loops would have held the methodology and the path view for good behind it."""
    turns = Turns(give_up_s=0.2)
    holding, release, ran = threading.Event(), threading.Event(), threading.Event()

    def stuck():
        with turns.turn(0):
            holding.set()
            release.wait(10)

    def reader():
        with turns.turn(1):
            ran.set()
    threading.Thread(target=stuck, daemon=True).start()
    assert holding.wait(10)
    threading.Thread(target=reader, daemon=True).start()
    assert not ran.wait(0.1)        # waits its turn first ...
    assert ran.wait(5)              # ... then runs beside the one that does not end
    release.set()
    ran.clear()
    threading.Thread(target=reader, daemon=True).start()
    assert ran.wait(5)              # and the turns go on as before


def test_a_reader_is_not_passed_over_for_good_by_readers_of_a_lower_rank_that_keep_coming():
    """While the user keeps editing, validation and the methodology are asked for again after each of
    their runs: by rank alone each went before the path view, which never had its turn (its view
    never caught up).  A reader waits for those that came during the same turn, no more."""
    turns = Turns()
    order: list[str] = []
    threads: list[threading.Thread] = []

    def reader(name: str, rank: int, release: threading.Event) -> threading.Event:
        def run():
            with turns.turn(rank):
                order.append(name)
                release.wait(10)
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        return release

    def until(check) -> None:
        deadline = time.monotonic() + 10
        while not check():
            assert time.monotonic() < deadline
            time.sleep(0.002)

    holder = reader("validation-0", 0, threading.Event())
    until(lambda: order == ["validation-0"])
    paths_done = threading.Event()
    reader("paths", 2, paths_done)
    paths_done.set()            # the path view's work takes no time once it has its turn
    until(lambda: len(turns._queue) == 1)
    try:
        for i in range(1, 5):   # the next lower-rank reader comes before each turn ends
            waiting = len(turns._queue)
            name = f"{('validation', 'methodology')[i % 2]}-{i}"
            following = reader(name, i % 2, threading.Event())
            until(lambda n=waiting + 1: len(turns._queue) == n)
            holder.set()
            until(lambda name=name: order[-1] == name)
            holder = following
        assert "paths" in order[:3], order
    finally:
        holder.set()
        for thread in threads:
            thread.join(10)


def test_a_reader_still_waiting_for_its_turn_when_the_window_closes_does_no_work(qtbot):
    """A closed window waits for a reader's run (shutdown): one that was still waiting for its turn ran
    its whole work first (the methodology of the 5,000-device bed, seconds), for nobody."""
    ran: list[int] = []
    with _turn_held() as release:
        job = BackgroundJob(name="methodology-preview", prepare=lambda: (1, lambda: ran.append(1)), turn=1)
        job.run_now()
        time.sleep(0.05)
        threading.Timer(0.1, release.set).start()
        job.shutdown(10000)
        assert ran == [], "a reader queued behind another did its work after the window closed"


def test_a_procedure_an_edit_made_out_of_date_gives_up_its_turn_to_the_next_edits_findings(
        qtbot, laptop_window, monkeypatch):
    """The readers take turns, so a methodology run (seconds on the 5,000-device bed) that an edit had made
    out of date held the next edit's findings back until it ended.  It gives up between its pieces."""
    from topology.abandon import check
    w = laptop_window
    assert w.open_path(DEFAULT)
    w.tabs.setCurrentWidget(w.methodology)
    qtbot.waitUntil(lambda: _settled(w), timeout=60000)
    started, finished = threading.Event(), threading.Event()
    generate = methodology_view._generate

    def slow_once(*args, **kwargs):
        if not started.is_set():
            started.set()
            for _ in range(200):        # 10 s of pieces, each checking whether it is still wanted
                check()
                time.sleep(0.05)
            finished.set()
        return generate(*args, **kwargs)
    monkeypatch.setattr(methodology_view, "_generate", slow_once)
    server = w.document.bed.servers[0].id
    item = w.canvas.devices[server]
    w.document.apply(move(w.document.bed, {server: (item.pos().x() + 20, item.pos().y())}))
    qtbot.waitUntil(started.is_set, timeout=20000)          # the procedure of that edit holds its turn
    w.document.apply(move(w.document.bed, {server: (item.pos().x() + 40, item.pos().y())}))
    qtbot.waitUntil(lambda: w.document.validation.revision_shown == w.document.revision, timeout=5000)
    assert not finished.is_set()
    qtbot.waitUntil(lambda: _settled(w), timeout=60000)
