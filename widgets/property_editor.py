"""PropertyEditor: placeholder until its issue work lands (constructor signature fixed: document, selection, parent)."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class PropertyEditor(QWidget):
    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("PropertyEditor is being built."))
