"""Appendix A's comparison of the bed's configurations: one row per setting that differs,
one column per configuration (as the reports' "System configuration" tables print two
systems side by side), and what each configuration is."""
from __future__ import annotations

from app.report.tables.model import Cell, Table, missing
from app.report.tables.values import setting
from topology.configurations import NOT_IN_USE, differences
from topology.model import Bed
from topology.vocabulary import humanize


def configuration_table(bed: Bed) -> Table | None:
    if not bed.configurations:
        return None
    names = [c.id for c in bed.configurations]
    t = Table("configurations", "Configurations compared: what differs between them",
              ["Component", "Setting", *names], compact=len(names) > 3)
    t.note = "; ".join(f"{c.id}: {c.description}" for c in bed.configurations if c.description) or \
        "Every configuration runs on the same hardware; settings not listed are the same in all of them."
    previous = ""
    for d in differences(bed):
        key, _, sub = d.setting.partition(": ")
        label = humanize(key) + (f": {humanize(sub)}" if sub else "")
        cells: list[Cell] = []
        for value in d.values:
            if value is None or value == "":
                cells.append(missing(d.subject))
            elif value == NOT_IN_USE:
                cells.append(Cell("not in use", ref=d.subject))
            else:
                cells.append(Cell(setting(value) if d.setting != "in use" else ("Yes" if value else "No"),
                                  ref=d.subject))
        t.add(Cell(d.subject if d.subject != previous else "", ref=d.subject), label[:1].upper() + label[1:], *cells)
        previous = d.subject
    if not t.rows:
        t.add(Cell("(none)"), "the configurations set nothing that differs", *[""] * len(names))
    return t
