"""The run engine driving Windows hosts over WinRM.  No Windows host can run here: the hosts
are the protocol-level WS-Management test server (tests/wsman_server.py), NTLM with message
encryption over HTTP, which runs the decoded PowerShell text through /bin/sh."""
from __future__ import annotations

import yaml

from app.remote.connect import TransportFactory
from app.remote.credentials import CredentialStore
from app.run import journal as J
from app.run.engine import RunEngine
from app.run.plan import run_steps
from tests.run_beds import TEMPLATES
from tests.wsman_server import WSManTestServer
from topology.fileformat import loads
from topology.methodology import generate

USER, PASSWORD = "labadmin", "Pa55 w0rd'\"$"


def _bed(port: int, mark_dir, user: str = USER):
    doc = {"format_version": 1, "bed": {"name": "winrm run"},
           "servers": [{"id": f"hv{i}", "platform": "windows", "os": "Windows Server 2008 R2",
                        "settings": {"mark_dir": str(mark_dir)}} for i in (1, 2)],
           "access": [{"host": f"hv{i}", "transport": "winrm", "address": "127.0.0.1", "port": port,
                       "winrm_scheme": "http", "winrm_auth": "ntlm", "user": user, "credential": "lab-admins"}
                      for i in (1, 2)]}
    return loads(yaml.safe_dump(doc))


def _engine(bed, tmp_path, password: str):
    creds = CredentialStore(service="testbed-studio-tests")
    creds.set("lab-admins", password, remember=False)
    factory = TransportFactory(bed, credentials=creds)
    steps = [s for s in run_steps(generate(bed, extra_dirs=[TEMPLATES]), factory.transports())
             if s.section == "hosts"]
    info = J.new_run("winrm.yaml", "", root=tmp_path / "runs")
    return RunEngine(info, steps, factory, timeout=30), info


def test_powershell_steps_run_on_every_windows_host_over_encrypted_ntlm(tmp_path):
    (tmp_path / "marks").mkdir()
    with WSManTestServer({USER: PASSWORD}) as srv:
        engine, info = _engine(_bed(srv.port, tmp_path / "marks"), tmp_path, PASSWORD)
        try:
            assert all(c.ok for c in engine.preflight())
            assert engine.run_steps(engine.steps)
        finally:
            engine.close()
    assert sorted(p.name for p in (tmp_path / "marks").iterdir()) == ["hv1.visits", "hv2.visits"]
    log = next((info.dir / "output").glob("*@hv2.log")).read_text()
    assert "host=hv2" in log
    assert PASSWORD not in (info.dir / "journal.jsonl").read_text()


def test_a_wrong_windows_password_ends_each_step_as_auth_failed_and_resume_works_once_fixed(tmp_path):
    (tmp_path / "marks").mkdir()
    with WSManTestServer({USER: PASSWORD}) as srv:
        bed = _bed(srv.port, tmp_path / "marks")
        engine, info = _engine(bed, tmp_path, "wrong")
        try:
            assert not engine.run_steps(engine.steps)
            first = engine.first_unfinished()
            state = engine.task_state(first.tasks[0])
            assert state.status == J.AUTH_FAILED and f"{USER}@" in state.message and "wrong" not in state.message
        finally:
            engine.close()
        creds = CredentialStore(service="testbed-studio-tests")
        creds.set("lab-admins", PASSWORD, remember=False)
        resumed = RunEngine(J.open_run(str(info.dir)), engine.steps, TransportFactory(bed, credentials=creds))
        try:
            assert resumed.first_unfinished().number == first.number
            assert resumed.run_steps(resumed.steps[resumed.steps.index(resumed.first_unfinished()):])
            assert resumed.first_unfinished() is None
        finally:
            resumed.close()
