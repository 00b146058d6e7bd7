"""`testbed-studio import BED --from-hosts [INVENTORY] [--dry-run]`: the hosts read (read-only), the
draft printed, then made as one edit and saved over the bed's own text (its comments kept), as
`import FILE` does (topology/importing/command.py)."""
from __future__ import annotations

import sys

EXIT_OK, EXIT_UNREADABLE = 0, 2


def run_draft(bed_path: str, inventory: str | None, fmt: str | None, *, dry_run: bool, trust: list[str]) -> int:
    from app.asbuilt.draft import draft
    from topology import roundtrip
    from topology.errors import BedFileError
    try:
        bed, text = roundtrip.load(bed_path)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE

    def decide(q) -> bool:
        if q.fingerprint in trust:
            return True
        print(f"refusing the unknown SSH host key of {q.host} ({q.address}): {q.key_type} {q.fingerprint}\n"
              f"  if it is the right key, run again with --trust {q.fingerprint}", file=sys.stderr)
        return False

    result = draft(bed, inventory, fmt=fmt, decider=decide)
    plan = result.plan
    if plan.problems:
        print(BedFileError(plan.problems, inventory or bed_path).format(), file=sys.stderr)
        print(f"{plan.summary()}; {bed_path} is unchanged", file=sys.stderr)
        return EXIT_UNREADABLE
    if result.gathered is not None:
        reached = sum(f.reached for f in result.gathered.facts.values())
        print(f"read {reached} of {len(result.hosts)} host(s) in {result.gathered.seconds:.2f} s")
    for change in plan.changes:
        print(change)
    for note in plan.notes:
        print(f"note: {note}")
    if plan.edit is None:
        print(plan.summary())
        return EXIT_OK
    if dry_run:
        print(f"{plan.summary()} (dry run: {bed_path} is unchanged)")
        return EXIT_OK
    plan.edit.apply()
    try:
        roundtrip.save(bed, bed_path, text)
    except OSError as exc:
        print(f"testbed-studio: cannot write {bed_path}: {exc.strerror or exc}; it is unchanged", file=sys.stderr)
        return EXIT_UNREADABLE
    print(f"{plan.summary()}; saved {bed_path}")
    return EXIT_OK
