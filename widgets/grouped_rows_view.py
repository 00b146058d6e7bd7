"""A grouped list as a person uses it (the findings, the readiness gaps): a table of
widgets/grouped_rows.py's flat rows that reads as a tree.  Each group's row spans the columns and
carries an open/closed arrow; its items are indented under it.  A click on the arrow or a double
click opens or closes a group, and the keyboard works as in a tree: Left closes a group (on an
item: goes to its group), Right opens it (on an open group: goes to its first item), + and -
open and close, Space and Enter toggle.  A table, not a QTreeView: a tree lays out every row of
an open group whenever the list changes, a table only the rows in sight."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOption,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from widgets.grouped_rows import GroupedRowsModel

INDENT = 20         # the arrow's room, as a tree indents a level


class _TreeLook(QStyledItemDelegate):
    """Group rows get a tree's arrow, item rows the indentation under it."""

    def paint(self, painter: Any, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        view = self.parent()
        model = index.model()
        if index.column() != 0 or model.message:
            super().paint(painter, option, index)
            return
        style = view.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, view)
        key = model.group_key(index)
        if key is not None:
            arrow = QStyleOption()
            arrow.initFrom(view)
            arrow.rect = QRect(option.rect.left(), option.rect.top(), INDENT, option.rect.height())
            arrow.state = QStyle.StateFlag.State_Children | QStyle.StateFlag.State_Item
            if key not in model.collapsed:
                arrow.state |= QStyle.StateFlag.State_Open
            style.drawPrimitive(QStyle.PrimitiveElement.PE_IndicatorBranch, arrow, painter, view)
        shifted = QStyleOptionViewItem(option)
        shifted.rect = option.rect.adjusted(INDENT, 0, 0, 0)
        super().paint(painter, shifted, index)


class GroupedRowsView(QTableView):
    def __init__(self, model: GroupedRowsModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.setModel(model)
        self.setItemDelegate(_TreeLook(self))
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setTabKeyNavigation(False)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = self.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(max(self.fontMetrics().height(), 16) + 2)     # as a tree spaces its rows
        self.horizontalHeader().setHighlightSections(False)
        self.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        model.modelReset.connect(self.span_groups)
        model.rowsInserted.connect(self.span_groups)
        model.rowsRemoved.connect(self.span_groups)

    def header(self) -> QHeaderView:
        """The column header (a tree's name for it)."""
        return self.horizontalHeader()

    def span_groups(self, *_: Any) -> None:
        """Group rows (and the message row) span every column, as a tree's first column would."""
        self.clearSpans()
        model = self.model()
        for row in model.group_rows() if model.rowCount() else ():
            self.setSpan(row, 0, 1, model.columnCount())

    # ------------------------------------------------------------------ opening and closing groups
    def toggle(self, index: QModelIndex) -> bool:
        key = self.model().group_key(index)
        if key is None:
            return False
        self.model().set_collapsed(key, key not in self.model().collapsed)
        return True

    def mousePressEvent(self, event: Any) -> None:
        index = self.indexAt(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and self.model().group_key(index) is not None \
                and event.position().x() < self.visualRect(index).left() + INDENT:
            self.setCurrentIndex(index)
            self.toggle(index)
            return
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: Any) -> None:
        if not self.toggle(self.indexAt(event.position().toPoint())):
            super().mouseDoubleClickEvent(event)

    def keyPressEvent(self, event: Any) -> None:
        model, index, key = self.model(), self.currentIndex(), event.key()
        if index.isValid() and not model.message and self._tree_key(model, index, key):
            return
        super().keyPressEvent(event)

    def _tree_key(self, model: GroupedRowsModel, index: QModelIndex, key: int) -> bool:
        K = Qt.Key
        g, position = model.locate(index.row())
        group = model.groups[g][0]
        closed = group in model.collapsed
        if position >= 0:
            if key == K.Key_Left:               # an item: to its group
                self.setCurrentIndex(model.index(model.group_rows()[g], 0))
                return True
            return False
        if key in (K.Key_Space, K.Key_Return, K.Key_Enter):
            return self.toggle(index)
        if key in (K.Key_Left, K.Key_Minus) and not closed:
            model.set_collapsed(group, True)
            return True
        if key in (K.Key_Right, K.Key_Plus) and closed:
            model.set_collapsed(group, False)
            return True
        if key == K.Key_Right and model.groups[g][1]:
            self.setCurrentIndex(model.index(index.row() + 1, 0))
            return True
        return key in (K.Key_Left, K.Key_Minus, K.Key_Plus)
