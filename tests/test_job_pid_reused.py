"""A job's pid is the job only while its process is the one recorded: pids wrap (pid_max 32,768
here), and a job whose runner died without recording its end (its host rebooted, it was killed)
leaves a pid that another process group may own when a resume asks about the job or stops it.
Then the host must say the job is not running, and nothing may signal that stranger.

Real sh, real jobs and real processes on this machine (and one real sshd host): the job's folder
is the one a real start wrote; its processes are then killed with SIGKILL (the runner cannot record
its end) and its pid files are made to name a live unrelated process, a `sleep` in a process group
of its own, as a reused pid would: with the dead job's identity still beside the pid, or with
none (a folder an older version wrote).  Each of these fails on the code before identities: it took
the stranger for the job (running, stopped it, refused a new start, followed it, killed it)."""
from __future__ import annotations

import dataclasses
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from app.remote import jobs
from app.remote.local import LocalTransport
from bench.sandbox_hosts import SandboxLab
from tests.waiting import wait_for

# of its own run: an SSH sandbox host keeps its jobs under the one home of this machine's root
JOB = jobs.Job(f"pid-reused-{os.getpid()}-{time.time_ns()}", "1.1", "h1", keep_files=True, attempt=1)


def _sh(script: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def strangers():
    """Starts unrelated processes, each the leader of a process group of its own: what a reused pid
    names.  Started after the job's processes ended, as a process that reuses a pid is (a clock
    tick later: a start time is counted in ticks)."""
    started: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        time.sleep(0.02)
        started.append(subprocess.Popen(["sleep", "60"], start_new_session=True))
        return started[-1]
    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _started(base: Path, job: jobs.Job, script: str) -> tuple[subprocess.Popen, Path]:
    """A job started for real (its follower left running, as the connection of a driver)."""
    follower = subprocess.Popen(["sh", "-c", jobs.start_script(job, script, "sh", str(base), str(base))],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    folder = base / job.name
    wait_for(lambda: (folder / "pid").exists() and (folder / "child").exists(), seconds=10, what="the job's start")
    return follower, folder


def _killed(base: Path, script: str) -> Path:
    """The folder of a job started and then killed whole, follower, runner and script: no end recorded."""
    follower, folder = _started(base, JOB, script)
    group = int((folder / "pid").read_text().split()[0])
    os.killpg(follower.pid, signal.SIGKILL)
    follower.wait()
    os.killpg(group, signal.SIGKILL)
    wait_for(lambda: not _alive(group), seconds=10, what="the job's processes gone")
    return folder


def _left_with_its_pid_reused(base: Path, strangers, identity: bool) -> tuple[Path, subprocess.Popen]:
    """A job whose runner and script were killed (no end recorded), whose pid files now name a
    stranger: with the dead job's own identity beside the pid, or without one."""
    folder = _killed(base, "echo the step began; sleep 60")
    stranger = strangers()
    for name in ("pid", "child"):
        _, its_identity = (folder / name).read_text().split()
        # without: its identity could not be read ("?"; a pid alone is an older version's: see below)
        (folder / name).write_text(f"{stranger.pid} {its_identity if identity else '?'}\n")
    assert not (folder / "exit").exists() and (folder / "live").exists()
    return folder, stranger


@pytest.mark.parametrize("identity", [True, False], ids=["its-identity", "no-identity"])
def test_a_pid_now_owned_by_another_process_is_not_a_running_job_and_is_not_followed(tmp_path, strangers, identity):
    base = tmp_path / "jobs"
    _, stranger = _left_with_its_pid_reused(base, strangers, identity)
    status = jobs.parse_status(_sh(jobs.status_script(JOB, str(base))).stdout)
    assert status[0] == jobs.DEAD, status
    # the follower of an adopting resume ends at once as the job ended (killed), following nothing
    followed = _sh(jobs.follow_script(JOB, str(base)), timeout=10)
    assert followed.returncode == 137 and f"{jobs.PID_MARK}{stranger.pid}" not in followed.stderr, followed.stderr


@pytest.mark.parametrize("identity", [True, False], ids=["its-identity", "no-identity"])
def test_the_stop_of_a_job_whose_pid_another_process_has_now_signals_nothing(tmp_path, strangers, identity):
    base = tmp_path / "jobs"
    _, stranger = _left_with_its_pid_reused(base, strangers, identity)
    stopped = jobs.parse_status(_sh(jobs.stop_script(JOB, str(base))).stdout)
    assert stranger.poll() is None and _alive(stranger.pid), "the stop signalled a process that is not the job"
    assert stopped[0] == jobs.STOPPED and not (base / JOB.name).exists(), stopped


def test_a_new_start_beside_a_reused_pid_runs_the_step_instead_of_refusing(tmp_path, strangers):
    base = tmp_path / "jobs"
    _, stranger = _left_with_its_pid_reused(base, strangers, identity=True)
    marks = tmp_path / "marks"
    again = dataclasses.replace(JOB, attempt=2)
    ran = _sh(jobs.start_script(again, f"echo ran >> {marks}", "sh", str(base), str(tmp_path)))
    assert ran.returncode == 0 and marks.read_text().split() == ["ran"], ran.stderr
    # an Ansible pass's start that follows a copy of its own attempt it finds: none is there
    marks.unlink()
    _, other = _left_with_its_pid_reused(tmp_path / "jobs2", strangers, identity=True)
    found = dataclasses.replace(JOB, follow_found=True)
    ran = _sh(jobs.start_script(found, f"echo ran >> {marks}", "sh", str(tmp_path / "jobs2"), str(tmp_path)))
    assert ran.returncode == 0 and marks.read_text().split() == ["ran"], ran.stderr
    assert stranger.poll() is None and other.poll() is None


def test_a_timed_out_follow_of_a_left_job_kills_no_stranger(tmp_path, strangers):
    """The local transport stops a followed job's group at the timeout: not one its pid now names."""
    transport = LocalTransport("h1", tmp_path)
    transport.open()
    _, stranger = _left_with_its_pid_reused(Path(transport.job_base), strangers, identity=False)
    result = transport.follow_job(JOB, timeout=2)
    assert stranger.poll() is None and _alive(stranger.pid), result
    assert result.exit_code == 137, result


def test_a_running_job_is_running_and_its_stop_stops_it(tmp_path):
    base = tmp_path / "jobs"
    follower, folder = _started(base, JOB, "sleep 60")
    group = int((folder / "pid").read_text().split()[0])
    status = jobs.parse_status(_sh(jobs.status_script(JOB, str(base))).stdout)
    assert status == (jobs.RUNNING, group)
    assert jobs.STOPPED == jobs.parse_status(_sh(jobs.stop_script(JOB, str(base))).stdout)[0]
    wait_for(lambda: not _alive(group), seconds=10, what="the job's group stopped")
    assert follower.wait(timeout=10) != 0


def test_a_process_named_with_spaces_and_parentheses_is_identified(tmp_path):
    """/proc/PID/stat's second field is the command name as the process set it: counted after its
    last ") ", the start time is field 22 however the name reads."""
    odd = tmp_path / "a) b (c) 1 2"
    odd.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(odd), "30"])
    try:
        said = _sh(jobs.IDENTITY + f'identity_of {proc.pid} && echo "$_id"').stdout.strip()
        assert said and said == jobs.identity_of(proc.pid), said
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
        assert said == f"{boot}:{stat.rsplit(') ', 1)[1].split()[19]}"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                    reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")
