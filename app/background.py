"""Work off the GUI thread, one pattern for every view that needs it (live validation, the
methodology preview, the run).

A BackgroundJob does one kind of work on a worker thread, one piece at a time.  `request()`
asks for it a moment later (debounced: a burst of edits costs one run); `run_now()` at once;
`start()` hands it a piece of work directly and refuses while one runs.  The input is taken
on the GUI thread when the work starts (a snapshot the user cannot change under the worker)
and tagged with a revision.  The outcome comes back through a queued signal on the GUI
thread and is handed on only while its revision is still the current one: a stale result is
dropped, and a request that came in while the worker was busy starts the next run then.

QtCore only: app/ never imports QtWidgets outside the GUI entry point.
"""
from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from PySide6.QtCore import QObject, QTimer, Signal

from topology.abandon import Abandoned, abandoned_when


@dataclass(frozen=True)
class Outcome:
    revision: int
    value: Any = None
    error: str = ""          # the work raised: "TypeName: message"


class _Relay(QObject):
    finished = Signal(object)       # Outcome, emitted on the worker, received on the GUI thread


Work = Callable[[], Any]


class EditedMeanwhile(Exception):
    """The bed changed while a worker read it: that reading is thrown away (the edit has asked for
    the next one)."""


def unless_edited(document: Any, work: Work) -> Any:
    """On a worker: `work()` reads the document's own bed, no copy, and its result is kept only if
    no edit ran meanwhile (`document.edit_seq`, odd while an edit changes the model); otherwise
    EditedMeanwhile, whatever the work returned or raised.  A copy of a 5,000-device bed (pickle)
    holds the interpreter lock for longer than a frame on any thread, and on the GUI thread it
    was a stall of seconds after each edit."""
    before = document.edit_seq
    if before % 2:
        raise EditedMeanwhile
    try:
        # a long pass gives up between its pieces once the bed is edited (topology/abandon.py)
        with abandoned_when(lambda: document.edit_seq != before):
            value = work()
    except Abandoned:
        raise EditedMeanwhile from None
    except Exception:
        if document.edit_seq != before:
            raise EditedMeanwhile from None
        raise
    if document.edit_seq != before:
        raise EditedMeanwhile
    return value


def edited_meanwhile(outcome: Outcome) -> bool:
    """An outcome thrown away because an edit ran while it was worked out."""
    return outcome.error.startswith(EditedMeanwhile.__name__ + ":")


def let_go_off_the_gui_thread(scraps: list[Any]) -> None:
    """Free what `scraps` holds on a worker, a piece at a time (topology.letting_go), when a view
    replaces a big result: the procedure of the 5,000-device bed (88,593 steps) freed on the GUI
    thread as the Methodology page took the next one held it for 0.15-0.2 s.  Plain data only (the
    model, procedures, findings): a Qt object must never be freed on a worker.  The caller hands the
    list over and keeps no other reference to what is in it."""
    if any(thing is not None for thing in scraps):
        from topology.letting_go import let_go
        threading.Thread(target=let_go, args=(scraps,), name="letting-go", daemon=True).start()
    else:
        scraps.clear()


class Turns:
    """The workers that read the bed (live validation, the methodology, the paths) take turns, lowest
    rank first, instead of running side by side.  Plain Python: they run pure Python under one
    interpreter lock, so side by side they finish no sooner, and the GUI thread, asking for the
    lock back every switch interval, competed with all three at once after each edit: the lock went
    to another worker most of the time, and a repaint of the 5,000-device bed waited 60-140 ms.
    With one of them at work it gets the lock back within the interval.

    Rank orders the readers that came while the same turn ran, no further: one that came later waits
    for them all.  By rank alone, while edits kept coming, validation and the methodology, asked
    again after each, went before the path view's turn every time, and its view never caught up."""

    GIVE_UP_S = 120.0       # a reader that never ends (a rule that loops) holds no other view for good

    def __init__(self, give_up_s: float = GIVE_UP_S) -> None:
        self._changed = threading.Condition()
        self._queue: list[tuple[int, int, int]] = []
        self._working: tuple[int, int, int] | None = None
        self._tickets = itertools.count()
        self._granted = 0           # turns given so far: a reader's round is the count it came at
        self._give_up_s = give_up_s

    @contextmanager
    def turn(self, rank: int) -> Iterator[None]:
        deadline = time.monotonic() + self._give_up_s
        with self._changed:
            ticket = (self._granted, rank, next(self._tickets))
            heapq.heappush(self._queue, ticket)
            while (self._working is not None or self._queue[0] != ticket) and time.monotonic() < deadline:
                self._changed.wait(max(deadline - time.monotonic(), 0.001))
            self._queue.remove(ticket)
            heapq.heapify(self._queue)
            mine = self._working is None        # else: waited GIVE_UP_S for it, and runs beside the one at work
            if mine:
                self._working = ticket
                self._granted += 1
            self._changed.notify_all()          # the next in the queue may be first now
        try:
            yield
        finally:
            if mine:
                with self._changed:
                    self._working = None
                    self._changed.notify_all()


BED_READERS = Turns()


