"""Reading a project file for File › Open off the GUI thread: a big bed's file is read and its model
built on a worker (app/background.py's BackgroundJob, one read at a time, revisioned), while the
GUI thread keeps turning its event loop: the splash paints its progress, the window repaints, the
menus answer.  The caller waits for its own read (`BedReader.read`) and gets the bed, the loader's
BedFileError, or `Superseded` when something else took over meanwhile: another File › Open (the
latest wins: the older read's result is dropped), another bed shown, the window closing.

The loading itself is the one the command line runs (topology.fileformat's `read_text` and
`loads`); only the thread differs.  A small file is read where it is asked for: it is read before
a frame would show it, and its open stays one synchronous step.  No Qt object is made or touched
on the worker: it reads text and builds plain model objects (topology/ is Qt-free).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QObject, Signal

from app.background import BackgroundJob, Outcome
from topology import fileformat
from topology.model import Bed

# from this size of file up the read runs on a worker (500 devices: 0.67 MB, ~0.15 s of loading;
# a 60 kB example loads in ~20 ms, under a frame's notice)
READ_ON_WORKER_BYTES = 300_000


@dataclass(frozen=True)
class ReadBed:
    """A project file's text and the bed built from it (plain data, made on any thread)."""
    path: Path
    text: str
    bed: Bed


class Superseded(Exception):
    """The read was overtaken: another File › Open, another bed shown, or the window closing."""


def read_bed(path: str | Path, stage: Any = None) -> ReadBed:
    """Read and parse a project file (the command line's load: read_text, then loads).  `stage`,
    when given, is told "model" once the text is read.  Raises BedFileError on bad input."""
    text = fileformat.read_text(path)
    if stage is not None:
        stage("model")
    return ReadBed(Path(path), text, fileformat.loads(text, str(path)))


def reads_on_worker(path: str | Path) -> bool:
    try:
        return os.stat(path).st_size >= READ_ON_WORKER_BYTES
    except OSError:                 # read_text says what is wrong, where it is asked for
        return False


class _Stages(QObject):
    reached = Signal(int, str)      # (revision, stage): emitted on the worker, received on the GUI thread


class BedReader(QObject):
    """The document's reads.  `read` blocks its caller until its own read is back, turning the
    event loop meanwhile; anything the loop runs may start another read (File › Open again) or
    `drop` the waiting ones."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._wanted = 0                                # the revision of the latest read asked for
        self._path: Path | None = None
        self._arrived: dict[int, Outcome] = {}
        self._waiting: dict[int, QEventLoop] = {}
        self._progress: Any = None
        self._closed = False
        self._stages = _Stages(self)
        self._stages.reached.connect(self._stage)
        self._job = BackgroundJob(self, name="read-bed", prepare=self._prepare,
                                  current_revision=lambda: self._wanted)
        self._job.result.connect(self._back)

    @property
    def reading(self) -> bool:
        """A read is under way for someone still waiting for it."""
        return bool(self._waiting)

    def read(self, path: str | Path, progress: Any = None) -> ReadBed:
        """The bed in `path`, read on a worker when the file is big.  Raises BedFileError (the
        loader's message), OSError, or Superseded."""
        self.drop()                 # an older read still waiting is overtaken by this one
        revision = self._wanted
        self._path = Path(path)
        self._progress = progress
        if self._closed:            # the window is closing: no read would ever come back
            raise Superseded(str(path))
        if not reads_on_worker(path):
            return read_bed(path, progress)
        loop = QEventLoop(self)
        self._waiting[revision] = loop
        try:
            if not self._job.start(*self._prepare()):
                self._job.run_now()     # an older read is still running: this one starts when it is back
            if revision not in self._arrived:
                loop.exec()             # every event, the user's included (File › Open again, closing)
        finally:
            del self._waiting[revision]
            loop.deleteLater()
        outcome = self._arrived.pop(revision, None)
        if outcome is None or revision != self._wanted:
            raise Superseded(str(path))
        self._progress = None
        value = outcome.value
        if isinstance(value, BaseException):
            raise value
        if outcome.error:               # pragma: no cover - _work hands every exception back as a value
            raise RuntimeError(outcome.error)
        return value

    def drop(self) -> None:
        """Whatever is being read is no longer wanted (another bed, the window closing): its
        waiting caller gets Superseded and its result is dropped when it comes back."""
        self._wanted += 1
        self._arrived.clear()
        self._progress = None
        for loop in self._waiting.values():
            loop.quit()

    def _prepare(self) -> tuple[int, Any]:
        path, revision, stages = self._path, self._wanted, self._stages

        def work() -> ReadBed | BaseException:
            try:
                return read_bed(path, lambda key: stages.reached.emit(revision, key))
            except Exception as exc:    # the loader's BedFileError keeps its problems (file, line, hint)
                return exc
        return revision, work

    def _stage(self, revision: int, key: str) -> None:
        if revision == self._wanted and self._progress is not None:
            self._progress(key)

    def _back(self, outcome: Outcome) -> None:
        loop = self._waiting.get(outcome.revision)
        if loop is not None:
            self._arrived[outcome.revision] = outcome
            loop.quit()

    def shutdown(self) -> None:
        self._closed = True
        self.drop()
        self._job.shutdown(0)
