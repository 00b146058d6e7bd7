"""Windows sources: performance counters (typeperf CSV, or Get-Counter through the line
format our own command prints) streamed live, and the DiskSpd and Jetstress result files,
which those tools write only at the end of a run.

Counter paths look like `\\\\HV1\\PhysicalDisk(0 C:)\\Avg. Disk sec/Read`; the instance becomes
the series (`HV1/0 C:`), `_Total` is the host itself (`HV1`).  Seconds become milliseconds.
"""
from __future__ import annotations

import csv
import html
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime

from app.metrics import sample as M
from app.metrics.sample import Sample

COUNTERS = (r"\PhysicalDisk(*)\Disk Transfers/sec", r"\PhysicalDisk(*)\Disk Reads/sec",
            r"\PhysicalDisk(*)\Disk Writes/sec", r"\PhysicalDisk(*)\Avg. Disk sec/Read",
            r"\PhysicalDisk(*)\Avg. Disk sec/Write", r"\PhysicalDisk(*)\Current Disk Queue Length",
            r"\PhysicalDisk(*)\Disk Bytes/sec")


def typeperf_command(interval_s: int = 1) -> str:
    return "typeperf " + " ".join(f'"{c}"' for c in COUNTERS) + f" -si {int(interval_s)}"


# One line per counter value: ISO time | counter path | value.  Written by us, so the format
# does not depend on the machine's locale the way Get-Counter's own table does.
GET_COUNTER_COMMAND = (
    "Get-Counter -Counter @(" + ",".join(f"'{c}'" for c in COUNTERS) + ") -SampleInterval 1 -Continuous | "
    "ForEach-Object { foreach ($s in $_.CounterSamples) { '{0:o}|{1}|{2}' -f $_.Timestamp, $s.Path, $s.CookedValue } }")

# counter name -> metric, unit, factor
_COUNTER_METRICS = {
    "disk transfers/sec": (M.IOPS, "IO/s", 1.0), "disk reads/sec": (M.READ_IOPS, "IO/s", 1.0),
    "disk writes/sec": (M.WRITE_IOPS, "IO/s", 1.0), "avg. disk sec/read": (M.READ_LATENCY_MS, "ms", 1000.0),
    "avg. disk sec/write": (M.WRITE_LATENCY_MS, "ms", 1000.0),
    "current disk queue length": (M.QUEUE_LENGTH, "", 1.0), "avg. disk queue length": (M.AVG_QUEUE_LENGTH, "", 1.0),
    "disk bytes/sec": (M.THROUGHPUT_MBPS, "MB/s", 1e-6),
}
_PATH = re.compile(r"^\\\\(?P<host>[^\\]+)\\(?P<object>[^(\\]+)(?:\((?P<instance>[^)]*)\))?\\(?P<counter>.+)$")


def _series(path: str, default_host: str, every_counter: bool = False) -> tuple[str, str, str, float] | None:
    """(source, metric, unit, factor) of a counter path; a counter we do not plot is None, or
    with `every_counter` a series of its own named after the counter (object\\counter)."""
    m = _PATH.match(path.strip())
    if not m:
        return None
    metric = _COUNTER_METRICS.get(m.group("counter").strip().lower())
    if metric is None:
        if not every_counter:
            return None
        metric = (f"{m.group('object').strip()}\\{m.group('counter').strip()}".lower(), "", 1.0)
    host = default_host or m.group("host")
    instance = (m.group("instance") or "").strip()
    source = host if instance.lower() in ("", "_total") else f"{host}/{instance}"
    return (source, *metric)


