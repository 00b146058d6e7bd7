"""Every stage a project file goes through, for the fuzz tests and `make fuzz`.

load -> validate -> methodology -> run plan -> Ansible export -> save, each through its
public entry point.  Bad input must stop at load with a BedFileError that names a line or
a field; anything else raised on the way is a crash.
"""
from __future__ import annotations

import argparse
import random
import re
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

from app.ansible import export
from app.remote.connect import access_by_host
from app.run.plan import run_steps
from topology.errors import BedFileError
from topology.fileformat import loads, save
from topology.methodology import generate
from topology.validation import validate


def run_pipeline(text: str, out_dir: Path, exports: bool = False, svg: bool = False) -> bool:
    """True when the file went through every stage, False when the loader refused it.  With
    `exports`, the diagram is written as draw.io and GraphML (and SVG) and each is parsed back."""
    try:
        bed = loads(text, "fuzz.yaml")
    except BedFileError as exc:
        assert exc.problems and all(p.message and p.hint is not None for p in exc.problems)
        assert all(p.line is not None or p.where or "empty" in p.message or "UTF-8" in p.hint
                   for p in exc.problems), exc.format()
        return False
    findings = validate(bed)
    meth = generate(bed, findings=findings)
    steps = run_steps(meth, {h: a.transport for h, a in access_by_host(bed).items()})
    export(bed, steps, out_dir / "ansible")
    save(bed, out_dir / "bed.yaml")
    again = loads((out_dir / "bed.yaml").read_text(), "saved.yaml")
    assert again == bed, "a saved bed must load back equal"
    if exports:
        from fuzz_inputs import export_and_parse_back
        export_and_parse_back(bed, out_dir, svg)
    return True


# ---------------------------------------------------------------------- the long target

_CHUNKS = [":", "-", "[", "]", "{", "}", "&a", "*a", "!!", "|", ">", "'", '"', "#", " ", "\n", "\t", "0", "9",
           ".", ",", "/", "\\", "..", "\x00", "\x07", "<<: *a", ".inf", "-.inf", ".nan", "1e400",
           "99999999999999999999", "65536", "65537", "-1", "0-999999999", "E0:0-999999999", "0x7fffffffffffffff",
           "&a [x, x, x, x]", "[*a, *a, *a, *a, *a, *a, *a, *a]", "NET-001", "XYZ-1", "../..", "2024-13-45"]


_EXTREMES = ["0", "-1", "65535", "65536", "70000", "4096", "99999999999999999999", "1e308", "1e400", ".inf",
             "-.inf", ".nan", "0x7fffffffffffffff", "1_000_000_000_000", "4294967296", "1e15", "1e16", "not stated"]
_NUMBER = re.compile(r"(?<=[ :\[,])-?[0-9]+(\.[0-9]+)?(?=[,\]}\n ])")
_ID = re.compile(r"(?<=id: )[A-Za-z0-9_.-]+")


def _swap_values(rng: random.Random, text: str) -> str:
    """Keep the file well-formed and change values: a number to an extreme, an id to a path."""
    numbers = list(_NUMBER.finditer(text))
    if numbers and rng.random() < 0.8:
        m = rng.choice(numbers)
        text = text[:m.start()] + rng.choice(_EXTREMES) + text[m.end():]
    ids = list(_ID.finditer(text))
    if ids and rng.random() < 0.2:
        m = rng.choice(ids)
        text = text[:m.start()] + rng.choice(["'../x'", "a/b", "'.'", "'..'", '"a\\u0001"', "'a\\b'"]) + text[m.end():]
    return text


def mutate(rng: random.Random, text: str) -> str:
    if rng.random() < 0.5:
        return _swap_values(rng, text)
    for _ in range(rng.randint(1, 5)):
        pos = rng.randint(0, len(text))
        chunk = rng.choice(_CHUNKS) if rng.random() < 0.7 else "".join(
            rng.choice(":-[]{}&*!|>'\"# \n0123456789abcxyz.,/") for _ in range(rng.randint(1, 6)))
        text = edit(text, pos, rng.choice(("delete", "insert", "replace")), chunk)
    return text


