"""Steps that outlive their driver, so a resumed run can find them instead of starting them twice.

A bash or sh step runs as a *job*: a wrapper copies the script into a folder of its own on
the host (`<base>/<run id>/<step>@<host>/`), starts it in a new session (its own process
group, stdio to files, no tie to the connection), writes the session's pid to `pid` and,
when the script ends, its exit status to `exit`.  What the connection carries is only a
follower (`tail --pid`) that streams `out` and `err` and exits with the job's status; if
the driver dies, the follower dies with the connection and the job goes on.  Resume asks
the host about the job: still running (wait for it and take its result, or stop its
group), ended (take its recorded status), or gone.

Who has the last word on a job is decided on the host, atomically: the folder holds a token
file `live` that whoever settles the job renames, the job's own runner to `settled` when its
script ends, a stop to `stopping`.  rename(2) succeeds for one of them only, so a stop never
kills a job whose end is already recorded and never deletes its exit status: a job that ended
between the question "still running?" and the stop is taken as it ended.

A pid alone names no process for long: pids wrap (32,768 of them on many hosts, used up in
minutes), and a job whose runner died without recording its end (a host rebooted, a runner
killed) leaves a pid another process may own by the time a resume asks about the job or stops
it.  So every pid a job's folder holds is kept with its process's identity (the host's boot id
and the process's start time), and a pid is the job's only while a live process with that pid
has that identity: anything else is taken as ended, and never signalled.
"""
from __future__ import annotations

import base64
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from app.remote.job_output import MERGED_MARK

PID_MARK = "@testbed-studio-job "
REMOTE_BASE = ".cache/testbed-studio/jobs"      # under the login's home on an SSH host
SHELLS = ("bash", "sh")

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")

# job statuses a host reports
RUNNING, ENDED, DEAD, GONE = "running", "ended", "dead", "gone"
STOPPED = "stopped"          # what a stop reports when it stopped the job
ALREADY_RUNNING = "this step is already running on this host"
EARLIER_ENDED = "ran to its end on this host after its driver gave up on it"
FOLLOWED = "@testbed-studio-followed "     # a start that follows a copy already there: "attempt N"


# The identity of a process on a Linux host: boot id and start time (field 22 of /proc/PID/stat,
# clock ticks since boot; the boot id tells a later boot's process that started at the same tick
# and got the same pid).  Builtins only (`read`, no programs): it runs on every step.  Field 2, the
# command name, may hold spaces and parentheses: the fields are counted after its last ") ", found in
# two linear steps (the line up to it, then that prefix taken off as a literal), where dash's
# ${_ps##*") "} tries every prefix against the pattern: 70 us a read, and each job's start reads
# identities several times on every host at once.
# A pid file is one line, the pid and its identity (`read_pid FILE` sets $_rp and $_ri), written by
# one printf of one line: a shell whose printf is line-buffered (bash) writes it in one write(2), so a
# look reads all of it or none of it, never the pid without its identity.  `same_process PID
# IDENTITY`: PID is a live (not zombie) process with that identity; an identity that could not be
# read (the process had ended) is written as "?", which no process has: not trusted.  Older versions
# wrote the identity on a second line (read as well: a job started before an upgrade); a pid file of
# one line with no identity was written before identities: its pid alone is trusted ($_ri is "-"),
# as that version did, so that a job it started and that still runs is never taken as ended and its
# step run a second time beside it (an upgrade in the middle of a run).  Without a /proc of the
# shell's own pid namespace (a non-Linux sh; a container that shows its host's /proc, where /proc/PID
# is another process) there is no identity to compare: the pid alone is trusted, as it was before,
# and a pid reused since can be taken for the job there.
_IDENTITY_OF = r"""proc_is_ours() { [ -n "${_proc:-}" ] || { _proc=no
  { read -r _me _ < /proc/self/stat; } 2>/dev/null && [ "$_me" = "$$" ] && _proc=yes; }; [ "$_proc" = yes ]; }
identity_of() { _id=; proc_is_ours || return 1; case $1 in ''|*[!0-9]*) return 1;; esac
  { read -r _ps < "/proc/$1/stat"; } 2>/dev/null || return 1
  _h=${_ps%") "*}; _ps=${_ps#"$_h) "}; set -- $_ps; [ $# -ge 20 ] || return 1; _state=$1; shift 19
  [ -n "${_boot:-}" ] || { read -r _boot < /proc/sys/kernel/random/boot_id; } 2>/dev/null
  _id=${_boot:-}:$1; }
"""
IDENTITY = _IDENTITY_OF + r"""same_process() { if proc_is_ours && [ "$2" != - ]
  then [ -n "$2" ] && identity_of "$1" && [ "$_state" != Z ] && [ "$_id" = "$2" ]
  else kill -0 "$1" 2>/dev/null; fi; }
read_pid() { _rp=; _ri=; { read -r _rp _ri; [ -n "$_ri" ] || read -r _ri || _ri=-; } < "$1"
  [ -n "$_rp" ]; } 2>/dev/null
job_lives() { read_pid "$1/pid" || return 1; _p=$_rp; same_process "$_rp" "$_ri" && return 0
  read_pid "$1/child" && same_process "$_rp" "$_ri"; }
runner_is() { same_process "$1" "$2" && kill -s 0 -- -"$1" 2>/dev/null; }
read_exit() { _x=; if [ -e "$1/settled" ] && [ -s "$1/exit.new" ]; then read -r _x < "$1/exit.new"
  else read -r _x < "$1/exit"; fi; } 2>/dev/null
"""
# runner_is PID IDENTITY: PID is the job's runner, the leader of the job's group (setsid).  A pid
# trusted alone (no identity to compare) that another process took since is signalled by itself only
# when it leads a group, as the group's signal reached it before the runner was ended by its pid.
# job_lives FOLDER: the job there still runs: its session leader, or its script (a leader killed on
# its own leaves the script running in its process group), is the process its files name; sets $_p
# to the group's pid when it read one.  read_exit FOLDER: the job's exit status in $_x; its runner's
# own (exit.new, whole before `settled` exists) rather than `exit`, written in place after it.


