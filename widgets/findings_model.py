"""The validator's findings as a Qt item model: groups by severity (accepted ones apart),
one row per finding with its code, components and message; counts in words; the look of each
severity.  The validation panel shows it."""
from __future__ import annotations

from bisect import bisect_right
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon
from PySide6.QtWidgets import QStyle, QWidget

SEVERITIES = ("error", "warning", "info")
GROUP_TITLES = {"error": "Errors", "warning": "Warnings", "info": "Notes", "accepted": "Accepted as documented"}
SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("note", "notes")}
SEVERITY_COLOURS = {"error": "#c62828", "warning": "#b26a00", "info": "#1565c0", "accepted": "#616161"}
FINDING_ROLE = Qt.ItemDataRole.UserRole          # index into `findings` (None on group rows)
SUBJECTS_ROLE = Qt.ItemDataRole.UserRole + 1
GROUP_ROLE = Qt.ItemDataRole.UserRole + 2         # "error", "warning", "info", "accepted" on group rows
GROUP_ORDER = ("error", "warning", "info", "accepted")
_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
          "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
          "info": QStyle.StandardPixmap.SP_MessageBoxInformation}


def severity_icon(widget: QWidget, severity: str) -> QIcon:
    return widget.style().standardIcon(_ICONS.get(severity, _ICONS["info"]))


def finding_key(f: Any) -> tuple:
    """What identifies a finding across re-validations (acceptance does not change it)."""
    return f.code, tuple(f.subjects), f.message, getattr(f, "scenario", None)


def scenario_words(f: Any) -> str:
    """Where a finding holds ('the reference configuration', 'scenarios a, b', 'every configuration')."""
    said = getattr(f, "holds_in", "")
    if said:
        return said
    scenario = getattr(f, "scenario", None)
    return f"scenario {scenario}" if scenario else "the reference configuration"


def where_tag(f: Any) -> str:
    """'[scenarios a, b] ' before a finding's message in the list; nothing for the reference alone."""
    said = scenario_words(f)
    return "" if said == "the reference configuration" else f"[{said}] "


def count_words(findings: list[Any]) -> str:
    """'2 errors, 1 warning, 0 notes, 1 accepted' (accepted ones counted apart)."""
    open_ = [f for f in findings if not f.accepted]
    parts = []
    for s in SEVERITIES:
        n = sum(1 for f in open_ if f.severity == s)
        parts.append(f"{n} {SEVERITY_WORDS[s][n != 1]}")
    accepted = len(findings) - len(open_)
    return ", ".join(parts) + (f", {accepted} accepted" if accepted else "")


_NO_PARENT = QModelIndex()     # the invisible root, as Qt passes it


