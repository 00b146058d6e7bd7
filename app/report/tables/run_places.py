"""Appendix G for a run that holds several places in the test (phases, levels, repetitions of the
run section): one table of measured figures per place, never one table over all of them; each
place's result files beside its figures (app.metrics.by_place)."""
from __future__ import annotations

import copy
from typing import Any

from app.report.tables.model import Cell, Table
from app.report.tables.values import slug


def run_place_tables(run: Any) -> list[Table]:
    """The run's tables place by place; [] when it has one place (the run's own tables say it)."""
    from app.metrics.by_place import file_figures
    from app.report.tables.results import run_summary_table, run_verdict_table
    places = getattr(run, "places", None) or []
    if len(places) < 2:
        return []
    tables: list[Table] = []
    for k, place in enumerate(places, 1):
        view = copy.copy(run)
        view.summaries, view.verdicts = place.summaries, place.verdicts
        for t in (run_summary_table(view) if place.summaries else None, run_verdict_table(view)):
            if t is not None:
                t.key = f"{t.key}-place-{k}"
                t.title = f"{t.title}, {place.label}"
                tables.append(t)
        if place.files:
            t = Table(f"run-{slug(run.run_id)}-files-{k}", f"Result files: run {run.run_id}, {place.label}",
                      ["File", "Tool", "Host", "Figures"], compact=True)
            for f in place.files:
                t.add(Cell(f.stored, mono=True), f.tool, Cell(f.host, ref=f.host), file_figures(f))
            tables.append(t)
    return tables
