"""Validation that follows the user's edits without blocking the window.

Edits restart a short debounce timer; when it fires, a snapshot of the bed (the project
text, which is also what would be saved) is validated on a worker thread, and the
findings come back through a queued signal.  A result for an older revision than the
document's current one is dropped, so the panel never shows findings for a bed that no
longer exists.
"""
from __future__ import annotations

import pickle
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal


class _Relay(QObject):
    done = Signal(int, object, str)   # revision, findings, error text


class _Job(QRunnable):
    def __init__(self, bed: Any, revision: int, relay: _Relay):
        super().__init__()
        self.bed, self.revision, self.relay = bed, revision, relay

    def run(self) -> None:
        from topology.validation import validate
        try:
            findings, error = validate(pickle.loads(self.bed)), ""
        except Exception as exc:  # noqa: BLE001 - reported in the panel, never raised in a thread
            findings, error = [], f"validation failed: {exc!r}"
        try:
            self.relay.done.emit(self.revision, findings, error)
        except RuntimeError:  # the window closed while this ran: nobody is waiting for the result
            pass


class LiveValidator(QObject):
    findings_changed = Signal(object)     # list[Finding]
    failed = Signal(str)

    DEBOUNCE_MS = 250

    def __init__(self, document: Any, parent: QObject | None = None):
        super().__init__(parent or document)
        self.document = document
        self.findings: list[Any] = []
        self.revision_shown = -1
        self._running = False
        self._again = False
        self._relay = _Relay(self)
        self._relay.done.connect(self._finished)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._timer = QTimer(self, singleShot=True, interval=self.DEBOUNCE_MS, timeout=self._start)
        document.changed.connect(lambda _ids: self._timer.start())
        document.reset.connect(self.run_now)

    def run_now(self) -> None:
        self._timer.stop()
        self._start()

    def _start(self) -> None:
        if self._running:
            self._again = True
            return
        self._running = True
        # the worker gets its own copy: the user keeps editing the live model meanwhile.
        # pickle, not deepcopy: about 5x faster on a 4,000-device bed, and the GUI thread waits for it
        snapshot = pickle.dumps(self.document.bed, pickle.HIGHEST_PROTOCOL)
        self._pool.start(_Job(snapshot, self.document.revision, self._relay))

    def _finished(self, revision: int, findings: list, error: str) -> None:
        self._running = False
        if self._again:
            self._again = False
            self._start()
        if revision != self.document.revision:
            return
        if error:
            self.failed.emit(error)
            return
        self.findings = findings
        self.revision_shown = revision
        self.findings_changed.emit(findings)

    def shutdown(self) -> None:
        """The window is closing: drop queued work and let a running validation finish."""
        self._timer.stop()
        self._pool.clear()
        self._pool.waitForDone(30000)

    def wait(self, msecs: int = 5000) -> bool:
        """Tests and printing: block until the queued validation is done."""
        if self._timer.isActive():
            self.run_now()
        return self._pool.waitForDone(msecs)
