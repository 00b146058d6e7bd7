"""A small WS-Management server for testing the WinRM transport where no Windows host exists.

It speaks the part of WS-Management (MS-WSMV, the WinRS shell) that pywinrm uses, on
127.0.0.1 and an ephemeral port: Create (a shell), Command, Receive, Signal and Delete.
Commands run through /bin/sh in their own process group.  A command line of the form
`powershell.exe ... -EncodedCommand B64` is decoded (base64 of UTF-16LE, as PowerShell
expects) and the decoded text runs through /bin/sh, so tests can check the encoding round
trip without PowerShell.

Authentication is Basic and NTLM (pyspnego's acceptor), including WinRM message
encryption over HTTP (multipart/encrypted, application/HTTP-SPNEGO-session-encrypted).
Optionally it serves HTTPS with a certificate the test provides.

Like Windows, a Receive that sees no output within its OperationTimeout answers with the
w:TimedOut fault (WSManFault code 2150858793); the server caps that wait at
`max_operation_timeout` so tests stay fast.  Everything is bounded: request size, number
of shells and commands, and `stop()` kills every process it started.
"""
from __future__ import annotations

import base64
import os
import re
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

NS = {
    "s": "http://www.w3.org/2003/05/soap-envelope",
    "a": "http://schemas.xmlsoap.org/ws/2004/08/addressing",
    "w": "http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd",
    "rsp": "http://schemas.microsoft.com/wbem/wsman/1/windows/shell",
    "x": "http://schemas.xmlsoap.org/ws/2004/09/transfer",
    "f": "http://schemas.microsoft.com/wbem/wsman/1/wsmanfault",
}
ACTION_CREATE = "http://schemas.xmlsoap.org/ws/2004/09/transfer/Create"
ACTION_DELETE = "http://schemas.xmlsoap.org/ws/2004/09/transfer/Delete"
ACTION_COMMAND = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell/Command"
ACTION_RECEIVE = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell/Receive"
ACTION_SIGNAL = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell/Signal"
STATE_DONE = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell/CommandState/Done"
STATE_RUNNING = "http://schemas.microsoft.com/wbem/wsman/1/windows/shell/CommandState/Running"
TIMED_OUT_CODE = 2150858793
SHELL_NOT_FOUND_CODE = 2150858843

ENCRYPTED_PROTOCOL = "application/HTTP-SPNEGO-session-encrypted"
BOUNDARY = b"--Encrypted Boundary"

MAX_BODY = 1 << 20
MAX_SHELLS = 32
MAX_COMMANDS = 64
MAX_CHUNK = 64 * 1024      # output bytes per Receive answer, as Windows also splits large output

_POWERSHELL = re.compile(r"^\s*powershell(?:\.exe)?\s.*-EncodedCommand\s+(\S+)\s*$", re.IGNORECASE | re.DOTALL)


@dataclass
class Command:
    id: str
    command_line: str
    script: str                       # what /bin/sh -c ran
    process: subprocess.Popen
    output: list = field(default_factory=list)    # [(stream, bytes)] not yet received
    streams_open: int = 2
    exit_code: int | None = None
    signalled: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def finished(self) -> bool:
        return self.streams_open == 0 and self.exit_code is not None


@dataclass
class Shell:
    id: str
    user: str
    commands: dict[str, Command] = field(default_factory=dict)


class Fault(Exception):
    def __init__(self, subcode: str, code: int, text: str):
        super().__init__(text)
        self.subcode, self.code, self.text = subcode, code, text


