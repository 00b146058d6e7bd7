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


def run_pipeline(text: str, out_dir: Path) -> bool:
    """True when the file went through every stage, False when the loader refused it."""
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="fuzz every stage of a project file for a bounded time")
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ns = ap.parse_args(argv)
    rng = random.Random(ns.seed)
    corpus = seeds()
    cases = crashes = loaded = 0
    deadline = time.monotonic() + ns.minutes * 60
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < deadline:
            text = mutate(rng, rng.choice(corpus))
            cases += 1
            out = Path(tmp) / str(cases % 8)
            out.mkdir(exist_ok=True)
            try:
                loaded += run_pipeline(text, out)
            except Exception:
                crashes += 1
                if crashes <= 5:
                    print(f"--- crash {crashes} (case {cases}) ---\n{traceback.format_exc()}", file=sys.stderr)
                    Path(tmp, f"crash-{crashes}.yaml").write_text(text)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"fuzz: {cases} cases run ({loaded} went through every stage), {crashes} crashes, "
          f"peak RSS {peak_mb:.0f} MB, {ns.minutes:g} min")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
