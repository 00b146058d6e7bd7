"""SSH transport (paramiko): key, agent or password; jump host; host keys checked against the
application's known_hosts, an unknown key only with the user's consent, a changed key never."""
from __future__ import annotations

import base64
import hashlib
import logging
import os
import select
import socket
import threading
import time
from pathlib import Path

import paramiko

from app.remote import jobs, known_hosts
from app.remote.base import (
    CANCELLED,
    FAILED,
    LOST,
    OK,
    TIMEOUT,
    AuthFailed,
    CommandResult,
    HostKeyDecider,
    HostKeyQuestion,
    HostKeyRejected,
    LineSplitter,
    OutputSink,
    Transport,
    Unreachable,
    refuse_unknown_keys,
)
from app.remote.job_output import command_stdout

# The login shell reports its pid, then becomes the script's shell: sshd makes each session
# its own process group, so a timeout can stop the whole script with `kill -- -PID`.
_PID_MARK = "@testbed-studio-pid "
_COMMANDS = {"bash": f"echo {_PID_MARK}$$ >&2; exec bash -s", "sh": f"echo {_PID_MARK}$$ >&2; exec sh -s",
             "powershell": "powershell -NoProfile -NonInteractive -Command -"}
_POLL_S = 0.02      # how often a stop's killer is asked whether it has ended
# The longest a step waits, with its host silent, before it looks at its Stop, its timeout and an exit
# status that came before the end of its output.  Output, that end and a dropped connection wake the
# wait at once, so a printed line still reaches the callback at once; a wake every 20 ms instead cost
# 50 hosts ~45 turns each per 0.5 s step, a quarter of the driver's CPU while every host starts.
_IDLE_S = 0.1
_STOP_WAIT_S = 5.0  # how long the kill of a stopped step may take to be confirmed
# sshd sends the exit status when the command exits, ahead of output still on its way (what it had not yet
# read from the pipe): output is read until EOF after it.  A process the command left holding its output
# would keep that from ever coming, so the reading stops once nothing has come for this long after it
AFTER_EXIT_S = 2.0
# paramiko logs a dropped socket as an error on its own thread; the transport already reports
# it as the step's status, and the user must not see a second, raw message on the terminal
logging.getLogger("paramiko.transport").setLevel(logging.CRITICAL)


def fingerprint(key: paramiko.PKey) -> str:
    """SHA256 fingerprint as `ssh-keygen -lf` prints it."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")


def _aead_first(sock, **options) -> paramiko.Transport:
    """A transport that asks for AES-GCM first where the host offers it.  paramiko checks a separate
    MAC (its default, AES-CTR with HMAC-SHA2) byte by byte in Python for every packet it reads: a
    fifth of the driver's Python time under a profiler on 50 hosts at once, on the cores the hosts'
    steps wait for.  GCM authenticates each packet inside the cipher, in C, and is as strong; a host
    without it (an old or embedded sshd) gets the usual order, nothing is removed."""
    transport = paramiko.Transport(sock, **options)
    security = transport.get_security_options()
    aead = tuple(c for c in security.ciphers if c.endswith("-gcm@openssh.com"))
    security.ciphers = aead + tuple(c for c in security.ciphers if c not in aead)
    return transport


def _no_delay(client: paramiko.SSHClient) -> None:
    """Small packets leave at once: a command's open, request, script and end are separate small
    writes, and Nagle's wait for the host's delayed ACK held each command back by about 40 ms
    (52 ms for `true`, 10 ms with this).  A jump host's channel is no socket: left as it is."""
    sock = client.get_transport().sock
    if isinstance(sock, socket.socket):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


# How long the connection's reader thread waits in recv() before it looks whether the connection was
# closed and a keepalive is due (paramiko's 0.1 s).  Packets, a closed socket and an end of the
# connection wake it at once; only those looks wait, and the keepalive (every 2 s) keeps its time.
# Ten wakes a second on each of 50 connections took a third of the driver's turns with the GIL
# while a step started on every host.
_READER_IDLE_S = 1.0


def _quiet_reader(client: paramiko.SSHClient) -> None:
    client.get_transport().sock.settimeout(_READER_IDLE_S)


