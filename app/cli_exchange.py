"""`testbed-studio export` and `testbed-studio import`: the diagram out to other tools, hosts
in from a spreadsheet or an Ansible inventory.  The GUI's File menu runs the same code
(app/diagram/export.py; topology/importing/)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2
# app.diagram.export.FORMATS, written out: every command builds this parser, and importing the
# diagram package would load Qt and networkx first (tests/test_diagram_exchange.py keeps them equal)
FORMATS = ("png", "svg", "pdf", "drawio", "graphml")


def add_arguments(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser("export", help="write the diagram as draw.io, GraphML, SVG, PNG or PDF")
    ex.add_argument("file", help="project file")
    ex.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write")
    ex.add_argument("--format", choices=FORMATS,
                    help="default: from OUT's extension (.drawio, .graphml, .svg, .png, .pdf)")
    ex.add_argument("--no-findings", action="store_true", help="draw no findings badges (skips validation)")

    im = sub.add_parser("import", help="add hosts, ports and addresses from a CSV file or an Ansible inventory "
                                       "(one step; --dry-run shows what would change)")
    im.add_argument("bed", help="project file to change (saved over, keeping its comments)")
    im.add_argument("source", metavar="FILE", help="CSV file (see the README's column layout) or Ansible "
                                                   "inventory (INI or YAML)")
    im.add_argument("--format", choices=("csv", "ansible"), help="default: .csv is CSV, anything else an inventory")
    im.add_argument("--dry-run", action="store_true", help="show what would change and write nothing")


def cmd_export(ns: argparse.Namespace) -> int:
    from app.diagram.export import export_diagram
    from topology.errors import BedFileError
    from topology.fileformat import load
    try:
        bed = load(ns.file)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE
    findings = []
    if not ns.no_findings:
        from topology.validation import validate
        findings = validate(bed)
    try:
        done = export_diagram(bed, ns.output, ns.format, findings=findings)
    except OSError as exc:
        print(f"testbed-studio: cannot write {ns.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    print(f"wrote {Path(ns.output)} ({done.format}: {done.summary})")
    return EXIT_OK


def cmd_import(ns: argparse.Namespace) -> int:
    from topology.importing.command import run_import
    return run_import(ns.bed, ns.source, ns.format, dry_run=ns.dry_run)