class WSManTestServer:
    """`with WSManTestServer(users={"tester": "pw"}) as server: server.url`."""

    def __init__(self, users: dict[str, str] | None = None, *, auth: tuple[str, ...] = ("basic", "ntlm"),
                 certificate: tuple[str, str] | None = None, max_operation_timeout: float = 1.0):
        self.users = dict(users or {"tester": "Secret-1"})
        self.auth = auth
        self.certificate = certificate           # (cert.pem, key.pem) to serve HTTPS
        self.max_operation_timeout = max_operation_timeout
        self.shells: dict[str, Shell] = {}
        self.commands: list[Command] = []        # every command ever started, for assertions
        self.encrypted_messages = 0
        self.auth_schemes_used: set[str] = set()
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._user_file_dir: tempfile.TemporaryDirectory | None = None
        self._previous_user_file: str | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.certificate else "http"

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/wsman"

    def start(self) -> WSManTestServer:
        if "ntlm" in self.auth:
            # pyspnego's NTLM acceptor finds accounts only through this file (DOMAIN:USER:PASSWORD)
            self._user_file_dir = tempfile.TemporaryDirectory(prefix="wsman-ntlm-")
            path = os.path.join(self._user_file_dir.name, "users")
            with open(path, "w", encoding="utf-8") as fh:
                fh.writelines(f":{user}:{password}\n" for user, password in self.users.items())
            self._previous_user_file = os.environ.get("NTLM_USER_FILE")
            os.environ["NTLM_USER_FILE"] = path
        tls = None
        if self.certificate:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(*self.certificate)
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self, tls)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="wsman-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops listening, drops every open connection (a client sees the host vanish)
        and kills every command still running."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd.drop_connections()
            self._httpd = None
        with self._lock:
            shells, self.shells = list(self.shells.values()), {}
        for shell in shells:
            for command in shell.commands.values():
                _kill(command)
        if self._user_file_dir is not None:
            if self._previous_user_file is None:
                os.environ.pop("NTLM_USER_FILE", None)
            else:
                os.environ["NTLM_USER_FILE"] = self._previous_user_file
            self._user_file_dir.cleanup()
            self._user_file_dir = None

    def __enter__(self) -> WSManTestServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ WinRS operations

    def create_shell(self, user: str) -> Shell:
        with self._lock:
            if len(self.shells) >= MAX_SHELLS:
                raise Fault("w:QuotaLimit", 2150858855,
                            "The maximum number of concurrent shells for this user has been exceeded.")
            shell = Shell(str(uuid.uuid4()).upper(), user)
            self.shells[shell.id] = shell
            return shell

    def shell(self, shell_id: str | None) -> Shell:
        with self._lock:
            shell = self.shells.get(shell_id or "")
        if shell is None:
            raise Fault("w:InvalidSelectors", SHELL_NOT_FOUND_CODE,
                        f"The request for the Windows Remote Shell with ShellId {shell_id} failed because the "
                        "shell was not found on the server.")
        return shell

    def delete_shell(self, shell_id: str | None) -> None:
        shell = self.shell(shell_id)
        with self._lock:
            self.shells.pop(shell.id, None)
        for command in shell.commands.values():
            _kill(command)

    def start_command(self, shell: Shell, command_line: str) -> Command:
        if sum(c.exit_code is None for c in self.commands) >= MAX_COMMANDS:
            raise Fault("w:QuotaLimit", 2150858855, "Too many commands are running.")
        encoded = _POWERSHELL.match(command_line)
        script = base64.b64decode(encoded.group(1)).decode("utf-16-le") if encoded else command_line
        process = subprocess.Popen(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        command = Command(str(uuid.uuid4()).upper(), command_line, script, process)
        for name, pipe in (("stdout", process.stdout), ("stderr", process.stderr)):
            threading.Thread(target=_pump, args=(command, name, pipe), daemon=True).start()
        threading.Thread(target=_reap, args=(command,), daemon=True).start()
        shell.commands[command.id] = command
        self.commands.append(command)
        return command

    def receive(self, shell: Shell, command_id: str, operation_timeout: float) -> tuple[list, Command]:
        command = shell.commands.get(command_id)
        if command is None:
            raise Fault("w:InvalidParameter", 2150858882, f"The command {command_id} is not known to this shell.")
        wait = min(operation_timeout, self.max_operation_timeout)
        with command.changed:
            if not command.changed.wait_for(lambda: command.output or command.finished, timeout=wait):
                raise Fault("w:TimedOut", TIMED_OUT_CODE,
                            "The WS-Management service cannot complete the operation within the time specified "
                            "in OperationTimeout.  ")
            taken, size = [], 0
            while command.output and size < MAX_CHUNK:
                stream, data = command.output.pop(0)
                taken.append((stream, data))
                size += len(data)
        return taken, command

    def signal(self, shell: Shell, command_id: str, code: str) -> None:
        command = shell.commands.get(command_id)
        if command is None:
            return      # Windows also accepts a terminate for a command that already ended
        if code.endswith("/terminate"):
            _kill(command)
            shell.commands.pop(command_id, None)
        elif code.endswith("/ctrl_c"):
            _signal_group(command, signal.SIGINT)


def _pump(command: Command, stream: str, pipe) -> None:
    for chunk in iter(lambda: pipe.read1(65536), b""):
        with command.changed:
            command.output.append((stream, chunk))
            command.changed.notify_all()
    with command.changed:
        command.streams_open -= 1
        command.changed.notify_all()


def _reap(command: Command) -> None:
    code = command.process.wait()
    with command.changed:
        command.exit_code = code if code >= 0 else 128 - code    # as sh reports a signal
        command.changed.notify_all()


def _signal_group(command: Command, sig: int) -> None:
    try:
        os.killpg(command.process.pid, sig)
    except ProcessLookupError:
        pass


def _kill(command: Command) -> None:
    command.signalled = True
    _signal_group(command, signal.SIGKILL)
    try:
        command.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


# ---------------------------------------------------------------------- HTTP and SOAP

class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 32

    def __init__(self, address, handler, wsman: WSManTestServer, tls: ssl.SSLContext | None):
        self.wsman = wsman
        self.tls = tls
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, handler)

    def finish_request(self, request, client_address):
        # the TLS handshake runs in the connection's own thread, so a client that rejects
        # the certificate does not hold up the accept loop
        if self.tls is not None:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                request.close()
                return
        with self.connections_lock:
            self.connections.add(request)
        try:
            super().finish_request(request, client_address)
        finally:
            with self.connections_lock:
                self.connections.discard(request)

    def handle_error(self, request, client_address):
        import sys
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return      # the client (or stop()) dropped the connection: a fault the tests make on purpose
        super().handle_error(request, client_address)

    def drop_connections(self) -> None:
        with self.connections_lock:
            live = list(self.connections)
        for sock in live:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep-alive: NTLM authenticates the connection, not a request
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.ntlm = None               # the connection's NTLM context once a handshake began
        self.user: str | None = None   # set once the connection (NTLM) is authenticated

    def log_message(self, format, *args) -> None:
        pass

    def do_POST(self) -> None:
        wsman = self.server.wsman
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._reply(413, b"", close=True)
            return
        body = self.rfile.read(length) if length else b""
        user = self._authenticate()
        if user is None:
            return
        encrypted = self.headers.get("Content-Type", "").startswith("multipart/encrypted")
        if encrypted:
            if self.ntlm is None:
                self._reply(400, b"", close=True)
                return
            body = self._decrypt(body)
            with wsman._lock:
                wsman.encrypted_messages += 1
        if not body:
            # pywinrm sends an empty POST to set up the security context for encryption
            self._reply(200, b"")
            return
        try:
            answer, status = self._dispatch(ET.fromstring(body), user), 200
        except Fault as fault:
            answer, status = _fault_envelope(fault, _text(ET.fromstring(body), ".//a:MessageID")), 500
        except ET.ParseError:
            self._reply(400, b"", close=True)
            return
        payload = answer.encode("utf-8")
        if encrypted:
            self._reply(status, self._encrypt(payload),
                        f'multipart/encrypted;protocol="{ENCRYPTED_PROTOCOL}";boundary="Encrypted Boundary"')
        else:
            self._reply(status, payload)

    # -------------------------------------------------------------- authentication

    def _authenticate(self) -> str | None:
        """The user, or None after answering 401."""
        wsman = self.server.wsman
        if self.user is not None:
            return self.user
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        scheme_l = scheme.lower()
        if scheme_l == "basic" and "basic" in wsman.auth:
            try:
                name, _, password = base64.b64decode(token).decode("utf-8").partition(":")
            except ValueError:
                name, password = "", None
            if wsman.users.get(name) == password:
                wsman.auth_schemes_used.add("basic")
                return name       # Basic authenticates each request, not the connection
        elif scheme_l in ("ntlm", "negotiate") and "ntlm" in wsman.auth:
            import spnego
            from spnego.exceptions import SpnegoError
            raw = base64.b64decode(token)
            if self.ntlm is None or raw[8:12] == struct.pack("<I", 1):     # a new NEGOTIATE message
                self.ntlm = spnego.server(protocol="ntlm")
            try:
                reply = self.ntlm.step(raw)
            except SpnegoError:
                self.ntlm = None
            else:
                if not self.ntlm.complete:
                    self._reply(401, b"", extra={"WWW-Authenticate": f"{scheme} {base64.b64encode(reply).decode()}"})
                    return None
                self.user = (self.ntlm.client_principal or "").split("\\")[-1]
                wsman.auth_schemes_used.add("ntlm")
                return self.user
        self._challenge()
        return None

    def _challenge(self) -> None:
        offers = []
        if "ntlm" in self.server.wsman.auth:
            offers.append("Negotiate")
        if "basic" in self.server.wsman.auth:
            offers.append('Basic realm="WSMAN"')
        self.send_response(401)
        for offer in offers:
            self.send_header("WWW-Authenticate", offer)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _decrypt(self, body: bytes) -> bytes:
        parts = [p for p in body.split(BOUNDARY + b"\r\n") if p]
        message = b""
        for header, payload in zip(parts[0::2], parts[1::2], strict=True):
            expected = int(header.split(b"Length=")[1].strip())
            if payload.endswith(BOUNDARY + b"--\r\n"):
                payload = payload[: -len(BOUNDARY + b"--\r\n")]
            sealed = payload.replace(b"\tContent-Type: application/octet-stream\r\n", b"", 1)
            signature_length = struct.unpack("<i", sealed[:4])[0]
            signature = sealed[4:4 + signature_length]
            plain = self.ntlm.unwrap_winrm(signature, sealed[4 + signature_length:])
            if len(plain) != expected:
                raise ValueError("encrypted message length does not match its header")
            message += plain
        return message

    def _encrypt(self, payload: bytes) -> bytes:
        wrapped = self.ntlm.wrap_winrm(payload)
        return (BOUNDARY + b"\r\n"
                + f"\tContent-Type: {ENCRYPTED_PROTOCOL}\r\n".encode()
                + f"\tOriginalContent: type=application/soap+xml;charset=UTF-8;Length={len(payload)}\r\n".encode()
                + BOUNDARY + b"\r\n\tContent-Type: application/octet-stream\r\n"
                + struct.pack("<i", len(wrapped.header)) + wrapped.header + wrapped.data
                + BOUNDARY + b"--\r\n")

    def _reply(self, status: int, payload: bytes, content_type: str = "application/soap+xml;charset=UTF-8",
               extra: dict[str, str] | None = None, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)

    # -------------------------------------------------------------- SOAP

    def _dispatch(self, envelope: ET.Element, user: str) -> str:
        wsman = self.server.wsman
        action = _text(envelope, ".//a:Action")
        message_id = _text(envelope, ".//a:MessageID")
        shell_id = None
        for selector in envelope.iterfind(".//w:Selector", NS):
            if selector.get("Name") == "ShellId":
                shell_id = selector.text
        if action == ACTION_CREATE:
            shell = wsman.create_shell(user)
            body = (f'<x:ResourceCreated><a:Address>{escape(wsman.url)}</a:Address><a:ReferenceParameters>'
                    f'<w:ResourceURI>http://schemas.microsoft.com/wbem/wsman/1/windows/shell/cmd</w:ResourceURI>'
                    f'<w:SelectorSet><w:Selector Name="ShellId">{shell.id}</w:Selector></w:SelectorSet>'
                    f'</a:ReferenceParameters></x:ResourceCreated>'
                    f'<rsp:Shell><rsp:ShellId>{shell.id}</rsp:ShellId></rsp:Shell>')
            return _envelope("http://schemas.xmlsoap.org/ws/2004/09/transfer/CreateResponse", message_id, body)
        shell = wsman.shell(shell_id)
        if action == ACTION_DELETE:
            wsman.delete_shell(shell.id)
            return _envelope("http://schemas.xmlsoap.org/ws/2004/09/transfer/DeleteResponse", message_id, "")
        if action == ACTION_COMMAND:
            executable = _text(envelope, ".//rsp:CommandLine/rsp:Command") or ""
            arguments = [a.text or "" for a in envelope.iterfind(".//rsp:CommandLine/rsp:Arguments", NS)]
            command = wsman.start_command(shell, " ".join([executable, *arguments]).strip())
            body = f"<rsp:CommandResponse><rsp:CommandId>{command.id}</rsp:CommandId></rsp:CommandResponse>"
            return _envelope(ACTION_COMMAND + "Response", message_id, body)
        if action == ACTION_RECEIVE:
            desired = envelope.find(".//rsp:Receive/rsp:DesiredStream", NS)
            command_id = desired.get("CommandId") if desired is not None else ""
            chunks, command = wsman.receive(shell, command_id, _seconds(_text(envelope, ".//w:OperationTimeout")))
            streams = "".join(f'<rsp:Stream Name="{name}" CommandId="{command.id}">'
                              f'{base64.b64encode(data).decode()}</rsp:Stream>' for name, data in chunks)
            with command.changed:
                done = command.finished and not command.output
            if done:
                streams += (f'<rsp:Stream Name="stdout" CommandId="{command.id}" End="true"></rsp:Stream>'
                            f'<rsp:Stream Name="stderr" CommandId="{command.id}" End="true"></rsp:Stream>')
                state = (f'<rsp:CommandState CommandId="{command.id}" State="{STATE_DONE}">'
                         f'<rsp:ExitCode>{command.exit_code}</rsp:ExitCode></rsp:CommandState>')
            else:
                state = f'<rsp:CommandState CommandId="{command.id}" State="{STATE_RUNNING}"/>'
            body = f'<rsp:ReceiveResponse>{streams}{state}</rsp:ReceiveResponse>'
            return _envelope(ACTION_RECEIVE + "Response", message_id, body)
        if action == ACTION_SIGNAL:
            signal_element = envelope.find(".//rsp:Signal", NS)
            code = _text(envelope, ".//rsp:Signal/rsp:Code") or ""
            wsman.signal(shell, signal_element.get("CommandId") if signal_element is not None else "", code)
            return _envelope(ACTION_SIGNAL + "Response", message_id, "<rsp:SignalResponse/>")
        raise Fault("a:ActionNotSupported", 2150858754, f"The action {action} is not supported by this test server.")