def test_over_ssh_a_reused_pid_on_the_host_is_neither_the_job_nor_signalled(tmp_path):
    """The same on a real sshd host (its own pid namespace and /proc), through the SSH transport:
    asked, adopted at a timeout, stopped."""
    from app.remote.ssh import SSHTransport
    with SandboxLab(tmp_path / "lab") as lab:
        lab.start_many(1)
        with SSHTransport(**lab.connection("h1")) as host:
            said: list[str] = []
            start = jobs.start_script(JOB, "sleep 60", "sh")
            # the job killed, then a stranger started whose pid its files name
            left = host.run(f"""{jobs._dir_assign(JOB, None)}
sh -c {shlex.quote(start)} < /dev/null > /dev/null 2>&1 &
n=0; until [ -s "$d/pid" ] || [ $n -gt 200 ]; do sleep 0.05; n=$((n+1)); done
read -r group _ < "$d/pid"; kill -s KILL $!; kill -s KILL -- -"$group"; sleep 0.05
setsid sleep 60 < /dev/null > /dev/null 2>&1 & stranger=$!; echo $stranger
for f in pid child; do read -r _ id < "$d/$f"; echo "$stranger $id" > "$d/$f.new"; mv "$d/$f.new" "$d/$f"; done
""", shell="sh", timeout=30, on_output=lambda stream, line: said.append(line))
            assert left.ok, left
            stranger = int(said[0])

            def stranger_alive() -> bool:
                return host.run(f"kill -0 {stranger}", shell="sh", timeout=20).ok
            folder = host.run(f"{jobs._dir_assign(JOB, None)}; cd $d && head -v *", shell="sh", timeout=20).tail
            assert host.job_status(JOB)[0] == jobs.DEAD, folder
            followed = host.follow_job(JOB, timeout=3)
            assert stranger_alive() and followed.exit_code == 137, followed
            # (the follower recorded the job's end as killed: the stop takes that end)
            assert host.stop_job(JOB)[0] in (jobs.STOPPED, jobs.ENDED) and stranger_alive()


