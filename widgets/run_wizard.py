"""The run wizard: the methodology executed on the bed's hosts, one step at a time.

Left, every step with its status; right, the selected step's text, where it runs, its
command and its live output; below, what can be done with it now (run, retry, skip, tick
off, abort) and how far the whole run has come.  A run that did not finish (the
application or the machine died, a step failed) is offered for resume in a banner.

The run is composed by app/run/session.py, the same session `testbed-studio run` drives;
its work runs on a worker thread (app/run/qt_runner.py) and this view draws the events it
sends (each carries what it needs, so one arriving after its run was closed is harmless)
and answers its questions.  Transports and credentials are the session's business only.
"""
from __future__ import annotations

import importlib
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QTreeWidgetItem,
    QWidget,
)

from app.background import BackgroundJob, DrawingFirst
from app.run import events as E
from app.run.journal import JournalRefused
from app.run.plan import mark_note, running_text
from app.run.qt_runner import RunController
from app.run.session import RunSession, runs_of_bed
from widgets.disk_write_confirm import confirm_disk_writes
from widgets.run_binding import OpenBed, leftover_text, recorded_seconds, step_table_text
from widgets.run_place import history_text, short_text, where_text
from widgets.run_questions import answer_question, confirm_run_start, confirm_saved
from widgets.run_status_look import STATUS_LOOK, status_icon

STEP_ROLE = Qt.ItemDataRole.UserRole

