"""The run as it happened, for the appendix beside the planned procedure: each step on each
host with its status in a report's words (done, done by hand, skipped and why, failed, failed
then done on a later attempt), its start and end, and every deviation from the plan: steps of
the procedure the run never reached or skipped, steps it ran that the procedure no longer has,
and the values of the bed that changed since the run began (its copy of the project file,
`bed-at-start.yaml`, against the file now).  Read from the journal alone: nothing is run."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.run import journal as J
from app.run.plan import step_sort_key

MAX_CHANGES = 40


@dataclass
class RecordRow:
    step: str
    host: str
    status: str          # in the report's words
    started: str         # ISO 8601 as journalled
    ended: str
    attempts: int
    note: str = ""


@dataclass
class AsRun:
    run_id: str
    configuration: str
    rows: list[RecordRow] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    as_built: list[dict] = field(default_factory=list)     # the check kept with the run: its table's rows


def _words(kind: str, state: J.TaskState, failures: int, by_engine: bool = False) -> str:
    if state.status == J.OK:
        return f"failed, then done on attempt {state.attempts}" if failures else "done"
    if state.status == J.DONE:
        return "done by the engine" if by_engine else "done by hand"
    if state.status == J.SKIPPED:
        return "skipped"
    if state.status == J.INTERRUPTED:
        return "interrupted"
    return state.status.replace("-", " ")


def as_run(run_dir: Path, planned: Sequence[tuple[str, str]] = (), bed_now: str | None = None) -> AsRun:
    """The record of a run.  `planned`: (step number, text) of the procedure as generated now,
    used when the run kept none of its own (plan.json); `bed_now`: the project file's text now
    (for the values changed since the run began)."""
    info = J.open_run(str(run_dir))
    records = J.read_journal(info.dir).records
    states = J.replay(records)
    failures: dict[tuple[str, str], int] = {}
    by_engine: set[tuple[str, str]] = set()     # ticked off by the engine, last (not by a person)
    for r in records:
        key = (str(r.get("step")), str(r.get("host")))
        if r.get("kind") == "end" and r.get("status") in J.PROBLEMS:
            failures[key] = failures.get(key, 0) + 1
        if r.get("kind") == "mark" and r.get("by") == J.BY_ENGINE:
            by_engine.add(key)
        elif r.get("kind") in ("start", "end", "mark"):
            by_engine.discard(key)
    out = AsRun(info.id, info.configuration)
    for (step, host), st in sorted(states.items(), key=lambda kv: (step_sort_key(kv[0][0]), kv[0][1])):
        note = st.message if st.status in (J.DONE, J.SKIPPED) or st.status in J.PROBLEMS else ""
        words = _words("", st, failures.get((step, host), 0), (step, host) in by_engine)
        out.rows.append(RecordRow(step, host if host != "-" else "", words, st.started, st.ended, st.attempts, note))
    ran = {row.step for row in out.rows}
    at_start = planned_at_start(info.dir)
    if at_start is not None:
        planned = at_start
    wanted = _selected(planned, info.steps)
    outside = [n for n, _ in planned if n not in {w for w, _ in wanted} and n not in ran]
    if outside:
        shown = ", ".join(outside[:12]) + (" ..." if len(outside) > 12 else "")
        out.deviations.append(f"the run was started for steps {info.steps} only: {len(outside)} step(s) of the "
                              f"procedure were not part of it ({shown})")
    for number, text in wanted:
        if number not in ran:
            out.deviations.append(f"step {number} of the procedure was not run: {_shortened(text, 120)}")
    skipped = [r for r in out.rows if r.status == "skipped"]
    texts = dict(planned)
    for r in skipped:
        # what the step asked, so that a skipped confirmation ("the loads have ended: confirm what the
        # checks showed ... if one did not hold, skip it") reads as the failed check it records
        what = f" ({_shortened(texts[r.step])})" if texts.get(r.step) else ""
        out.deviations.append(f"step {r.step}{' on ' + r.host if r.host else ''}{what} was skipped"
                              + (f": {r.note}" if r.note else " (no reason given)"))
    known = {n for n, _ in planned}
    if planned:
        for number in sorted(ran - known, key=step_sort_key):
            out.deviations.append(f"step {number} ran but the procedure generated now has no such step "
                                  "(the bed or the templates changed since)")
    out.deviations += bed_changes(info.dir / J.BED_AT_START, bed_now)
    from app.asbuilt.check import recorded
    check = recorded(info.dir)
    if check is not None:
        out.as_built = [r for r in check.get("rows") or [] if isinstance(r, dict)]
    return out


def _shortened(text: str, limit: int = 90) -> str:
    """`text` within `limit` characters, cut at a word with an ellipsis (a record cut mid-word read as
    if the step had said that much only)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…"


