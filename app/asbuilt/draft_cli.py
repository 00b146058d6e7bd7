"""`testbed-studio import BED --from-hosts [INVENTORY] [--dry-run]`: the hosts read (read-only), the
draft printed, then made as one edit and saved over the bed's own text (its comments kept), as
`import FILE` does (topology/importing/command.py)."""
from __future__ import annotations

import sys

EXIT_UNREADABLE = 2


def run_draft(bed_path: str, inventory: str | None, fmt: str | None, *, dry_run: bool, trust: list[str]) -> int:
    from app.asbuilt.draft import draft
    from topology import roundtrip
    from topology.errors import BedFileError
    from topology.importing.command import apply_plan
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
    read = []
    if result.gathered is not None:
        reached = sum(f.reached for f in result.gathered.facts.values())
        read.append(f"read {reached} of {len(result.hosts)} host(s) in {result.gathered.seconds:.2f} s")
    return apply_plan(result.plan, bed, bed_path, text, inventory or bed_path, dry_run=dry_run, before=read)