WARM_UP_MS = 2000
WARM_IMPORTS = ("pyqtgraph", "widgets.dashboard")      # the dashboard's imports, each a turn of its own


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class RunWizard(QWidget):
    runs_changed = Signal()         # a run of the open bed started, ended its work or went to the background

    def __init__(self, document, selection=None, parent=None):
        super().__init__(parent)
        self.document = document
        self.open_bed = OpenBed(document)      # the bed every run action is for
        self.extra_templates: list[str] = []      # step template directories beyond the built-in ones
        self.controller = RunController(self)
        self.steps: list = []
        # the clock counts while this window drives the run and stops with it; a run opened again
        # starts from the time its journal records (a finished one is not counted on)
        self._driven_s = 0.0
        self._busy_since: float | None = None
        self._recorded_s: float | None = None
        self.run_warnings: list[str] = []      # said when the open run started: shown until the next one
        # saves the bed the way File › Save does (asks for a name when it has none); the main window sets it
        self.save_bed = None
        self._history_stale = False
        self._items: dict[str, QTreeWidgetItem] = {}
        self._drawn: dict[str, E.StepLook] = {}     # the look each step's line shows now
        self._build()
        # the live plots (pyqtgraph's import, the dashboard, the criterion lines): made at idle, a piece a turn
        self._warm_steps = [*(lambda m=m: importlib.import_module(m) for m in WARM_IMPORTS),
                            self.ensure_dashboard, self._warm_thresholds]
        self._warm_timer = QTimer(self, singleShot=True, interval=WARM_UP_MS, timeout=self._warm_up)
        self._warm_timer.start()
        c = self.controller
        c.event.connect(self._on_event)
        c.output_lines.connect(self._show_output)
        c.samples.connect(self._plot_samples)
        c.busy_changed.connect(self._busy_changed)
        c.background_ended.connect(lambda _run_id: (self.refresh_history(), self.runs_changed.emit()))
        c.failed.connect(lambda text: self._say(f"The run engine stopped: {text}", error=True))
        c.question.connect(self._answer)
        # the Run tab shows the open bed's runs only: another bed opened detaches the one shown
        document.reset.connect(self._open_bed_changed)
        document.path_changed.connect(lambda _p: self._open_bed_changed())
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._update_progress)
        self._ticker.start()
        self.refresh_history()

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        from widgets.run_layout import build_run_tab
        build_run_tab(self)

    # ---------------------------------------------------------------- runs

    def _bed_path(self) -> Path | None:
        path = getattr(self.document, "path", None)
        return Path(path).resolve() if path else None

    @property
    def session(self) -> RunSession | None:
        session = self.controller.session
        return session if session is not None and session.engine is not None else None

    def refresh_history(self) -> None:
        self.history.clear()
        self._unfinished_id = None
        runs = runs_of_bed(self._bed_path())
        open_id = self.session.run_id if self.session else None
        for info, standing in runs:
            if info.id == open_id:
                standing = self.session.standing()       # live: a step running here, a manual step waiting
            where = standing.summary()
            self.history.addItem(history_text(info, standing), info.id)
            if self._unfinished_id is None and not standing.complete and where != "not started":
                self._unfinished_id = info.id
        if runs and self._unfinished_id == runs[0][0].id and open_id != runs[0][0].id:
            if runs[0][0].id in self.controller.in_background():
                self.banner_text.setText(f"The run {runs[0][0].id} goes on in the background "
                                         f"({runs[0][1].summary()}). Open it to follow it here.")
                self.resume_button.setText("Show")
            else:
                self.banner_text.setText(f"The run {runs[0][0].id} did not finish ({runs[0][1].summary()}). "
                                         "Resume it to continue at the first step that did not succeed.")
                self.resume_button.setText("Resume")
            self.banner.show()
        else:
            self.banner.hide()
        self.open_button.setEnabled(bool(runs))

    def _open_bed_changed(self) -> None:
        """File › Open, New, Save As: the run shown belongs to the bed it was started from.  When
        that is no longer the open bed (another file, or the file changed on disk), the view lets
        go of it: its work goes on in the background (listed in `runs` with its bed, shown again
        when its bed is opened and the run chosen), and nothing here can write to it."""
        session = self.controller.session
        if session is not None and not self.open_bed.is_bed_of(session):
            self.detach()
        self.refresh_history()
        if self._warm_thresholds not in self._warm_steps:      # the other bed's criterion lines, at idle
            self._warm_steps.append(self._warm_thresholds)
            if not self._warm_timer.isActive():
                self._warm_timer.start(WARM_UP_MS)

    def detach(self) -> None:
        going_on = self.controller.detach()
        self.steps = []
        self._driven_s, self._busy_since, self._recorded_s = 0.0, None, None
        self._items.clear()
        self._drawn.clear()
        self.tree.clear()
        self.output.clear()
        self.run_warnings = []
        self._show_warnings()
        if self.dashboard is not None:
            self.dashboard.clear()
            self.dashboard.set_thresholds([])        # the criteria were the other bed's
            self.dashboard.set_run_length(None)
        self._show_step()
        self._update_progress()
        self._say(f"Run {going_on} goes on in the background; open its bed to follow it." if going_on else "")
        self.runs_changed.emit()

    def _new_session(self, engine: str = "") -> RunSession:
        """A session for the bed as it is drawn now (`engine`: what drives a new run; "" lets an opened
        run keep its own); the run before is closed first."""
        self._prepare_dashboard()
        self.controller.shutdown()      # releases this window's hold on a run before taking the next
        self.run_warnings = []
        self._show_warnings()
        path, templates, configuration = self._bed_path(), list(self.extra_templates), self._configuration()

        def make() -> RunSession:
            """On a worker while the window goes on: the run is of the saved file (the person was asked to
            save before), read afresh, so an edit made meanwhile neither races the procedure nor slips in."""
            from topology.fileformat import load
            return RunSession(load(path), path, templates=templates, ask=self.controller.ask,
                              on_event=self.controller.on_event, configuration=configuration, engine=engine)
        session = self.controller.build(make)
        from app.metrics.storage_series import StorageMap
        self.dashboard.set_storage_map(StorageMap(session.bed))     # volumes, groups, VMs of the configuration run
        self.controller.attach(session)
        return session

    def _prepare_dashboard(self) -> None:
        dashboard = self.ensure_dashboard()
        dashboard.clear()
        from topology.workload_time import longest_load_seconds
        from widgets.dashboard import thresholds_from_bed
        dashboard.set_thresholds(thresholds_from_bed(self.document.bed))
        dashboard.set_run_length(longest_load_seconds(self.document.bed))

    def plan(self) -> list:
        """The steps a run of the bed as drawn now would have (nothing is opened)."""
        return RunSession(self.document.bed, self._bed_path(), templates=self.extra_templates,
                          configuration=self._configuration()).all_steps

    def _configuration(self) -> str | None:
        """The configuration chooser's choice (None for a bed without configurations)."""
        from app.configuration_choice import ConfigurationChoice
        return ConfigurationChoice.of(self.document).name

    def _update_open_run_entry(self) -> None:
        """The open run's line in the run list follows it live (running, failed at, waiting)."""
        self._history_stale = False
        session = self.session
        index = self.history.findData(session.run_id) if session is not None else -1
        if index >= 0:
            self.history.setItemText(index, history_text(session.info, session.standing()))

    def new_run(self) -> None:
        if self.controller.busy:
            return
        if not confirm_run_start(self, self.document, self.save_bed):
            self._say("No run started.")
            return
        bed_path = self._bed_path()
        if bed_path is None or not bed_path.exists():
            self._say("Save the bed first: a run records the project file it ran.", error=True)
            return
        session = self._new_session(engine=self.engine_choice.currentData())
        if not session.start_new():
            return
        self._opened(session)
        self._say(f"Run {session.run_id} started. Check the hosts first (Pre-flight check), then run the steps.")

    def resume(self, run_id: str | None) -> None:
        if not run_id or self.controller.busy:
            return
        if run_id in self.controller.in_background():
            self._prepare_dashboard()
            session = self.controller.take_back(run_id)      # its work still goes on: shown again, not reopened
            self._opened(session)
            self._say(f"Run {run_id} shown again; it goes on.")
            return
        if not confirm_saved(self, self.document, self.save_bed):      # resumed steps are made from the file too
            self._say(f"Run {run_id} not opened.")
            return
        session = self._new_session()
        if not session.resume(run_id):
            return
        self._opened(session)
        first = session.first_unfinished()
        where = f"; it continues at step {first.number}." if first else "; it is complete."
        self._say(f"Run {run_id} opened{where}")
        if first is not None:
            self._select(first.number)

    def _plot_samples(self, run_id: str, samples: list) -> None:
        session = self.controller.session
        if self.dashboard is None or session is None or (run_id and session.run_id and run_id != session.run_id):
            return          # a run this window no longer shows
        self.dashboard.ingest(samples)

    def _warm_up(self) -> None:
        if (hold := DrawingFirst.of(self.document)).holding:    # a bed is opening or drawn: first that
            self._warm_timer.setInterval(0)
            hold.released.connect(self._warm_timer.start, Qt.ConnectionType.SingleShotConnection)
        elif BackgroundJob.any_working():    # the bed's findings and procedure first: see any_working
            self._warm_timer.start(WARM_UP_MS // 8)
        elif self._warm_steps:
            self._warm_steps.pop(0)()
            self._warm_timer.start(0)

    def _warm_thresholds(self) -> None:
        """The open bed's criterion lines, drawn before a run of it starts (never while one is shown)."""
        if self.controller.session is None and not self.controller.busy:
            from widgets.dashboard import thresholds_from_bed
            self.dashboard.set_thresholds(thresholds_from_bed(self.document.bed))

    def ensure_dashboard(self):
        if self.dashboard is None:
            from widgets.dashboard import MetricsDashboard
            self.dashboard = MetricsDashboard(self.metrics_page)
            self.metrics_page.layout().addWidget(self.dashboard)
        return self.dashboard

    def _opened(self, session: RunSession) -> None:
        self.steps = session.steps
        self._driven_s, self._recorded_s = 0.0, recorded_seconds(session.info.dir)
        self._busy_since = time.monotonic() if self.controller.busy else None
        self.output.clear()
        from app.run.metrics_tap import streams_fio
        for task in (t for s in self.steps for t in s.tasks if streams_fio(t.script)):
            self.output.follow_fio(task.step, task.host)
        # the run's record, not what came in since: every sample it holds, drawn again
        self.dashboard.show_history(session.info.dir)
        self._fill_tree()
        self.refresh_history()
        index = self.history.findData(session.run_id)
        if index >= 0:
            self.history.setCurrentIndex(index)
        self.runs_changed.emit()

    def shutdown(self) -> None:
        self._ticker.stop()
        self.asbuilt.shutdown()
        self.controller.close_all()
        if self.dashboard is not None:
            self.dashboard.shutdown()

    # ---------------------------------------------------------------- steps

    def _fill_tree(self) -> None:
        self.tree.clear()
        self._items.clear()
        self._drawn.clear()
        sections: dict[str, QTreeWidgetItem] = {}
        for step in self.steps:
            parent = sections.get(step.section)
            if parent is None:
                parent = sections[step.section] = QTreeWidgetItem(
                    [f"{step.number.split('.')[0]}  {step.section_title}"])
            item = QTreeWidgetItem(parent, [f"{step.number}  {short_text(step.text)}",
                                            "by hand" if step.manual else ", ".join(step.hosts)])
            item.setData(0, STEP_ROLE, step.number)
            self._items[step.number] = item
        # drawn before they join the tree: a big bed's 1,500 steps then cost the view one update, not one each
        self._redraw_statuses()
        self.tree.addTopLevelItems(list(sections.values()))
        for parent in sections.values():
            parent.setFirstColumnSpanned(True)
            parent.setExpanded(True)
        first = self.session.first_unfinished() if self.session else None
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
        session = self.session
        return session.by_number.get(number) if number and session else None

    def step_status(self, number: str) -> str:
        look = self.session.look(number) if self.session else None
        return look.status if look else E.PENDING

    def _redraw_statuses(self) -> None:
        """Every step whose status changed since it was drawn (a step's line costs more to draw than
        to compare)."""
        session = self.session
        if session is not None:
            drawn = self._drawn
            for number in self._items:
                look = session.look(number)
                if look is not None and drawn.get(number) != look:
                    self._draw_step(look)
        self._update_progress()

    def _step_changed(self, number: str) -> None:
        look = self.session.look(number) if self.session else None
        if look is not None:
            self._draw_step(look)

    def _draw_step(self, look: E.StepLook) -> None:
        item = self._items.get(look.number)
        if item is None:
            return
        self._drawn[look.number] = look
        item.setIcon(0, status_icon(look.status))
        messages = [f"{t.host}: {t.message}" for t in look.tasks if t.message]
        item.setToolTip(0, STATUS_LOOK.get(look.status, ("", look.status))[1]
                        + ("\n" + "\n".join(messages) if messages else ""))
        current = self.current_step()
        if current is not None and current.number == look.number:
            self._show_step()

    def _show_step(self) -> None:
        step = self.current_step()
        if step is None:
            self.step_title.setText("Open or start a run." if not self.steps else "Choose a step.")
            self.step_where.clear()
            self.task_states.clear()
            self.command.clear()
        else:
            self.step_title.setText(f"{step.number}  {step.text}")
            self.step_where.setText(where_text(step, self.session, self.steps))
            lines = []
            for t in self.session.look(step.number).tasks:
                look = STATUS_LOOK.get(t.status, ("", t.status))[1]
                lines.append(f"{'By hand' if t.manual else t.host}: {look}"
                             + (f" ({t.seconds:.1f} s)" if t.seconds is not None else "")
                             + (f" - {t.message}" if t.message else ""))
            self.task_states.setText("\n".join(lines))
            self.command.setPlainText("\n\n".join(
                (f"# on {t.host} ({t.shell})\n" if len(step.tasks) > 1 else "") + t.script
                + (f"\n# check: {t.verify}" if t.verify else "") for t in step.tasks if not t.manual)
                or step_table_text(step) or "(no command: a person does this step and ticks it off)")
        self._update_buttons()

    # ------------------------------------------------------------ the session's events

    def _on_event(self, event: E.Event) -> None:
        session = self.controller.session
        if session is None or (event.run_id and session.run_id and event.run_id != session.run_id):
            return          # a run this window no longer shows
        if isinstance(event, (E.StepStarted, E.StepEnded, E.RunEnded)):
            self._history_stale = True        # redrawn by the ticker: a step can start many times a second
        if isinstance(event, (E.StepStarted, E.StepEnded)):
            self._draw_step(event.look)
        if isinstance(event, E.StepEnded):
            if event.status not in E.SUCCEEDED:
                self._say(f"Step {event.step} on {event.host}: {STATUS_LOOK.get(event.status, ('', event.status))[1]}"
                          + (f" - {event.message}" if event.message else ""), error=True)
        elif isinstance(event, E.RunWarning):
            if event.fatal:
                self._say(event.text, error=True)
            else:
                self.run_warnings.append(("Warning: " if event.kind == E.ACCESS else "Note: ") + event.text)
                self._show_warnings()
        elif isinstance(event, E.PreflightChecked):
            self._show_preflight(event.checks, event.note)
        elif isinstance(event, E.MetricsProblem) and self.dashboard is not None:
            self.dashboard.add_problem(event.text)
        elif isinstance(event, E.Leftover):
            self._show_leftover(event)
        elif isinstance(event, E.RunEnded):
            self._run_ended(event)

    def _show_warnings(self) -> None:
        self.warnings_label.setText("\n".join(self.run_warnings))
        self.warnings_label.setVisible(bool(self.run_warnings))

    def _show_leftover(self, e: E.Leftover) -> None:
        text = leftover_text(e)
        self.output.appendPlainText(text)
        if e.what in ("undecided", "unreachable"):
            self._say(text, error=True)

    def _run_ended(self, e: E.RunEnded) -> None:
        standing = e.standing
        self._update_progress(standing)
        if e.completed_now:
            self._say(f"Run {e.run_id} complete: every step succeeded or was ticked off.")
            self.refresh_history()
            return
        if not self.controller.busy or standing.next_step is None:
            return          # a step ticked off: the view moves on by itself
        self._select(standing.next_step)
        if standing.failed:
            why = "; ".join(f"{t.host}: {t.message or t.status}" for t in standing.problems)
            status = STATUS_LOOK.get(standing.next_status, ("", standing.next_status))[1]
            self._say(f"Stopped at step {standing.next_step} ({status}) - {why}. Fix the cause, then Retry (or Skip).",
                      error=True)
        else:       # the message said "Running 7.64 …" until the next click
            self._say(f"Step {standing.next_step} is " + ("done by hand: do it, then Mark done (or Skip)."
                      if standing.waiting_manual else "next: Run step starts it (Run all goes on from it)."))

    def _show_output(self, batch: list) -> None:
        current = self.session.run_id if self.session else None
        batch = [o for o in batch if o.run_id == current]
        if not batch:
            return
        self.output.add(batch)
        self.last_output_delay_s = time.monotonic() - batch[-1].received

    def _busy_changed(self, busy: bool) -> None:
        now = time.monotonic()
        if busy and self._busy_since is None:
            self._busy_since = now
        elif not busy and self._busy_since is not None:
            self._driven_s += now - self._busy_since
            self._busy_since = None
        self._update_buttons()
        if busy or self.session is None:
            self._update_open_run_entry()
            return
        self._redraw_statuses()       # once the worker is done, every step as the journal has it
        current = self.session.run_id
        self.refresh_history()
        index = self.history.findData(current)
        if index >= 0:
            self.history.setCurrentIndex(index)
        self.runs_changed.emit()

    def _update_buttons(self) -> None:
        session = self.session
        busy = self.controller.busy
        step = self.current_step()
        status = self.step_status(step.number) if step is not None else E.PENDING
        can_act = session is not None and step is not None and not busy
        # an interrupted step is run the one way every path takes: adopted if its job still runs
        self.run_step_button.setEnabled(can_act and not step.manual and status in (E.PENDING, E.INTERRUPTED))
        self.retry_button.setEnabled(can_act and not step.manual and status in E.PROBLEMS)
        self.skip_button.setEnabled(can_act and status not in E.SUCCEEDED)
        self.done_button.setEnabled(can_act and step.manual and status not in E.SUCCEEDED)
        self.run_all_button.setEnabled(session is not None and not busy and session.first_unfinished() is not None)
        self.abort_button.setEnabled(busy)
        self.new_button.setEnabled(not busy)
        self.engine_choice.setEnabled(not busy)
        self.open_button.setEnabled(not busy and self.history.count() > 0)
        self.preflight_button.setEnabled(session is not None and not busy)

    def _update_progress(self, standing: E.RunStanding | None = None) -> None:
        if self._history_stale:
            self._update_open_run_entry()
        session = self.session
        if standing is None:
            standing = session.standing() if session is not None else None
        if standing is None or not standing.steps_total:
            self.progress.setValue(0)
            self.progress_text.clear()
            return
        self.progress.setMaximum(standing.steps_total)
        self.progress.setValue(standing.steps_succeeded)
        elapsed = (self._recorded_s or 0.0) + self._driven_s + (
            time.monotonic() - self._busy_since if self._busy_since is not None else 0.0)
        left = ""
        if session is not None and standing.automated_left:
            from app.run.standing import estimate_left
            seconds, unknown = estimate_left(session.steps, session.task_state)
            if seconds and not unknown:
                left = f" · about {_clock(seconds)} left"
            elif seconds:
                left = f" · at least {_clock(seconds)} left"
        self.progress_text.setText(f"{standing.steps_succeeded}/{standing.steps_total} steps · "
                                   f"{_clock(elapsed)} elapsed{left}")

    # -------------------------------------------------------------- actions

    def _writer(self):
        """The run shown, written to from the bed open now; JournalRefused when it is not that bed's."""
        session = self.session
        writer = session.writer(self.open_bed.sha256())
        session.engine.journal.check(writer)
        return writer

    def _run(self, steps, rerun: bool = False) -> None:
        steps = [s for s in steps if s is not None]
        if not steps or self.session is None:
            return
        try:
            writer = self._writer()
        except JournalRefused as exc:
            self._say(str(exc), error=True)
            return
        if not confirm_disk_writes(self, steps, self.session):
            return
        if self.controller.run_steps(steps, rerun=rerun, writer=writer):
            self._say(running_text(steps, self.step_status))
            self._update_buttons()

    def run_all(self) -> None:
        first = self.session.first_unfinished() if self.session else None
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
        try:
            standing = self.session.mark(step, status, mark_note(step, self.step_status, "in the run wizard"),
                                         writer=self._writer())
        except JournalRefused as exc:
            self._say(str(exc), error=True)
            return
        self._step_changed(step.number)
        self._update_progress()
        if standing.next_step is not None:      # (the last one: the run says it is complete)
            self._select(standing.next_step)
            self._say(f"Step {step.number} {'skipped' if status == E.SKIPPED else 'ticked off'}.")
        self._update_buttons()

    def _show_preflight(self, checks, note: str = "") -> None:
        if not checks:
            self.output.appendPlainText(f"Pre-flight check: {note}")
            self._say(f"Pre-flight: nothing to check - {note.splitlines()[0]}", error=not self.document.bed.access)
            return
        bad = [c for c in checks if not c.ok]
        lines = [f"{c.host}: {'ok' if c.ok else 'PROBLEM'} - {c.message}" for c in checks]
        self.output.appendPlainText("Pre-flight check:\n" + "\n".join(lines))
        self._say(f"Pre-flight: {len(checks) - len(bad)} of {len(checks)} host(s) ready"
                  + (f"; fix {', '.join(c.host for c in bad)} before running." if bad else "."), error=bool(bad))

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b3261e;" if error else "")
        self.message.setText(text)

    def _answer(self, question: E.Question, reply) -> None:
        answer_question(self, question, reply)
