"""Result files kept with a run: imported by a person (`testbed-studio results import`) or fetched
from the host when a workload step ends (real fio over SSH on a sandbox sshd host; over WinRM
through the WS-Management test server, which runs sh, so the PowerShell fetch command itself
is checked with the PowerShell grammar)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.metrics.run_results import attached
from app.run import journal as J

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "tests" / "data" / "captures"
DS2 = CAPTURES / "dvdstore" / "ds2webdriver_doc_typical_run.txt"
FIO = CAPTURES / "fio" / "fio-3.26_virtualclient_randwrite.json"


def _cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=ROOT, env=env)


def _run_with_steps(root: Path, steps: dict[str, list[str]]) -> J.RunInfo:
    info = J.new_run(str(root / "bed.yaml"), "", root=root)
    with J.Journal(info.dir) as journal:
        for step, hosts in steps.items():
            for host in hosts:
                journal.record("start", step=step, host=host)
                journal.record("end", step=step, host=host, status="ok")
    return info


def test_result_files_import_into_a_run_step_and_host(tmp_path):
    info = _run_with_steps(tmp_path, {"6.3": ["SQL1"], "6.4": ["client", "SQL2"]})
    r = _cli("results", "import", info.id, str(DS2), "--step", "6.3", "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert f"attached {DS2} to run {info.id} (step 6.3 host SQL1): DVD Store 2" in r.stdout
    r = _cli("results", "import", info.id, str(FIO), "--step", "6.4", "--host", "SQL2", "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    ds2, fio = attached(info.dir)
    assert (ds2.step, ds2.host, ds2.how, ds2.tool) == ("6.3", "SQL1", "imported", "DVD Store 2")
    # read by hand from the capture's Final line: "Final: et=   61.0 n_overall=150 opm=147"
    assert ds2.figure("orders_per_minute") == 147 and ds2.figures["duration_s"] == 61
    assert (info.dir / ds2.stored).read_bytes() == DS2.read_bytes()
    assert ds2.sha256 == hashlib.sha256(DS2.read_bytes()).hexdigest()
    assert fio.host == "SQL2" and fio.tool == "fio" and fio.figure("iops") > 0


def test_an_import_that_cannot_be_used_attaches_nothing_and_says_why(tmp_path):
    info = _run_with_steps(tmp_path, {"6.4": ["client", "SQL2"]})
    junk = tmp_path / "notes.txt"
    junk.write_text("the run went fine, numbers to follow\n")
    r = _cli("results", "import", info.id, str(DS2), str(junk), "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "nothing could be read" in r.stderr and "nothing was attached" in r.stderr
    assert attached(info.dir) == [] and not (info.dir / "results").exists()
    r = _cli("results", "import", info.id, str(DS2), "--step", "6.4", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "ran on client, SQL2" in r.stderr and "--host" in r.stderr
    r = _cli("results", "import", info.id, str(DS2), "--step", "9.9", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "no step 9.9" in r.stderr
    r = _cli("results", "import", "no-such-run", str(DS2), "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "no run 'no-such-run'" in r.stderr and "Traceback" not in r.stderr
    assert attached(info.dir) == []


def test_a_torn_last_record_is_left_out(tmp_path):
    from app.metrics.run_results import attach_file
    attach_file(tmp_path, DS2, host="SQL1")
    with open(tmp_path / "results.jsonl", "a") as fh:
        fh.write('{"source": "half a rec')
    assert [r.host for r in attached(tmp_path)] == ["SQL1"]
    attach_file(tmp_path, DS2, host="SQL2")       # a second file of one name gets a number of its own
    assert [r.host for r in attached(tmp_path)] == ["SQL1", "SQL2"]
    assert len({r.stored for r in attached(tmp_path)}) == 2 and len(list((tmp_path / "results").iterdir())) == 2


def test_the_powershell_fetch_command_parses_and_holds_the_path_as_one_literal():
    ts = pytest.importorskip("tree_sitter")
    tsp = pytest.importorskip("tree_sitter_powershell")
    from app.run.result_fetch import fetch_script
    parser = ts.Parser(ts.Language(tsp.language()))
    for path in ("report.json", "C:\\DS2\\ds2 run's output $(whoami).txt", "a`b\";rm x"):
        script = fetch_script("powershell", path)
        tree = parser.parse(script.encode())
        assert not tree.root_node.has_error, script
        shellcheck = fetch_script("bash", path)
        out = subprocess.run(["bash", "-n"], input=shellcheck, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    if shutil.which("shellcheck"):
        out = subprocess.run(["shellcheck", "-s", "bash", "-"], input=fetch_script("bash", "x y.json"),
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stdout


# ------------------------------------------------------------------ fetched when the step ends

@pytest.mark.slow
def test_a_workload_step_over_ssh_fetches_fios_report_and_keeps_it_with_the_run(tmp_path):
    from bench.sandbox_hosts import SandboxLab
    from tests.run_beds import write_fio_bed
    if SandboxLab.unavailable_reason() is not None:
        pytest.skip(f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")
    if shutil.which("fio") is None:
        pytest.skip("needs fio (installed by .ci/setup.sh)")
    with SandboxLab(tmp_path / "lab") as lab:
        lab.start_many(1)
        h = lab.hosts["h1"]
        bed = write_fio_bed(tmp_path / "fio.yaml", "h1", tmp_path / "h1.dat", minutes=0.05,
                            access={"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
                                    "key_file": str(lab.client_key_path)})
        known = tmp_path / "known_hosts"
        shutil.copyfile(lab.known_hosts_path, known)
        env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)}
        runs = tmp_path / "runs"
        r = _cli("run", str(bed), "--steps", "3", "--skip-manual", "--runs-dir", str(runs), env=env, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    run_dir = next(runs.iterdir())
    (fetched,) = attached(run_dir)
    assert fetched.how == "fetched" and fetched.host == "h1" and fetched.tool == "fio"
    assert fetched.source.startswith("h1:") and fetched.source.endswith(".json")
    assert "[results] fetched" in r.stdout
    # the copy is fio's own report: its last status report gives the run's IOPS, as the live series did
    from app.metrics.results import load_samples
    live = [s.value for s in load_samples(run_dir) if s.source == "h1" and s.metric == "iops"]
    assert fetched.figure("iops") > 0 and live
    assert fetched.figure("iops") == pytest.approx(sum(live) / len(live), rel=0.15)
    kept = (run_dir / fetched.stored).read_bytes()
    assert hashlib.sha256(kept).hexdigest() == fetched.sha256 and b'"fio version"' in kept


def test_a_step_over_winrm_fetches_its_result_file(tmp_path):
    """The WS-Man test server runs what it is sent through /bin/sh: the command that prints the
    file is written in sh here (`script_for`); the transport, the base64 round trip of every byte
    and the attach are the real ones.  The PowerShell command is checked by the grammar above."""
    from app.remote.connect import TransportFactory
    from app.remote.credentials import CredentialStore
    from app.run.plan import Task
    from app.run.result_fetch import fetch_results, fetch_script
    from tests.wsman_server import WSManTestServer
    from topology.fileformat import loads
    report = tmp_path / "ds2 run.txt"
    report.write_bytes(DS2.read_bytes())
    user, password = "labadmin", "Pa55 w0rd"
    with WSManTestServer({user: password}) as srv:
        bed = loads(f"""format_version: 1
bed: {{name: winrm fetch}}
servers: [{{id: sql1, platform: windows}}]
access: [{{host: sql1, transport: winrm, address: 127.0.0.1, port: {srv.port}, winrm_scheme: http,
          winrm_auth: ntlm, user: {user}}}]
""")
        creds = CredentialStore(service="testbed-studio-tests")
        creds.set("sql1", password, remember=False)
        transport = TransportFactory(bed, credentials=creds)("sql1")
        transport.open()
        said: list[str] = []
        (tmp_path / "run").mkdir()
        task = Task("6.3", "sql1", "powershell", "run ds2", ansible={"results": [str(report), "missing.txt"]})
        try:
            stored = fetch_results(transport, task, tmp_path / "run", said.append,
                                   script_for=lambda shell, path: fetch_script("sh", path))
        finally:
            transport.close()
    assert len(stored) == 1 and (tmp_path / "run" / stored[0]).read_bytes() == DS2.read_bytes()
    (rec,) = attached(tmp_path / "run")
    assert (rec.how, rec.host, rec.step, rec.tool) == ("fetched", "sql1", "6.3", "DVD Store 2")
    assert any("missing.txt: the step left no such file on sql1" in s for s in said)
