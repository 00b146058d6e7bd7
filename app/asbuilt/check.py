"""The as-built check as one job for every presenter (`testbed-studio check`, the Run tab's
"Check the bed", a run's optional first step): read the hosts (gather.py), hold their facts
against the bed the run uses (topology/asbuilt/), and record the result with a run.

A run keeps its check in `as-built.json` beside `run.json` (facts, findings, the as-built table,
what was learnt), and `run.json` names it with a summary; the as-run appendix prints the table."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.asbuilt.gather import Gathered, gather
from app.remote.base import Transport
from app.run.engine import DEFAULT_WORKERS
from topology.asbuilt import AsBuilt, HostFacts, check
from topology.model import Bed

RECORD = "as-built.json"


@dataclass
class CheckRun:
    asbuilt: AsBuilt
    gathered: Gathered
    created: str = ""
    scenario: str = ""

    @property
    def findings(self) -> list:
        return self.asbuilt.findings

    def counts(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.asbuilt.findings:
            out[f.severity] = out.get(f.severity, 0) + 1
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"created": self.created, "scenario": self.scenario, "seconds": self.gathered.seconds,
                "skipped": self.gathered.skipped, "counts": self.counts(), **self.asbuilt.as_dict(),
                "facts": {h: f.as_dict() for h, f in sorted(self.gathered.facts.items())}}


def view_for(bed: Bed, scenario: str | None) -> Bed:
    """The bed as a scenario stands (its placement, its failed parts out); ValueError naming the
    scenarios when there is no such one."""
    if not scenario:
        return bed
    found = next((s for s in bed.scenarios if s.name == scenario), None)
    if found is None:
        names = ", ".join(s.name for s in bed.scenarios) or "none"
        raise ValueError(f"the bed has no scenario {scenario!r} (it has: {names})")
    from topology.scenario_view import scenario_view
    return scenario_view(bed, found)


def check_bed(bed: Bed, connect: Callable[[str], Transport], *, hosts: Iterable[str] | None = None,
              scenario: str | None = None, workers: int = DEFAULT_WORKERS,
              on_host: Callable[[HostFacts], None] | None = None, connections=None) -> CheckRun:
    """`bed`: the view the run uses (its configuration's); `connections`: an open run's, shared with
    its steps; blocking, never raises for a host's trouble."""
    from app.run.journal import now_iso
    view = view_for(bed, scenario)
    gathered = gather(view, connect, hosts, workers=workers, on_host=on_host, connections=connections)
    result = check(view, gathered.facts)
    return CheckRun(result, gathered, now_iso(), scenario or "")


def record(run_dir: Path, run: CheckRun) -> None:
    """Keeps the check with the run: as-built.json in full, a summary in run.json."""
    from topology.fileformat import write_atomic
    run_dir = Path(run_dir)
    write_atomic(run_dir / RECORD, (json.dumps(run.as_dict(), indent=1) + "\n").encode())
    meta = run_dir / "run.json"
    data = json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else {}
    data["as_built"] = {"file": RECORD, "created": run.created, "hosts": len(run.asbuilt.hosts),
                        "counts": run.counts(), "codes": sorted({f.code for f in run.findings})}
    write_atomic(meta, (json.dumps(data, indent=2) + "\n").encode())


def recorded(run_dir: Path) -> dict[str, Any] | None:
    """A run's recorded check (None when it has none, or it cannot be read)."""
    try:
        data = json.loads((Path(run_dir) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def text_report(run: CheckRun) -> str:
    lines = []
    for host in run.asbuilt.hosts:
        f = run.gathered.facts.get(host)
        what = "not reached" if f is not None and not f.reached else f"read in {f.seconds:.2f} s" if f else ""
        lines.append(f"{host}: {what}")
    for text in run.gathered.skipped:
        lines.append(f"skipped {text}")
    for f in run.findings:
        lines.append(f"{f.severity.upper():7} {f.code} {f.message}")
        if f.severity != "info":
            lines.append(f"        fix: {f.hint}")
    c = run.counts()
    lines.append(f"as built: {len(run.asbuilt.hosts)} host(s) checked in {run.gathered.seconds:.2f} s; "
                 f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} note(s)"
                 + (f"; {len(run.asbuilt.learnt)} value(s) learnt that the bed does not state (--learn takes them "
                    "into the bed)" if run.asbuilt.learnt else ""))
    return "\n".join(lines)