def edit(text: str, pos: int, action: str, chunk: str) -> str:
    """One damage to a file: `chunk`'s length deleted at `pos`, or `chunk` inserted or written over."""
    if action == "delete":
        return text[:pos] + text[pos + len(chunk):]
    if action == "insert":
        return text[:pos] + chunk + text[pos:]
    return text[:pos] + chunk + text[pos + len(chunk):]


def seeds() -> list[str]:
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from beds import CLEAN_BED
    return [CLEAN_BED] + [p.read_text() for p in sorted((root / "resources" / "examples").glob("*.yaml"))]


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


HANG_S = 30          # a case still running after this long is a hang


def main(argv: list[str] | None = None) -> int:
    import os
    import signal

    import fuzz_inputs as F
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")     # the SVG export draws with Qt
    ap = argparse.ArgumentParser(description="fuzz every stage of a project file, the result-file parsers, "
                                             "import and the exports for a bounded time")
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--targets", default="bed,parse,import", help="comma-separated: bed (load ... save, exports "
                                                                  "parsed back), parse, import")
    ns = ap.parse_args(argv)
    rng = random.Random(ns.seed)
    corpus = seeds()
    captures = F.capture_seeds()
    inventories = F.inventory_seeds()
    targets = [t for t in ns.targets.split(",") if t]
    counts = {t: {"cases": 0, "ok": 0, "crashes": 0, "hangs": 0} for t in targets}
    signal.signal(signal.SIGALRM, _alarm)
    deadline = time.monotonic() + ns.minutes * 60
    shown = 0
    with tempfile.TemporaryDirectory() as tmp:
        n = 0
        while time.monotonic() < deadline:
            n += 1
            target = targets[n % len(targets)]
            c = counts[target]
            c["cases"] += 1
            out = F.fresh_dir(Path(tmp) / f"{target}-{n % 8}")
            if target == "bed":
                case: object = mutate(rng, rng.choice(corpus))
            elif target == "parse":
                tool, raw = rng.choice(captures)
                case = (rng.choice((tool, None)), F.mutate_bytes(rng, raw))
            else:
                name, text = rng.choice(inventories)
                case = (name, F.mutate_bytes(rng, text.encode()))
            signal.alarm(HANG_S)
            try:
                if target == "bed":
                    c["ok"] += run_pipeline(case, out, exports=c["cases"] % 3 == 0, svg=c["cases"] % 15 == 0)
                elif target == "parse":
                    c["ok"] += F.run_parse(case[1], case[0], out)
                else:
                    c["ok"] += F.run_import(case[0], case[1], corpus[0], out)
            except _Hang:
                c["hangs"] += 1
                kind = "hang"
            except Exception:
                c["crashes"] += 1
                kind = "crash"
            else:
                kind = ""
            finally:
                signal.alarm(0)
            if kind:
                shown += 1
                if shown <= 10:
                    print(f"--- {kind} in {target} (case {n}) ---\n{traceback.format_exc()}", file=sys.stderr)
                    keep = Path(tempfile.gettempdir()) / f"fuzz-{kind}-{target}-{n}"
                    keep.write_bytes(case.encode() if isinstance(case, str) else case[1])
                    print(f"    input kept in {keep}", file=sys.stderr)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for t, c in counts.items():
        print(f"fuzz {t}: {c['cases']} cases ({c['ok']} read through), {c['crashes']} crashes, {c['hangs']} hangs")
    total = {k: sum(c[k] for c in counts.values()) for k in ("cases", "crashes", "hangs")}
    print(f"fuzz: {total['cases']} cases run, {total['crashes']} crashes, {total['hangs']} hangs, "
          f"peak RSS {peak_mb:.0f} MB, {ns.minutes:g} min")
    return 1 if total["crashes"] or total["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
