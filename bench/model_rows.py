"""The model rows of `make bench`: load, save, validation and memory on the synthetic bed at 1x
and at 4x, the two sizes alternating, and whether each row grows linearly with the bed.

Each pass runs in a fresh process (peak memory is its own) and measures every region once; the
1x and 4x passes alternate, `repeat` times each, and a row's figure is its best pass.  On a
shared machine wall time swings by a third between minutes, so a row judges its growth on CPU
time (what the process itself spent; wall time beside it) or, with `--instructions`, on the
instructions callgrind counts, which do not depend on the machine's load at all.
"""
from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIG = dict(hosts=2000, vms=20000, arrays=100, disks=10000)
LINEAR = 4.4            # 4x the bed in at most 4.4x the 1x figure (a tenth of slack)

# measure, what the row says, target at 1x, unit
ROWS = (("load", "load", 1.0, "s"),
        ("save", "save", 1.0, "s"),
        ("edited_save", "save after one edit, over the opened file's text", 1.0, "s"),
        ("validate", "validation, reference (paths derived)", 0.5, "s"),
        ("scenario_pass", "validation, per scenario (scenario pass on its own)", 0.2, "s"))
MEMORY_TARGET_4X_MB = 1000.0
MEMORY_TARGET_1X_MB = 500.0


def bed_size(scale: float) -> dict[str, int]:
    return {k: max(1, int(v * scale)) for k, v in BIG.items()}


def write_bed(path: str, scale: float) -> float:
    from topology.fileformat import save
    from topology.synthetic import generate
    t0 = time.perf_counter()
    save(generate(**bed_size(scale), pins=False, scenarios=True), path)
    return time.perf_counter() - t0


# ------------------------------------------------------------------ one pass, in its own process
def _timed(fn: Callable[[], Any], count: bool) -> tuple[dict[str, float], Any]:
    """`fn()` timed (or counted) with the collection of what it leaves behind, and nothing else's.

    The work runs with the collector paused (topology/gc_pause.py), so what it made is collected
    after it: the first allocation once collection is back on walks every young object.  Where that
    walk landed depended on the interpreter's counters: on the 4x bed a walk of the reference
    pass's 10^6 objects fell inside the scenario pass in some runs (0.34-0.8 s) and not in others.
    So a region starts with nothing left to collect (a full collection before it, untimed) and ends
    with its own young objects walked (`gc.collect(1)`, timed: what the next collections would
    cost for them)."""
    gc.collect()
    def settled() -> Any:
        out = fn()
        gc.collect(1)
        return out
    if count:
        from bench.instructions import counted
        return {}, counted(settled)
    wall, cpu = time.perf_counter(), time.process_time()
    out = settled()
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}, out


def scenario_pass_parts(bed: Any) -> tuple[Callable[[], list], Callable[[], list]]:
    """The reference validation and the scenario pass that follows it, as `validate(bed)` runs
    them on a bed whose reference is the bed as drawn (the synthetic bed's), so the pass is timed
    on its own: it starts from the reference's context (paths and placement worked out)."""
    from topology.gc_pause import collector_paused
    from topology.index import BedIndex
    from topology.validation import runner
    from topology.validation.context import Context
    runner._load_rule_modules()
    assert runner._reference_scenario(bed) is None, "the pass is timed on a bed drawn as its reference"
    state: dict[str, Any] = {}

    def reference() -> list:
        with collector_paused():
            idx = BedIndex(bed)
            ctx = Context(bed, idx)
            state.update(idx=idx, ctx=ctx, found=runner._run(ctx, None, None))
        return state["found"]

    def scenarios() -> list:
        with collector_paused():
            return runner._scenario_findings(bed, state["idx"], None, state["found"], state["ctx"], scoped=True)
    return reference, scenarios


