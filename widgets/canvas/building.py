"""Canvas part: a big bed's scene built a slice at a time, between the event loop's turns.

Building the items of the 5,000-device canvas bed (its layout, 5,000 devices, 10,000 cables)
takes seconds of the interpreter; done in one go on `document.reset`, it froze the window for all
of that time and the live validator's findings, ready on their worker, waited behind it.  A bed
this big is built in slices of SLICE_S instead, the window answering between them.  The build
and the validation worker share one interpreter lock: while the validator is busy, the build
takes a slice only every BACKOFF_MS, so the findings come first (the findings are what the
person waits for; the drawing is the same work either way, only later).

Whatever needs every item (an edit, an export, a device to centre on) finishes the build first,
at once.  A small bed is built at once, as before.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGraphicsView

SLICED_FROM = 1000          # drawn devices and cables (a cable counts half) from which a bed is built in slices
SLICE_S = 0.012             # one slice's share of the GUI thread while the validator works
FREE_SLICE_S = 0.06         # ... once it is done (each turn between slices costs the build time)
BACKOFF_MS = 100            # the pause between slices while the validator works


class SlicedBuild:
    """Mixed into Canvas (document, bed, `built` signal)."""

    building = False        # the scene is still being built (a benchmark and the splash wait for it)
    _build_steps: Iterator[None] | None = None
    _build_timer: QTimer | None = None
    _update_mode = QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate

    @staticmethod
    def builds_in_slices(bed: Any) -> bool:
        drawn = len(bed.servers) + len(bed.switches) + len(bed.arrays) + len(bed.chassis)
        return drawn + len(bed.links) / 2 >= SLICED_FROM

    def _start_build(self, steps: Iterator[None]) -> None:
        self._build_steps = steps
        self.building = True
        # no frame of a half-built drawing: each would cost as much as the whole one (the far
        # drawing's one pass, the cables) and take the interpreter from the validator
        self._update_mode = self.viewportUpdateMode()
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.NoViewportUpdate)
        if self._build_timer is None:
            self._build_timer = QTimer(self, singleShot=True, timeout=self._build_slice)
        self._build_timer.start(0)

    def _stop_build(self) -> None:
        """Another bed: what was being built is dropped with the scene."""
        if self._build_timer is not None:
            self._build_timer.stop()
        self._build_steps = None
        if self.building:
            self.building = False
            self.setViewportUpdateMode(self._update_mode)
            self.viewport().update()

    def finish_build(self) -> None:
        """The rest of the build now: something needs every item."""
        steps = self._build_steps
        if steps is None:
            return
        self._stop_build()
        for _ in steps:
            pass
        self.built.emit()

    def _build_slice(self) -> None:
        steps = self._build_steps
        if steps is None:
            return
        deadline = time.perf_counter() + (SLICE_S if self._validator_busy() else FREE_SLICE_S)
        try:
            while time.perf_counter() < deadline:
                next(steps)
        except StopIteration:
            self._stop_build()
            self.built.emit()
            return
        assert self._build_timer is not None
        self._build_timer.start(BACKOFF_MS if self._validator_busy() else 0)

    def _validator_busy(self) -> bool:
        validation = getattr(self.document, "validation", None)
        return validation is not None and getattr(validation, "busy", False)
