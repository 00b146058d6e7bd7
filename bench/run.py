"""Benchmark of the run engine on real sshd hosts (bench/sandbox_hosts.py):

* one step on 1 host and on 50 hosts in parallel (target: 50 hosts < 1.5 x one host), with what
  the 50-host step cost besides time: the processes each host started for it and the CPU the
  driver and the rest of the machine (the hosts' sshd and shells) used, against the cores there are;
* the same step on the same 50 hosts with Ansible at its default 5 forks (target: the
  engine >= 5 x faster);
* the same step through `run --engine ansible` against plain ansible-playbook running the
  playbook it writes (target: overhead < 10 %; bench/ansible_engine.py);
* a small build (three stages of two steps) through the built-in engine and `run --engine
  ansible` (target: ansible < 1.6 x; `--engines-only` for that row alone);
* how long a line printed on a host takes to reach the engine's listener (target < 100 ms).

    python -m bench.run [--hosts 50] [--no-ansible] [--floor]
Needs root, openssh-server and (for the comparisons) ansible-core and ansible-runner.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

STEP_SCRIPT = "sleep 0.5; uname -n; echo done"


def require_success(engine, ok: bool) -> None:
    """A timed plan that failed on a host times nothing: say which host and why."""
    if not ok:
        bad = engine.failed_tasks()
        raise RuntimeError(f"{len(bad)} host(s) failed, e.g. {bad[0].host}: {bad[0].message}")


def _steps(hosts: list[str], script: str = STEP_SCRIPT):
    from app.run.plan import RunStep, Task
    return [RunStep("1.1", "Run the probe on every host.", "hosts", "Bench", h, [Task("1.1", h, "bash", script)],
                    template="bench#probe") for h in hosts]


def _engine(lab, hosts: list[str], runs: Path, script: str = STEP_SCRIPT, listener=None):
    from app.remote.ssh import SSHTransport
    from app.run import journal as J
    from app.run.engine import RunEngine
    info = J.new_run("bench.yaml", "", root=runs)
    return RunEngine(info, _steps(hosts, script), lambda h: SSHTransport(**lab.connection(h)),
                     workers=64, timeout=60, listener=listener)


def _last_pids(lab, hosts: list[str]) -> list[int] | None:
    """Each host's last process number (its own pid namespace), read by a process started there;
    None where nsenter cannot read it."""
    found = []
    for h in hosts:
        sshd = _children(lab.hosts[h].process.pid)
        r = subprocess.run(["nsenter", "-t", str(sshd[-1]), "-p", "cat", "/proc/sys/kernel/ns_last_pid"],
                           capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout.strip().isdigit():
            return None
        found.append(int(r.stdout))
    return found


def _children(pid: int) -> list[int]:
    """pid and its first descendants down to the host's sshd (unshare forks it)."""
    chain = [pid]
    while True:
        try:
            kids = Path(f"/proc/{chain[-1]}/task/{chain[-1]}/children").read_text().split()
        except OSError:
            return chain
        if not kids or Path(f"/proc/{chain[-1]}/exe").resolve().name == "sshd":
            return chain
        chain.append(int(kids[0]))


def _hosts_cpu_s(lab, hosts: list[str]) -> float:
    """CPU seconds (user + system) the hosts' processes have used: each sshd and what runs under
    it, the ended ones through their parents' counts (an orphaned job is reaped by its host's
    sshd, its pid 1).  Other work on this machine is not in it."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    todo = [lab.hosts[h].process.pid for h in hosts]
    while todo:
        pid = todo.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])     # utime stime cutime cstime
        todo.extend(int(k) for k in kids)
    return total / tick


@dataclass
class StepWork:
    """What one step cost besides its wall time: the programs each host started for it, and the
    CPU the hosts (sshd and the shells under it) and the driver used."""
    processes_per_host: float | None
    hosts_cpu_s: float
    driver_cpu_s: float


def time_engine(lab, hosts: list[str], runs: Path, work: list[StepWork] | None = None) -> tuple[float, float]:
    """Seconds to connect to `hosts` (what pre-flight does once per run), and seconds for one
    step on all of them over those connections (what that step cost appended to `work`)."""
    engine = _engine(lab, hosts, runs)
    try:
        t0 = time.perf_counter()
        checks = engine.preflight()
        connect = time.perf_counter() - t0
        if not all(c.ok for c in checks):
            raise RuntimeError(next(c.message for c in checks if not c.ok))
        before = _last_pids(lab, hosts) if work is not None else None
        hosts0, driver0 = _hosts_cpu_s(lab, hosts), time.process_time()
        t0 = time.perf_counter()
        ok = engine.run_steps(engine.steps)
        seconds = time.perf_counter() - t0
        driver = time.process_time() - driver0
        if work is not None:
            after = _last_pids(lab, hosts)
            # the reading process itself is the one number in between that is not the step's
            started = (sum(after) - sum(before) - len(hosts)) / len(hosts) if before and after else None
            work.append(StepWork(started, _hosts_cpu_s(lab, hosts) - hosts0, driver))
    finally:
        engine.close()
    require_success(engine, ok)
    return connect, seconds


def print_step_work(spent: list[StepWork], hosts: int, one_host_s: float) -> None:
    """Why the row is what it is: the step's 0.5 s sleep costs no CPU, so what a step on many hosts
    waits for beyond one host's time is CPU, and this machine's cores are shared by the driver
    and every host's sshd and shells (and whatever else runs here)."""
    if not spent:
        return
    best = min(spent, key=lambda w: w.driver_cpu_s + w.hosts_cpu_s)
    cores = os.cpu_count() or 1
    started = f"{best.processes_per_host:.0f}" if best.processes_per_host is not None else "?"
    busy = (best.driver_cpu_s + best.hosts_cpu_s) / cores
    print(f"  per step on {hosts} hosts: {started} processes started on each host; CPU: the hosts "
          f"{best.hosts_cpu_s:.2f} s ({1000 * best.hosts_cpu_s / hosts:.0f} ms each), the driver "
          f"{best.driver_cpu_s:.2f} s: {busy:.2f} s of all {cores} cores, "
          f"{busy / one_host_s:.2f} x the one-host step on CPU alone")


