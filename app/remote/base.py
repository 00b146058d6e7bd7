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
from dataclasses import dataclass, field
from typing import Callable

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

    def __init__(self, host: str):
        self.host = host

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

    def __enter__(self) -> "Transport":
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LineSplitter:
    """Turns chunks of bytes into whole lines for an OutputSink, keeping the last
    `keep` lines for the journal.  Invalid UTF-8 is replaced, never raised."""

    def __init__(self, stream: str, sink: OutputSink | None, tail: list[str], keep: int = 200):
        self.stream, self.sink, self.tail, self.keep = stream, sink, tail, keep
        self._buf = b""

    def feed(self, data: bytes) -> None:
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        for raw in lines:
            self._emit(raw)

    def flush(self) -> None:
        if self._buf:
            raw, self._buf = self._buf, b""
            self._emit(raw)

    def _emit(self, raw: bytes) -> None:
        line = raw.rstrip(b"\r").decode("utf-8", "replace")
        self.tail.append(line if self.stream == "stdout" else f"[stderr] {line}")
        if len(self.tail) > self.keep:
            del self.tail[: len(self.tail) - self.keep]
        if self.sink is not None:
            self.sink(self.stream, line)
