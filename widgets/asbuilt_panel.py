"""The Run tab's "As built" page: "Check the bed" reads the hosts (read-only) and lists where they
differ from the drawing, as the Validation panel lists findings -- severity, code, host, what was
seen and what the bed says -- with the counts as badges, "Show on diagram" for the selected
finding's components, and "Take into the bed" for the values the hosts showed that the bed does
not state (one undo step).  The check runs on a worker (app/background.py) through the run's own
session when a run is open (it is then kept with the run), else a session of its own; host-key and
password questions come back through the run controller, as a run's do."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.background import BackgroundJob

COLOURS = {"error": "#f8d0d0", "warning": "#fff0c0", "info": "#e4eefc"}


class AsBuiltPanel(QWidget):
    @classmethod
    def add_to(cls, wizard, selection=None) -> AsBuiltPanel:
        """The page, on the Run tab's pages, checking when a run starts if asked to."""
        panel = cls(wizard, wizard.pages, selection)
        wizard.pages.addTab(panel, "As built")
        wizard.controller.event.connect(panel._run_event)
        return panel

    def __init__(self, wizard, parent: QWidget | None = None, selection=None):
        super().__init__(parent)
        self.wizard = wizard
        self.selection = selection
        self.result = None
        self._revision = 0
        self.job = BackgroundJob(self, name="as-built", current_revision=lambda: self._revision)
        self.job.result.connect(self._done)
        self.job.busy_changed.connect(self._busy)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        self.check_button = QPushButton("Check the bed", self)
        self.check_button.setToolTip("Read every host with an access entry (read-only commands) and hold what it "
                                     "says against the drawing: addresses, MTUs, links, LUNs, sessions, OS ...")
        self.check_button.clicked.connect(self.check)
        self.before_run = QCheckBox("Check the bed when a run starts", self)
        self.badges = QLabel("Not checked yet.", self)
        self.show_button = QPushButton("Show on diagram", self)
        self.show_button.clicked.connect(self.show_on_diagram)
        self.learn_button = QPushButton("Take into the bed", self)
        self.learn_button.setToolTip("Write the values the hosts showed that the bed does not state (WWNs, serials, "
                                     "MACs, link speeds, initiator names) into the bed: one undo step")
        self.learn_button.clicked.connect(self.learn)
        for w in (self.check_button, self.before_run, self.badges):
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.show_button)
        row.addWidget(self.learn_button)
        outer.addLayout(row)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Severity", "Code", "Host", "Finding"])
        self.tree.setColumnWidth(0, 80)
        self.tree.setColumnWidth(1, 80)
        self.tree.setColumnWidth(2, 110)
        self.tree.setWordWrap(True)
        self.tree.currentItemChanged.connect(lambda *_: self._update_buttons())
        outer.addWidget(self.tree, 1)
        self.table = QTreeWidget(self)
        self.table.setHeaderLabels(["Host", "Fact", "Bed", "Seen", ""])
        self.table.setColumnWidth(1, 200)
        outer.addWidget(QLabel("As built, fact by fact:", self))
        outer.addWidget(self.table, 1)
        self._update_buttons()

    # ------------------------------------------------------------------ the check

    def _session(self):
        """The open run's session (the check is kept with it), else one for the bed as drawn now."""
        w = self.wizard
        if w.session is not None:
            return w.session
        from app.run.session import RunSession
        return RunSession(w.document.bed, w._bed_path(), templates=w.extra_templates, ask=w.controller.ask,
                          on_event=w.controller.on_event, configuration=w._configuration())

    def _run_event(self, event) -> None:
        from app.run import events as E
        # a new run says so as it opens; the check follows once the Run tab has taken the run
        if isinstance(event, E.Notice) and event.text.startswith("run ") and self.before_run.isChecked():
            QTimer.singleShot(0, self.check)

    def check(self) -> bool:
        if self.job.busy:
            return False
        try:
            session = self._session()
        except ValueError as exc:
            self.badges.setText(str(exc))
            return False
        self._revision += 1
        self.badges.setText("Reading the hosts ...")
        return self.job.start(self._revision, session.check_bed)

    def _busy(self, busy: bool) -> None:
        self.check_button.setEnabled(not busy)

    def _done(self, outcome) -> None:
        if outcome.error:
            self.badges.setText(f"The check could not run: {outcome.error}")
            return
        self.show_result(outcome.value)

    def show_result(self, result) -> None:
        self.result = result
        self.tree.clear()
        for f in result.findings:
            host = next((s for s in f.subjects if ":" not in s), f.subjects[0].split(":")[0] if f.subjects else "")
            item = QTreeWidgetItem([f.severity, f.code, host, f.message])
            item.setToolTip(3, f"{f.message}\n\nWhy: {f.reason}\nSource: {f.source}\nFix: {f.hint}")
            item.setData(0, Qt.ItemDataRole.UserRole, list(f.subjects))
            for col in range(4):
                item.setBackground(col, QBrush(QColor(COLOURS.get(f.severity, "#ffffff"))))
            self.tree.addTopLevelItem(item)
        self.table.clear()
        for r in result.asbuilt.rows:
            item = QTreeWidgetItem([r.host, r.fact, r.expected, r.seen, r.code or "as drawn"])
            if r.code:
                item.setBackground(3, QBrush(QColor(COLOURS["error"])))
            self.table.addTopLevelItem(item)
        c = result.counts()
        hosts = len(result.asbuilt.hosts)
        if not result.findings:
            self.badges.setText(f"<span style='color:#1a7f37'>&#10004;</span> {hosts} host(s) as drawn")
        else:
            self.badges.setText(" ".join(
                f"<span style='background:{COLOURS[k]}; padding:2px'>&nbsp;{n} {k}{'s' if n != 1 else ''}&nbsp;</span>"
                for k, n in c.items() if n) + f" on {hosts} host(s)")
        self._update_buttons()

    # ------------------------------------------------------------------ actions

    def _update_buttons(self) -> None:
        self.show_button.setEnabled(self.tree.currentItem() is not None)
        self.learn_button.setEnabled(bool(self.result is not None and self.result.asbuilt.learnt))

    def show_on_diagram(self) -> None:
        item = self.tree.currentItem()
        # the main window's selection: the canvas and the tree follow it
        selection = self.selection or getattr(self.window(), "selection", None)
        if item is None or selection is None:
            return
        selection.focus({s.split(":")[0] for s in item.data(0, Qt.ItemDataRole.UserRole) or []})
        # the page is on the Run tab: bring the diagram forward, where the selection is centred
        window = self.window()
        tabs, canvas = getattr(window, "tabs", None), getattr(window, "canvas", None)
        if tabs is not None and canvas is not None:
            tabs.setCurrentWidget(canvas)

    def learn(self) -> None:
        if self.result is None:
            return
        from topology.asbuilt.learn import learn_edit
        plan = learn_edit(self.wizard.document.bed, self.result.asbuilt.learnt)
        if plan.edit is None:
            self.badges.setText("Nothing to take: the bed states every value the hosts showed.")
            return
        self.wizard.document.apply(plan.edit)
        self.badges.setText(f"Took {len(plan.changes)} value(s) into the bed (Edit › Undo takes them back).")
        self.learn_button.setEnabled(False)

    def shutdown(self) -> None:
        self._revision += 1
        self.job.shutdown()
