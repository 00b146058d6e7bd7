"""Fields that edit a list or a mapping: ticked choices, a free list, key/value settings."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from widgets.forms.values import parse_structured, scalar_text


def _beside_add_remove(owner: QWidget, editor: QWidget, noun: str, add, remove) -> tuple[QToolButton, QToolButton]:
    """Lay out `editor` with a column of + / − buttons to its right, as the list editors have."""
    add_button = QToolButton(owner, text="+", toolTip=f"Add {'an' if noun[0] in 'aeiou' else 'a'} {noun}")
    remove_button = QToolButton(owner, text="−", toolTip=f"Remove the selected {noun}")
    add_button.clicked.connect(add)
    remove_button.clicked.connect(remove)
    buttons = QVBoxLayout()
    buttons.setContentsMargins(0, 0, 0, 0)
    buttons.addWidget(add_button)
    buttons.addWidget(remove_button)
    buttons.addStretch(1)
    row = QHBoxLayout(owner)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(editor, 1, Qt.AlignmentFlag.AlignTop)
    row.addLayout(buttons)
    return add_button, remove_button


class ChoiceListField(QPushButton):
    """A list whose items come from a set (roles, purposes, cluster nodes): tick them in a menu."""
    committed = Signal(object)

    def __init__(self, choices: Callable[[], list[str]], parent: QWidget | None = None):
        super().__init__(parent)
        self.choices = choices
        self._value: list[str] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setStyleSheet("QPushButton { text-align: left; padding: 3px 6px; }")
        menu = QMenu(self)
        menu.aboutToShow.connect(self._fill)
        menu.triggered.connect(self._toggled)
        self.setMenu(menu)

    def _fill(self) -> None:
        menu = self.menu()
        menu.clear()
        names = list(dict.fromkeys(list(self.choices()) + self._value))
        for name in names:
            action = QAction(name.replace("_", " ") if "_" in name and name.islower() else name, menu)
            action.setData(name)
            action.setCheckable(True)
            action.setChecked(name in self._value)
            menu.addAction(action)

    def _toggled(self, action: QAction) -> None:
        name = action.data()
        new = [v for v in self._value if v != name] if name in self._value else self._value + [name]
        self.committed.emit(new)

    def toggle(self, name: str) -> None:
        """What ticking `name` in the menu does (keyboard access and tests)."""
        self._fill()
        action = next(a for a in self.menu().actions() if a.data() == name)
        action.trigger()

    def show_value(self, value: Any) -> None:
        self._value = list(value or [])
        self.setText(", ".join(str(v) for v in self._value) or "none")
        self.setToolTip("Click to tick or untick items")


class TextListField(QWidget):
    """A free list (software, DNS servers, VLANs): one item per row, edit in place, add, remove."""
    committed = Signal(object)

    def __init__(self, parse: Callable[[str], Any], parent: QWidget | None = None):
        super().__init__(parent)
        self.parse = parse
        self._value: list[Any] = []
        self._loading = False
        self.list = QListWidget(self)
        self.list.setEditTriggers(QListWidget.EditTrigger.DoubleClicked | QListWidget.EditTrigger.EditKeyPressed
                                  | QListWidget.EditTrigger.SelectedClicked)
        self.list.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setUniformItemSizes(True)
        self.list.itemChanged.connect(self._edited)
        self.list.itemDelegate().closeEditor.connect(self._editor_closed)
        self.add_button, self.remove_button = _beside_add_remove(self, self.list, "item", self.add_item,
                                                                  self.remove_selected)

    def show_value(self, value: Any) -> None:
        self._value = list(value or [])
        self._loading = True
        self.list.clear()
        for v in self._value:
            item = QListWidgetItem(scalar_text(v))
            item.setToolTip(scalar_text(v))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
        self._loading = False
        self._fit()

    def _fit(self) -> None:
        rows = max(1, min(self.list.count(), 5))
        self.list.setFixedHeight((self.fontMetrics().height() + 4) * rows + 2 * self.list.frameWidth() + 2)

    def _texts(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _edited(self, _item: QListWidgetItem) -> None:
        if self._loading:
            return
        texts = [t for t in self._texts() if t.strip()]
        if len(texts) == len(self._texts()):
            self.committed.emit([self.parse(t) for t in texts])

    def _editor_closed(self, _editor: QWidget, _hint: Any) -> None:
        # an added row left empty is dropped again without an edit
        if any(not t.strip() for t in self._texts()):
            self.show_value(self._value)

    def add_item(self) -> None:
        item = QListWidgetItem("")
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self._loading = True
        self.list.addItem(item)
        self._loading = False
        self._fit()
        self.list.setCurrentItem(item)
        self.list.editItem(item)

    def remove_selected(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self._value):
            self.committed.emit(self._value[:row] + self._value[row + 1:])


class MappingField(QWidget):
    """Free key/value settings (BIOS, offloads, attributes): a two-column table."""
    committed = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._value: dict[str, Any] = {}
        self._loading = False
        self.table = QTableWidget(0, 2, self)
        self.table.setHorizontalHeaderLabels(["Setting", "Value"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.table.itemChanged.connect(self._edited)
        self.table.itemDelegate().closeEditor.connect(self._editor_closed)
        self.add_button, self.remove_button = _beside_add_remove(self, self.table, "setting", self.add_row,
                                                                  self.remove_selected)

    def show_value(self, value: Any) -> None:
        self._value = dict(value or {})
        self._loading = True
        self.table.setRowCount(0)
        for k, v in self._value.items():
            self._append(str(k), scalar_text(v) if not isinstance(v, (list, dict)) else yaml.safe_dump(
                v, default_flow_style=True).strip())
        self._loading = False
        self._fit()

    def _append(self, key: str, value: str) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        for column, text in ((0, key), (1, value)):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            self.table.setItem(r, column, item)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._fit_key_column()

    def _fit_key_column(self) -> None:
        # keys are what a person scans for: as wide as the longest, up to 60 % of the table
        metrics = self.table.fontMetrics()
        widest = max([metrics.horizontalAdvance(str(k)) for k in self._value] + [metrics.horizontalAdvance("Setting")])
        self.table.setColumnWidth(0, min(widest + 16, int(self.table.viewport().width() * 0.6)))

    def _fit(self) -> None:
        self._fit_key_column()
        rows = min(max(self.table.rowCount(), 1), 6)
        self.table.setFixedHeight(self.table.horizontalHeader().height() + rows * self.table.verticalHeader()
                                  .defaultSectionSize() + 2 * self.table.frameWidth())

    def _rows(self) -> list[tuple[str, str]]:
        out = []
        for r in range(self.table.rowCount()):
            k, v = self.table.item(r, 0), self.table.item(r, 1)
            out.append(((k.text() if k else "").strip(), v.text() if v else ""))
        return out

    def _edited(self, _item: QTableWidgetItem) -> None:
        if self._loading:
            return
        rows = self._rows()
        if all(k for k, _ in rows):
            self.committed.emit({k: parse_structured(v) for k, v in rows})

    def _editor_closed(self, _editor: QWidget, _hint: Any) -> None:
        if any(not k for k, _ in self._rows()):
            self.show_value(self._value)

    def add_row(self) -> None:
        self._loading = True
        self._append("", "")
        self._loading = False
        self._fit()
        self.table.setCurrentCell(self.table.rowCount() - 1, 0)
        self.table.editItem(self.table.item(self.table.rowCount() - 1, 0))

    def remove_selected(self) -> None:
        row = self.table.currentRow()
        keys = list(self._value)
        if 0 <= row < len(keys):
            self.committed.emit({k: v for k, v in self._value.items() if k != keys[row]})
