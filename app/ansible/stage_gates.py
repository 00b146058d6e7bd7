"""Stages of one play that wait for each other on the controller, not in Ansible's strategy.

A run of stages where every host has one task each (a chain, or one job step) is one play
(chain_runs._one_task_each).  Under Ansible's `linear` strategy each task waited for every host
to end the one before, and only then did ansible-playbook's one process start it on the hosts,
one host after another: a fork, the host's variables, the callbacks, about 70 ms a host on a
loaded 2-core machine, so 3.5-9 s a stage on 50 hosts before the last host's step even began
(issue 33).  Now the play runs under `free`, and every task after the first is
`testbed_gated_raw` (GATE_PLUGIN, an action plugin written into the pass's folder): Ansible
starts it on a host as soon as the host ended its task before, and the plugin then waits, on
the controller, for the stage's gate file.  The engine opens the gate (`go`) once every host of
the stage before has ended it and succeeded, having journalled each step's start first; it
closes it (`stop`) when any of them failed or was unreachable, and a stopped task ends its host
without touching it.  So the built-in engine's rule holds (a stage starts only once every host
ended the one before, and a failure ends the run after its stage), and the waiting costs no
more than a file read: the hosts start the next stage together.

A stopped task reports GATE_STOPPED; its step never began, so the engine journals nothing of it.
"""
from __future__ import annotations

import os
from pathlib import Path

GATED_ACTION = "testbed_gated_raw"
GATE_STOPPED = "not started: a step of the stage before did not succeed on every host"
GATES_FOLDER = "gates"
GO, STOP = "go", "stop"

GATE_PLUGIN = f'''# Written by Testbed Studio into a pass of `run --engine ansible` (app/ansible/stage_gates.py):
# the `raw` action, once the engine opened this task's gate on the controller.
import os
import time

from ansible.plugins.action.raw import ActionModule as RawAction


class ActionModule(RawAction):
    def run(self, tmp=None, task_vars=None):
        args = dict(self._task.args)
        gate = os.path.join(task_vars["playbook_dir"], {GATES_FOLDER!r}, str(args["gate"]))
        word = ""
        while not word:      # the task's own timeout ends a wait that never ends
            try:
                with open(gate) as fh:
                    word = fh.read().strip()
            except FileNotFoundError:
                pass
            if not word:
                time.sleep(0.05)
        if word != {GO!r}:
            return {{"failed": True, "msg": {GATE_STOPPED!r}}}
        self._task.args = {{"_raw_params": args["script"], "executable": args.get("executable") or False}}
        return super().run(tmp, task_vars)
'''


def write_plugin(folder: Path) -> None:
    plugins = folder / "action_plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / f"{GATED_ACTION}.py").write_text(GATE_PLUGIN, encoding="utf-8")
    (folder / GATES_FOLDER).mkdir(exist_ok=True)


def gated_task(task: dict, gate: str) -> dict:
    """The play's `raw` task for all hosts (chain_runs._one_task_each), as one that waits for
    `gate` (its timeout, a host variable, also covers the longest the stages before may take)."""
    raw = task["ansible.builtin.raw"]
    out = {k: v for k, v in task.items() if k != "ansible.builtin.raw"}
    out[GATED_ACTION] = {"script": raw["_raw_params"], "executable": raw["executable"], "gate": gate}
    return out


def set_gate(folder: Path, gate: str, word: str) -> None:
    path = folder / GATES_FOLDER / gate
    if path.exists():
        return      # a gate is opened or closed once
    tmp = path.with_name(f".{gate}.tmp")
    tmp.write_text(word + "\n", encoding="utf-8")
    os.replace(tmp, path)


class StageGates:
    """The engine's side (a mixin of AnsibleEngine): which task of which play waits for which
    gate, and each gate set from the events of the stage before."""

    def _gates_init(self) -> None:
        self._gate_order: dict[str, list[str]] = {}     # play's first task title -> its task titles
        self._gate_of: dict[str, str] = {}              # task title -> its gate (its play's later tasks)
        self._stage_ends: dict[str, dict[str, bool]] = {}   # task title -> host -> succeeded
        self._stage_longest: dict[str, int] = {}        # task title -> its longest timeout on a host
        self._gate_folder: Path | None = None

    def _gated(self, title: str) -> bool:
        return title in self._gate_of

    def _stage_host_ended(self, title: str, host: str, ok: bool, progress: dict, adopt: bool = False) -> None:
        """A host ended the stage task `title`: once every host of it has, the next stage's gate."""
        order = next((titles for titles in self._gate_order.values() if title in titles), None)
        if order is None or self._gate_folder is None:
            return
        ends = self._stage_ends.setdefault(title, {})
        ends[host] = ok
        hosts = [h for (t, h) in self._shared_tasks if t == title]
        if len(ends) < len(hosts):
            return
        at = order.index(title)
        if at + 1 >= len(order):
            return
        following = order[at + 1]
        if all(ends.values()):
            with self.journal.batched():    # on disk, in one fsync, before the gate opens
                for (t, h), step in self._shared_tasks.items():
                    if t == following:
                        item = progress.get((step, h))
                        if item is not None and item.started is None:
                            self._begin(item.task, item, adopt)
            set_gate(self._gate_folder, self._gate_of[following], GO)
        else:
            for later in order[at + 1:]:
                set_gate(self._gate_folder, self._gate_of[later], STOP)

    def _close_gates(self) -> None:
        """The pass ended: a task still waiting (its pass cancelled) starts nothing."""
        if self._gate_folder is not None:
            for gate in self._gate_of.values():
                set_gate(self._gate_folder, gate, STOP)