def test_a_job_an_older_version_started_and_that_still_runs_is_running_and_stopped_not_run_again(tmp_path):
    """An upgrade in the middle of a run: the job's pid files hold one line (no identity, as the
    version before identities wrote them).  Its pid alone is trusted, as that version did: a resume
    finds it running (never ended, its step never started again beside it) and its stop stops it."""
    base = tmp_path / "jobs"
    follower, folder = _started(base, JOB, "sleep 60")
    group = int((folder / "pid").read_text().split()[0])
    for name in ("pid", "child"):
        (folder / name).write_text((folder / name).read_text().split()[0] + "\n")
    assert jobs.parse_status(_sh(jobs.status_script(JOB, str(base))).stdout) == (jobs.RUNNING, group)
    assert jobs.group_of(str(folder)) == group
    stopped = jobs.parse_status(_sh(jobs.stop_script(JOB, str(base))).stdout)
    assert stopped[0] == jobs.STOPPED
    wait_for(lambda: not _alive(group), seconds=10, what="the older version's job stopped")
    follower.wait(timeout=10)


def test_a_job_the_previous_version_started_with_its_identity_on_a_second_line_is_still_the_job(tmp_path, strangers):
    """An upgrade in the middle of a run from the version that wrote the identity on the pid file's
    second line: the job it started is found running and stopped; a stranger that took its pid since
    is neither the job nor signalled."""
    base = tmp_path / "jobs"
    follower, folder = _started(base, JOB, "sleep 60")
    group = int((folder / "pid").read_text().split()[0])
    for name in ("pid", "child"):
        pid, identity = (folder / name).read_text().split()
        (folder / name).write_text(f"{pid}\n{identity}\n")
    assert jobs.parse_status(_sh(jobs.status_script(JOB, str(base))).stdout) == (jobs.RUNNING, group)
    assert jobs.group_of(str(folder)) == group
    assert jobs.parse_status(_sh(jobs.stop_script(JOB, str(base))).stdout)[0] == jobs.STOPPED
    wait_for(lambda: not _alive(group), seconds=10, what="the previous version's job stopped")
    follower.wait(timeout=10)

    _, stranger = _left_with_its_pid_reused(base, strangers, identity=True)
    for name in ("pid", "child"):
        pid, identity = (folder / name).read_text().split()
        (folder / name).write_text(f"{pid}\n{identity}\n")
    assert jobs.parse_status(_sh(jobs.status_script(JOB, str(base))).stdout)[0] == jobs.DEAD
    assert jobs.group_of(str(folder)) is None and stranger.poll() is None


@pytest.mark.parametrize("stop", ["stop_script", "kill_script"])
def test_an_older_versions_job_whose_pid_a_process_leading_no_group_has_now_is_not_killed(tmp_path, stop):
    """A pid trusted alone (a folder the version before identities wrote; a host without a /proc of
    its own) that another process took since: the stop signals the job's group, which that process
    does not lead (it is no group's leader), so nothing reaches it, as before the runner was ended
    by its pid; a SIGKILL to the pid itself killed it."""
    base = tmp_path / "jobs"
    folder = _killed(base, "sleep 60")
    stranger = subprocess.Popen(["sleep", "60"])        # in this process's group: it leads none
    try:
        assert os.getpgid(stranger.pid) != stranger.pid
        for name in ("pid", "child"):
            (folder / name).write_text(f"{stranger.pid}\n")
        _sh(getattr(jobs, stop)(JOB, str(base)))
        time.sleep(0.1)
        assert stranger.poll() is None and _alive(stranger.pid), "the stop killed a process that is not the job"
    finally:
        stranger.kill()
        stranger.wait()
