"""The GUI thread owns Python's cyclic garbage collection (see topology/gc_pause.py for why).

`GuiCollector.install()` turns automatic collection off for the whole process and collects from
a timer on the GUI thread, generation by generation as the counts pass the thresholds (the way
pyqtgraph's own `util/garbage_collector.py` does).  A Qt object that ends up in a reference
cycle is therefore always destroyed on the GUI thread, whatever thread dropped it.

A full (generation 2) collection walks every object the process keeps, Qt wrappers included:
150,000 objects and 150–600 ms on the largest example, long enough to be felt when it lands on a
click.  Three things keep the walks rare and short (the first as CPython's own automatic mode):
- it runs only when the objects that reached generation 2 since the last one are a quarter of
  those it kept (CPython's `long_lived_pending > long_lived_total / 4`), so its cost stays in
  proportion to what was allocated instead of recurring every ten generation-1 collections;
- `settle()` runs after a bed is loaded: the modules, the views and the model that was just built
  live as long as the document, so they are frozen (`gc.freeze()`) and later collections do not
  rescan them; so is what the first full collection after it keeps (the views built in idle
  turns, the dashboard's late imports, the methodology's caches).  The bed before is unfrozen
  and collected first, so opening another bed frees the old one (what is frozen is still freed
  by reference count when dropped; only what is dropped inside a cycle waits for that open);
- while a worker holds `collector_paused()` (it is making a bed's worth of containers: validation,
  the methodology, a save), due collections wait for it to end (10 s at most): walking what it is
  making, at every tick, cost 0.1–0.25 s each on the 5,000-device bed, and most of it is freed by
  reference count when the job ends.  What the job hands back (the 5,000-device bed's procedure and
  findings: a million objects; sized by the blocks the job left allocated as it ended, since
  listing the young generation to count them cost 0.1–0.2 s) is frozen when it arrives instead
  of walked: three walks of it,
  young, middle and full, stalled the window for about a second after each edit.  It is freed by
  reference count when the next result replaces it (RSS stayed level over eight edits); should
  the frozen objects ever pass what the load left plus twice the largest result (garbage in
  cycles among them), they are walked once and frozen again.  Whether they might is judged by the
  interpreter's allocated blocks first: counting the frozen set follows its list, 0.1–0.5 s.
  Only once a bed is frozen: before that, a bulk is walked.

`CollectionWatch` counts collections that happen off the GUI thread (tests and the soak use it).
QtCore only (app/ never imports QtWidgets outside the GUI entry point).
"""
from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Any

from PySide6.QtCore import QObject, QTimer

from topology import gc_pause

INTERVAL_MS = 100
MAX_WAIT_FOR_PAUSE_S = 10.0     # a bulk job that runs longer gets its young garbage collected anyway
BULK_YOUNG = 200_000            # a bulk job's result beyond this (in allocated blocks: each object one
                                # at least) is frozen unwalked