def time_floor(lab, hosts: list[str], how: str) -> float:
    """Seconds for the step on `hosts` at once over connections already open, without the engine:
    `bare` is one exec of the step as the ssh command (what `ssh host 'sleep 0.5; uname -n'` does),
    `transport` the SSH transport's plain run, `job` the transport's run as a job (app.remote.jobs):
    what is physically possible on this machine, and what each layer adds."""
    import threading

    from app.remote import jobs
    from app.remote.ssh import SSHTransport
    transports = [SSHTransport(**lab.connection(h)) for h in hosts]
    for t in transports:
        t.open()
    failed: list[str] = []
    run_id = f"floor-{time.time_ns()}"

    def one(t) -> None:
        if how == "bare":
            channel = t._client.get_transport().open_session()
            channel.exec_command(STEP_SCRIPT)
            while channel.recv(65536):
                pass
            ok = channel.recv_exit_status() == 0
        else:
            job = jobs.Job(run_id, "1.1", t.host) if how == "job" else None
            ok = t.run(STEP_SCRIPT, shell="bash", timeout=60, job=job).ok
        if not ok:
            failed.append(t.host)
    try:
        threads = [threading.Thread(target=one, args=(t,)) for t in transports]
        t0 = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        seconds = time.perf_counter() - t0
    finally:
        for t in transports:
            t.close()
    if failed:
        raise RuntimeError(f"the {how} step failed on {failed[0]}")
    return seconds


def print_floor(lab, names: list[str], repeat: int) -> None:
    print(f"the same step without the engine, over open connections, median of {repeat} (1 host / {len(names)} hosts):")
    for how, what in (("bare", "one exec of the step, no job"), ("transport", "the SSH transport's run, no job"),
                      ("job", "the SSH transport's run as a job")):
        one = statistics.median(time_floor(lab, names[:1], how) for _ in range(repeat))
        many = statistics.median(time_floor(lab, names, how) for _ in range(repeat))
        print(f"  {what:34s} {one:5.2f} s / {many:5.2f} s   ratio {many / one:.2f} x")


def time_ansible(lab, hosts: list[str], work: Path, forks: int | None = None) -> float | None:
    ansible = Path(sys.executable).with_name("ansible-playbook")
    if not ansible.exists():
        ansible = Path(shutil.which("ansible-playbook") or "")
    if not ansible.is_file():
        return None
    inv = work / "inventory.ini"
    inv.write_text("[bench]\n" + "".join(
        f"{h} ansible_host={lab.hosts[h].address} ansible_port={lab.hosts[h].port} ansible_user=root "
        f"ansible_ssh_private_key_file={lab.client_key_path}\n" for h in hosts))
    play = work / "probe.yml"
    play.write_text("- hosts: bench\n  gather_facts: false\n  tasks:\n"
                    f"    - ansible.builtin.shell: {STEP_SCRIPT!r}\n")
    env = os.environ | {"ANSIBLE_SSH_ARGS": f"-o UserKnownHostsFile={lab.known_hosts_path} -o IdentitiesOnly=yes",
                        "ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_LOCAL_TEMP": str(work / "ans-tmp"),
                        "ANSIBLE_REMOTE_TEMP": "/tmp/.ansible-bench"}
    cmd = [str(ansible), "-i", str(inv), str(play), "-e", f"ansible_python_interpreter={sys.executable}"]
    if forks:
        cmd += ["--forks", str(forks)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=600)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError("ansible-playbook failed:\n" + r.stdout[-2000:] + r.stderr[-1000:])
    return seconds


