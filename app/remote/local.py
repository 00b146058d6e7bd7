"""Runs scripts on this machine: vendor CLIs installed on the workstation, and tests."""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from app.remote import jobs
from app.remote.base import CANCELLED, FAILED, OK, TIMEOUT, CommandResult, LineSplitter, OutputSink, Transport
from app.remote.job_output import Splitter, command_stdout
from topology.safe_paths import file_name_for, safe_child

_ARGV = {"bash": ["bash", "-s"], "sh": ["sh", "-s"],
         "powershell": ["pwsh", "-NoProfile", "-NonInteractive", "-Command", "-"]}


class LocalTransport(Transport):
    """Scripts start in a folder of their own, as a remote script starts in its user's home:
    the files a step writes (fio's JSON report) land there, never in whatever folder the
    application happened to be started from."""

    supports_jobs = True

    def __init__(self, host: str = "localhost", workdir: Path | None = None):
        super().__init__(host)
        self.workdir = workdir

    @property
    def job_base(self) -> str:
        if self.workdir is None:
            self.open()
        return str(self.workdir / ".jobs")

    def open(self) -> None:
        if self.workdir is None:
            from app.autosave import state_dir
            # the host id is data: `..` or `.` must not make the state folder itself a host's folder
            self.workdir = safe_child(state_dir() / "local-hosts", file_name_for(self.host))
        self.workdir.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        pass

    def run(self, script: str, *, shell: str = "bash", on_output: OutputSink | None = None,
            timeout: float | None = None, cancel: threading.Event | None = None,
            job: jobs.Job | None = None) -> CommandResult:
        if job is not None and shell in jobs.SHELLS:
            text = jobs.start_script(job, script, shell, self.job_base, str(self.workdir), merged=True)
            return self._execute(text, "sh", on_output, timeout, cancel, job)
        return self._execute(script, shell, on_output, timeout, cancel, None)

    def follow_job(self, job, on_output=None, timeout=None, cancel=None) -> CommandResult:
        return self._execute(jobs.follow_script(job, self.job_base, merged=True), "sh", on_output, timeout, cancel, job)

    def _execute(self, script: str, shell: str, on_output: OutputSink | None, timeout: float | None,
                 cancel, job: jobs.Job | None) -> CommandResult:
        argv = _ARGV.get(shell)
        if argv is None:
            return CommandResult(FAILED, None, f"the local transport cannot run {shell} scripts")
        start = time.monotonic()
        tail: list[str] = []
        if self.workdir is None or not self.workdir.is_dir():
            self.open()
        try:
            # its own process group, so a timeout stops the script's children too
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, cwd=self.workdir)
        except FileNotFoundError:
            return CommandResult(FAILED, 127, f"{argv[0]} is not installed on this machine")
        job_pid: list[int] = []
        err_sink = on_output
        if job is not None:
            def err_sink(stream: str, line: str) -> None:
                if not job_pid and line.startswith(jobs.PID_MARK):
                    job_pid.append(int(line[len(jobs.PID_MARK):].strip() or 0))
                    if tail and tail[-1].endswith(line):
                        tail.pop()
                    if job.on_started is not None and job_pid[0]:
                        job.on_started(job_pid[0])
                elif on_output is not None:
                    on_output(stream, line)
        failures: list[BaseException] = []
        out = command_stdout(on_output, tail, job is not None)
        readers = [threading.Thread(target=_pump, args=(pipe, splitter, failures), daemon=True)
                   for pipe, splitter in ((proc.stdout, out), (proc.stderr, LineSplitter("stderr", err_sink, tail)))]
        for r in readers:
            r.start()
        try:
            proc.stdin.write(script.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        ended = None
        while True:
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    ended = CANCELLED
                elif timeout is not None and time.monotonic() - start > timeout:
                    ended = TIMEOUT
                if ended:
                    group = jobs.group_of(f"{self.job_base}/{job.name}") if job_pid and job_pid[0] > 1 else None
                    if group is not None and group > 1:
                        # the job is a session of its own: stopping the follower does not stop it
                        # (its group only while it is the job's: jobs.IDENTITY)
                        try:
                            os.killpg(group, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
                    _kill_group(proc)
                    break
        for r in readers:
            r.join(timeout=2)
        seconds = time.monotonic() - start
        if failures:
            # the step ran, but what it printed was not all kept: never reported as a success
            return CommandResult(FAILED, proc.returncode, f"the step's output could not be read "
                                 f"({type(failures[0]).__name__}: {failures[0]}); what it printed is incomplete",
                                 seconds, tail)
        if ended == TIMEOUT:
            return CommandResult(TIMEOUT, None, f"still running after {timeout:g} s: stopped",
                                 seconds, tail)
        if ended == CANCELLED:
            return CommandResult(CANCELLED, None, "stopped by the user", seconds, tail)
        code = proc.returncode
        if code == 0:
            return CommandResult(OK, 0, "", seconds, tail)
        msg = "command not found" if code == 127 else f"exit status {code}"
        return CommandResult(FAILED, code, msg, seconds, tail)


def _pump(pipe, splitter: Splitter, failures: list[BaseException]) -> None:
    try:
        for chunk in iter(lambda: pipe.read1(65536), b""):
            splitter.feed(chunk)
        splitter.flush()
    except BaseException as exc:
        failures.append(exc)
        try:
            while pipe.read1(65536):   # keep draining: a full pipe would stall the step
                pass
        except Exception:
            pass


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
