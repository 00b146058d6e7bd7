"""The run journal: what happened to every step on every host, written as the run goes.

A run lives in its own directory:

    run.json          what was run: bed file and its hash, step selection (written once, atomically)
    journal.jsonl     one JSON record per line, appended and fsync'd before the work goes on
    output/           the full output of each step on each host (STEP@HOST.log)
    metrics.jsonl     samples recorded while the workloads ran (app.metrics)

Every record is a single write of one line followed by fsync, so a kill at any moment
leaves at worst a torn last line, which the reader reports and ignores.  A task with a
"start" record and no "end" was interrupted: resume runs it again.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from topology.fileformat import write_atomic

# task statuses
PENDING = "pending"
RUNNING = "running"
OK = "ok"
DONE = "done"              # manual step ticked off by the user
SKIPPED = "skipped"
FAILED = "failed"
TIMEOUT = "timeout"
CANCELLED = "cancelled"
LOST = "lost"              # connection dropped while the step ran
INTERRUPTED = "interrupted"    # started, never ended: the application or machine died
UNREACHABLE = "unreachable"
AUTH_FAILED = "auth-failed"
HOST_KEY = "host-key"

SUCCEEDED = frozenset({OK, DONE, SKIPPED})
PROBLEMS = frozenset({FAILED, TIMEOUT, CANCELLED, LOST, INTERRUPTED, UNREACHABLE, AUTH_FAILED, HOST_KEY})

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="milliseconds")


@dataclass
class TaskState:
    step: str
    host: str
    status: str = PENDING
    exit_code: int | None = None
    message: str = ""
    started: str = ""
    ended: str = ""
    seconds: float | None = None
    attempts: int = 0
    tail: list[str] = field(default_factory=list)


class Journal:
    """Append-only, thread-safe.  `state()` replays it into the latest TaskState per task."""

    def __init__(self, run_dir: Path):
        self.dir = Path(run_dir)
        (self.dir / "output").mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "journal.jsonl"
        self._lock = threading.Lock()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        # a torn last line (killed mid-write) would swallow the next record: end it first
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    os.write(self._fd, b"\n")
                    os.fsync(self._fd)

    def record(self, kind: str, **fields: Any) -> None:
        entry = {"kind": kind, "time": now_iso(), **fields}
        line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        with self._lock:
            os.write(self._fd, line)
            os.fsync(self._fd)

    def output_path(self, step: str, host: str) -> Path:
        return self.dir / "output" / f"{_SAFE.sub('_', step)}@{_SAFE.sub('_', host)}.log"

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_records(run_dir: Path) -> tuple[list[dict], list[str]]:
    """All whole records, and a note for each line that could not be read (a torn write)."""
    path = Path(run_dir) / "journal.jsonl"
    records: list[dict] = []
    problems: list[str] = []
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return records, problems
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict) or "kind" not in entry:
                raise ValueError("not a journal record")
            records.append(entry)
        except ValueError:
            problems.append(f"{path}:{number}: an incomplete record (the run was stopped while "
                            "writing it) was ignored")
    return records, problems


def replay(records: list[dict]) -> dict[tuple[str, str], TaskState]:
    states: dict[tuple[str, str], TaskState] = {}
    for r in records:
        if r["kind"] not in ("start", "end", "mark"):
            continue
        key = (str(r.get("step")), str(r.get("host")))
        st = states.get(key) or states.setdefault(key, TaskState(*key))
        if r["kind"] == "start":
            st.status, st.started, st.ended = RUNNING, r.get("time", ""), ""
            st.attempts += 1
            st.exit_code, st.message, st.tail = None, "", []
        else:
            st.status = r.get("status", FAILED)
            st.exit_code = r.get("exit_code")
            st.message = r.get("message", "")
            st.ended = r.get("time", "")
            st.seconds = r.get("seconds")
            st.tail = list(r.get("tail", []))
    for st in states.values():
        if st.status == RUNNING:
            # nobody finishes a record for a run that died: the step may or may not have
            # taken effect, so it is run again on resume
            st.status = INTERRUPTED
            st.message = "the run stopped while this step was running (application or machine died)"
    return states


# ------------------------------------------------------------------------ run directories

@dataclass
class RunInfo:
    id: str
    dir: Path
    bed_file: str
    bed_sha256: str
    created: str
    steps: str = ""             # the --steps selection, "" = all
    dry_run: bool = False

    def save(self) -> None:
        data = {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items() if k != "dir"}
        write_atomic(self.dir / "run.json", (json.dumps(data, indent=2) + "\n").encode())


def runs_root() -> Path:
    from app.autosave import state_dir
    return state_dir() / "runs"


def new_run(bed_file: str, bed_sha256: str, steps: str = "", root: Path | None = None) -> RunInfo:
    root = root or runs_root()
    root.mkdir(parents=True, exist_ok=True)
    stem = _SAFE.sub("_", Path(bed_file).stem)[:40] or "bed"
    base = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    for n in range(1000):
        run_id = base if n == 0 else f"{base}-{n}"
        try:
            (root / run_id).mkdir()
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"cannot create a run directory under {root}")
    info = RunInfo(run_id, root / run_id, str(bed_file), bed_sha256, now_iso(), steps)
    info.save()
    return info


def open_run(ref: str, root: Path | None = None) -> RunInfo:
    """A run by id (under the runs directory) or by its directory path."""
    candidates = [Path(ref), (root or runs_root()) / ref]
    for d in candidates:
        meta = d / "run.json"
        if meta.is_file():
            try:
                data = json.loads(meta.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"{meta}: cannot read the run's description ({exc})") from None
            return RunInfo(data.get("id", d.name), d, data.get("bed_file", ""), data.get("bed_sha256", ""),
                           data.get("created", ""), data.get("steps", ""), bool(data.get("dry_run")))
    raise ValueError(f"no run {ref!r}: give a run id from `testbed-studio runs` or a run directory")


def list_runs(root: Path | None = None) -> Iterator[RunInfo]:
    root = root or runs_root()
    if not root.is_dir():
        return
    for d in sorted(root.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True):
        if (d / "run.json").is_file():
            try:
                yield open_run(str(d))
            except ValueError:
                continue
