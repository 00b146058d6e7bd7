"""The validator's findings as a Qt item model: groups by severity (accepted ones apart),
one row per finding with its code, components and message; counts in words; the look of each
severity.  The validation panel shows it."""
from __future__ import annotations

from collections import Counter
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon
from PySide6.QtWidgets import QStyle, QWidget

from widgets.grouped_rows import GroupedRowsModel

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
    counted = Counter("accepted" if f.accepted else f.severity for f in findings)
    parts = [f"{counted[s]} {SEVERITY_WORDS[s][counted[s] != 1]}" for s in SEVERITIES]
    return ", ".join(parts) + (f", {counted['accepted']} accepted" if counted["accepted"] else "")


class FindingsModel(GroupedRowsModel):
    """Findings grouped by severity (accepted ones apart), filtered (widgets/grouped_rows.py)."""

    COLUMNS = ("Code", "Finding", "Components")

    def __init__(self, panel: QWidget):
        super().__init__(panel)
        self.findings: list[Any] = []
        self._icons = {k: severity_icon(panel, k) for k in _ICONS}
        self._grey = QBrush(QColor(SEVERITY_COLOURS["accepted"]))
        self._group_brushes = {k: QBrush(QColor(c)) for k, c in SEVERITY_COLOURS.items()}

    def show(self, findings: list[Any], groups: list[tuple[str, list[int], int]], message: str) -> None:
        self.findings = findings
        self.show_groups(groups, message)

    def group_data(self, key: str, shown: int, total: int, col: int, role: int) -> Any:
        if col != 0:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{GROUP_TITLES[key]} ({shown}{f' of {total}' if shown != total else ''})"
        if role == Qt.ItemDataRole.DecorationRole:
            return self._icons.get(key)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._group_brushes[key]
        if role == GROUP_ROLE:
            return key
        return None

    def item_data(self, i: int, col: int, role: int) -> Any:
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