@dataclass(frozen=True)
class Job:
    run_id: str
    step: str
    host: str
    on_started: Callable[[int], None] | None = None
    # lines of out/err an earlier driver already took: a follower starts after them
    skip_out: int = 0
    skip_err: int = 0
    # which attempt of the step this job is (0: not said): a job folder an earlier attempt left
    # (its exit status kept) is not the job of a later attempt whose start never reached the host
    attempt: int = 0
    # keep script/out/err when the job ends: a follower that cannot tell whether its driver is
    # gone (Ansible's module reads the follower's pipes itself, so no broken pipe reaches it)
    # must not remove the output a later adopting pass reads from line 1
    keep_files: bool = False
    # an earlier attempt whose end its driver never saw from the host (it timed out, was stopped,
    # or its driver died or lost the link): a job of that attempt found ended here started late,
    # after a resume had looked, and ran the step already; this start then starts nothing
    unseen_end: int = 0
    # instead of refusing, a start that finds the job of `unseen_end` or of its own attempt here
    # (started late, or by a driver that died before it journalled the start) follows that job to
    # its end, output and status, and makes it this attempt's (Ansible's passes: a refusal there
    # would fail the step while its copy runs on, and the next resume would run it again)
    follow_found: bool = False
    # a follower that takes this job as a later attempt's outcome marks its folder with that attempt:
    # a resume after its driver died asks about that attempt and finds the job
    becomes: int = 0

    @property
    def name(self) -> str:
        return f"{_SAFE.sub('_', self.run_id)}/{_SAFE.sub('_', self.step)}@{_SAFE.sub('_', self.host)}"


def _dir_assign(job: Job, base: str | None) -> str:
    # base None: under $HOME on the host; else an absolute folder on this machine
    if base is None:
        return f'd="$HOME"/{shlex.quote(REMOTE_BASE + "/" + job.name)}'
    return f"d={shlex.quote(base.rstrip('/') + '/' + job.name)}"


