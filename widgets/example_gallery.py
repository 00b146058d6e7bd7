"""File › New from Example: the built-in example beds with what each one shows.

Each example's bed info carries its name and description; picking one opens it as a new,
unsaved bed (Save asks for a file of the user's own: the examples stay as shipped).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QTextBrowser,
    QVBoxLayout,
)

import resources
from topology.errors import BedFileError
from topology.fileformat import load

NAME_ROLE = Qt.ItemDataRole.UserRole


def examples() -> list[tuple[str, Any]]:
    """(example name, its bed) for every example that loads; a broken one is listed with its error."""
    out = []
    for name in resources.example_names():
        try:
            out.append((name, load(resources.example_path(name))))
        except BedFileError as exc:
            out.append((name, exc))
    return out


class ExampleGallery(QDialog):
    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.setObjectName("exampleGallery")
        self.setWindowTitle("New from Example")
        self.beds: dict[str, Any] = {}
        self.list = QListWidget(self)
        self.list.setObjectName("exampleList")
        self.list.setWordWrap(True)
        self.list.setSpacing(4)
        self.detail = QTextBrowser(self)
        self.detail.setObjectName("exampleDetail")
        for name, bed in examples():
            self.beds[name] = bed
            title = bed.bed.name if not isinstance(bed, Exception) else name
            item = QListWidgetItem(title)
            item.setData(NAME_ROLE, name)
            item.setToolTip(title)
            self.list.addItem(item)
        self.list.currentItemChanged.connect(lambda item, _prev: self._show(item))
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.create = self.buttons.addButton("Create from example", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        body = QHBoxLayout()
        body.addWidget(self.list, 2)
        body.addWidget(self.detail, 3)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Start a new bed from one of the built-in examples. "
                                "It opens unsaved: Save asks where to keep your copy."))
        layout.addLayout(body, 1)
        layout.addWidget(self.buttons)
        self.resize(820, 460)
        if self.list.count():
            self.list.setCurrentRow(0)

    def chosen(self) -> str | None:
        item = self.list.currentItem()
        return item.data(NAME_ROLE) if item is not None else None

    def _show(self, item: QListWidgetItem | None) -> None:
        bed = self.beds.get(item.data(NAME_ROLE)) if item is not None else None
        if bed is None:
            self.detail.clear()
            return
        if isinstance(bed, Exception):
            self.detail.setPlainText(f"This example cannot be read:\n{bed}")
            self.create.setEnabled(False)
            return
        self.create.setEnabled(True)
        info = bed.bed
        counts = ", ".join(f"{len(getattr(bed, attr))} {one if len(getattr(bed, attr)) == 1 else many}"
                           for attr, one, many in (("servers", "server", "servers"), ("switches", "switch", "switches"),
                                                   ("arrays", "storage array", "storage arrays"), ("vms", "VM", "VMs"))
                           if getattr(bed, attr))
        from html import escape
        parts = [f"<h3>{escape(info.name)}</h3>", f"<p>{escape(info.description or 'No description.')}</p>",
                 f"<p><i>{escape(counts)}</i></p>"]
        if info.source:
            parts.append(f"<p>Source: {escape(info.source)}</p>")
        self.detail.setHtml("".join(parts))
