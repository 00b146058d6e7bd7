"""Stages of one play that wait for each other on the controller, in one task per host.

A run of stages where every host has one task each (a chain, or one job step) is one play
(chain_runs._one_task_each) of ONE task: `testbed_stages` (STAGES_PLUGIN, an action plugin
written into the pass's folder) runs a host's stages one after the other over its connection,
each stage's script a host variable.  Before each stage after the first it waits, on the
controller, for the stage's gate file; after each stage it writes what the host said (exit
status, output) to a report file on the controller.  The engine reads the reports as they
come (the event thread looks every 50 ms), journals each step from them, and opens the next
gate (`go`) once every host of the stage before has ended it and succeeded, having journalled
each step's start first; it closes it (`stop`) when any of them failed or was unreachable, and
a stopped host ends its task without touching the host again.  So the built-in engine's rule
holds (a stage starts only once every host ended the one before, and a failure ends the run
after its stage), and the hosts start the next stage together.

Why one task and not one per stage (issue 33): every task costs ansible-playbook's one process
a worker forked, the host's variables and two callbacks, one host after another (about 90 ms
a host on a loaded 2-core machine), and a stage's end reached the engine only through that
process's result queue, ansible-runner's output and its events: on 50 hosts each stage after
the first began 1-2 s after the last host ended the one before, and its hosts' ends came in
over 2.5 s.  A report file reaches the engine in 50 ms and the waiting worker goes on at once.

Ansible's own event for the task (its end) is taken as the end of the stage the host was in
when it ended (one not reported: unreachable, Ansible's timeout, a stop); a host stopped at a
gate reports GATE_STOPPED: that step never began, so the engine journals nothing of it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

STAGES_ACTION = "testbed_stages"
GATE_STOPPED = "not started: a step of the stage before did not succeed on every host"
GATES_FOLDER = "gates"
REPORTS_FOLDER = "ends"
GO, STOP = "go", "stop"
_ENDED = ("runner_on_ok", "runner_on_failed", "runner_on_unreachable")

STAGES_PLUGIN = f'''# Written by Testbed Studio into a pass of `run --engine ansible` (app/ansible/stage_gates.py):
# a host's stages, each its own `raw` script, each after the engine opened its gate on the controller.
import json
import os
import time

from ansible.plugins.action import ActionBase


def _gate(path):
    word = ""
    while not word:      # the task's own timeout ends a wait that never ends
        try:
            with open(path) as fh:
                word = fh.read().strip()
        except FileNotFoundError:
            pass
        if not word:
            time.sleep(0.05)
    return word


def _report(folder, host, result):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, host + ".json")
    with open(path + ".tmp", "w") as fh:
        json.dump({{k: result.get(k) for k in ("rc", "stdout", "stderr")}}, fh)
    os.replace(path + ".tmp", path)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        here, host = task_vars["playbook_dir"], task_vars["inventory_hostname"]
        for variable, gate, stage in args["stages"]:
            script = task_vars.get(variable)
            if script is None:
                continue        # the host has no step in this stage
            if gate and _gate(os.path.join(here, {GATES_FOLDER!r}, gate)) != {GO!r}:
                return {{"failed": True, "msg": {GATE_STOPPED!r}}}
            result = self._low_level_execute_command(str(script), executable=args.get("executable") or False)
            result["changed"] = True
            if result.get("rc") != 0:
                result.update(failed=True, msg="non-zero return code")
            _report(os.path.join(here, {REPORTS_FOLDER!r}, stage), host, result)
            if result.get("failed"):
                return result
        return result
'''


def write_plugin(folder: Path) -> None:
    plugins = folder / "action_plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / f"{STAGES_ACTION}.py").write_text(STAGES_PLUGIN, encoding="utf-8")
    (folder / GATES_FOLDER).mkdir(exist_ok=True)


def stages_task(task: dict, variable: str, stage: str) -> dict:
    """The play's `raw` task for all hosts (chain_runs._one_task_each, its script the host variable
    `variable`) as the first stage of a `testbed_stages` task; its timeout, a host variable, covers
    every stage the host is in and the waits before them."""
    out = {k: v for k, v in task.items() if k not in ("ansible.builtin.raw", "when")}
    out[STAGES_ACTION] = {"stages": [[variable, "", stage]], "executable": task["ansible.builtin.raw"]["executable"]}
    out["timeout"] = "{{ testbed_stages_timeout | default(60) }}"
    return out


def set_gate(folder: Path, gate: str, word: str) -> None:
    path = folder / GATES_FOLDER / gate
    if path.exists():
        return      # a gate is opened or closed once
    tmp = path.with_name(f".{gate}.tmp")
    tmp.write_text(word + "\n", encoding="utf-8")
    os.replace(tmp, path)


class StageGates:
    """The engine's side (a mixin of AnsibleEngine): which stage of which task waits for which
    gate, each stage's end taken from its report, and each gate set from the stage before."""

    def _gates_init(self) -> None:
        self._gate_order: dict[str, list[str]] = {}     # play's first task title -> its stages' titles
        self._gate_of: dict[str, str] = {}              # stage title -> its gate (a play's later stages)
        self._report_of: dict[str, str] = {}            # stage title -> the folder of its reports
        self._reported: dict[tuple[str, str], bool] = {}    # (stage title, host) -> it succeeded
        self._stage_ends: dict[str, dict[str, bool]] = {}   # stage title -> host -> succeeded
        self._stage_longest: dict[str, int] = {}        # stage title -> its longest timeout on a host
        self._gate_folder: Path | None = None

    def _gated(self, title: str) -> bool:
        return title in self._gate_of

    def _on_event(self, event: dict, progress: dict, adopt: bool) -> None:
        """An event of the pass; a stages task's end is the end of the stage its host was in then."""
        kind = event.get("event", "")
        if not kind.startswith("runner_on_"):
            return
        data = event.get("event_data") or {}
        title, host = str(data.get("task", "")), self._by_name.get(str(data.get("host", "")))
        if host is not None and kind in _ENDED and title in self._gate_order:
            self._poll_reports(progress, adopt)
            stage = None
            for t in self._gate_order[title]:
                if (t, host) in self._shared_tasks and (ok := self._reported.get((t, host))) is not True:
                    stage = None if ok is False else t      # a reported failure was its last stage
                    break
            if stage is None:
                return      # every stage it ran reported its own end
            self._reported[(stage, host)] = kind == "runner_on_ok"
            data, title = data | {"task": stage}, stage
        self._take_event(kind, data, title, host, progress, adopt)

    def _poll_reports(self, progress: dict, adopt: bool) -> None:
        """Each stage end a host reported since the last look, taken as that stage's task ending."""
        if self._gate_folder is None:
            return
        for title, stage in self._report_of.items():
            folder = self._gate_folder / REPORTS_FOLDER / stage
            try:
                names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".json"))
            except FileNotFoundError:
                continue
            for file_name in names:
                host = self._by_name.get(file_name[:-5])
                if host is None or (title, host) in self._reported:
                    continue
                try:
                    report = json.loads((folder / file_name).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue        # written under another name and moved into place: never half
                rc = report.get("rc")
                self._reported[(title, host)] = rc == 0
                res = {"rc": rc, "stdout": report.get("stdout") or "", "stderr": report.get("stderr") or "",
                       **({} if rc == 0 else {"msg": "non-zero return code"})}
                self._take_event("runner_on_ok" if rc == 0 else "runner_on_failed",
                                 {"task": title, "host": file_name[:-5], "res": res}, title, host, progress, adopt)

    def _stage_host_ended(self, title: str, host: str, ok: bool, progress: dict, adopt: bool = False) -> None:
        """A host ended the stage `title`: once every host of it has, the next stage's gate."""
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