# pid, exit, started and ended stay behind (a few bytes): a driver that dies before it journals
# the end still finds the job's status and its real duration on resume instead of running the
# step again.  A follower streams out/err from a given line: an adopting driver reads on from
# where the dead one stopped instead of taking the same lines (and fio reports) twice.
_FOLLOW = """cd "$d" 2>/dev/null || { echo "the step's job folder $d is gone" >&2; exit 125; }
read_pid pid; pid=$_rp pid_id=$_ri; read_pid child; child=$_rp child_id=$_ri
# followed while the script is the process recorded; a pid another process has since: read as ended.
# The group announced is the one a stop at the timeout signals: only one that is the job's (else 0)
f=; same_process "$child" "$child_id" && f="-f --pid=$child"
if [ -n "$f" ] || same_process "$pid" "$pid_id"; then echo "@testbed-studio-job $pid" >&2
else echo "@testbed-studio-job 0" >&2; fi
: >> out; : >> err
{tails}n=0
while [ ! -s exit ] && same_process "$pid" "$pid_id" && [ $n -lt 500 ]; do sleep 0.02; n=$((n+1)); done
if [ ! -s exit ] && [ -e settled ] && [ -s exit.new ]; then mv exit.new exit; fi
# a tail killed by a broken pipe: the driver died, and an adopting one reads out/err on: kept
kept() { [ $o -ge 128 ] || [ $r -ge 128 ]; }
if [ -s exit ]; then kept || rm -f script out err; read_exit .; exit "$_x"; fi
# still running: this follower was cut off (its driver died and took its pipes); the job and its
# output stay as they are for the resume that adopts it
if job_lives .; then exit 124; fi
kept || rm -f script out err
# its runner kept the script's status and was killed before it claimed it: that status; else killed
x=; [ -s exit.new ] && read -r x < exit.new
[ -n "$x" ] || { echo "the step's process $pid ended without an exit status (it was killed)" >&2; x=137; }
if mv live settled 2>/dev/null || [ ! -e stopping ]; then { echo "$x" > exit; } 2>/dev/null; fi
exit "$x"
"""


_KEPT = "kept() { [ $o -ge 128 ] || [ $r -ge 128 ]; }"

# The runner is sh whatever the step's shell: it only starts the script, waits for it and records the
# end, and sh (dash where it is /bin/sh) starts in half the time bash does and forks cheaper.  Its times
# are stamps, empty files whose modification time is the host's clock when the job started and ended
# (`: >` is built in): bash's $EPOCHREALTIME would need a bash runner and date(1) two programs a step,
# and on 50 hosts at once every program a step starts is time they all wait.  A runner of bash, started
# with SSH_CLIENT set, also read the user's ~/.bashrc a second time; sh reads no such file.
_STAMP = ': > "$1/{}"; '


# Starts that find the folder already there (a retry of the step, whose earlier job's files are in
# it; or the losers of a fresh folder's claim) go on one at a time: each checks the job it finds and
# may clear it and start its own, so two at once would both find the earlier job ended and both run
# the step.  The folder's `turn` file counts the starts that went through it; a start claims the
# next (`claim.N`, noclobber: one only creates it) and, once its job is started or it has given up,
# counts itself (release_claim).  One that finds the claim taken waits until the count moves or its
# taker is gone, and looks again: it then finds that start's job.  A taker gone without counting
# itself leaves its claim to the next in line (claim.N+TAKER).  Counts and claims are written in place:
# one read empty is being written (read again).  Rare (a step's retry): programs (sleep) are fine.
_CLAIM = r"""read_mark() { _n=0; while ! read_pid "$1" && [ -e "$1" ] && [ $_n -lt 1000 ]; do _n=$((_n+1)); done; }
identity_of $$; me="$$ ${_id:-?}"; read_mark turn; turn=${_rp:-0}; k=$turn; tries=0
until { set -C; { echo "$me" > "claim.$k"; } 2>/dev/null; }; do
  set +C; read_mark "claim.$k"; by=$_rp by_id=$_ri
  n=0; while same_process "$by" "$by_id" && read_mark turn && [ "${_rp:-0}" = "$turn" ] && [ $n -lt 800 ]
  do sleep 0.05; n=$((n+1)); done
  read_mark turn
  if [ "${_rp:-0}" = "$turn" ]; then k="$k+$by"; else turn=${_rp:-0}; k=$turn; fi
  tries=$((tries+1))
  [ $tries -lt 50 ] || { echo "other starts of this step keep its folder $d: try again" >&2; exit 125; }
done
set +C; held=1
release_claim() { [ -z "$held" ] || { held=; echo $((turn+1)) > turn; }; }
trap release_claim EXIT
"""


