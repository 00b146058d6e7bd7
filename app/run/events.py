"""What a run session tells its presenters: one vocabulary for the terminal (app/run/cli_run.py)
and the Run tab (widgets/run_wizard.py, through app/run/qt_runner.py's queued signals).

Events are immutable and carry what a view needs to draw them (the step's statuses, where the
run stands), so one that arrives late, after its run was closed, is still safe to read; every
event names its run so a view can drop one that belongs to a run it no longer shows.
Questions are asked by the session and answered by the presenter (on a terminal, in a dialog).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from app.run.journal import (  # noqa: F401
    AUTH_FAILED,
    CANCELLED,
    DONE,
    FAILED,
    HOST_KEY,
    INTERRUPTED,
    LOST,
    OK,
    PENDING,
    PROBLEMS,
    RUNNING,
    SKIPPED,
    SUCCEEDED,
    TIMEOUT,
    UNREACHABLE,
)
from app.run.standing import RunStanding, StepLook, TaskLook  # noqa: F401 - part of the vocabulary


@dataclass(frozen=True)
class Event:
    run_id: str


@dataclass(frozen=True)
class Notice(Event):
    """Where the run is going: opened, resumed, continuing at a step."""
    text: str


# Warning kinds, so a presenter can say each its own way
ACCESS = "access"              # an ACC rule: plain-text WinRM Basic, TLS checks off
NO_ACCESS = "no-access"        # no host has remote access: every step is manual
BED_CHANGED = "bed-changed"    # the project file changed since the run began
JOURNAL = "journal"            # a journal line was torn or could not be read
REFUSED = "refused"            # the run cannot be started or resumed (lock, damaged journal, ...)


@dataclass(frozen=True)
class RunWarning(Event):
    kind: str
    text: str

    @property
    def fatal(self) -> bool:
        return self.kind == REFUSED


@dataclass(frozen=True)
class StepStarted(Event):
    step: str
    host: str
    look: StepLook


@dataclass(frozen=True)
class OutputLine(Event):
    step: str
    host: str
    stream: str             # stdout, stderr, info
    line: str
    received: float         # time.monotonic() when the session got it


@dataclass(frozen=True)
class StepEnded(Event):
    step: str
    host: str
    status: str
    message: str
    seconds: float | None
    look: StepLook            # the whole step (all its hosts) as it stands now


@dataclass(frozen=True)
class PreflightChecked(Event):
    checks: tuple             # app.run.engine.HostCheck: host, ok, message
    note: str = ""            # when no host was checked: why, and what to do about it


@dataclass(frozen=True)
class Leftover(Event):
    """A step a dead driver left on its host, or an earlier attempt's start that reached its host
    late (after the resume looked), and what became of it."""
    step: str
    host: str
    what: str                 # ended | adopting | stopping | undecided | unreachable
    number: int | None = None     # the exit status (ended) or the process group (running)
    detail: str = ""


@dataclass(frozen=True)
class MetricsProblem(Event):
    text: str


@dataclass(frozen=True)
class Samples(Event):
    """Live metric samples of the run (already recorded in its metrics.jsonl): a view plots them."""
    samples: tuple          # app.metrics.samples.Sample


@dataclass(frozen=True)
class RunEnded(Event):
    """A batch of work is over (the steps asked for ran, or a step was ticked off)."""
    standing: RunStanding
    completed_now: bool = False   # this batch finished the run: its "complete" record was written


# ------------------------------------------------------------------ questions

@dataclass(frozen=True)
class Question:
    host: str


@dataclass(frozen=True)
class TrustHostKey(Question):
    """Answer True to trust (and remember) the key."""
    address: str
    key_type: str
    fingerprint: str


@dataclass(frozen=True)
class PasswordNeeded(Question):
    """Answer a PasswordAnswer, or None to give none."""
    user: str
    credential: str
    entry: str                # the keyring entry it is kept under


@dataclass(frozen=True)
class PasswordAnswer:
    password: str = field(repr=False)
    remember: bool = False    # also in the system keyring, else for this session only


@dataclass(frozen=True)
class StillRunning(Question):
    """Answer "adopt" (wait for it and take its result), "stop" (stop it, run it again) or None."""
    step: str
    pid: int | None
