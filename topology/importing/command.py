"""`testbed-studio import BED FILE [--format csv|ansible] [--dry-run]`: the planner's changes
printed, then made as one edit and saved over the bed's own text (its comments kept).
`apply_plan` is that second half, shared with `import BED --from-hosts` (app/asbuilt/draft_cli.py)."""
from __future__ import annotations

import sys

from topology import roundtrip
from topology.errors import BedFileError
from topology.importing import plan_file
from topology.importing.plan import ImportPlan
from topology.model import Bed
from topology.roundtrip import ProjectSource

EXIT_OK, EXIT_UNREADABLE = 0, 2


def run_import(bed_path: str, source: str, fmt: str | None, *, dry_run: bool) -> int:
    try:
        bed, text = roundtrip.load(bed_path)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE
    return apply_plan(plan_file(bed, source, fmt), bed, bed_path, text, source, dry_run=dry_run)


def apply_plan(plan: ImportPlan, bed: Bed, bed_path: str, text: ProjectSource | None, source: str, *,
               dry_run: bool, before: tuple[str, ...] | list[str] = ()) -> int:
    """Print the plan's problems (nothing changes) or its changes, then make them as one edit and
    save over the bed's text, unless a dry run.  BEFORE: lines printed once the plan is usable."""
    if plan.problems:
        print(BedFileError(plan.problems, source).format(), file=sys.stderr)
        print(f"{plan.summary()}; {bed_path} is unchanged", file=sys.stderr)
        return EXIT_UNREADABLE
    for line in (*before, *plan.changes):
        print(line)
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
