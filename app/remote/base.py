"""The one interface every transport implements, and the errors it reports.

A transport runs a script on one host and streams its output line by line through a
callback.  It never raises for a command that runs and fails: the outcome says how it
ended.  It raises a `RemoteError` subclass only when the host cannot be used at all
(unreachable, refused credentials, host key not trusted), so the run engine can tell
"the step failed" from "the host is not there".
"""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

# (stream, line) with stream "stdout" or "stderr"; the line has no trailing newline
OutputSink = Callable[[str, str], None]

SHELLS = ("bash", "sh", "powershell", "cmd")

# how a command ended
OK = "ok"                  # exit status 0
FAILED = "failed"          # ran, non-zero exit status
TIMEOUT = "timeout"        # still running when the step's timeout expired: stopped
CANCELLED = "cancelled"    # the user stopped it
LOST = "lost"              # the connection dropped while it ran: exit status unknown


@dataclass
class CommandResult:
    status: str
    exit_code: int | None = None
    message: str = ""                  # one line for the user: why it ended this way
    seconds: float = 0.0
    tail: list[str] = field(default_factory=list)   # last lines of output, for the journal

    @property
    def ok(self) -> bool:
        return self.status == OK


class RemoteError(Exception):
    """The host cannot be used: the message says what is wrong and what to do."""
    status = "unreachable"


class Unreachable(RemoteError):
    status = "unreachable"


class AuthFailed(RemoteError):
    status = "auth-failed"


class HostKeyRejected(RemoteError):
    """The SSH host key is unknown and was not accepted, or differs from known_hosts."""
    status = "host-key"


@dataclass(frozen=True)
class HostKeyQuestion:
    """Asked when a host presents a key that known_hosts does not hold."""
    host: str            # host id in the bed
    address: str         # what was connected to (host or [host]:port as in known_hosts)
    key_type: str        # "ssh-ed25519"
    fingerprint: str     # "SHA256:..." as ssh-keygen -l prints it


# Returns True to trust (and record) the key, False to refuse.  The GUI shows a dialog,
# the command line asks on a terminal; with no one to ask the answer is always False.
HostKeyDecider = Callable[[HostKeyQuestion], bool]


def refuse_unknown_keys(question: HostKeyQuestion) -> bool:
    return False


class Transport(ABC):
    """One host.  `open` connects and authenticates (raising RemoteError), `run` executes
    one script and may be called many times, concurrently from different threads only
    where the transport says so (`parallel_safe`), `close` releases everything."""

    parallel_safe = True
    supports_jobs = False       # runs bash/sh steps as jobs that outlive the connection (app.remote.jobs)
    job_base: str | None = None

    def __init__(self, host: str):
        self.host = host

    # ------------------------------------------------------- jobs (supports_jobs only)

    def follow_job(self, job, on_output: OutputSink | None = None, timeout: float | None = None,
                   cancel: threading.Event | None = None) -> CommandResult:
        """Streams a running job's output until it ends and returns its outcome."""
        raise NotImplementedError

    def job_status(self, job) -> tuple[str, int | None]:
        """(running|ended|dead|gone, pid or exit status); raises RemoteError when the host
        cannot be asked."""
        from app.remote import jobs
        lines: list[str] = []
        result = self.run(jobs.status_script(job, self.job_base), shell="sh", timeout=60,
                          on_output=lambda stream, line: lines.append(line) if stream == "stdout" else None)
        if result.status != OK:
            raise RemoteError(f"{self.host}: cannot ask whether step {job.step} still runs: {result.message}")
        return jobs.parse_status(lines[-1] if lines else "")

    def job_times(self, job) -> tuple[float | None, float | None]:
        """When the job started and ended on the host (epoch seconds, None when not known)."""
        from app.remote import jobs
        lines: list[str] = []
        result = self.run(jobs.times_script(job, self.job_base), shell="sh", timeout=60,
                          on_output=lambda stream, line: lines.append(line) if stream == "stdout" else None)
        return jobs.parse_times(lines[-1]) if result.status == OK and lines else (None, None)

    def stop_job(self, job) -> tuple[str, int | None]:
        """Stops the job unless it has ended, deciding on the host in one command: (stopped, None),
        (ended, its exit status) or (gone, None); raises RemoteError when the host cannot be asked."""
        from app.remote import jobs
        lines: list[str] = []
        result = self.run(jobs.stop_script(job, self.job_base), shell="sh", timeout=60,
                          on_output=lambda stream, line: lines.append(line) if stream == "stdout" else None)
        if result.status != OK:
            raise RemoteError(f"{self.host}: cannot stop step {job.step}: {result.message}")
        return jobs.parse_status(lines[-1] if lines else "")

    @abstractmethod
    def open(self) -> None: ...

    @abstractmethod
    def run(self, script: str, *, shell: str = "bash", on_output: OutputSink | None = None,
            timeout: float | None = None, cancel: threading.Event | None = None) -> CommandResult:
        """Run `script` with `shell`, calling `on_output` for each line as it arrives.
        `timeout` (seconds) stops the command and ends with TIMEOUT; setting `cancel`
        stops it and ends with CANCELLED."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Transport:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


LINE_CAP = 64 * 1024      # bytes of one output line kept for the display and the journal
LINE_BOUND = 16 * 1024 * 1024   # bytes of one line kept at all (the step's output file): memory stays bounded


class CutLine(str):
    """A line longer than LINE_CAP: the text is its head and a note of how much was cut;
    `whole` holds its bytes for the step's output file (up to LINE_BOUND, then a note)."""
    whole: bytes


