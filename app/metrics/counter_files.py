"""Saved disk-counter files read whole: typeperf and Export-Counter/relog CSV (the same PDH-CSV
layout), PowerShell's own Get-Counter output as it prints by default, and iostat's JSON
(compact as iostat writes it, or pretty-printed).  Every counter is its own series; the
figures quoted are the averages over the file's intervals of the host's total (`_Total`) or,
when the tool gives only devices (iostat), per device in the rows."""
from __future__ import annotations

import json
import math
import re
from collections import defaultdict

from app.metrics import sample as M
from app.metrics.parsed import NAN, JobRow, ParsedResult, weighted_mean
from app.metrics.sample import Sample
from app.metrics.streams import IostatJsonParser
from app.metrics.windows import TypeperfCsvParser, _series, _time

_LATENCY_WEIGHTS = {M.READ_LATENCY_MS: M.READ_IOPS, M.WRITE_LATENCY_MS: M.WRITE_IOPS}
_ROW_FIELDS = {M.IOPS: "iops", M.READ_IOPS: "read_iops", M.WRITE_IOPS: "write_iops",
               M.READ_LATENCY_MS: "read_latency_ms", M.WRITE_LATENCY_MS: "write_latency_ms",
               M.THROUGHPUT_MBPS: "mb_per_s"}


def summarize_series(tool: str, samples: list[Sample], problems: list[str]) -> ParsedResult:
    result = ParsedResult(tool)
    result.problems += problems
    if not samples:
        result.problems.append("no counter values: the file has no rows of values under a header "
                               "this parser knows")
        return result
    by_source: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    times = sorted({s.timestamp for s in samples})
    for s in samples:
        by_source[s.source][s.metric].append((s.timestamp, s.value))
    for source in sorted(by_source):
        row = JobRow(source)
        series = by_source[source]
        for metric, points in sorted(series.items()):
            values = [v for _, v in points]
            known = [v for v in values if not math.isnan(v)]
            rate = _LATENCY_WEIGHTS.get(metric)
            if rate in series:
                # a latency is the mean per I/O: weighted by that interval's rate, and an interval
                # without I/O (latency printed as 0) does not pull it down
                weights = dict(series[rate])
                mean = weighted_mean((v, weights.get(t, 0.0)) for t, v in points)
            else:
                mean = sum(known) / len(known) if known else NAN
            if metric in _ROW_FIELDS:
                setattr(row, _ROW_FIELDS[metric], mean)
            else:
                row.extra[metric] = mean
            if len(known) < len(values):
                result.notes.append(f"{source} {metric}: {len(values) - len(known)} of {len(values)} "
                                    "intervals have no value (gaps)")
        if math.isnan(row.iops) and not (math.isnan(row.read_iops) or math.isnan(row.write_iops)):
            row.iops = row.read_iops + row.write_iops
        result.jobs.append(row)
    result.extra["intervals"] = float(len(times))
    result.extra["series"] = float(sum(len(m) for m in by_source.values()))
    if len(times) > 1:          # the first value covers the interval before it, as long as the next
        result.duration_s = times[-1] - times[0] + (times[1] - times[0])
    else:
        result.missing("duration", "a single sample gives no interval")
    hosts = [r for r in result.jobs if "/" not in r.name]
    if len(hosts) == 1:
        h = hosts[0]
        for name in ("iops", "read_iops", "write_iops", "read_latency_ms", "write_latency_ms", "mb_per_s"):
            setattr(result, name, getattr(h, name))
        for name, what in (("iops", "disk transfers/sec"), ("read_latency_ms", "avg. disk sec/read"),
                           ("write_latency_ms", "avg. disk sec/write"), ("mb_per_s", "disk bytes/sec")):
            if math.isnan(getattr(result, name)):
                result.missing(name.replace("_", " "), f"the file has no _Total {what} counter")
    else:
        result.problems.append("no host total (_Total instance) in the file: the figures are per "
                               "device or instance, in the rows")
    return result


def parse_counter_csv(text: str) -> ParsedResult:
    """typeperf -f CSV, or Export-Counter/relog -f CSV: the same PDH-CSV layout."""
    parser = TypeperfCsvParser("", every_counter=True)
    samples: list[Sample] = []
    for line in text.splitlines():
        samples += parser.feed(line)
    if parser._columns is None:
        parser.problems.append("no '(PDH-CSV 4.0)' header line: is this typeperf or Export-Counter CSV?")
    result = summarize_series("typeperf", samples, parser.problems)
    return result


_STAMP = re.compile(r"^(?P<t>\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\s+\d{1,2}:\d{2}:\d{2}(?:\s*[AP]M)?)\s+(?P<rest>.*)$")
_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?$")


