"""Benchmark: a ~100-page PDF appendix from a synthetic bed, against the 3 s target.

    python3 -m bench.appendix [--repeat 3] [--hosts 40] [--keep OUT.pdf]

Prints the page count and the best time of each phase over the repeats (validation,
methodology, tables, PDF layout and writing), the appendix time (tables + PDF, what
printing costs once findings and procedure are known, as in the GUI), the total from the
bed, and their ratios to the target.  Runs offscreen without a display.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 3.0
TARGET_PAGES = 100


def main(argv: list[str] | None = None) -> int:
    ap_ = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap_.add_argument("--repeat", type=int, default=3)
    ap_.add_argument("--hosts", type=int, default=40, help="synthetic hosts (40 gives about 100 pages)")
    ap_.add_argument("--keep", metavar="OUT.pdf", help="keep the last PDF here")
    ns = ap_.parse_args(argv)
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from app.report.assembly import build_appendix
    from app.report.pdf import write_pdf
    from app.report.qt_app import ensure_gui_app
    from topology.methodology import generate as methodology
    from topology.synthetic import generate
    from topology.validation import validate

    ensure_gui_app()
    bed = generate(hosts=ns.hosts, vms=ns.hosts * 5, arrays=max(1, ns.hosts // 10), disks=ns.hosts * 5)
    best = {"validate": 1e9, "methodology": 1e9, "tables": 1e9, "pdf": 1e9}
    first: dict[str, float] = {}
    pages = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(ns.keep) if ns.keep else Path(tmp) / "bench-appendix.pdf"
        for _ in range(max(1, ns.repeat)):
            t0 = time.perf_counter()
            findings = validate(bed)
            t1 = time.perf_counter()
            procedure = methodology(bed)
            t2 = time.perf_counter()
            appendix = build_appendix(bed, findings=findings, methodology=procedure)
            t3 = time.perf_counter()
            pages = write_pdf(appendix, out)
            t4 = time.perf_counter()
            for key, value in (("validate", t1 - t0), ("methodology", t2 - t1), ("tables", t3 - t2), ("pdf", t4 - t3)):
                best[key] = min(best[key], value)
                first.setdefault(key, value)
        size_kb = out.stat().st_size / 1024
    steps = sum(len(s.steps) for s in procedure.sections)
    appendix_s = best["tables"] + best["pdf"]
    total_s = sum(best.values())
    per_100 = appendix_s * TARGET_PAGES / max(pages, 1)
    print(f"bed: synthetic, {len(bed.servers)} servers, {len(bed.vms)} VMs, {len(bed.arrays)} arrays, "
          f"{steps} methodology steps")
    print(f"pages: {pages} ({size_kb:,.0f} KB), best of {ns.repeat}")
    print(f"  {'phase':<12}{'best':>7}    first run (cold caches)")
    for key, value in best.items():
        print(f"  {key:<12}{value:7.3f} s  {first[key]:7.3f} s")
    print(f"appendix (tables + PDF):   {appendix_s:6.3f} s   target {TARGET_S:.1f} s   "
          f"ratio {appendix_s / TARGET_S:.2f}")
    print(f"  scaled to {TARGET_PAGES} pages:     {per_100:6.3f} s   ratio {per_100 / TARGET_S:.2f}")
    print(f"from the bed (all phases): {total_s:6.3f} s   target {TARGET_S:.1f} s   ratio {total_s / TARGET_S:.2f}")
    cold = sum(first.values())
    print(f"  first run, cold:          {cold:6.3f} s   ratio {cold / TARGET_S:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
