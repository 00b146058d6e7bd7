"""Appendix G's comparison of configurations and runs: one row per host or VM and the total,
a column per side, the percentage difference from the baseline beside each, and under the
table how each side's figures were taken and every percentage's formula."""
from __future__ import annotations

import math
from typing import Any

from app.report.tables.model import Cell, Table
from app.report.tables.values import number, slug


def comparison_table(table: Any) -> Table:
    names = table.names
    others = [n for n in names if n != table.baseline]
    better = "higher is better" if table.higher_is_better else "lower is better"
    t = Table(f"compare-{slug(table.metric)}-{slug('-'.join(names))}",
              f"{table.title} ({table.unit}, {better}): {', '.join(names)}; baseline {table.baseline}",
              ["Host / VM", *names, *[f"{n} vs {table.baseline}" for n in others]], compact=len(names) > 3)
    for row in table.rows:
        values = [Cell(_fmt(v), bold=row.is_total) for v in row.values]
        diffs = []
        for name, d in zip(names, row.differences, strict=True):
            if name == table.baseline:
                continue
            diffs.append(Cell(f"{d.percent:+.1f} %" if d is not None else "–", bold=row.is_total))
        t.add(Cell(row.subject, bold=row.is_total, ref=row.subject.rpartition(": ")[2]), *values, *diffs)
    how = [f"{side.name}: {score.how}" + (f" ({side.origin})" if side.origin else "")
           for side, score in zip(table.sides, table.scores, strict=True)]
    if any(r.is_total for r in table.rows):
        how.append(f"Total: {table.total_how}")
    t.note = ("Percentage difference = (side − baseline) / baseline × 100; the denominator is always the "
              f"baseline, {table.baseline}. " + "; ".join(how) + ".")
    return t


def formulas(table: Any) -> list[str]:
    return [f"{r.subject}: {d.formula}{table.verdict(name, d)}"
            for r in table.rows for name, d in zip(table.names, r.differences, strict=True) if d is not None]


def _fmt(v: float) -> str:
    return "–" if math.isnan(v) else number(round(v, 2) if abs(v) < 100 else round(v))
