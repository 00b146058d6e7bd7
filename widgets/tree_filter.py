"""The component tree's filter box: rows whose component matches the text (its id, or a name,
address or note anywhere inside it) stay; sections with no match are hidden."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from topology.search import matching_components
from widgets.component_tree import ID_ROLE


class FilteredTree(QWidget):
    """The tree with a filter line above it (the dock shows this; `tree` is the tree itself)."""

    def __init__(self, tree: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("filteredTree")
        self.tree = tree
        self.filter = QLineEdit(self)
        self.filter.setObjectName("treeFilter")
        self.filter.setPlaceholderText("Filter components")
        self.filter.setClearButtonEnabled(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.filter)
        layout.addWidget(tree, 1)
        self._timer = QTimer(self, singleShot=True, interval=150, timeout=self.apply)
        self.filter.textChanged.connect(lambda _t: self._timer.start())
        # the tree redraws 150 ms after an edit: filter what it drew
        self._after_redraw = QTimer(self, singleShot=True, interval=250, timeout=self.apply)
        tree.document.changed.connect(lambda _ids: self.filter.text() and self._after_redraw.start())
        tree.document.reset.connect(lambda: self.filter.text() and self._after_redraw.start())

    def apply(self) -> int:
        """Hide the rows that do not match; returns how many component rows are shown."""
        self._timer.stop()
        text = self.filter.text().strip().lower()
        tree = self.tree
        wanted = matching_components(tree.document.bed, text) if text else set()
        shown = 0
        for i in range(tree.topLevelItemCount()):
            section = tree.topLevelItem(i)
            visible = 0
            for j in range(section.childCount()):
                row = section.child(j)
                ident = row.data(0, ID_ROLE) or ""
                # its own words (id, names, addresses, notes), not the Details column's mention of a host
                keep = not text or ident in wanted or text in row.text(0).lower()
                row.setHidden(not keep)
                visible += keep
            section.setHidden(bool(text) and section.childCount() > 0 and not visible)
            shown += visible
        return shown
