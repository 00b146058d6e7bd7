"""Stages of one play wait for each other on the controller (app.ansible.stage_gates): the engine
opens a stage's gate only once every host ended the stage before and succeeded, after it
journalled the start of each step behind the gate, and closes every later gate at a failure.
Each stage's end on a host is taken from its report once, and Ansible's own end of the host's
one task only for the stage no report covers.
A real pass through ansible-playbook is in tests/test_ansible_passes.py; here the engine's side
alone, counted, with no Ansible run."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

from app.ansible.stage_gates import GATE_STOPPED, GATES_FOLDER, GO, REPORTS_FOLDER, STOP, StageGates

TITLES = ("Each host's steps (play 1)", "Each host's steps (play 2)", "Each host's steps (play 3)")
HOSTS = ("h1", "h2", "h3")


class _Item:
    def __init__(self, step: str, host: str):
        self.task, self.started = (step, host), None


class _Journal:
    def batched(self):
        return contextlib.nullcontext()


class _Engine(StageGates):
    """The engine's side of the gates, with its journal's starts as a list."""

    def __init__(self, folder: Path):
        self._gates_init()
        self._gate_folder = folder
        (folder / GATES_FOLDER).mkdir()
        self._gate_order = {TITLES[0]: list(TITLES)}
        self._gate_of = {TITLES[1]: "02", TITLES[2]: "03"}
        self._shared_tasks = {(title, h): f"{n}.1" for n, title in enumerate(TITLES, 1) for h in HOSTS}
        self.progress = {(f"{n}.1", h): _Item(f"{n}.1", h) for n in range(1, 4) for h in HOSTS}
        self.begun: list[tuple[tuple[str, str], str]] = []     # (step, host), the gate's word when it began
        self.journal = _Journal()
        self._by_name = {h: h for h in HOSTS}
        self._report_of = {title: f"0{n}" for n, title in enumerate(TITLES, 1)}
        self.taken: list[tuple[str, str, str, str]] = []      # (kind, stage title, host, its stdout)

    def _take_event(self, kind, data, title, host, progress, adopt) -> None:
        """As AnsibleEngine._take_event: the event journalled (here listed), a stage's end counted."""
        if (data.get("res") or {}).get("msg") == GATE_STOPPED:
            return
        self.taken.append((kind, title, host, str((data.get("res") or {}).get("stdout", ""))))
        if kind != "runner_on_start":
            self._stage_host_ended(title, host, kind == "runner_on_ok", progress, adopt)

    def report(self, stage: int, host: str, rc: int) -> None:
        folder = self._gate_folder / REPORTS_FOLDER / f"0{stage}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{host}.json").write_text(json.dumps({"rc": rc, "stdout": f"stage {stage}", "stderr": ""}))

    def ansible_says(self, kind: str, host: str, msg: str = "") -> None:
        """Ansible's own event of the host's one task (named after the pass's first stage)."""
        self._on_event({"event": kind, "event_data": {"task": TITLES[0], "host": host, "res": {"msg": msg}}},
                       self.progress, False)

    def _begin(self, task, item=None, adopt=False) -> None:
        self.begun.append((task, self.gate("02") + "/" + self.gate("03")))
        item.started = 1.0

    def gate(self, name: str) -> str:
        path = self._gate_folder / GATES_FOLDER / name
        return path.read_text().strip() if path.exists() else ""


def test_a_stage_opens_once_every_host_succeeded_with_its_steps_journalled_first_and_a_failure_closes_the_rest(
        tmp_path):
    engine = _Engine(tmp_path)
    engine._stage_host_ended(TITLES[0], "h1", True, engine.progress)
    engine._stage_host_ended(TITLES[0], "h3", True, engine.progress)
    assert engine.gate("02") == "" and engine.begun == []        # h2 is still in the first stage
    engine._stage_host_ended(TITLES[0], "h2", True, engine.progress)
    assert engine.gate("02") == GO and engine.gate("03") == ""
    # every step behind the gate began (its start journalled) before the gate said go
    assert engine.begun == [(("2.1", h), "/") for h in HOSTS]

    engine._stage_host_ended(TITLES[1], "h2", False, engine.progress)
    engine._stage_host_ended(TITLES[1], "h1", True, engine.progress)
    assert engine.gate("03") == ""            # the stage is not over on h3 yet
    engine._stage_host_ended(TITLES[1], "h3", True, engine.progress)
    assert engine.gate("03") == STOP and len(engine.begun) == 3      # nothing of the third stage began
    engine._close_gates()
    assert (engine.gate("02"), engine.gate("03")) == (GO, STOP)     # a gate is set once, never turned


def test_a_pass_that_ends_closes_the_gates_it_never_opened(tmp_path):
    engine = _Engine(tmp_path)
    engine._stage_host_ended(TITLES[0], "h1", True, engine.progress)
    engine._close_gates()           # cancelled, or ansible-playbook died, while h2 and h3 were in stage 1
    assert (engine.gate("02"), engine.gate("03")) == (STOP, STOP) and engine.begun == []


def test_each_stage_end_is_taken_once_from_its_report_and_ansibles_end_of_the_task_only_where_none_came(tmp_path):
    engine = _Engine(tmp_path)
    engine.ansible_says("runner_on_start", "h1")
    for host in HOSTS:
        engine.report(1, host, 0)
    engine._poll_reports(engine.progress, False)
    engine._poll_reports(engine.progress, False)        # looked at again: nothing new
    assert engine.taken == [("runner_on_start", TITLES[0], "h1", "")] + [
        ("runner_on_ok", TITLES[0], h, "stage 1") for h in HOSTS]
    assert engine.gate("02") == GO       # every host ended the first stage well: the next one opens
    del engine.taken[:]

    engine.report(2, "h1", 0)
    engine.report(2, "h2", 3)
    engine.ansible_says("runner_on_unreachable", "h3")     # lost in stage 2, before it reported
    engine.ansible_says("runner_on_failed", "h2")          # the failure its stage-2 report gave
    engine.ansible_says("runner_on_failed", "h1", GATE_STOPPED)     # stopped at the third stage's gate
    assert engine.taken == [("runner_on_ok", TITLES[1], "h1", "stage 2"),
                            ("runner_on_failed", TITLES[1], "h2", "stage 2"),
                            ("runner_on_unreachable", TITLES[1], "h3", "")]
    assert engine.gate("03") == STOP


def test_a_task_that_ended_after_its_last_stages_report_adds_nothing(tmp_path):
    engine = _Engine(tmp_path)
    for stage in (1, 2, 3):
        for host in HOSTS:
            engine.report(stage, host, 0)
        engine._poll_reports(engine.progress, False)
    for host in HOSTS:
        engine.ansible_says("runner_on_ok", host)
    assert sorted(engine.taken) == sorted(("runner_on_ok", t, h, f"stage {n}")
                                          for n, t in enumerate(TITLES, 1) for h in HOSTS)
    assert (engine.gate("02"), engine.gate("03")) == (GO, GO)
