"""Who runs Python's cyclic garbage collector, and holding it off while a bed is turned into
another form.

Loading, writing, validating and rendering a 2,000-host bed make ~10^5 containers that live on
(the model, its plain data); the collector would rescan all of them again and again while they
are made, and cost as much as the work itself.  Nothing made there forms a cycle that must be
freed early, so collection waits until the end: `collector_paused()`.

The switch is process-wide, so the pause is counted: two threads that pause at once nest, and
only the last one out turns collection back on — and only if it was on when the first came in.

In the GUI process the GUI thread owns collection (`app/gc_owner.py` calls `hand_to_owner()`):
automatic collection stays off for good and the GUI thread collects from a timer.  A collection
that a worker thread's allocation started would destroy whatever Qt objects the GUI thread had
just dropped on that worker, and PySide6 can then deadlock (the worker holds the interpreter
lock inside ~QObject, the GUI thread holds Qt's lock and waits for the interpreter).  So once an
owner is set, no pause ever turns collection back on.  The command line has no owner and keeps
automatic collection outside the pauses.
"""
from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_turn_back_on = False      # collection was on when the first holder came in
_owned = False             # an owner collects by itself: nobody else turns collection on
_made = 0                  # allocated blocks the bulk jobs left behind since the owner last asked


def hand_to_owner() -> None:
    """From now on automatic collection stays off; the caller's thread collects (app/gc_owner.py)."""
    global _owned, _turn_back_on
    with _lock:
        _owned = True
        _turn_back_on = False
        gc.disable()


def owned() -> bool:
    return _owned


def held() -> bool:
    """A bulk job is making its containers now (the owner's collections would walk them)."""
    return _holders > 0


def release_owner() -> None:
    """The owner is gone (its application quit, a test ends it): collection is automatic again
    unless a pause is still held (then the last holder turns it on)."""
    global _owned, _turn_back_on
    with _lock:
        _owned = False
        if _holders:
            _turn_back_on = True
        else:
            gc.enable()


def take_made() -> int:
    """The interpreter's allocated blocks that bulk jobs ended since the last call left behind (their
    results, mostly; what other threads allocated meanwhile counts too), and start counting again.
    The owner sizes a result by it: listing the young generation to count a million new objects
    held the GUI thread 0.1–0.2 s after each edit of the 5,000-device bed."""
    global _made
    with _lock:
        made, _made = _made, 0
    return made


@contextmanager
def collector_paused() -> Iterator[None]:
    global _holders, _turn_back_on, _made
    with _lock:
        if _holders == 0:
            _turn_back_on = gc.isenabled() and not _owned
        _holders += 1
        gc.disable()
    blocks = sys.getallocatedblocks()
    try:
        yield
    finally:
        made = sys.getallocatedblocks() - blocks
        with _lock:
            _made += max(made, 0)
            _holders -= 1
            if _holders == 0 and _turn_back_on and not _owned:
                gc.enable()
