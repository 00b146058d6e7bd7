"""The run section as the appendix prints it: each phase's first run in full and "repeat steps
X–Y" for the runs after it, as published appendices read ("repeat steps 4 through 9 three
times", seed 000's Appendix F), while the run engine keeps a step of its own for every run.  A
phase whose run is the previous phase's with other names (another level of the same loads on the
same machines) prints its own transition and then points at that run's steps.

A later run is printed as a repeat only when it is the first run again: the same steps in the same
order, on the same machines, with the same commands, once its own step numbers and its run number
("run 2 of 3") are read as the first run's.  Steps a later run adds at its end (the score after the
last run) are printed in full after the repeat; a run that differs in any other way is printed in
full."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from app.report.blocks import Block, Para, steps_blocks

_RUN_WORDS = re.compile(r"\brun \d+( of \d+)?\b")


def _phase_and_run(step: Any) -> tuple[tuple, str]:
    position = getattr(step, "position", None) or {}
    stage = tuple((k, str(v)) for k, v in sorted(position.items()) if k != "repetition")
    return stage, str(position.get("repetition", "") or "")


def _groups(steps: Sequence[Any]) -> list[tuple[tuple, str, list[Any]]]:
    """Consecutive steps of one phase and run."""
    out: list[tuple[tuple, str, list[Any]]] = []
    for step in steps:
        stage, rep = _phase_and_run(step)
        if out and out[-1][0] == stage and out[-1][1] == rep:
            out[-1][2].append(step)
        else:
            out.append((stage, rep, [step]))
    return out


def _place_words(step: Any) -> list[tuple[str, str]]:
    """The words that name a step's place (its phase, scenario and level), longest first, each
    with what it stands for; a short or bare-number level is left alone (it could be any number)."""
    position = getattr(step, "position", None) or {}
    out = []
    for key in ("level", "phase", "scenario"):
        value = str(position.get(key, "") or "")
        if len(value) >= 3 and not value.replace(".", "").isdigit():
            out.append((value, f"<{key}>"))
    return sorted(out, key=lambda x: -len(x[0]))


def _shape(step: Any, numbers: dict[str, str]) -> tuple:
    """What a step says once its run's step numbers are the model run's, its run number is gone and
    the names of its phase, scenario and level are placeholders."""
    words = _place_words(step)

    def same(text: str | None) -> str:
        if not text:
            return ""
        text = re.sub(r"\b\d+\.\d+\b", lambda m: numbers.get(m.group(0), m.group(0)), text)
        for word, mark in words:
            text = text.replace(word, mark)
        return _RUN_WORDS.sub("run N", text)
    commands = tuple((c.shell, same(c.script), same(c.verify), c.target) for c in getattr(step, "automation", []))
    return same(step.text), step.target, commands, tuple(getattr(step, "devices", []) or [])


def _repeats(first: list[Any], later: list[Any]) -> bool:
    """`later` begins with the steps of `first`, step for step."""
    if len(later) < len(first):
        return False
    numbers = {b.number: a.number for a, b in zip(first, later)}
    return all(_shape(a, {}) == _shape(b, numbers) for a, b in zip(first, later))


def _span(steps: Sequence[Any]) -> str:
    return steps[0].number if len(steps) == 1 else f"{steps[0].number}–{steps[-1].number}"


def run_section_blocks(steps: Sequence[Any]) -> list[Block]:
    """The run section's blocks, each phase's repeated runs printed once, and a phase whose run is
    the previous phase's (other names, same steps) printed as a repeat of it."""
    blocks: list[Block] = []
    groups = _groups(steps)
    model: list[Any] | None = None         # the last run printed in full
    i = 0
    while i < len(groups):
        stage, rep, first = groups[i]
        runs = [first]
        j = i + 1
        while rep and j < len(groups) and groups[j][0] == stage and groups[j][1] and _repeats(first, groups[j][2]):
            runs.append(groups[j][2])
            j += 1
        blocks += _heading(first, collapsed=len(runs) > 1)
        if rep and model is not None and len(first) == len(model) and _repeats(model, first):
            blocks.append(Para(text=f"Carry out steps {_span(model)} again for {_label(first[0])} (they are "
                                    f"written for {_label(model[0])}): the run record numbers them {_span(first)}.",
                               css="intro"))
        else:
            blocks += steps_blocks(first)
            if rep:
                model = first
        if len(runs) > 1:
            later = ", ".join(f"{_span(r[:len(first)])} (run {_phase_and_run(r[0])[1]})" for r in runs[1:])
            others = "the other run" if len(runs) == 2 else f"each of the other {len(runs) - 1} runs"
            blocks.append(Para(text=f"Repeat steps {_span(first)} for {others} of this phase, in the same order: "
                                    f"the run record numbers them {later}.", css="intro"))
            extra = runs[-1][len(first):]
            if extra:
                blocks += steps_blocks(extra)
        i = j
    return blocks


def _label(step: Any) -> str:
    """'t4.1-network-features, SR-IOV' — the phase and level a step's run belongs to."""
    position = getattr(step, "position", None) or {}
    parts = [str(position.get(k, "") or "") for k in ("phase", "level")]
    scenario = str(position.get("scenario", "") or "")
    if scenario and scenario not in parts:
        parts.append(f"scenario {scenario}")
    return ", ".join(p for p in parts if p) or "the test"


def _heading(steps: list[Any], collapsed: bool) -> list[Block]:
    """The part of the test the steps begin, where the procedure names it ('Phase 2 of 6 (cells, 1
    active cells): run 1 of 3'; 'each of the 3 runs' where the later runs repeat it)."""
    text = next((s.heading for s in steps if getattr(s, "heading", "")), "")
    if not text:
        return []
    if collapsed:
        text = _RUN_WORDS.sub(lambda m: f"each of the {m.group(1)[4:]} runs" if m.group(1) else "each run", text)
    return [Para(text=text, css="intro", keep_with_next=True)]