def _known_name(address: str, port: int) -> str:
    return address if port == 22 else f"[{address}]:{port}"


class _AskThenRecord(paramiko.MissingHostKeyPolicy):
    """An unknown key: ask; accepted keys are appended to the application's known_hosts."""

    def __init__(self, transport: SSHTransport):
        self.t = transport

    def missing_host_key(self, client, hostname, key):
        question = HostKeyQuestion(self.t.host, hostname, key.get_name(), fingerprint(key))
        if not self.t.decider(question):
            raise HostKeyRejected(
                f"{self.t.host}: the SSH host key of {hostname} is not known and was not accepted "
                f"({key.get_name()} {question.fingerprint}); nothing was run there")
        path = self.t.known_hosts
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as fh:
            fh.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
        client.get_host_keys().add(hostname, key.get_name(), key)


class SSHTransport(Transport):
    parallel_safe = True    # paramiko multiplexes one channel per command over the connection
    supports_jobs = True

    def __init__(self, host: str, address: str, port: int = 22, user: str = "root", password: str | None = None,
                 key_file: str | None = None, key_passphrase: str | None = None, allow_agent: bool = True,
                 known_hosts: str | os.PathLike | None = None, decider: HostKeyDecider = refuse_unknown_keys,
                 jump: SSHTransport | None = None, connect_timeout: float = 10.0, keepalive: int = 2):
        super().__init__(host)
        self.address, self.port, self.user = address, int(port), user
        self._password, self._key_file, self._passphrase = password, key_file, key_passphrase
        self.allow_agent = allow_agent
        if known_hosts is None:
            from app.remote.connect import known_hosts_path
            known_hosts = known_hosts_path()
        self.known_hosts = Path(known_hosts).expanduser()
        self.decider = decider
        self.jump = jump
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return f"{self.address}:{self.port}"

    # ------------------------------------------------------------------ connection

    def open(self) -> None:
        with self._lock:
            if self._client is not None and self._active(self._client):
                return
            self._client = self._connect()

    @staticmethod
    def _active(client: paramiko.SSHClient) -> bool:
        t = client.get_transport()
        return t is not None and t.is_active()

    def _connect(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        if self.known_hosts.exists():
            # read once per version of the file, not once per connection (app/remote/known_hosts.py)
            known_hosts.trust(client, self.known_hosts, _known_name(self.address, self.port), self.host)
        client.set_missing_host_key_policy(_AskThenRecord(self))
        sock = None
        if self.jump is not None:
            self.jump.open()
            try:
                sock = self.jump._client.get_transport().open_channel(
                    "direct-tcpip", (self.address, self.port), ("127.0.0.1", 0), timeout=self.connect_timeout)
            except (paramiko.SSHException, OSError) as exc:
                raise Unreachable(f"{self.host}: the jump host {self.jump.host} cannot reach {self.where}: "
                                  f"{exc}") from None
        try:
            client.connect(self.address, self.port, username=self.user, password=self._password,
                           key_filename=self._key_file, passphrase=self._passphrase,
                           allow_agent=self.allow_agent, look_for_keys=self._key_file is None,
                           timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                           auth_timeout=self.connect_timeout, sock=sock, transport_factory=_aead_first)
        except HostKeyRejected:
            client.close()
            raise
        except paramiko.BadHostKeyException as exc:
            client.close()
            line = self._known_hosts_line(_known_name(self.address, self.port))
            raise HostKeyRejected(
                f"{self.host}: the SSH host key of {self.where} has CHANGED since it was trusted "
                f"(now {exc.key.get_name()} {fingerprint(exc.key)}, expected {fingerprint(exc.expected_key)}). "
                f"This can be a man-in-the-middle attack; nothing was run. If the host was reinstalled, "
                f"remove {'line ' + str(line) + ' of ' if line else 'its line from '}{self.known_hosts} "
                "and accept the new key.") from None
        except paramiko.AuthenticationException:
            client.close()
            how = "password" if self._password else ("key " + self._key_file if self._key_file else "keys/agent")
            raise AuthFailed(f"{self.host}: {self.user}@{self.where} refused the login ({how}); "
                             "check the user name and the password or key in the keyring") from None
        except TimeoutError:
            client.close()
            raise Unreachable(f"{self.host}: no answer from {self.where} within {self.connect_timeout:g} s "
                              "(host down, wrong address or a firewall)") from None
        except (OSError, paramiko.SSHException, EOFError) as exc:
            client.close()
            cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            raise Unreachable(f"{self.host}: cannot connect to {self.where}: {cause}") from None
        client.get_transport().set_keepalive(self.keepalive)
        _no_delay(client)
        _quiet_reader(client)
        return client

    def _known_hosts_line(self, name: str) -> int | None:
        try:
            for n, line in enumerate(self.known_hosts.read_text().splitlines(), 1):
                if line.split(" ", 1)[0].split(",").count(name):
                    return n
        except OSError:
            pass
        return None

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
        if self.jump is not None:
            self.jump.close()

    # --------------------------------------------------------------------- commands

    def run(self, script: str, *, shell: str = "bash", on_output: OutputSink | None = None,
            timeout: float | None = None, cancel: threading.Event | None = None,
            job: jobs.Job | None = None) -> CommandResult:
        if job is not None and shell in jobs.SHELLS:
            return self._execute("exec sh -s", jobs.start_script(job, script, shell, merged=True), on_output, timeout,
                                 cancel, job)
        command = _COMMANDS.get(shell)
        if command is None:
            return CommandResult(FAILED, None, f"SSH cannot run {shell} scripts")
        return self._execute(command, script, on_output, timeout, cancel, None)

    def follow_job(self, job, on_output=None, timeout=None, cancel=None) -> CommandResult:
        return self._execute("exec sh -s", jobs.follow_script(job, merged=True), on_output, timeout, cancel, job)

    def _execute(self, command: str, script: str, on_output: OutputSink | None, timeout: float | None,
                 cancel, job: jobs.Job | None) -> CommandResult:
        mark = jobs.PID_MARK if job is not None else _PID_MARK
        start = time.monotonic()
        tail: list[str] = []
        try:
            self.open()     # reconnects after a lost connection
            channel = self._client.get_transport().open_session(timeout=self.connect_timeout)
            channel.exec_command(command)
            channel.sendall(script.encode() + (b"" if script.endswith("\n") else b"\n"))
            channel.shutdown_write()
        except (Unreachable, AuthFailed, HostKeyRejected):
            raise
        except (paramiko.SSHException, OSError, EOFError, AttributeError) as exc:
            self._forget()
            return CommandResult(LOST, None, f"the connection to {self.where} failed: {exc or type(exc).__name__}",
                                 time.monotonic() - start, tail)
        remote_pid: list[int] = []

        def stderr_sink(stream: str, line: str) -> None:
            if not remote_pid and line.startswith(mark):
                remote_pid.append(int(line[len(mark):].strip() or 0))
                if tail and tail[-1].endswith(line):
                    tail.pop()
                if job is not None and job.on_started is not None and remote_pid[0]:
                    job.on_started(remote_pid[0])
            elif on_output is not None:
                on_output(stream, line)

        out = command_stdout(on_output, tail, job is not None)
        err = LineSplitter("stderr", stderr_sink, tail)
        ended = None
        pump_error = ""
        transport = channel.get_transport()
        last_heard, saw_exit = time.monotonic(), False
        try:
            while True:
                got = False
                while channel.recv_ready():
                    out.feed(channel.recv(65536))
                    got = True
                while channel.recv_stderr_ready():
                    err.feed(channel.recv_stderr(65536))
                    got = True
                exited = channel.exit_status_ready()
                if got or (exited and not saw_exit):
                    last_heard = time.monotonic()       # output, or the exit status: the wait counts from then
                saw_exit = exited
                if exited and not channel.recv_ready() and not channel.recv_stderr_ready() and (
                        channel.eof_received or channel.closed or time.monotonic() - last_heard > AFTER_EXIT_S):
                    break
                if not transport.is_active() or channel.closed and not channel.exit_status_ready():
                    ended = LOST
                    break
                if cancel is not None and cancel.is_set():
                    ended = CANCELLED
                    break
                if timeout is not None and time.monotonic() - start > timeout:
                    ended = TIMEOUT
                    break
                if not got:
                    wait = _IDLE_S if timeout is None else max(0.0, min(_IDLE_S, start + timeout - time.monotonic()))
                    if channel.eof_received:
                        # after EOF the channel reads as ready for good: wait for the exit status
                        # instead of spinning (thousands of turns when it comes late)
                        channel.status_event.wait(wait)
                    else:
                        select.select([channel], [], [], wait)
        except (paramiko.SSHException, OSError, EOFError):
            ended = LOST
        except Exception as exc:
            pump_error = f"{type(exc).__name__}: {exc}"
            ended = FAILED
        try:
            out.flush()
            err.flush()
        except Exception as exc:
            pump_error, ended = f"{type(exc).__name__}: {exc}", FAILED
        seconds = time.monotonic() - start
        if ended == FAILED:
            # never reported as a success with its output lost: stopped, and said so
            self._stop(channel, remote_pid[0] if remote_pid else None, job)
            return CommandResult(FAILED, None, f"the step's output could not be read ({pump_error}); the step was "
                                 "stopped and what it printed is incomplete", seconds, tail)
        if ended in (TIMEOUT, CANCELLED):
            reached = self._stop(channel, remote_pid[0] if remote_pid else None, job)
            msg = f"still running after {timeout:g} s" if ended == TIMEOUT else "stopped by the user"
            if reached:
                msg += ": stopped" if ended == TIMEOUT else ""
            else:
                # a cut link: saying "stopped" would be a guess
                msg += (f"; the stop did not reach {self.where}, so the step may still be running there"
                        + ("; resuming the run stops it before the step runs again" if job is not None else ""))
            return CommandResult(ended, None, msg, seconds, tail)
        if ended == LOST:
            self._forget()
            return CommandResult(LOST, None, f"the connection to {self.where} was lost while the step ran "
                                 "(host down or link cut); whether it finished is unknown", seconds, tail)
        code = channel.recv_exit_status()
        channel.close()
        if code == 0:
            return CommandResult(OK, 0, "", seconds, tail)
        if code == -1:
            self._forget()
            return CommandResult(LOST, None, f"the session on {self.where} ended without an exit status "
                                 "(host down or sshd killed)", seconds, tail)
        return CommandResult(FAILED, code, "command not found" if code == 127 else f"exit status {code}",
                             seconds, tail)

    def _stop(self, channel: paramiko.Channel, pid: int | None, job: jobs.Job | None = None) -> bool:
        """True when the host confirmed the stop of the step's process group."""
        # closing the channel alone leaves a silent script running on the host
        try:
            channel.close()
        except Exception:
            pass
        if not pid:
            return False
        # one budget for opening the killer's channel and its answer: on a cut link the run learns
        # the stop did not reach the host (and says so) after _STOP_WAIT_S, not the connect timeout more
        deadline = time.monotonic() + _STOP_WAIT_S
        try:
            killer = self._client.get_transport().open_session(timeout=min(self.connect_timeout, _STOP_WAIT_S))
            if job is not None:
                # a job's group by its folder, and only while it is the job's (jobs.IDENTITY)
                killer.exec_command("exec sh -s")
                killer.sendall(jobs.kill_script(job).encode())
                killer.shutdown_write()
            else:
                # `kill -s SIG -- -PGID` is the form both bash and dash accept
                killer.exec_command(f"kill -s TERM -- -{pid} 2>/dev/null || kill -s TERM {pid}; sleep 1; "
                                    f"kill -s KILL -- -{pid} 2>/dev/null; true")
            # recv_exit_status() has no timeout: on a cut link it would wait for TCP to give up
            while not killer.exit_status_ready() and time.monotonic() < deadline:
                time.sleep(_POLL_S)
            confirmed = killer.exit_status_ready()
            killer.close()
            return confirmed
        except Exception:
            return False

    def _forget(self) -> None:
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close()
                except Exception:
                    pass
                self._client = None
