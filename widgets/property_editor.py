"""The property editor: the selected component as a form generated from the model's field metadata.

Fields come from `topology.fileformat.plan(cls)`: a choice becomes a combo box, a number a
spin box that knows its minimum, a flag a check box, text a line edit, a list of choices a
tick menu, a free list a small list editor, a nested record (the CPU) a group.  Every
committed change is exactly one `document.apply(...)`: a SetField, or for a name the
rename edit that also rewrites every reference (topology.rename_ops).  Input the model
cannot take is refused with a message next to the field, and nothing changes.  The form
reads the model again when the document says the shown component was touched, so undo
and redo show up here too.
"""
from __future__ import annotations

import difflib
import math
import re
from html import escape
from typing import Any, Callable

import yaml
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QValidator
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QFormLayout, QFrame, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QListWidget, QListWidgetItem, QMenu, QPlainTextEdit,
                               QPushButton, QScrollArea, QSizePolicy, QTableWidget, QTableWidgetItem, QToolButton,
                               QVBoxLayout, QWidget)

from topology.edits import SetField
from topology.fileformat import plan
from topology.index import BedIndex
from topology.model import Bed
from topology.rename_ops import Located, RenameError, locate, ref_candidates, rename

NOT_SET = "(not set)"



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

class FieldError(ValueError):
    """Input the field cannot take; the message is shown next to the field."""


# ============================================================================ formatting and parsing

def format_number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def parse_number(text: str, *, integer: bool, minimum: float | None, optional: bool, unit: str = "") -> Any:
    """The number a person typed, or FieldError saying what is wrong with it."""
    raw = text.strip()
    if unit and raw.lower().endswith(unit.lower()):
        raw = raw[: -len(unit)].strip()      # "8 GB" in a GB field
    if not raw:
        if optional:
            return None
        raise FieldError("a value is required")
    try:
        number = float(raw.replace(",", ""))
    except ValueError:
        raise FieldError(f"{text.strip()!r} is not a number") from None
    if integer and math.isfinite(number):
        if not number.is_integer():
            raise FieldError(f"{text.strip()!r} is not a whole number")
        value: Any = int(number)
    else:
        value = number
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(f"{text.strip()!r} is not a number")
    if minimum is not None and value < minimum:
        raise FieldError(f"must be at least {format_number(minimum)}")
    return value


def parse_scalar(text: str) -> Any:
    """A mapping value or list item typed as text: numbers and true/false become typed values."""
    text = text.strip()
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (str, int, float, bool)) or value is None else text


def scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return format_number(value) if isinstance(value, (int, float)) else str(value)