def start_script(job: Job, script: str, shell: str, base: str | None = None, workdir: str = "",
                 merged: bool = False) -> str:
    """An sh script that starts `script` as a job and follows it to its end (`merged`: see _follow)."""
    if shell not in SHELLS:
        raise ValueError(f"a job runs bash or sh, not {shell}")
    # the session leader waits for the script as its child: tail watches the child, which its
    # parent reaps at once (an init that reaps orphans late would keep a dead leader "alive")
    # each pid with its process's identity (IDENTITY): a pid reused since is never taken for the job
    # the starter's answers to "is /proc ours" and the boot id come as $3 and $4: the same pid namespace
    # and boot, and two reads of /proc fewer on every host at once
    runner = (_IDENTITY_OF + '_proc=$3 _boot=$4; ' + _STAMP.format("started") +
              'if [ -n "$2" ]; then cd "$2"; else cd; fi; '
              f'{shell} "$1/script" > "$1/out" 2> "$1/err" < /dev/null 3>&- & c=$!; '
              # signals sent to the job's group by anyone but a stop do not end the runner, so it records
              # the script's real status: a script's own `kill 0` (bash's `trap 'kill 0' EXIT`, that
              # ends its helpers) was taken for the job killed.  Ignored only now: the script keeps the
              # default.  A stop ends the runner first, by its pid (stop_script, kill_script)
              "trap '' HUP INT QUIT TERM USR1 USR2; "
              # the pids are written while the script starts, not before it (a look at the folder until
              # then waits on the starter: WAIT_FOR_START).  The script is the runner's child, not
              # reaped before this (a shell may reap an ended one at once: then no identity, and it is
              # taken as ended, which it is); each file is one write of one line (IDENTITY), the
              # child's before the job's
              'identity_of $c; printf "%s %s\\n" $c "${_id:-?}" > "$1/child"; '
              'identity_of $$; printf "%s %s\\n" $$ "${_id:-?}" > "$1/pid"; '
              # the starter learns the child's pid on fd 3; a starter gone since must not end the
              # runner with SIGPIPE (ignored only now: the script started with the default)
              "trap '' PIPE; { echo $c >&3; } 2>/dev/null; exec 3>&-; wait $c; s=$?; "
              # the status is kept first, then the last word claimed: a stop that claims it in between
              # finds the status and takes the job as ended.  exit.new is whole before the claim (the
              # rename) that makes it the status; `exit` follows for the tests of "ended" (read_exit)
              + _STAMP.format("ended") + 'echo $s > "$1/exit.new"; '
              'if mv "$1/live" "$1/settled" 2>/dev/null; then echo $s > "$1/exit"; fi')
    found = _later_attempt(job) + _found(job, merged) + _unseen_end(job)
    return f"""{_dir_assign(job, base)}
{IDENTITY}# a new folder is the start's that writes its mark first: noclobber (set -C) creates the mark only where
# there is none, atomically (O_EXCL), so of two starts that made the folder at once one is fresh and
# the other waits for it below.  Built in, where a folder made aside and renamed into place took mv(1)
# on every step.  A look that finds the folder in the instant before its mark waits for one (_WAIT)
fresh=
if [ ! -d "$d" ]; then
  identity_of $$
  mkdir -p "$d" || {{ echo "cannot make the step's job folder $d" >&2; exit 125; }}
  set -C; {{ printf '%s %s\\n' $$ "${{_id:-?}}" > "$d/starting"; }} 2>/dev/null && fresh=1; set +C
fi
# another start of the step under way here (a driver killed mid-start whose start went on): its
# job's pid first, so that the checks below see that job instead of an empty folder
if [ -z "$fresh" ]; then
{_WAIT}fi
# the starter's pid first: until the job's own pid is there, a look at the folder waits on it (a
# fresh folder came with it; a folder found is claimed first: _CLAIM)
cd "$d" || {{ echo "cannot make the step's job folder $d" >&2; exit 125; }}
release_claim() {{ :; }}
[ -n "$fresh" ] || {{
{_CLAIM}echo "$me" > starting
}}
# a copy of the step still runs here (started by a driver that died before its journal said so):
# never a second one beside it
{found}if [ ! -s exit ] && job_lives .; then
  echo "{ALREADY_RUNNING} (process group $_p); resume the run to adopt it or stop it" >&2; exit 125
fi
[ -n "$fresh" ] || rm -f pid pid.new child child.new exit exit.new exit.tmp started ended live settled stopping attempt
{_attempt_mark(job)}{_write_script(script)} > script || exit 125
: > out; : > err; : > live
# the runner is nobody's child here (the substitution's shell exits at once), so no zombie keeps
# tail waiting; it hands over its child's pid on fd 3 and closes it: no polling for the start
child=$(setsid sh -c {shlex.quote(runner)} job "$d" {shlex.quote(workdir)} "${{_proc:-}}" "${{_boot:-}}" \
  3>&1 < /dev/null > /dev/null 2>&1 &)
[ -n "$child" ] && [ -s child ] || {{ echo "the step did not start" >&2; exit 125; }}
release_claim
{_follow(job, merged)}"""