def child_pass(path: str, count: bool) -> dict[str, Any]:
    """Every region once: load, save, the designer's open and save after an edit, reference
    validation, scenario pass.  Peak memory is the designer's: one bed open with its file's text
    (what it saves over), validated."""
    from topology import roundtrip
    from topology.fileformat import load, save
    from topology.validation import validate
    out_path = path + f".saved-{os.getpid()}.yaml"
    _warm_up(out_path)
    took: dict[str, dict[str, float]] = {}
    gc.collect()
    took["load"], loaded = _timed(lambda: load(path), count)
    took["save"], _ = _timed(partial(save, loaded, out_path), count)
    del loaded
    gc.collect()
    bed, source = roundtrip.load(path)
    bed.servers[0].memory_gb += 1
    took["edited_save"], _ = _timed(lambda: roundtrip.save(bed, out_path, source), count)
    took["validate"], _ = _timed(lambda: validate(bed, reference_only=True), count)
    reference, scenarios = scenario_pass_parts(bed)
    reference()
    took["scenario_pass"], extra = _timed(scenarios, count)
    os.unlink(out_path)
    return {"took": took, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "scenarios": len(bed.scenarios), "scenario_findings": len(extra), "hosts": len(bed.servers),
            "vms": len(bed.vms), "arrays": len(bed.arrays)}


def _warm_up(scratch: str) -> None:
    """The same work on a two-host bed first, untimed: what is imported or built once per process
    (rule modules, the loader's tables) is not counted in the 1x figure and left out of the 4x."""
    from topology import roundtrip
    from topology.fileformat import load, save
    from topology.synthetic import generate
    from topology.validation import validate
    save(generate(hosts=2, vms=4, arrays=1, disks=10, pins=False, scenarios=True), scratch)
    bed, source = roundtrip.load(scratch)
    roundtrip.save(bed, scratch, source)
    save(load(scratch), scratch)
    validate(bed)
    os.unlink(scratch)


def _child_argv(path: str, count: bool) -> list[str]:
    return ["-m", "bench", "--child", "pass-count" if count else "pass", path]


def run_pass(path: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, *_child_argv(path, False)], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def run_counted_pass(path: str, workdir: Path) -> dict[str, Any]:
    from bench.instructions import run_counted
    counts, stdout = run_counted(_child_argv(path, True), workdir, ROOT)
    data = json.loads(stdout.strip().splitlines()[-1])
    names = list(data["took"])
    if len(counts) != len(names):
        raise RuntimeError(f"callgrind gave {len(counts)} regions for {len(names)}: {counts}")
    data["took"] = {n: {"instructions": float(c)} for n, c in zip(names, counts)}
    return data


# ------------------------------------------------------------------ the parent: alternate, report
def measure(scale: float, repeat: int, factor: int, instructions: bool) -> tuple[dict, dict, dict]:
    """Write the 1x and the `factor`x bed, run their passes alternately; (info, best 1x, best Nx)."""
    info: dict[str, Any] = {}
    runs: dict[int, list[dict]] = {1: [], factor: []}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for f in runs:
            paths[f] = os.path.join(tmp, f"bed-{f}x.yaml")
            info[f"gen_s_{f}"] = write_bed(paths[f], scale * f)
            info[f"mb_{f}"] = os.path.getsize(paths[f]) / 1e6
        for _ in range(1 if instructions else repeat):
            for f in runs:
                runs[f].append(run_counted_pass(paths[f], Path(tmp)) if instructions else run_pass(paths[f]))
    return info, _best(runs[1]), _best(runs[factor])


def count_to_judge(scale: float, factor: int, faster: list[str]) -> list[str]:
    """Rows whose CPU time grew faster than the bed, judged again on instructions (callgrind): CPU
    time also grows with how far a bigger bed's data sits from the processor, and on a machine
    with 1 MiB of L2 cache a core a dict built from 80,000 VMs takes 5.5x the time of one from
    20,000.  The count grows only with the work done, so an algorithm that grows faster
    than the bed still shows and a bed that outgrows the caches does not.  Returns the rows whose
    count grows faster too (callgrind missing: the CPU verdict stands)."""
    from bench.instructions import available
    if not available():
        print("valgrind not installed: the CPU-time verdict stands")
        return faster
    n = bed_size(scale)["vms"]
    _dict_build_seconds(n)      # warm: the first timings of a process run slow
    small, big_build = (_dict_build_seconds(n * k) for k in (1, factor))
    print(f"\nCPU time grew faster than the bed on {len(faster)} row(s).  On this machine a dict of {n:,} VMs' "
          f"hosts takes {small * 1e3:.2f} ms to build and one of {n * factor:,} {big_build * 1e3:.2f} ms "
          f"({big_build / small:.2f}x for the same work per VM).  Counting instructions under callgrind (one pass "
          "each size, minutes) to tell work that grows faster from a bed that outgrows the caches:")
    info, one, big = measure(scale, 1, factor, True)
    return report(info, one, big, factor, True)


