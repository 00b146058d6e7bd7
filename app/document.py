"""The open document: one bed, its file, its undo stack, and the signals views redraw from.

Every user edit goes through `Document.apply(edit)`, which pushes one QUndoCommand; redo
applies the edit to the model, undo reverts it, and both emit `changed(ids)`.  Views
never change the model themselves and never keep copies of it: on `changed` they redraw
the touched components from the model; on `reset` (open, new, revert) everything.
QtCore/QtGui only (QUndoStack lives in QtGui): no widgets here.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from app.background import DrawingFirst, FirstFrame
from app.bed_reading import BedReader, Superseded
from topology import roundtrip
from topology.edits import Edit
from topology.gc_pause import collector_paused
from topology.model import Bed, BedInfo
from topology.roundtrip import ProjectSource


class _EditCommand(QUndoCommand):
    def __init__(self, doc: Document, edit: Edit):
        super().__init__(edit.text or "Edit")
        self.doc = doc
        self.edit = edit

    def redo(self) -> None:
        with self.doc.editing():
            self.edit.apply()
        self.doc._notify(self.edit.touched(), self.edit.plain_fields())

    def undo(self) -> None:
        with self.doc.editing():
            self.edit.revert()
        self.doc._notify(self.edit.touched(), self.edit.plain_fields())


class Document(QObject):
    changed = Signal(object)          # set[str] of touched component ids (empty set: unknown, redraw all)
    reset = Signal()                  # a different bed is shown
    about_to_edit = Signal()          # an edit or its undo is about to change the model (views still mid-build finish)
    dirty_changed = Signal(bool)
    path_changed = Signal(object)     # Path | None

    def __init__(self, bed: Bed | None = None, path: Path | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.bed: Bed = bed if bed is not None else new_bed()
        self.path: Path | None = Path(path) if path else None
        # the text the bed was read from: saving rewrites only what the edits changed in it
        self._source: ProjectSource | None = None
        self._source_later: SourceLater | None = None
        self.last_save = ""
        self.undo_stack = QUndoStack(self)
        self.reader = BedReader(self)     # File › Open's reads (a big file's on a worker)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.revision = 0             # bumps on every change; lets workers drop stale results
        # while `changed` is emitted: the names of the fields the edit set, when that is all it did
        # (topology.edits.Edit.plain_fields), else None
        self.changed_fields: frozenset[str] | None = None
        # odd while an edit changes the model, bumped again when it is done: a worker that copies
        # the bed reads it before and after, and keeps the copy only if no edit ran meanwhile
        self.edit_seq = 0
        from app.live_validation import LiveValidator
        self.validation = LiveValidator(self)
        from app.current_scenario import CurrentScenario
        self.scenario = CurrentScenario(self)    # the scenario every view shows

    @property
    def source(self) -> ProjectSource | None:
        later = self._source_later
        if later is not None:
            self._source_later = None
            self._source = later.result()
        return self._source

    @source.setter
    def source(self, value: ProjectSource | None) -> None:
        self._source_later = None
        self._source = value

    def _clean_changed(self, clean: bool) -> None:
        # a bound method, not a lambda: Qt drops the connection when the document goes away
        self.dirty_changed.emit(not clean)

    # ------------------------------------------------------------------ editing
    @contextmanager
    def editing(self) -> Iterator[None]:
        """Around every change of the model on the GUI thread (see `edit_seq`)."""
        self.about_to_edit.emit()
        _ = self.source             # read before the bed changes (SourceLater)
        self.edit_seq += 1
        try:
            yield
        finally:
            self.edit_seq += 1

    def apply(self, edit: Edit) -> None:
        """Apply one edit as one undoable step."""
        self.undo_stack.push(_EditCommand(self, edit))

    def _notify(self, ids: set[str], fields: frozenset[str] | None = None) -> None:
        self.revision += 1
        self.changed_fields = fields
        try:
            self.changed.emit(set(ids))
        finally:
            self.changed_fields = None

    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    # ------------------------------------------------------------------ files
    def open(self, path: str | Path, progress: Callable[[str], None] | None = None, *,
             confirm: Callable[[], bool] | None = None) -> bool:
        """Replace the bed with a file's.  Raises BedFileError and leaves everything as it was.
        `progress` is told each stage as it begins (reading, model, validation: a splash shows it).
        A big file is read on a worker while the event loop turns (app/bed_reading.py); False when
        the read was overtaken meanwhile (another open, another bed, the window closing: nothing
        changed), or when the bed was edited meanwhile and `confirm` does not let it go."""
        say = progress or (lambda _stage: None)
        # what no view on screen waits for waits for the opening (and a big bed's drawing)
        hold = DrawingFirst.of(self)
        hold.hold("opening")
        # ... and live validation until the first frame (a big bed's canvas holds it from its reset on)
        first_frame = FirstFrame.of(self)
        first_frame.hold("opening")
        try:
            say("reading")
            edits_before = self.edit_seq
            try:
                read = self.reader.read(path, say)
            except Superseded:
                return False
            if self.edit_seq != edits_before and self.dirty and confirm is not None and not confirm():
                return False
            say("validation")
            # the file's plain data (what saving compares with) is worked out after the diagram,
            # on a worker: it was a fifth of opening a 5,000-device bed (see SourceLater)
            later = SourceLater(read.text, read.bed)
            self.replace(read.bed, read.path, source_later=later)
        finally:
            hold.release("opening")
            first_frame.release("opening")
        def start() -> None:        # not for a bed opened after it meanwhile
            if self._source_later is later:
                later.start()
        def start_soon() -> None:   # at the event loop's next turn (a start: once the window is up)
            QTimer.singleShot(0, self, start)
        if hold.holding:
            hold.released.connect(start_soon, Qt.ConnectionType.SingleShotConnection)
        else:
            start_soon()
        return True

    def replace(self, bed: Bed, path: Path | None, *, dirty: bool = False,
                source: ProjectSource | None = None, source_later: SourceLater | None = None) -> None:
        """Show another bed; `source` is the text it was read from (kept on save), or
        `source_later` works it out."""
        self.reader.drop()          # a file still being read is not shown over this bed
        self.undo_stack.clear()
        self.bed = bed
        self.source = source
        self._source_later = source_later
        self.path = Path(path) if path else None
        self.revision += 1
        self.undo_stack.setClean()
        if dirty:  # recovered work: unsaved until the user saves it
            self.undo_stack.resetClean()
        self.path_changed.emit(self.path)
        self.dirty_changed.emit(self.dirty)
        # the views' reset handlers ask for their work in the order they were connected: live
        # validation's first (it listens from the document's start), a big bed's canvas, which holds
        # it until its first frame, after it (the other views' work, held by the canvas's build,
        # listens later).  Held across the emit, as File › Open holds it, validation does not start
        # before the canvas's hold: its worker took the interpreter from the layout and the first
        # frame of a bed shown without an open (an example, a recovery, a file opened to repair),
        # a GUI stall of 0.15-0.25 s on the 5,000-device bed.  A small bed's starts a turn later
        first_frame = FirstFrame.of(self)
        first_frame.hold("replacing")
        try:
            self.reset.emit()
        finally:
            first_frame.release("replacing")
        from app.gc_owner import count_frozen_after_load, settle_after_load
        settle_after_load(bed)          # the views are built: what lives on from here is frozen
        # ... and counted after a big bed's first frame (a walk of the frozen list, 25-70 ms)
        if first_frame.holding:
            first_frame.released.connect(count_frozen_after_load, Qt.ConnectionType.SingleShotConnection)
        else:
            count_frozen_after_load()

    def save(self, path: str | Path | None = None) -> Path:
        target = Path(path) if path else self.path
        if target is None:
            raise ValueError("the document has no file yet: save it under a name")
        saved = roundtrip.save(self.bed, target, self.source)
        self.source = saved.source
        self.last_save = saved.how     # "rewritten": the file's own text could not be kept
        if target != self.path:
            self.path = target
            self.path_changed.emit(self.path)
        self.undo_stack.setClean()
        return target

    def snapshot_text(self) -> str:
        """The bed as project-file text (autosave, crash recovery), over its source's text."""
        return roundtrip.render(self.bed, self.source).text

    @property
    def title(self) -> str:
        return self.bed.bed.name or (self.path.stem if self.path else "untitled")


class SourceLater:
    """`ProjectSource.of(text, bed)` for a bed just opened, worked out on a worker once the bed is
    on screen (`start`), or on the GUI thread when it is asked for first (`result`).  The worker
    reads the bed while nothing can change it: `Document.editing` asks for the result (waiting
    for the worker) before any edit."""

    def __init__(self, text: str, bed: Bed):
        self.text, self.bed = text, bed
        self._value: ProjectSource | None = None
        self._error: BaseException | None = None
        self._done = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None and not self._done:
            self._thread = threading.Thread(target=self._work, name="project-source", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        try:
            with collector_paused():
                self._value = ProjectSource.of(self.text, self.bed)
        except Exception as exc:        # handed to whoever asks for the result
            self._error = exc
        self._done = True

    def result(self) -> ProjectSource | None:
        if self._thread is not None:
            self._thread.join()
        elif not self._done:
            self._work()
        if self._error is not None:
            raise self._error
        return self._value


def new_bed(name: str = "untitled test bed") -> Bed:
    return Bed(bed=BedInfo(name=name))