def _write_script(script: str) -> str:
    """A command that prints `script` exactly: the shell's own printf (no program started), but a
    NUL, which no shell word can hold, goes through base64."""
    if "\x00" not in script:
        return f"printf %s {shlex.quote(script)}"
    return f"printf %s {base64.b64encode(script.encode()).decode()} | base64 -d"


# A job's folder with neither its pid nor its exit is a start in progress while its starter lives
# (start_script writes the starter's pid before anything), and one that never started once the
# starter is gone.  A look that took a start in progress for "never started" and removed the folder
# made the start fail (its files had nowhere to go) and its step be taken for one never run.
# Without the starter's mark yet (the instant between its mkdir and its mark) it waits up to 5 s for
# one: a starter held off a loaded host's cores still writes it; only one killed in that instant
# leaves a folder without a mark, and each look at it waits those seconds (a resume's status, then
# its stop: 10 s) until a start marks it or a stop removes it.
_WAIT = r"""starting() {
  [ -d "$d" ] && [ ! -s "$d/pid" ] && [ ! -s "$d/exit" ] || return 1
  if read_pid "$d/starting"; then same_process "$_rp" "$_ri"; else [ $n -lt 100 ]; fi
}
n=0; while starting && [ $n -lt 800 ]; do sleep 0.05; n=$((n+1)); done
"""
WAIT_FOR_START = IDENTITY + _WAIT


def _attempt_mark(job: Job) -> str:
    return f"echo {int(job.attempt)} > attempt\n" if job.attempt > 0 else ""


def _later_attempt(job: Job) -> str:
    """A start that reaches the host after a later attempt of its step began there (it was held up
    in a cut link while its driver gave up on it and a resume went on) starts nothing."""
    if job.attempt <= 0:
        return ""
    return (f'if [ -s attempt ] && read -r a < attempt && [ "$a" -gt {int(job.attempt)} ] 2>/dev/null; then\n'
            f'  echo "attempt $a of this step already started here: this start of attempt '
            f'{int(job.attempt)} came too late (its driver had given up on it) and starts nothing" >&2; exit 125\nfi\n')


def _found(job: Job, merged: bool = False) -> str:
    """With `job.follow_found`: the copy of this step's unseen or own attempt found here (running,
    or ended with its status) is followed as this attempt, never started a second time."""
    if not job.follow_found or job.attempt <= 0:
        return ""
    ours = f'[ "$a" = {int(job.attempt)} ]'
    if job.unseen_end > 0:
        ours = f'{{ {ours} || [ "$a" = {int(job.unseen_end)} ]; }}'
    there = '{ [ -s exit ] || job_lives .; }'
    return (f'if [ -s attempt ] && read -r a < attempt && {ours} && {there}; then\n'
            f'  echo "{FOLLOWED}$a" >&2\n'
            f'  echo "attempt $a of this step already started on this host (its start reached the host '
            'after the driver last looked, or its driver died before it journalled it): followed to its end as '
            f'attempt {int(job.attempt)}, not started a second time" >&2\n'
            f'  echo {int(job.attempt)} > attempt\n  release_claim\n{_follow(job, merged)}\nfi\n')


