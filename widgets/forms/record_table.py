"""A list of small records as an editable table (a workload's criteria, access mix and levels, a
server's local disks): one column per field, one row per record, and an empty last row to type a
new one into.  Each cell is one undoable edit of the document; a new row is added once its
required cells are filled (one edit), a row is removed with its button (one edit).  Values are
checked as the loader checks them (`topology.names.field_problem`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from topology.edits import InsertItem, RemoveItem, SetField
from topology.fileformat import plan
from topology.names import field_problem
from topology.unknown import MARKER, NOT_STATED
from widgets.forms.labels import field_label
from widgets.forms.values import FieldError, format_number, parse_number

NEW_ROW_HINT = "type here to add"
ALWAYS_SHOWN = {"unit", "random_pct", "targets", "count", "size_gb", "media"}


@dataclass(frozen=True)
class _Cell:
    """A cell's place and text as they were when it was edited (read as a table item is)."""
    at_row: int
    at_column: int
    typed: str

    def row(self) -> int:
        return self.at_row

    def column(self) -> int:
        return self.at_column

    def text(self) -> str:
        return self.typed


def _text(value: Any) -> str:
    if value is NOT_STATED:
        return MARKER
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return format_number(value) if isinstance(value, (int, float)) else ("" if value is None else str(value))


def parse_cell(fp: Any, text: str) -> Any:
    """What a cell's text means for its field (FieldError saying why not)."""
    text = text.strip()
    if text == MARKER:
        return NOT_STATED
    if fp.kind in ("int", "float"):
        return parse_number(text, integer=fp.kind == "int", minimum=fp.meta.get("minimum"),
                            optional=not fp.required, unit=field_label(fp.attr)[1])
    if fp.kind == "bool":
        if not text:
            return None
        if text.lower() in ("yes", "true", "on", "1"):
            return True
        if text.lower() in ("no", "false", "off", "0"):
            return False
        raise FieldError(f"{text!r}: write yes or no")
    if fp.kind == "list":
        return [t.strip() for t in text.replace(";", ",").split(",") if t.strip()]
    if fp.required and not text:
        raise FieldError("a value is required")
    return text


class RecordTable(QWidget):
    def __init__(self, document: Any, holder: Callable[[], Any], fp: Any, owner: Callable[[], str],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.document, self.holder, self.fp, self.owner = document, holder, fp, owner
        self.cls = fp.inner[1]
        self.fields = [f for f in plan(self.cls) if f.kind in ("str", "int", "float", "bool", "list")]
        self._loading = False
        self._pending: dict[str, Any] = {}
        self.table = QTableWidget(0, len(self.fields), self)
        self.table.setObjectName(f"records_{fp.attr}")
        self.table.setHorizontalHeaderLabels([field_label(f.attr)[0] + (" *" if f.required else "")
                                              for f in self.fields])
        for i, f in enumerate(self.fields):
            self.table.horizontalHeaderItem(i).setToolTip(f.meta.get("doc") or "")
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        # the columns share the panel's width (narrow at 1366x768); optional ones nobody filled in are hidden
        # until asked for (the header's right-click menu, or "All columns")
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.all_columns = QAction("Show all columns", self.table, checkable=True)
        self.all_columns.toggled.connect(lambda _on: self.load())
        self.table.horizontalHeader().addAction(self.all_columns)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)   # its height is reserved
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.table.itemChanged.connect(self._edited)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828;")
        self.message.hide()
        self.remove = QToolButton(self, text="−", toolTip="Remove the selected row")
        self.remove.clicked.connect(self.remove_selected)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.table, 1, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.remove, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(row)
        column.addWidget(self.message)

    def items(self) -> list[Any]:
        obj = self.holder()
        return list(getattr(obj, self.fp.attr)) if obj is not None else []

    def _show(self, row: int, column: int, text: str, tip: str = "") -> None:
        cell = self.table.item(row, column)
        if cell is None:
            self.table.setItem(row, column, QTableWidgetItem(text))
            cell = self.table.item(row, column)
        elif cell.text() != text:
            cell.setText(text)
        cell.setToolTip(tip)

    def load(self) -> None:
        self._loading = True
        try:
            items = self.items()
            self.table.setRowCount(len(items) + 1)
            for r, item in enumerate(items):
                for c, f in enumerate(self.fields):
                    self._show(r, c, _text(getattr(item, f.attr)))
            for c, f in enumerate(self.fields):       # the new row: what was typed so far
                typed = f.attr in self._pending
                self._show(len(items), c, _text(self._pending[f.attr]) if typed else "",
                           NEW_ROW_HINT if c == 0 and not typed else "")
        finally:
            self._loading = False
        for c, f in enumerate(self.fields):
            used = any(_text(getattr(item, f.attr)) for item in items) or f.attr in self._pending
            self.table.setColumnHidden(c, not (self.all_columns.isChecked() or f.required or used
                                               or f.attr in ALWAYS_SHOWN))
        rows = min(len(items) + 1, 8)
        header = self.table.horizontalHeader().sizeHint().height()
        row_height = self.table.verticalHeader().defaultSectionSize()
        scroll = self.table.horizontalScrollBar().sizeHint().height()
        self.table.setFixedHeight(header + rows * row_height + scroll + 2 * self.table.frameWidth())
        self.setFixedHeight(self.table.height() + (self.message.sizeHint().height() if self.message.text() else 0))

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _edited(self, cell: QTableWidgetItem) -> None:
        if not self._loading:     # after the cell's editor has closed: the edit may redraw the table
            row, column, text = cell.row(), cell.column(), cell.text()
            QTimer.singleShot(0, self, lambda: self._commit(row, column, text))

    def _commit(self, row: int, column: int, text: str) -> None:
        cell = _Cell(row, column, text)
        items = self.items()
        fp = self.fields[cell.column()]
        try:
            value = parse_cell(fp, cell.text())
            problem = None if value is NOT_STATED or value is None else field_problem(self.cls, fp.attr, value)
            if problem is not None:
                raise FieldError(f"{problem[0]} — {problem[1]}")
        except FieldError as exc:
            self._say(f"{field_label(fp.attr)[0]}: {exc}")
            self.load()
            return
        self._say("")
        words = field_label(self.fp.attr)[0].lower()
        if cell.row() < len(items):
            item = items[cell.row()]
            if getattr(item, fp.attr) != value:
                what = field_label(fp.attr)[0].lower()
                self.document.apply(SetField(item, fp.attr, value, owner=self.owner(),
                                             text=f"Set {what} in {words} of {self.owner()}"))
            return
        self._pending[fp.attr] = value
        missing = [f for f in self.fields if f.required and f.attr not in self._pending]
        if missing:
            self._say(f"New row: fill in {', '.join(field_label(f.attr)[0] for f in missing)} to add it")
            self.load()
            return
        record = self.cls(**{k: v for k, v in self._pending.items() if v is not None})
        self._pending = {}
        self.document.apply(InsertItem(getattr(self.holder(), self.fp.attr), record, owner=self.owner(),
                                       text=f"Add a row to {words} of {self.owner()}"))

    def remove_selected(self) -> None:
        items, row = self.items(), self.table.currentRow()
        if 0 <= row < len(items):
            words = field_label(self.fp.attr)[0].lower()
            self.document.apply(RemoveItem(getattr(self.holder(), self.fp.attr), items[row], owner=self.owner(),
                                           text=f"Remove a row from {words} of {self.owner()}"))
        elif self._pending:
            self._pending = {}
            self.load()
