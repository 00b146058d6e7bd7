"""Edit › Preferences: the settings that hold for every bed (app.preferences).

The paper size is the one every print and PDF uses (the appendix, the methodology, the
diagram, and `testbed-studio appendix` without --paper); "As the locale says" keeps no choice,
so the locale decides on each machine.
"""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from app import preferences

FROM_LOCALE = ""


class PreferencesDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.setObjectName("preferencesDialog")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.paper = QComboBox(self)
        locale_paper = preferences.paper_from_locale()
        self.paper.addItem(f"As the locale says ({preferences.PAPER_SIZES[locale_paper]})", FROM_LOCALE)
        for key, text in preferences.PAPER_SIZES.items():
            self.paper.addItem(text, key)
        self.paper.setCurrentIndex(max(self.paper.findData(preferences.stored_paper() or FROM_LOCALE), 0))
        form.addRow("Paper size:", self.paper)
        layout.addLayout(form)
        note = QLabel("Used by every print and PDF: the appendix, the methodology and the diagram, here and "
                      "with `testbed-studio appendix` (whose --paper option overrides it).", self)
        note.setWordWrap(True)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def accept(self) -> None:
        try:
            preferences.set_paper(self.paper.currentData() or None)
        except OSError as exc:
            from PySide6.QtWidgets import QMessageBox
            QMessageBox.critical(self, "Preferences not saved",
                                 f"{preferences.state_dir()}: {exc.strerror or exc}")
            return
        super().accept()
