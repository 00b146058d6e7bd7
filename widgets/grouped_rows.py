"""Items in groups as one flat Qt table model: each group's row, then its items unless the group
is collapsed.  Flat, for widgets/grouped_rows_view.py's table: a tree view lays out every row of
an open group whenever the list changes (a Python call per row, seconds for the 25,000 findings
or the thousands of readiness gaps of a big bed); a table asks only for the rows in sight.

A subclass keeps its own items and says what a group's row and an item's row show
(`group_data`, `item_data`); the rows here are only positions: (group key, the indices of the
items shown in it, how many it has before filtering)."""
from __future__ import annotations

from bisect import bisect_right
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QFont

_NO_PARENT = QModelIndex()     # the invisible root, as Qt passes it


class GroupedRowsModel(QAbstractTableModel):
    COLUMNS: tuple[str, ...] = ()

    def __init__(self, panel: Any):
        super().__init__(panel)
        self.panel = panel                                         # the widget whose font the rows take
        self.groups: list[tuple[str, list[int], int]] = []      # (key, item indices shown, total)
        self.message = ""                                          # a single text row instead of groups
        self.collapsed: set[str] = set()                           # group keys shown closed
        self._starts: list[int] = []                               # each group's own row
        self._rows = 0

    def show_groups(self, groups: list[tuple[str, list[int], int]], message: str) -> None:
        self.beginResetModel()
        self.groups, self.message = groups, message
        self._lay_out()
        self.endResetModel()

    def _lay_out(self) -> None:
        starts, row = [], 0
        for key, shown, _total in self.groups:
            starts.append(row)
            row += 1 + (0 if key in self.collapsed else len(shown))
        self._starts, self._rows = starts, (1 if self.message else row)

    def set_collapsed(self, key: str, collapsed: bool) -> None:
        """Close or open a group: its items' rows go or come, nothing else moves."""
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
        """(group, position among its items shown; -1 for the group's own row)."""
        g = bisect_right(self._starts, row) - 1
        return g, row - self._starts[g] - 1

    def group_rows(self) -> list[int]:
        """The rows of the groups (the message's row when there is one)."""
        return [0] if self.message else list(self._starts)

    def item_row(self, group: int, position: int) -> int | None:
        """The row of a group's `position`-th item shown (None while the group is closed)."""
        return None if self.groups[group][0] in self.collapsed else self._starts[group] + 1 + position

    def group_key(self, index: QModelIndex) -> str | None:
        """The group a group's row stands for (None on an item's row)."""
        if not index.isValid() or self.message:
            return None
        g, position = self.locate(index.row())
        return self.groups[g][0] if position < 0 else None

    def item_index(self, index: QModelIndex) -> int | None:
        """The index of the item a row shows (None on a group's row)."""
        if not index.isValid() or self.message or not self._starts:
            return None
        g, position = self.locate(index.row())
        return self.groups[g][1][position] if position >= 0 else None

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
        return self._ROW_FLAGS if self.item_index(index) is not None else self._GROUP_FLAGS

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        col = index.column()
        if self.message:
            return self.message if role == Qt.ItemDataRole.DisplayRole and col == 0 else None
        g, position = self.locate(index.row())
        key, shown, total = self.groups[g]
        if position < 0:
            if role == Qt.ItemDataRole.FontRole and col == 0:
                return self._bold()         # every list's group rows read as headings
            return self.group_data(key, len(shown), total, col, role)
        return self.item_data(shown[position], col, role)

    def _bold(self) -> QFont:
        font = QFont(self.panel.font())
        font.setBold(True)
        return font

    def group_data(self, key: str, shown: int, total: int, col: int, role: int) -> Any:
        raise NotImplementedError

    def item_data(self, i: int, col: int, role: int) -> Any:
        raise NotImplementedError
