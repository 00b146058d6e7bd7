"""From a generated methodology to what a run executes.

Each step becomes a `RunStep` with one `Task` per host it touches.  Steps are grouped into
stages that run one after the other; inside a stage, the lanes (one per target host) run in
parallel and each lane runs its steps in order.  That is the dependency model:

* a section is a barrier: the storage is configured before any host logs in to it;
* within a build section (network, storage, ...) a host's steps depend only on that host's
  earlier steps, so the same step on many hosts runs in parallel;
* the `run` section is a timeline: consecutive steps made from the same template (start the
  load on every client) form one stage, so they start together, and stages follow in order.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from app.run.journal import PENDING, SUCCEEDED
from topology import quoting
from topology.methodology import Methodology, Step

MANUAL_HOST = "-"      # the lane of a manual step that names no component


@dataclass(frozen=True)
class Task:
    step: str            # step number "3.12"
    host: str            # component id, or MANUAL_HOST
    shell: str = ""      # "" = manual: a person does it and ticks it off
    script: str = ""
    verify: str | None = None
    platform: str = ""
    ansible: dict | None = field(default=None, compare=False)   # the module the Ansible export uses
    # where in the test the step is (configuration, phase, scenario, level, repetition): kept with its results
    position: dict | None = field(default=None, compare=False)

    @property
    def manual(self) -> bool:
        return not self.script

    @property
    def key(self) -> tuple[str, str]:
        return self.step, self.host


@dataclass
class RunStep:
    number: str
    text: str
    section: str               # section key: "network", "run" ...
    section_title: str
    target: str
    tasks: list[Task]
    template: str = ""
    why_manual: str = ""       # shown when an automatable step must be done by hand
    devices: list[str] = field(default_factory=list)   # a step that writes to disks: each, by identity
    stated_seconds: float | None = None     # how long the step says it runs (a load's stated duration)
    table: tuple[list[str], list[list[str]]] | None = None   # the values a manual step refers to ("below")
    fetched_by: str = ""       # a "copy the results" step the engine does itself when this load step ends
    during_loads: tuple[str, ...] = ()      # a failover step said before the loads it happens during: theirs

    @property
    def destructive(self) -> bool:
        """It writes to a block device: a run asks before it (`--yes-destructive`)."""
        return bool(self.devices)

    @property
    def manual(self) -> bool:
        return all(t.manual for t in self.tasks)

    @property
    def hosts(self) -> list[str]:
        return list(dict.fromkeys(t.host for t in self.tasks))


@dataclass
class Stage:
    title: str
    lanes: dict[str, list[RunStep]] = field(default_factory=dict)   # lane host -> its steps in order

    @property
    def steps(self) -> list[RunStep]:
        seen: dict[str, RunStep] = {}
        for lane in self.lanes.values():
            for s in lane:
                seen.setdefault(s.number, s)
        return sorted(seen.values(), key=lambda s: step_sort_key(s.number))


# which automation a host can run, by how it is reached
_SHELLS_FOR_TRANSPORT = {"ssh": ("bash", "sh"), "winrm": ("powershell", "cmd"),
                         "local": ("bash", "sh", "vendor-cli")}


def run_steps(meth: Methodology, transports: dict[str, str]) -> list[RunStep]:
    """`transports`: host id -> "ssh" | "winrm" | "local" for the hosts the bed can reach.
    A step whose target cannot be reached, or whose values are incomplete, stays manual and
    says why."""
    out: list[RunStep] = []
    for section in meth.sections:
        for step in section.steps:
            out.append(_run_step(step, section.key, section.title, transports))
    _results_the_engine_fetches(out)
    _said_before_the_loads(out)
    return out


UNDER_LOAD = ("#part-fail-under-load", "#check-under-load", "#check-paths-under-load", "#part-restore-under-load",
              "#check-back-under-load")


def _said_before_the_loads(steps: list[RunStep]) -> None:
    """A failover under load lists what happens while the loads run before the load steps, for the person who
    acts on the clock; the run reaches those steps first, so they were ticked off before anything had been
    taken out, with nothing on screen or in the record to say so.  Each now says where the run stops for it
    that it happens during the loads that follow, and which step asks afterwards what the checks showed."""
    for k, s in enumerate(steps):
        if s.section != "run" or not s.template.endswith(UNDER_LOAD):
            continue
        later = steps[k + 1:]
        first = next((j for j, o in enumerate(later) if o.template.endswith("#load")), None)
        if first is None:
            continue
        loads = [o.number for o in itertools.takewhile(lambda o: o.template.endswith("#load"), later[first:])]
        confirm = next((o.number for o in later[first:] if o.template.endswith("#confirm-under-load")), "")
        s.during_loads = tuple(loads)
        which = f"steps {loads[0]} to {loads[-1]}" if len(loads) > 1 else f"step {loads[0]}"
        s.why_manual = (f"it happens while the loads of {which} run, which come after it: read it now and Mark done "
                        "to reach them, then do it on the clock once they start"
                        + (f"; step {confirm} asks, once they have ended, what the checks showed" if confirm else ""))


def mark_note(step: RunStep, status_of, where: str) -> str:
    """The note a person's tick or skip leaves in the run's record: for a step said before the loads it happens
    during, whether those loads had begun (the as-run table showed 'take port 1 of swA out of service: done at
    12:08:05' for loads that began at 12:08:21)."""
    if step.during_loads and all(status_of(n) == PENDING for n in step.during_loads):
        which = ", ".join(step.during_loads)
        return f"{where}, before the loads it happens during began (step(s) {which})"
    return where


def _results_the_engine_fetches(steps: list[RunStep]) -> None:
    """A step that asks a person to copy a load's result files, where the engine fetches them
    itself when that load step ends (its template lists them): the engine ticks it off."""
    load_of: dict[str, str] = {}
    for s in steps:
        if s.template.endswith("#load"):
            for t in s.tasks:
                if not t.manual and (t.ansible or {}).get("results"):
                    load_of[t.host] = s.number
        elif s.template.endswith("#collect-results") and s.manual and s.target in load_of:
            s.fetched_by = load_of[s.target]
            s.why_manual = (f"the engine takes these files from {s.target} when step {s.fetched_by} ends and ticks "
                            "this step off; a person copies them only when that fails")


def _run_step(step: Step, section: str, title: str, transports: dict[str, str]) -> RunStep:
    tasks: list[Task] = []
    why = ""
    if step.automation and step.unresolved:
        why = "the bed lacks " + ", ".join(step.unresolved)
    elif not step.automation:
        # why the procedure does it by hand (a write to a disk it cannot name by identity, a value not stated, no
        # template for the platform): said where the run stops for it, not only in the printed procedure
        why = step.manual_reason
    elif step.automation:
        unreachable: list[str] = []
        no_invoke = False
        for cmd in step.automation:
            host = cmd.target or step.target
            transport = transports.get(host)
            if transport is None:
                unreachable.append(host or "(no host)")
                continue
            if cmd.shell not in _SHELLS_FOR_TRANSPORT[transport]:
                continue    # an alternative for another platform
            if cmd.shell == "vendor-cli":
                if not cmd.invoke:
                    no_invoke = True
                    continue
                tasks.append(Task(step.number, host, "bash", vendor_cli_script(cmd.script, cmd.invoke),
                                  vendor_cli_script(cmd.verify, cmd.invoke) if cmd.verify else None, cmd.platform,
                                  position=step.position))
                continue
            tasks.append(Task(step.number, host, _host_shell(cmd), cmd.script, cmd.verify, cmd.platform,
                              cmd.ansible, step.position))
        if not tasks:
            why = ("no remote access is set for " + ", ".join(dict.fromkeys(unreachable)) if unreachable
                   else "the vendor CLI cannot be started: its template has no `invoke:` line or the bed "
                        "lacks a value it needs (the array's management addresses)" if no_invoke
                   else "no automation for how the host is reached")
    if not tasks:
        tasks = [Task(step.number, step.target or MANUAL_HOST, position=step.position)]
    return RunStep(step.number, step.text, section, title, step.target or MANUAL_HOST, tasks,
                   step.template, why, list(step.devices) if step.destructive else [],
                   stated_seconds=_stated_seconds(step), table=step.table)


def _host_shell(cmd) -> str:
    """The shell a script is started with on its host: ESXi has busybox sh and no bash (its
    templates are POSIX sh, checked with `sh -n` and `shellcheck -s sh`)."""
    return "sh" if cmd.platform == "esxi" and cmd.shell == "bash" else cmd.shell


def _stated_seconds(step: Step) -> float | None:
    shown = step.values.get("workload.duration_s")
    try:
        seconds = float(getattr(shown, "text", shown))
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def table_text(step: RunStep) -> str:
    """The values a manual step refers to ("with the parameters below"), as aligned columns
    ("" for a step without them): the run shows them with the step, as the methodology does."""
    if not step.table or not step.table[1]:
        return ""
    header, rows = step.table
    widths = [max(len(str(r[i])) for r in [header, *rows] if i < len(r)) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def vendor_cli_script(statements: str, invoke: str) -> str:
    """The bash script that runs vendor-CLI statements on this workstation.  The statements
    (with the vendor language's own quoting) reach the CLI as data: bash sees them only as
    one single-quoted word written to a private file, and `invoke` reads that file."""
    return ('STATEMENTS=$(mktemp) || exit 1\n'
            "trap 'rm -f -- \"$STATEMENTS\"' EXIT\n"
            f"printf '%s\\n' {quoting.bash(statements)} > \"$STATEMENTS\" || exit 1\n"
            f"{invoke}\n")


def stages(steps: Sequence[RunStep]) -> list[Stage]:
    out: list[Stage] = []
    previous: RunStep | None = None
    for s in steps:
        new_stage = (previous is None or s.section != previous.section
                     or (s.section == "run" and _template_id(s) != _template_id(previous))
                     or (s.section == "run" and s.target in out[-1].lanes))
        if new_stage:
            title = s.section_title if s.section != "run" else f"{s.section_title}: {s.number}"
            out.append(Stage(title))
        out[-1].lanes.setdefault(s.target, []).append(s)
        previous = s
    return out


def started_together(steps: Sequence[RunStep], step: RunStep, runnable) -> list[RunStep]:
    """What "Run step" on STEP starts.  In the run section the steps of its stage start together (the
    procedure's "start the loads of steps 7.64 to 7.65 at the same time"): one load run alone ran to
    its end before the person could start the next, and the run then held two loads that never ran
    side by side.  `runnable(step)`: a stage member not yet run (the one asked for always runs);
    anywhere else, the step alone."""
    if step is None or step.section != "run":
        return [step]
    for stage in stages(steps):
        members = {id(s) for lane in stage.lanes.values() for s in lane}
        if id(step) in members:
            return [s for s in steps if id(s) in members and (s is step or (not s.manual and runnable(s)))]
    return [step]


def running_text(steps: Sequence[RunStep], status_of) -> str:
    """What a click on Run step or Run all starts, said as it will happen: the automated steps up to the
    first manual step not yet ticked off, where the run stops for a person ("Running 7.46, 7.47 …; step
    7.48 is done by hand"); the Run tab listed every step to the end of the procedure, 90 of them."""
    going: list[str] = []
    for s in steps:
        if status_of(s.number) in SUCCEEDED:
            continue
        if s.manual and not s.fetched_by:
            return f"Running {', '.join(going)} …; then step {s.number} is done by hand." if going else \
                f"Step {s.number} is done by hand."
        going.append(s.number)
    return f"Running {', '.join(going)} …"


def _template_id(s: RunStep) -> str:
    return s.template or s.number


def step_sort_key(number: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in number.split("."))


_RANGE = re.compile(r"^(\d+(?:\.\d+)*)\s*-\s*(\d+(?:\.\d+)*)$")


def select_steps(steps: Sequence[RunStep], spec: str) -> list[RunStep]:
    """`spec`: comma-separated step numbers, sections ("3" = all of section 3) and ranges
    ("3.1-3.4").  Raises ValueError naming what matches nothing."""
    chosen: dict[str, RunStep] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        m = _RANGE.match(part)
        if m:
            lo, hi = step_sort_key(m.group(1)), step_sort_key(m.group(2))
            hits = [s for s in steps if lo <= step_sort_key(s.number) <= hi]
        else:
            hits = [s for s in steps if s.number == part or s.number.startswith(part + ".")]
        if not hits:
            raise ValueError(f"--steps: {part!r} matches no step (steps run from "
                             f"{steps[0].number} to {steps[-1].number})" if steps else "there are no steps")
        for s in hits:
            chosen[s.number] = s
    return [s for s in steps if s.number in chosen]


def hosts_of(steps: Iterable[RunStep]) -> list[str]:
    return list(dict.fromkeys(t.host for s in steps for t in s.tasks if not t.manual))
