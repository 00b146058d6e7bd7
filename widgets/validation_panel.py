"""The validation panel: one row per finding (code, severity, message, subjects), the
fix hint as tooltip; accepted findings (documented exceptions) stay listed, greyed."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QStyle, QTreeWidget, QTreeWidgetItem

_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
          "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
          "info": QStyle.StandardPixmap.SP_MessageBoxInformation}
SUBJECTS_ROLE = Qt.ItemDataRole.UserRole


class ValidationPanel(QTreeWidget):
    """Emits `subjects_selected` with the component ids of the finding the user picks."""

    subjects_selected = Signal(list)

    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setColumnCount(4)
        self.setHeaderLabels(["Code", "Severity", "Message", "Subjects"])
        self.setWordWrap(False)
        self.itemSelectionChanged.connect(self._emit_subjects)
        self.findings: list[Any] = []
        self.subjects_selected.connect(lambda ids: selection.focus(ids))
        document.validation.findings_changed.connect(self.show_findings)
        document.validation.failed.connect(self.show_message)
        document.validation.run_now()

    def show_findings(self, findings: list[Any]) -> None:
        self.clear()
        self.findings = list(findings)
        for f in self.findings:
            accepted = bool(getattr(f, "accepted", False))
            severity = f.severity + (" (accepted)" if accepted else "")
            item = QTreeWidgetItem(self, [f.code, severity, f.message, ", ".join(f.subjects)])
            item.setIcon(1, self.style().standardIcon(_ICONS.get(f.severity, _ICONS["info"])))
            item.setData(0, SUBJECTS_ROLE, list(f.subjects))
            tip = f.message + (f"\n\nHow to fix: {f.hint}" if f.hint else "")
            if accepted:
                tip += f"\n\nAccepted: {getattr(f, 'exception_reason', '')}"
                for col in range(4):
                    item.setForeground(col, QBrush(QColor("gray")))
            for col in range(4):
                item.setToolTip(col, tip)
        if not self.findings:
            QTreeWidgetItem(self, ["", "", "No findings: the bed passes every rule.", ""])
        for col in (0, 1):
            self.resizeColumnToContents(col)
        self.setColumnWidth(2, max(self.columnWidth(2), 640))

    def show_message(self, text: str) -> None:
        self.clear()
        self.findings = []
        QTreeWidgetItem(self, ["", "", text, ""])

    def summary(self) -> str:
        counts = {s: sum(1 for f in self.findings if f.severity == s and not getattr(f, "accepted", False))
                  for s in ("error", "warning", "info")}
        accepted = sum(1 for f in self.findings if getattr(f, "accepted", False))
        words = {"error": "error", "warning": "warning", "info": "note"}
        text = ", ".join(f"{n} {words[s]}{'s' if n != 1 else ''}" for s, n in counts.items())
        return text + (f", {accepted} accepted" if accepted else "")

    def _emit_subjects(self) -> None:
        items = self.selectedItems()
        if items and items[0].data(0, SUBJECTS_ROLE):
            self.subjects_selected.emit(list(items[0].data(0, SUBJECTS_ROLE)))
