"""The cyclic garbage collector held off while a bed is turned into another form.

Loading, writing and rendering a 2,000-host bed make ~10^5 containers that live on (the
model, its plain data); the collector would rescan all of them again and again while they
are made, and cost as much as the work itself (a third of a save after one edit).  Nothing
made there forms a cycle that must be freed early, so collection waits until the end.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
