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
    im.add_argument("source", metavar="FILE", nargs="?", help="CSV file (see the README's column layout) or "
                                                               "Ansible inventory (INI or YAML)")
    im.add_argument("--from-hosts", metavar="INVENTORY", nargs="?", const="",
                    help="read the hosts themselves (read-only, as `check` does) and draft what they show: ports, "
                         "addresses, MTUs, speeds, MACs, OS, memory, the SAN volumes they see; the hosts are those "
                         "of INVENTORY, or without it the bed's own access entries")
    im.add_argument("--format", choices=("csv", "ansible"), help="default: .csv is CSV, anything else an inventory")
    im.add_argument("--dry-run", action="store_true", help="show what would change and write nothing")
    im.add_argument("--trust", action="append", default=[], metavar="SHA256:...",
                    help="with --from-hosts: accept an unknown SSH host key with exactly this fingerprint")


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
    if ns.from_hosts is not None:
        if ns.source:
            print(f"testbed-studio: give the inventory as --from-hosts {ns.source} (not beside it)", file=sys.stderr)
            return EXIT_UNREADABLE
        from app.asbuilt.draft_cli import run_draft
        return run_draft(ns.bed, ns.from_hosts or None, ns.format, dry_run=ns.dry_run, trust=ns.trust)
    if not ns.source:
        print("testbed-studio: import needs a FILE (a CSV sheet or an Ansible inventory), or --from-hosts",
              file=sys.stderr)
        return EXIT_UNREADABLE
    return run_import(ns.bed, ns.source, ns.format, dry_run=ns.dry_run)
