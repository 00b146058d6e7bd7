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
        self.tree.clear()
        areas: dict[str, QTreeWidgetItem] = {}
        for gap in self.gaps:
            group = areas.get(gap.area)
            if group is None:
                group = areas[gap.area] = QTreeWidgetItem(self.tree, [AREA_TITLES.get(gap.area, gap.area)])
                group.setFirstColumnSpanned(True)
                group.setExpanded(True)
            row = QTreeWidgetItem(group, [gap.message, gap.subject, gap.hint])
            row.setData(0, SUBJECT_ROLE, gap.subject)
            for column, text in enumerate((gap.message, gap.subject, gap.hint)):
                row.setToolTip(column, text)
        for area, group in areas.items():
            group.setText(0, f"{AREA_TITLES.get(area, area)} ({group.childCount()})")
        text = counts(self.gaps)
        self.heading.setText(
            f"<b style='color:#c62828'>Not ready:</b> {text}. The rules judge the design; these keep the "
            "procedure from being carried out." if text else
            "Nothing found that keeps the procedure from being carried out (pre-flight still checks each host).")
        self.summary_changed.emit(text)

    def _picked(self, item: QTreeWidgetItem, _column: int) -> None:
        subject = item.data(0, SUBJECT_ROLE)
        if subject:
            self.selection.focus([subject])
