"""File › Draft Bed from Lab…: a bed made from what the lab's hosts report -- their ports,
addresses, MTUs, speeds, OS and memory, their access entries and the SAN volumes they see.

The hosts are those of an Ansible inventory or a CSV sheet (a new bed is drafted from nothing), or
the open bed's own access entries (a copy of the bed is drafted further).  They are read with the
as-built check's read-only probes on a worker (app/background.py), by the very code the command
line runs (`testbed-studio import BED --from-hosts`: app.asbuilt.draft.draft); host-key and password
questions come back to the GUI thread as a run's do.  The draft then opens as a new, unsaved
document whose one undo step is the draft itself: Edit › Undo shows the bed it started from."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
)

from app.background import BackgroundJob
from topology.errors import BedFileError
from widgets.import_dialog import FILTER
from widgets.lifetimes import exec_once
from widgets.problems_dialog import show_problems


class DraftSourceDialog(QDialog):
    """Which hosts to read: an inventory or sheet, or the open bed's access entries."""

    def __init__(self, parent, bed, start_dir: str):
        super().__init__(parent)
        self.setWindowTitle("Draft a bed from the lab")
        self.setObjectName("draftSourceDialog")
        self._start_dir = start_dir
        outer = QVBoxLayout(self)
        intro = QLabel("Read the lab's hosts with read-only commands and open what they report as a new bed "
                       "(nothing is written to the hosts or to the open bed).", self)
        intro.setWordWrap(True)
        outer.addWidget(intro)
        self.from_inventory = QRadioButton("Hosts of an Ansible inventory or a CSV sheet:", self)
        outer.addWidget(self.from_inventory)
        row = QHBoxLayout()
        self.path = QLineEdit(self)
        self.path.setObjectName("inventoryPath")
        self.path.setPlaceholderText("lab.ini, hosts.yaml, hosts.csv …")
        self.path.textChanged.connect(lambda _t: self.from_inventory.setChecked(True))
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        outer.addLayout(row)
        hosts = [a.host for a in bed.access]
        self.from_access = QRadioButton(
            f"The hosts this bed reaches ({len(hosts)} access entr{'y' if len(hosts) == 1 else 'ies'}: "
            f"{', '.join(hosts[:6])}{' …' if len(hosts) > 6 else ''}), drafted into a copy of it"
            if hosts else "The hosts this bed reaches (it has no access entry)", self)
        self.from_access.setEnabled(bool(hosts))
        outer.addWidget(self.from_access)
        (self.from_access if hosts else self.from_inventory).setChecked(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.read_button = self.buttons.addButton("Read the hosts", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self.problem = QLabel(self)
        self.problem.setStyleSheet("color: #b00000")
        self.problem.setWordWrap(True)
        outer.addWidget(self.problem)
        outer.addWidget(self.buttons)
        self.resize(620, self.sizeHint().height())

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Hosts to read", self._start_dir, FILTER)
        if path:
            self.path.setText(path)

    def _accept(self) -> None:
        if self.from_inventory.isChecked():
            path = Path(self.path.text().strip()).expanduser()
            if not self.path.text().strip() or not path.is_file():
                self.problem.setText(f"No such file: {self.path.text().strip() or '(none given)'}; choose the "
                                     "inventory or sheet that lists the hosts")
                return
        self.accept()

    def inventory(self) -> str | None:
        """The file chosen, or None for the bed's own access entries."""
        return str(Path(self.path.text().strip()).expanduser()) if self.from_inventory.isChecked() else None


class LabDrafter(QObject):
    """Reads the hosts on a worker and opens the draft; one draft at a time."""

    def __init__(self, window: Any):
        super().__init__(window)
        self.window = window
        self._revision = 0
        self._base = None
        self._source = ""
        self.last_plan = None
        self.job = BackgroundJob(self, name="draft-from-lab", current_revision=lambda: self._revision)
        self.job.result.connect(self._done)

    def ask_and_start(self) -> bool:
        document = self.window.document
        start = str(document.path.parent) if document.path else str(Path.home())
        dialog = DraftSourceDialog(self.window, document.bed, start)
        if not exec_once(dialog):
            return False
        return self.start(dialog.inventory())

    def start(self, inventory: str | None) -> bool:
        """Read the hosts of `inventory` (None: of the open bed's access entries) and open the draft."""
        if self.job.busy:
            self.window.statusBar().showMessage("The lab is being read already; the draft opens when it is done.",
                                                8000)
            return False
        from app.asbuilt.draft import asking, draft
        from app.document import new_bed
        # the draft's starting point: made here, on the GUI thread; the worker only reads it
        base = new_bed("drafted from the lab") if inventory else copy.deepcopy(self.window.document.bed)
        decider, ask_password = asking(self.window.run.controller.ask)     # asked on the GUI thread, as a run asks
        self._revision += 1
        self._base = base
        self._source = Path(inventory).name if inventory else "the bed's access entries"
        self.window.statusBar().showMessage(f"Reading the hosts of {self._source} (read-only) …")
        return self.job.start(self._revision, lambda: draft(base, inventory, decider=decider,
                                                            ask_password=ask_password))

    def _done(self, outcome) -> None:
        status = self.window.statusBar()
        if outcome.error:
            status.clearMessage()
            show_problems(self.window, "Cannot draft from the lab", f"Reading {self._source} failed; nothing changed.",
                          [outcome.error], (("close", "Close"),))
            return
        result = outcome.value
        plan = self.last_plan = result.plan
        if plan.problems:
            status.clearMessage()
            items = [p.format(self._source) for p in BedFileError(plan.problems, self._source).problems]
            show_problems(self.window, f"Cannot draft from {self._source}",
                          f"{len(plan.problems)} problem(s); nothing was read and nothing changed.", items,
                          (("close", "Close"),))
            return
        reached = sum(f.reached for f in result.gathered.facts.values()) if result.gathered else 0
        if plan.edit is None:
            status.clearMessage()
            show_problems(self.window, "Nothing to draft", f"Read {reached} of {len(result.hosts)} host(s): "
                          "they report nothing the bed does not have.", [f"note: {n}" for n in plan.notes],
                          (("close", "Close"),))
            return
        if not self.window.files.confirm_discard("opening the bed drafted from the lab"):
            status.showMessage("The draft was not opened.", 8000)
            return
        document = self.window.document
        document.replace(self._base, None, dirty=True)
        document.apply(plan.edit)           # one step: Edit › Undo shows the bed it started from
        self.window.files.autosave.start()
        status.showMessage(f"Drafted from {self._source}: read {reached} of {len(result.hosts)} host(s), "
                           f"{len(plan.changes)} change(s). Not saved yet: File › Save As keeps it.", 20000)
        if plan.notes:          # a host not reached, a volume left out: said where it cannot be missed
            show_problems(self.window, "Drafted from the lab, with notes",
                          f"Read {reached} of {len(result.hosts)} host(s); the draft is open. What it could not "
                          "take in:", plan.notes, (("close", "Close"),))

    def shutdown(self) -> None:
        self.job.shutdown(2000)


def draft_from_lab(window: Any) -> bool:
    drafter = getattr(window, "lab_drafter", None)
    if drafter is None:
        drafter = window.lab_drafter = LabDrafter(window)
    return drafter.ask_and_start()
