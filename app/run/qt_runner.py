"""The run engine for the GUI: engine work on a worker thread, results as queued signals.

Nothing here blocks the GUI thread.  Output lines are collected on the worker side and
handed over in batches by a timer (every OUTPUT_FLUSH_MS), so a chatty command cannot flood
the event loop, and a line still reaches the screen well within 100 ms.  Questions the
worker must ask the user (an unknown host key, a password) are asked on the GUI thread
while the worker waits.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from app.run.engine import RunEngine, RunListener

OUTPUT_FLUSH_MS = 40
QUESTION_WAIT_S = 600        # an unanswered question is a refusal after this long


@dataclass
class Reply:
    """A question from the worker; the GUI fills `value` and sets `answered`."""
    value: Any = None
    answered: threading.Event = field(default_factory=threading.Event)


class RunController(QObject):
    task_started = Signal(str, str)              # step, host
    output_lines = Signal(list)                  # [(step, host, stream, line, monotonic time received)]
    task_finished = Signal(str, str, str, str)   # step, host, status, message
    busy_changed = Signal(bool)
    preflight_done = Signal(list)                # [engine.HostCheck]
    failed = Signal(str)                         # engine work ended with an error (not a step failure)
    metrics_problem = Signal(str)                # a collector lost data: shown on the dashboard
    host_key_question = Signal(object, object)   # HostKeyQuestion, Reply(bool)
    password_question = Signal(object, object)   # HostAccess, Reply(str | None)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.engine: RunEngine | None = None
        self._thread: threading.Thread | None = None
        self._pending: deque = deque()
        self._flush = QTimer(self)
        self._flush.setInterval(OUTPUT_FLUSH_MS)
        self._flush.timeout.connect(self._flush_output)
        self._flush.start()

    # ------------------------------------------------------------ engine life

    def listener(self) -> RunListener:
        controller = self

        class Forward(RunListener):
            def task_started(self, task):
                controller.task_started.emit(task.step, task.host)

            def output(self, task, stream, line):
                controller._pending.append((task.step, task.host, stream, line, time.monotonic()))

            def task_finished(self, task, state):
                controller.task_finished.emit(task.step, task.host, state.status, state.message)

        return Forward()

    def attach(self, engine: RunEngine) -> None:
        self.shutdown()
        self.engine = engine

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _start(self, work: Callable[[], Any], then: Callable[[Any], None] | None = None) -> bool:
        if self.engine is None or self.busy:
            return False

        def body() -> None:
            try:
                result = work()
                if then is not None:
                    then(result)
            except Exception as exc:  # noqa: BLE001 - shown to the user, never lost in a thread
                self.failed.emit(f"{type(exc).__name__}: {exc}")
            finally:
                self.busy_changed.emit(False)

        self.busy_changed.emit(True)
        self._thread = threading.Thread(target=body, name="run-engine", daemon=True)
        self._thread.start()
        return True

    def run_steps(self, steps, rerun: bool = False) -> bool:
        engine = self.engine
        return self._start(lambda: engine.run_steps(steps, rerun=rerun))

    def preflight(self, steps=None) -> bool:
        engine = self.engine
        return self._start(lambda: engine.preflight(steps), self.preflight_done.emit)

    def abort(self) -> None:
        if self.engine is not None:
            self.engine.cancel()

    def shutdown(self, wait_s: float = 10.0) -> None:
        """Stop what runs (its tasks end CANCELLED in the journal) and close the connections."""
        if self.engine is None:
            return
        self.engine.cancel()
        if self._thread is not None:
            self._thread.join(wait_s)
        self.engine.close()
        self.engine = None

    # -------------------------------------------------------------- output

    def _flush_output(self) -> None:
        if not self._pending:
            return
        batch = []
        while self._pending:
            batch.append(self._pending.popleft())
        self.output_lines.emit(batch)

    # ---------------------------------------------------- questions for the user

    def ask_host_key(self, question) -> bool:
        """HostKeyDecider for the transports: called on the worker thread."""
        if threading.current_thread() is threading.main_thread():
            return False        # never block the GUI thread waiting for itself
        reply = Reply(False)
        self.host_key_question.emit(question, reply)
        reply.answered.wait(QUESTION_WAIT_S)
        return bool(reply.value)

    def ask_password(self, access) -> str | None:
        if threading.current_thread() is threading.main_thread():
            return None
        reply = Reply(None)
        self.password_question.emit(access, reply)
        reply.answered.wait(QUESTION_WAIT_S)
        return reply.value
