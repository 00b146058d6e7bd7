"""The methodology view: the generated "how we tested" procedure, step by step.

Left, the sections and their numbered steps (filterable by the host a step is done on);
right, the selected step: its text with the bed's values, each value's source component
as a button that selects that component everywhere, and its commands with copy buttons.
Above, print preview, print, and export of the full appendix (PDF, HTML, Markdown).

The procedure is regenerated from the model a moment after the bed changes (debounced)
on a worker thread; a result for an older revision than the document's is dropped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.background import (
    BackgroundJob,
    DrawingFirst,
    Outcome,
    edited_meanwhile,
    let_go_off_the_gui_thread,
    unless_edited,
)
from app.report.html import mark_missing
from app.report.steps import command_label, step_targets
from topology.methodology.guards import folded
from widgets.methodology_steps import StepModel, worked_out

ALL_TARGETS = "All hosts"
EXPORTS = (("pdf", "Export PDF…", "PDF document (*.pdf)"),
           ("html", "Export HTML…", "Web page (*.html)"),
           ("md", "Export Markdown…", "Markdown (*.md)"))


def _generate(bed: Any, configuration: str | None = None) -> Any:
    from app.readiness import assess
    from topology.configurations import configured, procedures
    (_, methodology), = procedures(bed, configuration)
    # what keeps this procedure from being carried out, worked out here off the GUI thread
    methodology.readiness = assess(configured(bed, configuration) if configuration else bed, methodology)
    worked_out(methodology)         # each step's hosts and the counts, for the view
    return methodology


def subject_of(source: str, known: set[str]) -> str:
    """'R710-1:SAN1.address' -> 'R710-1:SAN1' (the component id a value came from)."""
    if source in known:
        return source
    head, dot, tail = source.rpartition(".")
    if dot and head and tail.replace("_", "").isalnum():
        return head
    return source


class MethodologyView(QWidget):
    DEBOUNCE_MS = 300
    readiness_changed = Signal(list)      # app.readiness.Gap: what keeps the procedure shown from running

    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.methodology: Any = None
        self.revision_shown = -1
        self._known: set[str] | None = None
        self._current: tuple[int, int] | None = None
        self._fill_pending = False      # a procedure arrived while the page was out of sight
        self._preview = None
        self._print_dialog = None

        self.target_filter = QComboBox(objectName="targetFilter")
        self.target_filter.setMinimumContentsLength(14)
        self.target_filter.setToolTip("Show only the steps done on one host")
        self.target_filter.currentIndexChanged.connect(lambda _i: self._apply_filter())
        self.preview_button = QPushButton("Print Preview…", objectName="printPreview")
        self.preview_button.clicked.connect(self.print_preview)
        self.print_button = QPushButton("Print…", objectName="print")
        self.print_button.clicked.connect(self.print_dialog)
        self.export_buttons: dict[str, QPushButton] = {}
        self.run_results = QComboBox(objectName="runResults")
        self.run_results.setMinimumContentsLength(18)
        self._run_picked = False
        self.run_results.activated.connect(lambda _i: setattr(self, "_run_picked", True))
        self.run_results.setToolTip("Print the figures measured in this run (tables per host, pass criteria, "
                                    "charts) in the results appendix")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Target:"))
        bar.addWidget(self.target_filter)
        bar.addStretch(1)
        bar.addWidget(QLabel("Measured results:"))
        bar.addWidget(self.run_results)
        bar.addWidget(self.preview_button)
        bar.addWidget(self.print_button)
        for fmt, text, _filter in EXPORTS:
            b = QPushButton(text, objectName=f"export_{fmt}")
            b.setToolTip(f"Write the appendices (tables, layout, diagram, methodology, results) as {fmt.upper()}")
            b.clicked.connect(lambda _checked=False, f=fmt: self.export_dialog(f))
            bar.addWidget(b)
            self.export_buttons[fmt] = b
        self.status = QLabel(objectName="methodologyStatus")
        self.status.setWordWrap(True)

        # model/view: only the rows in sight are asked for (a big bed's procedure has 100,000+ steps)
        # a flat table (section titles are rows spanning both columns): a tree view lays out every
        # row it holds, a table only the rows it shows
        self.steps = StepModel(self)
        self.tree = QTableView(objectName="steps")
        self.tree.setModel(self.steps)
        self.tree.setShowGrid(False)
        self.tree.setWordWrap(False)
        self.tree.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        rows = self.tree.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.tree.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)     # sized from the host names
        self.tree.selectionModel().currentChanged.connect(lambda cur, _prev: self._show_step(cur))

        self.detail = QWidget(objectName="stepDetail")
        self.detail_layout = QVBoxLayout(self.detail)
        self.detail_layout.setAlignment(Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.detail)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(scroll)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([600, 600])

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)

        self._job = BackgroundJob(self, name="methodology-preview", prepare=self._prepare,
                                  debounce_ms=self.DEBOUNCE_MS, current_revision=lambda: self.document.revision,
                                  waits_for=DrawingFirst.of(document), turn=1)
        self._job.result.connect(self._generated)
        document.changed.connect(lambda _ids: self._job.request())
        document.reset.connect(self.regenerate)
        from app.configuration_choice import ConfigurationChoice
        self.configuration = ConfigurationChoice.of(document)
        self.configuration.changed.connect(lambda _name: self.regenerate())
        self._show_step(None)
        self.regenerate()

    # ------------------------------------------------------------------ generation
    def regenerate(self) -> None:
        self._job.run_now()

    def _prepare(self):
        self.status.setText("Generating the methodology…")
        # the worker reads the live model, no copy: a pickled copy of a 5,000-device bed stalled the
        # GUI thread for seconds after each edit; a generation an edit ran into is thrown away
        doc, bed = self.document, self.document.bed
        configuration = self.configuration.name       # the configuration chooser's
        return doc.revision, lambda: unless_edited(doc, lambda: _generate(bed, configuration))

    def shutdown(self) -> None:
        """The window is closing: drop queued work and let a running generation finish."""
        self._job.shutdown(30000)

    def wait(self, msecs: int = 10000) -> bool:
        """Tests and printing: block until the queued generation is done."""
        return self._job.wait(msecs)

    def _generated(self, outcome: Outcome) -> None:
        if edited_meanwhile(outcome):
            return          # the edit that ran into it has asked for the next generation
        revision, methodology = outcome.revision, outcome.value
        error = f"The methodology could not be generated: {outcome.error}" if outcome.error else ""
        self.revision_shown = revision
        if error:
            self.methodology = None
            self.steps.set_methodology(None, None)
            self._show_step(None)
            self.status.setText(error)
            self.status.setStyleSheet("color: #9c1c1c;")
            return
        self.status.setStyleSheet("")
        # one generated while the page was out of sight and never shown is let go of now, off this
        # thread (the one shown goes when the tree takes the new one: _fill)
        scraps = [self.methodology]
        self.methodology = methodology
        if scraps[0] is self.steps.methodology:
            scraps.clear()
        let_go_off_the_gui_thread(scraps)
        # readiness is counted beside validation whether or not this page is in view: it goes out now
        self.readiness_changed.emit(list(getattr(methodology, "readiness", [])))
        if self.window().isVisible() and not self.isVisible():
            self._fill_pending = True       # the tree (tens of thousands of rows) is built when it is shown
            return
        self._fill_now()

    def _fill_now(self) -> None:
        self._fill_pending = False
        self._known = None
        self._fill()

    @property
    def known_ids(self) -> set[str]:
        """Every component, port and volume id of the bed: a step's value names one of them
        (worked out when a step's sources are first shown, not with the tree)."""
        if self._known is None:
            from topology.index import BedIndex
            idx = BedIndex(self.document.bed)
            self._known = set(idx.components) | set(idx.ports) | set(idx.volumes)
        return self._known

    def _fill_if_pending(self) -> None:
        if self._fill_pending and self.methodology is not None:
            self._fill_now()

    # ------------------------------------------------------------------ tree
    def _fill(self) -> None:
        m = self.methodology
        keep = self._current_number()
        chosen = self.target_filter.currentText()
        scraps = [self.steps.methodology]
        self.steps.set_methodology(m, None)
        if scraps[0] is m:
            scraps.clear()
        let_go_off_the_gui_thread(scraps)     # the procedure shown before (88,593 steps on a big bed)
        targets = m.hosts
        self.target_filter.blockSignals(True)
        self.target_filter.clear()
        self.target_filter.addItems([ALL_TARGETS] + targets)
        self.target_filter.setCurrentIndex(max(0, self.target_filter.findText(chosen)))
        self.target_filter.blockSignals(False)
        widest = max((self.tree.fontMetrics().horizontalAdvance(t) for t in targets), default=0)
        self.tree.horizontalHeader().resizeSection(1, min(260, max(80, widest + 24)))
        steps = sum(len(s.steps) for s in m.sections)
        automated, unresolved = m.automated, m.unresolved
        text = f"{len(m.sections)} sections · {steps} steps ({automated} with commands)"
        if unresolved:
            text += f" · {unresolved} with unresolved values (red)"
        summary = list(getattr(m, "findings_summary", None) or [])
        errors, warnings = getattr(m, "errors", 0), getattr(m, "warnings", 0)
        if errors or warnings:   # counted as the Validation panel counts them
            text += f" · validation: {errors} error(s), {warnings} warning(s)"
        self.status.setText(text)
        self.status.setToolTip("\n".join(summary + [getattr(m, "incomplete_note", "")]).strip())
        self._apply_filter(keep)

    def _apply_filter(self, keep: str | None = None) -> None:
        """Show the steps done on the chosen host (all of them for "All hosts"); the step picked
        stays picked while it is shown."""
        if keep is None:
            keep = self._current_number()
        target = self.target_filter.currentText()
        self.tree.selectionModel().blockSignals(True)
        self.steps.set_target(None if target in ("", ALL_TARGETS) else target)
        self.tree.selectionModel().blockSignals(False)
        self.tree.clearSpans()
        for row in self.steps.title_rows():
            self.tree.setSpan(row, 0, 1, 2)
        found = self.steps.index_of(keep) if keep else None
        if found is not None and found.isValid():
            self.tree.setCurrentIndex(found)
            self.tree.scrollTo(found)
        self._show_step(self.tree.currentIndex())

    def _step(self, index) -> Any:
        if index is None or self.methodology is None:
            return None
        return self.steps.step(index)

    def _current_number(self) -> str:
        step = self._step(self.tree.currentIndex())
        return str(step.number) if step is not None else ""

    def visible_steps(self) -> list[Any]:
        self._fill_if_pending()
        return self.steps.shown_steps() if self.methodology is not None else []

    def item_for(self, number: str):
        """The row of step `number` in the tree (a QModelIndex), None when it is not shown."""
        self._fill_if_pending()
        if self.steps.methodology is None:
            return None
        found = self.steps.index_of(str(number))
        return found if found.isValid() else None

    # ------------------------------------------------------------------ detail
    def _clear_detail(self) -> None:
        while self.detail_layout.count():
            item = self.detail_layout.takeAt(0)
            w = item.widget()
            if w is not None:
                w.hide()
                w.setParent(None)
                w.deleteLater()
            elif item.layout() is not None:
                QWidget().setLayout(item.layout())

    def _show_step(self, item) -> None:
        self._clear_detail()
        self.copy_buttons: list[QPushButton] = []
        self.source_buttons: list[QPushButton] = []
        step = self._step(item)
        if step is None:
            hint = QLabel("Pick a step to see its values, where they come from, and its commands."
                          if self.methodology is not None else "")
            hint.setWordWrap(True)
            hint.setStyleSheet("color: gray;")
            self.detail_layout.addWidget(hint)
            return
        targets = step_targets(step)
        title = QLabel(f"<b>Step {step.number}</b>" + (f" &nbsp;·&nbsp; on {', '.join(targets)}" if targets else ""))
        self.detail_layout.addWidget(title)
        text = QLabel(objectName="stepText")
        text.setTextFormat(Qt.TextFormat.RichText)
        text.setText(mark_missing(_esc(step.text)).replace(
            '<span class="miss">', '<span style="background-color: #fff1c2; color: #9c1c1c; font-weight: bold;">'))
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text.setFrameShape(QFrame.Shape.StyledPanel)
        text.setMargin(6)
        text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.detail_layout.addWidget(text)
        if step.unresolved:
            warn = QLabel("Unresolved: " + ", ".join(map(str, step.unresolved))
                          + ". Set these in the bed; the step is not run until they are.")
            warn.setWordWrap(True)
            warn.setStyleSheet("color: #9c1c1c; font-weight: bold;")
            self.detail_layout.addWidget(warn)
        if step.sources:
            box = QGroupBox("Values and where they come from", objectName="sources")
            grid = QGridLayout(box)
            for row, (value, source) in enumerate(step.sources.items()):
                subject = subject_of(str(source), self.known_ids)
                label = QLabel(str(value))
                label.setWordWrap(True)
                label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                button = QPushButton(str(source), objectName=f"source_{row}")
                button.setFlat(True)
                button.setCursor(Qt.CursorShape.PointingHandCursor)
                button.setStyleSheet("color: #1f5fbf; text-decoration: underline; text-align: left;")
                button.setToolTip(f"Select {subject} in the diagram and the other views")
                button.clicked.connect(lambda _c=False, s=subject: self.selection.focus([s]))
                grid.addWidget(label, row, 0)
                grid.addWidget(button, row, 1)
                self.source_buttons.append(button)
            grid.setColumnStretch(1, 1)
            self.detail_layout.addWidget(box)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        for n, cmd in enumerate(step.automation):
            box = QGroupBox(command_label(cmd), objectName=f"command_{n}")
            v = QVBoxLayout(box)
            # the guard's 190 lines in front would hide the step's own: folded, and copied whole
            shown = folded(cmd.script, '"Copy command" copies it with the step')[0]
            script = QPlainTextEdit(shown, objectName=f"script_{n}")
            script.setReadOnly(True)
            script.setFont(mono)
            script.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            lines = shown.count("\n") + 1
            script.setFixedHeight(min(260, 22 + lines * script.fontMetrics().lineSpacing()))
            v.addWidget(script)
            buttons = QHBoxLayout()
            copy_cmd = QPushButton("Copy command", objectName=f"copy_command_{n}")
            copy_cmd.clicked.connect(lambda _c=False, t=cmd.script: self._copy(t, "command"))
            buttons.addWidget(copy_cmd)
            self.copy_buttons.append(copy_cmd)
            if cmd.verify:
                copy_verify = QPushButton("Copy verification", objectName=f"copy_verify_{n}")
                copy_verify.setToolTip(cmd.verify)
                copy_verify.clicked.connect(lambda _c=False, t=cmd.verify: self._copy(t, "verification"))
                buttons.addWidget(copy_verify)
            buttons.addStretch(1)
            v.addLayout(buttons)
            if getattr(cmd, "note", ""):
                note = QLabel(cmd.note)
                note.setWordWrap(True)
                note.setStyleSheet("color: #555555;")
                v.addWidget(note)
            self.detail_layout.addWidget(box)
        if not step.automation:
            manual = QLabel("Manual step: no command; do it in the vendor tool or console and tick it off in the run.")
            manual.setWordWrap(True)
            manual.setStyleSheet("color: #555555; font-style: italic;")
            self.detail_layout.addWidget(manual)
        self.detail_layout.addStretch(1)

    def _copy(self, text: str, what: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.status.setText(f"Copied the {what} to the clipboard.")

    # ------------------------------------------------------------------ printing and export
    def showEvent(self, event) -> None:
        self.refresh_runs()
        self._fill_if_pending()
        super().showEvent(event)

    def refresh_runs(self) -> None:
        """The runs of this project that recorded figures, newest first."""
        from app.run import journal as J
        chosen = self.run_results.currentData()
        self.run_results.blockSignals(True)
        self.run_results.clear()
        self.run_results.addItem("none", None)
        if self.document.path is not None:
            mine = str(Path(self.document.path).resolve())
            for info in J.list_runs():
                if (info.dir / "metrics.jsonl").is_file() and str(Path(info.bed_file).resolve()) == mine:
                    self.run_results.addItem(f"run {info.id}", info.id)
        # the newest run, unless the person picked one (or "none") in this list before
        index = self.run_results.findData(chosen) if self._run_picked else -1
        self.run_results.setCurrentIndex(index if index >= 0 else (1 if self.run_results.count() > 1 else 0))
        self.run_results.blockSignals(False)

    def _runs(self) -> list:
        run_id = self.run_results.currentData()
        if not run_id:
            return []
        from app.metrics.report import load_run_results
        try:
            return [load_run_results(run_id, self.document.bed)]
        except ValueError as exc:
            self._fail(f"The results of run {run_id} are left out: {exc}")
            return []

    def _appendix(self):
        from app.report.assembly import build_appendix
        return build_appendix(self.document.bed, findings=self.document.validation.current_findings(),
                              methodology=self._printed_methodology(),
                              source=str(self.document.path) if self.document.path else "", runs=self._runs(),
                              comparisons=self._comparisons())

    def _printed_methodology(self) -> Any:
        """What the appendix prints: the procedure shown, or one per configuration (generated then)."""
        return None if self.document.bed.configurations else self.methodology

    def _comparisons(self) -> list:
        from app.metrics.compare_cli import configuration_comparisons
        return configuration_comparisons(self.document.bed, self.document.path,
                                         baseline=self.configuration.name)

    def print_preview(self) -> None:
        from PySide6.QtPrintSupport import QPrinter, QPrintPreviewDialog

        from app.report.pdf import set_up_printer
        appendix = self._appendix()
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        set_up_printer(printer)         # the paper and resolution of the exported PDF: the same pages
        dialog = QPrintPreviewDialog(printer, self)
        dialog.setWindowTitle(f"Print preview: appendices of {self.document.title}")
        painted: list[int] = []          # the preview paints too: only a print the user asked for is "printed"
        dialog.paintRequested.connect(lambda p: self._paint(appendix, p, painted))
        dialog.resize(1000, 900)
        dialog.finished.connect(lambda result: result and painted and self.status.setText(
            f"Printed {painted[-1]} pages."))
        dialog.finished.connect(dialog.deleteLater)     # ends when closed, not with the window
        self._preview = dialog
        dialog.open()

    def print_dialog(self) -> None:
        from PySide6.QtPrintSupport import QPrintDialog, QPrinter

        from app.report.pdf import set_up_printer
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        set_up_printer(printer)
        dialog = QPrintDialog(printer, self)
        dialog.accepted.connect(lambda: self._paint(self._appendix(), printer))
        dialog.finished.connect(dialog.deleteLater)
        self._print_dialog = dialog
        dialog.open()

    def _paint(self, appendix: Any, printer: Any, previewed: list[int] | None = None) -> None:
        from app.report.pdf import paint
        try:
            pages = paint(appendix, printer)
        except OSError as exc:
            self._fail(f"Printing failed: {exc}")
            return
        if previewed is not None:
            previewed.append(pages)
        else:
            self.status.setText(f"Printed {pages} pages.")

    def default_export_path(self, fmt: str) -> str:
        base = self.document.path.with_suffix("") if self.document.path else Path.home() / "test-bed"
        return str(base.parent / f"{base.name}-appendix.{fmt}")

    def export_dialog(self, fmt: str) -> None:
        caption = {f: t for f, t, _ in EXPORTS}[fmt].rstrip("…")
        pattern = {f: p for f, _, p in EXPORTS}[fmt]
        path, _ = QFileDialog.getSaveFileName(self, caption, self.default_export_path(fmt), pattern)
        if path:
            self.export(path, fmt)

    # menu actions take no arguments
    def export_pdf_dialog(self) -> None:
        self.export_dialog("pdf")

    def export_html_dialog(self) -> None:
        self.export_dialog("html")

    def export_markdown_dialog(self) -> None:
        self.export_dialog("md")

    def export(self, path: str, fmt: str) -> bool:
        from app.report.export import write
        try:
            result = write(self.document.bed, path, fmt, findings=self.document.validation.current_findings(),
                           methodology=self._printed_methodology(),
                           source=str(self.document.path) if self.document.path else "", runs=self._runs(),
                           comparisons=self._comparisons())
        except (OSError, ValueError) as exc:
            self._fail(f"Cannot write {path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        pages = f" ({result['pages']} pages on {result['paper']})" if "pages" in result else ""
        self.status.setStyleSheet("")
        self.status.setText(f"Wrote {path}{pages}.")
        return True

    def _fail(self, text: str) -> None:
        self.status.setStyleSheet("color: #9c1c1c;")
        self.status.setText(text)


def _esc(text: Any) -> str:
    import html
    return html.escape(str(text))