def _unseen_end(job: Job) -> str:
    """A start that finds the job of the earlier attempt whose end its driver never saw ended here
    (its own start was held up in a cut link and landed after the resume looked) starts nothing:
    the step already ran; the driver takes that attempt's output and status."""
    if job.unseen_end <= 0:
        return ""
    return (f'if [ -s attempt ] && read -r a < attempt && [ "$a" = {int(job.unseen_end)} ] && [ -s exit ]; then\n'
            f'  read_exit .; echo "attempt {int(job.unseen_end)} of this step {EARLIER_ENDED} (exit status $_x): '
            'not started a second time" >&2; exit 125\nfi\n')


def _other_attempt(job: Job) -> str:
    """A status test: the folder holds the job of another attempt of the step (its own marker)."""
    if job.attempt <= 0:
        return "false"
    # a group: it is negated and or-ed in the scripts that use it (`! A && B` would be `(! A) && B`)
    return f'{{ [ -s "$d/attempt" ] && read -r a < "$d/attempt" && [ "$a" != {int(job.attempt)} ]; }}'


# A tail per file: the step's stdout on the follower's stdout, its stderr on the follower's stderr.
_TWO_TAILS = """tail -s 0.05 $f -n +{err_from} err >&2 & e=$!
tail -s 0.05 $f -n +{out_from} out; o=$?
wait $e; r=$?
"""
# One tail for both files, its stdout taken apart by the driver (app/remote/job_output.py), which
# learns the headers from the folder named first
_ONE_TAIL = """printf '%s%s\\n' {mark} "$d"
tail -s 0.05 $f -n +{out_from} "$d/out" "$d/err"; o=$?; r=$o
"""


def _follow(job: Job, merged: bool = False) -> str:
    """The follower's text.  `merged`: one tail whose stdout the driver takes apart (FollowedOutput),
    where both files are read from the same line (a fresh start's); else a tail per file."""
    out_from, err_from = max(0, job.skip_out) + 1, max(0, job.skip_err) + 1
    if merged and out_from == err_from:
        tails = _ONE_TAIL.replace("{mark}", shlex.quote(MERGED_MARK.decode()))
    else:
        tails = _TWO_TAILS.replace("{err_from}", str(err_from))
    text = _FOLLOW.replace("{tails}", tails.replace("{out_from}", str(out_from)))
    return text.replace(_KEPT, "kept() { true; }") if job.keep_files else text


def follow_script(job: Job, base: str | None = None, merged: bool = False) -> str:
    """Streams a job's output from the line after `job.skip_out`/`skip_err` (from its start
    when they are 0) and exits with its status once it ends.  `merged`: see _follow."""
    mark = f'[ -d "$d" ] && echo {int(job.becomes)} > "$d/attempt"\n' if job.becomes > 0 else ""
    return f"{_dir_assign(job, base)}\n{IDENTITY}{mark}{_follow(job, merged)}"


# When a job started and ended (`stamp_times FOLDER` sets $_ts and $_te, empty when not known): its
# stamps' modification times, on the host's clock.  One program reads both, stat (GNU: to the
# nanosecond; BusyBox: whole seconds): the Ansible chain reads a step's times after every step, and
# a date -r a stamp was two programs a step there.  Without stat -c, date -r (GNU and BusyBox; where %N
# is not known the seconds are whole).  A stamp with a time in it was written by an older version's
# runner: that time.  Case patterns open with "(": the text runs inside $( ) too.
_STAMP_TIMES = r"""stamp_times() { _ts=; _te=; { read -r _ts < "$1/started"; } 2>/dev/null
  { read -r _te < "$1/ended"; } 2>/dev/null; [ -z "$_ts" ] && [ -e "$1/started" ] || return 0
  _st=$(stat -c %.9Y "$1/started" "$1/ended" 2>/dev/null); _ts=${_st%%[!0-9.]*}
  case $_st in (*[!0-9.]*[0-9]) _te=${_st##*[!0-9.]} ;; esac
  case $_ts in (''|.*) _ts=$(date -r "$1/started" +%s.%N 2>/dev/null)
    if [ -e "$1/ended" ]; then _te=$(date -r "$1/ended" +%s.%N 2>/dev/null); fi ;; esac; }
"""


