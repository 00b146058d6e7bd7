"""The Run tab's lines that say where the selected step is: its place in the test (configuration,
phase, scenario, level, run; the words are app.run.positions') above where it runs."""
from __future__ import annotations

from app.run.positions import place_text


def where_text(step, session, steps) -> str:
    """'In the test: phase 2 of 6: cells, 1 active cells; run 1 of 3' / 'Runs on lin1 via ssh ...'."""
    if step.manual:
        where = "Done by hand" + (f" (not automated: {step.why_manual})" if step.why_manual else "")
    else:
        where = "Runs on " + "; ".join(f"{h} via {session.describe(h)}" for h in step.hosts)
    place = place_text(step, steps)
    return f"{place}\n{where}" if place else where




def history_text(info, standing) -> str:
    """A run in the Run tab's list of runs: its id, when it began and where it stands."""
    return f"{info.id}  ({info.created[:16].replace('T', ' ')}, {standing.summary()})"


def short_text(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