@dataclass(slots=True)
class _Named:
    id: str
    host: str


def _dict_build_seconds(entries: int) -> float:
    """Best time to build {id: host} from `entries` objects, as the placement does for every VM: the
    same work per entry at any size."""
    objects = [_Named(f"vm-{i:06d}", f"host-{i % 1000:04d}") for i in range(entries)]
    best = float("inf")
    for _ in range(9):
        t0 = time.perf_counter()
        {o.id: o.host for o in objects}
        best = min(best, time.perf_counter() - t0)
    return best


def _best(passes: list[dict]) -> dict:
    best = dict(passes[0])
    best["took"] = {name: {k: min(p["took"][name][k] for p in passes) for k in passes[0]["took"][name]}
                    for name in passes[0]["took"]}
    best["peak_rss_mb"] = min(p["peak_rss_mb"] for p in passes)
    return best


def report(info: dict, one: dict, big: dict, factor: int, instructions: bool) -> list[str]:
    """Print the rows; the rows that grow faster than the bed (empty when every row is linear)."""
    limit = LINEAR * factor / 4
    print(f"Synthetic bed: {one['hosts']} hosts, {one['vms']} VMs, {one['arrays']} arrays "
          f"({info['mb_1']:.1f} MB YAML); {factor}x: {big['hosts']} hosts ({info[f'mb_{factor}']:.1f} MB)")
    key = "instructions" if instructions else "cpu"
    unit_of = "instructions (callgrind)" if instructions else "best wall s (CPU s)"
    print(f"{'measure':<54}{'1x':>16}{f'{factor}x':>16}{'target 1x':>11}{'growth':>9}  {unit_of}")
    bad: list[str] = []
    worst = 0.0
    scen1, scenN = max(1, one["scenarios"]), max(1, big["scenarios"])
    for name, label, target, _unit in ROWS:
        a, b = one["took"][name], big["took"][name]
        div1, divN = (scen1, scenN) if name == "scenario_pass" else (1, 1)
        growth = (b[key] / divN) / max(a[key] / div1, 1e-12)
        if instructions:
            shown1, shownN, tgt = f"{a[key] / div1:.3e}", f"{b[key] / divN:.3e}", ""
        else:
            shown1 = f"{a['wall'] / div1:.3f} ({a['cpu'] / div1:.2f})"
            shownN = f"{b['wall'] / divN:.3f} ({b['cpu'] / divN:.2f})"
            tgt = f"< {target:g} s"
            worst = max(worst, a["wall"] / div1 / target)
        flag = "" if growth <= limit else f"  NOT LINEAR (> {limit:.1f}x)"
        if flag:
            bad.append(f"{label}: {growth:.2f}x")
        print(f"{label:<54}{shown1:>16}{shownN:>16}{tgt:>11}{growth:>8.2f}x{flag}")
    m1, mN = one["peak_rss_mb"], big["peak_rss_mb"]
    flag = ""
    if mN / m1 > limit or mN > MEMORY_TARGET_4X_MB * factor / 4:
        flag = f"  OVER (< {MEMORY_TARGET_4X_MB * factor / 4:g} MB, linear)"
        bad.append(f"peak memory: {mN:.0f} MB, {mN / m1:.2f}x")
    print(f"{'peak memory (RSS)':<54}{m1:>13.0f} MB{mN:>13.0f} MB{f'< {MEMORY_TARGET_1X_MB:g} MB':>11}"
          f"{mN / m1:>8.2f}x{flag}")
    if not instructions:
        print("all 1x targets met" if worst <= 1 else f"1x TARGET MISSED (worst ratio {worst:.2f}x)")
    judged = "instructions" if instructions else "CPU time"
    print(f"every row linear in {judged}" if not bad else f"LINEAR EXCEEDED in {judged}: " + "; ".join(bad))
    return bad
