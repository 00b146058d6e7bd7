"""Runs PowerShell and cmd scripts on Windows hosts over WinRM (WS-Management, WinRS shells).

Built on pywinrm's low-level `winrm.protocol.Protocol` rather than `winrm.Session`, because a
run must stream its output line by line and be stoppable: each Receive returns whatever
output is ready, and a Receive that finds nothing before the server's OperationTimeout is
just "poll again".  The operation timeout is therefore also how late a cancel is noticed.

Concurrency: every run borrows a WinRS shell with its own HTTP session (and so its own
NTLM security context for message encryption) from a small pool; parallel runs get
separate shells, sequential runs reuse one.  A shell whose command timed out, was
cancelled or lost its connection is deleted rather than reused, which on Windows also ends
any process the command left in the shell's job object.
"""
from __future__ import annotations

import base64
import html
import math
import re
import threading
import time

import requests
import winrm.exceptions as wx
from winrm.protocol import Protocol

from app.remote.base import (
    CANCELLED,
    FAILED,
    LOST,
    OK,
    TIMEOUT,
    AuthFailed,
    CommandResult,
    LineSplitter,
    OutputSink,
    RemoteError,
    Transport,
    Unreachable,
)

SCHEMES = ("https", "http")
AUTH_METHODS = ("ntlm", "kerberos", "basic", "credssp")
ENCRYPTION_MODES = ("auto", "always", "never")
TERMINATE = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell/signal/terminate"

# cmd.exe starts every WinRS command and refuses command lines longer than this
CMD_LINE_LIMIT = 8191
# the command is cmd.exe's "not found" exit code; 127 is what POSIX shells use
NOT_FOUND_EXIT_CODES = (127, 9009)
_NOT_RECOGNIZED = re.compile(r"is not recognized as (?:the name of a cmdlet|an internal or external command)",
                             re.IGNORECASE)
_EXTRAS = {"kerberos": "pywinrm[kerberos]", "credssp": "pywinrm[credssp]", "ntlm": "requests-ntlm"}


def powershell_command_line(script: str) -> str:
    """The command line that runs `script` in Windows PowerShell with no quoting at all:
    -EncodedCommand takes base64 of the UTF-16LE text."""
    encoded = base64.b64encode(script.encode("utf-16-le")).decode("ascii")
    return f"powershell.exe -NoProfile -NonInteractive -EncodedCommand {encoded}"


# An NTLM-authenticated HTTP connection carries the security context that seals WinRM
# messages; once the server closes it (Windows: after 120 s idle) pywinrm cannot recover
# the session, so a shell idle longer than this is replaced rather than reused.
IDLE_REUSE_S = 60.0


class _Session:
    """One HTTP session and one WinRS shell, used by one run at a time."""

    def __init__(self, protocol: Protocol, shell_id: str):
        self.protocol, self.shell_id = protocol, shell_id
        self.idle_since = time.monotonic()


