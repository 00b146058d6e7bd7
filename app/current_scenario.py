"""The scenario the views show, one for every view: the placement view's and the validation
panel's scenario boxes set it, and they, the canvas badges and the path view follow it.

The value is a scenario id, REFERENCE ("", the bed as drawn) or ALL ("*", every scenario at
once: the validation panel lists all findings, the canvas badges count them all; views that
can show only one configuration keep what they show).  Opening another bed goes back to ALL;
deleting or renaming the scenario shown goes back to ALL too (a rename is a new id here).
QtCore only.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

ALL = "*"
REFERENCE = ""


class CurrentScenario(QObject):
    changed = Signal(str)

    def __init__(self, document: Any, parent: QObject | None = None):
        super().__init__(parent or document)
        self.document = document
        self._value = ALL
        document.reset.connect(lambda: self.set(ALL))
        document.changed.connect(lambda _ids: self._still_there())

    @property
    def value(self) -> str:
        return self._value

    def set(self, value: str | None) -> None:
        """Show `value` everywhere (None counts as the reference configuration)."""
        value = REFERENCE if value is None else value
        if value not in (ALL, REFERENCE) and value not in self._ids():
            value = ALL
        if value != self._value:
            self._value = value
            self.changed.emit(value)

    def scenario_id(self) -> str | None:
        """The one scenario to show where a view shows one configuration (None: the reference)."""
        return self._value if self._value not in (ALL, REFERENCE) else None

    def _ids(self) -> set[str]:
        return {s.id for s in getattr(self.document.bed, "scenarios", ())}

    def _still_there(self) -> None:
        if self._value not in (ALL, REFERENCE) and self._value not in self._ids():
            self.set(ALL)
