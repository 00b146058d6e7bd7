"""Plays in the run engine's order: one play per stage, every host of a stage at once.

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
from collections.abc import Sequence

from app.ansible.inventory import inventory_name
from app.ansible.tasks import result_tasks, step_tasks, tag, vault_names, vault_variable
from app.ansible.yaml_out import Name, Unsafe, name
from app.run.plan import RunStep, stages

MEASUREMENT_SECTION = "run"


def plays(steps: Sequence[RunStep], bed_name: str, measurement: bool,
          refused: dict[str, str] | None = None) -> list[dict]:
    """`refused`: host id -> why Ansible cannot manage it (its steps are shown as manual)."""
    out: list[dict] = []
    for stage in stages(steps):
        title = name(f"{stage.title} ({bed_name})")
        chunks: list[tuple[bool, list[RunStep]]] = []
        for step in stage.steps:
            if not chunks or chunks[-1][0] != step.manual:
                chunks.append((step.manual, []))
            chunks[-1][1].append(step)
        for manual, chunk in chunks:
            if manual and out and out[-1]["hosts"] == "localhost":
                # one play for a run of manual steps
                out[-1]["tasks"].extend(_manual_play(title, chunk, refused or {})["tasks"])
                continue
            out.append(_manual_play(title, chunk, refused or {}) if manual
                       else _automated_play(title, chunk, measurement))
    return out


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


def _automated_play(title: Name, steps: list[RunStep], measurement: bool) -> dict:
    hosts = list(dict.fromkeys(t.host for s in steps for t in s.tasks if not t.manual))
    tasks: list[dict] = []
    secrets: set[str] = set()
    for step in steps:
        for index, task in enumerate(t for t in step.tasks if not t.manual):
            tasks.extend(step_tasks(step, task, index, measurement, alone=len(hosts) == 1))
            tasks.extend(result_tasks(step, task, alone=len(hosts) == 1))
            secrets |= vault_names((task.ansible or {}).get("args"))
    if secrets:
        names = sorted(vault_variable(s) for s in secrets)
        tasks.insert(0, {"name": "Credentials come from the vault",
                         "ansible.builtin.assert": {
                             "that": [f"{n} is defined" for n in names], "quiet": True,
                             "fail_msg": "set " + ", ".join(names) + " in an encrypted file (ansible-vault create "
                                         "credentials.yml) and run with -e @credentials.yml --ask-vault-pass"},
                         "tags": ["always"]})
    play: dict = {"name": title, "hosts": ",".join(inventory_name(h) for h in hosts), "gather_facts": False}
    if len(hosts) > 1:
        # a host does not wait for the others between its own steps, as in the built-in engine
        play["strategy"] = "free"
    play["tasks"] = tasks
    return play


def split(steps: Sequence[RunStep]) -> tuple[list[RunStep], list[RunStep]]:
    """(build steps, measurement steps)."""
    return ([s for s in steps if s.section != MEASUREMENT_SECTION],
            [s for s in steps if s.section == MEASUREMENT_SECTION])
