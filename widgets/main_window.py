"""Testbed Studio's main window (minimal until the designer lands): the bed's components
as a tree, the validator's findings in a panel, File ▸ Open / Quit, the bed name in the title.

Actions are declared as data (ACTIONS); the window holds no domain logic: it loads with
topology.fileformat.load, validates with topology.validation.validate and shows the results.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow, QMessageBox

import resources
from topology.errors import BedFileError
from topology.fileformat import load
from widgets.component_tree import ComponentTree
from widgets.validation_panel import ValidationPanel

APP_NAME = "Testbed Studio"
FILE_FILTER = "Test beds (*.yaml *.yml);;All files (*)"

# menu, action name, text, shortcut, status tip, method of MainWindow
ACTIONS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("&File", "open", "&Open…", "Ctrl+O", "Open a test-bed project file", "open_dialog"),
    ("&File", "quit", "&Quit", "Ctrl+Q", "Quit Testbed Studio", "close"),
)


def _validator():
    """The validator's entry point, or None while topology.validation is not there."""
    try:
        from topology.validation import validate
    except ImportError:
        return None
    return validate


class MainWindow(QMainWindow):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.bed: Any = None
        self.path: Path | None = None
        self.actions_by_name: dict[str, QAction] = {}
        self.tree = ComponentTree(self)
        self.tree.setObjectName("componentTree")
        self.setCentralWidget(self.tree)
        self.findings_panel = ValidationPanel(self)
        self.findings_panel.setObjectName("validationPanel")
        self.findings_panel.subjects_selected.connect(lambda ids: self.tree.select_ids(set(ids)))
        self.validation_dock = QDockWidget("Validation", self)
        self.validation_dock.setObjectName("validationDock")
        self.validation_dock.setWidget(self.findings_panel)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.validation_dock)
        self._build_actions()
        self.resize(1280, 820)
        self._show_empty("No test bed open. Use File ▸ Open (Ctrl+O).")

    def _build_actions(self) -> None:
        menus: dict[str, Any] = {}
        for menu_title, name, text, shortcut, tip, method in ACTIONS:
            menu = menus.get(menu_title) or menus.setdefault(menu_title, self.menuBar().addMenu(menu_title))
            action = QAction(text, self)
            action.setObjectName(f"action_{name}")
            action.setShortcut(QKeySequence(shortcut))
            action.setStatusTip(tip)
            action.triggered.connect(getattr(self, method))
            menu.addAction(action)
            self.actions_by_name[name] = action

    # ------------------------------------------------------------------ documents

    def open_initial(self, path: str | None = None) -> bool:
        """Open `path`, or the default example when none is given."""
        if path:
            return self.open_path(path)
        default = resources.example_path(resources.DEFAULT_EXAMPLE)
        if not default.is_file():
            self._show_empty(f"The default example {default.name} is not available. "
                             "Use File ▸ Open (Ctrl+O) to open a test bed.")
            return False
        return self.open_path(default)

    def open_dialog(self) -> bool:
        start = str(self.path.parent if self.path else resources.EXAMPLES_DIR)
        path, _ = QFileDialog.getOpenFileName(self, "Open test bed", start, FILE_FILTER)
        return self.open_path(path) if path else False

    def open_path(self, path: str | Path) -> bool:
        """Load a project file; on failure show the loader's message and keep the current bed."""
        try:
            bed = load(path)
        except BedFileError as exc:
            self._error("Cannot open test bed", str(exc))
            return False
        except Exception as exc:  # a loader bug must not take the open document with it
            self._error("Cannot open test bed", f"{path}: unexpected error while reading: {exc!r}")
            return False
        self.set_bed(bed, Path(path))
        return True

    def set_bed(self, bed: Any, path: Path | None = None) -> None:
        self.bed, self.path = bed, path
        name = bed.bed.name or (path.stem if path else "untitled")
        self.setWindowTitle(f"{name} — {path.name} — {APP_NAME}" if path else f"{name} — {APP_NAME}")
        self.tree.show_bed(bed)
        self.revalidate()

    def revalidate(self) -> None:
        if self.bed is None:
            return
        validate = _validator()
        if validate is None:
            self.findings_panel.show_message("validator not available")
            self._set_summary("validator not available")
            return
        try:
            findings = validate(self.bed)
        except Exception as exc:  # show a broken rule, never crash the window
            self.findings_panel.show_message(f"validation failed: {exc!r}")
            self._set_summary("validation failed")
            return
        self.findings_panel.show_findings(findings)
        self._set_summary(self.findings_panel.summary())

    # ------------------------------------------------------------------ helpers

    def _set_summary(self, text: str) -> None:
        self.validation_dock.setWindowTitle(f"Validation — {text}")
        self.statusBar().showMessage(f"{self.path or ''}  ·  {text}" if self.path else text)

    def _show_empty(self, text: str) -> None:
        self.setWindowTitle(APP_NAME)
        self.tree.show_message(text)
        self.findings_panel.show_message("")
        self.statusBar().showMessage(text)

    def _error(self, title: str, text: str) -> None:
        self.statusBar().showMessage(text.splitlines()[0] if text else title)
        QMessageBox.critical(self, title, text)
