"""The configuration chooser: a small toolbar, shown only for a bed that has configurations,
whose choice the methodology, the run and the comparison follow (app.configuration_choice)."""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QLabel, QToolBar

from app.configuration_choice import ConfigurationChoice


class ConfigurationBar(QToolBar):
    def __init__(self, document, parent=None):
        super().__init__("Configuration", parent)
        self.setObjectName("configurationBar")
        self.choice = ConfigurationChoice.of(document)
        self.document = document
        self.addWidget(QLabel(" Configuration: "))
        self.combo = QComboBox(self)
        self.combo.setObjectName("configurationCombo")
        self.combo.setMinimumContentsLength(18)
        self.combo.setToolTip("The software configuration the methodology, the run and the comparison use "
                              "(the hardware is the same in each)")
        self.addWidget(self.combo)
        self.combo.activated.connect(lambda i: self.choice.choose(self.combo.itemData(i)))
        self.choice.changed.connect(lambda _name: self.refill())
        document.reset.connect(self.refill)
        document.changed.connect(lambda _ids: self.refill())
        self.refill()

    def refill(self) -> None:
        configurations = self.document.bed.configurations
        self.combo.blockSignals(True)
        self.combo.clear()
        for c in configurations:
            self.combo.addItem(f"{c.id} — {c.description}" if c.description else c.id, c.id)
        if self.choice.name is not None:
            self.combo.setCurrentIndex(max(0, self.combo.findData(self.choice.name)))
        self.combo.blockSignals(False)
        self.setVisible(bool(configurations))
