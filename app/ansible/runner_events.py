"""What an ansible-runner event says about the task it reports: its journal status, its exit
status and the message a person reads."""
from __future__ import annotations

import queue
import re
import time
from collections.abc import Iterator

from app.run import journal as J

_TIMED_OUT = re.compile(r"expected time frame|timed out", re.I)


def status_of(kind: str, data: dict) -> str:
    if kind == "runner_on_unreachable":
        return J.UNREACHABLE
    msg = str((data.get("res") or {}).get("msg", ""))
    return J.TIMEOUT if _TIMED_OUT.search(msg) else J.FAILED


def rc_of(data: dict) -> int | None:
    rc = (data.get("res") or {}).get("rc")
    return rc if isinstance(rc, int) and not isinstance(rc, bool) else None


def message_of(data: dict) -> str:
    res = data.get("res") or {}
    msg = str(res.get("msg", "") or "").strip()
    task = str(data.get("task", ""))
    if "Host key verification failed" in msg:
        msg += " (accept the host's key first: run the pre-flight check, or --trust its fingerprint)"
    if isinstance(res.get("rc"), int) and res.get("rc"):
        msg = f"exit status {res['rc']}" + (f": {msg}" if msg and msg != "non-zero return code" else "")
    return f"{task}: {msg}" if msg else f"{task} failed"


def taken(events: queue.SimpleQueue) -> Iterator[dict]:
    """Each event put on `events` until None, and an empty one (the consumer's idle work) at least
    every 50 ms, events or not, and once at the end: the stage ends the hosts report beside
    Ansible's events (app.ansible.stage_gates) are read that often."""
    looked = time.monotonic()
    while True:
        try:
            event = events.get(timeout=0.05)
        except queue.Empty:
            event = {}
        if event is None:
            yield {}
            return
        if event:
            yield event
        if not event or time.monotonic() - looked >= 0.05:
            looked = time.monotonic()
            yield {}
