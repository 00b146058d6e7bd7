"""Plays in the run engine's order: one play per stage, every host of a stage at once.

Each host of a play works through its own task list (`tasks/<play>/<host>.yml`, included by
the host's inventory name) under the `free` strategy, as the built-in engine runs one lane per
host: no task is written for all hosts and skipped on all but one (that was N x N skips on a
big stage).  A play with one host holds its tasks itself.

The build sections (network, storage, ...) go to `playbook.yml`: idempotent, so a second run
changes nothing and `--check` shows what would change.  The `run` section is the measurement
(restart, start counters, start the load, stop counters): it goes to `measure.yml`, runs every
time it is started and fetches its result files to `results/` beside the playbook.

A manual step is a play of its own on the controller, under the linear strategy (`pause` is
not allowed under `free`), between the automated plays before and after it: it shows what to
do and waits for Enter on a terminal; without one (CI, AWX) Ansible shows it and goes on.
`--skip-tags manual` leaves them out.
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.ansible.disk_writes import confirmation_task
from app.ansible.inventory import inventory_name
from app.ansible.tasks import result_tasks, step_tasks, tag, vault_names, vault_variable
from app.ansible.yaml_out import Name, Unsafe, name
from app.run.plan import RunStep, Task, stages

MEASUREMENT_SECTION = "run"

# (step, the step's task on one host) in the order the host runs them
Lane = list[tuple[RunStep, Task]]


@dataclass
class Book:
    """A playbook: its plays and the task file of each host of each multi-host play (by path
    relative to the playbook); `host_vars`: variables of each host (by inventory name) that the
    run engine's pass writes into the pass's own inventory."""
    plays: list[dict] = field(default_factory=list)
    task_files: dict[str, list[dict]] = field(default_factory=dict)
    host_vars: dict[str, dict] = field(default_factory=dict)


def plays(steps: Sequence[RunStep], bed_name: str, measurement: bool,
          refused: dict[str, str] | None = None, folder: str = "tasks") -> Book:
    """`refused`: host id -> why Ansible cannot manage it (its steps are shown as manual);
    `folder`: where the hosts' task files go, relative to the playbook.

    A stage is one play over every host it concerns.  A host whose lane stops at a manual step
    goes on after it in the stage's next play, once the manual play between them is done: manual
    steps come between plays, never between the hosts of one."""
    book = Book()
    refused = refused or {}
    for stage in stages(steps):
        title = name(f"{stage.title} ({bed_name})")
        for lanes, manual in _rounds(stage.lanes, refused):
            if lanes:
                automated_play(book, title, lanes, measurement, f"{folder}/play_{len(book.plays) + 1:02d}")
            if not manual:
                continue
            if book.plays and book.plays[-1]["hosts"] == "localhost":
                # one play for a run of manual steps
                book.plays[-1]["tasks"].extend(_manual_play(title, manual, refused)["tasks"])
            else:
                book.plays.append(_manual_play(title, manual, refused))
    return book


Round = tuple[dict[str, Lane], list[RunStep]]      # (each host's automated steps, the manual steps after)


def _rounds(stage_lanes: dict[str, list[RunStep]], refused: dict[str, str]) -> list[Round]:
    """A stage's steps as rounds: the automated steps every host runs before its next manual step
    (one play), then those manual steps (one play on the controller), then what each host does
    after them, and so on.  A "copy the results" step whose load step fetches the files itself
    is left out: the fetch already did it."""
    rounds: list[Round] = []
    order = {id(s): i for i, s in enumerate(s for lane in stage_lanes.values() for s in lane)}
    for lane_steps in stage_lanes.values():
        at, after_manual = 0, False
        for step in lane_steps:
            if step.manual and step.fetched_by and step.target not in refused:
                continue
            if step.manual != after_manual and not step.manual:
                at += 1
            after_manual = step.manual
            while len(rounds) <= at:
                rounds.append(({}, []))
            lanes, manual = rounds[at]
            if step.manual:
                manual.append(step)
                continue
            for task in step.tasks:
                if not task.manual:
                    lanes.setdefault(task.host, []).append((step, task))
    for _, manual in rounds:
        manual.sort(key=lambda s: order[id(s)])
    return rounds


def _manual_play(title: Name, steps: list[RunStep], refused: dict[str, str]) -> dict:
    tasks = []
    for step in steps:
        why = step.why_manual
        if step.target in refused:
            why = f"{step.target} runs {refused[step.target].split(': ', 1)[0]}, which Ansible cannot manage"
        why = f" (done by hand: {why})" if why else ""
        tasks.append({"name": name(f"{step.number} by hand: {step.text}"),
                      "ansible.builtin.pause": {"prompt": Unsafe(f"Step {step.number}{why}:\n{_wrap(step.text)}\n"
                                                                 "Press Enter when it is done")},
                      "tags": [tag(step)]})
    return {"name": Name(f"By hand: {title}"), "hosts": "localhost", "connection": "local",
            "gather_facts": False, "strategy": "linear", "tags": ["manual"], "tasks": tasks}


def _wrap(text: str) -> str:
    return "\n".join(textwrap.wrap(text, 100, break_long_words=False, break_on_hyphens=False)) or text


def automated_play(book: Book, title: Name, lanes: dict[str, Lane], measurement: bool, folder: str,
                   job_script: Callable[[RunStep, Task], str] | None = None,
                   chdir: Callable[[str], str | None] = lambda host: None) -> dict:
    """One play for these hosts' lanes, added to `book`; a host's tasks are its own task file
    (`folder/<host>.yml`) when the play has several hosts.  `job_script`, `chdir` (by host): see
    tasks.step_tasks."""
    own: dict[str, list[dict]] = {}
    secrets: set[str] = set()
    for host, lane in lanes.items():
        tasks = own.setdefault(host, [])
        asked = job_script is not None      # the run engine asked before the run (app/run/destructive.py)
        for index, (step, task) in enumerate(lane):
            ask = None if asked or not step.destructive else confirmation_task(host, [s for s, _ in lane])
            if ask is not None:
                asked = True
                tasks.append(ask)
            tasks.extend(step_tasks(step, task, index, measurement, job_script, chdir(host)))
            tasks.extend(result_tasks(step, task, chdir(host)))
            secrets |= vault_names((task.ansible or {}).get("args"))
    head: list[dict] = []
    if secrets:
        names = sorted(vault_variable(s) for s in secrets)
        head.append({"name": "Credentials come from the vault",
                     "ansible.builtin.assert": {
                         "that": [f"{n} is defined" for n in names], "quiet": True,
                         "fail_msg": "set " + ", ".join(names) + " in an encrypted file (ansible-vault create "
                                     "credentials.yml) and run with -e @credentials.yml --ask-vault-pass"},
                     "tags": ["always"]})
    play: dict = {"name": title, "hosts": ",".join(inventory_name(h) for h in lanes), "gather_facts": False}
    if len(lanes) == 1:
        play["tasks"] = head + next(iter(own.values()))
    else:
        # a host does not wait for the others between its own steps, as in the built-in engine
        play["strategy"] = "free"
        for host, tasks in own.items():
            book.task_files[f"{folder}/{inventory_name(host)}.yml"] = tasks
        # `always`: the tags of the steps inside the host's file still choose what runs
        play["tasks"] = head + [{"name": "Each host's own steps",
                                 "ansible.builtin.include_tasks": {"file": folder + "/{{ inventory_hostname }}.yml"},
                                 "tags": ["always"]}]
    book.plays.append(play)
    return play


def split(steps: Sequence[RunStep]) -> tuple[list[RunStep], list[RunStep]]:
    """(build steps, measurement steps)."""
    return ([s for s in steps if s.section != MEASUREMENT_SECTION],
            [s for s in steps if s.section == MEASUREMENT_SECTION])