class GetCounterTextParser:
    """`Get-Counter` as PowerShell prints it by default (a Timestamp / CounterSamples table):
    a time, then for each counter its path ending in ' :' and, on the next line, the value."""

    def __init__(self, host: str = ""):
        self.host = host
        self.problems: list[str] = []
        self._t: float | None = None
        self._path: str | None = None

    def feed(self, line: str) -> list[Sample]:
        text = line.rstrip()
        m = _STAMP.match(text.strip())
        if m:
            self._t = _time(m.group("t"))
            if self._t is None:
                self.problems.append(f"Get-Counter: the time {m.group('t')!r} could not be read")
            text = m.group("rest")
        text = text.strip().strip("{}")
        if not text or text.startswith(("Timestamp", "---")):
            return []
        if text.startswith("\\\\"):
            path, _, value = text.rpartition(" :")
            if not path:
                path, value = text, ""
            self._path = path.strip()
            return self._value(value.strip()) if value.strip() else []
        if self._path is not None and _NUMBER.match(text):
            return self._value(text)
        return []

    def _value(self, text: str) -> list[Sample]:
        path, self._path = self._path, None
        series = _series(path, self.host, every_counter=True)
        if series is None or self._t is None:
            return []
        source, metric, unit, factor = series
        try:
            value = float(text.replace(",", ".")) * factor
        except ValueError:
            value = NAN
        return [Sample(self._t, source, metric, value, unit)]

    def close(self) -> list[Sample]:
        return []


def parse_get_counter_text(text: str) -> ParsedResult:
    parser = GetCounterTextParser()
    samples: list[Sample] = []
    for line in text.splitlines():
        samples += parser.feed(line)
    result = summarize_series("Get-Counter", samples, parser.problems)
    return result


def parse_get_counter_lines(text: str) -> ParsedResult:
    """The time|path|value lines our own live Get-Counter command prints."""
    from app.metrics.windows import GetCounterLineParser
    parser = GetCounterLineParser("")
    samples: list[Sample] = []
    for line in text.splitlines():
        samples += parser.feed(line)
    return summarize_series("Get-Counter", samples, parser.problems)


def parse_iostat_json(text: str) -> ParsedResult:
    """A saved `iostat -o JSON` document; one cut short (iostat killed) is read line by line."""
    samples: list[Sample] = []
    problems: list[str] = []
    version = ""
    untimed = False
    try:
        doc = json.loads(text)
        hosts = doc["sysstat"]["hosts"]
    except (ValueError, KeyError, TypeError):
        hosts = None
    if hosts is not None:
        for host in hosts:
            version = str(doc["sysstat"].get("version", "") or "") if isinstance(doc.get("sysstat"), dict) else ""
            name = str(host.get("nodename", "host"))
            for i, stats in enumerate(host.get("statistics", [])):
                t = _iostat_time(stats.get("timestamp"), i)
                untimed = untimed or not isinstance(stats.get("timestamp"), str)
                parser = IostatJsonParser(name, clock=lambda t=t: t)
                lines = ['"disk": [', *(json.dumps(d) + "," for d in stats.get("disk", [])), "]"]
                for line in lines:
                    samples += parser.feed(line)
                problems += parser.problems
    else:
        parser = IostatJsonParser("host", clock=_counter())
        for line in text.splitlines():
            samples += parser.feed(line)
        samples += parser.close()
        problems += parser.problems
        untimed = True
        if samples:
            problems.append("the JSON document is incomplete (iostat was stopped?): read interval by interval")
        else:
            problems.append("no 'sysstat' document and no \"disk\" lists: is this `iostat -o JSON` output?")
    times = sorted({s.timestamp for s in samples})
    if len(times) > 1:
        # without -y iostat's first report is the average since boot, not part of the run
        samples = [s for s in samples if s.timestamp != times[0]]
    result = summarize_series("iostat", samples, [])
    result.version = version
    if len(times) > 1:
        result.notes.append(f"the first of {len(times)} intervals is left out: iostat's first report covers "
                            "the time since boot (unless run with -y)")
    if untimed:
        result.duration_s = NAN
        result.problems = [p for p in result.problems if not p.startswith("duration unknown")]
        result.missing("duration", "the intervals carry no time (iostat ran without -t)")
    elif len(times) > 1:
        result.duration_s = times[-1] - times[0]
        result.problems = [p for p in result.problems if not p.startswith("duration unknown")]
    result.problems = [p for p in result.problems if not p.startswith("no host total")] + problems
    if samples:
        result.notes.append("iostat reports each device: the figures are per device, in the rows")
        if not any(s.metric == M.READ_LATENCY_MS for s in samples):
            result.missing("read/write split and latency", "iostat ran without -x (extended statistics)")
    return result


def _iostat_time(stamp, index: int) -> float:
    if isinstance(stamp, str):
        from datetime import datetime
        try:
            return datetime.fromisoformat(stamp).timestamp()
        except ValueError:
            pass
    return float(index)       # older sysstat prints a locale time of day only: the interval number


def _counter():
    n = [-1.0]

    def tick() -> float:
        n[0] += 1
        return n[0]
    return tick
