"""End-of-run result files of the Windows load tools, read into one ParsedResult each:
DiskSpd (text and -Rxml), Jetstress (HTML report), sqlio (text, with its latency
histogram), Iometer (results CSV).  DiskSpd prints MiB/s; it is turned into MB/s (10^6 bytes)
like every other tool's figure."""
from __future__ import annotations

import csv
import html
import io
import math
import re
import xml.etree.ElementTree as ET

from app.metrics.parsed import NAN, JobRow, ParsedResult, add, weighted_mean
from app.metrics.windows import (
    ToolResult,
    jetstress_from_labels,
    parse_diskspd_text,
    parse_diskspd_xml,
    parse_jetstress_html,
)

MIB = 1048576 / 1e6


def _from_tool_result(r: ToolResult, version: str = "", duration_s: float = NAN) -> ParsedResult:
    out = ParsedResult(r.tool, version, r.iops, r.read_iops, r.write_iops, r.read_latency_ms,
                       r.write_latency_ms, r.mib_per_s * MIB if not math.isnan(r.mib_per_s) else NAN, duration_s)
    out.problems += r.problems
    for name, pct in r.percentiles_ms.items():
        for d in ("read", "write"):
            if not math.isnan(pct.get(d, NAN)):
                out.extra[f"{d} latency {name} ms"] = pct[d]
    return out


def _latency_problems(out: ParsedResult, how: str) -> None:
    for d in ("read", "write"):
        if getattr(out, f"{d}_iops") and not math.isnan(getattr(out, f"{d}_iops")) \
                and math.isnan(getattr(out, f"{d}_latency_ms")):
            out.missing(f"{d} latency", how)


def parse_diskspd(text: str) -> ParsedResult:
    if text.lstrip().startswith("<"):
        r = parse_diskspd_xml(text)
        try:
            root = ET.fromstring(text)
            version = root.findtext("./System/Tool/Version") or ""
            seconds = float(root.findtext(".//TimeSpan/TestTimeSeconds") or "nan")
        except (ET.ParseError, ValueError):
            version, seconds = "", NAN
        out = _from_tool_result(r, version, seconds)
        _latency_problems(out, "DiskSpd measured none (the XML has no <Latency>; run DiskSpd with -L)")
    else:
        r = parse_diskspd_text(text)
        m = re.search(r"actual test time:\s*([\d.]+)s", text)
        v = re.search(r"DiskSpd\s+(?:version\s+)?v?([\d.]+\w*)", text, re.I)
        out = _from_tool_result(r, v.group(1) if v else "", float(m.group(1)) if m else NAN)
        _latency_problems(out, "the tables have no AvgLat column (run DiskSpd with -L)")
        if math.isnan(out.duration_s) and not r.problems:
            out.missing("duration", "no 'actual test time' line")
    return out


def parse_jetstress(text: str) -> ParsedResult:
    """Jetstress's report, HTML or XML.  The achieved IOPS and the verdict are label/value rows; the
    latencies are in the "Transactional I/O Performance" table, a header row of counter names
    and one row per database instance: read latency is the instances' mean weighted by their
    reads/sec, write latency the log writes' (Jetstress's own pass criterion), weighted alike."""
    if text.lstrip().startswith("<?xml") or re.match(r"\s*<Jetstress", text):
        return _jetstress_xml(text)
    r = parse_jetstress_html(text)
    m = re.search(r"Jetstress Version\s*(?:<[^>]*>\s*)*([\d.]+(?:\s*\(\d+\))?)", text, re.I) \
        or re.search(r"Jetstress\s+(?:Version\s*)?([\d.]+(?:\s*\(\d+\))?)", text, re.I)
    return _jetstress_figures(r, m.group(1).strip() if m else "", _jetstress_instances(text))


