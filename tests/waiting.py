"""Waiting in tests for something another process or thread does, bounded in time."""
from __future__ import annotations

import time

import pytest


def wait_for(predicate, seconds: float = 60, what: str = "") -> None:
    """Poll `predicate` until it holds; fail the test, naming `what`, after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")
