"""A hang in the suite is never silent.

pytest-timeout's thread method needs the interpreter lock to print anything, and a deadlock
between the GUI thread and a worker (each holding what the other waits for, one of them the
interpreter lock) starves it: the suite would stop at 97 % and say nothing until CI's own limit.
Two watchers that need no interpreter lock take over:

- in the test process, faulthandler's watchdog (a C thread) dumps every Python thread's stack
  and ends the process a while after pytest-timeout should have ended the test (`arm`/`disarm`
  around each test); xdist then reports the test as crashed and replaces the worker;
- a small process of its own (this file run as a script, one per test process) reads which test
  runs and until when; shortly before faulthandler fires it prints the native stacks of every
  thread with gdb, where gdb is installed (the stack dump that showed the deadlock of issue 24).

Both write to the test process's standard error, which CI prints.
"""
from __future__ import annotations

import faulthandler
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MARGIN_S = 60           # after the test's own timeout: pytest-timeout speaks first when it can
NATIVE_LEAD_S = 20      # the native dump comes this long before faulthandler ends the process

_beacon: Path | None = None
_stderr: int | None = None      # the process's own standard error, kept before a test captures fd 2


def start(folder: Path) -> None:
    """In the test process, once, before any test runs: the watcher process and its beacon file."""
    global _beacon, _stderr
    _stderr = os.dup(2)
    _beacon = folder / f"hang-beacon-{os.getpid()}"
    _beacon.write_text("")
    subprocess.Popen([sys.executable, __file__, str(os.getpid()), str(_beacon)],
                     stdin=subprocess.DEVNULL, stdout=_stderr, stderr=_stderr, start_new_session=True)


def arm(test_id: str, timeout_s: float) -> None:
    limit = timeout_s + MARGIN_S
    if _stderr is not None:
        os.write(_stderr, b"")      # still open: faulthandler writes to it without the interpreter lock
    faulthandler.dump_traceback_later(limit, exit=True, file=_stderr if _stderr is not None else sys.__stderr__)
    if _beacon is not None:
        _beacon.write_text(f"{time.time() + limit - NATIVE_LEAD_S:.0f} {test_id}\n")


def disarm() -> None:
    faulthandler.cancel_dump_traceback_later()
    if _beacon is not None:
        _beacon.write_text("")


def _watch(pid: int, beacon: Path) -> None:
    dumped = ""
    while True:
        time.sleep(2)
        try:
            os.kill(pid, 0)
            text = beacon.read_text().strip()
        except (OSError, ValueError):
            return          # the test process is gone
        if not text or text == dumped:
            continue
        deadline, _, test_id = text.partition(" ")
        if time.time() < float(deadline):
            continue
        dumped = text
        if _ended(pid):
            print(f"\n=== test process {pid} ended during {test_id} (its timeout, or a crash) ===",
                  file=sys.stderr, flush=True)
            return
        print(f"\n=== {test_id} hangs in test process {pid}: native stacks of every thread ===",
              file=sys.stderr, flush=True)
        gdb = shutil.which("gdb")
        if gdb is None:
            print("(gdb is not installed: only the Python stacks follow)", file=sys.stderr, flush=True)
            continue
        subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-iex", "set auto-load safe-path /",
                        "-ex", "set pagination off", "-ex", "thread apply all bt 40"], stdin=subprocess.DEVNULL,
                       stdout=sys.stderr, stderr=subprocess.STDOUT, timeout=120, check=False)


def _ended(pid: int) -> bool:
    """Gone, or a zombie its parent has not reaped yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return any(line.startswith("State:") and "Z" in line.split()[1] for line in status.splitlines())


if __name__ == "__main__":
    _watch(int(sys.argv[1]), Path(sys.argv[2]))
