"""What one result file says, whatever tool wrote it: the figures `testbed-studio parse`
prints and the reports quote.  A figure the file does not give is NaN and `problems` names
what is missing; it is never shown as 0."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

NAN = math.nan


@dataclass
class JobRow:
    """One job, group, device, counter instance or target of the file."""
    name: str
    iops: float = NAN
    read_iops: float = NAN
    write_iops: float = NAN
    read_latency_ms: float = NAN
    write_latency_ms: float = NAN
    mb_per_s: float = NAN
    duration_s: float = NAN
    extra: dict[str, float | str] = field(default_factory=dict)


@dataclass
class ParsedResult:
    tool: str
    version: str = ""
    iops: float = NAN
    read_iops: float = NAN
    write_iops: float = NAN
    read_latency_ms: float = NAN
    write_latency_ms: float = NAN
    mb_per_s: float = NAN               # decimal megabytes (10^6 bytes) per second
    duration_s: float = NAN
    jobs: list[JobRow] = field(default_factory=list)
    extra: dict[str, float | str] = field(default_factory=dict)   # tool-specific: opm, histogram, verdict
    problems: list[str] = field(default_factory=list)             # what could not be read, and why
    notes: list[str] = field(default_factory=list)                # how a figure was derived

    def missing(self, what: str, why: str) -> None:
        self.problems.append(f"{what} unknown: {why}")

    def as_dict(self) -> dict:
        def num(v):
            # JSON has no NaN or Infinity: an unknown figure is null
            return None if isinstance(v, float) and not math.isfinite(v) else v

        def row(r: JobRow) -> dict:
            return {"name": r.name, "iops": num(r.iops), "read_iops": num(r.read_iops),
                    "write_iops": num(r.write_iops), "read_latency_ms": num(r.read_latency_ms),
                    "write_latency_ms": num(r.write_latency_ms), "mb_per_s": num(r.mb_per_s),
                    "duration_s": num(r.duration_s), **{k: num(v) for k, v in r.extra.items()}}
        return {"tool": self.tool, "version": self.version or None, "iops": num(self.iops),
                "read_iops": num(self.read_iops), "write_iops": num(self.write_iops),
                "read_latency_ms": num(self.read_latency_ms), "write_latency_ms": num(self.write_latency_ms),
                "mb_per_s": num(self.mb_per_s), "duration_s": num(self.duration_s),
                "jobs": [row(r) for r in self.jobs], "extra": {k: num(v) for k, v in self.extra.items()},
                "problems": list(self.problems), "notes": list(self.notes)}

    def as_text(self) -> str:
        def f(v: float, unit: str = "") -> str:
            if math.isnan(v):
                return "unknown"
            text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
            return f"{text} {unit}".rstrip()
        lines = [f"tool: {self.tool}" + (f" {self.version}" if self.version else ""),
                 f"IOPS: {f(self.iops)} (read {f(self.read_iops)}, write {f(self.write_iops)})",
                 f"latency: read {f(self.read_latency_ms, 'ms')}, write {f(self.write_latency_ms, 'ms')}",
                 f"throughput: {f(self.mb_per_s, 'MB/s')}", f"duration: {f(self.duration_s, 's')}"]
        for k, v in self.extra.items():
            lines.append(f"{k}: {f(v) if isinstance(v, float) else v}")
        if self.jobs:
            lines.append(f"{'job':<40}{'IOPS':>12}{'read ms':>10}{'write ms':>10}{'MB/s':>10}{'s':>8}")
            for r in self.jobs:
                lines.append(f"{r.name[:39]:<40}{f(r.iops):>12}{f(r.read_latency_ms):>10}"
                             f"{f(r.write_latency_ms):>10}{f(r.mb_per_s):>10}{f(r.duration_s):>8}")
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"missing: {p}" for p in self.problems]
        return "\n".join(lines) + "\n"


def weighted_mean(pairs) -> float:
    """Mean of (value, weight) pairs, NaN values and zero weights left out."""
    total = weight = 0.0
    for v, w in pairs:
        if not math.isnan(v) and w > 0:
            total += v * w
            weight += w
    return total / weight if weight else NAN


def add(values) -> float:
    """Sum of the known values; NaN when none is known."""
    known = [v for v in values if not math.isnan(v)]
    return sum(known) if known else NAN


class ResultFileError(ValueError):
    """A result file cannot be read or attached; the message says why, where (`line`, when one
    can be named) and what to do."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


FIGURES = ("iops", "read_iops", "write_iops", "read_latency_ms", "write_latency_ms", "mb_per_s", "duration_s")


def refuse_non_finite(result: ParsedResult) -> ParsedResult:
    """An infinite figure is no measurement (a file that says `inf`, or a count so large that a
    rate overflows): it becomes unknown, and `problems` says so.  JSON then never carries it."""
    def clean(owner: str, values: dict) -> dict:
        out = {}
        for name, value in values.items():
            if isinstance(value, float) and math.isinf(value):
                result.problems.append(f"{owner}{name} is {value} in the file: not a measurement, left out")
                value = NAN
            out[name] = value
        return out
    for name, value in clean("", {n: getattr(result, n) for n in FIGURES}).items():
        setattr(result, name, value)
    result.extra = clean("", result.extra)
    for row in result.jobs:
        for name, value in clean(f"{row.name}: ", {n: getattr(row, n) for n in FIGURES}).items():
            setattr(row, name, value)
        row.extra = clean(f"{row.name}: ", row.extra)
    return result
