"""What the user has selected, shared by every view (canvas, tree, properties, findings).

Ids are the validator's subject ids: component ids (``R710-1``), ports (``R710-1:SAN1``),
volumes (``MD3000i:Logs``), disk groups (``MD3000i:group:SQL``), pools
(``MD3000i:pool:Pool 0``), slots (``MD3000i:E0:3``).
"""
from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal


class Selection(QObject):
    changed = Signal(object)        # frozenset[str]
    centre_requested = Signal(object)  # frozenset[str]: views bring these into sight

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._ids: frozenset[str] = frozenset()

    @property
    def ids(self) -> frozenset[str]:
        return self._ids

    def set(self, ids: Iterable[str]) -> None:
        new = frozenset(ids)
        if new != self._ids:
            self._ids = new
            self.changed.emit(new)

    def clear(self) -> None:
        self.set(())

    def focus(self, ids: Iterable[str]) -> None:
        """Select and ask every view to bring the components into sight (a finding was clicked)."""
        ids = frozenset(ids)
        self.set(ids)
        self.centre_requested.emit(ids)
