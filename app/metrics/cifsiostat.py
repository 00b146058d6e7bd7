"""sysstat's `cifsiostat` (CIFS/SMB client statistics per mounted share), saved to a file.

Each report is a header line and one line per share.  The plain layout puts the share first
(`Filesystem  rB/s  wB/s  rops/s  wops/s  fo/s  fc/s  fd/s`), `--pretty`/`-h` puts it last; `-k`
and `-m` turn the byte columns into kB/s and MB/s (sysstat's kB is 1024 bytes), `--human`/`-h`
prints each byte figure with its own unit (`3.8M`); `-t` prints the time before each report.
As with iostat, the first report covers the time since boot and is left out when more follow.
cifsiostat counts operations and bytes, not their latency: the latency comes from the load tool.
"""
from __future__ import annotations

import math
import re
from datetime import datetime

from app.metrics import sample as M
from app.metrics.counter_files import summarize_series
from app.metrics.parsed import NAN, ParsedResult, add
from app.metrics.sample import Sample

_UNITS = {"": 1.0, "B": 1.0, "k": 1024.0, "K": 1024.0, "M": 1048576.0, "G": 1024.0 ** 3, "T": 1024.0 ** 4}
_HEADER_SCALE = {"B": 1.0, "kB": 1024.0, "MB": 1048576.0}
_VALUE = re.compile(r"^(-?\d+(?:[.,]\d+)?)([BkKMGT]?)$")
_STAMPS = ("%m/%d/%y %H:%M:%S", "%m/%d/%Y %H:%M:%S", "%d/%m/%y %H:%M:%S", "%m/%d/%y %I:%M:%S %p")


def looks_like_cifsiostat(text: str) -> bool:
    return "rops/s" in text and "wops/s" in text and "fo/s" in text and "fd/s" in text


def parse_cifsiostat(text: str) -> ParsedResult:
    reports: list[tuple[float | None, list[Sample]]] = []
    columns: list[str] = []
    scale = 1.0
    stamp: float | None = None
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        cells = line.split()
        if not cells:
            continue
        when = _time(line.strip())
        if when is not None:
            stamp = when
            continue
        if "rops/s" in cells and "wops/s" in cells:
            columns = [c.rstrip(":") for c in cells]
            unit = next((c[1:-2] for c in columns if c.startswith("r") and c.endswith("/s") and "ops" not in c),
                        "B")
            scale = _HEADER_SCALE.get(unit, 1.0)
            reports.append((stamp, []))
            stamp = None
            continue
        if not columns or len(cells) < len(columns):
            continue
        share_first = columns[0] == "Filesystem"
        figures = cells[1:len(columns)] if share_first else cells[:len(columns) - 1]
        share = cells[0] if share_first else " ".join(cells[len(columns) - 1:])
        named = dict(zip([c for c in columns if c != "Filesystem"], figures))
        try:
            rops, wops = float(named["rops/s"].replace(",", ".")), float(named["wops/s"].replace(",", "."))
            rbytes = _bytes(next(v for k, v in named.items() if k.startswith("r") and "ops" not in k), scale)
            wbytes = _bytes(next(v for k, v in named.items() if k.startswith("w") and "ops" not in k), scale)
        except (KeyError, StopIteration, ValueError):
            problems.append(f"line {number}: a share's line without readable figures was skipped")
            continue
        t = reports[-1][0]
        t = float(len(reports)) if t is None else t
        reports[-1][1].extend([
            Sample(t, share, M.READ_IOPS, rops, "IO/s"), Sample(t, share, M.WRITE_IOPS, wops, "IO/s"),
            Sample(t, share, M.IOPS, rops + wops, "IO/s"),
            Sample(t, share, M.THROUGHPUT_MBPS, (rbytes + wbytes) / 1e6, "MB/s")])
    counted = [r for r in reports if r[1]]
    dropped = len(counted) > 1
    samples = [s for _, group in (counted[1:] if dropped else counted) for s in group]
    result = summarize_series("cifsiostat", samples, problems)
    if not samples:
        result.problems = ["no share line under a 'rops/s wops/s' header: is this cifsiostat's output?"] + problems
        return result
    if dropped:
        result.notes.append(f"the first of {len(counted)} reports is left out: cifsiostat's first report covers "
                            "the time since boot")
    if any(stamp is None for stamp, _ in counted):
        result.duration_s = NAN
        result.problems = [p for p in result.problems if not p.startswith("duration unknown")]
        result.missing("duration", "the reports carry no time (cifsiostat ran without -t)")
    if math.isnan(result.iops) and result.jobs:      # several shares: the host is their sum
        for name in ("iops", "read_iops", "write_iops", "mb_per_s"):
            setattr(result, name, add(getattr(r, name) for r in result.jobs))
    result.problems = [p for p in result.problems if "latency" not in p and "no _Total" not in p]
    result.missing("latency", "cifsiostat counts operations and bytes, not how long they took")
    result.notes.append("cifsiostat reports each CIFS/SMB share: the shares are the rows")
    return result


def _bytes(cell: str, scale: float) -> float:
    m = _VALUE.match(cell.strip())
    if not m:
        raise ValueError(cell)
    value = float(m.group(1).replace(",", "."))
    return value * (_UNITS[m.group(2)] if m.group(2) else scale)


def _time(line: str) -> float | None:
    if len(line) > 40 or "/s" in line:
        return None
    for fmt in _STAMPS:
        try:
            return datetime.strptime(line, fmt).timestamp()
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(line).timestamp()
    except ValueError:
        return None