class FindingsModel(QAbstractTableModel):
    """Findings grouped by severity (accepted ones apart), filtered, as one flat list: each group's
    row, then its findings unless the group is collapsed.  Flat, for a QTableView: a tree view lays
    out every row of an open group whenever the list changes (a Python call per row, seconds for
    the 25,000 findings of a big bed); a table asks only for the rows in sight."""

    COLUMNS = ("Code", "Finding", "Components")

    def __init__(self, panel: QWidget):
        super().__init__(panel)
        self.panel = panel
        self.findings: list[Any] = []
        self.groups: list[tuple[str, list[int], int]] = []      # (key, finding indices shown, total)
        self.message = ""                                          # a single text row instead of groups
        self.collapsed: set[str] = set()                           # group keys shown closed
        self._starts: list[int] = []                               # each group's own row
        self._rows = 0
        self._icons = {k: severity_icon(panel, k) for k in _ICONS}
        self._grey = QBrush(QColor(SEVERITY_COLOURS["accepted"]))
        self._group_brushes = {k: QBrush(QColor(c)) for k, c in SEVERITY_COLOURS.items()}

    def show(self, findings: list[Any], groups: list[tuple[str, list[int], int]], message: str) -> None:
        self.beginResetModel()
        self.findings, self.groups, self.message = findings, groups, message
        self._lay_out()
        self.endResetModel()

    def _lay_out(self) -> None:
        starts, row = [], 0
        for key, shown, _total in self.groups:
            starts.append(row)
            row += 1 + (0 if key in self.collapsed else len(shown))
        self._starts, self._rows = starts, (1 if self.message else row)

    def set_collapsed(self, key: str, collapsed: bool) -> None:
        """Close or open a group: its findings' rows go or come, nothing else moves."""
        if collapsed == (key in self.collapsed):
            return
        g = next((i for i, (k, _s, _t) in enumerate(self.groups) if k == key), None)
        n = len(self.groups[g][1]) if g is not None and not self.message else 0
        first = self._starts[g] + 1 if n else 0
        if n:
            (self.beginRemoveRows if collapsed else self.beginInsertRows)(_NO_PARENT, first, first + n - 1)
        (self.collapsed.add if collapsed else self.collapsed.discard)(key)
        self._lay_out()
        if n:
            (self.endRemoveRows if collapsed else self.endInsertRows)()
        if g is not None and not self.message:
            row = self.index(self._starts[g], 0)
            self.dataChanged.emit(row, row)

    # rows: locate() is a bisection over the few groups, so any row costs the same
    def locate(self, row: int) -> tuple[int, int]:
        """(group, position among its findings shown; -1 for the group's own row)."""
        g = bisect_right(self._starts, row) - 1
        return g, row - self._starts[g] - 1

    def group_rows(self) -> list[int]:
        """The rows of the groups (the message's row when there is one)."""
        return [0] if self.message else list(self._starts)

    def finding_row(self, group: int, position: int) -> int | None:
        """The row of a group's `position`-th finding shown (None while the group is closed)."""
        return None if self.groups[group][0] in self.collapsed else self._starts[group] + 1 + position

    def group_key(self, index: QModelIndex) -> str | None:
        """The group a group's row stands for (None on a finding's row)."""
        if not index.isValid() or self.message:
            return None
        g, position = self.locate(index.row())
        return self.groups[g][0] if position < 0 else None

    def rowCount(self, parent: QModelIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: QModelIndex = _NO_PARENT) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    _GROUP_FLAGS = Qt.ItemFlag.ItemIsEnabled
    _ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return self._ROW_FLAGS if self.finding_index(index) is not None else self._GROUP_FLAGS

    def finding_index(self, index: QModelIndex) -> int | None:
        if not index.isValid() or self.message or not self._starts:
            return None
        g, position = self.locate(index.row())
        return self.groups[g][1][position] if position >= 0 else None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        col = index.column()
        if self.message:
            return self.message if role == Qt.ItemDataRole.DisplayRole and col == 0 else None
        g, position = self.locate(index.row())
        if position < 0:
            key, shown, total = self.groups[g]
            if col != 0:
                return None
            if role == Qt.ItemDataRole.DisplayRole:
                n = len(shown)
                return f"{GROUP_TITLES[key]} ({n}{f' of {total}' if n != total else ''})"
            if role == Qt.ItemDataRole.DecorationRole:
                return self._icons.get(key)
            if role == Qt.ItemDataRole.ForegroundRole:
                return self._group_brushes[key]
            if role == Qt.ItemDataRole.FontRole:
                font = QFont(self.panel.font())
                font.setBold(True)
                return font
            if role == GROUP_ROLE:
                return key
            return None
        i = self.groups[g][1][position]
        f = self.findings[i]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return f.code
            if col == 1:
                return where_tag(f) + f.message + (f" — accepted: {f.exception_reason}" if f.accepted else "")
            return ", ".join(f.subjects)
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            return self._icons.get(f.severity)
        if role == Qt.ItemDataRole.ForegroundRole and f.accepted:
            return self._grey
        if role == Qt.ItemDataRole.FontRole and f.accepted and col == 1:
            font = QFont(self.panel.font())
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{f.message}\n\nHolds in {scenario_words(f)}."
            if f.hint:
                tip += f"\n\nHow to fix: {f.hint}"
            if f.accepted:
                tip += f"\n\nAccepted as documented exception: {f.exception_reason}"
            return tip
        if role == FINDING_ROLE:
            return i
        if role == SUBJECTS_ROLE:
            return list(f.subjects)
        return None