def _time(text: str) -> float | None:
    text = text.strip()
    for fmt in ("%m/%d/%Y %H:%M:%S.%f", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %I:%M:%S %p"):
        try:
            return datetime.strptime(text, fmt).timestamp()
        except ValueError:
            pass
    try:
        return datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", text)).timestamp()
    except ValueError:
        return None


class TypeperfCsvParser:
    """typeperf's CSV: a header of counter paths, then one row per interval; a counter that
    has no value that second is a blank cell and becomes a gap."""

    def __init__(self, host: str = "", every_counter: bool = False):
        self.host = host
        self.every_counter = every_counter
        self.problems: list[str] = []
        self._columns: list[tuple[str, str, str, float] | None] | None = None
        self._missing: set[str] = set()

    def feed(self, line: str) -> list[Sample]:
        if not line.strip() or not line.lstrip().startswith('"'):
            return []          # blank lines and typeperf's own messages ("Exiting, please wait...")
        try:
            cells = next(csv.reader([line]))
        except (csv.Error, StopIteration):
            self.problems.append(f"typeperf on {self.host}: an unreadable line was skipped")
            return []
        if cells and cells[0].startswith("(PDH-CSV"):
            self._columns = [_series(c, self.host, self.every_counter) for c in cells[1:]]
            return []
        if self._columns is None:
            return []
        t = _time(cells[0])
        if t is None:
            self.problems.append(f"typeperf on {self.host}: a row without a readable time was skipped")
            return []
        out = []
        for column, cell in zip(self._columns, cells[1:]):
            if column is None:
                continue
            source, metric, unit, factor = column
            try:
                value = float(cell.replace(",", ".") if cell.count(",") == 1 and "." not in cell else cell) * factor
                self._missing.discard(f"{source} {metric}")
            except ValueError:
                value = math.nan
                key = f"{source} {metric}"
                if key not in self._missing:
                    self._missing.add(key)
                    self.problems.append(f"typeperf on {self.host}: {metric} of {source} has no value "
                                         "(the counter disappeared?): shown as a gap")
            out.append(Sample(t, source, metric, value, unit))
        return out

    def close(self) -> list[Sample]:
        return []


class GetCounterLineParser:
    """The lines GET_COUNTER_COMMAND prints: time|path|value."""

    def __init__(self, host: str = ""):
        self.host = host
        self.problems: list[str] = []

    def feed(self, line: str) -> list[Sample]:
        parts = line.strip().split("|")
        if len(parts) != 3:
            return []
        t = _time(parts[0])
        series = _series(parts[1], self.host)
        if t is None or series is None:
            return []
        source, metric, unit, factor = series
        try:
            value = float(parts[2].replace(",", ".")) * factor
        except ValueError:
            self.problems.append(f"Get-Counter on {self.host}: {parts[1]} has no value: shown as a gap")
            value = math.nan
        return [Sample(t, source, metric, value, unit)]

    def close(self) -> list[Sample]:
        return []


@dataclass
class ToolResult:
    tool: str
    iops: float = math.nan
    read_iops: float = math.nan
    write_iops: float = math.nan
    mib_per_s: float = math.nan
    avg_latency_ms: float = math.nan
    read_latency_ms: float = math.nan
    write_latency_ms: float = math.nan
    percentiles_ms: dict[str, dict[str, float]] = field(default_factory=dict)   # "95th" -> read/write/total
    passed: bool | None = None
    problems: list[str] = field(default_factory=list)


_PCT = re.compile(r"^\s*(?P<name>min|max|[\d.]+(?:th|nd|rd|st)|\d+-nines)\s*\|\s*(?P<r>[\d.N/A]+)\s*\|"
                  r"\s*(?P<w>[\d.N/A]+)\s*\|\s*(?P<t>[\d.N/A]+)")
_TABLES = {"Total IO": "total", "Read IO": "read", "Write IO": "write"}


def _number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return math.nan


def parse_diskspd_text(text: str) -> ToolResult:
    """DiskSpd's text report.  Its tables change columns with the options (`-L` adds AvgLat
    and LatStdDev, `-D` adds IopsStdDev, a read-only or write-only test prints no Total IO
    table), so every `total:` row is read through the header line above it."""
    result = ToolResult("DiskSpd")
    table, columns = "", []
    found: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        s = line.strip()
        if s in _TABLES:
            table, columns = _TABLES[s], []
            continue
        if table and s.startswith("thread") and "|" in s:
            columns = [c.strip() for c in s.split("|")]
            continue
        if table and columns and s.startswith("total:"):
            # "total:" stands in the thread column; the row has no file column
            cells = [c.strip() for c in s[len("total:"):].split("|")]
            found[table] = {name: _number(cell) for name, cell in zip(columns[1:], cells)}
            table = ""
            continue
        p = _PCT.match(line)
        if p:
            result.percentiles_ms[p.group("name").strip()] = {
                "read": _number(p.group("r")), "write": _number(p.group("w")), "total": _number(p.group("t"))}
    for name, row in found.items():
        iops, lat = row.get("I/O per s", math.nan), row.get("AvgLat", math.nan)
        if name == "total":
            result.iops, result.mib_per_s, result.avg_latency_ms = iops, row.get("MiB/s", math.nan), lat
        elif name == "read":
            result.read_iops, result.read_latency_ms = iops, lat
        else:
            result.write_iops, result.write_latency_ms = iops, lat
    if "total" not in found and ("read" in found or "write" in found):
        # a read-only or write-only test: its one table is the total
        rows = [found[k] for k in ("read", "write") if k in found]
        result.iops = sum(r.get("I/O per s", 0.0) for r in rows)
        result.mib_per_s = sum(r.get("MiB/s", 0.0) for r in rows)
        if len(rows) == 1:
            result.avg_latency_ms = rows[0].get("AvgLat", math.nan)
    if not found:
        result.problems.append("no 'Total IO', 'Read IO' or 'Write IO' table with a 'total:' row: "
                               "is this DiskSpd's text output (not -Rxml)?")
    return result


def parse_diskspd_xml(text: str) -> ToolResult:
    result = ToolResult("DiskSpd")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        result.problems.append(f"the XML cannot be read: {exc}")
        return result
    seconds = float(root.findtext(".//TimeSpan/TestTimeSeconds") or "nan")
    reads = sum(int(t.findtext("ReadCount") or 0) for t in root.iter("Target"))
    writes = sum(int(t.findtext("WriteCount") or 0) for t in root.iter("Target"))
    nbytes = sum(int(t.findtext("BytesCount") or 0) for t in root.iter("Target"))
    if seconds and not math.isnan(seconds):
        result.read_iops, result.write_iops = reads / seconds, writes / seconds
        result.iops = (reads + writes) / seconds
        result.mib_per_s = nbytes / seconds / 1048576
    lat = root.find(".//TimeSpan/Latency")
    if lat is not None:
        result.read_latency_ms = float(lat.findtext("AverageReadMilliseconds") or "nan")
        result.write_latency_ms = float(lat.findtext("AverageWriteMilliseconds") or "nan")
        result.avg_latency_ms = float(lat.findtext("AverageTotalMilliseconds") or "nan")
        for b in lat.iter("Bucket"):
            pct = b.findtext("Percentile")
            if pct:
                result.percentiles_ms[pct] = {k: float(b.findtext(f"{tag}Milliseconds") or "nan")
                                              for k, tag in (("read", "Read"), ("write", "Write"), ("total", "Total"))}
    return result


def parse_jetstress_html(text: str) -> ToolResult:
    """The figures ESRP reports quote from Jetstress's Performance report: achieved
    transactional IOPS, database read and log write average latency, and the overall result."""
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", text, flags=re.S | re.I)]
    return jetstress_from_labels({cells[i].lower(): cells[i + 1] for i in range(len(cells) - 1)})


def jetstress_from_labels(pairs: dict[str, str]) -> ToolResult:
    """The report's figures from its label -> value rows (labels in lower case), whichever
    form (HTML table rows, XML items) they were read from."""
    result = ToolResult("Jetstress")

    def figure(*labels: str) -> float:
        for label in labels:
            for key, value in pairs.items():
                if key.startswith(label):
                    try:
                        return float(value.replace(",", ""))
                    except ValueError:
                        continue
        return math.nan

    result.iops = figure("achieved transactional i/o per second", "achieved transactional iops")
    result.read_latency_ms = figure("i/o database reads average latency")
    result.write_latency_ms = figure("i/o log writes average latency")
    overall = (pairs.get("overall test result")
               or next((v for k, v in pairs.items() if k.startswith("overall test")), ""))
    result.passed = {"pass": True, "fail": False}.get(overall.strip().lower())
    if math.isnan(result.iops):
        result.problems.append("no 'Achieved Transactional I/O per Second' row: "
                               "is this a Jetstress performance report?")
    return result
