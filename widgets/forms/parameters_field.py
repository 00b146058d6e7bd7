"""A workload's parameters as a table that lists the tool's known parameters (topology.workload_tools):
each known one has its row, empty until given; any other key the bed gives is listed below them.
An emptied value takes the key out.  One commit is one edit of the whole mapping."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from topology.workload_tools import known_parameters
from widgets.forms.list_fields import MappingField
from widgets.forms.values import parse_structured, scalar_text


class ParametersField(MappingField):
    def __init__(self, tool: Callable[[], str], parent: QWidget | None = None):
        super().__init__(parent)
        self.tool = tool
        self.table.setObjectName("parametersTable")
        self.table.setHorizontalHeaderLabels(["Parameter", "Value"])

    def show_value(self, value: Any) -> None:
        self._value = dict(value or {})
        known = known_parameters(self.tool())
        self._loading = True
        self.table.setRowCount(0)
        for key, meaning in known:
            given = key in self._value
            self._append(key, cell_text(self._value[key]) if given else "")
            cell = self.table.item(self.table.rowCount() - 1, 0)
            cell.setFlags(cell.flags() & ~Qt.ItemFlag.ItemIsEditable)
            cell.setToolTip(meaning)
            if not given:
                cell.setForeground(QBrush(QColor("#7a7a7a")))
                self.table.item(self.table.rowCount() - 1, 1).setToolTip(f"not given: {meaning}")
        for key, v in self._value.items():
            if key not in {k for k, _ in known}:
                self._append(str(key), cell_text(v))
        self._loading = False
        self._fit()

    def _fit(self) -> None:
        super()._fit()
        rows = min(max(self.table.rowCount(), 1), 10)
        self.table.setFixedHeight(self.table.horizontalHeader().height() + rows * self.table.verticalHeader()
                                  .defaultSectionSize() + 2 * self.table.frameWidth())

    def _edited(self, _item: QTableWidgetItem) -> None:
        if self._loading:
            return
        rows = self._rows()
        if all(k for k, _ in rows):       # after the cell's editor has closed: the edit redraws the table
            value = {k: parse_structured(v) for k, v in rows if v.strip()}
            QTimer.singleShot(0, self, lambda: self.committed.emit(value))

    def remove_selected(self) -> None:
        row = self.table.currentRow()
        key = self.table.item(row, 0).text() if 0 <= row < self.table.rowCount() else ""
        if key in self._value:
            self.committed.emit({k: v for k, v in self._value.items() if k != key})


def cell_text(v: Any) -> str:
    """A value as one line of a table: a list or mapping in YAML's flow style."""
    return scalar_text(v) if not isinstance(v, (list, dict)) else yaml.safe_dump(v, default_flow_style=True).strip()
