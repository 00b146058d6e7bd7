"""Fields that edit one value: text, notes, a number, a choice, a reference, a flag."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QAbstractSpinBox, QCheckBox, QComboBox, QLineEdit, QPlainTextEdit, QWidget

from topology.vocabulary import choice_label
from widgets.forms.values import NOT_SET, FieldError, format_number, parse_number


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
            self.addItem(choice_label(c) if c else NOT_SET, c)      # 'raid10' reads 'RAID 10', as everywhere
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
