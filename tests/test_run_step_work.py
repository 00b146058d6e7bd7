"""The work one step costs, counted rather than timed (issue 33: one step on 50 hosts against one
host): the journal's fsyncs when many hosts journal at once, the programs a job's start starts
on its host, the driver's turns while it waits for a command's exit status, and the socket's
small-packet delay.  On 50 hosts sharing a machine's cores with the driver, each of these is paid
50 times per step."""
from __future__ import annotations

import os
import select
import socket
import stat
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from app.ansible import chains
from app.remote import jobs
from app.remote import ssh as ssh_module
from app.run.journal import Journal
from bench.sandbox_hosts import SandboxLab

HOSTS = 40


def test_hosts_journalling_at_once_share_fsyncs_and_each_record_is_on_disk_when_record_returns(tmp_path, monkeypatch):
    journal = Journal(tmp_path)
    real_fsync = os.fsync
    synced_sizes: list[int] = []

    def slow_fsync(fd: int) -> None:        # a disk's 10 ms
        size = os.fstat(fd).st_size
        time.sleep(0.01)
        real_fsync(fd)
        synced_sizes.append(size)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    gate = threading.Barrier(HOSTS)
    not_durable: list[str] = []

    def host(i: int) -> None:
        gate.wait()
        journal.record("start", step="1.1", host=f"h{i}")
        text = journal.path.read_bytes()
        end = text.index(f'"host":"h{i}"'.encode())
        end = text.index(b"\n", end) + 1
        if max(synced_sizes, default=0) < end:
            not_durable.append(f"h{i}")

    threads = [threading.Thread(target=host, args=(i,)) for i in range(HOSTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    journal.close()
    assert not not_durable, f"record() returned before its line was fsync'd: {not_durable}"
    assert len(journal.path.read_text().splitlines()) == HOSTS
    # one fsync a host would queue the 40th host for 40 x 10 ms
    assert len(synced_sizes) <= HOSTS // 4, f"{len(synced_sizes)} fsyncs for {HOSTS} records written at once"


def _counting_path(tmp_path: Path) -> tuple[Path, Path]:
    """A PATH whose programs log their name, then run the real one."""
    shims, log = tmp_path / "shims", tmp_path / "programs.log"
    shims.mkdir()
    for name in ("mkdir", "rm", "mv", "cat", "date", "stat", "sleep", "base64", "setsid", "tail", "bash", "sh"):
        real = subprocess.run(["sh", "-c", f"command -v {name}"], capture_output=True, text=True).stdout.strip()
        shim = shims / name
        shim.write_text(f'#!{real if name == "sh" else "/bin/sh"}\necho {name} >> {log}\nexec {real} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return shims, log


def test_a_jobs_start_runs_no_polling_sleep_and_no_helper_program_the_shell_has_built_in(tmp_path):
    shims, log = _counting_path(tmp_path)
    job = jobs.Job("run-1", "1.1", "h1", attempt=1)
    script = jobs.start_script(job, "echo 'it ran'", "bash", base=str(tmp_path / "jobs"))
    env = os.environ | {"PATH": f"{shims}:{os.environ['PATH']}"}
    done = subprocess.run(["/bin/sh", "-s"], input=script, capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "it ran\n"
    started = Counter(log.read_text().split())
    # the script's text is written by printf, the job's files are read by `read`, the start is
    # handed over on a pipe (no `sleep` loop), its times are stamps (no date(1)), its pid files are
    # written in place and its folder claimed by noclobber (one mv: the end's claim), and the runner
    # is sh: the one bash is the step's own
    assert not {"cat", "base64", "date"} & set(started), started
    assert started["bash"] == 1 and started["mv"] == 1, started
    # the follower may wait a turn for the exit status the runner writes after tail has seen the end
    assert started["sleep"] <= 2, started
    assert sum(n for name, n in started.items() if name != "sleep") <= 10, started
    folder = tmp_path / "jobs" / job.name
    assert (folder / "exit").read_text() == "0\n"
    for name in ("pid", "child"):       # one line, one write: a look reads the pid with its identity or nothing
        pid, identity = (folder / name).read_text().split()
        # a script that has already ended when its identity is read has none ("?": taken as ended)
        assert pid.isdigit() and (":" in identity or name == "child" and identity == "?"), (name, identity)
        assert (folder / name).read_text().count("\n") == 1


def test_a_jobs_times_are_its_stamps_on_the_hosts_clock_and_an_older_runners_written_times_still_count(tmp_path):
    job = jobs.Job("run-1", "1.1", "h1", attempt=1)
    base = str(tmp_path / "jobs")
    before = time.time()
    done = subprocess.run(["sh", "-s"], input=jobs.start_script(job, "sleep 0.3", "sh", base=base),
                          capture_output=True, text=True, timeout=30)
    after = time.time()
    assert done.returncode == 0, done.stderr
    times = subprocess.run(["sh", "-c", jobs.times_script(job, base)], capture_output=True, text=True, timeout=30)
    started_at, ended_at = jobs.parse_times(times.stdout)
    # the file system's clock is coarse (a tick of the kernel's): a hundredth of a second either way
    assert before - 0.02 <= started_at and 0.28 <= ended_at - started_at and ended_at <= after + 0.02, times.stdout
    folder = tmp_path / "jobs" / job.name
    (folder / "started").write_text("1700000000.250000\n")      # what an older version's runner wrote
    (folder / "ended").write_text("1700000004.750000\n")
    times = subprocess.run(["sh", "-c", jobs.times_script(job, base)], capture_output=True, text=True, timeout=30)
    assert jobs.parse_times(times.stdout) == (1700000000.25, 1700000004.75)


def test_a_stop_says_how_long_the_job_ran_only_when_its_start_stamp_tells(tmp_path):
    """A stop's seconds go into the run record's note ("stopped ... after it had run N s there"):
    a job whose runner never started has no start stamp (not "since 1970"), and a stamp on another
    clock than the host's date (an NFS server's) ahead of it gives no seconds rather than fewer than
    none."""
    job = jobs.Job("run-1", "1.1", "h1", attempt=1)
    base = tmp_path / "jobs"
    folder = base / job.name
    for stamp_age in (None, -30.0, 3.0):
        folder.mkdir(parents=True, exist_ok=True)
        gone = subprocess.Popen(["true"])
        gone.wait()
        (folder / "starting").write_text(f"{gone.pid} ?\n")       # its starter is gone, its runner never ran
        (folder / "live").touch()
        if stamp_age is not None:
            (folder / "started").touch()
            os.utime(folder / "started", (time.time() - stamp_age, time.time() - stamp_age))
        said = subprocess.run(["sh", "-c", jobs.stop_script(job, str(base))], capture_output=True, text=True,
                              timeout=30)
        status, seconds = jobs.parse_status(said.stdout)
        assert status == jobs.STOPPED and not folder.exists(), said
        if stamp_age == 3.0:
            assert seconds is not None and 2 <= seconds <= 5, said.stdout
        else:
            assert seconds is None, (stamp_age, said.stdout)


def test_an_ansible_chain_reads_each_steps_times_with_one_program_at_most(tmp_path):
    """The chain reads a step's start and end after every step (its end line carries them to the
    engine): one program for both stamps, never one a stamp, and the times are the step's own."""
    shims, log = _counting_path(tmp_path)
    members = [chains.Member(f"1.{n}", 1, "sleep 0.2", shell, 60) for n, shell in enumerate(("bash", "sh"), 1)]
    script = chains.chain_script("run-1", "h1", members, str(tmp_path / "jobs"), str(tmp_path))
    env = os.environ | {"PATH": f"{shims}:{os.environ['PATH']}"}
    done = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    started = Counter(log.read_text().split())
    assert started["date"] + started["stat"] <= len(members), started
    for report in chains.parse(done.stdout, done.stderr).values():
        assert report.exit_code == 0 and report.started_at is not None and report.ended_at is not None, report
        assert 0.18 <= report.ended_at - report.started_at < 10, report


def test_a_script_holding_quotes_and_a_nul_reaches_the_host_exactly(tmp_path):
    for text in ("printf '%s\\n' \"it's\" '$HOME' `x`", "echo a\x00b"):
        job = jobs.Job("run-1", f"q{len(text)}", "h1", attempt=1, keep_files=True)
        script = jobs.start_script(job, text, "sh", base=str(tmp_path / "jobs"))
        subprocess.run(["sh", "-s"], input=script.encode(), capture_output=True, timeout=30)
        assert (tmp_path / "jobs" / job.name / "script").read_bytes() == text.encode()


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    reason = SandboxLab.unavailable_reason()
    if reason:
        pytest.skip(f"no sandbox sshd hosts here: {reason}")
    with SandboxLab(tmp_path_factory.mktemp("lab")) as lab:
        lab.start_many(1)
        transport = ssh_module.SSHTransport(**lab.connection("h1"))
        transport.open()
        yield transport
        transport.close()


def test_small_packets_leave_without_waiting_for_the_hosts_delayed_ack(host):
    sock = host._client.get_transport().sock
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_packets_are_authenticated_inside_the_cipher_where_the_host_offers_gcm_and_an_sshd_without_still_connects(
        host, tmp_path):
    """paramiko checks a separate MAC byte by byte in Python for every packet; GCM checks it in C."""
    assert host._client.get_transport().remote_cipher.endswith("-gcm@openssh.com")
    with SandboxLab(tmp_path / "lab") as lab:
        old = lab.add_host("old", start=False)
        old.config_path.write_text(old.config_path.read_text() + "Ciphers aes128-ctr,aes256-ctr\n")
        lab.restart("old")
        with ssh_module.SSHTransport(**lab.connection("old")) as plain:
            assert plain.run("echo reached", shell="sh", timeout=30).tail == ["reached"]
            assert plain._client.get_transport().remote_cipher == "aes128-ctr"


def _counted_selects(monkeypatch) -> Counter:
    """How often the driver's wait for a step turns (each turn takes the GIL)."""
    turns: Counter = Counter()
    real_select = select.select

    def counted(*args):
        turns["select"] += 1
        return real_select(*args)

    monkeypatch.setattr(ssh_module.select, "select", counted)
    return turns


def test_the_driver_waits_for_a_late_exit_status_without_spinning(host, monkeypatch):
    turns = _counted_selects(monkeypatch)
    # the host closes the output (EOF) 0.4 s before the command ends (exit status)
    result = host.run("echo out; exec >&- 2>&-; sleep 0.4", shell="sh")
    assert result.status == "ok", result.message
    assert result.tail == ["out"]
    # a turn every 20 ms at most: about 20 in 0.4 s, not thousands
    assert turns["select"] < 100, turns


def test_a_stages_lanes_start_on_the_threads_pre_flight_already_started(tmp_path, monkeypatch):
    """One pool from pre-flight to close: the run's lanes take the threads pre-flight started, and
    start only as many more as run at once beyond those (a pool per stage started every lane's
    thread again: each new thread waited for the GIL from the busy ones, and on 50 hosts the last
    lane began 0.5 s late).  Each lane sleeps, so all eight run at once and need eight threads."""
    from app.remote.local import LocalTransport
    from app.run import journal as J
    from app.run.engine import RunEngine
    from app.run.plan import RunStep, Task

    hosts = [f"lin{i}" for i in range(8)]
    steps = [RunStep("1.1", "Say where it ran.", "hosts", "Bench", h, [Task("1.1", h, "bash", "sleep 0.3; uname -n")],
                     template="bench#probe") for h in hosts]
    engine = RunEngine(J.new_run("bed.yaml", "", root=tmp_path / "runs"), steps,
                       lambda h: LocalTransport(h, tmp_path / h), workers=64, timeout=60)
    started = Counter()
    real_start = threading.Thread.start

    def counted(thread):
        # a pool's worker threads (the local transport's output readers are not the engine's)
        if thread.name.startswith(("ThreadPoolExecutor", "run-host")):
            started["pool worker"] += 1
        return real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    try:
        assert all(c.ok for c in engine.preflight())
        assert engine.run_steps(engine.steps)
    finally:
        engine.close()
    assert 0 < started["pool worker"] <= len(hosts), started


def test_a_bash_jobs_runner_does_not_read_the_users_bashrc_a_second_time(tmp_path):
    """sshd's login shell has read ~/.bashrc before the job starts; the runner's bash, started
    from it with SSH_CLIENT set, read it again: the step saw the file's changes twice (here a
    variable it appends to) and every job step paid what the file costs."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text('export TBS_RC_READ="${TBS_RC_READ:-}+"\n')
    job = jobs.Job("run-1", "1.1", "h1", attempt=1)
    script = jobs.start_script(job, 'echo "read: ${TBS_RC_READ:-none}"', "bash", base=str(tmp_path / "jobs"))
    # what the login shell hands on: its bashrc already read once (TBS_RC_READ=+), SHLVL lowered by its exec
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV")}
    env |= {"HOME": str(home), "SSH_CLIENT": "127.0.0.1 40000 22", "SHLVL": "0", "TBS_RC_READ": "+"}
    done = subprocess.run(["/bin/sh", "-s"], input=script, capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "read: +\n"


def test_a_silent_step_wakes_the_driver_a_few_times_not_every_20_ms(host, monkeypatch):
    """Output, its end and a lost connection wake the wait for a step at once; the wait looks at the
    step's Stop and timeout only every 0.1 s.  A turn every 20 ms cost 50 hosts ~45 turns each per
    0.5 s step, all taking the GIL while the hosts start."""
    turns = _counted_selects(monkeypatch)
    lines: list[str] = []
    result = host.run("sleep 0.6; echo done", shell="sh", on_output=lambda stream, line: lines.append(line))
    assert result.status == "ok", result.message
    assert lines == ["done"]
    assert turns["select"] <= 12, turns


def test_an_idle_connections_reader_thread_wakes_once_a_second_not_ten_times(host):
    """paramiko's reader thread looks for a close and a due keepalive each time recv() times out
    (0.1 s by default): on 50 connections that was 500 wakes a second, each taking the GIL."""
    assert host._client.get_transport().sock.gettimeout() >= 1.0
    assert host.run("true", shell="sh").status == "ok"