def times_script(job: Job, base: str | None = None) -> str:
    """Prints one line: when the job started and ended on the host's clock (seconds since the
    epoch; `-` for one not known)."""
    return f"""{_dir_assign(job, base)}
{_STAMP_TIMES}stamp_times "$d"; echo "${{_ts:--}} ${{_te:--}}"
"""


def parse_times(text: str) -> tuple[float | None, float | None]:
    """(started, ended) from times_script's line; GNU date's %N, else whole seconds."""
    def one(word: str) -> float | None:
        try:
            return float(word)
        except ValueError:
            head = word.split(".", 1)[0]
            return float(head) if head.isdigit() else None
    words = text.split()
    return (one(words[0]) if words else None), (one(words[1]) if len(words) > 1 else None)


def status_script(job: Job, base: str | None = None) -> str:
    """Prints one line: running PID | ended STATUS | dead PID | gone.  The folder of another
    attempt of the step than `job.attempt` is `gone`: this attempt's job never started there."""
    return f"{_dir_assign(job, base)}\n{WAIT_FOR_START}{status_lines(job)}\n"


def status_lines(job: Job) -> str:
    """status_script's answer, once `$d` is set and a start under way has been waited for."""
    return f"""if [ ! -d "$d" ] || {_other_attempt(job)}; then echo {GONE}
elif [ -s "$d/exit" ]; then read_exit "$d"; echo "{ENDED} $_x"
elif job_lives "$d"; then echo "{RUNNING} $_p"
else p=; {{ read -r p _ < "$d/pid"; }} 2>/dev/null; echo "{DEAD} $p"; fi"""


# Whether a process group still has a member that is not a zombie.  An init that reaps orphans
# late (a container's) keeps a stopped job's group "alive" for kill -0 until the wait runs out;
# /proc says they have all ended.  Without a /proc that lists the group it answers yes: the wait
# goes on as before.
_LIVE_IN_GROUP = r"""live_in_group() {
  [ -r /proc/self/stat ] || return 0
  cat /proc/[0-9]*/stat 2>/dev/null |
    awk -v g="$1" '{ sub(/.*\) /, ""); if ($3 == g) { seen = 1; if ($1 != "Z") live = 1 } }
                   END { exit (live || !seen) ? 0 : 1 }'
}
"""


def stop_script(job: Job, base: str | None = None) -> str:
    """Stops the job's whole process group (KILL to its runner, TERM to the group, then KILL) and
    removes its folder, only if the job has not ended and the folder is `job.attempt`'s (a job is
    named by its run, step, host and attempt; another's process group is never signalled), after
    waiting for a start under way:
    prints one line, `stopped SECONDS` (how long it had run), `ended STATUS` (it ended before the
    stop could claim it; its folder and status are kept) or `gone`."""
    return f"""{_dir_assign(job, base)}
{WAIT_FOR_START}{_LIVE_IN_GROUP}{_STAMP_TIMES}cd "$d" 2>/dev/null || {{ echo {GONE}; exit 0; }}
# the folder holds another attempt's job: not this one's to stop
if {_other_attempt(job)}; then echo {GONE}; exit 0; fi
if [ -s exit ]; then read_exit .; echo "{ENDED} $_x"; exit 0; fi
if mv live stopping 2>/dev/null || [ -e stopping ] || [ ! -e settled ]; then
  # the last word is ours (or an older job without the token): the job has no recorded end
  read_pid child; child=$_rp child_id=$_ri
  if [ -n "$child" ] && ! same_process "$child" "$child_id" && job_lives .; then
    # its script has ended and been reaped, its runner lives: its status is being written, take that
    n=0; while [ ! -s exit.new ] && [ $n -lt 50 ]; do sleep 0.02; n=$((n+1)); done
  fi
  if [ -s exit.new ]; then mv exit.new exit; read -r x < exit; echo "{ENDED} $x"; exit 0; fi
  # only a group that is the job's is signalled: its leader or its script is the process recorded (a
  # pid reused since names a stranger).  Signalled once, the group keeps its id while any member
  # lives (and a pid is given out again only once the kernel has gone round the others), so the wait
  # and the KILL reach the job's processes only.
  if read_pid pid && pid=$_rp pid_id=$_ri && \
     {{ same_process "$pid" "$pid_id" || same_process "$child" "$child_id"; }}; then
    # its runner first (it outlives signals to its group): it ends without recording a status, as stopped
    runner_is "$pid" "$pid_id" && kill -s KILL "$pid" 2>/dev/null
    kill -s TERM -- -"$pid" 2>/dev/null
    n=0; while kill -s 0 -- -"$pid" 2>/dev/null && [ $n -lt 50 ] && live_in_group "$pid"; do sleep 0.1; n=$((n+1)); done
    kill -s KILL -- -"$pid" 2>/dev/null
  fi
  # how long it ran on the host (whole seconds, host clock): the run record keeps its real time
  # (not known: a job whose runner never started, or a stamp on another clock than date's, as an NFS
  # server's: never the seconds since 1970, never fewer than none)
  stamp_times .; began=${{_ts%%.*}}; now=$(date +%s 2>/dev/null); ran=
  case "$began.$now" in .*|*.|*[!0-9.]*) ;; *) [ "$now" -lt "$began" ] || ran=$((now - began)) ;; esac
  cd / && rm -rf "$d"; echo "{STOPPED} $ran"
else
  # the job's runner claimed its end first: its status follows at once
  n=0; while [ ! -s exit ] && [ $n -lt 250 ]; do sleep 0.02; n=$((n+1)); done
  [ -s exit ] || {{ [ -s exit.new ] && mv exit.new exit; }}
  read_exit .; echo "{ENDED} $_x"
fi
"""


