"""The run session for the GUI: its work on a worker thread, its events as queued signals.

Nothing here blocks the GUI thread.  The work (pre-flight, running steps) is a BackgroundJob
(app/background.py) whose revision is the open run: an outcome of a run that was closed
meanwhile is dropped.  Output lines are collected on the worker side and handed over in
batches by a timer (every OUTPUT_FLUSH_MS), so a chatty command cannot flood the event loop,
and a line still reaches the screen well within 100 ms.  Questions the session asks (an
unknown host key, a password, a step a dead driver left running) are asked on the GUI thread
while the worker waits.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal

from app.background import BackgroundJob, Outcome
from app.run import events as E
from app.run.session import RunSession

OUTPUT_FLUSH_MS = 40
T = TypeVar("T")
QUESTION_WAIT_S = 600        # an unanswered question is a refusal after this long


@dataclass
class Reply:
    """A question from the worker; the GUI fills `value` and sets `answered`."""
    value: Any = None
    answered: threading.Event = field(default_factory=threading.Event)


class RunController(QObject):
    event = Signal(object)                       # an app.run.events.Event other than output
    output_lines = Signal(list)                  # [events.OutputLine], oldest first
    samples = Signal(str, list)                  # run id, [Sample] of events.Samples since the last flush
    busy_changed = Signal(bool)
    failed = Signal(str)                         # session work ended with an error (not a step failure)
    background_ended = Signal(str)               # run id: a detached run's work ended and it was closed
    question = Signal(object, object)            # events.Question, Reply
    _built = Signal()                            # a build() worker is done (emitted on the worker)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.session: RunSession | None = None
        self._building = False
        self._generation = 0
        self._pending: deque = deque()
        self._job = self._new_job()
        # runs no longer shown whose work goes on: run id -> (session, its job)
        self._background: dict[str, tuple[RunSession, BackgroundJob]] = {}
        self._flush = QTimer(self)
        self._flush.setInterval(OUTPUT_FLUSH_MS)
        self._flush.timeout.connect(self._flush_output)
        self._flush.start()

    # ------------------------------------------------------------ session life

    def on_event(self, event: E.Event) -> None:
        """The session's event sink: called on any thread."""
        if isinstance(event, (E.OutputLine, E.Samples)):
            self._pending.append(event)
        else:
            try:
                self.event.emit(event)
            except RuntimeError:        # the window is gone
                pass

    def _new_job(self) -> BackgroundJob:
        job = BackgroundJob(self, name="run-engine", current_revision=lambda: self._generation)
        job.busy_changed.connect(self.busy_changed)
        job.result.connect(self._work_done)
        return job

    def attach(self, session: RunSession) -> None:
        """Show this session from now on; the one before is closed."""
        if session is not self.session:
            self.shutdown()
        self.session = session
        self._generation += 1

    def detach(self) -> str:
        """Show no run from now on without stopping the one shown (another bed was opened): a
        run whose work goes on keeps its hold on the run and its journal, in the background,
        and is closed when that work ends; an idle one is closed now.  Nothing of it reaches
        the view any more (its events name a run no longer shown).  Returns its id when it
        goes on in the background, else ""."""
        session, self.session = self.session, None
        self._generation += 1
        if session is None:
            return ""
        if not self._job.busy:
            session.close()
            return ""
        job, run_id = self._job, session.run_id
        job.busy_changed.disconnect(self.busy_changed)
        job.result.disconnect(self._work_done)
        job.busy_changed.connect(lambda busy, run_id=run_id: None if busy else self._background_done(run_id))
        self._background[run_id] = (session, job)
        self._job = self._new_job()
        self.busy_changed.emit(False)
        return run_id

    def in_background(self) -> list[str]:
        return list(self._background)

    def take_back(self, run_id: str) -> RunSession | None:
        """A run detached earlier whose work still goes on, shown again (the one shown now is
        detached first); None when there is none of that id."""
        found = self._background.pop(run_id, None)
        if found is None:
            return None
        self.detach()
        session, job = found
        job.busy_changed.disconnect()
        self._job.deleteLater()
        self._job = job
        job.busy_changed.connect(self.busy_changed)
        job.result.connect(self._work_done)
        self.session = session
        self._generation += 1
        self.busy_changed.emit(job.busy)
        return session

    def _background_done(self, run_id: str) -> None:
        found = self._background.pop(run_id, None)
        if found is None:
            return
        session, job = found
        session.close()         # releases the run: it can be opened again, here or elsewhere
        job.deleteLater()
        self.background_ended.emit(run_id)

    @property
    def busy(self) -> bool:
        return self._building or self._job.busy

    def build(self, make: Callable[[], T]) -> T:
        """`make()` (a run session: the procedure of a big bed takes seconds to generate) on a worker
        thread while this thread's event loop goes on, so the window repaints and stays usable; returns
        its value or raises what it raised.  Busy meanwhile (nothing else starts)."""
        box: dict[str, Any] = {}
        loop = QEventLoop()
        self._built.connect(loop.quit)

        def work() -> None:
            try:
                box["value"] = make()
            except BaseException as exc:     # handed to the caller on its own thread
                box["error"] = exc
            finally:
                box["done"] = True
                try:
                    self._built.emit()
                except RuntimeError:        # the window went away meanwhile
                    pass

        self._building = True
        self.busy_changed.emit(True)
        try:
            worker = threading.Thread(target=work, name="run-session", daemon=True)
            worker.start()
            if not box.get("done"):
                loop.exec()
            worker.join()
        finally:
            self._built.disconnect(loop.quit)
            self._building = False
            self.busy_changed.emit(self.busy)
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _start(self, work) -> bool:
        if self.session is None or self.session.engine is None or self.busy:
            return False
        return self._job.start(self._generation, work)

    def run_steps(self, steps, rerun: bool = False, writer=None) -> bool:
        session = self.session
        return self._start(lambda: session.run(steps, rerun=rerun, writer=writer))

    def preflight(self, steps=None) -> bool:
        session = self.session
        return self._start(lambda: session.preflight(steps))

    def _work_done(self, outcome: Outcome) -> None:
        if outcome.error:
            self.failed.emit(outcome.error)

    def abort(self) -> None:
        if self.session is not None:
            self.session.cancel()

    def shutdown(self, wait_s: float = 10.0) -> None:
        """Stop what runs (its tasks end CANCELLED in the journal) and close the run."""
        session, self.session = self.session, None
        self._generation += 1           # whatever the old run still reports is stale now
        if session is None:
            return
        session.cancel()
        self._job.wait(int(wait_s * 1000))
        session.close()

    def close_all(self, wait_s: float = 10.0) -> None:
        """The window closes: the run shown and every run going on in the background stop (their
        tasks end CANCELLED in their journals) and are closed."""
        self.shutdown(wait_s)
        background, self._background = list(self._background.values()), {}
        for session, job in background:
            session.cancel()
            job.wait(int(wait_s * 1000))
            session.close()

    # -------------------------------------------------------------- output

    def _flush_output(self) -> None:
        """On the GUI thread: output lines and samples gathered since the last flush, in batches."""
        if not self._pending:
            return
        batch = []
        samples: dict[str, list] = {}
        while self._pending:
            event = self._pending.popleft()
            if isinstance(event, E.Samples):
                samples.setdefault(event.run_id, []).extend(event.samples)
            else:
                batch.append(event)
        if batch:
            self.output_lines.emit(batch)
        for run_id, run_samples in samples.items():
            self.samples.emit(run_id, run_samples)

    # ---------------------------------------------------- questions for the user

    def ask(self, question: E.Question) -> Any:
        """The session's questions, called on the worker thread; answered on the GUI thread."""
        if threading.current_thread() is threading.main_thread():
            return None         # never block the GUI thread waiting for itself
        reply = Reply(None)
        self.question.emit(question, reply)
        reply.answered.wait(QUESTION_WAIT_S)
        return reply.value
