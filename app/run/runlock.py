"""One driver per run: the process that drives a run holds an exclusive lock on its folder.

The lock is `fcntl.flock` on `runs/<id>/driver.lock`, so the kernel drops it the moment the
driver dies (even by `kill -9`); the file also says who holds it (pid, machine, since when),
which is what a refused second driver is told.  A lock file left behind by a dead driver is
harmless: only the flock counts, never the file's presence.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
from collections.abc import Iterator
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


BED_CLAIM_WAIT_S = 30.0     # another start of the bed holds its claim for milliseconds, not longer


@contextlib.contextmanager
def bed_claim(runs_root: Path, bed_path: Path | str | None) -> Iterator[None]:
    """Held while a new run of a bed is checked against the runs driving it, created and locked:
    a second start of the same bed waits here and then finds the first run driven, whatever the
    timing (checking, then creating, then locking would let two starts both see no driver).
    The claim is an flock on `<state>/run-claims/<hash of runs folder and bed>.lock` (beside the
    runs, not among them: a runs folder holds run folders only); the kernel drops it when its
    holder dies."""
    from app.autosave import state_dir
    folder = state_dir() / "run-claims"
    folder.mkdir(parents=True, exist_ok=True)
    bed = str(Path(bed_path).resolve()) if bed_path else ""
    key = hashlib.sha256(f"{Path(runs_root).resolve()}\0{bed}".encode()).hexdigest()[:32]
    fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + BED_CLAIM_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RunLocked(f"another process has been starting a run of {bed_path} for "
                                    f"{BED_CLAIM_WAIT_S:g} s; try again when it has started") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)        # closing the descriptor drops the flock


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
