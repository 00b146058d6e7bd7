"""The bed's configurations side by side (Edit › Configurations…): one column per configuration,
one row per setting one of them changes (`COMPONENT` · field), the bed's own value beside them;
a blank cell leaves the component as drawn.  The rows "description" and "not in use" say what each
configuration is and which parts it takes out of service.

Every change is one undoable edit of one configuration (its `set:` mapping, its `excluded:` list,
a configuration added or removed), and each value is checked as the loader checks the file
(`topology.configurations.typed_values`), so a bed that saves also opens."""
from __future__ import annotations

import copy
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from topology.configuration_spec import Configuration
from topology.configurations import ConfigurationError, resolve, typed_values
from topology.edits import InsertItem, RemoveItem, SetField
from topology.field_plan import plan
from topology.index import BedIndex
from topology.names import id_problem
from widgets.forms.parameters_field import cell_text
from widgets.forms.values import parse_structured
from widgets.lifetimes import exec_once

DESCRIPTION, EXCLUDED = ("description", ""), ("not in use", "")


class ConfigurationsDialog(QDialog):
    def __init__(self, document: Any, parent: Any = None):
        super().__init__(parent)
        self.setWindowTitle("Configurations: what each changes")
        self.setObjectName("configurationsDialog")
        self.document = document
        self._loading = False
        self._extra_rows: list[tuple[str, str]] = []
        self.table = QTableWidget(self)
        self.table.setObjectName("configurationsTable")
        self.table.itemChanged.connect(self._edited)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)   # side by side, alike
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        add = QPushButton("Add configuration…", self)
        add.clicked.connect(self.add_configuration)
        remove = QPushButton("Remove configuration…", self)
        remove.clicked.connect(self.remove_configuration)
        setting = QPushButton("Add a setting to compare…", self)
        setting.setToolTip("A component (R720, R720:SAN1, ARRAY:VOLUME) and one of its fields, e.g. R720 · os")
        setting.clicked.connect(self.add_setting)
        buttons = QHBoxLayout()
        for b in (add, remove, setting):
            buttons.addWidget(b)
        buttons.addStretch(1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("A blank cell leaves the component as drawn. Each change is one step of Edit › Undo.",
                                self))
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        layout.addWidget(close)
        document.changed.connect(lambda _ids: self.load())
        self.load()
        area = self.screen().availableGeometry() if self.screen() else None     # within a 1366x768 screen too
        self.resize(min(1000, area.width() - 40) if area else 1000, min(560, area.height() - 80) if area else 560)

    # ------------------------------------------------------------------ showing
    def rows(self) -> list[tuple[str, str]]:
        keys: dict[tuple[str, str], None] = {}
        for c in self.document.bed.configurations:
            for subject, fields in c.overrides.items():
                for key in (fields or {}):
                    keys[(subject, str(key))] = None
        keys.update(dict.fromkeys(self._extra_rows))
        return [DESCRIPTION, EXCLUDED, *keys]

    def load(self) -> None:
        bed = self.document.bed
        configs = bed.configurations
        idx = BedIndex(bed)
        rows = self.rows()
        self._loading = True
        try:
            self.table.clear()
            self.table.setColumnCount(1 + len(configs))
            self.table.setHorizontalHeaderLabels(["as drawn"] + [c.id for c in configs])
            self.table.setRowCount(len(rows))
            self.table.setVerticalHeaderLabels([f"{s} · {k}" if k else s for s, k in rows])
            for r, (subject, key) in enumerate(rows):
                drawn = QTableWidgetItem(self._drawn(bed, idx, subject, key))
                drawn.setFlags(drawn.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(r, 0, drawn)
                for c, cfg in enumerate(configs, start=1):
                    self.table.setItem(r, c, QTableWidgetItem(self._value(cfg, subject, key)))
        finally:
            self._loading = False

    @staticmethod
    def _drawn(bed: Any, idx: BedIndex, subject: str, key: str) -> str:
        if not key:
            return ""
        target = resolve(bed, idx, subject)
        fp = next((f for f in plan(type(target.obj)) if f.key == key), None) if target is not None else None
        return cell_text(getattr(target.obj, fp.attr)) if fp is not None else "(no such field)"

    @staticmethod
    def _value(cfg: Configuration, subject: str, key: str) -> str:
        if (subject, key) == DESCRIPTION:
            return cfg.description
        if (subject, key) == EXCLUDED:
            return ", ".join(cfg.excluded)
        fields = cfg.overrides.get(subject) or {}
        return cell_text(fields[key]) if key in fields else ""

    # ------------------------------------------------------------------ editing
    def say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #c62828;" if error else "")
        self.message.setText(text)

    def _edited(self, cell: QTableWidgetItem) -> None:
        if self._loading or cell.column() == 0:
            return
        cfg = self.document.bed.configurations[cell.column() - 1]
        subject, key = self.rows()[cell.row()]
        text = cell.text().strip()
        if (subject, key) == DESCRIPTION:
            edit = SetField(cfg, "description", text, text=f"Describe configuration {cfg.id}", owner=cfg.id)
        elif (subject, key) == EXCLUDED:
            parts = [p.strip() for p in text.split(",") if p.strip()]
            known = BedIndex(self.document.bed)
            unknown = [p for p in parts if resolve(self.document.bed, known, p) is None]
            if unknown:
                self.say(f"{', '.join(unknown)} names nothing in the bed — nothing changed", error=True)
                return self.load()
            edit = SetField(cfg, "excluded", parts, text=f"Set the parts out of use in {cfg.id}", owner=cfg.id)
        else:
            overrides = copy.deepcopy(cfg.overrides)
            fields = dict(overrides.get(subject) or {})
            if text:
                fields[key] = parse_structured(text)
            else:
                fields.pop(key, None)
            target = resolve(self.document.bed, BedIndex(self.document.bed), subject)
            try:
                if target is None:
                    raise ConfigurationError(f"{subject!r} names nothing in the bed")
                if text:
                    typed_values(target.obj, {key: fields[key]}, f"{cfg.id}, {subject}")
            except ConfigurationError as exc:
                self.say(f"{exc} — nothing changed", error=True)
                return self.load()
            if fields:
                overrides[subject] = fields
            else:
                overrides.pop(subject, None)
            edit = SetField(cfg, "overrides", overrides, text=f"Set {subject} {key} in configuration {cfg.id}",
                            owner=cfg.id)
        self.say("")
        self.document.apply(edit)

    def add_configuration(self) -> bool:
        bed = self.document.bed
        name, ok = _ask(self, "Add configuration", "Name of the configuration (e.g. esxi-5.5):",
                        f"configuration-{len(bed.configurations) + 1}")
        if not ok or not name.strip():
            return False
        name = name.strip()
        problem = id_problem(name)
        if problem is not None or name in {c.id for c in bed.configurations}:
            self.say(problem[0] if problem else f"{name!r} is already a configuration", error=True)
            return False
        self.document.apply(InsertItem(bed.configurations, Configuration(id=name), owner=name,
                                       text=f"Add configuration {name}"))
        return True

    def remove_configuration(self) -> bool:
        column = self.table.currentColumn()
        configs = self.document.bed.configurations
        if not 1 <= column <= len(configs):
            self.say("Pick a cell of the configuration to remove first.", error=True)
            return False
        cfg = configs[column - 1]
        self.document.apply(RemoveItem(configs, cfg, owner=cfg.id, text=f"Remove configuration {cfg.id}"))
        return True

    def add_setting(self) -> bool:
        text, ok = _ask(self, "Add a setting", "Component and field, e.g. R720 os or R720:SAN1 mtu:", "")
        parts = text.strip().rsplit(None, 1) if ok else []
        if len(parts) != 2:
            return False
        subject, key = parts
        target = resolve(self.document.bed, BedIndex(self.document.bed), subject)
        if target is None or not any(f.key == key for f in plan(type(target.obj))):
            self.say(f"{subject} {key}: no such component or field", error=True)
            return False
        self._extra_rows.append((subject, key))
        self.load()
        return True


def _ask(parent: Any, title: str, label: str, text: str) -> tuple[str, bool]:
    dialog = QInputDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setTextValue(text)
    ok = bool(exec_once(dialog))
    return dialog.textValue(), ok
