"""The Compare page: configurations, scenarios and runs side by side, as `testbed-studio compare`
prints them (app.metrics.comparison): a figure per host/VM and in total for each side, the
percentage difference from the baseline with its formula, and the bar chart the appendix prints.

It also attaches load tools' result files to a run of this bed (any format `testbed-studio
parse` reads), to a step and a host, as `testbed-studio results import` does."""
from __future__ import annotations

import math
import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.background import BackgroundJob, Outcome
from app.configuration_choice import ConfigurationChoice
from app.metrics import comparison as C
from app.run import journal as J


class CompareView(QWidget):
    CHART_HEIGHT = 300
    CHART_MIN_WIDTH = 480

    def __init__(self, document, selection=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.runs_root: Path | None = None          # tests point it at their own runs folder
        self.table_shown: C.ComparisonTable | None = None
        self.choice = ConfigurationChoice.of(document)
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        layout.addLayout(top)
        left = QVBoxLayout()
        top.addLayout(left, 1)
        left.addWidget(QLabel("Compare (tick two or more):"))
        self.sides = QListWidget(objectName="compareSides")
        self.sides.itemChanged.connect(lambda _item: self.refresh())
        left.addWidget(self.sides, 1)
        form = QFormLayout()
        self.baseline = QComboBox(objectName="compareBaseline")
        self.baseline.setToolTip("The denominator of every percentage: the others are measured against it")
        self.figure = QComboBox(objectName="compareMetric")
        self.baseline.activated.connect(lambda _i: self.refresh(keep_baseline=True))
        self._picked_figure = False       # picked by hand: kept, even while it has no figures
        self.figure.activated.connect(lambda _i: (setattr(self, "_picked_figure", True),
                                                  self.refresh(keep_baseline=True)))
        form.addRow("Baseline:", self.baseline)
        form.addRow("Figure:", self.figure)
        left.addLayout(form)
        left.addWidget(self._import_box())
        right = QVBoxLayout()
        top.addLayout(right, 3)
        self.grid = QTableWidget(objectName="compareTable")
        self.grid.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.grid.verticalHeader().setVisible(False)
        right.addWidget(self.grid, 1)
        self.chart = QLabel(objectName="compareChart")
        self.chart.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.chart.setMinimumWidth(self.CHART_MIN_WIDTH)
        right.addWidget(self.chart)
        self.notes = QLabel(objectName="compareNotes")
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right.addWidget(self.notes)
        # a run that starts or ends joins the list: the runs folder is read, and the comparison worked
        # out again, on a worker, so that starting or stopping a run never waits on this page
        self._shown = 0         # bumped by every comparison shown: one worked out before it is stale
        self._following = BackgroundJob(self, name="compare-runs", prepare=self._follow_work)
        self._following.result.connect(self._followed)
        self._follow_when_shown = False
        # a bed's sides are listed and compared when the page is shown (its comparison reads run
        # folders and brings numpy): the window's start and every open of a bed skip it while hidden
        self._stale = True
        document.reset.connect(self._bed_changed)
        self._bed_changed()

    def _bed_changed(self) -> None:
        self._stale = True
        if self.isVisible():
            self.reload()

    # ------------------------------------------------------------------ importing result files

    def _import_box(self) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(0, 8, 0, 0)
        self.import_run = QComboBox(objectName="importRun")
        self.import_step = QLineEdit(objectName="importStep", placeholderText="e.g. 7.1 (optional)")
        self.import_host = QLineEdit(objectName="importHost", placeholderText="host or VM the file is about")
        button = QPushButton("Attach result files…", objectName="importButton")
        button.clicked.connect(self._pick_files)
        form.addRow("Run:", self.import_run)
        form.addRow("Step:", self.import_step)
        form.addRow("Host / VM:", self.import_host)
        form.addRow(button)
        self.import_status = QLabel(objectName="importStatus", wordWrap=True)
        form.addRow(self.import_status)
        return box

    def _pick_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Attach result files to the run")
        if paths:
            self.attach([Path(p) for p in paths])

    def attach(self, paths: list[Path]) -> bool:
        """Attach files to the chosen run, all or none; says what happened under the button."""
        from app.metrics.import_cli import step_host
        from app.metrics.registry import parse_text
        from app.metrics.run_results import ResultFileError, attach_file, decode, nothing_read
        run_id = self.import_run.currentData()
        if not run_id:
            return self._import_said("Choose a run of this bed first (start one on the Run page).", False)
        try:
            info = J.open_run(run_id, self.runs_root)
            host = step_host(info.dir, self.import_step.text().strip(), self.import_host.text().strip())
            for p in paths:
                parsed = parse_text(decode(p.read_bytes()))
                if parsed.tool == "unknown" or nothing_read(parsed):
                    raise ResultFileError(f"{p.name}: nothing could be read - {'; '.join(parsed.problems)}")
            stored = [attach_file(info.dir, p, step=self.import_step.text().strip(), host=host) for p in paths]
        except (ValueError, OSError) as exc:
            return self._import_said(f"Nothing was attached: {getattr(exc, 'strerror', None) or exc}", False)
        self._import_said(f"Attached {len(stored)} file(s) to run {info.id}: "
                          + ", ".join(f"{r.tool} ({r.host or 'no host'})" for r in stored), True)
        self.refresh(keep_baseline=True)
        return True

    def _import_said(self, text: str, ok: bool) -> bool:
        self.import_status.setText(text)
        self.import_status.setStyleSheet("" if ok else "color: #b00020")
        return ok

    # ------------------------------------------------------------------ what can be compared

    def _my_runs(self) -> list[J.RunInfo]:
        return runs_of_bed(self.document.path, self.runs_root)

    def reload(self) -> None:
        self._stale = False
        bed = self.document.bed
        runs = self._my_runs()
        self.sides.blockSignals(True)
        self.sides.clear()
        names = [c.id for c in bed.configurations]
        names += [s for s in dict.fromkeys(r.scenario for r in bed.results if r.scenario) if s not in names]
        for name in names:
            self._add_side(name, f"{name} (configuration)" if name in {c.id for c in bed.configurations}
                           else f"{name} (scenario)", checked=len(names) > 1)
        for info in runs:
            within = f", {info.configuration}" if info.configuration else ""
            self._add_side(info.id, f"run {info.id}{within}", checked=False)
        self.sides.blockSignals(False)
        self.import_run.clear()
        for info in runs:
            self.import_run.addItem(info.id, info.id)
        chosen = self.figure.currentData()         # the figure the person picked stays picked
        self.figure.blockSignals(True)
        self.figure.clear()
        for key, (title, unit, _higher, _rule) in C.METRICS.items():
            self.figure.addItem(f"{title} ({unit})", key)
        for metric in dict.fromkeys(r.metric for r in bed.results):
            if C.metric_key(metric) not in C.METRICS:
                self.figure.addItem(metric, metric)
        self.figure.setCurrentIndex(max(0, self.figure.findData(chosen)))
        self.figure.blockSignals(False)
        self.refresh()

    def follow_runs(self) -> None:
        """Runs of the bed that started or finished since the list was made join it (unticked);
        what is ticked stays ticked, and a ticked run that has finished is compared again.  Worked
        out on a worker (the runs folder, every run's figures) when the page is shown: a worker
        that reads and compares holds the interpreter's lock long enough to slow the window's
        repaints, for a page nobody looks at."""
        if self._stale:             # not listed since the bed was opened: listed whole when shown
            if self.isVisible():
                self.reload()
        elif self.isVisible():
            self._following.run_now()
        else:
            self._follow_when_shown = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._follow_when_shown = False
            self.reload()
        elif self._follow_when_shown:
            self._follow_when_shown = False
            self._following.run_now()

    def _follow_work(self):
        """On the GUI thread: what the worker needs, taken now (the bed's recorded figures copied)."""
        path, runs_root = self.document.path, self.runs_root
        names, baseline = self.checked(), self.baseline.currentData()
        metrics = self._metrics_to_try()
        bed = _recorded_figures(self.document.bed)

        def work():
            runs = runs_of_bed(path, runs_root)
            shown = compare_first(names, metrics, baseline, runs_root=runs_root, bed=bed, bed_file=path) \
                if len(names) > 1 else None
            return runs, names, shown
        return self._shown, work

    def _followed(self, outcome: Outcome) -> None:
        if outcome.error:
            return
        runs, names, shown = outcome.value
        listed = {self.sides.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.sides.count())}
        self.sides.blockSignals(True)
        added = False
        for info in reversed(runs):          # oldest first, as reload lists them
            if info.id not in listed:
                within = f", {info.configuration}" if info.configuration else ""
                self._add_side(info.id, f"run {info.id}{within}", checked=False)
                self.import_run.addItem(info.id, info.id)
                added = True
        self.sides.blockSignals(False)
        if outcome.revision != self._shown or names != self.checked():
            if added and len(self.checked()) > 1:
                self.follow_runs()       # the page changed meanwhile: worked out again
            return
        if shown is not None:
            self._show_outcome(*shown)

    def _add_side(self, key: str, label: str, checked: bool) -> None:
        item = QListWidgetItem(label)
        item.setData(Qt.ItemDataRole.UserRole, key)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.sides.addItem(item)

    def checked(self) -> list[str]:
        return [self.sides.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.sides.count())
                if self.sides.item(i).checkState() == Qt.CheckState.Checked]

    # ------------------------------------------------------------------ comparing

    def refresh(self, keep_baseline: bool = False) -> None:
        names = self.checked()
        wanted = self.baseline.currentData() if keep_baseline else None
        self.baseline.clear()
        for n in names:
            self.baseline.addItem(n, n)
        if wanted is None and self.choice.name in names:
            wanted = self.choice.name
        if wanted in names:
            self.baseline.setCurrentIndex(names.index(wanted))
        if len(names) < 2:
            self._shown += 1
            return self._show(None, "Tick two or more configurations, scenarios or runs to compare them.")
        self._show_outcome(*compare_first(names, self._metrics_to_try(), self.baseline.currentData(),
                                          runs_root=self.runs_root, bed=self.document.bed,
                                          bed_file=self.document.path))

    def _metrics_to_try(self) -> list:
        chosen = self.figure.currentData()
        if chosen is not None and self._picked_figure:
            return [chosen]                     # a figure picked by hand is not swapped for another
        return [chosen] + [m for m in (self.figure.itemData(i) for i in range(self.figure.count())) if m != chosen]

    def _show_outcome(self, table: C.ComparisonTable | None, metric, problem: str) -> None:
        self._shown += 1
        if table is None:
            return self._show(None, f"Nothing to compare yet: {gui_words(problem)}")
        self.figure.setCurrentIndex(max(0, self.figure.findData(metric)))
        self._show(table, "")

    def _show(self, table: C.ComparisonTable | None, message: str) -> None:
        self.table_shown = table
        self.grid.clear()
        if table is None:
            self.grid.setRowCount(0)
            self.grid.setColumnCount(0)
            self.chart.clear()
            self.notes.setText(message)
            # a comparison refused (a run that rests on too little of its step, ...) is a problem, in red
            self.notes.setStyleSheet("color: #b00020" if message.startswith("Nothing to compare") else "")
            return
        others = [n for n in table.names if n != table.baseline]
        heads = ["Host / VM", *table.names, *[f"{n} vs {table.baseline}" for n in others]]
        self.grid.setColumnCount(len(heads))
        self.grid.setHorizontalHeaderLabels(heads)
        self.grid.setRowCount(len(table.rows))
        for r, row in enumerate(table.rows):
            cells = [row.subject, *[_fmt(v) for v in row.values],
                     *[f"{d.percent:+.1f} %" if d else "–"
                       for n, d in zip(table.names, row.differences, strict=True) if n != table.baseline]]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if row.is_total:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.grid.setItem(r, c, item)
        self.grid.resizeColumnsToContents()
        self._draw_chart()
        from app.report.tables.comparison import formulas
        how = [f"{side.name}: {score.how}" for side, score in zip(table.sides, table.scores, strict=True)]
        self.notes.setStyleSheet("")
        self.notes.setText("\n".join([f"Percentage difference = (side − baseline) / baseline; the denominator is "
                                      f"{table.baseline}.", *how, *formulas(table)]))


    def chart_width(self) -> int:
        return max(self.CHART_MIN_WIDTH, self.grid.width())

    def _draw_chart(self) -> None:
        """The appendix's bar chart, drawn at the width the page gives it (again on a resize)."""
        if self.table_shown is None:
            return
        from app.metrics.bar_chart import bar_chart_image
        self.chart.setPixmap(QPixmap.fromImage(bar_chart_image(self.table_shown, self.chart_width(),
                                                               self.CHART_HEIGHT)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._draw_chart()


def compare_first(names: list[str], metrics: list, baseline, *, runs_root, bed, bed_file):
    """(table, metric, "") for the first metric the sides all have figures of, else (None, None, the
    first reason); reads the runs' files (a worker may call it)."""
    problem = ""
    for metric in metrics:
        try:
            sides = C.resolve_sides(names, metric, runs_root=runs_root, bed=bed,
                                    bed_file=str(bed_file) if bed_file else None)
            return C.compare_sides(sides, metric, baseline), metric, ""
        except ValueError as exc:
            problem = problem or str(exc)
    return None, None, problem


def runs_of_bed(path, runs_root) -> list[J.RunInfo]:
    if path is None:
        return []
    mine = Path(path).resolve()
    return [i for i in J.list_runs(runs_root) if Path(i.bed_file).resolve() == mine]


def _recorded_figures(bed):
    """The part of the bed a comparison reads (its recorded results), copied for a worker."""
    from copy import copy
    from types import SimpleNamespace
    return SimpleNamespace(results=[copy(r) for r in bed.results])


def _fmt(v: float) -> str:
    return "–" if math.isnan(v) else (f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}")


def gui_words(problem: str) -> str:
    """The comparison's reason in the words of this page, not the command line's."""
    problem = re.sub(r"is neither a run nor a configuration or scenario with (.+?) figures \(runs: `[^`]*`\)",
                     r"has no \1 figures yet: run it from the Run tab, or attach result files to a run below",
                     problem)
    return re.sub(r"attach its result files with `[^`]*`", "attach its result files below", problem)
