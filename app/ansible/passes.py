"""Which stages of a run share one pass of ansible-playbook, and the gate between them.

Starting ansible-playbook costs seconds before its first task (issue 33 measured 2.1-3.1 s for
an empty play here), so the engine runs a run of consecutive stages in one pass: one play per
stage, in order.  The built-in engine's rule still holds: a stage starts only once every host
finished the stage before, and a failure anywhere in a stage ends the run after that stage.
Ansible gives the first half (a play ends when all its hosts end); for the second, a gate play
between two stages ends the pass when any host of an earlier stage failed or was unreachable
(Ansible leaves such a host out of every later play, so the play's hosts then number fewer
than the hosts it names).  The gate runs on the controller (`fail` connects to no host), once.

A stage joins a pass only when nothing but Ansible decides how it goes: every one of its steps
has either succeeded or runs in the pass.  A stage that waits for a person (a manual step not
ticked off), holds a host Ansible cannot manage, or a step adopted before the pass, ends the
pass: as the first of a pass it is run alone, later it starts the next pass (so a "copy the
results" step is ticked off from what the pass before it fetched, as in the built-in engine).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from app.ansible.inventory import inventory_name
from app.ansible.playbook import Book, Lane
from app.run import journal as J
from app.run.plan import Stage, Task

GATE_TASK = "Stop here: a step of an earlier stage did not succeed"
GATE_PLAY = "Gate: the stages before succeeded on every host"

# (the stage, each host's lane of it in this pass; None: it cannot join a pass that runs now)
Planned = tuple[Stage, dict[str, Lane] | None]


def stage_key(stage: Stage) -> tuple[tuple[str, str], ...]:
    return tuple((s.number, s.target) for lane in stage.lanes.values() for s in lane)


def runs_unattended(stage: Stage, lanes: dict[str, Lane], status: Callable[[Task], str],
                    refused: Callable[[str], bool]) -> bool:
    """Every step of the stage has succeeded or has each of its unfinished tasks in `lanes`,
    on hosts Ansible can manage: how the stage ends is Ansible's to say."""
    planned = {task.key for lane in lanes.values() for _, task in lane}
    if any(refused(host) for host in lanes):
        return False
    return all(task.key in planned or status(task) in J.SUCCEEDED for step in stage.steps for task in step.tasks)


def one_pass(first: Planned, following: Iterable[Planned], unattended: Callable[[Planned], bool]) -> list[Planned]:
    """`first` and the stages after it that can share its pass (see the module's text);
    `following` is taken one by one, up to the first that cannot."""
    group = [first]
    if not unattended(first):
        return group
    for planned in following:
        if not unattended(planned):
            break
        group.append(planned)
    return group


def gate_play(hosts: Sequence[str]) -> dict:
    """A play over every host of the pass so far and of the next stage: it ends the pass when any
    of them failed or was unreachable before it."""
    return {"name": GATE_PLAY,
            "hosts": ",".join(inventory_name(h) for h in hosts), "gather_facts": False, "strategy": "linear",
            "any_errors_fatal": True,
            "tasks": [{"name": GATE_TASK, "ansible.builtin.fail": {"msg": GATE_TASK}, "run_once": True,
                       "when": "ansible_play_hosts | length < ansible_play_hosts_all | length"}]}


def plain_play(book: Book, title: str, lanes: dict[str, list[dict]]) -> None:
    """A play of ready-made tasks for each host (asking hosts about their jobs, stopping them)."""
    play: dict = {"name": title, "hosts": ",".join(inventory_name(h) for h in lanes), "gather_facts": False}
    if len(lanes) == 1:
        play["tasks"] = next(iter(lanes.values()))
    else:
        play["strategy"] = "free"
        for host, tasks in lanes.items():
            book.task_files[f"tasks/{inventory_name(host)}.yml"] = tasks
        play["tasks"] = [{"name": "Each host's own tasks",
                          "ansible.builtin.include_tasks": {"file": "tasks/{{ inventory_hostname }}.yml"}}]
    book.plays.append(play)