def _jetstress_xml(text: str) -> ParsedResult:
    """The report as XML: every element with a `name` attribute (or a tag) and a value is a
    label/value row; an element whose children are the transactional counters is an instance."""
    if re.search(r"<!(DOCTYPE|ENTITY)", text[:4096], re.I):
        out = ParsedResult("Jetstress")
        out.problems.append("the XML declares a DOCTYPE or entities: not a Jetstress report, not read")
        return out
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        out = ParsedResult("Jetstress")
        out.problems.append(f"the XML cannot be read ({exc})")
        return out
    pairs: dict[str, str] = {}
    instances: list[tuple[str, dict[str, str]]] = []
    counters: set[int] = set()          # an instance's counters are its own, not the report's rows
    for el in root.iter():
        children = [(_xml_label(c), (c.text or c.get("value") or "").strip()) for c in el]
        if any(label.startswith("i/o database reads average latency") for label, _ in children):
            instances.append((el.get("name") or el.get("instance") or el.tag, dict(children)))
            counters.update(id(c) for c in el)
            continue
        value = (el.text or el.get("value") or "").strip()
        if value and not len(el) and id(el) not in counters:
            pairs.setdefault(_xml_label(el), value)
    return _jetstress_figures(jetstress_from_labels(pairs), pairs.get("jetstress version", ""), instances)


def _xml_label(el: ET.Element) -> str:
    return jetstress_label(el.get("name") or el.tag)


def jetstress_label(text: str) -> str:
    """A counter's name as the parser looks it up.  Reports print them in several ways: 'I/O
    Database Reads/sec', 'I/O Database Reads /sec', 'I/O Database Reads/s', 'I/O Database
    Reads/s/sec', 'I/O Data base Reads Average Latency (msec)' (seen in one ESRP report's
    Jetstress 2010 tables); all read as 'i/o database reads/sec' and so on."""
    label = re.sub(r"\s+", " ", text).strip().lower()
    label = label.replace("data base", "database")
    label = re.sub(r"\s*/\s*", "/", label)
    label = re.sub(r"/s/sec\b", "/sec", label)
    label = re.sub(r"/s\b(?!ec)", "/sec", label)
    return label


def _jetstress_figures(r, version: str, instances: list[tuple[str, dict[str, str]]]) -> ParsedResult:
    out = _from_tool_result(r, version)
    if r.passed is not None:
        out.extra["overall test result"] = "pass" if r.passed else "fail"
    if instances:
        def col(row, name):
            return next((_float(v) for k, v in row.items() if k.startswith(name)), NAN)
        columns = set().union(*(row.keys() for _, row in instances))
        for name, what in (("i/o database reads/sec", "reads/s"), ("i/o database writes/sec", "writes/s"),
                           ("i/o log writes/sec", "log writes/s")):
            if not any(c.startswith(name) for c in columns):
                out.missing(f"per-instance {what}", f"the instances' table has no '{name}' column")
        reads, logs = [], []
        for name, row in instances:
            job = JobRow(name, read_latency_ms=col(row, "i/o database reads average latency"),
                         write_latency_ms=col(row, "i/o log writes average latency"),
                         read_iops=col(row, "i/o database reads/sec"), write_iops=col(row, "i/o database writes/sec"))
            job.extra = {"database writes average latency ms": col(row, "i/o database writes average latency"),
                         "log writes/sec": col(row, "i/o log writes/sec")}
            job.iops = job.read_iops + job.write_iops
            out.jobs.append(job)
            reads.append((job.read_latency_ms, job.read_iops if not math.isnan(job.read_iops) else 1.0))
            logs.append((job.write_latency_ms, job.extra["log writes/sec"]
                         if not math.isnan(job.extra["log writes/sec"]) else 1.0))
        if math.isnan(out.read_latency_ms):
            out.read_latency_ms = weighted_mean(reads)
        if math.isnan(out.write_latency_ms):
            out.write_latency_ms = weighted_mean(logs)
        out.read_iops = add(j.read_iops for j in out.jobs)
        out.write_iops = add(j.write_iops for j in out.jobs)
    if not r.problems:
        if math.isnan(out.read_latency_ms):
            out.missing("read latency", "no 'I/O Database Reads Average Latency' row or column in the report")
        if math.isnan(out.write_latency_ms):
            out.missing("write latency", "no 'I/O Log Writes Average Latency' row or column in the report")
    return out


