"""The run journal: what happened to every step on every host, written as the run goes.

A run lives in its own directory:

    run.json          what was run: bed file and its hash, step selection (written once, atomically)
    bed-at-start.yaml the project file as it was when the run began (the as-run record compares it)
    plan.json         the procedure's steps (number, text) when the run began
    journal.jsonl     one JSON record per line, appended and fsync'd before the work goes on
    output/           the full output of each step on each host (STEP@HOST.log)
    metrics.jsonl     samples recorded while the workloads ran (app.metrics)

Every record is a single write of one line followed by fsync, so a kill at any moment
leaves at worst a torn last line, which the reader reports and ignores.  A task with a
"start" record and no "end" was interrupted; a "process" record names the job (app.remote.jobs)
it started on its host, so resume can ask whether it still runs there before anything is
started again.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from topology.fileformat import write_atomic
from topology.project_save import fsync_dir

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
BY_ENGINE = "engine"       # a mark's `by`: the engine did the manual step's work itself (fetched the results)
UNREACHABLE = "unreachable"
AUTH_FAILED = "auth-failed"
HOST_KEY = "host-key"

SUCCEEDED = frozenset({OK, DONE, SKIPPED})
PROBLEMS = frozenset({FAILED, TIMEOUT, CANCELLED, LOST, INTERRUPTED, UNREACHABLE, AUTH_FAILED, HOST_KEY})

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
BED_AT_START = "bed-at-start.yaml"     # the project file as it was when the run began
PLAN = "plan.json"                     # the procedure as it was when the run began: [[number, text], ...]


def now_iso() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="milliseconds")


def iso_of(epoch: float) -> str:
    """A time on a host's clock (seconds since the epoch) as the journal writes times."""
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="milliseconds")


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
    pid: int | None = None      # the step's process group on its host, while it may still run there


@dataclass(frozen=True)
class Writer:
    """Who writes a record: the run it means and the bed it was made from (the file's sha256)."""
    run_id: str
    bed_sha256: str


class JournalRefused(Exception):
    """A record for another run, or made from another bed than the driver's: nothing was written."""


