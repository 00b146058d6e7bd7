"""The Readiness panel, beside Validation: what keeps the procedure from being carried out (values
the steps lack, hosts a run cannot reach, workloads no step starts), from `app.readiness`.

It lists what the methodology view worked out on its worker for the procedure it shows (the
chosen configuration's); picking a row selects the component to fill in, so its form opens.
The list is widgets/grouped_rows.py's flat model: a big bed has thousands of gaps, and only the
rows in sight are asked for (an item per gap stalled the window for half a second each time the
procedure was worked out again).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.readiness import AREA_TITLES, counts
from widgets.grouped_rows import GroupedRowsModel
from widgets.grouped_rows_view import GroupedRowsView

SUBJECT_ROLE = Qt.ItemDataRole.UserRole + 1


class ReadinessModel(GroupedRowsModel):
    """The gaps grouped by area, in the order `app.readiness` lists them."""

    COLUMNS = ("What", "Component", "How to fill it in")

    def __init__(self, panel: QWidget):
        super().__init__(panel)
        self.gaps: list[Any] = []

    def show(self, gaps: list[Any]) -> None:
        by_area: dict[str, list[int]] = {}
        for i, gap in enumerate(gaps):
            by_area.setdefault(gap.area, []).append(i)
        self.gaps = gaps
        self.show_groups([(area, shown, len(shown)) for area, shown in by_area.items()], "")

    def group_data(self, key: str, shown: int, total: int, col: int, role: int) -> Any:
        if col != 0:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{AREA_TITLES.get(key, key)} ({shown})"
        return None

    def item_data(self, i: int, col: int, role: int) -> Any:
        gap = self.gaps[i]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return (gap.message, gap.subject, gap.hint)[col]
        if role == SUBJECT_ROLE:
            return gap.subject
        return None


class ReadinessPanel(QWidget):
    summary_changed = Signal(str)          # '' when the procedure can be carried out as far as the bed says

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document, self.selection = document, selection
        self.gaps: list[Any] = []
        self._shown = False
        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.model = ReadinessModel(self)
        self.view = GroupedRowsView(self.model, self)
        self.view.setObjectName("readinessList")
        width = self.fontMetrics().horizontalAdvance("x")
        columns = self.view.header()
        columns.setStretchLastSection(True)
        columns.resizeSection(0, width * 80)
        columns.resizeSection(1, width * 16)
        self.view.clicked.connect(self._picked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.heading)
        layout.addWidget(self.view, 1)
        document.reset.connect(lambda: self.show_gaps([]))
        self.show_gaps([])

    def show_gaps(self, gaps: list[Any]) -> None:
        gaps = list(gaps)
        if self._shown and gaps == self.gaps:
            return      # an edit that left the procedure's gaps as they were: the list stands
        self._shown = True
        self._relist(gaps)
        text = counts(self.gaps)
        self.heading.setText(
            f"<b style='color:#c62828'>Not ready:</b> {text}. The rules judge the design; these keep the "
            "procedure from being carried out." if text else
            "Nothing found that keeps the procedure from being carried out (pre-flight still checks each host).")
        self.summary_changed.emit(text)

    def row_of(self, gap: Any) -> QModelIndex:
        """The row a gap is listed in (invalid when it is not listed, or its group is closed)."""
        for g, (_area, shown, _total) in enumerate(self.model.groups):
            for position, i in enumerate(shown):
                if self.gaps[i] == gap:
                    row = self.model.item_row(g, position)
                    return self.model.index(row, 0) if row is not None else QModelIndex()
        return QModelIndex()

    def _relist(self, gaps: list[Any]) -> None:
        """The list made afresh, keeping what a person was at: the gap picked (or the row where it
        was, when filling it in took it away) and how far the list was scrolled."""
        current = self.model.item_index(self.view.currentIndex())
        picked = self.gaps[current] if current is not None else None
        row, scrolled = self.view.currentIndex().row(), self.view.verticalScrollBar().value()
        self.gaps = gaps
        self.model.show(gaps)
        self.view.verticalScrollBar().setValue(scrolled)
        if picked is None:
            return
        index = self.row_of(picked)
        if not index.isValid() and 0 <= row < self.model.rowCount():
            index = self.model.index(row, 0)
        if index.isValid() and self.model.item_index(index) is not None:
            self.view.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)

    def _picked(self, index: QModelIndex) -> None:
        subject = index.data(SUBJECT_ROLE)
        if subject:
            self.selection.focus([subject])