class _NoWheelUnlessFocused(QObject):
    """Scrolling the form must not change the field under the mouse."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and isinstance(obj, QWidget) and not obj.hasFocus():
            event.ignore()
            return True
        return False


_WHEEL_GUARD = _NoWheelUnlessFocused()


def guard_wheel(widget: QWidget) -> None:
    widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    widget.installEventFilter(_WHEEL_GUARD)


# ============================================================================ editors

class TextField(QLineEdit):
    committed = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shown = ""
        self.editingFinished.connect(self._finish)

    def show_value(self, value: Any) -> None:
        self._shown = "" if value is None else str(value)
        self.setText(self._shown)
        self.setCursorPosition(0)            # long values read from their beginning

    def _finish(self) -> None:
        if self.text() != self._shown or self.property("invalid"):
            self.committed.emit(self.text())


class NoteField(QPlainTextEdit):
    """Multi-line text (notes, descriptions): committed when the person leaves the field."""
    committed = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._shown = ""
        self.setTabChangesFocus(True)
        self._fit(2)

    def _fit(self, lines: int) -> None:
        self.setFixedHeight(self.fontMetrics().lineSpacing() * lines + 12)

    def show_value(self, value: Any) -> None:
        self._shown = value or ""
        self.setPlainText(self._shown)
        self._fit(2 if len(self._shown) < 40 else 5)

    def focusOutEvent(self, event: Any) -> None:
        super().focusOutEvent(event)
        if self.toPlainText() != self._shown:
            self.committed.emit(self.toPlainText())


class NumberBox(QAbstractSpinBox):
    """A spin box that lets the person type anything, so wrong input gets a message instead
    of being silently dropped keystroke by keystroke; arrows step from the minimum up."""
    committed = Signal(object)

    def __init__(self, *, integer: bool, minimum: float | None, optional: bool, unit: str = "",
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.integer, self.minimum, self.optional, self.unit = integer, minimum, optional, unit
        self._shown = ""
        self.setAccelerated(True)
        self.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToPreviousValue)
        if optional:
            self.lineEdit().setPlaceholderText("not stated")
        guard_wheel(self)
        self.editingFinished.connect(self._finish)

    def validate(self, text: str, pos: int) -> object:
        return QValidator.State.Acceptable, text, pos

    def show_value(self, value: Any) -> None:
        self._shown = format_number(value)
        self.lineEdit().setText(self._shown)
        self.lineEdit().setCursorPosition(0)

    def _current(self) -> float | None:
        try:
            return parse_number(self.text(), integer=self.integer, minimum=None, optional=True, unit=self.unit)
        except FieldError:
            return None

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:
        flags = QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        value = self._current()
        if value is not None and (self.minimum is None or value > self.minimum):
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags

    def stepBy(self, steps: int) -> None:
        value = self._current()
        if value is None:
            value = self.minimum if self.minimum is not None else 0
        value = value + steps
        if self.minimum is not None:
            value = max(value, self.minimum)
        self.lineEdit().setText(format_number(int(value) if self.integer else float(value)))
        self.committed.emit(self.text())

    def _finish(self) -> None:
        if self.text() != self._shown or self.property("invalid"):
            self.committed.emit(self.text())


class ChoiceCombo(QComboBox):
    """One of a fixed set of values; the empty value reads '(not set)'."""
    committed = Signal(object)

    def __init__(self, choices: tuple[str, ...], parent: QWidget | None = None):
        super().__init__(parent)
        for c in choices:
            self.addItem(c.replace("_", " ") if c else NOT_SET, c)
        guard_wheel(self)
        self.activated.connect(lambda i: self.committed.emit(self.itemData(i)))

    def show_value(self, value: Any) -> None:
        i = self.findData(value if value is not None else "")
        if i < 0:                       # a value the choices do not list: show it rather than hide it
            self.addItem(str(value), value)
            i = self.count() - 1
        self.setCurrentIndex(i)


class RefCombo(QComboBox):
    """A reference to another component: pick from the bed's ids or type one (checked on commit)."""
    committed = Signal(object)

    def __init__(self, candidates: Callable[[], list[str]], optional: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.candidates, self.optional = candidates, optional
        self._shown = ""
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.lineEdit().setPlaceholderText("none" if optional else "required")
        guard_wheel(self)
        self.activated.connect(lambda i: self.committed.emit(self.itemText(i)))
        self.lineEdit().editingFinished.connect(self._finish)

    def showPopup(self) -> None:
        text = self.currentText()
        self.blockSignals(True)
        self.clear()
        self.addItems(([""] if self.optional else []) + self.candidates())
        self.setEditText(text)
        self.blockSignals(False)
        super().showPopup()

    def show_value(self, value: Any) -> None:
        self._shown = value or ""
        self.blockSignals(True)
        if self.findText(self._shown) < 0:
            self.addItem(self._shown)
        self.setCurrentIndex(self.findText(self._shown))
        self.setEditText(self._shown)
        self.lineEdit().setCursorPosition(0)
        self.blockSignals(False)

    def _finish(self) -> None:
        if self.currentText() != self._shown or self.property("invalid"):
            self.committed.emit(self.currentText())


class BoolField(QCheckBox):
    """Yes / no, and 'not stated' (partly checked) for a field the report may leave open."""
    committed = Signal(object)

    def __init__(self, optional: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.setTristate(optional)
        self.clicked.connect(lambda _checked: self.committed.emit(self._value()))

    def _value(self) -> bool | None:
        state = self.checkState()
        if state == Qt.CheckState.PartiallyChecked:
            return None
        return state == Qt.CheckState.Checked

    def show_value(self, value: Any) -> None:
        if value is None and self.isTristate():
            self.setCheckState(Qt.CheckState.PartiallyChecked)
        else:
            self.setCheckState(Qt.CheckState.Checked if value else Qt.CheckState.Unchecked)
        self.setText({None: "not stated", True: "yes", False: "no"}[None if value is None else bool(value)])


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
            self.committed.emit({k: _parse_structured(v) for k, v in rows})

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


def _parse_structured(text: str) -> Any:
    text = text.strip()
    if text.startswith(("[", "{")):
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return text
    return parse_scalar(text)


# ============================================================================ the form

HIDDEN_FIELDS = {"x", "y", "format_version"}     # canvas positions are set by dragging
MULTILINE_FIELDS = {"note", "description", "source"}
_WORDS = {"id": "Name", "mtu": "MTU", "cpu": "CPU", "vcpu": "vCPUs", "os": "OS", "bios": "BIOS", "vlan": "VLAN",
          "vlans": "VLANs", "wwpn": "WWPN", "numa": "NUMA", "cidr": "CIDR", "lun": "LUN", "iops": "IOPS",
          "dns": "DNS", "sriov": "SR-IOV", "os_": "OS", "ip": "IP", "vm": "VM", "vms": "VMs", "raid": "RAID",
          "rpm": "RPM", "ghz": "Clock (GHz)", "iscsi": "iSCSI"}
_UNITS = {"gb": "GB", "gbps": "Gb/s", "ghz": "GHz", "kb": "KB", "ms": "ms", "s": "s", "pct": "%",
          "minutes": "min", "iops": "IOPS"}
_KIND_TITLES = {"VM": "VM", "virtual NIC": "Virtual NIC"}


def field_label(attr: str) -> tuple[str, str]:
    """('Memory (GB)', 'GB') for 'memory_gb'."""
    words = attr.split("_")
    unit = ""
    if len(words) > 1 and words[-1] in _UNITS:
        unit = _UNITS[words.pop()]
    text = " ".join(_WORDS.get(w, w) for w in words)
    if words[0] not in _WORDS:               # 'vCPUs per thread' keeps its small v
        text = text[:1].upper() + text[1:]
    return (f"{text} ({unit})" if unit else text), unit


def edit_words(label: str) -> str:
    """'Memory (GB)' -> 'memory (GB)' for an undo text; 'MTU' and 'vCPUs' stay as they are."""
    first = label.split(" ")[0]
    return label if len(first) > 1 and (first.isupper() or first[0].islower()) else label[:1].lower() + label[1:]


def _is_optional(fp: Any) -> bool:
    return not fp.required and fp.default is None


class _Binding:
    """One field of one model object on the form: its editor and its message line."""

    def __init__(self, holder: Callable[[], Any], fp: Any, editor: QWidget, message: QLabel, label: str,
                 unit: str, path: str):
        self.holder, self.fp, self.editor, self.message = holder, fp, editor, message
        self.label, self.unit, self.path = label, unit, path
        self.is_name = False

    @property
    def attr(self) -> str:
        return self.fp.attr

    def load(self) -> None:
        obj = self.holder()
        if obj is None:
            return
        self.editor.blockSignals(True)
        try:
            self.editor.show_value(getattr(obj, self.attr))
        finally:
            self.editor.blockSignals(False)
        self.clear_error()

    def _text_part(self) -> QWidget | None:
        if isinstance(self.editor, QLineEdit):
            return self.editor
        line = getattr(self.editor, "lineEdit", None)
        return line() if callable(line) else None

    def show_error(self, text: str) -> None:
        self.message.setText(text)
        self.message.show()
        self.editor.setProperty("invalid", True)
        part = self._text_part()
        if part is not None:               # tint only the text: the widget keeps its native frame and arrows
            part.setStyleSheet("background: #fdecea;")

    def clear_error(self) -> None:
        if self.editor.property("invalid"):
            self.editor.setProperty("invalid", False)
            part = self._text_part()
            if part is not None:
                part.setStyleSheet("")
        self.message.hide()
        self.message.clear()


class _Group:
    """A nested record (CPU, dynamic memory, policy) shown as a group box."""

    def __init__(self, holder: Callable[[], Any], fp: Any, box: QGroupBox, add: QPushButton,
                 remove: QToolButton | None, body: QWidget):
        self.holder, self.fp, self.box, self.add, self.remove, self.body = holder, fp, box, add, remove, body

    def load(self) -> None:
        parent = self.holder()
        value = getattr(parent, self.fp.attr) if parent is not None else None
        self.body.setVisible(value is not None)
        self.add.setVisible(value is None)
        if self.remove is not None:
            self.remove.setVisible(value is not None)


class PropertyEditor(QWidget):
    """The selected component as a form; every committed change is one document edit."""

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self._loc: Located | None = None
        self._subject: str | None = None
        self._mode = ""                      # "component", "bed", "many", "missing"
        self._bindings: list[_Binding] = []
        self._groups: list[_Group] = []
        self._index_cache: tuple[int, BedIndex] | None = None

        self.title = QLabel(self)
        self.title.setObjectName("propertyTitle")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle = QLabel(self)
        self.subtitle.setWordWrap(True)
        self.subtitle.setStyleSheet("color: palette(mid);")
        self.subtitle.linkActivated.connect(lambda s: self.selection.set([s]))
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.scroll, 1)

        selection.changed.connect(self._selection_changed)
        document.changed.connect(self._document_changed)
        document.reset.connect(lambda: self.rebuild(after_reset=True))
        self.rebuild()

    # ------------------------------------------------------------------ public (views, tests)
    @property
    def shown_subject(self) -> str | None:
        """The subject id on the form ('' for the bed's own settings, None for nothing)."""
        return self._subject

    def editor(self, path: str) -> QWidget:
        """The editor of a field by its path on the form: 'memory_gb', 'cpu.sockets'."""
        return self._binding(path).editor

    def message(self, path: str) -> str:
        """The message shown next to a field ('' when the field is fine)."""
        b = self._binding(path)
        return b.message.text() if not b.message.isHidden() else ""

    def group_add_button(self, attr: str) -> QPushButton:
        return next(g.add for g in self._groups if g.fp.attr == attr)

    def _binding(self, path: str) -> _Binding:
        for b in self._bindings:
            if b.path == path:
                return b
        raise KeyError(f"no field {path!r} on the form (shown: {self._subject!r})")

    # ------------------------------------------------------------------ following the document
    def _selection_changed(self, ids: frozenset) -> None:
        if self._mode == "component" and set(ids) == {self._subject}:
            return                           # our own rename moved the selection along
        self.rebuild()

    def _document_changed(self, ids: set) -> None:
        if self._mode == "bed":
            self._load_all()
            return
        if self._mode == "missing":
            self.rebuild()                   # undo may bring the selected component back
            return
        if self._mode != "component" or self._loc is None:
            return
        loc = self._loc
        subject = loc.current_subject()
        found = locate(self.document.bed, subject)
        if found is None or found.obj is not loc.obj:
            self.rebuild()                   # deleted, or another object took the id
            return
        owners = {i.split(":", 1)[0] for i in ids}
        previous = self._subject
        if subject != previous:              # renamed (or a rename was undone): the selection follows
            self._loc, self._subject = found, subject
            self.selection.set((set(self.selection.ids) - {previous}) | {subject})
            self._show_header()
        if not ids or loc.owner in owners or (previous or "").split(":", 1)[0] in owners:
            self._load_all()
            self._show_header()

    def _load_all(self) -> None:
        for b in self._bindings:
            b.load()
        for g in self._groups:
            g.load()
        if self._mode == "component":
            self._refresh_summaries()

    # ------------------------------------------------------------------ building
    def rebuild(self, *, after_reset: bool = False) -> None:
        ids = self.selection.ids
        self._clear_form()
        bed = self.document.bed
        if after_reset and len(ids) == 1 and locate(bed, next(iter(ids))) is None:
            ids = frozenset()                # another bed was opened: the old selection means nothing here
        if len(ids) == 1:
            (subject,) = ids
            loc = locate(bed, subject)
            if loc is None:
                self._mode, self._loc, self._subject = "missing", None, None
                self.title.setText(subject)
                self.subtitle.setText("This id names nothing in the bed (it was removed or renamed).")
                self._finish_form(None)
                return
            self._mode, self._loc, self._subject = "component", loc, subject
            self._show_header()
            form = self._new_form()
            self._add_fields(form, lambda loc=loc: loc.obj, type(loc.obj), "", root=True)
            self._finish_form(form)
        elif not ids:
            self._mode, self._loc, self._subject = "bed", None, ""
            self.title.setText("Test bed")
            self.subtitle.setText("Nothing is selected: these are the bed's own settings. "
                                  "Select a component on the canvas or in the component tree to edit it.")
            form = self._new_form()
            for attr, title in (("bed", "Description"), ("policy", "Validation policy")):
                fp = next(f for f in plan(Bed) if f.attr == attr)
                box = QGroupBox(title, self._form_host)
                inner = QFormLayout(box)
                self._tune(inner)
                self._add_fields(inner, lambda attr=attr: getattr(self.document.bed, attr), fp.inner, attr + ".",
                                 root=False)
                form.addRow(box)
            self._finish_form(form)
        else:
            self._mode, self._loc, self._subject = "many", None, None
            self.title.setText(f"{len(ids)} components selected")
            links = ", ".join(f'<a href="{escape(i)}">{escape(i)}</a>' for i in sorted(ids))
            self.subtitle.setText(f"Pick one to edit it: {links}")
            self._finish_form(None)
        self._load_all()

    def _show_header(self) -> None:
        loc = self._loc
        kind = _KIND_TITLES.get(loc.kind, loc.kind[:1].upper() + loc.kind[1:])
        self.title.setText(f"{kind} {loc.current_subject()}")
        parts = []
        if loc.obj is not loc.device:
            parts.append(f'of <a href="{escape(loc.device.id)}">{escape(loc.device.id)}</a>')
        if loc.detail:
            parts.append(escape(loc.detail))
        self.subtitle.setText("; ".join(parts))
        self.subtitle.setVisible(bool(parts))

    def _clear_form(self) -> None:
        for b in self._bindings:
            b.editor.blockSignals(True)      # a field losing focus while it goes must not edit anything
        self._bindings, self._groups, self._summaries = [], [], []
        old = self.scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.subtitle.show()

    def _new_form(self) -> QFormLayout:
        self._form_host = host = QWidget()    # kept: the layout lives only as long as its widget
        column = QVBoxLayout(host)
        column.setContentsMargins(0, 0, 0, 0)
        fields = QWidget(host)
        form = QFormLayout(fields)
        form.setContentsMargins(0, 0, 4, 0)
        self._tune(form)
        column.addWidget(fields)
        column.addStretch(1)                 # spare height goes below the form, not between its rows
        return form

    @staticmethod
    def _tune(form: QFormLayout) -> None:
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setVerticalSpacing(4)

    def _finish_form(self, form: QFormLayout | None) -> None:
        host = self._form_host if form is not None else QWidget()
        self._form_host = None
        self.scroll.setWidget(host)

    def _add_fields(self, form: QFormLayout, holder: Callable[[], Any], cls: type, prefix: str, *,
                    root: bool) -> None:
        for fp in plan(cls):
            if fp.attr in HIDDEN_FIELDS:
                continue
            label, unit = field_label(fp.attr)
            if fp.kind == "dc":
                self._add_group(form, holder, fp, label, prefix)
                continue
            if fp.kind == "list" and fp.inner[0] == "dc":
                if root:
                    self._add_summary(form, holder, fp, label)
                continue
            editor = self._make_editor(fp, unit, holder)
            if editor is None:
                continue
            message = QLabel()
            message.setWordWrap(True)
            message.setStyleSheet("color: #c62828;")
            message.hide()
            cell = QWidget()
            column = QVBoxLayout(cell)
            column.setContentsMargins(0, 0, 0, 0)
            column.setSpacing(1)
            column.addWidget(editor)
            column.addWidget(message)
            binding = _Binding(holder, fp, editor, message, label, unit, prefix + fp.attr)
            binding.is_name = root and self._loc is not None and fp.attr == self._loc.name_attr
            tip = fp.meta.get("doc") or ""
            if binding.is_name:
                tip = (tip + "\n" if tip else "") + "Renaming also renames every reference to it."
            name_label = QLabel(label)
            name_label.setToolTip(tip)
            editor.setToolTip(tip)
            editor.committed.connect(lambda raw, b=binding: self._commit(b, raw))
            form.addRow(name_label, cell)
            self._bindings.append(binding)

    def _add_group(self, form: QFormLayout, holder: Callable[[], Any], fp: Any, label: str, prefix: str) -> None:
        cls = fp.inner
        box = QGroupBox(label)
        outer = QVBoxLayout(box)
        outer.setContentsMargins(6, 4, 6, 4)
        add = QPushButton(f"Add {label.lower()} details", box)
        add.setToolTip("Not stated yet")
        add.setEnabled(all(not f.required for f in plan(cls)))
        add.clicked.connect(lambda _=False, h=holder, fp=fp: self._set_group(h, fp, fp.inner()))
        remove = None
        if fp.default is None and not fp.required:
            remove = QToolButton(box, text=f"Remove {label} details",
                                 toolTip=f"Mark the {label} as not stated in the report")
            remove.clicked.connect(lambda _=False, h=holder, fp=fp: self._set_group(h, fp, None))
        body = QWidget(box)
        inner = QFormLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        self._tune(inner)
        self._add_fields(inner, lambda h=holder, a=fp.attr: getattr(h(), a) if h() is not None else None,
                         cls, prefix + fp.attr + ".", root=False)
        outer.addWidget(add)
        outer.addWidget(body)
        if remove is not None:
            outer.addWidget(remove, 0, Qt.AlignmentFlag.AlignRight)
        form.addRow(box)
        self._groups.append(_Group(holder, fp, box, add, remove, body))

    def _set_group(self, holder: Callable[[], Any], fp: Any, value: Any) -> None:
        label = edit_words(field_label(fp.attr)[0])
        verb = "Add" if value is not None else "Clear"
        self._apply(SetField(holder(), fp.attr, value, text=f"{verb} {label} of {self._edit_subject()}",
                             owner=self._owner()))

    def _add_summary(self, form: QFormLayout, holder: Callable[[], Any], fp: Any, label: str) -> None:
        text = QLabel()
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        text.linkActivated.connect(lambda s: self.selection.set([s]))
        text.setToolTip("Click a name to edit it")
        form.addRow(QLabel(label), text)
        self._summaries.append((holder, fp, text))

    def _refresh_summaries(self) -> None:
        for holder, fp, label in self._summaries:
            items = getattr(holder(), fp.attr)
            label.setText(self._summary_html(items) or "<i>none</i>")

    def _summary_html(self, items: list[Any]) -> str:
        loc = self._loc
        out = []
        for item in items:
            text = escape(_item_name(item))
            subject = self._subject_of_child(item)
            if subject:
                text = f'<a href="{escape(subject)}">{text}</a>'
            ports = getattr(item, "ports", None)
            if ports:
                links = [f'<a href="{escape(loc.device.id + ":" + p.name)}">{escape(p.name)}</a>' for p in ports]
                text += ": " + ", ".join(links)
            out.append(text)
        sep = "<br>" if any(getattr(i, "ports", None) for i in items) else ", "
        return sep.join(out)

    def _subject_of_child(self, item: Any) -> str:
        loc = self._loc
        dev = loc.device.id
        name = getattr(item, "name", None)
        candidates = []
        if isinstance(name, str):
            candidates += [f"{dev}:{name}", f"{dev}:group:{name}", f"{dev}:pool:{name}"]
        slots = getattr(item, "slots", None)
        if isinstance(slots, str) and getattr(loc.obj, "name", None) and loc.kind == "enclosure":
            first = slots.split("-")[0].strip()
            candidates.append(f"{dev}:{loc.obj.name}:{first}")
        bed = self.document.bed
        for c in candidates:
            hit = locate(bed, c)
            if hit is not None and hit.obj is item:
                return c
        return ""

    # ------------------------------------------------------------------ editors by field kind
    def _make_editor(self, fp: Any, unit: str, holder: Callable[[], Any]) -> QWidget | None:
        meta = fp.meta
        optional = _is_optional(fp)
        choices = meta.get("choices")
        ref = meta.get("ref")
        if fp.kind == "str":
            if choices:
                return ChoiceCombo(tuple(choices))
            if ref:
                return RefCombo(lambda ref=ref, h=holder: self._candidates(ref, h), optional=not fp.required)
            if fp.attr in MULTILINE_FIELDS:
                return NoteField()
            return TextField()
        if fp.kind in ("int", "float"):
            return NumberBox(integer=fp.kind == "int", minimum=meta.get("minimum"), optional=optional, unit=unit)
        if fp.kind == "bool":
            return BoolField(optional=optional)
        if fp.kind == "list":
            inner_kind = fp.inner[0]
            if choices:
                return ChoiceListField(lambda c=tuple(choices): list(c))
            if ref and ref not in ("port", "component", "target"):
                return ChoiceListField(lambda ref=ref, h=holder: self._candidates(ref, h))
            parse = {"int": lambda t: int(float(t)), "float": float}.get(inner_kind, parse_scalar)
            if inner_kind == "str":
                parse = str.strip
            return TextListField(parse)
        if fp.kind == "dict":
            return MappingField()
        if fp.kind == "any":
            return TextField()
        return None

    def _index(self) -> BedIndex:
        rev = self.document.revision
        if self._index_cache is None or self._index_cache[0] != rev or self._index_cache[1].bed is not self.document.bed:
            self._index_cache = (rev, BedIndex(self.document.bed))
        return self._index_cache[1]

    def _candidates(self, kind: str, holder: Callable[[], Any]) -> list[str]:
        array = self._loc.array if self._loc is not None else None
        return ref_candidates(self.document.bed, kind, array, self._index())

    # ------------------------------------------------------------------ committing
    def _edit_subject(self) -> str:
        return self._subject or "the bed"

    def _owner(self) -> str:
        return self._loc.owner if self._loc is not None else ""

    def _commit(self, binding: _Binding, raw: Any) -> None:
        obj = binding.holder()
        if obj is None:
            return
        try:
            value = self._parse(binding, raw)
        except FieldError as exc:
            binding.show_error(self._refusal(exc, getattr(obj, binding.attr)))
            return
        if binding.is_name:
            loc = self._loc
            if value == getattr(obj, binding.attr):
                binding.load()
                return
            try:
                edit = rename(self.document.bed, loc.current_subject(), loc.subject_with(value))
            except RenameError as exc:
                binding.show_error(self._refusal(exc, getattr(obj, binding.attr)))
                return
            self._apply(edit)
            return
        if value == getattr(obj, binding.attr):
            binding.load()                   # e.g. '8 GB' typed where 8 was: show it the way it is stored
            return
        self._apply(SetField(obj, binding.attr, value, text=f"Set {edit_words(binding.label)} of {self._edit_subject()}",
                             owner=self._owner()))

    @staticmethod
    def _refusal(exc: Exception, current: Any) -> str:
        """The reason, and that the stored value stays (Enter on the old text, or Undo, is not needed)."""
        if current is None or current == "":
            kept = "not stated"
        elif isinstance(current, (int, float)) and not isinstance(current, bool):
            kept = format_number(current)
        elif isinstance(current, list):
            kept = ", ".join(map(str, current)) or "empty"
        else:
            kept = str(current)
        return f"{exc} — still {kept}"

    def _apply(self, edit: Any) -> None:
        self.document.apply(edit)

    def _parse(self, binding: _Binding, raw: Any) -> Any:
        fp, meta = binding.fp, binding.fp.meta
        kind = fp.kind
        if kind in ("int", "float"):
            return parse_number(str(raw), integer=kind == "int", minimum=meta.get("minimum"),
                                optional=_is_optional(fp), unit=binding.unit)
        if kind == "str":
            text = str(raw)
            if binding.attr not in MULTILINE_FIELDS:
                text = text.strip()
            if fp.required and not text:
                raise FieldError("a value is required")
            choices = meta.get("choices")
            if choices and text not in choices:
                raise FieldError(f"{text!r} is not one of: {', '.join(c or NOT_SET for c in choices)}")
            ref = meta.get("ref")
            if ref and text and text not in self._candidates(ref, binding.holder):
                near = difflib.get_close_matches(text, self._candidates(ref, binding.holder), 1)
                hint = f" — did you mean {near[0]!r}?" if near else ""
                raise FieldError(f"{text!r} does not name a {ref.replace('_', ' ')} in this bed{hint}")
            pattern = meta.get("pattern")
            if pattern and text and not re.match(pattern, text):
                raise FieldError(f"{text!r} does not have the expected form")
            return text
        if kind == "list":
            items = list(raw)
            choices = meta.get("choices")
            ref = meta.get("ref")
            allowed = list(choices) if choices else (self._candidates(ref, binding.holder) if ref else None)
            for item in items:
                if allowed is not None and item not in allowed:
                    raise FieldError(f"{item!r} is not one of the allowed values")
            if len(set(map(str, items))) != len(items):
                raise FieldError("an item is listed twice")
            return items
        return raw


def _item_name(item: Any) -> str:
    for attr in ("id", "name"):
        v = getattr(item, attr, None)
        if isinstance(v, str) and v:
            return v
    if hasattr(item, "slots"):
        size = format_number(getattr(item, "size_gb", None))
        return f"slots {item.slots}" + (f" ({size} GB {getattr(item, 'media', '')})" if size else "")
    if hasattr(item, "volume") and hasattr(item, "to"):
        lun = f" as LUN {item.lun}" if getattr(item, "lun", None) is not None else ""
        return f"{item.volume} → {item.to}{lun}"
    if hasattr(item, "count") and hasattr(item, "model"):
        return f"{item.count} × {item.model or 'disk'}"
    if hasattr(item, "metric"):
        return f"{item.metric} {getattr(item, 'comparison', '')} {format_number(getattr(item, 'threshold', ''))}"
    return type(item).__name__