class WinRMTransport(Transport):
    parallel_safe = True      # one shell (and HTTP session) per concurrent run

    def __init__(self, host: str, address: str, port: int | None = None, *, scheme: str = "https",
                 auth: str = "ntlm", user: str | None = None, password: str | None = None,
                 verify_tls: bool = True, ca_file: str | None = None, message_encryption: str = "auto",
                 operation_timeout: int = 3, read_timeout: int = 30, connect_timeout: float = 10.0):
        super().__init__(host)
        if scheme not in SCHEMES:
            raise ValueError(f"WinRM scheme must be one of {SCHEMES}, not {scheme!r}")
        if auth not in AUTH_METHODS:
            raise ValueError(f"WinRM auth must be one of {AUTH_METHODS}, not {auth!r}")
        if message_encryption not in ENCRYPTION_MODES:
            raise ValueError(f"message_encryption must be one of {ENCRYPTION_MODES}, not {message_encryption!r}")
        if not 1 <= operation_timeout < read_timeout:
            raise ValueError("need 1 <= operation_timeout < read_timeout (the server may hold a Receive "
                             "for the whole operation timeout)")
        self.address = address
        self.scheme = scheme
        self.port = port or (5986 if scheme == "https" else 5985)
        self.auth = auth
        self.user = user or ""
        self._password = password or ""
        self.verify_tls = verify_tls
        self.ca_file = ca_file
        self.message_encryption = message_encryption
        self.operation_timeout = int(operation_timeout)
        self.read_timeout = int(read_timeout)
        self.connect_timeout = connect_timeout
        self._idle: list[_Session] = []
        self._busy: set[_Session] = set()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def endpoint(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}/wsman"

    def __repr__(self) -> str:     # never shows the password
        return f"WinRMTransport({self.host!r}, {self.endpoint!r}, auth={self.auth!r}, user={self.user!r})"

    # ------------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Connects, authenticates and creates the first shell, so a wrong address, port,
        password or certificate shows up here rather than in the first step."""
        with self._lock:
            self._closed = False
        session = self._new_session()
        with self._lock:
            self._idle.append(session)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for session in idle:
            self._discard(session)

    # ------------------------------------------------------------------ running

    def run(self, script: str, *, shell: str = "powershell", on_output: OutputSink | None = None,
            timeout: float | None = None, cancel: threading.Event | None = None) -> CommandResult:
        if shell == "powershell":
            command_line = powershell_command_line(script)
        elif shell == "cmd":
            command_line = script
        else:
            return CommandResult(FAILED, None, f"WinRM runs powershell or cmd scripts, not {shell}")
        if len(command_line) > CMD_LINE_LIMIT:
            return CommandResult(FAILED, None, f"the script is too long for one WinRM command line "
                                               f"({len(command_line)} of at most {CMD_LINE_LIMIT} characters"
                                               f"{' after encoding' if shell == 'powershell' else ''}): "
                                               "split it into smaller steps")
        start = time.monotonic()
        try:
            session = self._borrow()
        except RemoteError as exc:
            # the host went away (or refused us) since open(): the run engine reconnects on LOST
            return CommandResult(LOST, None, str(exc), time.monotonic() - start)
        tail: list[str] = []
        watch = _NotFoundWatch(on_output)
        stdout = LineSplitter("stdout", watch, tail)
        stderr = _ClixmlDecoder(LineSplitter("stderr", watch, tail))
        result = CommandResult(LOST, None, "the run was interrupted")
        try:
            result = self._drive(session, command_line, stdout, stderr, start, timeout, cancel)
        finally:
            stdout.flush()
            stderr.flush()
            self._give_back(session, result.status)
        result.tail = tail
        result.seconds = time.monotonic() - start
        if result.status == FAILED and (result.exit_code in NOT_FOUND_EXIT_CODES or watch.line):
            result.message = "command not found" + (f": {watch.line}" if watch.line else "")
        return result

    def _drive(self, session: _Session, command_line: str, stdout: LineSplitter, stderr: _ClixmlDecoder,
               start: float, timeout: float | None, cancel: threading.Event | None) -> CommandResult:
        protocol = session.protocol
        # any failure here (including a reply pywinrm cannot parse) ends as LOST, never as an
        # exception: the run engine expects a result for every command
        try:
            command_id = protocol.run_command(session.shell_id, command_line)
        except Exception as exc:
            return CommandResult(LOST, None, f"could not start the command: {self._describe(exc)}")
        while True:
            stopped = None
            if cancel is not None and cancel.is_set():
                stopped = CANCELLED
            elif timeout is not None and time.monotonic() - start > timeout:
                stopped = TIMEOUT
            if stopped:
                self._terminate(protocol, session.shell_id, command_id)
                if stopped == TIMEOUT:
                    return CommandResult(TIMEOUT, None, f"still running after {timeout:g} s: stopped")
                return CommandResult(CANCELLED, None, "stopped by the user")
            # a Receive never waits past the step's timeout by more than a second
            wait = self.operation_timeout
            if timeout is not None:
                wait = max(1, min(wait, math.ceil(timeout - (time.monotonic() - start))))
            protocol.operation_timeout_sec = wait
            try:
                out, err, exit_code, done = protocol.get_command_output_raw(session.shell_id, command_id)
            except wx.WinRMOperationTimeoutError:
                continue          # no output yet
            except Exception as exc:
                return CommandResult(LOST, None, f"connection to {self.address}:{self.port} lost while the "
                                                 f"command ran ({self._describe(exc)}): its outcome is unknown")
            if out:
                stdout.feed(out)
            if err:
                stderr.feed(err)
            if done:
                try:
                    protocol.cleanup_command(session.shell_id, command_id)
                except Exception:
                    pass    # the command already ended; a failed clean-up changes nothing for the result
                if exit_code == 0:
                    return CommandResult(OK, 0, "")
                return CommandResult(FAILED, exit_code, f"exit status {exit_code}")

    def _terminate(self, protocol: Protocol, shell_id: str, command_id: str) -> None:
        """Signal terminate (cleanup_command sends exactly that); the caller then deletes
        the shell, which ends whatever the command started."""
        try:
            protocol.cleanup_command(shell_id, command_id)
        except Exception:
            pass    # the host may be gone; deleting the shell below is the second chance

    # ------------------------------------------------------------------ sessions

    def _borrow(self) -> _Session:
        with self._lock:
            if self._closed:
                raise RemoteError(f"{self.host}: the WinRM connection was closed")
            now = time.monotonic()
            stale = [s for s in self._idle if now - s.idle_since > IDLE_REUSE_S]
            self._idle = [s for s in self._idle if s not in stale]
            session = self._idle.pop() if self._idle else None
            if session is not None:
                self._busy.add(session)
        for old in stale:
            self._discard_later(old)
        if session is not None:
            return session
        session = self._new_session()
        with self._lock:
            self._busy.add(session)
        return session

    def _give_back(self, session: _Session, status: str) -> None:
        with self._lock:
            self._busy.discard(session)
            keep = status in (OK, FAILED) and not self._closed
            if keep:
                session.idle_since = time.monotonic()
                self._idle.append(session)
        if keep:
            return
        if status == LOST:
            # the host may be gone: deleting its shell must not hold up the result
            self._discard_later(session)
        else:
            # after a timeout or cancel, deleting the shell is what ends the command's
            # leftover processes on Windows, so it happens before run() returns
            self._discard(session)

    def _discard_later(self, session: _Session) -> None:
        threading.Thread(target=self._discard, args=(session,), name=f"winrm-discard-{self.host}",
                         daemon=True).start()

    def _discard(self, session: _Session) -> None:
        try:
            session.protocol.close_shell(session.shell_id)
        except Exception:
            # best effort: an unreachable host drops its idle shells itself (IdleTimeout)
            try:
                session.protocol.transport.close_session()
            except Exception:
                pass

    def _new_session(self) -> _Session:
        protocol = Protocol(
            self.endpoint, transport=self.auth, username=self.user, password=self._password,
            server_cert_validation="validate" if self.verify_tls else "ignore",
            # None: the CA bundle given here or requests' own, never one picked up from the environment
            ca_trust_path=self.ca_file if self.ca_file else None,
            message_encryption=self.message_encryption,
            operation_timeout_sec=self.operation_timeout, read_timeout_sec=self.read_timeout,
            proxy=None)
        # requests takes (connect, read): a host that is not there should not cost the full read timeout
        protocol.transport.read_timeout_sec = (self.connect_timeout, self.read_timeout)
        try:
            # code page 65001: output arrives as UTF-8, which is what LineSplitter decodes
            shell_id = protocol.open_shell(codepage=65001, noprofile=True)
        except Exception as exc:
            protocol.transport.close_session()
            raise self._open_error(exc) from None
        return _Session(protocol, shell_id)

    # ------------------------------------------------------------------ errors

    def _open_error(self, exc: Exception) -> RemoteError:
        where = f"{self.address}:{self.port}"
        if isinstance(exc, wx.InvalidCredentialsError) or getattr(exc, "code", None) == 401:
            who = f"{self.user}@{self.host}" if self.user else self.host
            return AuthFailed(f"{self.host}: WinRM refused the credentials of {who} ({self.auth} "
                              f"authentication at {where}); check the user name and the password in the keyring")
        if isinstance(exc, requests.exceptions.SSLError):
            text = str(exc)
            if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
                reason = re.search(r"certificate verify failed: ([^(\"')]+)", text)
                return Unreachable(
                    f"{self.host}: the certificate of the WinRM server at {where} was not trusted"
                    f"{f' ({reason.group(1).strip()})' if reason else ''}; set ca_file to the CA certificate "
                    "(PEM) that signed it, or turn verify_tls off only for a lab host you trust")
            return Unreachable(f"{self.host}: TLS with the WinRM server at {where} failed: {self._describe(exc)}")
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            return Unreachable(f"{self.host}: no answer from {where} within {self.connect_timeout:g} s "
                               "(host down, wrong address, or a firewall drops WinRM)")
        if isinstance(exc, requests.exceptions.ConnectionError):
            return Unreachable(f"{self.host}: cannot connect to WinRM at {where} ({self._describe(exc)}); "
                               f"is WinRM listening on {self.scheme} port {self.port}?")
        if isinstance(exc, requests.exceptions.Timeout):
            return Unreachable(f"{self.host}: WinRM at {where} did not answer within {self.read_timeout} s")
        if isinstance(exc, wx.WinRMError) and "is not installed" in str(exc):
            return RemoteError(f"{self.host}: {self.auth} authentication needs the Python package "
                               f"{_EXTRAS.get(self.auth, self.auth)}, which is not installed")
        return RemoteError(f"{self.host}: WinRM at {where} refused to open a shell: {self._describe(exc)}")

    def _describe(self, exc: Exception) -> str:
        if isinstance(exc, wx.WSManFaultError):
            return exc.reason.strip()
        if isinstance(exc, requests.exceptions.ConnectionError):
            text = str(exc)
            for known in ("Connection refused", "Connection reset by peer", "Name or service not known",
                          "No route to host", "Network is unreachable", "Connection aborted",
                          "Remote end closed connection"):
                if known in text:
                    return known.lower()
            return "connection failed"
        text = str(exc).replace(self._password, "***") if self._password else str(exc)
        return text.splitlines()[0] if text else type(exc).__name__


class _NotFoundWatch:
    """Passes lines on and remembers the first "is not recognized as ..." on stderr: that is
    how cmd.exe and PowerShell say "command not found" (PowerShell exits 1, not 127)."""

    def __init__(self, sink: OutputSink | None):
        self.sink, self.line = sink, ""

    def __call__(self, stream: str, line: str) -> None:
        if stream == "stderr" and not self.line and _NOT_RECOGNIZED.search(line):
            self.line = line.strip()
        if self.sink is not None:
            self.sink(stream, line)


class _ClixmlDecoder:
    """powershell.exe -EncodedCommand writes its error stream as CLIXML ("#< CLIXML" and
    then one <Objs> document per line).  This turns the error records back into text
    lines and drops progress records; stderr that is not CLIXML passes through as is."""

    _HEADER = b"#< CLIXML"
    _ERROR = re.compile(rb'<S S="Error">(.*?)</S>', re.DOTALL)
    _ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")

    def __init__(self, lines: LineSplitter):
        self.lines = lines
        self._pending = b""
        self._mode: str | None = None     # None until the first line decides, then "clixml" or "text"

    def feed(self, data: bytes) -> None:
        if self._mode == "text":
            self.lines.feed(data)
            return
        self._pending += data
        if self._mode is None:
            if len(self._pending) < len(self._HEADER) and self._HEADER.startswith(self._pending):
                return
            if not self._pending.startswith(self._HEADER):
                self._mode, data, self._pending = "text", self._pending, b""
                self.lines.feed(data)
                return
            self._mode = "clixml"
        *documents, self._pending = self._pending.split(b"\n")
        for document in documents:
            self._decode(document)

    def flush(self) -> None:
        if self._mode == "clixml":
            self._decode(self._pending)
        elif self._pending:
            self.lines.feed(self._pending)
        self._pending = b""
        self.lines.flush()

    def _decode(self, document: bytes) -> None:
        for match in self._ERROR.finditer(document):
            text = html.unescape(match.group(1).decode("utf-8", "replace"))
            text = self._ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)
            self.lines.feed(text.replace("\r\n", "\n").encode("utf-8"))
