"""File › Import…: hosts, ports and addresses from a CSV sheet or an Ansible inventory.

The planner (topology/importing, the command line's code path too) says what would change;
the person sees that list and imports it as one undoable step, or sees each problem with its
file and line and nothing changes."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from topology.errors import BedFileError
from topology.importing import plan_file
from widgets.problems_dialog import show_problems

FILTER = "Hosts (*.csv *.tsv *.txt *.ini *.yaml *.yml *.cfg);;Sheet (*.csv *.tsv *.txt);;" \
         "Ansible inventory (*.ini *.yaml *.yml *.cfg);;All files (*)"


def import_dialog(window: Any) -> bool:
    """Ask for a file, show what it would change, import it on the person's word."""
    document = window.document
    start = str(document.path.parent) if document.path else str(Path.home())
    path, _ = QFileDialog.getOpenFileName(window, "Import hosts", start, FILTER)
    return import_path(window, path) if path else False


def import_path(window: Any, path: str | Path, fmt: str | None = None) -> bool:
    document = window.document
    plan = plan_file(document.bed, path, fmt)
    name = Path(path).name
    if plan.problems:
        items = [p.format(str(path)) for p in BedFileError(plan.problems, str(path)).problems]
        show_problems(window, f"Cannot import {name}",
                      f"{len(plan.problems)} problem(s) in {name}; nothing was imported. Fix them in the file and "
                      "import it again.", items, (("close", "Close"),))
        return False
    if plan.edit is None:
        window.statusBar().showMessage(f"{name}: nothing to change", 8000)
        return False
    answer = show_problems(window, f"Import {name}",
                           f"{len(plan.changes)} change(s) to the bed, made as one step (Edit › Undo takes it back):",
                           [*plan.changes, *(f"note: {n}" for n in plan.notes)],
                           (("import", "Import"), ("cancel", "Cancel")))
    if answer != "import":
        return False
    document.apply(plan.edit)
    window.statusBar().showMessage(f"Imported {name}: {len(plan.changes)} change(s)", 8000)
    return True
