"""Stages of one play wait for each other on the controller (app.ansible.stage_gates): the engine
opens a stage's gate only once every host ended the stage before and succeeded, after it
journalled the start of each step behind the gate, and closes every later gate at a failure.
A real pass through ansible-playbook is in tests/test_ansible_passes.py; here the engine's side
alone, counted, with no Ansible run."""
from __future__ import annotations

import contextlib
from pathlib import Path

from app.ansible.stage_gates import GATES_FOLDER, GO, STOP, StageGates

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