def kill_script(job: Job, base: str | None = None) -> str:
    """A transport's stop of a job it follows (its timeout, the user's Stop): KILL to its runner, TERM
    to the job's process group, KILL a second later; only a group that is the job's (IDENTITY).  The folder and
    its token are left for the resume, which decides on them (stop_script)."""
    return f"""{_dir_assign(job, base)}
{IDENTITY}if job_lives "$d"; then p=$_p
  # its runner first, by its pid while it is the one recorded (it outlives signals to its group)
  read_pid "$d/pid" && runner_is "$_rp" "$_ri" && kill -s KILL "$_rp" 2>/dev/null
  kill -s TERM -- -"$p" 2>/dev/null; sleep 1; kill -s KILL -- -"$p" 2>/dev/null
fi
true
"""


def identity_of(pid: int) -> str | None:
    """IDENTITY's identity of a process on this machine (Linux), None where there is none to read."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open(f"/proc/{int(pid)}/stat") as f:
            fields = f.read().rsplit(") ", 1)[-1].split()
    except (OSError, ValueError):
        return None
    return f"{boot}:{fields[19]}" if len(fields) > 19 and fields[0] != "Z" else None


def group_of(folder: str) -> int | None:
    """The process group of the job in `folder` on this machine, if it is still the job's (IDENTITY:
    its leader or its script is the process recorded); None when it is not, or not known."""
    found: list[tuple[int, str]] = []
    for name in ("pid", "child"):
        try:
            with open(f"{folder}/{name}") as f:
                lines = f.read().split("\n")
        except OSError:
            lines = [""]
        words = lines[0].split()
        if words and words[0].isdigit():      # the pid and its identity (IDENTITY); older versions: on a second line
            if len(words) > 1:
                found.append((int(words[0]), words[1]))
            else:                             # older: the identity on the second line, or none (before identities)
                found.append((int(words[0]), lines[1].strip() if len(lines) > 2 else "-"))
        elif name == "pid":
            return None
    group = found[0][0]
    if any(token == "-" for _, token in found):
        return group
    try:        # no /proc of this process's pid namespace, no identity to compare: the pid alone, as before
        with open("/proc/self/stat") as f:
            proc_is_ours = f.read().split(" ", 1)[0] == str(os.getpid())
    except OSError:
        proc_is_ours = False
    if not proc_is_ours:
        return group
    return group if any(token and identity_of(pid) == token for pid, token in found) else None


def parse_status(text: str) -> tuple[str, int | None]:
    """A status or stop script's line as (status, pid or exit status)."""
    words = text.split()
    if not words or words[0] not in (RUNNING, ENDED, DEAD, GONE, STOPPED):
        return GONE, None
    number = int(words[1]) if len(words) > 1 and words[1].lstrip("-").isdigit() else None
    return words[0], number
