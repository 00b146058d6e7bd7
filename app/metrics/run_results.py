"""Result files kept with a run: each load tool's own report, attached to the run, a step and
the host (or VM) it is about, whether a person imported it (`testbed-studio results import`,
the Results view) or the run fetched it from the host when the workload step ended.

Layout in the run's folder:

    results/NNN-NAME       a copy of each file, byte for byte (NNN keeps two files of one name apart)
    results.jsonl          one record per attached file: where it came from, step, host, tool, its
                           SHA-256 and the figures its parser read (app.metrics.registry)

Records are appended and fsync'd like the journal's, so a crash leaves at worst a torn last
line, which is ignored.  A file whose content no parser can read is refused with the parser's
reasons and nothing is written.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.metrics.parsed import ParsedResult, ResultFileError
from app.metrics.reading import decode
from app.metrics.registry import parse_text

INDEX = "results.jsonl"
FOLDER = "results"
MAX_BYTES = 256 * 1024 * 1024        # a result file larger than this is not a tool's report
IMPORTED, FETCHED = "imported", "fetched"

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_lock = threading.Lock()


@dataclass
class AttachedResult:
    source: str                 # the path it was imported from, or HOST:PATH it was fetched from
    stored: str                 # relative to the run folder
    step: str
    host: str
    tool: str
    how: str                    # imported | fetched
    sha256: str
    time: str
    figures: dict[str, Any] = field(default_factory=dict)    # ParsedResult.as_dict()
    # where in the test the file was measured: configuration, phase, scenario, level, repetition (the
    # step's place in the run section, or what `results import` was told)
    position: dict[str, str] = field(default_factory=dict)

    def figure(self, name: str) -> float:
        """A figure of the file by metric name (iops, read_latency_ms, orders_per_minute ...);
        NaN when the file does not give it."""
        if name == "orders_per_minute":
            value = self.figures.get("extra", {}).get("orders per minute")
        else:
            value = self.figures.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def nothing_read(result: ParsedResult) -> bool:
    figures = (result.iops, result.read_latency_ms, result.write_latency_ms, result.mb_per_s, result.duration_s)
    return all(math.isnan(v) for v in figures) and not result.jobs and not result.extra


def attach(run_dir: Path, raw: bytes, source: str, *, step: str = "", host: str = "", tool: str | None = None,
           how: str = IMPORTED, position: dict | None = None) -> AttachedResult:
    """Parse, copy into the run and record one result file.  ResultFileError when no parser can
    read it (nothing is written then)."""
    if len(raw) > MAX_BYTES:
        raise ResultFileError(f"{source}: {len(raw):,} bytes is larger than a load tool's report "
                              f"({MAX_BYTES // (1024 * 1024)} MB at most)")
    try:
        parsed = parse_text(decode(raw), tool)
    except ValueError as exc:
        raise ResultFileError(f"{source}: {exc}") from None
    if parsed.tool == "unknown" or nothing_read(parsed):
        raise ResultFileError(f"{source}: nothing could be read - " + "; ".join(parsed.problems or ["no figures"]))
    run_dir = Path(run_dir)
    folder = run_dir / FOLDER
    with _lock:
        folder.mkdir(exist_ok=True)
        taken = {p.name for p in folder.iterdir()}
        name = _SAFE.sub("_", Path(source.rpartition(":")[2] if how == FETCHED else source).name)[:80] or "result"
        number = len(taken) + 1
        while any(t.startswith(f"{number:03d}-") for t in taken):
            number += 1
        target = folder / f"{number:03d}-{name}"
        from topology.fileformat import write_atomic
        write_atomic(target, raw)
        record = AttachedResult(source, f"{FOLDER}/{target.name}", step, host, parsed.tool, how,
                                hashlib.sha256(raw).hexdigest(), datetime.now(UTC).astimezone().isoformat(
                                    timespec="seconds"), parsed.as_dict(),
                                {k: str(v) for k, v in (position or {}).items() if v})
        line = (json.dumps(record.__dict__, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        fd = os.open(run_dir / INDEX, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line        # a torn record (a crash mid-write) must not swallow this one
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    return record


def attach_file(run_dir: Path, path: Path, **options: Any) -> AttachedResult:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return attach(run_dir, raw, str(path), **options)


def attached(run_dir: Path) -> list[AttachedResult]:
    """The run's result files in the order they were attached (a torn last record is left out)."""
    try:
        text = (Path(run_dir) / INDEX).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    names = set(AttachedResult.__dataclass_fields__)
    required = names - {"position"}         # (records written before positions were kept have none)
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue        # a torn record, or a line no run wrote
        if isinstance(data, dict) and required <= set(data) and isinstance(data["figures"], dict) \
                and all(isinstance(data[k], str) for k in required - {"figures"}) \
                and isinstance(data.get("position", {}), dict):
            out.append(AttachedResult(**{k: data[k] for k in names if k in data}))
    return out
