"""`testbed-studio export-ansible FILE -o DIR`: the bed as an inventory and playbooks."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_UNUSABLE = 0, 2


def cmd_export_ansible(ns: argparse.Namespace) -> int:
    from app.ansible.inventory import reach
    from app.ansible.writer import export
    from app.run.plan import run_steps, select_steps
    from topology.errors import BedFileError
    from topology.fileformat import load
    from topology.methodology import generate
    try:
        bed = load(ns.file)
        meth = generate(bed, extra_dirs=ns.templates)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNUSABLE
    reached = reach(bed)
    steps = run_steps(meth, reached.transports)
    try:
        steps = select_steps(steps, ns.steps) if ns.steps else steps
    except ValueError as exc:
        print(f"testbed-studio: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        result = export(bed, steps, Path(ns.output), reached)
    except OSError as exc:
        print(f"testbed-studio: cannot write {ns.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    automated = sum(1 for s in steps if not s.manual)
    p = result.paths
    print(f"wrote {', '.join(str(path.name) for path in p.values())} in {Path(ns.output)} "
          f"({automated} automated step(s), {len(steps) - automated} manual)")
    for note in result.notes:
        print(f"note: {note}")
    for key in ("playbook", "measure"):
        if key in p:
            print(f"run: ansible-playbook -i {p['inventory']} {p[key]}")
    print(f"see {p['readme']}")
    return EXIT_OK