def output_latency_ms(lab, host: str, runs: Path, lines: int = 30) -> list[float]:
    """Milliseconds from a line printed on the host to the engine's listener receiving it."""
    from app.run.engine import RunListener
    delays: list[float] = []

    class Timing(RunListener):
        def output(self, task, stream, line):
            if line.startswith("t="):
                delays.append((time.time() - float(line[2:])) * 1000)

    script = f"for i in $(seq {lines}); do echo t=$(date +%s.%N); sleep 0.05; done"
    engine = _engine(lab, [host], runs, script, Timing())
    try:
        engine.run_steps(engine.steps)
    finally:
        engine.close()
    return delays


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run")
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--no-ansible", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--floor", action="store_true",
                    help="also the step without the engine (bare exec, transport, job): what is possible here")
    ap.add_argument("--ansible-engine-only", action="store_true",
                    help="only `run --engine ansible` against plain ansible-playbook")
    ap.add_argument("--engines-only", action="store_true",
                    help="only the built-in engine against `run --engine ansible` on a small build (quick)")
    ns = ap.parse_args(argv)
    from bench.sandbox_hosts import SandboxLab
    reason = SandboxLab.unavailable_reason()
    if reason:
        print(f"run benchmark skipped: {reason}")
        return 0
    with tempfile.TemporaryDirectory(prefix="tbs-bench-run-") as tmp, SandboxLab(Path(tmp) / "lab") as lab:
        work = Path(tmp)
        t0 = time.perf_counter()
        lab.start_many(ns.hosts)
        print(f"started {ns.hosts} sshd hosts in {time.perf_counter() - t0:.2f} s")
        names = sorted(lab.hosts, key=lambda n: int(n.lstrip("h")))
        if ns.engines_only:
            from bench.ansible_engine import compare_engines
            return compare_engines(lab, names, work / "engines", ns.repeat)
        if ns.ansible_engine_only:
            from bench.ansible_engine import compare, print_rows
            print_rows(compare(lab, names, work / "ansible-engine", ns.repeat), ns.hosts, None)
            return 0
        spent: list[StepWork] = []
        ones = [time_engine(lab, names[:1], work / "runs") for _ in range(ns.repeat)]
        manys = [time_engine(lab, names, work / "runs", spent) for _ in range(ns.repeat)]
        one, many = statistics.median(t for _, t in ones), statistics.median(t for _, t in manys)
        c1, cn = statistics.median(c for c, _ in ones), statistics.median(c for c, _ in manys)
        print(f"one step ({STEP_SCRIPT!r}), median of {ns.repeat}:")
        print(f"  1 host:              {one:6.2f} s   (connecting first, in pre-flight: {c1:.2f} s)")
        print(f"  {ns.hosts} hosts in parallel: {many:6.2f} s   ratio {many / one:.2f} x one host  (target < 1.5)"
              f"   (connecting: {cn:.2f} s; step + connect {(many + cn) / (one + c1):.2f} x)")
        print_step_work(spent, ns.hosts, one)
        if ns.floor:
            print_floor(lab, names, ns.repeat)
        many = many + cn        # Ansible connects inside its run: compare like with like
        if not ns.no_ansible:
            ans = time_ansible(lab, names, work)
            if ans is None:
                print("  ansible-playbook not installed: comparison skipped (pip install ansible-core)")
            else:
                print(f"  Ansible, default forks (5): {ans:6.2f} s   engine (connect + step {many:.2f} s) is "
                      f"{ans / many:.1f} x faster  (target >= 5)")
                wide = time_ansible(lab, names, work, forks=ns.hosts)
                print(f"  Ansible, --forks {ns.hosts}:       {wide:6.2f} s   "
                      f"engine is {wide / many:.1f} x faster  (for reference)")
            if ans is not None:
                from bench.ansible_engine import compare, print_rows
                print_rows(compare(lab, names, work / "ansible-engine", ns.repeat), ns.hosts, many)
                from bench.ansible_engine import compare_engines
                compare_engines(lab, names, work / "engines", ns.repeat)
        delays = output_latency_ms(lab, names[0], work / "runs")
        if delays:
            print(f"remote line -> engine listener: median {statistics.median(delays):.1f} ms, "
                  f"max {max(delays):.1f} ms over {len(delays)} lines  (target < 100 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