class LineSplitter:
    """Turns chunks of bytes into whole lines for an OutputSink, keeping the last
    `keep` lines for the journal.  Invalid UTF-8 is replaced, never raised.  Linear in the
    output's size however long a line is: a chunk is searched once, and a line's pieces
    are joined once, when its newline arrives.  A line past LINE_BOUND bytes keeps its first
    LINE_BOUND and says how many bytes were cut: a newline-less stream cannot fill memory."""

    def __init__(self, stream: str, sink: OutputSink | None, tail: list[str], keep: int = 200):
        self.stream, self.sink, self.tail, self.keep = stream, sink, tail, keep
        self._parts: list[bytes] = []
        self._size = 0
        self._dropped = 0

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                if start < len(data):
                    self._add(data[start:] if start else data)
                return
            self._add(data[start:end])
            self._end_line()
            start = end + 1

    def _add(self, piece: bytes) -> None:
        room = LINE_BOUND - self._size
        if len(piece) > room:
            self._dropped += len(piece) - max(room, 0)
            piece = piece[:max(room, 0)]
        if piece:
            self._parts.append(piece)
            self._size += len(piece)

    def flush(self) -> None:
        if (self._parts and any(self._parts)) or self._dropped:
            self._end_line()
        self._parts, self._size, self._dropped = [], 0, 0

    def _end_line(self) -> None:
        raw = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        dropped = self._dropped
        self._parts, self._size, self._dropped = [], 0, 0
        raw = raw[:-1] if raw.endswith(b"\r") and not dropped else raw
        if dropped:
            note = f" … {dropped} bytes cut (a line longer than {LINE_BOUND // (1024 * 1024)} MiB)"
            line = CutLine(raw[:LINE_CAP].decode("utf-8", "replace")
                           + f" … {len(raw) + dropped - LINE_CAP} bytes cut (the step's output file keeps the "
                             f"first {LINE_BOUND // (1024 * 1024)} MiB)")
            line.whole = raw + note.encode()
        elif len(raw) > LINE_CAP:
            line = CutLine(raw[:LINE_CAP].decode("utf-8", "replace")
                           + f" … {len(raw) - LINE_CAP} bytes cut (the whole line is in the step's output file)")
            line.whole = raw
        else:
            line = raw.decode("utf-8", "replace")
        self.tail.append(str(line) if self.stream == "stdout" else f"[stderr] {line}")
        if len(self.tail) > self.keep:
            del self.tail[: len(self.tail) - self.keep]
        if self.sink is not None:
            self.sink(self.stream, line)
