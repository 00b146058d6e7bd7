"""The Readiness panel, beside Validation: what keeps the procedure from being carried out (values
the steps lack, hosts a run cannot reach, workloads no step starts), from `app.readiness`.

It lists what the methodology view worked out on its worker for the procedure it shows (the
chosen configuration's); picking a row selects the component to fill in, so its form opens.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from app.readiness import AREA_TITLES, counts

SUBJECT_ROLE = Qt.ItemDataRole.UserRole + 1


class ReadinessPanel(QWidget):
    summary_changed = Signal(str)          # '' when the procedure can be carried out as far as the bed says

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document, self.selection = document, selection
        self.gaps: list[Any] = []
        self._shown = False
        self._rows: dict[tuple, QTreeWidgetItem] = {}       # a gap as listed -> its row
        self._groups: dict[str, QTreeWidgetItem] = {}       # an area -> the row its gaps are under
        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("readinessList")
        self.tree.setHeaderLabels(["What", "Component", "How to fill it in"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        width = self.fontMetrics().horizontalAdvance("x")
        self.tree.setColumnWidth(0, width * 80)
        self.tree.setColumnWidth(1, width * 16)
        self.tree.itemClicked.connect(self._picked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.heading)
        layout.addWidget(self.tree, 1)
        document.reset.connect(lambda: self.show_gaps([]))
        self.show_gaps([])

    def show_gaps(self, gaps: list[Any]) -> None:
        gaps = list(gaps)
        if self._shown and gaps == self.gaps:
            return      # an edit that left the procedure's gaps as they were: the rows stand
        self._shown = True
        self.gaps = gaps
        keys = _keys(gaps)
        if not any(key in self._rows for key in keys):
            self.tree.clear()       # another bed, or nothing in common: faster made afresh
            self._rows.clear()
            self._groups.clear()
        self._place_rows(keys, gaps)
        text = counts(self.gaps)
        self.heading.setText(
            f"<b style='color:#c62828'>Not ready:</b> {text}. The rules judge the design; these keep the "
            "procedure from being carried out." if text else
            "Nothing found that keeps the procedure from being carried out (pre-flight still checks each host).")
        self.summary_changed.emit(text)

    def _place_rows(self, keys: list[tuple], gaps: list[Any]) -> None:
        """The rows as `gaps` lists them; a row whose gap is still there stays as it is (an edit
        on the 5,000-device bed changes a few of its thousands: rebuilt whole, the list stalled the
        window for each)."""
        rows, wanted = self._rows, set(keys)
        for key in [k for k in rows if k not in wanted]:
            item = rows.pop(key)
            item.parent().removeChild(item)
        by_area: dict[str, list[tuple[tuple, Any]]] = {}
        for key, gap in zip(keys, gaps):
            by_area.setdefault(gap.area, []).append((key, gap))
        for area in [a for a in self._groups if a not in by_area]:
            self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(self._groups.pop(area)))
        for position, (area, listed) in enumerate(by_area.items()):
            group = self._groups.get(area)
            if group is None or self.tree.indexOfTopLevelItem(group) != position:
                if group is None:
                    group = self._groups[area] = QTreeWidgetItem([AREA_TITLES.get(area, area)])
                else:
                    self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(group))
                self.tree.insertTopLevelItem(position, group)
                group.setFirstColumnSpanned(True)
                group.setExpanded(True)
            for index, (key, gap) in enumerate(listed):
                item = rows.get(key)
                if item is not None and group.child(index) is item:
                    continue
                if item is not None:
                    group.removeChild(item)      # moved within its group
                else:
                    item = rows[key] = _row(gap)
                group.insertChild(index, item)
            group.setText(0, f"{AREA_TITLES.get(area, area)} ({group.childCount()})")

    def _picked(self, item: QTreeWidgetItem, _column: int) -> None:
        subject = item.data(0, SUBJECT_ROLE)
        if subject:
            self.selection.focus([subject])


def _keys(gaps: list[Any]) -> list[tuple]:
    """Each gap as its row shows it (the same twice: the second's key counts one more)."""
    seen: dict[tuple, int] = {}
    keys = []
    for gap in gaps:
        shown = (gap.area, gap.message, gap.subject, gap.hint)
        seen[shown] = seen.get(shown, -1) + 1
        keys.append((*shown, seen[shown]))
    return keys


def _row(gap: Any) -> QTreeWidgetItem:
    row = QTreeWidgetItem([gap.message, gap.subject, gap.hint])
    row.setData(0, SUBJECT_ROLE, gap.subject)
    for column, text in enumerate((gap.message, gap.subject, gap.hint)):
        row.setToolTip(column, text)
    return row
