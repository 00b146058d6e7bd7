"""A workload step's result files, fetched from its host when the step ends and kept with the
run (app.metrics.run_results).

Which files a step leaves is said by its template (`ansible: results: [...]`, the same list
the Ansible export fetches).  A path is read where the step ran: a leading `~/` is the
login's home over SSH and WinRM, and a local host's own folder.  The file travels as base64
over the step's own connection (bash/sh: `base64`; PowerShell: ReadAllBytes), so any byte
arrives intact; a file the step did not leave is said so in the step's output, never guessed.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from pathlib import Path

from app.remote import base as remote
from app.remote.base import Transport
from app.run.plan import Task
from topology import quoting

_MISSING = "@testbed-studio-no-such-file"
FETCH_TIMEOUT_S = 300.0


def result_paths(task: Task) -> list[str]:
    """The files the task's template says the step leaves, relative to where it ran."""
    listed = (task.ansible or {}).get("results") or []
    return [p[2:] if p.startswith("~/") else p for p in listed if isinstance(p, str) and p.strip()]


def fetch_script(shell: str, path: str) -> str | None:
    if shell in ("bash", "sh"):
        q = quoting.bash(path)
        return f'if [ -f {q} ]; then base64 < {q}; else echo {_MISSING}; fi'
    if shell == "powershell":
        q = quoting.powershell(path)
        return (f"if (Test-Path -LiteralPath {q} -PathType Leaf) {{ [Convert]::ToBase64String("
                f"[IO.File]::ReadAllBytes((Resolve-Path -LiteralPath {q}).ProviderPath)) }} "
                f"else {{ '{_MISSING}' }}")
    return None


def _stdout_of(transport: Transport, script: str, shell: str) -> tuple[remote.CommandResult, list[str]]:
    lines: list[str] = []

    def keep(stream: str, line: str) -> None:
        if stream == "stdout":
            lines.append(line)
    return transport.run(script, shell=shell, timeout=FETCH_TIMEOUT_S, on_output=keep), lines


def fetch_results(transport: Transport, task: Task, run_dir: Path, say: Callable[[str], None],
                  script_for: Callable[[str, str], str | None] = fetch_script,
                  problem: Callable[[str], None] | None = None) -> list[str]:
    """Fetch and attach the task's result files; says what happened to each through `say`
    (a line of the step's output), and a file that came but cannot be read also through
    `problem` (the step's journal): the run goes on either way.  Returns the stored names.
    `script_for(shell, path)` writes the command that prints a file as base64 (the WS-Man test
    server runs sh, not PowerShell)."""
    stored = []
    for path in result_paths(task):
        script = script_for(task.shell, path)
        if script is None:
            say(f"[results] {path}: cannot be fetched over a {task.shell} step")
            continue
        result, lines = _stdout_of(transport, script, task.shell)
        if result.status != remote.OK:
            say(f"[results] {path}: could not be fetched ({result.message or result.status})")
            continue
        text = "".join(line.strip() for line in lines)
        if text == _MISSING:
            say(f"[results] {path}: the step left no such file on {task.host}")
            continue
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            say(f"[results] {path}: what {task.host} sent is not the file (not base64)")
            continue
        rec = keep_fetched(run_dir, raw, task, path, say, problem)
        if rec is not None:
            stored.append(rec.stored)
    return stored


def keep_fetched(run_dir: Path, raw: bytes, task: Task, path: str, say: Callable[[str], None],
                 problem: Callable[[str], None] | None = None):
    """Parse and keep one fetched result file, whichever engine fetched it; never raises for what
    the file holds: a file no parser can read (or one that breaks a parser) is said in the step's
    output and journalled as a problem of the step, and the run goes on.  The kept record, or None."""
    from app.metrics.run_results import FETCHED, ResultFileError, attach

    def unreadable(why: str) -> None:
        say(f"[results] {why}")
        if problem is not None:
            problem(f"the result file {path} from {task.host} cannot be read and was not kept: {why}")
    try:
        rec = attach(run_dir, raw, f"{task.host}:{path}", step=task.step, host=task.host, how=FETCHED,
                     position=task.position)
    except ResultFileError as exc:
        unreadable(str(exc))
        return None
    except OSError as exc:
        say(f"[results] {path}: cannot be kept with the run ({exc.strerror or exc})")
        return None
    except (Exception, RecursionError) as exc:       # a parser's fault must not end the run's driver
        unreadable(f"{task.host}:{path}: no parser could read it ({type(exc).__name__}: {exc})")
        return None
    say(f"[results] fetched {path} from {task.host} ({rec.tool}) -> {rec.stored}")
    return rec
