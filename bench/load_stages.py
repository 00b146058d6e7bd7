"""Where the load of the 2,000-host bed goes, step by step (`python -m bench.load_stages`).

The load row of `python -m bench` is one figure; this prints what it is made of, each step
timed on its own (best of N, settled heap, collector off as `fileformat.loads` runs it), so
that the floor of each part of the loader can be seen:

    pre-scan      the byte and pattern checks that decide the fast path may be taken
    rapidyaml     parse in place and write the tree out as JSON (C++)
    depth         the nesting bound
    JSON decode   the C decoder, with the duplicate-key hook
    quoted text   the check that text rapidyaml wrote as a string reads as text
    model build   the generated builders (one object per component, every field checked)
    load checks   slot ranges and counts checked before the index
    references    every reference resolved against the index

The steps call the loader's own functions in the order `yaml_fast.parse` and
`fileformat._loads` call them, and the bed they build is compared with `fileformat.loads`'s,
so a change to the loader that the steps here miss stops the benchmark instead of timing
something else.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench.model_rows import BIG


def _stages(text: str) -> tuple[list[tuple[str, float]], Any]:
    from topology import fileformat, load_checks, yaml_fast
    from topology.model import Bed

    times: list[tuple[str, float]] = []

    def timed(name: str, step: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        result = step()
        times.append((name, time.perf_counter() - start))
        return result

    raw = text.encode("utf-8")
    if timed("pre-scan", lambda: yaml_fast._suspect(text, raw)):
        raise SystemExit("the bed does not take the fast path; these stages would not be the load's")
    js = timed("rapidyaml parse + JSON out", lambda: yaml_fast._as_json(raw))
    timed("depth bound", lambda: yaml_fast._too_deep(js))
    data = timed("JSON decode (duplicate-key hook)",
                 lambda: json.loads(js, object_pairs_hook=yaml_fast._mapping, parse_float=yaml_fast._float))

    def quoted_text() -> None:
        for found in yaml_fast._UNSURE_TEXT.finditer(js):
            yaml_fast._reads_as_written(found.group(1).decode(), bool(found.group(2)), text)
    timed("quoted-text checks", quoted_text)
    builder = fileformat._Builder()
    bed = timed("model build", lambda: builder.build(Bed, data, ()))
    marks = fileformat._Marks(text)
    timed("load checks", lambda: load_checks.check(bed, marks))
    timed("references", lambda: fileformat.check_references(bed))
    if builder.problems:
        raise SystemExit(f"the bed has problems: {builder.problems[:3]}")
    return times, bed


def measure(text: str, repeat: int) -> tuple[dict[str, float], float]:
    """Best time of each step and of the whole `fileformat.loads`, each from a settled heap."""
    from topology import fileformat
    best: dict[str, float] = {}
    whole = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            times, stepped = _stages(text)
            for name, seconds in times:
                best[name] = min(best.get(name, seconds), seconds)
            start = time.perf_counter()
            loaded = fileformat.loads(text)
            whole = min(whole, time.perf_counter() - start)
        finally:
            gc.enable()
        if stepped != loaded:
            raise SystemExit("the steps built another bed than fileformat.loads: bench/load_stages.py "
                             "no longer follows the loader")
        del stepped, loaded
    return best, whole


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.load_stages", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the 2,000-host bed")
    ns = ap.parse_args(argv)
    from topology.fileformat import save
    from topology.synthetic import generate
    size = {k: max(1, int(v * ns.scale)) for k, v in BIG.items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.yaml")
        save(generate(**size, pins=False, scenarios=True), path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
    best, whole = measure(text, ns.repeat)
    total = sum(best.values())
    print(f"Load of the synthetic bed ({size['hosts']} hosts, {size['vms']} VMs, {len(text) / 1e6:.1f} MB), "
          f"best of {ns.repeat}:")
    for name, seconds in best.items():
        print(f"  {name:<36}{seconds:8.3f} s{seconds / total:8.0%}")
    print(f"  {'sum of the steps':<36}{total:8.3f} s")
    print(f"  {'fileformat.loads, whole':<36}{whole:8.3f} s   (target for the full bed: < 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
