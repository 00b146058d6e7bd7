"""Benchmarks with printed figures and ratios against the targets (`make bench`).

Each measurement runs in a fresh subprocess so peak memory (ru_maxrss) is the
measurement's own.  Timings are the best of a few repetitions, which is what the
targets are about (not the noise of a busy machine).  The model rows run on the synthetic bed
and on four times it, alternating (`bench/model_rows.py`); the command exits 1 when a row grows
faster than the bed: in CPU time and then in the instructions callgrind counts (a bed four times
bigger also outgrows the processor's caches, which CPU time shows and the count does not;
`--cpu-only` judges on CPU time alone).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench import model_rows

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "resources" / "examples"


def _child_seeds(repeat: int) -> dict:
    from topology.fileformat import load
    from topology.validation import validate
    out = {}
    for f in sorted(EXAMPLES.glob("*.yaml")):
        bed = load(f)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            validate(bed)
            times.append(time.perf_counter() - t0)
        out[f.stem] = min(times)
    return out


def _run_child(kind: str, *args: str) -> dict:
    cmd = [sys.executable, "-m", "bench", "--child", kind, *args]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description="Testbed Studio benchmarks")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=3, help="passes of each bed size, alternating (best is shown)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the 2,000-host bed")
    ap.add_argument("--factor", type=int, default=4, help="the bigger bed, in times the first (default 4)")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions under valgrind's callgrind instead of timing (one pass each)")
    ap.add_argument("--model-only", action="store_true", help="only the load/validate benchmark")
    ap.add_argument("--cpu-only", action="store_true",
                    help="judge growth on CPU time alone: no count under callgrind of a row that grows faster")
    ap.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.child in ("pass", "pass-count"):
        print(json.dumps(model_rows.child_pass(ns.args[0], count=ns.child == "pass-count")))
        return 0
    if ns.child == "seeds":
        print(json.dumps(_child_seeds(ns.repeat)))
        return 0

    info, one, big = model_rows.measure(ns.scale, ns.repeat, ns.factor, ns.instructions)
    not_linear = model_rows.report(info, one, big, ns.factor, ns.instructions)
    if not_linear and not ns.instructions and not ns.cpu_only:
        not_linear = model_rows.count_to_judge(ns.scale, ns.factor, not_linear)
    if not ns.instructions:
        seeds = _run_child("seeds", "--repeat", str(max(ns.repeat, 5)))
        print(f"{'measure':<48}{'value':>12}{'target':>12}{'ratio':>9}")
        for name, seconds in sorted(seeds.items()):
            print(f"{'validate ' + name:<48}{seconds * 1000:>9.2f} ms{'< 20 ms':>12}{seconds * 1000 / 20:>8.2f}x")
    if not ns.model_only and not ns.instructions:
        _run_other_benchmarks()
    if not_linear:
        print("\nLINEAR EXCEEDED (the model rows above): " + "; ".join(not_linear), file=sys.stderr)
        return 1
    return 0


OTHER_BENCHMARKS = ("bench.methodology", "bench.appendix", "bench.canvas", "bench.big_bed_gui", "bench.run",
                    "bench.output", "bench.dashboard", "bench.run_tab")


def _run_other_benchmarks() -> None:
    """The designer, methodology and appendix benchmarks, each in its own process."""
    import importlib.util
    env = {**os.environ}
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    for module in OTHER_BENCHMARKS:
        if importlib.util.find_spec(module) is None:
            continue
        print(f"\n== {module} ==", flush=True)
        subprocess.run([sys.executable, "-m", module], cwd=ROOT, env=env, check=False)


if __name__ == "__main__":
    sys.exit(main())
