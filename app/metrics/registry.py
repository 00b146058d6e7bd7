"""Which tool wrote a result file, told from its content, and the parser that reads it.
`--tool` names one and skips the guess."""
from __future__ import annotations

import re
from collections.abc import Callable

from app.metrics.cifsiostat import looks_like_cifsiostat, parse_cifsiostat
from app.metrics.counter_files import (
    parse_counter_csv,
    parse_get_counter_lines,
    parse_get_counter_text,
    parse_iostat_json,
)
from app.metrics.dvdstore import parse_dvdstore
from app.metrics.fio_report import parse_fio_report, reports_with_lines, with_client_jobs
from app.metrics.parsed import ParsedResult, ResultFileError
from app.metrics.reading import guarded
from app.metrics.result_files import parse_diskspd, parse_iometer_csv, parse_jetstress, parse_sqlio


def parse_fio(text: str) -> ParsedResult:
    """A single report, or a --status-interval stream saved to a file: its last report holds the
    whole run's figures; the per-second series are the live view's (app.metrics.streams)."""
    problems: list[str] = []
    reports = [(line, r) for line, r in ((line, with_client_jobs(r)) for line, r in reports_with_lines(text, problems))
               if "jobs" in r]
    if not reports:
        result = ParsedResult("fio")
        result.problems += problems
        result.problems.append("no fio JSON report with a 'jobs' list (run fio with --output-format=json)")
        return result
    line, last = reports[-1]
    try:
        result = parse_fio_report(last)
    except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError) as exc:
        raise ResultFileError(f"line {line}: the fio report that starts here holds a value of the wrong kind "
                              f"({type(exc).__name__}: {str(exc)[:200]}): not fio's own output", line) from None
    result.problems += problems
    if len(reports) > 1:
        result.extra["status reports"] = float(len(reports))
        result.notes.append(f"a --status-interval stream of {len(reports)} reports: the figures are the last "
                            "(whole-run) report's")
    return result


PARSERS: dict[str, Callable[[str], ParsedResult]] = {
    "fio": parse_fio, "iostat": parse_iostat_json, "typeperf": parse_counter_csv,
    "export-counter": parse_counter_csv, "get-counter": parse_get_counter_text,
    "get-counter-lines": parse_get_counter_lines, "diskspd": parse_diskspd,
    "jetstress": parse_jetstress, "sqlio": parse_sqlio, "iometer": parse_iometer_csv, "dvdstore": parse_dvdstore,
    "cifsiostat": parse_cifsiostat,
}

# (tool, test on the first 64 KiB): the first that matches wins, so the narrow tests come first
_SIGNS: list[tuple[str, Callable[[str], bool]]] = [
    ("fio", lambda t: '"fio version"' in t or ('"jobs"' in t or '"client_stats"' in t) and '"jobname"' in t),
    ("iostat", lambda t: '"sysstat"' in t or '"disk_device"' in t),
    ("cifsiostat", looks_like_cifsiostat),
    ("typeperf", lambda t: "(PDH-CSV" in t),
    ("diskspd", lambda t: "<Results>" in t and ("<TimeSpan>" in t or "<Target>" in t)
     or "Total IO" in t and "thread |" in t
     or "Command Line: diskspd" in t.replace("DiskSpd", "diskspd") or "I/O per s" in t),
    ("jetstress", lambda t: "Jetstress" in t and ("Transactional I/O" in t or "Overall Test Result" in t)),
    ("iometer", lambda t: "'Target Type,Target Name" in t),
    ("sqlio", lambda t: "IOs/sec:" in t or "sqlio v" in t),
    ("dvdstore", lambda t: bool(re.search(r"\bopm=\s*\d", t)) and "et=" in t),
    ("get-counter-lines", lambda t: bool(re.search(r"^\d{4}-\d\d-\d\dT[^|]+\|\\\\[^|]+\|", t, re.M))),
    ("get-counter", lambda t: "CounterSamples" in t or bool(re.search(r"^\s*\\\\[^\\]+\\.+ :\s*$", t, re.M))),
]


def detect(text: str) -> str | None:
    head = text[:65536]
    for tool, test in _SIGNS:
        if test(head):
            return tool
    return None


def parse_text(text: str, tool: str | None = None) -> ParsedResult:
    """The file's figures (non-finite ones left out); ResultFileError when the text holds a value
    the parser cannot take, ValueError for an unknown --tool."""
    name = (tool or "").lower() or detect(text)
    if name is None:
        result = ParsedResult("unknown")
        result.problems.append("the tool that wrote this file could not be told from its content; name it "
                               f"with --tool ({', '.join(PARSERS)})")
        return result
    if name not in PARSERS:
        raise ValueError(f"unknown tool {tool!r}: one of {', '.join(PARSERS)}")
    # whatever the text holds: figures, or a ResultFileError that names the line
    return guarded(PARSERS[name], text, name)
