"""The methodology's sections and steps as a Qt item model: one row per section title and per
step, in the procedure's order.  The table view asks only for the rows it shows, so a procedure
of 100,000+ steps (the 5,000-device bed) opens as fast as one of 50.  A step's row text is made
when the row is first shown; the hosts each step is done on are worked out with the procedure
on its worker (`worked_out`), so filtering by host is a list walk on the GUI thread."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from app.report.steps import step_targets

STEP_ROLE = Qt.ItemDataRole.UserRole        # (section position, step position) of a step row
TITLE = -1                                  # the step position of a section's title row
UNRESOLVED = QBrush(QColor("#9c1c1c"))
TITLE_FILL = QBrush(QColor("#eef2f6"))
HEADERS = ("Step", "Target")
Index = QModelIndex | QPersistentModelIndex


def worked_out(methodology: Any) -> None:
    """What the view needs of every step, worked out once off the GUI thread: the hosts each
    step is done on (by the step's position), every host named, the steps with commands and
    those with unresolved values."""
    hosts: list[list[list[str]]] = []
    names: set[str] = set()
    automated = unresolved = 0
    for section in methodology.sections:
        per_step = []
        for step in section.steps:
            targets = step_targets(step)
            per_step.append(targets)
            names.update(targets)
            automated += bool(step.automation)
            unresolved += bool(step.unresolved)
        hosts.append(per_step)
    methodology.step_hosts = hosts
    methodology.hosts = sorted(names)
    methodology.automated = automated
    methodology.unresolved = unresolved


class StepModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.methodology: Any = None
        self._rows: list[tuple[int, int]] = []      # (section, step or TITLE) per row shown
        self._bold = QFont()
        self._bold.setBold(True)

    # ------------------------------------------------------------------ filling
    def set_methodology(self, methodology: Any, target: str | None) -> None:
        if methodology is not None and not hasattr(methodology, "step_hosts"):
            worked_out(methodology)
        self.beginResetModel()
        self.methodology = methodology
        self._rows = self._shown(target)
        self.endResetModel()

    def set_target(self, target: str | None) -> None:
        self.beginResetModel()
        self._rows = self._shown(target)
        self.endResetModel()

    def _shown(self, target: str | None) -> list[tuple[int, int]]:
        m = self.methodology
        if m is None:
            return []
        rows: list[tuple[int, int]] = []
        for si, section in enumerate(m.sections):
            if target is None:
                steps: Any = range(len(section.steps))
            else:
                steps = [ti for ti, hosts in enumerate(m.step_hosts[si]) if target in hosts]
            if steps:
                rows.append((si, TITLE))
                rows += [(si, ti) for ti in steps]
        return rows

    # ------------------------------------------------------------------ finding rows
    def targets_of(self, si: int, ti: int) -> list[str]:
        return self.methodology.step_hosts[si][ti]

    def step(self, index: Index) -> Any:
        if not index.isValid() or self.methodology is None or index.row() >= len(self._rows):
            return None
        si, ti = self._rows[index.row()]
        return None if ti == TITLE else self.methodology.sections[si].steps[ti]

    def is_title(self, row: int) -> bool:
        return self._rows[row][1] == TITLE

    def title_rows(self) -> list[int]:
        return [row for row, (_si, ti) in enumerate(self._rows) if ti == TITLE]

    def index_of(self, number: str) -> QModelIndex:
        """The row of the shown step numbered `number` (invalid when it is filtered out or gone)."""
        sections = self.methodology.sections if self.methodology is not None else []
        for row, (si, ti) in enumerate(self._rows):
            if ti != TITLE and str(sections[si].steps[ti].number) == number:
                return self.index(row, 0)
        return QModelIndex()

    def shown_steps(self) -> list[Any]:
        sections = self.methodology.sections
        return [sections[si].steps[ti] for si, ti in self._rows if ti != TITLE]

    def section_titles(self) -> list[str]:
        return [self.data(self.index(row, 0)) for row in self.title_rows()]

    # ------------------------------------------------------------------ the model's interface
    def rowCount(self, parent: Index = QModelIndex()) -> int:    # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:     # noqa: B008
        return 0 if parent.isValid() else 2

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        si, ti = self._rows[index.row()]
        section = self.methodology.sections[si]
        if ti == TITLE:
            if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:
                return f"{section.number}. {section.title}"
            if role == Qt.ItemDataRole.FontRole:
                return self._bold
            if role == Qt.ItemDataRole.BackgroundRole:
                return TITLE_FILL
            return None
        step = section.steps[ti]
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 1:
                return ", ".join(self.targets_of(si, ti))
            return f"    {step.number}  {' '.join(str(step.text).split())}"
        if index.column() != 0:
            return None
        if role == STEP_ROLE:
            return (si, ti)
        if role == Qt.ItemDataRole.ForegroundRole and step.unresolved:
            return UNRESOLVED
        if role == Qt.ItemDataRole.ToolTipRole:
            text = " ".join(str(step.text).split())
            if step.unresolved:
                text += "\n\nUnresolved: " + ", ".join(map(str, step.unresolved))
            return text
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if index.isValid() and index.row() < len(self._rows) and self._rows[index.row()][1] == TITLE:
            return Qt.ItemFlag.ItemIsEnabled        # a title is not a step to pick
        return super().flags(index)
