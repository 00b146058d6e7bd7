"""Letting go of a big structure a piece at a time, so that other threads get the interpreter
between the pieces.

Dropping the last reference to a structure of 10^5-10^6 objects (a bed's index and the rules'
caches after a validation, a procedure's working tables) frees all of them in one C call, and
that call holds the interpreter lock from start to end: 60-80 ms on the 5,000-device bed, during
which the GUI thread cannot run a line of Python (it cannot even repaint).  `let_go` frees the
same objects a piece at a time from Python, so the lock changes hands between the pieces as it
does between any two lines (every switch interval).

Nothing is changed in what is let go: the objects are only freed in another order.  An object
something else still refers to is left alone (it lives on), and so is one in a reference cycle
(the collector frees it later, as it would have).
"""
from __future__ import annotations

import gc
import sys
import time
from typing import Any

NARROW = 16                 # members up to which a container is taken apart member by member
PIECE_S = 0.001             # what freeing one piece of a wide container's members may take
LONGEST_RUN = 512
_COLLECTIONS = (list, dict, set, frozenset, tuple)
_SAMPLE = 8                 # members looked at to tell whether a wide container's members are narrow


def let_go(scraps: list[Any]) -> None:
    """Free what `scraps` holds, a piece at a time.  The caller hands over the list and keeps no
    other reference to what is in it (`del` its names first): what is still referred to elsewhere
    is simply not freed.

    Objects (an index, a context) and narrow collections are taken apart member by member; the
    members of a wide collection (70,000 port references) are freed in runs whose length follows
    how long the last run took, unless a sample of them is wide too (then they are taken apart as
    well)."""
    stack = scraps
    getrefcount, is_tracked, referents = sys.getrefcount, gc.is_tracked, gc.get_referents
    while stack:
        obj = stack.pop()
        # only this loop holds it (the name and getrefcount's argument): taking its members out
        # first makes freeing it free it alone
        if not (is_tracked(obj) and getrefcount(obj) == 2):
            continue
        members = referents(obj)
        # an object's members are its fields, each maybe a big table of its own: each is looked at;
        # a collection's are alike (70,000 port references), judged by a sample
        taken_apart = len(members) <= NARROW or not isinstance(obj, _COLLECTIONS) or not _narrow(members)
        obj = None      # freed now, its members held by `members`
        if taken_apart:
            stack += members
        else:
            _free_in_runs(members, stack)
        del members


def _narrow(members: list[Any]) -> bool:
    """Whether the members of a wide collection look narrow themselves (a sample from each end;
    heavy ones the sample missed are caught by how long their run takes: `_free_in_runs`)."""
    sample = members[:_SAMPLE] + members[-_SAMPLE:]
    return all(len(gc.get_referents(m)) <= NARROW for m in sample if gc.is_tracked(m))


def _free_in_runs(members: list[Any], stack: list[Any]) -> None:
    """The members a run at a time: a run grows while runs are quick and shrinks when one is not,
    never past LONGEST_RUN (members that are only referred to cost nothing to drop, and a run grown
    on them must not then free thousands of members that are freed).  Members that turn out heavy
    (a run much slower than asked) are taken apart one by one on `stack` instead."""
    run = 8
    clock = time.thread_time       # the interpreter held, not the machine's other work
    while members:
        started = clock()
        del members[-run:]
        took = clock() - started
        if took < PIECE_S / 4:
            run = min(LONGEST_RUN, run * 2)
        elif took > 4 * PIECE_S:
            stack += members
            members.clear()
        elif took > PIECE_S:
            run = max(8, run // 2)
