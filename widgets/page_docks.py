"""Which docks the window shows with each central page: the drawing layout, and the run's own.

As an IDE's debug layout does, the Run page gets a layout of its own: the palette, component
tree, property editor and findings serve drawing, and a run needs the room for its steps and
live plots (with them open, four plots shared about 500×300 px at 1366×768).  Each layout
keeps what the person changes in it (a dock opened from View while running stays open for the
next run); the window saves the drawing layout at exit, whichever page is shown.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray

DRAWING, RUN = "drawing", "run"
LAYOUT_VERSION = 1


class PageDocks:
    def __init__(self, window: Any, run_page: Any):
        self.window = window
        self.run_page = run_page
        self.layout = DRAWING
        self._kept: dict[str, QByteArray] = {}      # the layout not shown now, as saveState wrote it
        window.tabs.currentChanged.connect(lambda _index: self.follow_page())

    def follow_page(self) -> None:
        wanted = RUN if self.window.tabs.currentWidget() is self.run_page else DRAWING
        if wanted != self.layout:
            self._switch(wanted)

    def drawing_layout(self) -> None:
        """Back to the drawing layout (before the window saves its state)."""
        if self.layout != DRAWING:
            self._switch(DRAWING)

    def _switch(self, wanted: str) -> None:
        window = self.window
        self._kept[self.layout] = window.saveState(LAYOUT_VERSION)
        self.layout = wanted
        stored = self._kept.get(wanted)
        if stored is not None:
            window.restoreState(stored, LAYOUT_VERSION)
        else:           # the first run: no dock
            for dock in window.docks.values():
                dock.hide()
