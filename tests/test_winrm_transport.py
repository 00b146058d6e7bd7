"""The WinRM transport against a protocol-level test server (tests/wsman_server.py).

No Windows host can run here, so these tests check the WS-Management conversation that
pywinrm has with the server (shell create, command, receive with the operation-timeout
fault, signal, delete), Basic and NTLM authentication with NTLM message encryption over
HTTP, and certificate validation over HTTPS.  The test server runs commands through
/bin/sh: these tests say nothing about PowerShell itself.  The last test runs against a
real Windows endpoint when TESTBED_WINRM_HOST, TESTBED_WINRM_USER and
TESTBED_WINRM_PASSWORD are set.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time

import pytest
from wsman_server import WSManTestServer

from app.remote.base import CANCELLED, FAILED, LOST, OK, TIMEOUT, AuthFailed, Unreachable
from app.remote.winrm import WinRMTransport, powershell_command_line

USER, PASSWORD = "tester", "Secret-1"


@pytest.fixture(scope="module")
def server():
    with WSManTestServer({USER: PASSWORD}) as srv:
        yield srv


@pytest.fixture()
def fresh_server():
    """For tests that look at what the server saw or that break the server."""
    with WSManTestServer({USER: PASSWORD}) as srv:
        yield srv


def _transport(srv: WSManTestServer, **options) -> WinRMTransport:
    settings = dict(scheme=srv.scheme, auth="basic", user=USER, password=PASSWORD)
    settings.update(options)
    return WinRMTransport("win1", "127.0.0.1", srv.port, **settings)


@pytest.fixture()
def winrm(server):
    with _transport(server) as transport:
        yield transport


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


# ---------------------------------------------------------------------- running commands

def test_output_streams_line_by_line_before_the_command_ends(winrm):
    arrivals: list[tuple[float, str, str]] = []
    start = time.monotonic()
    result = winrm.run("echo first; sleep 1.5; echo second; echo oops >&2", shell="cmd",
                       on_output=lambda stream, line: arrivals.append((time.monotonic() - start, stream, line)))
    assert result.status == OK and result.exit_code == 0
    # stdout and stderr are separate pipes: only the order within each stream is defined
    assert [ln for _, s, ln in arrivals if s == "stdout"] == ["first", "second"]
    assert [ln for _, s, ln in arrivals if s == "stderr"] == ["oops"]
    assert arrivals[0][2] == "first" and arrivals[0][0] < result.seconds - 1.0, \
        "the first line waited for the command to finish"
    assert sorted(result.tail) == ["[stderr] oops", "first", "second"]


def test_exit_status_and_failed(winrm):
    ok = winrm.run("exit 0", shell="cmd")
    assert (ok.status, ok.exit_code, ok.ok) == (OK, 0, True)
    failed = winrm.run("echo partial; exit 3", shell="cmd")
    assert (failed.status, failed.exit_code, failed.message) == (FAILED, 3, "exit status 3")
    assert failed.tail == ["partial"]


def test_command_not_found(winrm):
    posix = winrm.run("no-such-tool-zz9 --version", shell="cmd")
    assert posix.status == FAILED and posix.exit_code == 127
    assert posix.message.startswith("command not found")
    # how cmd.exe and PowerShell say it (exit status 1 or 9009, not 127)
    windows = winrm.run("echo \"'diskspd' is not recognized as an internal or external command,\" >&2; exit 9009",
                        shell="cmd")
    assert windows.status == FAILED
    assert windows.message == "command not found: 'diskspd' is not recognized as an internal or external command,"


def test_powershell_script_is_encoded_and_arrives_intact(winrm, server):
    text = 'single \'quoted\' "double" $dollar `back` %PATH% ^caret & ünïcødé ✓ 日本 😀'
    script = f"printf '%s\\n' '{text.replace(chr(39), chr(39) + chr(92) + chr(39) + chr(39))}'\nprintf 'line two\\n'"
    lines: list[str] = []
    result = winrm.run(script, shell="powershell", on_output=lambda stream, line: lines.append(line))
    assert result.status == OK, result.message
    command = server.commands[-1]
    assert command.command_line.startswith("powershell.exe -NoProfile -NonInteractive -EncodedCommand ")
    assert command.command_line == powershell_command_line(script)
    assert command.script == script
    assert lines == [text, "line two"]


def test_powershell_clixml_errors_become_plain_lines(winrm):
    clixml = ('#< CLIXML\\r\\n<Objs Version=\\"1.1.0.1\\" xmlns=\\"http://schemas.microsoft.com/powershell/2004/04\\">'
              '<Obj S=\\"progress\\" RefId=\\"0\\"><TN RefId=\\"0\\"><T>System.Management.Automation.PSCustomObject</T>'
              '</TN></Obj><S S=\\"Error\\">Get-Disk : disk 9 &lt;missing&gt;_x000D__x000A_</S>'
              '<S S=\\"Error\\">second line_x000D__x000A_</S></Objs>\\r\\n')
    lines: list[tuple[str, str]] = []
    result = winrm.run(f'printf "{clixml}" >&2; exit 1', shell="cmd", on_output=lambda s, ln: lines.append((s, ln)))
    assert result.status == FAILED
    assert lines == [("stderr", "Get-Disk : disk 9 <missing>"), ("stderr", "second line")]


def test_timeout_stops_the_command_and_its_children(winrm, server):
    lines: list[str] = []
    start = time.monotonic()
    result = winrm.run("sleep 60 & echo $!; wait", shell="cmd", timeout=1.5,
                       on_output=lambda stream, line: lines.append(line))
    elapsed = time.monotonic() - start
    assert result.status == TIMEOUT and result.exit_code is None
    assert "1.5 s" in result.message
    assert elapsed < 4.0, f"the timeout took {elapsed:.1f} s"
    command = server.commands[-1]
    deadline = time.monotonic() + 3
    while (command.process.poll() is None or _alive(int(lines[0]))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert command.process.poll() is not None, "the shell process still runs on the server"
    assert not _alive(int(lines[0])), "the command's child (sleep) still runs on the server"


def test_cancel(winrm, server):
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    start = time.monotonic()
    result = winrm.run("echo go; sleep 60", shell="cmd", cancel=cancel)
    assert result.status == CANCELLED and result.tail == ["go"]
    assert time.monotonic() - start < 3.0
    command = server.commands[-1]
    deadline = time.monotonic() + 3
    while command.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert command.process.poll() is not None


def test_runs_in_parallel_on_separate_shells(winrm):
    results = {}

    def one(n: int) -> None:
        lines: list[str] = []
        results[n] = (winrm.run(f"sleep 1; echo run{n}", shell="cmd", on_output=lambda s, ln: lines.append(ln)), lines)

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert WinRMTransport.parallel_safe
    assert time.monotonic() - start < 2.5, "the runs were serialised"
    assert {n: (r.status, lines) for n, (r, lines) in results.items()} == {n: (OK, [f"run{n}"]) for n in range(4)}


def test_shell_is_reused_and_close_deletes_it(fresh_server):
    transport = _transport(fresh_server)
    transport.open()
    assert transport.run("true", shell="cmd").ok and transport.run("true", shell="cmd").ok
    assert len(fresh_server.shells) == 1
    transport.close()
    assert fresh_server.shells == {}


def test_connection_lost_mid_command(fresh_server):
    transport = _transport(fresh_server)
    transport.open()
    threading.Timer(0.8, fresh_server.stop).start()
    start = time.monotonic()
    result = transport.run("echo started; sleep 30", shell="cmd", timeout=20)
    assert result.status == LOST and result.exit_code is None
    assert "lost" in result.message and result.tail == ["started"]
    assert time.monotonic() - start < 5
    transport.close()


def test_other_shells_and_long_scripts_fail_with_a_reason(winrm):
    assert "not bash" in winrm.run("ls", shell="bash").message
    too_long = winrm.run("Write-Output 'x'\n" * 400, shell="powershell")
    assert too_long.status == FAILED and "too long" in too_long.message


# ---------------------------------------------------------------------- connecting

@pytest.mark.parametrize("auth", ["basic", "ntlm"])
def test_wrong_password_is_auth_failed_without_the_password(server, auth):
    wrong = "Wrong-Pa55word-xyz"
    transport = _transport(server, auth=auth, password=wrong)
    with pytest.raises(AuthFailed) as caught:
        transport.open()
    message = str(caught.value)
    assert f"{USER}@win1" in message and wrong not in message
    assert wrong not in repr(transport)


def test_closed_port_is_unreachable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    transport = WinRMTransport("win1", "127.0.0.1", port, scheme="http", auth="basic", user=USER, password=PASSWORD)
    with pytest.raises(Unreachable) as caught:
        transport.open()
    assert f"127.0.0.1:{port}" in str(caught.value) and "refused" in str(caught.value)


def test_basic_over_http(fresh_server):
    with _transport(fresh_server, auth="basic") as transport:
        assert transport.run("echo hello", shell="cmd").tail == ["hello"]
    assert fresh_server.auth_schemes_used == {"basic"}
    assert fresh_server.encrypted_messages == 0


def test_ntlm_over_http_encrypts_messages(fresh_server):
    lines: list[str] = []
    with _transport(fresh_server, auth="ntlm") as transport:
        result = transport.run("echo sealed; exit 4", shell="powershell", on_output=lambda s, ln: lines.append(ln))
    assert (result.status, result.exit_code, lines) == (FAILED, 4, ["sealed"])
    assert fresh_server.auth_schemes_used == {"ntlm"}
    # create, command, receive(s), signal, delete: all of them sealed
    assert fresh_server.encrypted_messages >= 5


def test_ntlm_without_encryption(fresh_server):
    with _transport(fresh_server, auth="ntlm", message_encryption="never") as transport:
        assert transport.run("echo plain", shell="cmd").tail == ["plain"]
    assert fresh_server.auth_schemes_used == {"ntlm"} and fresh_server.encrypted_messages == 0


# ---------------------------------------------------------------------- TLS

@pytest.fixture(scope="module")
def self_signed(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=30)
    return str(cert), str(key)


@pytest.fixture(scope="module")
def https_server(self_signed):
    with WSManTestServer({USER: PASSWORD}, certificate=self_signed) as srv:
        yield srv


def test_tls_certificate_is_verified_by_default(https_server):
    transport = _transport(https_server)
    assert transport.verify_tls and transport.port == https_server.port
    with pytest.raises(Unreachable) as caught:
        transport.open()
    message = str(caught.value)
    assert "not trusted" in message and "ca_file" in message and f"127.0.0.1:{https_server.port}" in message


def test_tls_with_ca_file(https_server, self_signed):
    with _transport(https_server, ca_file=self_signed[0]) as transport:
        assert transport.run("echo over tls", shell="cmd").tail == ["over tls"]
    with _transport(https_server, auth="ntlm", ca_file=self_signed[0]) as transport:
        assert transport.run("echo ntlm over tls", shell="cmd").tail == ["ntlm over tls"]


def test_tls_verification_off_only_when_asked(https_server):
    with _transport(https_server, verify_tls=False) as transport:
        assert transport.run("echo unchecked", shell="cmd").ok


def test_default_ports():
    assert WinRMTransport("w", "10.0.0.1").port == 5986
    assert WinRMTransport("w", "10.0.0.1", scheme="http").port == 5985


# ---------------------------------------------------------------------- a real Windows host

_REAL = {name: os.environ.get(f"TESTBED_WINRM_{name}") for name in ("HOST", "USER", "PASSWORD")}


@pytest.mark.skipif(not all(_REAL.values()), reason="no real WinRM endpoint: set TESTBED_WINRM_HOST, "
                                                     "TESTBED_WINRM_USER and TESTBED_WINRM_PASSWORD "
                                                     "(optional: _SCHEME, _PORT, _AUTH, _CA_FILE)")
def test_real_windows_host():
    env = os.environ.get
    transport = WinRMTransport("real", _REAL["HOST"], int(env("TESTBED_WINRM_PORT") or 0) or None,
                               scheme=env("TESTBED_WINRM_SCHEME", "https"), auth=env("TESTBED_WINRM_AUTH", "ntlm"),
                               user=_REAL["USER"], password=_REAL["PASSWORD"], ca_file=env("TESTBED_WINRM_CA_FILE"))
    with transport:
        lines: list[str] = []
        result = transport.run("'first'; Start-Sleep -Milliseconds 300; \"it's `$x ü\"; exit 3", shell="powershell",
                               on_output=lambda s, ln: lines.append(ln))
        assert (result.status, result.exit_code) == (FAILED, 3)
        assert lines == ["first", "it's $x ü"]
        missing = transport.run("no-such-tool-zz9", shell="powershell")
        assert missing.status == FAILED and missing.message.startswith("command not found")
        assert transport.run("echo %OS%", shell="cmd").tail == ["Windows_NT"]
        timed = transport.run("Start-Sleep -Seconds 60", shell="powershell", timeout=3)
        assert timed.status == TIMEOUT and timed.seconds < 10
