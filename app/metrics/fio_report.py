"""fio's JSON report (`--output-format=json`), every version from 2.x on, read into the
figures a report quotes.

What differs between versions, and how each is read:
- sizes: 2.x `io_bytes` is in KiB (3.x renamed it `io_kbytes` and made `io_bytes` bytes);
- latency: 2.x `clat`/`lat` are in microseconds, 3.x `clat_ns`/`lat_ns` in nanoseconds;
- time: every version gives each direction's own `runtime` (ms).  3.x adds `job_runtime`,
  which with `--group_reporting` is the SUM of the merged jobs' run times (4 jobs of 3 s give
  12 s), so rates are always taken from the direction's `runtime`, never from `job_runtime`;
- 2.1.x has no `timestamp` and no `total_ios`: the count comes from `iops` x `runtime`.
The latency quoted is fio's completion latency (clat) mean, as the live stream plots it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from app.metrics.parsed import NAN, JobRow, ParsedResult, add, weighted_mean
from app.metrics.reading import ResultFileError, json_objects, loads

DIRECTIONS = ("read", "write")


@dataclass
class Direction:
    """One direction of one job: counts since the job started."""
    ios: float
    nbytes: float
    runtime_ms: float
    lat_sum_ns: float          # mean completion latency x its sample count
    lat_n: float
    has_latency: bool

    @property
    def iops(self) -> float:
        return self.ios / (self.runtime_ms / 1000.0) if self.runtime_ms > 0 else NAN

    @property
    def latency_ms(self) -> float:
        return self.lat_sum_ns / self.lat_n / 1e6 if self.lat_n > 0 else NAN


def direction(part: dict) -> Direction:
    runtime = float(part.get("runtime") or 0)
    if "total_ios" in part:
        ios = float(part["total_ios"])
    else:                                   # fio 2.1.x: only the rate is given
        ios = float(part.get("iops") or 0) * runtime / 1000.0
    if "io_kbytes" in part or "bw_bytes" in part:
        nbytes = float(part.get("io_bytes") or 0)
    else:                                   # fio 2.x: io_bytes counts KiB
        nbytes = float(part.get("io_bytes") or 0) * 1024.0
    lat_ns, has = 0.0, False
    if isinstance(part.get("clat_ns"), dict):
        lat, scale, has = part["clat_ns"], 1.0, True
    elif isinstance(part.get("clat"), dict):
        lat, scale, has = part["clat"], 1000.0, True
    elif isinstance(part.get("lat_ns"), dict):
        lat, scale, has = part["lat_ns"], 1.0, True
    else:
        lat, scale = {}, 1.0
    n = float(lat.get("N", ios) or 0) if has else 0.0
    lat_ns = float(lat.get("mean", 0.0) or 0.0) * scale * n
    return Direction(ios, nbytes, runtime, lat_ns, n, has)


ALL_CLIENTS = "All clients"


def with_client_jobs(report: dict) -> dict:
    """A report of fio's client/server mode (`fio --client=HOST ...`) keeps its jobs under
    `client_stats`, one entry per job on each server (named by its `hostname` and `port`) and one
    more, "All clients", that adds them up: as a plain report, the servers' jobs as its jobs
    (the sum is worked out again from them, as for any report), each named HOST:PORT/JOB."""
    clients = report.get("client_stats")
    if "jobs" in report or not isinstance(clients, list):
        return report
    jobs = []
    for entry in clients:
        if not isinstance(entry, dict) or entry.get("jobname") == ALL_CLIENTS:
            continue
        where = str(entry.get("hostname") or "server") + (f":{entry['port']}" if entry.get("port") else "")
        jobs.append({**entry, "jobname": f"{where}/{entry.get('jobname', 'job')}"})
    return {**report, "jobs": jobs, "client/server": True}


def job_names(jobs: list[dict]) -> list[str]:
    """A name per job that stays the same from one report to the next: with numjobs > 1
    every clone shares the job name, so the second and later get '#2', '#3'..."""
    seen: dict[str, int] = {}
    out = []
    for job in jobs:
        name = str(job.get("jobname", "job"))
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def parse_fio_report(report: dict) -> ParsedResult:
    version = str(report.get("fio version", "")).removeprefix("fio-")
    result = ParsedResult("fio", version)
    jobs = report.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        result.problems.append("no 'jobs' list: is this fio's --output-format=json report?")
        return result
    odd = [n for n, job in enumerate(jobs, 1) if not isinstance(job, dict)]
    if odd:
        result.problems.append(f"{len(odd)} item(s) of the 'jobs' list are not jobs (the first is item {odd[0]}): "
                               "left out")
        jobs = [job for job in jobs if isinstance(job, dict)]
    every_global = report.get("global options") or {}
    groups = set()
    read_lat, write_lat = [], []
    for name, job in zip(job_names(jobs), jobs):
        if isinstance(job.get("mixed"), dict) and not isinstance(job.get("read"), dict):
            result.jobs.append(_mixed_row(name, job["mixed"], result))
            groups.add(job.get("groupid", 0))
            continue
        if not all(isinstance(job.get(d), dict) for d in DIRECTIONS):
            result.problems.append(f"job {name!r} has no read/write figures (error {job.get('error', '?')})")
            continue
        d = {k: direction(job[k]) for k in DIRECTIONS}
        opts = job.get("job options") or {}
        global_opts = _global_options(every_global, job)
        groups.add(job.get("groupid", 0))
        row = JobRow(name)
        row.read_iops = d["read"].iops if d["read"].ios else 0.0
        row.write_iops = d["write"].iops if d["write"].ios else 0.0
        row.iops = row.read_iops + row.write_iops
        runtime_ms = max(d["read"].runtime_ms, d["write"].runtime_ms)
        row.duration_s = runtime_ms / 1000.0 if runtime_ms else NAN
        row.mb_per_s = ((d["read"].nbytes + d["write"].nbytes) / (runtime_ms / 1000.0) / 1e6) if runtime_ms else NAN
        row.read_latency_ms, row.write_latency_ms = d["read"].latency_ms, d["write"].latency_ms
        for k in DIRECTIONS:
            if d[k].ios and not d[k].has_latency:
                result.missing(f"{name}: {k} latency", "the report has no clat/clat_ns figures for it")
        row.extra = {"groupid": job.get("groupid", 0),
                     "numjobs": opts.get("numjobs") or global_opts.get("numjobs") or "1",
                     "group_reporting": str(opts.get("group_reporting") or global_opts.get("group_reporting") or "0")}
        if job.get("error"):
            result.problems.append(f"job {name!r} ended with error {job['error']}")
        result.jobs.append(row)
        read_lat.append((d["read"].latency_ms, d["read"].lat_n))
        write_lat.append((d["write"].latency_ms, d["write"].lat_n))
    if not result.jobs:
        return result
    if any(math.isnan(r.read_iops) for r in result.jobs):
        result.iops = add(r.iops for r in result.jobs)
        result.mb_per_s = add(r.mb_per_s for r in result.jobs)
        result.duration_s = max((r.duration_s for r in result.jobs if not math.isnan(r.duration_s)), default=NAN)
        return result
    result.read_iops = add(r.read_iops for r in result.jobs)
    result.write_iops = add(r.write_iops for r in result.jobs)
    result.iops = add((result.read_iops, result.write_iops))
    result.mb_per_s = add(r.mb_per_s for r in result.jobs)
    result.duration_s = max((r.duration_s for r in result.jobs if not math.isnan(r.duration_s)), default=NAN)
    result.read_latency_ms = weighted_mean(read_lat)
    result.write_latency_ms = weighted_mean(write_lat)
    if result.read_iops == 0:
        result.notes.append("no reads: read latency does not apply")
    if result.write_iops == 0:
        result.notes.append("no writes: write latency does not apply")
    if report.get("client/server"):
        servers = {r.name.partition("/")[0] for r in result.jobs}
        result.notes.append(f"fio client/server: {len(servers)} server(s); the figures add up their jobs "
                            "(fio's own 'All clients' entry gives the same sum)")
    if len(groups) > 1:
        result.notes.append(f"{len(groups)} reporting groups: the totals add them as if they ran together; "
                            "groups separated by stonewall ran one after another - read the per-job rows")
    if math.isnan(result.duration_s):
        result.missing("duration", "no job has a runtime")
    return result


def _global_options(every: dict | list, job: dict) -> dict:
    """The global options a job ran with: client/server mode lists one set per server."""
    if isinstance(every, dict):
        return every
    if isinstance(every, list):
        for opts in every:
            if isinstance(opts, dict) and (opts.get("hostname"), opts.get("port")) == \
                    (job.get("hostname"), job.get("port")):
                return opts
    return {}


def _mixed_row(name: str, part: dict, result: ParsedResult) -> JobRow:
    """unified_rw_reporting: fio merges reads and writes into one "mixed" direction."""
    d = direction(part)
    runtime_s = d.runtime_ms / 1000.0
    row = JobRow(name, iops=d.iops if d.ios else 0.0, duration_s=runtime_s if runtime_s else NAN,
                 mb_per_s=d.nbytes / runtime_s / 1e6 if runtime_s else NAN)
    row.extra = {"latency ms (reads and writes)": d.latency_ms}
    if not any("unified_rw_reporting" in p for p in result.problems):
        result.missing("read/write split and latency", "fio ran with unified_rw_reporting: reads and writes "
                       "are merged (the mixed latency is in the job rows)")
    return row


def split_reports(text: str, problems: list[str] | None = None) -> list[dict]:
    """Every JSON report in `text`: one for a plain run, one per interval for a
    --status-interval stream; lines fio prints around them ("note: ...") are skipped."""
    return [doc for _, doc in reports_with_lines(text, problems)]


def reports_with_lines(text: str, problems: list[str] | None = None) -> list[tuple[int, dict]]:
    """(the line it starts on, the report) for every JSON report in `text`.  Linear in the
    text's length whatever it holds; an object nested too deep is skipped and, with
    `problems`, named with its line."""
    out = []
    seen, line = 0, 1
    for start, end in json_objects(text):
        chunk = text[start:end]
        if '"jobs"' not in chunk and '"fio version"' not in chunk:
            continue
        line += text.count("\n", seen, start)
        seen = start
        try:
            doc = loads(chunk)
        except ResultFileError as exc:
            # a torn last report (fio stopped) is skipped as before; one nested past any report's
            # depth is said, with its line
            if problems is not None and "nests deeper" in str(exc) and len(problems) < 20:
                problems.append(f"line {line + (exc.line or 1) - 1}: a JSON object nests deeper than any fio "
                                "report: skipped")
            continue
        if isinstance(doc, dict) and ("jobs" in doc or "fio version" in doc):
            out.append((line, doc))
    return out