class DrawingFirst(QObject):
    """While a bed is opened and a big bed's diagram is built (widgets/canvas/building.py), the work
    that no view on screen waits for (the methodology, the paths, the component tree, the run
    page's warm-up) is held: it would share the interpreter lock with the opening and the build's
    slices, and the diagram is what the person waits for after File › Open.  Live validation is
    held only until the first frame (FirstFrame, below: its findings are on screen).  A held job
    runs once when the hold ends, on the bed as it is then.  Each holder ("file", "opening", each
    canvas's "drawing …") lets go on every way out (opened or refused, built, another bed, an edit,
    the canvas gone), and GIVE_UP_MS ends the hold anyway, so no work is held for good."""

    GIVE_UP_MS = 120_000
    _ATTR = "_drawing_first"        # where a document keeps its hold of this kind
    released = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._holders: set[str] = set()
        self._waiting: list[BackgroundJob] = []
        self._starting: list[BackgroundJob] = []        # released, started a turn at a time
        self._give_up = QTimer(self, singleShot=True, interval=self.GIVE_UP_MS, timeout=self._end)

    @classmethod
    def of(cls, document: Any) -> DrawingFirst:
        """The document's hold (made on first use, owned by the document)."""
        hold = getattr(document, cls._ATTR, None)
        if hold is None:
            hold = cls(document if isinstance(document, QObject) else None)
            setattr(document, cls._ATTR, hold)
        return hold

    @property
    def holding(self) -> bool:
        return bool(self._holders)

    def hold(self, holder: str) -> None:
        self._holders.add(holder)
        self._give_up.start()

    def release(self, holder: str) -> None:
        if holder in self._holders:
            self._holders.discard(holder)
            if not self._holders:
                self._end()

    def _end(self) -> None:
        self._holders.clear()
        self._give_up.stop()
        self._starting += [job for job in self._waiting if job not in self._starting]
        self._waiting = []
        self.released.emit()
        if self._starting:
            QTimer.singleShot(0, self, self._start_next)

    def _start_next(self) -> None:
        """The held jobs start one per turn of the event loop: each takes its input on the GUI
        thread, and together, right after a big bed's build, they were a stall of their own."""
        if not self._starting:
            return
        job = self._starting.pop(0)
        try:
            job.run_now()       # held again meanwhile (another bed): kept for that hold's end
        except RuntimeError:        # its view went away meanwhile
            pass
        if self._starting:
            QTimer.singleShot(0, self, self._start_next)

    def keep(self, job: BackgroundJob) -> None:
        if job not in self._waiting:
            self._waiting.append(job)

    def forget(self, job: BackgroundJob) -> bool:
        found = False
        for jobs in (self._waiting, self._starting):
            if job in jobs:
                jobs.remove(job)
                found = True
        return found


class FirstFrame(DrawingFirst):
    """While a bed is opened and until a big bed's diagram has painted its first frame (its devices
    painted from the model, widgets/canvas/building.py), live validation is held as well: its
    worker took the interpreter lock from the layout and that frame, which came 0.3-0.5 s later on
    the 5,000-device bed (issue 32, first frame < 2 s).  Its findings come a frame's work later,
    out of seconds of rules.  Held by the opening ("opening") and a sliced build ("drawing …"),
    let go after that frame and on every way out of the build (a canvas that never paints, in a
    minimised window: when its build ends); GIVE_UP_MS as DrawingFirst's (a short one fired while
    a big file was still being read on a loaded machine)."""

    _ATTR = "_first_frame"


