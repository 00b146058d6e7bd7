"""`run --engine ansible` runs a run of stages in one pass of ansible-playbook (app.ansible.passes),
for real: ansible-playbook on two local hosts.  What a user relies on is the built-in engine's
rule, unchanged: a stage starts once every host finished the stage before, a failure or a stop
anywhere ends the run after what was running, the journal records exactly the steps that ran,
and a resume runs each step that did not succeed once, never one that did."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.ansible.passes import GATE_TASK
from app.run import journal as J
from app.run.plan import RunStep, Task
from bench.sandbox_hosts import host_python
from tests.run_beds import write_bed
from tests.waiting import wait_for

HOSTS = ("h1", "h2")


def _plan(marks: Path, scripts: dict[tuple[str, str], str], sizes: tuple[int, int, int]) -> list[RunStep]:
    """Three stages (network, storage, hosts) of `sizes` steps on each host; each step appends its
    number to its host's mark file, after its own script from `scripts` (by step, host)."""
    steps = []
    for s, (section, title) in enumerate((("network", "Network"), ("storage", "Storage"), ("hosts", "Hosts")), 1):
        for n in range(1, sizes[s - 1] + 1):
            number = f"{s}.{n}"
            for h in HOSTS:
                script = scripts.get((number, h), "") + f"\necho {number} >> {marks / h}"
                steps.append(RunStep(number, f"Step {number}", section, title, h, [Task(number, h, "bash", script)]))
    return steps


def _engine(tmp_path: Path, steps: list[RunStep], info: J.RunInfo | None = None):
    from app.ansible.engine import AnsibleEngine, missing
    from app.remote.local import LocalTransport
    from topology.fileformat import load
    if missing():
        pytest.skip(missing())
    bed = write_bed(tmp_path / "bed.yaml", [{"id": h, "transport": "local"} for h in HOSTS],
                    mark_dir=tmp_path / "bed-marks")
    info = info or J.new_run(str(bed), "", root=tmp_path / "runs", engine="ansible")
    return AnsibleEngine(info, steps, lambda host: LocalTransport(host), bed=load(bed),
                         extra_vars=[f"ansible_python_interpreter={host_python()}"]), info


def _run(tmp_path: Path, steps: list[RunStep], info: J.RunInfo | None = None) -> tuple[bool, J.RunInfo]:
    engine, info = _engine(tmp_path, steps, info)
    try:
        return engine.run_steps(steps), info
    finally:
        engine.close()


def _starts(info: J.RunInfo) -> list[tuple[str, str]]:
    return [(r["step"], r["host"]) for r in J.read_records(info.dir)[0] if r["kind"] == "start"]


def _marks(marks: Path, host: str) -> list[str]:
    path = marks / host
    return path.read_text().split() if path.exists() else []


