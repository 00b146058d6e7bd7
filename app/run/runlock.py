"""One driver per run: the process that drives a run holds an exclusive lock on its folder.

The lock is `fcntl.flock` on `runs/<id>/driver.lock`, so the kernel drops it the moment the
driver dies (even by `kill -9`); the file also says who holds it (pid, machine, since when),
which is what a refused second driver is told.  A lock file left behind by a dead driver is
harmless: only the flock counts, never the file's presence.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path

from app.run.journal import now_iso

LOCK_NAME = "driver.lock"


class RunLocked(Exception):
    """Another process drives this run; the message says which and what to do."""


class RunLock:
    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME
        self._fd = -1

    def acquire(self) -> RunLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLocked(f"run {self.path.parent.name} is being driven by {holder_text(self.path)}; "
                            "a second driver would run its steps twice. Wait for it to finish or stop "
                            "that process, then resume.") from None
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": now_iso()})
                      + "\n").encode())
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)      # closing the descriptor drops the flock
            self._fd = -1


def is_driven(run_dir: Path) -> bool:
    """True while some process holds the run's lock."""
    path = Path(run_dir) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def holder_text(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return f"process {int(data['pid'])} on {data['host']} since {data['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"