class Journal:
    """Append-only, thread-safe.  `state()` replays it into the latest TaskState per task.

    `owner` is the driver that holds the run's lock (its run and the bed it drives it from); a
    record a person's action asks for names its writer, and one of another run or another bed
    is refused: a view that shows one bed cannot tick off a step of another bed's run."""

    def __init__(self, run_dir: Path, owner: Writer | None = None):
        self.dir = Path(run_dir)
        self.owner = owner
        (self.dir / "output").mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "journal.jsonl"
        self._lock = threading.Lock()
        # group commit: records written meanwhile share the next fsync (see _durable)
        self._sync_lock = threading.Lock()
        self._written = self._synced = 0
        self._local = threading.local()
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if created:     # the journal's own name on disk: a power cut must not take the record of a step begun
            fsync_dir(self.dir)
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        # a torn last line (killed mid-write) would swallow the next record: end it first
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    # the note tells a reader that the line before is a torn write, not damage
                    os.write(self._fd, b"\n" + json.dumps({"kind": "repaired", "time": now_iso()}).encode() + b"\n")
                    os.fsync(self._fd)

    def check(self, writer: Writer | None) -> None:
        """Raises JournalRefused when `writer` is not the driver that holds the run."""
        owner = self.owner
        if writer is None or owner is None or writer == owner:
            return
        if writer.run_id != owner.run_id:
            raise JournalRefused(f"run {owner.run_id} refuses a record meant for run {writer.run_id or '(none)'}: "
                                 "nothing was written")
        raise JournalRefused(f"run {owner.run_id} is driven from the project file with sha256 "
                             f"{owner.bed_sha256[:12] or '(none)'}, not {writer.bed_sha256[:12] or '(none)'} (another "
                             "bed, or the file changed since the run was opened): nothing was written. Open the "
                             "run again from its own bed to go on")

    def record(self, kind: str, *, writer: Writer | None = None, **fields: Any) -> None:
        self.check(writer)
        entry = {"kind": kind, "time": now_iso(), **fields}
        if writer is not None:
            entry["bed"] = writer.bed_sha256[:12]
        line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if getattr(self._local, "lines", None) is not None:
            self._local.lines.append(line)      # written when its batch ends (batched)
            return
        self._durable(self._append(line))

    def _append(self, data: bytes) -> int:
        with self._lock:
            os.write(self._fd, data)
            self._written += 1
            return self._written

    def _durable(self, mine: int) -> None:
        """Returns once write number `mine` is on disk: every record is fsync'd before record()
        returns, as before, but the 50 hosts of a step that journal at the same moment share a
        few fsyncs instead of queueing for 50 in turn (each 5 ms or more on a disk)."""
        with self._sync_lock:
            if self._synced >= mine or self._fd < 0:
                return      # an fsync that began after this write covered it (or close() did)
            upto = self._written    # every write counted here is already in the file
            os.fsync(self._fd)
            self._synced = upto

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """This thread's records inside the block written together when it ends: one write and one
        fsync (the Ansible engine journals a pass's 50 hosts at once; 200 fsyncs otherwise).  Each
        is still a line of its own; none is on disk before the block ends, so nothing that depends
        on one may happen inside it."""
        if getattr(self._local, "lines", None) is not None:
            yield
            return
        self._local.lines = []
        try:
            yield
        finally:
            lines, self._local.lines = self._local.lines, None
            if lines:
                self._durable(self._append(b"".join(lines)))

    def output_path(self, step: str, host: str) -> Path:
        return self.dir / "output" / f"{_SAFE.sub('_', step)}@{_SAFE.sub('_', host)}.log"

    def close(self) -> None:
        with self._sync_lock, self._lock:
            if self._fd >= 0:
                if self._synced < self._written:
                    os.fsync(self._fd)      # a record written but not yet synced by its writer
                    self._synced = self._written
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class JournalRead:
    records: list[dict]
    notes: list[str]            # harmless: a torn last line, ignored
    damage: list[str]           # a line in the middle that is not a record: the journal is not trustworthy


def read_journal(run_dir: Path) -> JournalRead:
    path = Path(run_dir) / "journal.jsonl"
    result = JournalRead([], [], [])
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return result
    except OSError as exc:
        result.damage.append(f"{path}: cannot be read ({exc.strerror or exc})")
        return result
    parsed: list[tuple[int, Any, str | None]] = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            problem = _record_problem(entry)
        except (ValueError, RecursionError):
            entry, problem = None, "not a JSON record"
        parsed.append((number, entry, problem))
    for i, (number, entry, problem) in enumerate(parsed):
        following = parsed[i + 1][1] if i + 1 < len(parsed) else None
        torn = (following is None and not raw.endswith(b"\n")) or (
            isinstance(following, dict) and following.get("kind") == "repaired")
        if problem is None:
            result.records.append(entry)
        elif torn:
            result.notes.append(f"{path}:{number}: an incomplete record (the run was stopped while "
                                "writing it) was ignored")
        else:
            result.damage.append(f"{path}:{number}: {problem}")
    return result


_TEXT_FIELDS = ("kind", "step", "host", "status", "message", "time")
_STATUSES = SUCCEEDED | PROBLEMS


def _record_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
        return "not a journal record (no 'kind')"
    for name in _TEXT_FIELDS:
        if name in entry and not isinstance(entry[name], str):
            return f"'{name}' is {type(entry[name]).__name__}, not text"
    if "tail" in entry and not (isinstance(entry["tail"], list) and all(isinstance(t, str) for t in entry["tail"])):
        return "'tail' is not a list of lines"
    for name in ("exit_code", "attempt", "pid"):
        if entry.get(name) is not None and (not isinstance(entry[name], int) or isinstance(entry[name], bool)):
            return f"'{name}' is not a whole number"
    if entry.get("seconds") is not None and not isinstance(entry["seconds"], (int, float)):
        return "'seconds' is not a number"
    if entry["kind"] in ("end", "mark") and entry.get("status") not in _STATUSES:
        # an end nobody wrote: taking it as a failure would run the step again
        return f"'status' {str(entry.get('status'))[:40]!r} is not a task status"
    return None