def _text(root: ET.Element, path: str) -> str | None:
    node = root.find(path, NS)
    return node.text if node is not None else None


def _seconds(duration: str | None) -> float:
    match = re.fullmatch(r"PT([0-9.]+)S", duration or "")
    return float(match.group(1)) if match else 60.0


def _namespaces() -> str:
    return " ".join(f'xmlns:{prefix}="{uri}"' for prefix, uri in NS.items())


def _envelope(action: str, relates_to: str | None, body: str) -> str:
    return (f'<s:Envelope xml:lang="en-US" {_namespaces()}><s:Header>'
            f'<a:Action>{action}</a:Action><a:MessageID>uuid:{uuid.uuid4()}</a:MessageID>'
            f'<a:To>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</a:To>'
            f'<a:RelatesTo>{escape(relates_to or "")}</a:RelatesTo></s:Header>'
            f'<s:Body>{body}</s:Body></s:Envelope>')


def _fault_envelope(fault: Fault, relates_to: str | None) -> str:
    body = (f'<s:Fault><s:Code><s:Value>s:Receiver</s:Value><s:Subcode><s:Value>{fault.subcode}</s:Value>'
            f'</s:Subcode></s:Code><s:Reason><s:Text xml:lang="en-US">{escape(fault.text)}</s:Text></s:Reason>'
            f'<s:Detail><f:WSManFault Code="{fault.code}" Machine="127.0.0.1">'
            f'<f:Message>{escape(fault.text)}</f:Message></f:WSManFault></s:Detail></s:Fault>')
    return _envelope("http://schemas.dmtf.org/wbem/wsman/1/wsman/fault", relates_to, body)
