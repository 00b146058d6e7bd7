"""The run wizard: the methodology executed on the bed's hosts, one step at a time.

Left, every step with its status; right, the selected step's text, where it runs, its
command and its live output; below, what can be done with it now (run, retry, skip, tick
off, abort) and how far the whole run has come.  A run that did not finish (the
application or the machine died, a step failed) is offered for resume in a banner.

The engine works on a worker thread (app/run/qt_runner.py); this view only redraws from
the engine's state when a signal says something changed.
"""
from __future__ import annotations

import hashlib
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QFontDatabase, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFrame, QHBoxLayout, QLabel,
                               QLineEdit, QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QSplitter,
                               QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from app.run import journal as J
from app.run.qt_runner import RunController

STEP_ROLE = Qt.ItemDataRole.UserRole
OUTPUT_LINES_KEPT = 5000

# status -> (colour, label); the icon is a dot of that colour, the label is in the tooltip
STATUS_LOOK = {
    J.PENDING: ("#b0b0b0", "not run yet"), J.RUNNING: ("#1e6fd9", "running"), J.OK: ("#2e9e44", "succeeded"),
    J.DONE: ("#2e9e44", "done by hand"), J.SKIPPED: ("#8a63c9", "skipped"), J.FAILED: ("#d0312d", "failed"),
    J.TIMEOUT: ("#e07b00", "timed out"), J.CANCELLED: ("#e07b00", "stopped"), J.LOST: ("#e07b00", "connection lost"),
    J.INTERRUPTED: ("#e07b00", "interrupted"), J.UNREACHABLE: ("#d0312d", "host unreachable"),
    J.AUTH_FAILED: ("#d0312d", "login refused"), J.HOST_KEY: ("#d0312d", "host key not trusted"),
}
_ICONS: dict[str, QIcon] = {}


