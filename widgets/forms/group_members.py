"""An array group's members on its form: the arrays whose `group` names it, each a link to its own
form (membership is edited there, on the array).  A group no array names says so: its members are
not stated in the bed, which a group of at least one member cannot be said to have none of."""
from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def members_html(bed: Any, group: str) -> str:
    members = [a.id for a in bed.arrays if a.group == group]
    if not members:
        return (f"<i>not stated</i> — no array names this group: set <code>group: {escape(group)}</code> on "
                "each member array")
    return ", ".join(f'<a href="{escape(m)}">{escape(m)}</a>' for m in members)


class GroupMembers(QLabel):
    """The members row; `load` reads them again (after an edit, an undo, a member's change)."""

    def __init__(self, document: Any, group: Callable[[], Any], pick: Callable[[str], None]):
        super().__init__()
        self.document = document
        self.group = group
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setToolTip("The arrays whose group field names this group; click one to edit it")
        self.linkActivated.connect(pick)

    def load(self) -> None:
        group = self.group()
        self.setText(members_html(self.document.bed, group.name) if group is not None else "")
