"""Parsers for the tools' live output: each turns lines into Samples as they arrive and never
raises on bad input.  A line that cannot be read is noted in `problems` and, when data was
lost, the affected series get an explicit gap (a NaN sample) so the plot does not draw a
line across missing time.

fio (`--output-format=json --status-interval=1`) prints one pretty-printed JSON report per
interval, starting with a line `{` and ending with a line `}`, whose figures are totals
since the job started: a second's IOPS, MB/s and mean latency are differences between
consecutive reports.  `iostat -d -x -o JSON N` prints one JSON document that grows by one
statistics entry per interval; each entry is a single line per device list.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

from app.metrics import sample as M
from app.metrics.fio_report import direction, job_names, with_client_jobs
from app.metrics.sample import Sample

NAN = math.nan


@dataclass
class _JobTotals:
    t_ms: float
    ios: dict[str, float] = field(default_factory=dict)        # read/write -> total ios
    bytes: dict[str, float] = field(default_factory=dict)
    lat_sum_ns: dict[str, float] = field(default_factory=dict)  # mean * N of completion latency
    lat_n: dict[str, float] = field(default_factory=dict)
    runtime_ms: float = 0.0     # how long the job has issued I/O (the longer of its directions)


class FioStatusParser:
    def __init__(self, host: str):
        self.host = host
        self.problems: list[str] = []
        self._lines: list[str] = []
        self._previous: dict[str, _JobTotals] = {}
        self.final_report: dict | None = None
        self.reports = 0

    @property
    def in_report(self) -> bool:
        """A report has begun and not yet ended: the next line belongs to it."""
        return bool(self._lines)

    def feed(self, line: str) -> list[Sample]:
        stripped = line.rstrip("\r\n")
        if not self._lines:
            if stripped.strip() == "":
                return []
            if stripped != "{":
                self.problems.append(f"fio on {self.host}: a line outside any report was ignored: {stripped[:80]!r}")
                return []
        self._lines.append(stripped)
        if stripped != "}":
            if len(self._lines) > 200_000:      # a report never ends: drop it rather than grow forever
                self._lines.clear()
                self.problems.append(f"fio on {self.host}: an unterminated report was dropped")
                return self._gap(time.time())
            return []
        text = "\n".join(self._lines)
        self._lines.clear()
        try:
            report = json.loads(text)
        except ValueError as exc:
            self.problems.append(f"fio on {self.host}: a report could not be read ({exc.msg} at line {exc.lineno}); "
                                 "its second is shown as a gap")
            return self._gap(time.time())
        return self._report(report)

    def close(self) -> list[Sample]:
        if self._lines:
            self.problems.append(f"fio on {self.host}: the output ended in the middle of a report "
                                 "(the collector or fio stopped)")
            self._lines.clear()
            return self._gap(time.time())
        return []

    def _gap(self, t: float) -> list[Sample]:
        return [Sample(t, self.host, metric, NAN, unit) for metric, unit in
                ((M.IOPS, "IO/s"), (M.READ_LATENCY_MS, "ms"), (M.WRITE_LATENCY_MS, "ms"), (M.THROUGHPUT_MBPS, "MB/s"))]

    def _report(self, report: dict) -> list[Sample]:
        """One status report's seconds.  A job's figures are counts since it started, so each
        is differenced against the job's previous report, over the time that difference covers:
        - a job's first report covers its own run time (its directions' `runtime`), not the time
          since fio started: fio lays files out and waits for earlier `stonewall` groups first;
        - a job that has not started (stonewall) or has ended gives no figure of its own;
        - `ramp_time`: fio zeroes a job's counts when its ramp ends, so counts that go down are
          counted from that moment (the report's `runtime` since the reset), never as negative;
        - the host's second is every job's I/O in the span the jobs cover together (the longest
          of their spans), so jobs that ran one after another are not added as if side by side."""
        self.reports += 1
        self.final_report = report
        try:
            t_ms = float(report.get("timestamp_ms") or report["timestamp"] * 1000)
            jobs = with_client_jobs(report)["jobs"]
        except (KeyError, TypeError):
            self.problems.append(f"fio on {self.host}: a report without time or jobs was ignored")
            return []
        out: list[Sample] = []
        host_ios = {"read": 0.0, "write": 0.0}
        host_bytes = 0.0
        host_lat = {"read": [0.0, 0.0], "write": [0.0, 0.0]}      # sum of latency, count
        interval_s = 0.0
        for name, job in zip(job_names(jobs), jobs):
            try:
                now = self._totals(job, t_ms)
            except (KeyError, TypeError, ValueError, AttributeError):
                self.problems.append(f"fio on {self.host}: job {name!r} had no read/write figures")
                continue
            before = self._previous.get(name)
            if before is not None and _was_reset(before, now):
                before = None               # ramp_time ended: the counts start again from zero
            if before is None:
                ran_ms = now.runtime_ms
                if not ran_ms and sum(now.ios.values()):        # a report without runtimes
                    ran_ms = float(job.get("job_runtime") or 1000)
                if not ran_ms:
                    continue                # not started yet (a later stonewall group): nothing to say
                before = _JobTotals(t_ms - ran_ms)
            elif now.runtime_ms == before.runtime_ms and now.ios == before.ios:
                self._previous[name] = now  # ended (or not yet running): no second of its own
                continue
            self._previous[name] = now
            dt = (now.t_ms - before.t_ms) / 1000.0
            if dt <= 0:
                continue      # fio's closing report can repeat the last second
            interval_s = max(interval_s, dt)
            source = f"{self.host}/{name}"
            t = now.t_ms / 1000.0
            total_ios = 0.0
            for d in ("read", "write"):
                ios = now.ios[d] - before.ios.get(d, 0.0)
                total_ios += ios
                host_ios[d] += ios
                n = now.lat_n[d] - before.lat_n.get(d, 0.0)
                lat_sum = now.lat_sum_ns[d] - before.lat_sum_ns.get(d, 0.0)
                host_lat[d][0] += lat_sum
                host_lat[d][1] += n
                metric = M.READ_LATENCY_MS if d == "read" else M.WRITE_LATENCY_MS
                out.append(Sample(t, source, metric, lat_sum / n / 1e6 if n > 0 else NAN, "ms"))
                out.append(Sample(t, source, M.READ_IOPS if d == "read" else M.WRITE_IOPS, ios / dt, "IO/s"))
            nbytes = sum(now.bytes.values()) - sum(before.bytes.values())
            host_bytes += nbytes
            out.append(Sample(t, source, M.IOPS, total_ios / dt, "IO/s"))
            out.append(Sample(t, source, M.THROUGHPUT_MBPS, nbytes / dt / 1e6, "MB/s"))
        if interval_s:
            t = t_ms / 1000.0
            out.append(Sample(t, self.host, M.IOPS, (host_ios["read"] + host_ios["write"]) / interval_s, "IO/s"))
            out.append(Sample(t, self.host, M.READ_IOPS, host_ios["read"] / interval_s, "IO/s"))
            out.append(Sample(t, self.host, M.WRITE_IOPS, host_ios["write"] / interval_s, "IO/s"))
            out.append(Sample(t, self.host, M.THROUGHPUT_MBPS, host_bytes / interval_s / 1e6, "MB/s"))
            for d, metric in (("read", M.READ_LATENCY_MS), ("write", M.WRITE_LATENCY_MS)):
                s, n = host_lat[d]
                out.append(Sample(t, self.host, metric, s / n / 1e6 if n > 0 else NAN, "ms"))
        return out

    @staticmethod
    def _totals(job: dict, t_ms: float) -> _JobTotals:
        totals = _JobTotals(t_ms)
        for d in ("read", "write"):
            part = direction(job[d])
            totals.ios[d] = part.ios
            totals.bytes[d] = part.nbytes
            totals.lat_n[d] = part.lat_n
            totals.lat_sum_ns[d] = part.lat_sum_ns
            # each direction's own run time: job_runtime sums the jobs --group_reporting merges
            totals.runtime_ms = max(totals.runtime_ms, part.runtime_ms)
        return totals


def _was_reset(before: _JobTotals, now: _JobTotals) -> bool:
    """fio zeroed the job's counts since its last report (the end of `ramp_time`)."""
    return now.runtime_ms < before.runtime_ms or any(now.ios[d] < before.ios.get(d, 0.0) for d in now.ios)


def fio_final_summary(report: dict) -> dict[str, float]:
    """fio's own figures over the whole run, summed over jobs: to check what was plotted."""
    out = {"read_iops": 0.0, "write_iops": 0.0, "read_latency_ms": 0.0, "write_latency_ms": 0.0}
    n = {"read": 0.0, "write": 0.0}
    for job in report.get("jobs", []):
        for d in ("read", "write"):
            out[f"{d}_iops"] += float(job[d]["iops"])
            part = direction(job[d])            # clat in ns (3.x) or µs (2.x)
            out[f"{d}_latency_ms"] += part.lat_sum_ns
            n[d] += part.lat_n
    for d in ("read", "write"):
        out[f"{d}_latency_ms"] = out[f"{d}_latency_ms"] / n[d] / 1e6 if n[d] else NAN
    out["iops"] = out["read_iops"] + out["write_iops"]
    return out


# iostat's kB is 1024 bytes and its MB 1048576 (sysstat counts 512-byte sectors); MB/s here is 10^6 B/s
_IOSTAT_RATES = ((("rkB/s", "wkB/s"), 1024 / 1e6), (("rMB/s", "wMB/s"), 1048576 / 1e6),
                 (("kB_read/s", "kB_wrtn/s"), 1024 / 1e6), (("MB_read/s", "MB_wrtn/s"), 1048576 / 1e6))


def _device_samples(t: float, src: str, dev: dict) -> list[Sample]:
    """One device's figures of one interval: `iostat -x` gives r/s, w/s and the awaits (older
    sysstat one `await` for both, `avgqu-sz` for the queue); plain iostat only tps and rates."""
    mbps = NAN
    for (rd, wr), factor in _IOSTAT_RATES:
        if rd in dev or wr in dev:
            mbps = (float(dev.get(rd, 0)) + float(dev.get(wr, 0))) * factor
            break
    if "r/s" not in dev and "w/s" not in dev:
        return [Sample(t, src, M.IOPS, float(dev["tps"]), "IO/s"), Sample(t, src, M.THROUGHPUT_MBPS, mbps, "MB/s")]
    r, w = float(dev["r/s"]), float(dev["w/s"])
    both = dev.get("await", NAN)
    return [Sample(t, src, M.READ_IOPS, r, "IO/s"), Sample(t, src, M.WRITE_IOPS, w, "IO/s"),
            Sample(t, src, M.IOPS, r + w, "IO/s"),
            Sample(t, src, M.READ_LATENCY_MS, float(dev.get("r_await", both)), "ms"),
            Sample(t, src, M.WRITE_LATENCY_MS, float(dev.get("w_await", both)), "ms"),
            Sample(t, src, M.THROUGHPUT_MBPS, mbps, "MB/s"),
            Sample(t, src, M.QUEUE_LENGTH, float(dev.get("aqu-sz", dev.get("avgqu-sz", NAN))), "")]


class IostatJsonParser:
    """`iostat -d -x -o JSON 1`: the per-interval device lists, one source per device.  iostat
    writes each device on one line and closes each interval's list with a `]` line."""

    def __init__(self, host: str, clock=time.time):
        self.host = host
        self.problems: list[str] = []
        self._clock = clock
        self._devices: list[dict] = []
        self._known: set[str] = set()
        self._capture: list[str] | None = None      # lines of the current "disk" list

    def feed(self, line: str) -> list[Sample]:
        # compact output (iostat's own) has one device a line; pretty-printed output (jq,
        # python -m json.tool) spreads each over many: both are read as the text of the
        # "disk" list, which a line starting with "]" closes
        text = line.strip()
        if self._capture is None:
            at = text.find('"disk"')
            if at >= 0 and "[" in text[at:]:
                rest = text[text.index("[", at) + 1:]
                self._capture = []
                if rest.strip().startswith("]"):
                    self._capture = None         # an interval with no devices
                elif rest.strip():
                    self._capture.append(rest)
            return []
        if text.startswith("]"):
            body, self._capture = "\n".join(self._capture), None
            try:
                devices = json.loads("[" + body.rstrip().rstrip(",") + "]")
            except ValueError as exc:
                self.problems.append(f"iostat on {self.host}: an interval's device list could not be read "
                                     f"({exc}): shown as a gap")
                return self._gap()
            self._devices = [d for d in devices if isinstance(d, dict)]
            return self._interval()
        self._capture.append(line.rstrip("\r\n"))
        if len(self._capture) > 100_000:
            self._capture = None
            self.problems.append(f"iostat on {self.host}: a device list never ended and was dropped")
        return []

    def _gap(self) -> list[Sample]:
        t = self._clock()
        return [Sample(t, f"{self.host}/{name}", M.IOPS, NAN, "IO/s") for name in sorted(self._known)]

    def _interval(self) -> list[Sample]:
        entry = {"disk": self._devices}
        self._devices = []
        t = self._clock()
        out: list[Sample] = []
        seen = set()
        for dev in entry.get("disk", []):
            try:
                name = str(dev["disk_device"]).strip()        # -g group names start with a space
                src = f"{self.host}/{name}"
                out += _device_samples(t, src, dev)
                seen.add(name)
            except (KeyError, TypeError, ValueError):
                self.problems.append(f"iostat on {self.host}: a device entry without r/s and w/s (iostat -x) "
                                     "or tps was skipped")
        for gone in self._known - seen:
            self.problems.append(f"iostat on {self.host}: device {gone} disappeared")
            out.append(Sample(t, f"{self.host}/{gone}", M.IOPS, NAN, "IO/s"))
        self._known = seen
        return out

    def close(self) -> list[Sample]:
        if self._capture:
            self.problems.append(f"iostat on {self.host}: the output ended in the middle of an interval")
            self._capture = None
        return []