def read_records(run_dir: Path) -> tuple[list[dict], list[str]]:
    """All whole records, and a note for each line that could not be read."""
    read = read_journal(run_dir)
    return read.records, read.notes + read.damage


def distrust(run_dir: Path, read: JournalRead | None = None) -> str | None:
    """Why the journal cannot be used to decide what still has to run, or None.  Resuming from
    a damaged or emptied journal would run completed steps a second time."""
    read = read or read_journal(run_dir)
    if read.damage:
        more = f" (and {len(read.damage) - 1} more)" if len(read.damage) > 1 else ""
        return (f"the run's journal is damaged: {read.damage[0]}{more}. It cannot say which steps "
                "already ran, so resuming could run them twice; start a new run, or repair the line")
    if not any(r.get("kind") in ("start", "end", "mark") for r in read.records):
        out = Path(run_dir) / "output"
        logs = [p.name for p in out.glob("*.log")] if out.is_dir() else []
        if logs:
            return (f"the run's journal {Path(run_dir) / 'journal.jsonl'} records no step, yet {len(logs)} "
                    f"step(s) left output in {out} (e.g. {sorted(logs)[0]}): the journal was emptied or "
                    "replaced, so resuming would run completed steps again; start a new run instead")
    return None


def replay(records: list[dict], *, driven: bool = False) -> dict[tuple[str, str], TaskState]:
    """The latest state of each task.  `driven`: a driver holds the run now, so a step without
    its end record is running, not interrupted."""
    states: dict[tuple[str, str], TaskState] = {}
    for r in records:
        if r["kind"] not in ("start", "end", "mark", "process"):
            continue
        key = (str(r.get("step")), str(r.get("host")))
        st = states.get(key) or states.setdefault(key, TaskState(*key))
        if r["kind"] == "process":
            st.pid = r.get("pid")
        elif r["kind"] == "start":
            # an adopted job is the attempt that started it, followed on by a later driver
            adopted = bool(r.get("adopted")) and st.started
            st.status, st.ended = RUNNING, ""
            if not adopted:
                st.started = r.get("time", "")
                st.attempts += 1
            st.exit_code, st.message, st.tail, st.pid = None, "", [], None
        else:
            st.status = r.get("status", FAILED)
            st.exit_code = r.get("exit_code")
            st.message = r.get("message", "")
            st.ended = r.get("time", "")
            st.seconds = r.get("seconds")
            st.tail = list(r.get("tail") or [])
            if r["kind"] == "mark" or st.status not in (LOST, INTERRUPTED):
                st.pid = None
    for st in states.values():
        if st.status == RUNNING and not driven:
            # nobody finishes a record for a run that died: the step may or may not have
            # taken effect, so it is run again on resume
            st.status = INTERRUPTED
            st.message = "the run stopped while this step was running (application or machine died)"
    return states


TAKEN_TAIL = 20_000      # stdout lines handed back to a parser that continues: fio's last reports


def taken_output(log: Path) -> tuple[int, int, list[str]]:
    """What drivers already took of a task's job: the numbers of stdout and stderr lines its
    output log holds since the attempt that started the job (adoptions of that job included),
    and the last TAKEN_TAIL stdout lines.  An adopting driver follows the job on from there."""
    try:
        raw = Path(log).read_bytes()
    except OSError:
        return 0, 0, []
    start = raw.rfind(b"\n--- attempt ")
    start = start + 1 if start >= 0 else (0 if raw.startswith(b"--- attempt ") else len(raw))
    out: list[bytes] = []
    err = 0
    lines = raw[start:].split(b"\n")
    for line in lines[1:-1] if raw.endswith(b"\n") else lines[1:]:
        if line.startswith(b"[stderr] "):
            err += 1
        elif not line.startswith((b"--- adopted the job of ", b"[check] ", b"[results] ")):
            out.append(line)
    return len(out), err, [line.decode("utf-8", "replace") for line in out[-TAKEN_TAIL:]]


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
    configuration: str = ""     # the bed's configuration the run used ("" = the bed as drawn)
    engine: str = ""            # what drove it when it started: "" (built-in) or "ansible"
    extra_vars: list[str] = field(default_factory=list)     # ansible-playbook's -e, given again on resume
    withheld_vars: list[str] = field(default_factory=list)  # names of -e values never kept (app.run.extra_vars)

    def save(self) -> None:
        data = {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items() if k != "dir"}
        write_atomic(self.dir / "run.json", (json.dumps(data, indent=2) + "\n").encode())