def status_icon(status: str) -> QIcon:
    if status not in _ICONS:
        pm = QPixmap(14, 14)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setBrush(QColor(STATUS_LOOK.get(status, ("#b0b0b0", ""))[0]))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(1, 1, 12, 12)
        p.end()
        _ICONS[status] = QIcon(pm)
    return _ICONS[status]


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class RunWizard(QWidget):
    def __init__(self, document, selection=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.extra_templates: list[str] = []      # step template directories beyond the built-in ones
        self.controller = RunController(self)
        self.steps: list = []
        self.factory = None
        self._tap = None
        self.started_at: float | None = None
        self._items: dict[str, QTreeWidgetItem] = {}
        self._build()
        c = self.controller
        c.task_started.connect(lambda step, host: self._step_changed(step))
        c.task_finished.connect(self._task_finished)
        c.output_lines.connect(self._show_output)
        c.busy_changed.connect(self._busy_changed)
        c.preflight_done.connect(self._show_preflight)
        c.failed.connect(lambda text: self._say(f"The run engine stopped: {text}", error=True))
        c.host_key_question.connect(self._ask_host_key)
        c.password_question.connect(self._ask_password)
        document.reset.connect(self.refresh_history)
        document.path_changed.connect(lambda _p: self.refresh_history())
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._update_progress)
        self._ticker.start()
        self.refresh_history()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        self.banner = QFrame(self)
        self.banner.setObjectName("resumeBanner")
        self.banner.setStyleSheet("#resumeBanner { background: #fff4d6; border: 1px solid #e0b64c; }")
        row = QHBoxLayout(self.banner)
        self.banner_text = QLabel(self.banner)
        self.banner_text.setWordWrap(True)
        self.resume_button = QPushButton("Resume", self.banner)
        self.resume_button.clicked.connect(lambda: self.resume(self._unfinished_id))
        row.addWidget(self.banner_text, 1)
        row.addWidget(self.resume_button)
        self.banner.hide()
        outer.addWidget(self.banner)

        top = QHBoxLayout()
        top.addWidget(QLabel("Runs of this bed:"))
        self.history = QComboBox(self)
        self.history.setMinimumWidth(380)
        top.addWidget(self.history, 1)
        self.open_button = QPushButton("Open", self)
        self.open_button.clicked.connect(lambda: self.resume(self.history.currentData()))
        self.new_button = QPushButton("New run", self)
        self.new_button.clicked.connect(self.new_run)
        self.preflight_button = QPushButton("Pre-flight check", self)
        self.preflight_button.setToolTip("Connect to every host, log in and look for the programs the steps "
                                         "call; changes nothing")
        self.preflight_button.clicked.connect(lambda: self.controller.preflight())
        for b in (self.open_button, self.new_button, self.preflight_button):
            top.addWidget(b)
        outer.addLayout(top)

        split = QSplitter(Qt.Orientation.Horizontal, self)
        self.tree = QTreeWidget(split)
        self.tree.setHeaderLabels(["Step", "Where"])
        self.tree.setColumnWidth(0, 330)
        self.tree.currentItemChanged.connect(lambda *_: self._show_step())
        self.right_tabs = QTabWidget(split)
        right = QWidget(self.right_tabs)
        self.right_tabs.addTab(right, "Step")
        self.metrics_page = QWidget(self.right_tabs)      # the dashboard is built on first use
        QVBoxLayout(self.metrics_page).setContentsMargins(0, 0, 0, 0)
        self.right_tabs.addTab(self.metrics_page, "Live metrics")
        self.dashboard = None
        rl = QVBoxLayout(right)
        rl.setContentsMargins(6, 0, 0, 0)
        self.step_title = QLabel("Open or start a run.", right)
        self.step_title.setWordWrap(True)
        self.step_title.setStyleSheet("font-weight: bold;")
        self.step_where = QLabel(right)
        self.step_where.setWordWrap(True)
        self.task_states = QLabel(right)
        self.task_states.setWordWrap(True)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.command = QPlainTextEdit(right)
        self.command.setReadOnly(True)
        self.command.setFont(mono)
        self.command.setMaximumHeight(110)
        self.output = QPlainTextEdit(right)
        self.output.setReadOnly(True)
        self.output.setFont(mono)
        self.output.setMaximumBlockCount(OUTPUT_LINES_KEPT)
        self.output.setPlaceholderText("The output of the steps appears here as they run.")
        for w in (self.step_title, self.step_where, self.task_states, QLabel("Command:", right), self.command,
                  QLabel("Output:", right), self.output):
            rl.addWidget(w)
        rl.setStretch(rl.indexOf(self.output), 1)
        split.setStretchFactor(1, 1)
        split.setSizes([440, 760])
        outer.addWidget(split, 1)

        buttons = QHBoxLayout()
        self.run_step_button = QPushButton("Run step", self)
        self.run_all_button = QPushButton("Run all", self)
        self.run_all_button.setToolTip("Run from the first unfinished step until a manual step or a failure")
        self.retry_button = QPushButton("Retry", self)
        self.skip_button = QPushButton("Skip", self)
        self.done_button = QPushButton("Mark done", self)
        self.abort_button = QPushButton("Abort", self)
        self.run_step_button.clicked.connect(lambda: self._run([self.current_step()]))
        self.retry_button.clicked.connect(lambda: self._run([self.current_step()], rerun=True))
        self.run_all_button.clicked.connect(self.run_all)
        self.skip_button.clicked.connect(lambda: self._mark(J.SKIPPED))
        self.done_button.clicked.connect(lambda: self._mark(J.DONE))
        self.abort_button.clicked.connect(self.controller.abort)
        for b in (self.run_step_button, self.run_all_button, self.retry_button, self.skip_button,
                  self.done_button, self.abort_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.progress = QProgressBar(self)
        self.progress.setMinimumWidth(220)
        self.progress_text = QLabel(self)
        buttons.addWidget(self.progress)
        buttons.addWidget(self.progress_text)
        outer.addLayout(buttons)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        outer.addWidget(self.message)
        self._update_buttons()

    # ---------------------------------------------------------------- runs

    def _bed_path(self) -> Path | None:
        path = getattr(self.document, "path", None)
        return Path(path).resolve() if path else None

    def refresh_history(self) -> None:
        self.history.clear()
        bed_path = self._bed_path()
        self._unfinished_id = None
        runs = [r for r in J.list_runs() if bed_path is not None and Path(r.bed_file) == bed_path]
        for info in runs:
            records, _ = J.read_records(info.dir)
            where = _where_it_stands(records)
            self.history.addItem(f"{info.id}  ({info.created[:16].replace('T', ' ')}, {where})", info.id)
            if self._unfinished_id is None and where != "complete" and records:
                self._unfinished_id = info.id
        if runs and self._unfinished_id == runs[0].id and (self.controller.engine is None or
                                                           self.controller.engine.info.id != runs[0].id):
            self.banner_text.setText(f"The run {runs[0].id} did not finish ({_where_it_stands(J.read_records(runs[0].dir)[0])}). "
                                     "Resume it to continue at the first step that did not succeed.")
            self.banner.show()
        else:
            self.banner.hide()
        self.open_button.setEnabled(bool(runs))

    def _plan(self):
        from app.remote.connect import TransportFactory
        from app.remote.credentials import CredentialStore
        from app.run.plan import run_steps
        from topology.methodology import generate
        bed = self.document.bed
        self.factory = TransportFactory(bed, CredentialStore(), decider=self.controller.ask_host_key,
                                        ask_password=self.controller.ask_password)
        return run_steps(generate(bed, extra_dirs=self.extra_templates), self.factory.transports())

    def new_run(self) -> None:
        bed_path = self._bed_path()
        if bed_path is None or not bed_path.exists():
            self._say("Save the bed first: a run records the project file it ran.", error=True)
            return
        if self.controller.busy:
            return
        steps = self._plan()
        digest = hashlib.sha256(bed_path.read_bytes()).hexdigest()
        info = J.new_run(str(bed_path), digest)
        if self._open(info, steps) is False:
            return
        self._say(f"Run {info.id} started. Check the hosts first (Pre-flight check), then run the steps.")

    def resume(self, run_id: str | None) -> None:
        if not run_id or self.controller.busy:
            return
        from app.run.plan import select_steps
        try:
            info = J.open_run(run_id)
            steps = self._plan()
            if info.steps:
                steps = select_steps(steps, info.steps)
        except ValueError as exc:
            self._say(str(exc), error=True)
            return
        if self._open(info, steps) is False:
            return
        first = self.controller.engine.first_unfinished()
        self._say(f"Run {info.id} opened" + (f"; it continues at step {first.number}." if first else "; it is complete."))
        if first is not None:
            self._select(first.number)

    def ensure_dashboard(self):
        if self.dashboard is None:
            from widgets.dashboard import MetricsDashboard
            self.dashboard = MetricsDashboard(self.metrics_page)
            self.metrics_page.layout().addWidget(self.dashboard)
            self.controller.metrics_problem.connect(self.dashboard.add_problem)
        return self.dashboard

    def _open(self, info, steps) -> bool | None:
        from app.run.engine import RunEngine
        from app.run.metrics_tap import MetricsTap
        from app.run.runlock import RunLocked
        from widgets.dashboard import thresholds_from_bed
        dashboard = self.ensure_dashboard()
        dashboard.clear()
        dashboard.set_thresholds(thresholds_from_bed(self.document.bed))
        if self._tap is not None:
            self._tap.close()
        self._tap = MetricsTap(info.dir, self.controller.listener(), on_samples=dashboard.ingest,
                               on_problem=self.controller.metrics_problem.emit, counter_transports=self.factory)
        self.controller.shutdown()      # releases this window's hold on a run before taking the next
        try:
            engine = RunEngine(info, steps, self.factory, host_timeouts=self.factory.timeouts(), listener=self._tap)
        except RunLocked as exc:
            self._say(str(exc), error=True)
            return False
        if engine.distrust:
            self._say(engine.distrust, error=True)
        self.controller.attach(engine)
        self.steps = steps
        self.started_at = time.monotonic()
        self.output.clear()
        self._fill_tree()
        self.refresh_history()
        index = self.history.findData(info.id)
        if index >= 0:
            self.history.setCurrentIndex(index)

    def shutdown(self) -> None:
        self._ticker.stop()
        self.controller.shutdown()
        if self._tap is not None:
            self._tap.close()
            self._tap = None
        if self.dashboard is not None:
            self.dashboard.shutdown()

    # ---------------------------------------------------------------- steps

    def _fill_tree(self) -> None:
        self.tree.clear()
        self._items.clear()
        sections: dict[str, QTreeWidgetItem] = {}
        for step in self.steps:
            parent = sections.get(step.section)
            if parent is None:
                parent = QTreeWidgetItem(self.tree, [f"{step.number.split('.')[0]}  {step.section_title}"])
                parent.setFirstColumnSpanned(True)
                parent.setExpanded(True)
                sections[step.section] = parent
            item = QTreeWidgetItem(parent, [f"{step.number}  {_short(step.text)}",
                                            "by hand" if step.manual else ", ".join(step.hosts)])
            item.setData(0, STEP_ROLE, step.number)
            self._items[step.number] = item
        self._redraw_statuses()
        first = self.controller.engine.first_unfinished() if self.controller.engine else None
        if first is not None:
            self._select(first.number)

    def _select(self, number: str) -> None:
        item = self._items.get(number)
        if item is not None:
            self.tree.setCurrentItem(item)
            self.tree.scrollToItem(item)

    def current_step(self):
        item = self.tree.currentItem()
        number = item.data(0, STEP_ROLE) if item is not None else None
        return self.controller.engine.by_number.get(number) if number and self.controller.engine else None

    def step_status(self, number: str) -> str:
        engine = self.controller.engine
        return engine.step_status(engine.by_number[number]) if engine else J.PENDING

    def _redraw_statuses(self) -> None:
        for number in self._items:
            self._step_changed(number)
        self._update_progress()

    def _step_changed(self, number: str) -> None:
        item = self._items.get(number)
        if item is None:
            return
        status = self.step_status(number)
        item.setIcon(0, status_icon(status))
        engine = self.controller.engine
        messages = [f"{t.host}: {engine.task_state(t).message}" for t in engine.by_number[number].tasks
                    if engine.task_state(t).message]
        item.setToolTip(0, STATUS_LOOK.get(status, ("", status))[1] + ("\n" + "\n".join(messages) if messages else ""))
        if self.current_step() is not None and self.current_step().number == number:
            self._show_step()

    def _note_if_complete(self) -> None:
        engine = self.controller.engine
        if engine is not None and engine.first_unfinished() is None and not getattr(engine, "_completed", False):
            engine._completed = True
            engine.journal.record("run", event="complete")
            self._say(f"Run {engine.info.id} complete: every step succeeded or was ticked off.")
            self.refresh_history()

    def _task_finished(self, step: str, host: str, status: str, message: str) -> None:
        self._note_if_complete()
        self._step_changed(step)
        self._update_progress()
        if status not in J.SUCCEEDED:
            self._say(f"Step {step} on {host}: {STATUS_LOOK.get(status, ('', status))[1]}"
                      + (f" - {message}" if message else ""), error=True)

    def _show_step(self) -> None:
        step = self.current_step()
        if step is None:
            self.step_title.setText("Open or start a run." if not self.steps else "Choose a step.")
            self.step_where.clear()
            self.task_states.clear()
            self.command.clear()
        else:
            engine = self.controller.engine
            self.step_title.setText(f"{step.number}  {step.text}")
            if step.manual:
                where = "Done by hand" + (f" (not automated: {step.why_manual})" if step.why_manual else "")
            else:
                where = "Runs on " + "; ".join(f"{h} via {self.factory.describe(h)}" for h in step.hosts)
            self.step_where.setText(where)
            lines = []
            for t in step.tasks:
                st = engine.task_state(t)
                look = STATUS_LOOK.get(st.status, ("", st.status))[1]
                lines.append(f"{'By hand' if t.manual else t.host}: {look}"
                             + (f" ({st.seconds:.1f} s)" if st.seconds is not None else "")
                             + (f" - {st.message}" if st.message else ""))
            self.task_states.setText("\n".join(lines))
            self.command.setPlainText("\n\n".join(
                (f"# on {t.host} ({t.shell})\n" if len(step.tasks) > 1 else "") + t.script
                + (f"\n# check: {t.verify}" if t.verify else "") for t in step.tasks if not t.manual)
                or "(no command: a person does this step and ticks it off)")
        self._update_buttons()

    def _show_output(self, batch: list) -> None:
        text = "\n".join(f"[{step} {host}] ! {line}" if stream == "stderr" else f"[{step} {host}] {line}"
                         for step, host, stream, line, _t in batch)
        self.output.appendPlainText(text)
        self.last_output_delay_s = time.monotonic() - batch[-1][4]

    def _busy_changed(self, busy: bool) -> None:
        self._update_buttons()
        engine = self.controller.engine
        if busy or engine is None:
            return
        self._redraw_statuses()       # once the worker is done, every step as the journal has it
        current = engine.info.id
        self.refresh_history()
        index = self.history.findData(current)
        if index >= 0:
            self.history.setCurrentIndex(index)
        first = engine.first_unfinished()
        if first is None:
            return
        status = engine.step_status(first)
        if status in J.PROBLEMS:
            self._select(first.number)
            why = "; ".join(f"{t.host}: {engine.task_state(t).message or engine.task_state(t).status}"
                            for t in first.tasks if engine.task_state(t).status in J.PROBLEMS)
            self._say(f"Stopped at step {first.number} ({STATUS_LOOK.get(status, ('', status))[1]}) - {why}. "
                      "Fix the cause, then Retry (or Skip).", error=True)
        elif first.manual:
            self._select(first.number)
            self._say(f"Step {first.number} is done by hand: do it, then Mark done (or Skip).")

    def _update_buttons(self) -> None:
        engine = self.controller.engine
        busy = self.controller.busy
        step = self.current_step()
        status = self.step_status(step.number) if step is not None else J.PENDING
        can_act = engine is not None and step is not None and not busy
        self.run_step_button.setEnabled(can_act and not step.manual and status == J.PENDING)
        self.retry_button.setEnabled(can_act and not step.manual and status in J.PROBLEMS)
        self.skip_button.setEnabled(can_act and status not in J.SUCCEEDED)
        self.done_button.setEnabled(can_act and step.manual and status not in J.SUCCEEDED)
        self.run_all_button.setEnabled(engine is not None and not busy and engine.first_unfinished() is not None)
        self.abort_button.setEnabled(busy)
        self.new_button.setEnabled(not busy)
        self.open_button.setEnabled(not busy and self.history.count() > 0)
        self.preflight_button.setEnabled(engine is not None and not busy)

    def _update_progress(self) -> None:
        engine = self.controller.engine
        if engine is None or not self.steps:
            self.progress.setValue(0)
            self.progress_text.clear()
            return
        finished = [s for s in self.steps if engine.succeeded(s)]
        self.progress.setMaximum(len(self.steps))
        self.progress.setValue(len(finished))
        elapsed = time.monotonic() - (self.started_at or time.monotonic())
        durations = [engine.task_state(t).seconds for s in finished for t in s.tasks
                     if not t.manual and engine.task_state(t).seconds is not None]
        remaining = [s for s in self.steps if not engine.succeeded(s) and not s.manual]
        left = ""
        if durations and remaining:
            left = f" · about {_clock(sum(durations) / len(durations) * len(remaining))} left"
        self.progress_text.setText(f"{len(finished)}/{len(self.steps)} steps · {_clock(elapsed)} elapsed{left}")

    # -------------------------------------------------------------- actions

    def _run(self, steps, rerun: bool = False) -> None:
        steps = [s for s in steps if s is not None]
        if steps and self.controller.run_steps(steps, rerun=rerun):
            self._say(f"Running {', '.join(s.number for s in steps)} …")
            self._update_buttons()

    def run_all(self) -> None:
        engine = self.controller.engine
        first = engine.first_unfinished() if engine else None
        if first is None:
            return
        if first.manual:
            self._select(first.number)
            self._say(f"Step {first.number} is done by hand: do it, then Mark done (or Skip).")
            return
        self._run(self.steps[self.steps.index(first):])

    def _mark(self, status: str) -> None:
        step = self.current_step()
        if step is None or self.controller.busy:
            return
        self.controller.engine.mark(step, status, "in the run wizard")
        self._note_if_complete()
        self._step_changed(step.number)
        self._update_progress()
        nxt = self.controller.engine.first_unfinished()
        if nxt is not None:
            self._select(nxt.number)
        self._update_buttons()

    def _show_preflight(self, checks: list) -> None:
        bad = [c for c in checks if not c.ok]
        lines = [f"{c.host}: {'ok' if c.ok else 'PROBLEM'} - {c.message}" for c in checks]
        self.output.appendPlainText("Pre-flight check:\n" + "\n".join(lines))
        self._say(f"Pre-flight: {len(checks) - len(bad)} of {len(checks)} host(s) ready"
                  + (f"; fix {', '.join(c.host for c in bad)} before running." if bad else "."), error=bool(bad))

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b3261e;" if error else "")
        self.message.setText(text)

    # ------------------------------------------------- questions from the worker

    def _ask_host_key(self, question, reply) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "Unknown host key",
                          f"The SSH host key of {question.host} ({question.address}) is not known yet.\n\n"
                          f"{question.key_type}\n{question.fingerprint}\n\n"
                          "Compare it with the key shown on the host's own console before you trust it.",
                          parent=self)
        trust = box.addButton("Trust and remember", QMessageBox.ButtonRole.AcceptRole)
        refuse = box.addButton("Refuse", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(refuse)
        box.setEscapeButton(refuse)
        box.exec()
        reply.value = box.clickedButton() is trust
        reply.answered.set()

    def _ask_password(self, access, reply) -> None:
        dialog = QDialog(self)
        dialog.setWindowTitle("Password")
        layout = QVBoxLayout(dialog)
        layout.addWidget(QLabel(f"Password for {access.user or 'the user'} on {access.host}"
                                + (f" (shared entry {access.credential!r})" if access.credential else "")))
        field = QLineEdit(dialog)
        field.setEchoMode(QLineEdit.EchoMode.Password)
        layout.addWidget(field)
        remember = QCheckBox("Remember it in the system keyring", dialog)
        remember.setChecked(True)
        layout.addWidget(remember)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(dialog.accept)
        box.rejected.connect(dialog.reject)
        layout.addWidget(box)
        if dialog.exec() == QDialog.DialogCode.Accepted and field.text():
            from app.remote.credentials import entry_name
            self.factory.credentials.set(entry_name(access), field.text(), remember=remember.isChecked())
            reply.value = field.text()
        reply.answered.set()


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _where_it_stands(records: list[dict]) -> str:
    if any(r.get("kind") == "run" and r.get("event") == "complete" for r in records):
        return "complete"
    states = J.replay(records).values()
    interrupted = sum(1 for s in states if s.status == J.INTERRUPTED)
    failed = sum(1 for s in states if s.status in J.PROBLEMS and s.status != J.INTERRUPTED)
    done = sum(1 for s in states if s.status in J.SUCCEEDED)
    if interrupted:
        return f"interrupted, {done} task(s) done"
    if failed:
        return f"{failed} failed, {done} done"
    return f"{done} task(s) done" if done else "not started"
