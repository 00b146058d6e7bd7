"""`testbed-studio parse FILE [--tool NAME] [--format json]`: what a result file says."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from app.metrics.registry import PARSERS, parse_text
from app.metrics.run_results import ResultFileError, decode, nothing_read

EXIT_OK, EXIT_UNREADABLE = 0, 2


def add_arguments(sub) -> None:
    p = sub.add_parser("parse", help="read a load tool's result file (fio, iostat, typeperf, Get-Counter, DiskSpd, "
                                     "Jetstress, sqlio, Iometer, DVD Store) and print its figures")
    p.add_argument("file")
    p.add_argument("--tool", choices=sorted(PARSERS), help="the tool that wrote FILE (default: told from its content)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def cmd_parse(ns) -> int:
    path = Path(ns.file)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        print(f"{ns.file}: cannot be read ({exc.strerror or exc})", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        result = parse_text(decode(raw), ns.tool)
    except ResultFileError as exc:
        print(f"{ns.file}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if ns.format == "json":
        print(json.dumps({"file": str(path), **result.as_dict()}, indent=2))
    else:
        sys.stdout.write(f"file: {path}\n" + result.as_text())
    if result.tool == "unknown" or nothing_read(result):
        print(f"{ns.file}: nothing could be read - " + "; ".join(result.problems), file=sys.stderr)
        return EXIT_UNREADABLE
    return EXIT_OK
