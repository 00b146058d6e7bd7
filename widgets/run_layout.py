"""The Run tab's widgets and where they sit: the resume banner, the run list and its buttons,
the Steps and Live metrics pages (the step tree, the step's text, command and output), the
action buttons and the progress bar.  What they do is widgets/run_wizard.py's."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from app.run import events as E
from app.run.plan import started_together
from app.run.session import ANSIBLE, BUILTIN
from widgets.run_output import OutputPane


def build_run_tab(w) -> None:
    outer = QVBoxLayout(w)
    w.banner = QFrame(w)
    w.banner.setObjectName("resumeBanner")
    w.banner.setStyleSheet("#resumeBanner { background: #fff4d6; border: 1px solid #e0b64c; }")
    row = QHBoxLayout(w.banner)
    w.banner_text = QLabel(w.banner)
    w.banner_text.setWordWrap(True)
    w.resume_button = QPushButton("Resume", w.banner)
    w.resume_button.clicked.connect(lambda: w.resume(w._unfinished_id))
    row.addWidget(w.banner_text, 1)
    row.addWidget(w.resume_button)
    w.banner.hide()
    outer.addWidget(w.banner)
    w.warnings_label = QLabel(w)
    w.warnings_label.setObjectName("runWarnings")
    w.warnings_label.setWordWrap(True)
    w.warnings_label.setStyleSheet("#runWarnings { color: #8a5300; }")
    w.warnings_label.hide()
    outer.addWidget(w.warnings_label)

    top = QHBoxLayout()
    top.addWidget(QLabel("Runs of this bed:"))
    w.history = QComboBox(w)
    w.history.setMinimumWidth(380)
    top.addWidget(w.history, 1)
    w.open_button = QPushButton("Open", w)
    w.open_button.clicked.connect(lambda: w.resume(w.history.currentData()))
    w.new_button = QPushButton("New run", w)
    w.new_button.clicked.connect(w.new_run)
    w.preflight_button = QPushButton("Pre-flight check", w)
    w.preflight_button.setToolTip("Connect to every host, log in and look for the programs the steps "
                                     "call; changes nothing")
    w.preflight_button.clicked.connect(lambda: w.controller.preflight())
    # what a new run is driven by; an opened run keeps the engine it started with
    w.engine_choice = QComboBox(w)
    w.engine_choice.addItem("Built-in engine", BUILTIN)
    w.engine_choice.addItem("Ansible", ANSIBLE)
    w.engine_choice.setToolTip("What drives a new run: the built-in engine (fastest), or ansible-playbook "
                                  "through ansible-runner for labs that run Ansible. A run keeps its engine "
                                  "when it is opened again.")
    top.addWidget(w.open_button)
    top.addWidget(QLabel("New run with:"))
    for b in (w.engine_choice, w.new_button, w.preflight_button):
        top.addWidget(b)
    outer.addLayout(top)

    # the steps and the live metrics each get the page's whole width: plots squeezed beside
    # the step list were 130 px wide at 1366×768
    w.pages = QTabWidget(w)
    w.pages.setDocumentMode(True)
    split = QSplitter(Qt.Orientation.Horizontal, w.pages)
    w.pages.addTab(split, "Steps")
    w.metrics_page = QWidget(w.pages)      # the dashboard is built on first use
    QVBoxLayout(w.metrics_page).setContentsMargins(0, 4, 0, 0)
    w.pages.addTab(w.metrics_page, "Live metrics")
    from widgets.asbuilt_panel import AsBuiltPanel
    w.asbuilt = AsBuiltPanel.add_to(w)     # the as-built check's page
    w.dashboard = None
    w.tree = QTreeWidget(split)
    w.tree.setHeaderLabels(["Step", "Where"])
    w.tree.setColumnWidth(0, 330)
    w.tree.currentItemChanged.connect(lambda *_: w._show_step())
    right = QWidget(split)
    rl = QVBoxLayout(right)
    rl.setContentsMargins(6, 0, 0, 0)
    w.step_title = QLabel("Open or start a run.", right)
    w.step_title.setWordWrap(True)
    w.step_title.setStyleSheet("font-weight: bold;")
    w.step_where = QLabel(right)
    w.step_where.setWordWrap(True)
    w.task_states = QLabel(right)
    w.task_states.setWordWrap(True)
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    w.command = QPlainTextEdit(right)
    w.command.setReadOnly(True)
    w.command.setFont(mono)
    w.command.setMaximumHeight(110)
    w.output = OutputPane(right)     # fio's reports as figures, the raw lines one click away
    for part in (w.step_title, w.step_where, w.task_states, QLabel("Command:", right), w.command, w.output):
        rl.addWidget(part)
    rl.setStretch(rl.indexOf(w.output), 1)
    split.setStretchFactor(1, 1)
    split.setSizes([440, 760])
    outer.addWidget(w.pages, 1)

    buttons = QHBoxLayout()
    w.run_step_button = QPushButton("Run step", w)
    w.run_all_button = QPushButton("Run all", w)
    w.run_all_button.setToolTip("Run from the first unfinished step until a manual step or a failure")
    w.retry_button = QPushButton("Retry", w)
    w.skip_button = QPushButton("Skip", w)
    w.done_button = QPushButton("Mark done", w)
    w.abort_button = QPushButton("Abort", w)
    w.run_step_button.clicked.connect(lambda: w._run(started_together(
        w.steps, w.current_step(), lambda s: w.step_status(s.number) in (E.PENDING, E.INTERRUPTED))))
    w.retry_button.clicked.connect(lambda: w._run([w.current_step()], rerun=True))
    w.run_all_button.clicked.connect(w.run_all)
    w.skip_button.clicked.connect(lambda: w._mark(E.SKIPPED))
    w.done_button.clicked.connect(lambda: w._mark(E.DONE))
    w.abort_button.clicked.connect(w.controller.abort)
    for b in (w.run_step_button, w.run_all_button, w.retry_button, w.skip_button,
              w.done_button, w.abort_button):
        buttons.addWidget(b)
    buttons.addStretch(1)
    w.progress = QProgressBar(w)
    w.progress.setMinimumWidth(220)
    w.progress_text = QLabel(w)
    buttons.addWidget(w.progress)
    buttons.addWidget(w.progress_text)
    outer.addLayout(buttons)
    w.message = QLabel(w)
    w.message.setWordWrap(True)
    outer.addWidget(w.message)
    w._update_buttons()