def _float(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return NAN


def _jetstress_instances(text: str) -> list[tuple[str, dict[str, str]]]:
    """The rows of the report's first table of instances, "Transactional I/O Performance": the
    "Total I/O Performance" table further on has the same columns with other figures (background
    maintenance and log replication added), and must not be read as more instances."""
    out: list[tuple[str, dict[str, str]]] = []
    header = None
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", text, flags=re.S | re.I):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, flags=re.S | re.I)]
        lowered = [jetstress_label(c) for c in cells]
        if any(c.startswith("i/o database reads average latency") for c in lowered[1:]):
            if out:
                break               # a second table of instances: the first one was the transactional
            header = lowered
            continue
        if header and len(cells) == len(header) and cells[0] \
                and all(not math.isnan(_float(c)) for c in cells[1:] if c):
            out.append((cells[0], dict(zip(header[1:], cells[1:]))))
        elif out:
            break
        else:
            header = None
    return out


_SQLIO = {"iops": r"IOs/sec:\s*([\d.]+)", "mbs": r"MBs/sec:\s*([\d.]+)",
          "min": r"Min_Latency\(ms\):\s*([\d.]+)", "avg": r"Avg_Latency\(ms\):\s*([\d.]+)",
          "max": r"Max_Latency\(ms\):\s*([\d.]+)"}


def parse_sqlio(text: str) -> ParsedResult:
    """sqlio's text output.  Its MBs/sec counts MiB (2^20 bytes); latency is whole ms.  A lab that
    runs sqlio again with `>> results.txt` gets one file of several runs, each starting with
    sqlio's banner (or its "N threads reading|writing" line): each is a row of its own, and the
    file's figures are over all of them (I/Os and seconds added, latency weighted by I/Os)."""
    runs = [_sqlio_run(chunk) for chunk in _sqlio_chunks(text)]
    runs = [r for r in runs if r is not None] or [_sqlio_run(text)]
    if len(runs) == 1 and runs[0] is not None:
        return runs[0]
    first = next((r for r in runs if r is not None), None)
    out = ParsedResult("sqlio", first.version if first is not None else "")
    if first is None:
        out.problems.append("no 'IOs/sec:' line: is this sqlio's output?")
        return out
    for k, r in enumerate(runs, 1):
        threads = r.extra.get("threads")
        how = f"{threads:g} threads, {r.duration_s:g} s" if isinstance(threads, float) and \
            not math.isnan(r.duration_s) else ""
        row = JobRow(f"run {k}" + (f" ({how})" if how else ""), r.iops, r.read_iops, r.write_iops,
                     r.read_latency_ms, r.write_latency_ms, r.mb_per_s, r.duration_s)
        row.extra = {k2: v for k2, v in r.extra.items() if k2 != "latency histogram"}
        out.jobs.append(row)
        out.problems += [f"run {k}: {p}" for p in r.problems]
    seconds = [r.duration_s for r in runs]
    if any(math.isnan(x) for x in seconds):
        out.problems.append("a run has no 'N threads reading|writing for S secs' line: the file's figures are "
                            "left to the runs' rows")
        return out
    total = sum(seconds)
    for name in ("iops", "read_iops", "write_iops", "mb_per_s"):
        values = [getattr(r, name) for r in runs]
        if not any(math.isnan(v) for v in values):
            setattr(out, name, sum(v * x for v, x in zip(values, seconds)) / total)
    out.read_latency_ms = weighted_mean((r.read_latency_ms, r.read_iops * x) for r, x in zip(runs, seconds))
    out.write_latency_ms = weighted_mean((r.write_latency_ms, r.write_iops * x) for r, x in zip(runs, seconds))
    out.duration_s = total
    out.notes.append(f"{len(runs)} sqlio runs one after another in one file (appended with >>): the figures "
                     "are over all of them (I/Os and seconds added, latency weighted by I/Os); each run is a row")
    return out


_SQLIO_BANNER = re.compile(r"^sqlio v", re.M)
_SQLIO_RUN_LINE = re.compile(r"^\s*\d+ threads? (?:reading|writing) for \d+ secs?", re.M)


def _sqlio_chunks(text: str) -> list[str]:
    """The text of each run in a file several runs were appended to."""
    for mark in (_SQLIO_BANNER, _SQLIO_RUN_LINE):
        starts = [m.start() for m in mark.finditer(text)]
        if len(starts) > 1:
            return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    return [text]


def _sqlio_run(text: str) -> ParsedResult | None:
    """One run's figures; None for a part of the file with no 'IOs/sec:' line."""
    v = re.search(r"sqlio v([\w.]+)", text)
    out = ParsedResult("sqlio", v.group(1) if v else "")
    found = {k: float(m.group(1)) for k, p in _SQLIO.items() if (m := re.search(p, text))}
    run = re.search(r"(\d+) threads? (reading|writing) for (\d+) secs?", text)
    if "iops" not in found:
        return None
    out.iops = found["iops"]
    out.mb_per_s = found["mbs"] * MIB if "mbs" in found else NAN
    if run:
        out.duration_s = float(run.group(3))
        out.extra["threads"] = float(run.group(1))
        reading = run.group(2) == "reading"
        out.read_iops, out.write_iops = (out.iops, 0.0) if reading else (0.0, out.iops)
        lat = found.get("avg", NAN)
        if reading:
            out.read_latency_ms = lat
        else:
            out.write_latency_ms = lat
        if math.isnan(lat):
            out.missing(f"{run.group(2)[:-3]} latency", "no 'Avg_Latency(ms):' line (run sqlio with -LS)")
    else:
        out.missing("read/write split and duration", "no 'N threads reading|writing for S secs' line")
    for k in ("min", "max"):
        if k in found:
            out.extra[f"{k} latency ms"] = found[k]
    hist = re.search(r"^ms:\s*(.+)$\s*^%:\s*(.+)$", text, re.M)
    if hist:
        buckets, shares = hist.group(1).split(), hist.group(2).split()
        if len(buckets) == len(shares):
            out.extra["latency histogram"] = ", ".join(f"{b} ms: {s} %" for b, s in zip(buckets, shares))
        else:
            out.problems.append("the latency histogram's rows do not line up")
    return out


def parse_iometer_csv(text: str) -> ParsedResult:
    """Iometer's results CSV: a "'Target Type,Target Name,..." header before each results
    block; the row whose Target Type is ALL is the whole test, MANAGER and WORKER rows are the
    parts.  Response times are ms."""
    out = ParsedResult("Iometer")
    v = re.search(r"^'?Version\s*[\r\n]+'?([^\r\n,]+)", text, re.M)
    out.version = v.group(1).strip() if v else ""
    header: list[str] | None = None
    all_rows = []
    for cells in csv.reader(io.StringIO(text)):
        if not cells:
            continue
        if cells[0].startswith("'Target Type"):
            header = [c.lstrip("'").strip() for c in cells]
            continue
        if header and len(cells) >= 8 and cells[0] in ("ALL", "MANAGER", "WORKER", "DISK"):
            row = dict(zip(header, cells))
            all_rows.append(row)

    def num(row, *names):
        for n in names:
            try:
                return float(row[n])
            except (KeyError, ValueError):
                continue
        return NAN
    for row in all_rows:
        job = JobRow(f"{row['Target Type']} {row.get('Target Name', '')}".strip(),
                     num(row, "IOps"), num(row, "Read IOps"), num(row, "Write IOps"),
                     num(row, "Average Read Response Time"), num(row, "Average Write Response Time"),
                     num(row, "MBps (Decimal)", "MBps"))
        job.extra["access specification"] = row.get("Access Specification Name", "")
        out.jobs.append(job)
    totals = [j for j in out.jobs if j.name.startswith("ALL")]
    if not totals:
        out.problems.append("no results row with Target Type ALL: is this Iometer's results CSV?")
        return out
    t = totals[-1]
    out.iops, out.read_iops, out.write_iops = t.iops, t.read_iops, t.write_iops
    out.read_latency_ms, out.write_latency_ms, out.mb_per_s = t.read_latency_ms, t.write_latency_ms, t.mb_per_s
    if len(totals) > 1:
        out.notes.append(f"{len(totals)} access specifications: the figures are the last one's, "
                         "each is a row")
    out.missing("duration", "Iometer's results CSV does not record the run time")
    return out
