"""`testbed-studio run` over real SSH: sshd hosts on loopback addresses and in network
namespaces that this module starts itself (bench/sandbox_hosts.py), real commands, and the
faults a lab meets: a host that dies mid-step, a cut link, an unknown host key, a refused
password, a host that is not there.  Each time the journal stays readable, the failed step
is named with its cause, and resume continues from it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.remote.connect import TransportFactory
from app.remote.credentials import CredentialStore
from app.run import journal as J
from app.run.cli_run import EXIT_FAILED, EXIT_OK, EXIT_PREFLIGHT
from app.run.engine import RunEngine
from app.run.plan import run_steps, select_steps
from bench.sandbox_hosts import SandboxLab, host_python
from tests.pdf_text import pdf_text
from tests.run_beds import TEMPLATES, write_bed, write_fio_bed
from tests.safety_beds import HOLD_S, long_step_bed, release
from tests.waiting import wait_for
from topology.fileformat import load
from topology.methodology import generate

pytestmark = pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                                reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(3)
        yield lab


def _ssh_access(lab, name: str, **extra) -> dict:
    h = lab.hosts[name]
    return {"id": name, "transport": "ssh", "address": h.address, "port": h.port, "user": "root",
            "key_file": str(lab.client_key_path)} | extra


def _cli(*args: str, known_hosts: Path, timeout: float = 90, **popen) -> subprocess.CompletedProcess:
    env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known_hosts)}
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def _steps(bed_path: Path, templates: str = TEMPLATES):
    bed = load(bed_path)
    return [s for s in run_steps(generate(bed, extra_dirs=[templates]), {a.host: a.transport for a in bed.access})
            if s.section == "hosts"]


def _number(steps, template_id: str, host: str) -> str:
    return next(s.number for s in steps if s.template.endswith("#" + template_id) and s.target == host)


def _known_hosts_copy(lab, tmp_path) -> Path:
    path = tmp_path / "known_hosts"
    shutil.copyfile(lab.known_hosts_path, path)
    return path


def _wait_for_start(runs: Path, step: str, host: str, seconds: float = 30) -> Path:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for d in (runs.iterdir() if runs.exists() else ()):
            if any(r["kind"] == "start" and r["step"] == step and r["host"] == host
                   for r in J.read_records(d)[0]):
                return d
        time.sleep(0.05)
    pytest.fail(f"step {step} never started on {host}")


def test_a_run_over_ssh_executes_every_step_on_every_host(lab, tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", [_ssh_access(lab, n) for n in ("h1", "h2", "h3")],
                    mark_dir=tmp_path / "marks")
    steps = _steps(bed)
    sec = steps[0].number.split(".")[0]
    r = _cli("run", str(bed), "--steps", sec, "--runs-dir", str(tmp_path / "runs"), "--templates", TEMPLATES,
             known_hosts=_known_hosts_copy(lab, tmp_path))
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert "pre-flight h2: ok" in r.stdout
    assert f"[{_number(steps, 'hello', 'h3')} h3] host=h3" in r.stdout
    assert sorted(p.name for p in (tmp_path / "marks").iterdir()) == ["h1.visits", "h2.visits", "h3.visits"]


def test_an_unknown_host_key_is_not_accepted_without_consent(lab, tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", [_ssh_access(lab, "h1")], mark_dir=tmp_path / "marks")
    known = tmp_path / "known_hosts"          # empty: h1's key is unknown
    known.write_text("")
    sec = _steps(bed)[0].number.split(".")[0]
    runs = tmp_path / "runs"
    r = _cli("run", str(bed), "--steps", sec, "--runs-dir", str(runs), "--templates", TEMPLATES, known_hosts=known)
    fingerprint = lab.hosts["h1"].host_key_fingerprint
    assert r.returncode == EXIT_PREFLIGHT
    assert "refusing the unknown SSH host key of h1" in r.stderr and fingerprint in r.stderr
    assert f"--trust {fingerprint}" in r.stderr
    assert known.read_text() == "" and not (tmp_path / "marks").exists()

    r = _cli("run", str(bed), "--steps", sec, "--runs-dir", str(runs), "--templates", TEMPLATES,
             "--trust", fingerprint, known_hosts=known)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert lab.hosts["h1"].host_key_public.split()[1] in known.read_text()


@pytest.mark.slow
def test_a_host_that_dies_mid_step_is_reported_and_resume_continues_from_that_step(lab, tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", [_ssh_access(lab, n) for n in ("h1", "h2")],
                    mark_dir=tmp_path / "marks", work_s=4)
    steps = _steps(bed)
    sec = steps[0].number.split(".")[0]
    runs, known = tmp_path / "runs", _known_hosts_copy(lab, tmp_path)
    env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)}
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(bed), "--steps", sec, "--runs-dir",
                             str(runs), "--templates", TEMPLATES], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    work1 = _number(steps, "work", "h1")
    run_dir = _wait_for_start(runs, work1, "h1")
    time.sleep(0.5)
    lab.kill("h1")                                     # sshd and the step's shell die at once
    try:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == EXIT_FAILED, out + err
        assert f"{work1} on h1: lost" in err or f"{work1} on h1: unreachable" in err
        state = J.replay(J.read_records(run_dir)[0])
        assert state[(work1, "h1")].status in (J.LOST, J.UNREACHABLE)
        assert state[(_number(steps, "work", "h2"), "h2")].status == J.OK     # the other host went on
    finally:
        lab.restart("h1")
    r = _cli("run", str(bed), "--resume", run_dir.name, "--runs-dir", str(runs), "--templates", TEMPLATES,
             known_hosts=known)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert f"continuing at step {work1}" in r.stdout
    assert (tmp_path / "marks" / "h1.visits").read_text() == "visit\n"      # 'mark' ran once only


@pytest.mark.slow
def test_a_cut_link_ends_the_step_at_its_timeout_and_resume_stops_the_copy_the_stop_never_reached(tmp_path):
    """The step works on (held by design) past its timeout while the link is cut: the driver's stop
    cannot reach the host and the step's job goes on there.  Resume, once the link is back, asks the
    host, stops that copy (the journal says the step timed out: nobody is asked, nothing refused)
    and runs the step again; the journal keeps the timeout and one result per attempt."""
    reason = SandboxLab.netns_unavailable_reason()
    if reason:
        pytest.skip(f"network namespaces unavailable: {reason}")
    with SandboxLab(tmp_path / "nslab") as lab:
        lab.add_netns_host("n1")
        bed, templates = long_step_bed(tmp_path, _ssh_access(lab, "n1"), work_s=HOLD_S)
        step = next(s for s in _steps(bed, templates) if s.target == "n1")
        runs, known = tmp_path / "runs", _known_hosts_copy(lab, tmp_path)
        env = os.environ | {"TESTBED_STUDIO_KNOWN_HOSTS": str(known)}
        run = [sys.executable, "-m", "app.cli", "run", str(bed), "--steps", step.number, "--runs-dir", str(runs),
               "--templates", templates]
        proc = subprocess.Popen([*run, "--timeout", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, env=env)
        run_dir = _wait_for_start(runs, step.number, "n1")
        wait_for(lambda: any(r["kind"] == "process" for r in J.read_records(run_dir)[0]),
                 what="the step's job on n1", seconds=30)
        lab.link_down("n1")
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            lab.link_up("n1")
        assert proc.returncode == EXIT_FAILED, out + err
        ended = J.replay(J.read_records(run_dir)[0])[(step.number, "n1")]
        assert ended.status == J.TIMEOUT and "the stop did not reach" in ended.message, ended
        assert (tmp_path / "marks" / "n1.log").read_text() == "begin\n"     # held: still working on n1

        resumed = subprocess.Popen([*run[:5], "--resume", run_dir.name, *run[5:], "--timeout", "60"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                   text=True, env=env)
        try:
            wait_for(lambda: any(r["kind"] == "note" and r["message"].startswith("stopped the copy")
                                 for r in J.read_records(run_dir)[0]), what="the left copy stopped", seconds=60)
            release(tmp_path, "n1")            # the step's next copy may run to its end
            out, err = resumed.communicate(timeout=60)
        finally:
            if resumed.poll() is None:
                resumed.kill()
        assert resumed.returncode == EXIT_OK, out + err
        assert f"stopping step {step.number} on n1 (process group " in out and "it timed out" in out, out
        # the first copy was stopped before its end, the second ran to its end: never two at once
        assert (tmp_path / "marks" / "n1.log").read_text() == "begin\nbegin\nend\n"
        records = J.read_records(run_dir)[0]
        assert [r["status"] for r in records if r["kind"] == "end"] == [J.TIMEOUT, J.OK]
        state = J.replay(records)[(step.number, "n1")]
        assert state.status == J.OK and state.attempts == 2


def test_a_refused_password_and_a_missing_host_each_end_their_step_with_a_clear_status(lab, tmp_path):
    dead_port = lab.hosts["h3"].port + 17
    bed_path = write_bed(tmp_path / "bed.yaml", [
        {"id": "h1", "transport": "ssh", "address": lab.hosts["h1"].address, "port": lab.hosts["h1"].port,
         "user": "nobody-here", "credential": "lab-admins"},
        {"id": "h2", "transport": "ssh", "address": "127.0.0.1", "port": dead_port, "user": "root"},
        _ssh_access(lab, "h3")], mark_dir=tmp_path / "marks")
    bed = load(bed_path)
    creds = CredentialStore(service="testbed-studio-tests")
    creds.set("lab-admins", "not-the-password", remember=False)
    factory = TransportFactory(bed, credentials=creds, known_hosts=_known_hosts_copy(lab, tmp_path))
    steps = select_steps(run_steps(generate(bed, extra_dirs=[TEMPLATES]), factory.transports()),
                         _steps(bed_path)[0].number.split(".")[0])
    info = J.new_run(str(bed_path), "", root=tmp_path / "runs")
    engine = RunEngine(info, steps, factory, timeout=30)
    try:
        checks = {c.host: c for c in engine.preflight()}
        assert not checks["h1"].ok and "nobody-here@" in checks["h1"].message
        assert "not-the-password" not in checks["h1"].message
        assert not checks["h2"].ok and str(dead_port) in checks["h2"].message
        assert checks["h3"].ok
        engine.run_steps(steps)
        hello = {h: _number(steps, "hello", h) for h in ("h1", "h2", "h3")}
        assert engine.task_state(steps[[s.number for s in steps].index(hello["h1"])].tasks[0]).status == J.AUTH_FAILED
        assert engine.task_state(steps[[s.number for s in steps].index(hello["h2"])].tasks[0]).status == J.UNREACHABLE
        assert all(engine.succeeded(s) for s in steps if s.target == "h3")
    finally:
        engine.close()
    journal_text = (info.dir / "journal.jsonl").read_text()
    assert "not-the-password" not in journal_text


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_exported_ansible_playbook_runs_against_the_same_hosts(lab, tmp_path):
    ansible = Path(sys.executable).with_name("ansible-playbook")
    if not ansible.exists():
        pytest.skip("ansible-playbook is not installed in this environment (pip install ansible-core)")
    bed = write_bed(tmp_path / "bed.yaml", [_ssh_access(lab, n) for n in ("h1", "h2")], mark_dir=tmp_path / "marks")
    sec = _steps(bed)[0].number.split(".")[0]
    r = _cli("export-ansible", str(bed), "-o", str(tmp_path / "ansible"), "--steps", sec, "--templates", TEMPLATES,
             known_hosts=tmp_path / "unused")
    assert r.returncode == EXIT_OK, r.stderr
    # one ssh connection per host, kept between tasks, and no file copies per task: a new connection
    # for each of the ~30 tasks took past two minutes on a busy machine
    env = os.environ | {"ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PIPELINING": "True",
                        "ANSIBLE_SSH_ARGS": f"-o UserKnownHostsFile={lab.known_hosts_path} -o IdentitiesOnly=yes "
                                            "-o ControlMaster=auto -o ControlPersist=60s",
                        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(tmp_path / "cp"),
                        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ans-local"), "ANSIBLE_REMOTE_TEMP": "/tmp/.ansible-tbs"}
    r = subprocess.run([str(ansible), "-i", str(tmp_path / "ansible" / "inventory.yml"),
                        str(tmp_path / "ansible" / "playbook.yml"),
                        "-e", f"ansible_python_interpreter={host_python()}",
                        "-e", f"testbed_markers_dir={tmp_path / 'done'}"],
                       capture_output=True, text=True, timeout=400, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "failed=0" in r.stdout and "unreachable=0" in r.stdout
    assert (tmp_path / "marks" / "h1.visits").read_text() == "visit\n"
    assert (tmp_path / "marks" / "h2.visits").read_text() == "visit\n"


@pytest.mark.slow
def test_fio_over_ssh_is_recorded_with_the_run_and_printed_in_the_results_appendix(lab, tmp_path):
    """Issue 6 end to end: `run` streams real fio on an sshd host, `results` prints the run's
    table, `appendix --run` prints it with the charts (checked in the PDF with poppler)."""
    if shutil.which("fio") is None or shutil.which("pdftotext") is None:
        pytest.skip("needs fio and poppler-utils (installed by .ci/setup.sh)")
    h = lab.hosts["h1"]
    bed = write_fio_bed(tmp_path / "fio.yaml", "h1", tmp_path / "h1.dat", minutes=0.07,
                        access={"transport": "ssh", "address": h.address, "port": h.port, "user": "root",
                                "key_file": str(lab.client_key_path)})
    runs = tmp_path / "runs"
    known = _known_hosts_copy(lab, tmp_path)
    r = _cli("run", str(bed), "--steps", "3", "--skip-manual", "--runs-dir", str(runs), known_hosts=known)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    run_id = next(runs.iterdir()).name
    from app.metrics.results import load_samples
    iops = [s for s in load_samples(runs / run_id) if s.source == "h1" and s.metric == "iops"]
    assert len(iops) >= 3 and all(s.value > 0 for s in iops)
    # iostat ran on the host beside the load, over a connection of its own, one series per disk
    disks = [s for s in load_samples(runs / run_id) if s.source.startswith("h1/") and s.metric == "iops"]
    assert len({s.source for s in disks}) >= 1 and len(disks) >= 3
    assert "iostat on h1 stopped" not in r.stdout + r.stderr

    r = _cli("results", run_id, "--runs-dir", str(runs), known_hosts=known)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    assert "PASS  oltp: read latency avg < 20 ms" in r.stdout and "h1" in r.stdout

    pdf = tmp_path / "appendix.pdf"
    r = _cli("appendix", str(bed), "-o", str(pdf), "--run", run_id, "--runs-dir", str(runs), known_hosts=known)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    text = pdf_text(pdf)
    assert f"Measured in run {run_id}" in text and "Pass criteria" in text and "PASS" in text
    assert "Figure G.1: IOPS per host" in text and "95th percentile" in text
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True, timeout=60).stdout
    assert len(images.strip().splitlines()) - 2 >= 3, images      # the diagram and at least two charts

    md = tmp_path / "appendix.md"
    r = _cli("appendix", str(bed), "-o", str(md), "--run", run_id, "--runs-dir", str(runs), known_hosts=known)
    assert r.returncode == EXIT_OK and "chart(s)" in r.stdout, r.stdout + r.stderr
    assert "![Figure G.1: IOPS per host" in md.read_text()
    assert (tmp_path / "appendix-chart-g1.png").stat().st_size > 5000

    r = _cli("appendix", str(bed), "-o", str(tmp_path / "a.pdf"), "--run", "no-such-run", "--runs-dir", str(runs),
             known_hosts=known)
    assert r.returncode != EXIT_OK and "--run no-such-run:" in r.stderr and "Traceback" not in r.stderr


def test_output_that_comes_after_the_exit_status_is_read_and_a_process_left_holding_it_does_not_hang(
        lab, monkeypatch):
    """sshd sends a command's exit status as soon as the command exits, ahead of output still on its way
    (what sshd had not read from the pipe yet); the transport stopped reading at the exit status.  A fio
    result file fetched as base64 right after a load (96 KB) came short in 6 of 15 fetches here (852 lines
    of 1,686) and the run said "what lnx1 sent is not the file (not base64)".  Output written after the
    command itself exited, by what it left running, makes the order certain."""
    from app.remote import ssh
    transport = ssh.SSHTransport(**lab.connection("h1"))
    size = 100_000
    try:
        lines: list[str] = []
        result = transport.run(f"{{ sleep 0.3; head -c {size} /dev/zero | base64; }} & exit 0", shell="bash",
                               on_output=lambda stream, line: lines.append(line) if stream == "stdout" else None)
        assert result.status == "ok", result.message
        assert sum(len(line.strip()) for line in lines) == (size + 2) // 3 * 4, len(lines)
        # a process that keeps the output open for good (a daemon started without redirection): the step
        # ends once nothing has come for a while after its exit status, as before, not when the daemon does
        monkeypatch.setattr(ssh, "AFTER_EXIT_S", 0.5)
        began = time.monotonic()
        held = transport.run("sleep 30 & echo started", shell="bash")
        assert held.status == "ok" and time.monotonic() - began < 5, held
    finally:
        transport.close()
