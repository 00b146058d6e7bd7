"""Output lines of any length, passwords from the command line, and the access warnings at run
start: what a user at a terminal meets."""
from __future__ import annotations

import fcntl
import io
import os
import select
import socket
import subprocess
import sys
import termios
import time

import pytest
import yaml

from app.remote.local import LocalTransport
from app.run import journal as J
from app.run.engine import RunEngine
from app.run.plan import RunStep, Task
from tests.run_beds import TEMPLATES


def test_a_long_output_line_is_capped_in_the_journal_and_kept_whole_in_the_output_file(tmp_path):
    size = 3 * 1024 * 1024
    task = Task("1.1", "h1", "bash", f"head -c {size} /dev/zero | tr '\\0' x; echo; echo after")
    step = RunStep("1.1", "one long line", "hosts", "Hosts", "h1", [task])
    info = J.new_run(str(tmp_path / "bed.yaml"), "", root=tmp_path / "runs")
    engine = RunEngine(info, [step], lambda host: LocalTransport(host, workdir=tmp_path / "work"))
    try:
        assert engine.run_steps([step])
    finally:
        engine.close()
    end = next(r for r in J.read_records(info.dir)[0] if r["kind"] == "end")
    long_line = next(t for t in end["tail"] if t.startswith("xxx"))
    assert len(long_line) < 70 * 1024 and f"{size - 64 * 1024} bytes cut" in long_line
    assert end["tail"][-1] == "after"
    assert (info.dir / "journal.jsonl").stat().st_size < 200 * 1024
    text = (info.dir / "output" / "1.1@h1.log").read_bytes()
    assert b"x" * size + b"\nafter\n" in text


def test_credentials_set_and_delete_keep_the_password_in_the_keyring_only(memory_keyring, monkeypatch, capsys):
    from app.cli import main
    monkeypatch.setattr(sys, "stdin", io.StringIO("s3cret pass\n"))
    assert main(["credentials", "set", "lab-admins", "--password-stdin"]) == 0
    assert memory_keyring.items[("testbed-studio", "lab-admins")] == "s3cret pass"
    assert "s3cret" not in capsys.readouterr().out
    assert main(["credentials", "delete", "lab-admins"]) == 0
    assert ("testbed-studio", "lab-admins") not in memory_keyring.items
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))        # not a terminal, no --password-stdin
    assert main(["credentials", "set", "lab-admins"]) == 2
    assert "--password-stdin" in capsys.readouterr().err


def test_the_missing_password_message_names_commands_that_exist():
    from app.remote.base import RemoteError
    from app.remote.connect import TransportFactory
    from app.remote.credentials import CredentialStore
    from topology.model import Bed, BedInfo, HostAccess
    bed = Bed(bed=BedInfo(name="b"),
              access=[HostAccess(host="hv1", transport="winrm", user="labadmin", credential="lab-admins")])
    with pytest.raises(RemoteError) as err:
        TransportFactory(bed, credentials=CredentialStore(service="testbed-studio-no-such"))("hv1")
    assert "testbed-studio credentials set lab-admins" in str(err.value)
    assert "run from a terminal (it asks)" in str(err.value)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_on_a_terminal_run_warns_of_plain_basic_winrm_and_asks_for_the_missing_password(tmp_path):
    doc = {"format_version": 1, "bed": {"name": "winrm basic"},
           "servers": [{"id": "hv1", "platform": "windows", "os": "Windows Server 2008 R2",
                        "settings": {"mark_dir": str(tmp_path / "marks")}}],
           "access": [{"host": "hv1", "transport": "winrm", "address": "127.0.0.1", "port": _dead_port(),
                       "winrm_scheme": "http", "winrm_auth": "basic", "user": "labadmin"}]}
    bed = tmp_path / "bed.yaml"
    bed.write_text(yaml.safe_dump(doc))
    master, slave = os.openpty()

    def make_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(bed), "--runs-dir", str(tmp_path / "runs"),
                             "--templates", TEMPLATES, "--skip-manual"], stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=make_terminal, env=os.environ | {"PYTHON_KEYRING_BACKEND":
                                                                        "keyring.backends.fail.Keyring"})
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 90
    answered = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"password for labadmin on hv1" in seen:
            os.write(master, b"typed-secret\n")
            answered = True
        if proc.poll() is not None and not ready:
            break
    proc.wait(timeout=30)
    os.close(master)
    text = seen.decode(errors="replace")
    assert "warning: ACC-001 hv1: WinRM Basic over http:// sends the password" in text
    assert answered, text
    assert "pre-flight hv1: PROBLEM" in text and "Traceback" not in text
    for path in (tmp_path / "runs").rglob("*"):
        if path.is_file():
            assert b"typed-secret" not in path.read_bytes(), path