def planned_at_start(run_dir: Path) -> list[tuple[str, str]] | None:
    """The procedure kept when the run began (None for a run that kept none)."""
    import json
    try:
        data = json.loads((Path(run_dir) / J.PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, list):
        return None
    return [(str(x[0]), str(x[1])) for x in data if isinstance(x, list) and len(x) == 2]


def _selected(planned: Sequence[tuple[str, str]], spec: str) -> list[tuple[str, str]]:
    """The planned steps the run's --steps selection took (all of them without one)."""
    if not spec or not planned:
        return list(planned)
    from app.run.plan import select_steps
    try:
        numbers = {s.number for s in select_steps([_Numbered(n) for n, _ in planned], spec)}  # type: ignore[misc]
    except ValueError:
        return []
    return [(n, t) for n, t in planned if n in numbers]


@dataclass
class _Numbered:
    """A step for the selection grammar, which reads only its number."""
    number: str


def bed_changes(start_copy: Path, bed_now: str | None) -> list[str]:
    """The bed's values that differ now from when the run began, field by field."""
    if bed_now is None:
        return []
    try:
        before = start_copy.read_text(encoding="utf-8")
    except OSError:
        return ["the run kept no copy of the bed it began with (it started before Testbed Studio kept one): "
                "changes since cannot be listed"]
    if before == bed_now:
        return []
    from topology.errors import BedFileError
    from topology.fileformat import loads, to_data
    try:
        old, new = to_data(loads(before)), to_data(loads(bed_now))
    except BedFileError:
        return ["the project file changed since the run began (one of the two versions cannot be read)"]
    changes: list[str] = []
    _diff(old, new, "", changes)
    if not changes:
        return ["the project file changed since the run began (layout or comments only)"]
    extra = len(changes) - MAX_CHANGES
    return [f"changed since the run began: {c}" for c in changes[:MAX_CHANGES]] + \
        ([f"... and {extra} more changes"] if extra > 0 else [])


def _key(item: Any) -> Any:
    if isinstance(item, dict):
        for k in ("id", "name", "host", "volume"):
            if isinstance(item.get(k), str):
                return item[k]
    return None


def _diff(old: Any, new: Any, path: str, out: list[str]) -> None:
    if len(out) > MAX_CHANGES:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in dict.fromkeys([*old, *new]):
            _diff(old.get(k), new.get(k), f"{path}.{k}" if path else str(k), out)
        return
    if isinstance(old, list) and isinstance(new, list) and all(_key(x) is not None for x in old + new):
        before = {_key(x): x for x in old}
        after = {_key(x): x for x in new}
        for k in dict.fromkeys([*before, *after]):
            if k not in after:
                out.append(f"{path}[{k}] removed")
            elif k not in before:
                out.append(f"{path}[{k}] added")
            else:
                _diff(before[k], after[k], f"{path}[{k}]", out)
        return
    if old != new:
        out.append(f"{path}: {_short(old)} -> {_short(new)}")


def _short(value: Any) -> str:
    text = "not set" if value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
