"""Which of the bed's configurations the window works in: the methodology shown, the run
started and the comparison's default baseline follow it.  One per document (a child QObject
found by `of`), so every view shares the choice without the document knowing of it.

A bed without configurations has no choice (`name` is None: the bed as drawn); otherwise the
choice is always one of the bed's configurations, the first until another is chosen, and it
follows a rename or removal of the configurations in the file.  QtCore only.

The views show the chosen configuration through `view()` (the bed as it stands in it: the OS
it installs, its access entries; built once per revision), `excluded()` (the parts it takes
out of use, drawn faded) and `overrides(subject)` (what it sets on one component).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

_NAME = "configurationChoice"


class ConfigurationChoice(QObject):
    changed = Signal(object)          # the configuration's name, or None for a bed without any

    def __init__(self, document) -> None:
        super().__init__(document)
        self.setObjectName(_NAME)
        self.document = document
        self._name: str | None = None
        self._view_key: tuple | None = None
        self._view: Any = None
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

    # ------------------------------------------------------------------ what the views show
    def _configuration(self) -> Any:
        return next((c for c in self.document.bed.configurations if c.id == self._name), None)

    def view(self) -> Any:
        """The bed as it stands in the chosen configuration; None for a bed without any (or one the
        configuration cannot be applied to: the loader names the problem)."""
        if self._name is None:
            return None
        key = (self.document.revision, id(self.document.bed), self._name)
        if key != self._view_key:
            from topology.configurations import ConfigurationError, configured
            try:
                self._view = configured(self.document.bed, self._name)
            except (ConfigurationError, KeyError, ValueError):
                self._view = None
            self._view_key = key
        return self._view

    def excluded(self) -> frozenset[str]:
        """The components and ports the chosen configuration takes out of use."""
        cfg = self._configuration()
        return frozenset(cfg.excluded) if cfg is not None else frozenset()

    def overrides(self, subject: str) -> dict[str, Any]:
        """The fields the chosen configuration gives one component (empty: it leaves it as drawn)."""
        cfg = self._configuration()
        found = cfg.overrides.get(subject) if cfg is not None else None
        return dict(found) if isinstance(found, dict) else {}