@pytest.mark.slow      # ~15 s: two passes of ansible-playbook
def test_a_failure_in_a_pass_of_three_stages_ends_it_after_that_stage_and_the_resume_runs_each_step_once(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    fixed = tmp_path / "fixed"
    # h1 fails in the middle of the first stage while h2 is still in its own second step
    steps = _plan(marks, {("1.2", "h1"): f"test -e {fixed} || exit 3",
                          ("1.2", "h2"): "sleep 1"}, (2, 1, 1))
    ok, info = _run(tmp_path, steps)
    assert not ok
    # one ansible-playbook pass for the three stages: one play, whose later stages waited on the
    # controller for a gate that the failure closed (app.ansible.stage_gates)
    assert len(passes := list((info.dir / "ansible").glob("pass-*"))) == 1
    assert (passes[0] / "play.yml").read_text().count("\n- name:") == 1
    assert sorted((g.name, g.read_text()) for g in (passes[0] / "gates").iterdir()) == [("02", "stop\n"),
                                                                                      ("03", "stop\n")]
    # h2 finished the stage it was in; no host started the next stage
    assert _marks(marks, "h1") == ["1.1"] and _marks(marks, "h2") == ["1.1", "1.2"]
    assert sorted(_starts(info)) == [("1.1", "h1"), ("1.1", "h2"), ("1.2", "h1"), ("1.2", "h2")]
    states = J.replay(J.read_records(info.dir)[0])
    assert states[("1.2", "h1")].status == J.FAILED and states[("1.2", "h1")].exit_code == 3
    assert states[("1.2", "h2")].status == J.OK and states[("1.1", "h1")].status == J.OK
    # the gate that ended the pass is no step: the failed step alone says why
    assert not any(GATE_TASK in str(r.get("message", "")) for r in J.read_records(info.dir)[0])

    # the cause fixed: the failed step and everything after it run once, nothing that succeeded again
    fixed.write_text("")
    ok, _ = _run(tmp_path, steps, info)
    assert ok
    assert _marks(marks, "h1") == _marks(marks, "h2") == ["1.1", "1.2", "2.1", "3.1"]
    starts = _starts(info)
    assert starts.count(("1.2", "h1")) == 2
    assert all(starts.count(k) == 1 for k in set(starts) - {("1.2", "h1")}), starts


@pytest.mark.slow      # ~20 s: a pass stopped, the stop's own pass, and the resumed pass
def test_a_stop_in_the_middle_of_a_pass_journals_exactly_the_steps_that_ran_and_stops_the_step_on_its_host(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    release = tmp_path / "release"
    log = marks / "h1.held"
    held = f"echo begin >> {log}; while [ ! -e {release} ]; do sleep 0.1; done; echo end >> {log}"
    steps = _plan(marks, {("2.1", "h1"): held}, (1, 2, 1))
    engine, info = _engine(tmp_path, steps)
    try:
        worker = threading.Thread(target=engine.run_steps, args=(steps,))
        worker.start()
        wait_for(lambda: _marks(marks, "h1.held") == ["begin"], seconds=120, what="h1 inside step 2.1")
        engine.cancel()
        worker.join(120)
        assert not worker.is_alive()
    finally:
        engine.close()
    states = J.replay(J.read_records(info.dir)[0])
    assert states[("2.1", "h1")].status == J.CANCELLED
    # the third stage never started; h1 never went past the step that was stopped
    assert not any(step.startswith("3.") for step, _ in _starts(info))
    assert ("2.2", "h1") not in _starts(info) and _marks(marks, "h1") == ["1.1"]
    # every step the journal says ended well did run, once; every step that ran is journalled
    for h in HOSTS:
        ran = _marks(marks, h)
        assert sorted(ran) == sorted({s for s, host in _starts(info) if host == h and states[(s, h)].status == J.OK})
    # stopped on its host: released now, the first attempt never reaches its end
    release.write_text("")
    ok, _ = _run(tmp_path, steps, info)
    assert ok
    assert _marks(marks, "h1.held") == ["begin", "begin", "end"]
    assert _marks(marks, "h1") == _marks(marks, "h2") == ["1.1", "2.1", "2.2", "3.1"]
    starts = _starts(info)
    assert starts.count(("2.1", "h1")) == 2
    assert all(starts.count(k) == 1 for k in set(starts) - {("2.1", "h1")}), starts


def test_a_pass_has_ansible_playbook_look_for_work_every_50_ms_unless_the_person_has_an_ansible_cfg(
        tmp_path, monkeypatch):
    """Ansible's free strategy looked at every host every 1 ms for the whole pass: one of two cores
    busy on 50 hosts (app.ansible.playbook_settings).  A person's own ansible.cfg is still the one read."""
    from app.ansible import playbook_settings as pass_config
    pytest.importorskip("ansible")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ANSIBLE_CONFIG", raising=False)
    monkeypatch.setattr(pass_config, "SYSTEM_CONFIG", tmp_path / "etc" / "ansible.cfg")
    (tmp_path / "home").mkdir()

    def poll_interval(folder: Path) -> float:
        """What ansible-playbook started in the pass's folder reads (Ansible's own config lookup)."""
        folder.mkdir()
        pass_config.write_config(folder)
        read = ("from ansible.config.manager import ConfigManager as M, find_ini_config_file as f; "
                "print(M(f()).get_config_value('DEFAULT_INTERNAL_POLL_INTERVAL'))")
        out = subprocess.run([sys.executable, "-c", read], cwd=folder, capture_output=True, text=True, timeout=60)
        return float(out.stdout)

    assert poll_interval(tmp_path / "pass-001") == 0.05
    (tmp_path / "home" / ".ansible.cfg").write_text("[defaults]\nforks = 7\n")
    assert poll_interval(tmp_path / "pass-002") == 0.001
    assert not (tmp_path / "pass-002" / "ansible.cfg").exists()


def test_a_passs_ssh_opens_its_connections_with_a_quick_key_exchange_and_keeps_ssh_s_others_behind_it():
    """sntrup761, OpenSSH 9's first choice, cost the client 110 ms of CPU a connection: 5.5 s for 50
    hosts at the start of every pass (app.ansible.playbook_settings)."""
    import shlex
    import shutil

    from app.ansible.playbook_settings import ansible_environment
    ssh = shutil.which("ssh")
    if ssh is None or "sntrup761x25519-sha512" not in subprocess.run(
            [ssh, "-Q", "kex"], capture_output=True, text=True, timeout=10).stdout.split():
        pytest.skip("this ssh does not start with sntrup761")
    args = shlex.split(ansible_environment(None)["ANSIBLE_SSH_ARGS"])
    config = subprocess.run([ssh, "-G", *args, "sandbox.invalid"], capture_output=True, text=True, timeout=10).stdout
    kex = next(line.split()[1] for line in config.splitlines() if line.startswith("kexalgorithms ")).split(",")
    assert kex[0] in ("mlkem768x25519-sha256", "curve25519-sha256"), kex
    assert "sntrup761x25519-sha512" in kex          # a server with neither still finds one it has
    assert "stricthostkeychecking true" in config


def test_a_key_exchange_the_person_chose_in_an_ssh_config_stands(tmp_path, monkeypatch):
    """The engine's quick key exchange is prepended to ssh's defaults: over a person's own
    KexAlgorithms (a post-quantum-only one, say) it would widen their choice back to ssh's list.
    One named anywhere, for any host or in an included file, turns it off."""
    from app.ansible import playbook_settings as settings
    if settings._offered_kex() is None:
        pytest.skip("this ssh does not start with sntrup761")
    home = tmp_path / "home"
    (home / ".ssh" / "conf.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    config = home / ".ssh" / "config"
    config.write_text("Host *\n  ServerAliveInterval 30\n")
    assert settings.quick_kex() is not None          # nothing chosen: the quick exchange goes first
    config.write_text("Include conf.d/*.conf\nHost *\n  ServerAliveInterval 30\n")
    (home / ".ssh" / "conf.d" / "lab.conf").write_text("Host lab-*\n  KexAlgorithms=sntrup761x25519-sha512\n")
    assert settings.quick_kex() is None
    assert "KexAlgorithms" not in settings.ansible_environment(None)["ANSIBLE_SSH_ARGS"]
