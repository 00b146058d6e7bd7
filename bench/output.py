"""Benchmark: one output line of N MB with no newline until its end, through the local transport
(the path a step's output takes to the journal).  `python -m bench.output [MB ...]`."""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from app.remote.local import LocalTransport


def time_long_line(megabytes: int) -> float:
    with tempfile.TemporaryDirectory() as work:
        transport = LocalTransport("bench", workdir=Path(work))
        start = time.perf_counter()
        result = transport.run(f"head -c {megabytes * 1024 * 1024} /dev/zero | tr '\\0' x; echo", shell="bash",
                               on_output=lambda stream, line: None)
        seconds = time.perf_counter() - start
        if not result.ok:
            raise SystemExit(f"the benchmark step failed: {result.message}")
        return seconds


def main(argv: list[str]) -> int:
    for mb in [int(a) for a in argv] or [100, 300]:
        print(f"{mb} MB single output line: {time_long_line(mb):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
