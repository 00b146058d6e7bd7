"""Instruction counts of a benchmark's regions under valgrind's callgrind, for a shared machine
where wall time swings by a third from one minute to the next and CPU time by a tenth.

A region runs inside `operator.methodcaller`'s C call (`methodcaller_call`), a function nothing
else in the program calls: callgrind collects only while that call is on the stack
(`--toggle-collect`) and writes one profile part as it returns (`--dump-after`), so each region's
count is its own, in the order the regions ran.
"""
from __future__ import annotations

import operator
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_MARK = "methodcaller_call"


class _Region:
    def enter(self, fn: Callable[[], Any]) -> Any:
        return fn()


def counted(fn: Callable[[], Any]) -> Any:
    """`fn()`, inside the one C call callgrind collects in (an ordinary call when not under valgrind)."""
    return operator.methodcaller("enter", fn)(_Region())


def available() -> bool:
    return shutil.which("valgrind") is not None


def run_counted(argv: list[str], workdir: Path, cwd: Path, env: dict[str, str] | None = None,
                timeout: float = 7200) -> tuple[list[int], str]:
    """Run `python argv` under callgrind; the instruction count of each `counted` region in turn,
    and the program's standard output."""
    out = workdir / "callgrind.out"
    cmd = ["valgrind", "--tool=callgrind", f"--toggle-collect={_MARK}", f"--dump-after={_MARK}",
           "--collect-atstart=no", f"--callgrind-out-file={out}", sys.executable, *argv]
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"valgrind exited {res.returncode}: {res.stderr[-2000:]}")
    parts = sorted(workdir.glob("callgrind.out.*"), key=lambda p: int(p.name.rsplit(".", 1)[1]))
    counts = [_total(p) for p in parts]
    for p in [out, *parts]:
        if p.exists():
            os.unlink(p)
    return [c for c in counts if c], res.stdout


def _total(part: Path) -> int:
    text = part.read_text(errors="replace")
    m = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    return int(m.group(1)) if m else 0
