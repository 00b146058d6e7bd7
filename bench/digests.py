"""Digests of what must stay byte-identical through speed work (issue 33): the findings, the
methodology's step texts and the saved file of every example, every configuration test bed and
synthetic beds of 20, 200 and 2,000 hosts (and, with --big, the canvas benchmark's 5,000-device
bed).  Run it on the old and the new code and compare the two outputs:

    PYTHONPATH=/path/to/old python -m bench.digests > old.txt
    PYTHONPATH=/path/to/new python -m bench.digests > new.txt && diff old.txt new.txt
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.digests", description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="also the canvas benchmark's 5,000-device bed (slow)")
    ns = ap.parse_args(argv)
    from topology.fileformat import dumps, load
    from topology.methodology.generation import generate as methodology
    from topology.synthetic import generate
    from topology.validation import validate
    files = sorted((ROOT / "resources" / "examples").glob("*.yaml")) + \
        sorted((ROOT / "tests" / "data" / "configurations").glob("*.yaml"))
    beds = [(f.name, load(f), True) for f in files]
    beds += [(f"synthetic-{h}", generate(hosts=h, vms=h * 2, arrays=max(2, h // 50), disks=h), h < 2000)
             for h in (20, 200, 2000)]
    if ns.big:
        from bench.canvas import big_bed
        beds.append(("canvas-5000", big_bed(), False))
    for name, bed, with_methodology in beds:
        findings = validate(bed)
        line = f"{name}: findings {len(findings)} {_digest(chr(10).join(map(repr, findings)))}"
        if with_methodology:
            steps = methodology(bed).steps()
            line += " methodology " + _digest("\n".join(f"{getattr(s, 'number', '')} {s.text}" for s in steps))
        print(line + " saved " + _digest(dumps(bed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