class GuiCollector(QObject):
    _installed: GuiCollector | None = None
    # The test suite opens hundreds of beds in one process, each after the last: a full walk of
    # its ever larger heap at every open would cost it minutes, so it keeps small beds unfrozen.
    freeze_small_beds = True

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS):
        super().__init__(parent)
        self.thread_id = threading.get_ident()
        self.thresholds = gc.get_threshold()
        self.collections = [0, 0, 0]        # per generation, for tests and the soak
        self.full_deferred = 0              # times generation 2 was due by count but not worth its walk
        self._frozen = False
        self._long_lived = 0                # objects generation 2 kept at the last full collection
        self._recheck_at = 0                # the generation-2 count at which to weigh a full one again
        self._freeze_next_full = False      # the first full collection after a load freezes what it kept
        self.waited_for_pause = 0           # ticks a due collection waited for a worker's bulk job
        self.bulk_frozen = 0                # times a bulk job's result was frozen instead of walked
        self._frozen_base: int | None = 0   # objects frozen after the load (and its first full walk); None:
                                            # not counted yet (settle leaves it to the first result)
        self._blocks_base = 0               # sys.getallocatedblocks() then
        self._blocks_looked = 0             # the blocks at which the frozen set was last counted, plus a result
        self._bulk_largest = 0              # the most blocks a bulk job left that were frozen at once
        self._results_based = False         # the base counts the bed's first results too
        self._held_since = 0.0
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
        if gc_pause.held():
            # A worker is building a bed's worth of containers (validation, methodology, a save):
            # walking them now, again at every tick, costs 0.1–0.25 s each time, and most are
            # gone (by reference count) when it ends.  Wait for the end, within reason.
            now = time.monotonic()
            self._held_since = self._held_since or now
            if now - self._held_since < MAX_WAIT_FOR_PAUSE_S:
                self.waited_for_pause += 1
                return 0
        self._held_since = 0.0
        # the count is allocations less deallocations: a result replacing the one before (freed
        # from the frozen set) leaves it near zero while a million new objects wait in generation 0;
        # the bulk jobs measure what they leave in the interpreter's blocks, so their results need
        # no list of the young generations (0.1–0.2 s for a million); other young objects do
        made = gc_pause.take_made() if self._frozen else 0
        if self._frozen and made <= BULK_YOUNG:
            made = len(gc.get_objects(0)) + len(gc.get_objects(1))
        if made > BULK_YOUNG:
            # a worker's result has arrived (a big bed's procedure, its findings): walking it in
            # three generations would cost a second each; it lives until the next edit replaces
            # it, and is freed then by reference count, frozen or not
            self.count_frozen_after_load()      # the load's freeze alone, before this result joins it
            gc.freeze()
            self.bulk_frozen += 1
            self._bulk_largest = max(self._bulk_largest, made)
            if self._frozen_may_have_grown():
                frozen = gc.get_freeze_count()
                if frozen <= (self._frozen_base or 0) + 2 * self._bulk_largest / self._blocks_per_object():
                    return 0
                if not self._results_based:
                    # a bed's first results (findings as they come, the procedure, the paths) live
                    # side by side and none was replaced yet: they are the bed's, not garbage, and
                    # walking them all held the GUI thread 1.6 s after a 5,000-device bed's first frame
                    self._results_based = True
                    self._count_frozen(frozen)
                    return 0
                # more frozen than the bed, its results and twice the largest result since: some may
                # be garbage in cycles (results are replaced, so the count stays level otherwise):
                # walk it all once
                gc.unfreeze()
                self.collections[2] += 1
                gc.collect()
                gc.freeze()
                self._count_frozen()
            return 0
        generation = 1 if c1 > t1 else 0            # the oldest one due, as CPython picks
        if c2 > t2 and c2 >= self._recheck_at:
            if self._full_is_worth_it():
                generation = 2
            else:
                self.full_deferred += 1
                self._recheck_at = c2 + t2          # weighing it costs a list of generation 2
        self.collections[generation] += 1
        found = gc.collect(generation)
        if generation == 2:
            if self._freeze_next_full:      # views, caches and late imports of the bed just opened
                gc.freeze()
                self._freeze_next_full = False
                self._count_frozen()
            self._long_lived, self._recheck_at = len(gc.get_objects(2)), 0
        return found

    def count_frozen_after_load(self) -> None:
        """The frozen set's count that `settle` left for later, now (nothing when it is known)."""
        if self._frozen_base is None and threading.get_ident() == self.thread_id:
            self._frozen_base = gc.get_freeze_count()

    def _count_frozen(self, frozen: int | None = None, *, later: bool = False) -> None:
        """The frozen set and the interpreter's blocks as the base (`frozen`: counted just now;
        `later`: the frozen set is counted before the next result joins it)."""
        self._frozen_base = None if later else gc.get_freeze_count() if frozen is None else frozen
        self._blocks_base = sys.getallocatedblocks()
        self._blocks_looked = 0

    def _blocks_per_object(self) -> float:
        """The load's allocated blocks per frozen object: a bulk job's blocks in objects."""
        return max(self._blocks_base / max(self._frozen_base or 0, 1), 1.0)

    def _frozen_may_have_grown(self) -> bool:
        """Whether the frozen set may have passed the load plus twice the largest result, judged
        by the interpreter's allocated blocks (a sum over its arenas, 2 ms).  Counting the frozen
        set itself (gc.get_freeze_count) follows its list of millions on the 5,000-device bed:
        0.1–0.5 s with the interpreter held, after every edit."""
        blocks = sys.getallocatedblocks()
        bar = max(self._blocks_base + 2 * self._bulk_largest, self._blocks_looked)
        if blocks <= bar:
            return False
        self._blocks_looked = blocks + self._bulk_largest     # counted now: again a result later
        return True

    def _full_is_worth_it(self) -> bool:
        pending = len(gc.get_objects(2)) - self._long_lived
        return pending > self._long_lived // 4

    def settle(self, large: bool) -> None:
        """A bed was loaded: collect what a frozen bed before it left, then freeze what lives on.

        A large bed is frozen as it is when nothing was frozen before: the walk found no cycle to
        free after loading the canvas benchmark's 5,000-device bed (0 of 394,000 objects) and held
        the GUI thread for 0.1–0.4 s while its validation had just started.  For a small one only
        the young generations are collected first (a full walk would add a pause to every open).
        What either leaves frozen is collected at the next open, which walks everything once."""
        if threading.get_ident() != self.thread_id:
            return
        gc_pause.take_made()                  # the load's own blocks are the bed, frozen here, not a result
        walk_all = self._frozen               # the old bed's cycles
        if self._frozen:
            gc.unfreeze()
            self._frozen = False
        if walk_all:
            gc.collect()
        if not (large or self.freeze_small_beds):
            return
        if not (walk_all or large):
            gc.collect(1)
        gc.freeze()
        self._frozen = True
        # a large bed's frozen set is counted after its first frame (`count_frozen_after_load`), or before
        # the first result joins it: counting follows its list, 25-70 ms of the GUI thread on the
        # 5,000-device bed, between its read and its first frame
        self._count_frozen(later=large)
        self._bulk_largest = 0
        self._results_based = False
        self._long_lived, self._recheck_at = 0, 0
        self._freeze_next_full = True


LARGE_BED = 2_000       # servers, VMs, switches and arrays together


def settle_after_load(bed: Any) -> None:
    """After a bed is loaded in the GUI process (nothing to do in the command line)."""
    collector = GuiCollector.installed()
    if collector is not None:
        size = len(bed.servers) + len(bed.vms) + len(bed.switches) + len(bed.arrays)
        collector.settle(size >= LARGE_BED)


def count_frozen_after_load() -> None:
    """After a loaded bed's first frame: what `settle_after_load` left to count (nothing in the command line)."""
    collector = GuiCollector.installed()
    if collector is not None:
        collector.count_frozen_after_load()


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
