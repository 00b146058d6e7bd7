"""Where in the test each step of a run is (configuration, phase, scenario, level, repetition),
kept in the run's folder when it begins (`positions.json`, `{step number: position}`) so the
results can be told apart by place long after the bed or its templates changed."""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

POSITIONS = "positions.json"
KEYS = ("configuration", "phase", "scenario", "level", "repetition")


def write_positions(run_dir: Path, steps: Iterable, configuration: str = "") -> None:
    """Each run step's place (the first task that carries one), the run's configuration added."""
    from topology.fileformat import write_atomic
    out: dict[str, dict[str, str]] = {}
    for step in steps:
        position = next((t.position for t in step.tasks if t.position), None)
        if position:
            place = {k: str(v) for k, v in position.items() if k in KEYS and v not in (None, "")}
            if configuration:
                place.setdefault("configuration", configuration)
            out[step.number] = place
    write_atomic(Path(run_dir) / POSITIONS, json.dumps(out, separators=(",", ":")).encode())


def read_positions(run_dir: Path) -> dict[str, dict[str, str]]:
    """{step number: place}; empty for a run that kept none (runs older than the file)."""
    try:
        data = json.loads((Path(run_dir) / POSITIONS).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(n): {k: str(v) for k, v in p.items() if k in KEYS and isinstance(v, (str, int))}
            for n, p in data.items() if isinstance(p, dict)}


def step_place(step) -> dict[str, str]:
    """A run step's place in the test (its first task's), {} outside the run section."""
    return next((dict(t.position) for t in getattr(step, "tasks", []) if t.position), {})


def place_text(step, steps) -> str:
    """Where in the test a step is, for a person following the run: 'In the test: configuration
    esxi; phase 3 of 6: cells, 2 active cells; scenario degraded; run 2 of 3'.  '' for a step
    outside the run section."""
    place = step_place(step)
    if not place:
        return ""
    # a phase is a stretch of consecutive steps with one (phase, scenario, level), counted as the
    # printed procedure counts them: a matrix that comes back to a scenario (path-a-down, all-paths,
    # path-b-down, all-paths) has two phases of it, and keying by the triple alone numbered the
    # second "phase 4 of 5" under a printed heading "Phase 6 of 6"
    stages: list[list] = []                 # [key, the runs it has, its step numbers]
    for other in steps:
        p = step_place(other)
        if p and p.get("configuration", "") == place.get("configuration", ""):
            key = (p.get("phase", ""), p.get("scenario", ""), p.get("level", ""))
            if not stages or stages[-1][0] != key:
                stages.append([key, 0, set()])
            rep = p.get("repetition", "")
            stages[-1][1] = max(stages[-1][1], int(rep) if str(rep).isdigit() else 0)
            stages[-1][2].add(other.number)
    key = (place.get("phase", ""), place.get("scenario", ""), place.get("level", ""))
    mine = next((k for k, stage in enumerate(stages) if step.number in stage[2]), None)
    parts = [f"configuration {place['configuration']}"] if place.get("configuration") else []
    named = ", ".join(x for x in (key[0], key[2]) if x)
    if mine is not None:
        parts.append(f"phase {mine + 1} of {len(stages)}" + (f": {named}" if named else ""))
    if key[1] and key[1] != key[0]:
        parts.append(f"scenario {key[1]}")
    rep = place.get("repetition", "")
    if rep:
        runs = stages[mine][1] if mine is not None else 0
        parts.append(f"run {rep} of {runs}" if runs > 1 else f"run {rep}")
    else:
        parts.append("setting the bed up for it" if mine is not None else "")
    return "In the test: " + "; ".join(p for p in parts if p)
