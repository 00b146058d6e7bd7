"""Readiness: what keeps the generated procedure from being carried out, beside what the rules say.

A bed can pass every validation rule and still give a procedure nobody can run: no operating
system (every host step is done by hand), no addresses («missing: port.ip»), no way to reach a
host, a workload no step runs.  `assess` reads the procedure as generated and the bed it came
from and names each gap once, with the steps it holds up and what to fill in:

* procedure: values the steps need and the bed does not give, per machine and value;
* reach: machines with steps a run could carry out that it cannot reach (no access entry, no
  address to connect to), machines whose operating system is not stated (their steps are done by
  hand), and the procedure as a whole when not one of its steps can be run;
* workloads: a workload no automated step starts.

The validation panel counts these in its header (it is never green while the procedure is red)
and the Readiness panel lists them.  Qt-free: the methodology view computes it on its worker.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# how a template's value name reads in a sentence
_VALUE_WORDS = {
    "server.os": "operating system", "port.ip": "port addresses (IP with prefix length)",
    "port.mask": "port addresses (IP with prefix length)",
    "array.model": "model", "switch.model": "model", "server.platform": "platform",
    "port.network": "network", "volume.size": "size",
}
PROCEDURE, REACH, WORKLOAD = "procedure", "reach", "workload"
AREA_TITLES = {PROCEDURE: "The procedure lacks values", REACH: "A run cannot reach", WORKLOAD: "Workloads"}


@dataclass(frozen=True)
class Gap:
    area: str                    # PROCEDURE, REACH or WORKLOAD
    subject: str                 # the component to fill in ('' for the bed as a whole)
    message: str
    hint: str
    steps: tuple[str, ...] = ()  # the step numbers it holds up


def value_words(name: str) -> str:
    return _VALUE_WORDS.get(name, name.replace("_", " ").replace(".", " "))


def _numbers(steps: list[Any]) -> str:
    shown = ", ".join(s.number for s in steps[:6])
    return shown + (f" and {len(steps) - 6} more" if len(steps) > 6 else "")


def assess(bed: Any, methodology: Any) -> list[Gap]:
    """Every gap between this procedure and a run of it (see the module's docstring)."""
    steps = list(methodology.steps())
    gaps: list[Gap] = []
    missing: dict[tuple[str, str], list[Any]] = {}
    for step in steps:
        if step.unresolved:
            for words in dict.fromkeys(value_words(n) for n in step.unresolved):
                missing.setdefault((step.target, words), []).append(step)
    for (target, words), held in missing.items():
        where = f" of {target}" if target else ""
        gaps.append(Gap(PROCEDURE, target, f"{len(held)} step(s) need the {words}{where}: step {_numbers(held)}",
                        f"give {target or 'the bed'} its {words} in the Properties panel",
                        tuple(s.number for s in held)))
    gaps += _reach(bed, steps)
    gaps += _workloads(bed, steps)
    return gaps


def _reach(bed: Any, steps: list[Any]) -> list[Gap]:
    gaps: list[Gap] = []
    servers = {s.id: s for s in bed.servers}
    access = {a.host: a for a in bed.access}
    transports = {a.host: a.transport for a in bed.access}
    # imported here: the window's Readiness panel imports this module at start, and the run
    # planner brings the whole procedure generator with it (bench.canvas --cold-start-only)
    from app.run.plan import run_steps
    automated = [s for s in steps if s.automation and not s.unresolved]
    # only such a step can be manual for want of access (a big bed's other steps are most of them)
    planned = run_steps(_Procedure(automated), transports)
    unknown_os = {s.id for s in bed.servers if not _stated(s.os) and not _stated(s.platform)}
    no_os: dict[str, list[Any]] = {}
    for step in steps:
        if step.target in unknown_os:
            no_os.setdefault(step.target, []).append(step)
    for host, held in no_os.items():
        gaps.append(Gap(REACH, host, f"the operating system of {host} is not stated: its {len(held)} step(s) "
                        f"are done by hand (step {_numbers(held)})",
                        f"give {host} its OS (e.g. Windows Server 2012 R2, RHEL 7.9) and platform",
                        tuple(s.number for s in held)))
    unreachable: dict[str, list[Any]] = {}
    for rs in planned:
        if rs.manual and rs.why_manual.startswith("no remote access is set for "):
            for host in rs.why_manual[len("no remote access is set for "):].split(", "):
                unreachable.setdefault(host, []).append(rs)
    for host, held in unreachable.items():
        gaps.append(Gap(REACH, host, f"no access entry for {host}: a run cannot carry out its {len(held)} "
                        f"automated step(s) (step {_numbers(held)})",
                        f"select {host} and fill in its Access form (transport, address, user)",
                        tuple(s.number for s in held)))
    for host, entry in access.items():
        if entry.transport == "local" or _stated(entry.address):
            continue
        server = servers.get(host)
        if server is None or not _stated(server.management_address):
            gaps.append(Gap(REACH, host, f"{host} has an access entry but no address to connect to",
                            f"give the access entry of {host} an address, or the host a management address"))
    if steps and not automated:
        gaps.append(Gap(REACH, "", f"none of the procedure's {len(steps)} steps can be run by the application: "
                        "every one is done by hand", "state the hosts' operating systems and how a run reaches "
                        "them (Access); steps whose values are missing are never run"))
    return gaps


def _workloads(bed: Any, steps: list[Any]) -> list[Gap]:
    gaps: list[Gap] = []
    for w in bed.workloads:
        started = [s for s in steps if s.template.endswith("#load") and w.id in s.text]
        if not started:
            continue
        if not any(s.automation and not s.unresolved for s in started):
            machine = w.driver or ", ".join(w.targets) or "its machine"
            gaps.append(Gap(WORKLOAD, w.id, f"workload {w.id} ({w.tool}) has no step the application can run "
                            f"on {machine}: it is started by hand",
                            "a fio workload on a Linux machine with an access entry is run for you",
                            tuple(s.number for s in started)))
    return gaps


def _stated(value: Any) -> bool:
    from app.run.plan import MANUAL_HOST
    from topology.unknown import stated
    v = stated(value)
    return bool(v) and v != MANUAL_HOST


class _Procedure:
    """The steps as `run_steps` reads a methodology (one section holding them all)."""

    def __init__(self, steps: list[Any]):
        self._steps = steps
        self.sections = [_Section(steps)]

    def steps(self) -> list[Any]:
        return self._steps


@dataclass
class _Section:
    steps: list[Any]
    key: str = ""
    title: str = ""
    number: str = ""


def counts(gaps: list[Gap]) -> str:
    """'5 procedure gaps · 2 hosts a run cannot reach' (empty when ready)."""
    if not gaps:
        return ""
    held = {n for g in gaps for n in g.steps}
    return f"{len(gaps)} readiness gap{'s' if len(gaps) != 1 else ''}" + (
        f" holding up {len(held)} step{'s' if len(held) != 1 else ''}" if held else "")
