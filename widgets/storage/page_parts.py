"""Building blocks the storage editor's pages share: lists, buttons, the two-column page."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

ID_ROLE = Qt.ItemDataRole.UserRole      # a list row's storage subject id (what it publishes)
ERROR_STYLE = "color: #b3261e;"
OK_STYLE = "color: #1b5e20;"
W = TypeVar("W", bound=QWidget)


def gb_text(value: float | None) -> str:
    return "?" if value is None else f"{value:,.0f}"


def tree(headers: list[str], multi: bool = False) -> QTreeWidget:
    t = QTreeWidget()
    style_list(t, headers, multi)
    return t


def style_list(t: QTreeWidget, headers: list[str], multi: bool = False) -> None:
    """A flat list with these column headers; `multi` lets Ctrl/Shift pick several rows."""
    t.setHeaderLabels(headers)
    t.setRootIsDecorated(False)
    t.setUniformRowHeights(True)
    t.setAlternatingRowColors(True)
    t.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection if multi
                       else QAbstractItemView.SelectionMode.SingleSelection)
    t.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    t.header().setStretchLastSection(True)


def picked_ids(t: QTreeWidget) -> list[str]:
    return [i.data(0, ID_ROLE) for i in t.selectedItems() if i.data(0, ID_ROLE)]


def select_rows(t: QTreeWidget, ids) -> None:
    """Select the rows whose subject is in `ids`, without telling anyone."""
    t.blockSignals(True)
    for i in range(t.topLevelItemCount()):
        item = t.topLevelItem(i)
        item.setSelected(item.data(0, ID_ROLE) in ids)
    t.blockSignals(False)


def swatch(colour: QColor) -> QIcon:
    pm = QPixmap(14, 14)
    pm.fill(colour)
    return QIcon(pm)


def named(widget: W, name: str) -> W:
    """`widget` with an object name (tests and style sheets find it by that name)."""
    widget.setObjectName(name)
    return widget


def button(text: str, slot: Callable[[], Any], name: str) -> QPushButton:
    b = named(QPushButton(text), name)
    b.clicked.connect(slot)
    return b


def columns(page: QWidget) -> tuple[QVBoxLayout, QVBoxLayout]:
    """Lay `page` out as a form column on the left and lists on the right."""
    row = QHBoxLayout(page)
    left, right = QVBoxLayout(), QVBoxLayout()
    holder = QWidget()
    holder.setLayout(left)
    holder.setMaximumWidth(430)
    holder.setMinimumWidth(340)
    row.addWidget(holder)
    row.addLayout(right, 1)
    return left, right
