"""Benchmark: methodology generation for a 500-host bed (target: under 1 s).

    python3 -m bench.methodology [--repeat N]

Prints, for a synthetic bed of 500 hosts, 2,000 VMs, 10 arrays and 500 disks: the time to
generate the procedure from findings already at hand (what the GUI does: the live validator has
them), the time including validation, the Markdown rendering, and the same for the seed examples.
Timings are the best of N runs (wall clock and CPU), which is what the target is about rather
than the noise of a busy machine.
"""
from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

TARGET_S = 1.0
ROOT = Path(__file__).resolve().parent.parent


def _best(fn, repeat: int) -> tuple[float, float, object]:
    wall, cpu, result = [], [], None
    for _ in range(repeat):
        # each run starts from a settled heap: the previous run's result freed and collected
        # outside the measurement, as a run in a fresh process would find it
        result = None
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu), result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args(argv)

    from topology.fileformat import load
    from topology.methodology import generate, load_templates, to_markdown
    from topology.synthetic import generate as synthetic
    from topology.validation import validate

    load_templates()  # parse the templates once, as a running application has them cached
    from topology.model import RunPlan
    bed = synthetic(hosts=500, vms=2000, arrays=10, disks=500)
    # synthetic hosts name no OS: make them half Windows Server 2016, half Ubuntu, so that commands are
    # rendered too (a host with no stated version gets its versioned steps by hand)
    for i, s in enumerate(bed.servers):
        s.platform = "windows" if i % 2 == 0 else "linux"
        s.os = "Windows Server 2016 Datacenter" if i % 2 == 0 else "Ubuntu 22.04 LTS"
    bed.run_plan = RunPlan(repetitions=3, score="median", reboot=True, idle_minutes=10, duration_minutes=30,
                           counter_hosts=[s.id for s in bed.servers], sample_interval_s=1)
    findings = validate(bed)
    wall, cpu, meth = _best(lambda: generate(bed, findings=findings), ns.repeat)
    steps = sum(len(s.steps) for s in meth.sections)
    auto = sum(1 for s in meth.steps() if s.automation)
    print(f"methodology, 500 hosts (Windows/Linux) / 2000 VMs / 10 arrays / 500 disks: {steps} steps "
          f"({auto} automated)")
    print(f"  generate (findings at hand):   {wall:.3f} s wall, {cpu:.3f} s CPU   "
          f"target < {TARGET_S:.1f} s   ratio {wall / TARGET_S:.2f}")
    wall_v, cpu_v, _ = _best(lambda: generate(bed), max(1, ns.repeat // 2))
    print(f"  generate incl. validation:     {wall_v:.3f} s wall, {cpu_v:.3f} s CPU   "
          f"ratio {wall_v / TARGET_S:.2f}")
    wall_md, _, text = _best(lambda: to_markdown(meth), ns.repeat)
    print(f"  to_markdown:                   {wall_md:.3f} s ({len(text) / 1e6:.1f} MB of Markdown)")

    cold = time.perf_counter()
    from topology import methodology as mod
    mod.clear_template_cache()
    load_templates()
    print(f"  template parsing (cold):       {time.perf_counter() - cold:.3f} s")

    for path in sorted((ROOT / "resources" / "examples").glob("*.yaml")):
        seed = load(path)
        f = validate(seed)
        w, _, m = _best(lambda seed=seed, f=f: generate(seed, findings=f), ns.repeat)
        print(f"  {path.stem:<28} {sum(len(s.steps) for s in m.sections):>5} steps  {w * 1000:7.1f} ms")
    return 0 if wall < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
