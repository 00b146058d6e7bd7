"""The GUI thread owns Python's cyclic garbage collection (see topology/gc_pause.py for why).

`GuiCollector.install()` turns automatic collection off for the whole process and collects from
a timer on the GUI thread, generation by generation as the counts pass the thresholds (the way
pyqtgraph's own `util/garbage_collector.py` does).  A Qt object that ends up in a reference
cycle is therefore always destroyed on the GUI thread, whatever thread dropped it.

`settle()` runs after a bed is loaded: the model that was just built lives as long as the
document, so it is frozen (`gc.freeze()`) and later collections do not rescan it; the bed
before it is unfrozen and collected first, so opening another bed frees the old one.

`CollectionWatch` counts collections that happen off the GUI thread (tests and the soak use it).
QtCore only (app/ never imports QtWidgets outside the GUI entry point).
"""
from __future__ import annotations

import gc
import threading
import time
from typing import Any

from PySide6.QtCore import QObject, QTimer

from topology import gc_pause

INTERVAL_MS = 100


class GuiCollector(QObject):
    _installed: GuiCollector | None = None

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.thread_id = threading.get_ident()
        self.thresholds = gc.get_threshold()
        self.collections = [0, 0, 0]        # per generation, for tests and the soak
        self._frozen = False
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)

    @classmethod
    def install(cls, parent: QObject | None = None) -> GuiCollector:
        """Called once on the GUI thread (the QApplication's); a second call returns the first."""
        if cls._installed is not None:
            return cls._installed
        collector = cls(parent)
        gc_pause.hand_to_owner()
        collector._timer.start()
        cls._installed = collector
        return collector

    @classmethod
    def installed(cls) -> GuiCollector | None:
        return cls._installed

    def collect_due(self) -> int:
        """Collect the generations whose counts passed their thresholds (the youngest first)."""
        if threading.get_ident() != self.thread_id:
            return 0            # never on another thread, whoever calls
        t0, t1, t2 = self.thresholds
        c0, c1, c2 = gc.get_count()
        if c0 <= t0:
            return 0
        generation = 2 if c2 > t2 else 1 if c1 > t1 else 0     # the oldest one due, as CPython picks
        self.collections[generation] += 1
        return gc.collect(generation)

    def settle(self, large: bool) -> None:
        """A bed was loaded: collect what a frozen bed before it left, then freeze a large one.

        Only a large bed is worth it: a full collection walks the whole heap (a small bed would
        pay more for the walk than its rescans ever cost)."""
        if threading.get_ident() != self.thread_id:
            return
        if self._frozen:
            gc.unfreeze()
            gc.collect()
            self._frozen = False
        if large:
            gc.collect()
            gc.freeze()
            self._frozen = True


LARGE_BED = 2_000       # servers, VMs, switches and arrays together


def settle_after_load(bed: Any) -> None:
    """After a bed is loaded in the GUI process (nothing to do in the command line)."""
    collector = GuiCollector.installed()
    if collector is not None:
        size = len(bed.servers) + len(bed.vms) + len(bed.switches) + len(bed.arrays)
        collector.settle(size >= LARGE_BED)


class CollectionWatch:
    """Records every collection that starts on a thread other than `gui_thread` (default: this one)."""

    def __init__(self, gui_thread: int | None = None):
        self.gui_thread = gui_thread if gui_thread is not None else threading.get_ident()
        self.off_thread: list[tuple[str, int]] = []     # (thread name, generation)
        self.on_thread = 0
        self.longest: dict[int, float] = {}              # generation -> the longest collection's seconds
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop":
            generation = info.get("generation", -1)
            took = time.perf_counter() - self._started
            self.longest[generation] = max(self.longest.get(generation, 0.0), took)
            return
        self._started = time.perf_counter()
        if threading.get_ident() == self.gui_thread:
            self.on_thread += 1
        else:
            self.off_thread.append((threading.current_thread().name, info.get("generation", -1)))

    def __enter__(self) -> CollectionWatch:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self._callback)
