"""Canvas part: a big bed's scene built a slice at a time, between the event loop's turns.

Building the items of the 5,000-device canvas bed (its layout, 5,000 devices, 10,000 cables)
takes seconds of the interpreter; done in one go on `document.reset`, it froze the window for all
of that time and the live validator's findings, ready on their worker, waited behind it.  A bed
this big is built in slices of SLICE_S instead, the window answering between them.  The build
and the validation worker share one interpreter lock: while the validator is busy, the build
takes a slice only every BACKOFF_MS, so the findings come first (the findings are what the
person waits for; the drawing is the same work either way, only later).

The first frame does not wait for the items: once the layout is known (the build's first
steps, taken at full speed), the view paints every device from the model, at its place, with its
name where it is wide enough (widgets/canvas/far_drawing.py, `draw_preview`); the cables follow
when the build ends.  While it runs, the methodology and path workers are held
(app/background.py, DrawingFirst): they share the interpreter lock with the slices and no view
on screen waits for them; every way out of the build releases them.  Live validation is held
until that first frame is painted (FirstFrame), and the slice that works out the layout ends there.

Whatever needs every item (an edit, an export, a device to centre on) finishes the build first,
at once.  A small bed is built at once, as before.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QGraphicsView

from app.background import DrawingFirst, FirstFrame

SLICED_FROM = 1000          # drawn devices and cables (a cable counts half) from which a bed is built in slices
SLICE_S = 0.012             # one slice's share of the GUI thread while the validator works
FREE_SLICE_S = 0.02         # ... once it is done: a turn between slices costs little, a long slice is a stall
BACKOFF_MS = 100            # the pause between slices while the validator works


def _let_go(hold: DrawingFirst, holder: str) -> None:
    try:
        hold.release(holder)
    except RuntimeError:        # the document went first, and its hold with it
        pass


class _FirstPaint(QObject):
    """Lets go of live validation's hold once the viewport has painted the bed (after that paint)."""

    def __init__(self, canvas: Any):
        super().__init__(canvas)
        self.canvas = canvas
        canvas.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.canvas.shows_bed:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self.canvas, self.canvas._release_first_frame)
            self.deleteLater()
        return False


class SlicedBuild:
    """Mixed into Canvas (document, bed, `built` signal)."""

    building = False        # the scene is still being built (a benchmark and the splash wait for it)
    _slice_ends = False     # a step asked for the slice under way to end after it
    previewing = False      # ... and its devices are painted from the model meanwhile (the layout is known)
    _build_steps: Iterator[None] | None = None
    _build_timer: QTimer | None = None
    _update_mode = QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate

    @staticmethod
    def builds_in_slices(bed: Any) -> bool:
        drawn = len(bed.servers) + len(bed.switches) + len(bed.arrays) + len(bed.chassis)
        return drawn + len(bed.links) / 2 >= SLICED_FROM

    @property
    def shows_bed(self) -> bool:
        """A frame painted now shows the bed's devices (built, or painted from the model)."""
        return bool(self.objects) and (not self.building or self.previewing)

    def _drawing_first(self) -> DrawingFirst | None:
        document = getattr(self, "document", None)
        if document is None or not hasattr(document, "revision"):
            return None
        hold = DrawingFirst.of(document)
        if not getattr(self, "_hold_bound", False):     # the canvas gone mid-build: nothing stays held
            self._hold_bound = True
            holder = self._holder = f"drawing {id(self)}"      # a canvas lets go of its own hold only
            first_frame = FirstFrame.of(document)
            self.destroyed.connect(lambda *_: (_let_go(hold, holder), _let_go(first_frame, holder)))
        return hold

    def _start_build(self, steps: Iterator[None]) -> None:
        self._build_steps = steps
        self.building = True
        self.previewing = False
        hold = self._drawing_first()
        if hold is not None:
            hold.hold(self._holder)
            FirstFrame.of(self.document).hold(self._holder)    # live validation: until the first frame
        # no frame of a half-built drawing: each would cost as much as the whole one (the far
        # drawing's one pass, the cables) and take the interpreter from the validator
        self._update_mode = self.viewportUpdateMode()
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.NoViewportUpdate)
        if self._build_timer is None:
            self._build_timer = QTimer(self, singleShot=True, timeout=self._build_slice)
        self._build_timer.start(0)

    def _stop_build(self, release: bool = True) -> None:
        """Built, or another bed (what was being built is dropped with the scene).  `release`: the
        held workers may start (not when another big bed's build follows at once)."""
        if self._build_timer is not None:
            self._build_timer.stop()
        self._build_steps = None
        if self.building:
            self.building = self.previewing = False
            self.setViewportUpdateMode(self._update_mode)
            self.viewport().update()
        if release:
            self._release_workers()

    def _release_workers(self) -> None:
        hold = self._drawing_first()
        if hold is not None:
            hold.release(self._holder)      # after the items: the released workers start on a built canvas
        self._release_first_frame()

    def _release_first_frame(self) -> None:
        if self._drawing_first() is not None:
            _let_go(FirstFrame.of(self.document), self._holder)

    def finish_build(self) -> None:
        """The rest of the build now: something needs every item."""
        steps = self._build_steps
        if steps is None:
            return
        self._build_steps = None
        for _ in steps:
            pass
        self._stop_build()
        self.built.emit()

    def end_slice(self) -> None:
        """A build step: the slice under way ends after it (the next one starts a turn later)."""
        self._slice_ends = True

    def _build_slice(self) -> None:
        steps = self._build_steps
        if steps is None:
            return
        # until the first frame (the layout) at full speed: that is what the person waits for
        busy = self.previewing and self._validator_busy()
        deadline = time.perf_counter() + (SLICE_S if busy else FREE_SLICE_S)
        previewing = self.previewing
        self._slice_ends = False
        try:
            next(steps)         # at least one step a slice
            # ... and none after the layout is known: the first frame is painted at once
            while time.perf_counter() < deadline and self.previewing == previewing and not self._slice_ends:
                next(steps)
        except StopIteration:
            self._stop_build()
            self.built.emit()
            return
        assert self._build_timer is not None
        self._build_timer.start(BACKOFF_MS if self.previewing and self._validator_busy() else 0)

    def _preview_ready(self) -> None:
        """The layout is known: the next frame paints every device from the model."""
        self.previewing = True
        self.viewport().update()
        if self.isVisible():
            _FirstPaint(self)
        else:       # no frame will come (another page shown): live validation need not wait for one
            self._release_first_frame()

    def _validator_busy(self) -> bool:
        validation = getattr(self.document, "validation", None)
        return validation is not None and getattr(validation, "busy", False)
