"""Work a worker may abandon midway: the bed it reads was edited, and its result would be thrown away.

The application's bed readers take turns (app/background.py), so a methodology run that an edit made
out of date held back the next edit's findings until it ended (seconds on a 5,000-device bed).  Long
passes call `check()` between their pieces; inside `abandoned_when(asked)` it raises Abandoned once
`asked()` is true, and the reader lets go of its turn.  Outside (the command line) it does nothing.
Abandoned is a BaseException: a rule's or a template's own `except Exception` must not take it for
their failure.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Abandoned(BaseException):
    """The work was given up: what it would return is no longer wanted."""


_local = threading.local()


@contextmanager
def abandoned_when(asked: Callable[[], bool]) -> Iterator[None]:
    before = getattr(_local, "asked", None)
    _local.asked = asked
    try:
        yield
    finally:
        _local.asked = before


def check() -> None:
    asked = getattr(_local, "asked", None)
    if asked is not None and asked():
        raise Abandoned
