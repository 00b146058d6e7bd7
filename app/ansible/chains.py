"""A host's consecutive bash/sh steps of one play as one Ansible task: a chain.

Ansible costs about 55 ms of the controller's CPU per task and host before the task does
anything (a worker forked, its connection, its result and callbacks; issue 33 measured 50
hosts x 6 tasks at 26 s of a loaded 2-core machine with `true` as every task).  The run engine
therefore hands a host's run of job steps in a play to the host as one `raw` task, the chain,
which starts each step as the job it would have been (app.remote.jobs: same folder, same
attempt mark, same follower) one after the other, and stops at the first that does not succeed.

What the engine relies on, and how the chain keeps it:
* each step journalled once: the chain marks where each step's output begins and how it ended
  (exit status, its start and end on the host's clock, whether it timed out); Ansible hands the
  task's output over when the chain ends, and the engine journals each step from the marks;
* a step's own timeout: each step is followed under `timeout` with the engine's per-step
  seconds; at the timeout the chain stops the job (jobs.stop_script) and ends, reporting it;
* no step twice after a driver that died: before it starts, the engine journals a "chain"
  record naming every step and attempt the chain may start.  The chain writes its pid (and the
  process's start time, so a reused pid is never taken for it) to a file, and writes a mark
  before each step: a chain whose driver is gone dies of the broken pipe before its next step.
  A resume (or a stop) first kills the chain itself (kill_script), then asks each step's job:
  one that never started is `gone` and runs as usual, any other is adopted or stopped as a
  leftover of the built-in engine is.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from app.remote import jobs

MARK = "@testbed-studio-chain "
CHAIN_STEP = "chain"         # the chain's own folder: <base>/<run>/chain@<host> (steps are numbers)
# ansible's own timeout of the whole chain is a backstop: the chain times each step itself
BACKSTOP_S = 120


@dataclass
class Member:
    step: str
    attempt: int                 # the attempt this step's job is, if the chain starts it
    script: str
    shell: str
    timeout_s: int
    # a copy of this step on the host that the journal never saw start or end is followed, not
    # started again (app.remote.jobs.Job.unseen_end, follow_found)
    unseen_end: int = 0
    follow_found: bool = False


@dataclass
class StepReport:
    """One step of a chain as its host reported it."""
    step: str
    lines: list[tuple[str, str]] = field(default_factory=list)      # (stdout | stderr, line)
    ended: bool = False
    exit_code: int | None = None
    timed_out: bool = False
    started_at: float | None = None      # on the host's clock, seconds since the epoch
    ended_at: float | None = None


def _chain_dir(run_id: str, host: str, base: str | None) -> str:
    return jobs._dir_assign(jobs.Job(run_id, CHAIN_STEP, host), base).replace("d=", "c=", 1)


def _job(run_id: str, host: str, member: Member) -> jobs.Job:
    return jobs.Job(run_id, member.step, host, keep_files=True, attempt=member.attempt,
                    unseen_end=member.unseen_end, follow_found=member.follow_found)


# the chain's pid and its process's identity (jobs.IDENTITY: boot id and start time): a pid the kernel
# gave to another process since is not the chain's; a killed chain its parent has not reaped yet (Z)
# is gone.  Without a /proc to compare, no chain is taken as alive (never killed by its pid alone).
_ALIVE = jobs.IDENTITY + ('alive() { read_pid "$c/pid" && identity_of "$_rp" && [ "$_state" != Z ] '
                          '&& [ "$_id" = "$_ri" ]; }')


def chain_script(run_id: str, host: str, members: list[Member], base: str | None, workdir: str) -> str:
    """An sh script that runs the members one after the other as jobs (see the module's text)."""
    parts = [_chain_dir(run_id, host, base),
             'mkdir -p "$c" || { echo "cannot make the chain\'s folder $c" >&2; exit 125; }',
             _ALIVE,
             'if alive; then echo "steps of this run are already running on this host (process '
             '$_rp); resume the run to adopt or stop them" >&2; exit 125; fi',
             'identity_of $$; printf "%s\\n%s\\n" $$ "$_id" > "$c/pid.new" && mv "$c/pid.new" "$c/pid"']
    for m in members:
        job = _job(run_id, host, m)
        start = jobs.start_script(job, m.script, m.shell, base, workdir)
        begin = shlex.quote(f"{MARK}{m.step} begin")
        parts.append(f"""echo {begin}; echo {begin} >&2
timeout {int(m.timeout_s)} sh -c {shlex.quote(start)}; s=$?; how=ran
{jobs._dir_assign(job, base)}
if [ $s -eq 124 ] && [ ! -s "$d/exit" ]; then
  r=$(sh -c {shlex.quote(jobs.stop_script(job, base))})
  case "$r" in "{jobs.ENDED} "*) s=${{r#{jobs.ENDED} }} ;; *) how=timeout ;; esac
fi
t=$( {jobs.times_script(job, base)})
echo "{MARK}{m.step} end $s $how $t" >&2
[ "$s" = 0 ] || {{ rm -f "$c/pid"; exit "$s"; }}""")
    parts.append('rm -f "$c/pid"\nexit 0')
    return "\n".join(parts) + "\n"


def kill_script(run_id: str, host: str, base: str | None) -> str:
    """Ends the chain of this run on the host, if one still runs, and waits until it is gone: it
    starts no step after this.  The job it was following goes on (its own session)."""
    return f"""{_chain_dir(run_id, host, base)}
{_ALIVE}
if alive; then p=$_rp; kill -s KILL "$p" 2>/dev/null
  n=0; while alive && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done
fi
rm -f "$c/pid"
"""


def settle_script(run_id: str, host: str, member: Member, base: str | None) -> str:
    """After kill_script: stop the member's job unless it ended (jobs.stop_script); `gone` when
    this attempt of the step never started on the host."""
    job = _job(run_id, host, member)
    return f"""{jobs._dir_assign(job, base)}
{jobs.WAIT_FOR_START}if [ ! -d "$d" ] || {jobs._other_attempt(job)}; then echo {jobs.GONE}
elif [ ! -s "$d/pid" ] && [ ! -s "$d/exit" ]; then rm -rf "$d"; echo {jobs.GONE}
else sh -c {shlex.quote(jobs.stop_script(job, base))}; fi
"""


def status_script(run_id: str, host: str, member: Member, base: str | None) -> str:
    """After kill_script: what the host says of this attempt of the step (jobs.status_script);
    a folder the chain made but whose job it never started is `gone`."""
    job = _job(run_id, host, member)
    return f"""{jobs._dir_assign(job, base)}
{jobs.WAIT_FOR_START}if [ -d "$d" ] && [ ! -s "$d/pid" ] && [ ! -s "$d/exit" ] && ! {jobs._other_attempt(job)}; then
  rm -rf "$d"; echo {jobs.GONE}
else {jobs.status_lines(job)}
fi
"""


def parse(stdout: str, stderr: str) -> dict[str, StepReport]:
    """Each step's output and end from a chain's output, by step, in the order they ran."""
    reports: dict[str, StepReport] = {}
    for stream, text in (("stdout", stdout), ("stderr", stderr)):
        current: StepReport | None = None
        for line in text.splitlines():
            if line.startswith(MARK):
                words = line[len(MARK):].split()
                if len(words) >= 2 and words[1] == "begin":
                    current = reports.setdefault(words[0], StepReport(words[0]))
                elif len(words) >= 4 and words[1] == "end" and words[0] in reports:
                    r = reports[words[0]]
                    r.ended = True
                    r.exit_code = int(words[2]) if words[2].lstrip("-").isdigit() else None
                    r.timed_out = words[3] == "timeout"
                    r.started_at, r.ended_at = jobs.parse_times(" ".join(words[4:6]))
                continue
            if current is not None and not (stream == "stderr" and line.startswith(jobs.PID_MARK)):
                current.lines.append((stream, line))
    return reports
