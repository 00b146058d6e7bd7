"""Which of the bed's configurations the window works in: the methodology shown, the run
started and the comparison's default baseline follow it.  One per document (a child QObject
found by `of`), so every view shares the choice without the document knowing of it.

A bed without configurations has no choice (`name` is None: the bed as drawn); otherwise the
choice is always one of the bed's configurations, the first until another is chosen, and it
follows a rename or removal of the configurations in the file.  QtCore only.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

_NAME = "configurationChoice"


class ConfigurationChoice(QObject):
    changed = Signal(object)          # the configuration's name, or None for a bed without any

    def __init__(self, document) -> None:
        super().__init__(document)
        self.setObjectName(_NAME)
        self.document = document
        self._name: str | None = None
        self._settle()
        document.reset.connect(self._settle)
        document.changed.connect(lambda _ids: self._settle())

    @classmethod
    def of(cls, document) -> ConfigurationChoice:
        found = document.findChild(ConfigurationChoice, _NAME)
        return found if found is not None else cls(document)

    @property
    def names(self) -> list[str]:
        return [c.id for c in self.document.bed.configurations]

    @property
    def name(self) -> str | None:
        return self._name

    def choose(self, name: str | None) -> None:
        if name is not None and name not in self.names:
            raise KeyError(f"no configuration {name!r} (configurations: {', '.join(self.names) or 'none'})")
        if name != self._name:
            self._name = name
            self.changed.emit(name)

    def _settle(self) -> None:
        names = self.names
        wanted = self._name if self._name in names else (names[0] if names else None)
        if wanted != self._name:
            self._name = wanted
            self.changed.emit(wanted)