class _Gate:
    """Plain Python (no Qt object): what the GUI thread's `destroyed` handler and a worker share."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.closed = False

    def close(self, *_: object) -> None:
        with self.lock:         # waits for an emit under way; acquiring lets go of the interpreter
            self.closed = True


class BackgroundJob(QObject):
    result = Signal(object)         # Outcome of the current revision only
    busy_changed = Signal(bool)
    # jobs asked to run while the window is being built; None: nothing is held
    _held: ClassVar[list[BackgroundJob] | None] = None

    @classmethod
    def hold_until_event_loop(cls) -> None:
        """The window's start: work asked for from now on starts at the event loop's first turn,
        once per job, on the bed as it is then.  A start builds every view on an empty bed and
        then opens one; that work was thrown away, and its worker competed with the start for
        the interpreter (the window came up about 0.3 s later)."""
        if cls._held is None:
            cls._held = []
            QTimer.singleShot(0, cls._release)

    @classmethod
    def _release(cls) -> None:
        held, cls._held = cls._held or [], None
        for job in held:
            try:
                job.run_now()
            except RuntimeError:        # its view went away before the event loop turned
                pass

    _workers: ClassVar[set[threading.Thread]] = set()      # every job's workers, started on the GUI thread

    @classmethod
    def any_working(cls) -> bool:
        """Whether a worker of any job is still at work.  Work done ahead of need (the Run page's
        imports) waits for none: a worker holding the interpreter made each of its turns on the
        GUI thread three to four times as long (pyqtgraph's import: 0.5 s of CPU, 2 s of stall)."""
        cls._workers = {worker for worker in cls._workers if worker.is_alive()}
        return bool(cls._workers)

    def __init__(self, parent: QObject | None = None, *, name: str = "background",
                 prepare: Callable[[], tuple[int, Work]] | None = None, debounce_ms: int = 0,
                 current_revision: Callable[[], int] | None = None, waits_for: DrawingFirst | None = None,
                 turn: int | None = None):
        super().__init__(parent)
        self.name = name
        # a rank among the workers that read the bed (BED_READERS): the work waits for its turn; None
        # (remote work, which mostly waits on its hosts) starts at once
        self._turn = turn
        self._waits_for = waits_for
        self._prepare = prepare
        self._current_revision = current_revision
        self._thread: threading.Thread | None = None
        self._running = False
        self._again = False
        self._closed = False
        # plain Python, read by a worker that waited for its turn: a window closed meanwhile wants none
        self._closing = threading.Event()
        self._relay = _Relay(self)
        self._relay.finished.connect(self._finished)
        self._superseded = threading.Event()
        # a worker hands its outcome on through the relay only while the relay exists: a job
        # dropped with its view (a test's document collected) while its worker still ran had the
        # relay deleted on the GUI thread in the middle of the worker's emit (a crash)
        self._handing_on = _Gate()
        self.destroyed.connect(self._handing_on.close)
        self._timer = QTimer(self, singleShot=True, interval=debounce_ms, timeout=self.run_now)

    @property
    def busy(self) -> bool:
        """From the start of a piece of work until its outcome has been handed on."""
        return self._running

    def request(self) -> None:
        """Run `prepare`'s work a moment from now; another request meanwhile restarts the wait."""
        if not self._closed:
            self._timer.start()

    def run_now(self) -> None:
        self._run_now(hold=True)

    def _run_now(self, hold: bool) -> None:
        self._timer.stop()
        if self._closed or self._prepare is None:
            return
        held = BackgroundJob._held
        if hold and held is not None:
            if self not in held:
                held.append(self)
            return
        if hold and self._waits_for is not None and self._waits_for.holding:
            self._waits_for.keep(self)
            return
        if self._running:
            self._again = True          # started again as soon as the running one is back
            self._superseded.set()      # ... and one still waiting for its turn need not start at all
            return
        self._launch(*self._prepare())

    def start(self, revision: int, work: Work) -> bool:
        """Run `work` now unless something runs already (then False: nothing is queued)."""
        if self._closed or self._running:
            return False
        self._launch(revision, work)
        return True

    def _launch(self, revision: int, work: Work) -> None:
        self._running = True
        relay, gate, turn, closing = self._relay, self._handing_on, self._turn, self._closing
        superseded = self._superseded = threading.Event()

        def body() -> None:
            try:
                if turn is None:
                    outcome = Outcome(revision, work())
                else:
                    with BED_READERS.turn(turn):
                        if closing.is_set():
                            return      # the window closed while this waited: its close waits for none
                        # asked again while it waited (an edit): the next run reads the bed as it is now,
                        # and this one would read it too, under a revision already gone, and be dropped
                        outcome = Outcome(revision, None, f"{EditedMeanwhile.__name__}: asked again before its turn") \
                            if superseded.is_set() else Outcome(revision, work())
            except Exception as exc:
                outcome = Outcome(revision, None, f"{type(exc).__name__}: {exc}")
            with gate.lock:
                if gate.closed:
                    return              # the view went away while this ran: nobody waits for it
                try:
                    relay.finished.emit(outcome)
                except RuntimeError:    # its wrapper let go of the relay first: nobody waits either
                    pass

        self.busy_changed.emit(True)
        self._thread = threading.Thread(target=body, name=self.name, daemon=True)
        BackgroundJob._workers.add(self._thread)
        self._thread.start()

    def _finished(self, outcome: Outcome) -> None:
        self._running = False
        if self._again and not self._closed:
            self._again = False
            self.run_now()
        current = self._current_revision() if self._current_revision is not None else outcome.revision
        if outcome.revision == current and not self._closed:
            self.result.emit(outcome)
        if not self._running:
            self.busy_changed.emit(False)

    def wait(self, msecs: int = 5000) -> bool:
        """Tests and printing: start a pending request now and block until the worker is done
        (its outcome is handed on by the event loop afterwards)."""
        held = BackgroundJob._held
        was_held = held is not None and self in held
        if was_held:
            held.remove(self)
        if self._waits_for is not None and self._waits_for.forget(self):
            was_held = True     # printing or a test needs it now: the diagram's build waits instead
        if was_held or self._timer.isActive():
            self._run_now(hold=False)
        thread = self._thread
        if thread is not None:
            thread.join(msecs / 1000)
            return not thread.is_alive()
        return True

    def shutdown(self, msecs: int = 30000) -> None:
        """The window is closing: nothing new starts; a running piece may finish."""
        self._closed = True
        self._closing.set()
        self._timer.stop()
        if self._waits_for is not None:
            self._waits_for.forget(self)
        thread = self._thread
        if thread is not None:
            thread.join(msecs / 1000)
