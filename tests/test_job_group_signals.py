"""A step's script may signal its own process group, which is the job's: bash's `trap 'kill 0' EXIT`
ends the helpers a script started in the background (an iostat beside fio).  The job's runner is
in that group too; it ended with the script's helpers and the step was recorded as killed ("ended
without an exit status", 137) though the script ran to its end and exited 0.  The runner outlives
such signals and records the script's own status; a stop still ends it without one."""
from __future__ import annotations

import pytest

from app.remote import jobs
from app.remote.local import LocalTransport
from bench.sandbox_hosts import SandboxLab

# the idiom as it is usually written: TERM (sent by `kill 0` to the script too) exits cleanly
CLEAN_UP = "trap 'exit' INT TERM; trap 'kill 0' EXIT\nsleep 30 &\nsleep 0.2; echo measured"


def _job(step: str) -> jobs.Job:
    return jobs.Job("signals", step, "h")


def test_a_script_that_ends_its_helpers_with_kill_0_succeeds(tmp_path):
    host = LocalTransport("h", workdir=tmp_path)
    result = host.run(CLEAN_UP, shell="bash", timeout=30, job=_job("1.1"))
    assert result.ok and result.exit_code == 0, result
    assert "measured" in result.tail and not any("without an exit status" in line for line in result.tail)
    assert result.seconds < 10      # its helper (sleep 30) was ended by the script's kill 0


def test_a_script_ended_by_a_signal_to_its_group_is_recorded_with_its_own_status(tmp_path):
    host = LocalTransport("h", workdir=tmp_path)
    result = host.run("sleep 0.2; kill 0; sleep 5", shell="bash", timeout=30, job=_job("1.2"))
    assert result.exit_code == 143, result          # bash ended by TERM: 128 + 15, as the shell reports it
    assert not any("without an exit status" in line for line in result.tail)
    assert jobs.parse_status(host.run(jobs.status_script(_job("1.2"), host.job_base), shell="sh").tail[-1]) == \
        (jobs.ENDED, 143)


def test_a_stop_still_ends_the_job_without_a_status(tmp_path):
    """The runner ignores its group's signals, so a stop ends it by its pid first: stopped, as before."""
    import threading
    host = LocalTransport("h", workdir=tmp_path)
    job = _job("1.3")
    done: list = []
    follower = threading.Thread(target=lambda: done.append(
        host.run("echo started; sleep 30", shell="bash", timeout=60, job=job)))
    follower.start()
    status = None
    for _ in range(200):
        status = jobs.parse_status(host.run(jobs.status_script(job, host.job_base), shell="sh").tail[-1])
        if status[0] == jobs.RUNNING:
            break
    assert status[0] == jobs.RUNNING, status
    stopped = host.run(jobs.stop_script(job, host.job_base), shell="sh", timeout=30)
    assert jobs.parse_status(stopped.tail[-1])[0] == jobs.STOPPED, stopped
    follower.join(timeout=20)
    assert done and not done[0].ok and done[0].seconds < 20, done


@pytest.mark.skipif(SandboxLab.unavailable_reason() is not None,
                    reason=f"no sandbox sshd hosts here: {SandboxLab.unavailable_reason()}")
def test_over_ssh_a_script_that_ends_its_helpers_with_kill_0_succeeds(tmp_path):
    from app.remote.ssh import SSHTransport
    with SandboxLab(tmp_path / "lab") as lab:
        lab.start_many(1)
        with SSHTransport(**lab.connection("h1")) as host:
            result = host.run(CLEAN_UP, shell="bash", timeout=30, job=jobs.Job("signals", "1.1", "h1"))
    assert result.ok and result.exit_code == 0, result
    assert "measured" in result.tail
