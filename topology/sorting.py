"""Sorting a long list on a worker without holding the interpreter lock for the whole sort.

`list.sort` compares its keys in C from start to end: the 25,000 findings of the 5,000-device bed
by (severity, code, subjects, ...) took 15-20 ms, the procedure's sections up to 12 ms, and the
GUI thread waited for the lock all that time.  `sort_in_pieces` sorts runs of PIECE items and
merges them two at a time (each merge a linear pass of `list.sort` over two sorted runs), so no
single C call compares more than one merge's worth; the lock changes hands between them.  The
result is what `items.sort(key=key)` gives, ties included (the sort is stable).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

PIECE = 1024        # items sorted in one C call; merges compare at most the two runs' length


def sort_in_pieces(items: list[Any], key: Callable[[Any], Any]) -> None:
    """Sort `items` in place by `key`, as `items.sort(key=key)` does."""
    if len(items) <= PIECE:
        items.sort(key=key)
        return
    # each key with the item's place: ties keep their order, and the items are never compared
    keyed = [(key(item), place) for place, item in enumerate(items)]
    runs = [sorted(keyed[start:start + PIECE]) for start in range(0, len(keyed), PIECE)]
    del keyed
    while len(runs) > 1:
        merged = []
        for i in range(0, len(runs) - 1, 2):
            pair = runs[i] + runs[i + 1]
            pair.sort()         # two sorted runs: one merge
            merged.append(pair)
        if len(runs) % 2:
            merged.append(runs[-1])
        runs = merged
    items[:] = [items[place] for _, place in runs[0]]
