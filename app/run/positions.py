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