def runs_root() -> Path:
    from app.autosave import state_dir
    return state_dir() / "runs"


def new_run(bed_file: str, bed_sha256: str, steps: str = "", root: Path | None = None,
            configuration: str = "", engine: str = "", extra_vars: list[str] | None = None,
            withheld_vars: list[str] | None = None) -> RunInfo:
    root = root or runs_root()
    root.mkdir(parents=True, exist_ok=True)
    stem = _SAFE.sub("_", Path(bed_file).stem)[:40] or "bed"
    # a run's jobs are kept on its hosts under its id: another driver (another laptop, another
    # runs folder) starting a bed of the same name in the same second must not get the same
    # folders there, so the id carries a few random digits besides the time
    base = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    for n in range(1000):
        run_id = base if n == 0 else f"{base}-{n}"
        try:
            (root / run_id).mkdir(mode=0o700)     # its -e variables and outputs are for its owner
            fsync_dir(root)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"cannot create a run directory under {root}")
    info = RunInfo(run_id, root / run_id, str(bed_file), bed_sha256, now_iso(), steps,
                   configuration=configuration, engine=engine, extra_vars=list(extra_vars or []),
                   withheld_vars=list(withheld_vars or []))
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
            except (OSError, ValueError, RecursionError) as exc:
                raise ValueError(f"{meta}: cannot read the run's description ({exc})") from None
            if not isinstance(data, dict):
                raise ValueError(f"{meta}: the run's description is a {type(data).__name__}, not a mapping")
            fields = {k: data.get(k, "") for k in ("id", "bed_file", "bed_sha256", "created", "steps",
                                                   "configuration", "engine")}
            wrong = [k for k, v in fields.items() if not isinstance(v, str)]
            if wrong:
                raise ValueError(f"{meta}: the run's description has a {wrong[0]!r} that is not text")
            extra, withheld = data.get("extra_vars") or [], data.get("withheld_vars") or []
            for key, value in (("extra_vars", extra), ("withheld_vars", withheld)):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ValueError(f"{meta}: the run's description has an {key!r} that is not a list of text")
            return RunInfo(fields["id"] or d.name, d, fields["bed_file"], fields["bed_sha256"],
                           fields["created"], fields["steps"], bool(data.get("dry_run")),
                           configuration=fields["configuration"], engine=fields["engine"], extra_vars=extra,
                           withheld_vars=withheld)
    raise ValueError(f"no run {ref!r}: give a run id from `testbed-studio runs` or a run directory")


def list_runs(root: Path | None = None) -> Iterator[RunInfo]:
    for found in scan_runs(root):
        if isinstance(found, RunInfo):
            yield found


@dataclass
class DamagedRun:
    dir: Path
    problem: str


def scan_runs(root: Path | None = None) -> Iterator[RunInfo | DamagedRun]:
    """Every run folder, newest first; one that cannot be read comes as a DamagedRun so a
    listing can name it and go on with the others."""
    root = root or runs_root()
    if not root.is_dir():
        return

    def age(p: Path) -> float:
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0
    for d in sorted(root.iterdir(), key=age, reverse=True):
        if not d.is_dir():
            continue
        if not (d / "run.json").is_file():
            if (d / "journal.jsonl").exists():
                yield DamagedRun(d, f"{d / 'run.json'} is missing")
            continue
        try:
            yield open_run(str(d))
        except ValueError as exc:
            yield DamagedRun(d, str(exc))
