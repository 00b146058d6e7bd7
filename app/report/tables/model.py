"""Table, Row and Cell: an appendix table as plain data, and the mark of a missing value."""
from __future__ import annotations

from dataclasses import dataclass, field

from topology.unknown import MARKER, NOT_STATED

MISSING_TEXT = "not set"
MISSING_MARK = "[not set]"     # how a missing cell prints


@dataclass
class Cell:
    text: str = ""
    missing: bool = False
    ref: str = ""            # subject id the value belongs to (selection / anchors)
    fill: str = ""           # background colour
    mono: bool = False
    bold: bool = False

    def __post_init__(self) -> None:
        if self.text is NOT_STATED:   # a value the source does not state reads so, never as a blank
            self.text = MARKER

    def key(self) -> tuple[str, bool]:
        return (self.text, self.missing)


@dataclass
class Row:
    cells: list[Cell]
    group: str = ""          # a row-group heading spanning the table ("CPU", "Platform")


@dataclass
class Table:
    key: str                 # stable anchor, unique within an appendix
    title: str
    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    kind: str = "grid"       # grid | keyvalue | slotmap
    note: str = ""
    widths: list[int] = field(default_factory=list)    # percent per column; empty = automatic
    compact: bool = False    # small type (slot maps, wide tables)

    def add(self, *cells: Cell | str) -> None:
        self.rows.append(Row([c if isinstance(c, Cell) else Cell(str(c)) for c in cells]))

    def add_group(self, title: str) -> None:
        self.rows.append(Row([], group=title))


def missing(ref: str = "", value: object = None) -> Cell:
    """The mark of a value the bed lacks; `value` is the field it stands for: one the source does not
    state (`not stated`) is printed as such, not marked as missing."""
    if value is NOT_STATED:
        return Cell(MARKER, ref=ref)
    return Cell(MISSING_TEXT, missing=True, ref=ref)


def without_empty_columns(t: Table, keep: int = 0, first: int = 0) -> Table:
    """Drop columns no row fills (a bed without scenarios has no Scenario column);
    columns before `first` and from `keep` on always stay."""
    empty = [i for i in range(first, min(keep, len(t.columns)))
             if all(not (r.cells[i].text or r.cells[i].missing) for r in t.rows if not r.group)]
    if not empty:
        return t
    t.columns = [c for i, c in enumerate(t.columns) if i not in empty]
    if t.widths:
        kept = [w for i, w in enumerate(t.widths) if i not in empty]
        t.widths = [round(w * 100 / sum(kept)) for w in kept]
    for r in t.rows:
        if not r.group:
            r.cells = [c for i, c in enumerate(r.cells) if i not in empty]
    return t
