"""Starting and stopping a run does not stall the window (issue 24; bench/run_tab.py times it).

Where a run stands is worked out once per change of its tasks, not once per question (on the
largest example each answer walks 1,500 steps, and the Run tab asked 7-10 times when a run started
or stopped, on the GUI thread).  Counted, not timed: `stand` (app/run/standing.py) is spied on, and
the answers are checked against a fresh computation so a memo can never be stale.  The live plots
are made at idle before the first run, not when it starts."""
from __future__ import annotations

import pytest

import app.run.session as session_module
from app.run import journal as J
from app.run.session import RunSession
from app.run.standing import stand, step_look
from tests.run_beds import TEMPLATES, write_bed, write_fio_bed

LOCAL = [{"id": f"lin{i}", "transport": "local"} for i in (1, 2)]


@pytest.fixture
def stand_calls(monkeypatch):
    calls: list[str] = []
    real = session_module.stand

    def counted(run_id, *args, **kw):
        if kw.get("steps") is not None:     # a live run's standing (a listing from a journal is not memoised)
            calls.append(run_id)
        return real(run_id, *args, **kw)
    monkeypatch.setattr(session_module, "stand", counted)
    return calls


def _fresh(session: RunSession):
    engine = session.engine
    return stand(engine.info.id, [], steps=engine.steps, task_state=engine.task_state,
                 journal_problems=engine.journal_problems, completed=session._completed)


def test_the_standing_is_worked_out_again_only_when_a_task_changed(tmp_path, stand_calls):
    path = write_bed(tmp_path / "bed.yaml", LOCAL, mark_dir=tmp_path / "marks", manual_check=True)
    session = RunSession.from_file(path, templates=[TEMPLATES], runs_dir=tmp_path / "runs")
    try:
        assert session.start_new()
        # the questions a view asks when a run opens: one computation answers them all
        for _ in range(10):
            session.standing()
            session.first_unfinished()
            for step in session.steps:
                session.look(step.number)
        assert len(stand_calls) == 1

        automated = [s for s in session.steps if s.section == "hosts" and not s.manual]
        session.run(automated)           # real shell commands on this machine (the local transport)
        after_run = len(stand_calls)
        standing = session.standing()
        assert standing == _fresh(session) and standing.tasks_done >= len(automated)
        for step in session.steps:       # each step's look follows the engine, none left stale
            assert session.look(step.number) == step_look(step, session.engine.task_state)
        for _ in range(10):
            session.standing()
            session.first_unfinished()
        settled = len(stand_calls)
        assert settled == after_run          # the run's end worked it out; asking again does not

        # a person ticks off the manual step: worked out once more, and it shows
        manual = next(s for s in session.steps if s.manual)
        assert session.look(manual.number).status == J.PENDING
        session.mark(manual, J.DONE, "by the test")
        assert session.look(manual.number).status == J.DONE
        assert session.standing() == _fresh(session)
        marked = len(stand_calls)
        assert marked == settled + 1
        for _ in range(10):
            session.standing()
        assert len(stand_calls) == marked
    finally:
        session.close()


def test_the_run_tab_asks_once_when_a_run_stops_and_redraws_only_steps_that_changed(qtbot, tmp_path,
                                                                                    stand_calls):
    from app.document import Document
    from widgets.run_wizard import RunWizard
    path = write_bed(tmp_path / "bed.yaml", LOCAL, mark_dir=tmp_path / "marks")
    doc = Document()
    doc.open(path)
    w = RunWizard(doc)
    w.extra_templates = [TEMPLATES]
    qtbot.addWidget(w)
    try:
        w.new_run()
        drawn: list[str] = []
        draw = w._draw_step
        w._draw_step = lambda look: (drawn.append(look.number), draw(look))[1]
        work = next(s for s in w.steps if s.template.endswith("#work") and s.target == "lin1")
        before = len(stand_calls)
        w._run([work])
        qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=20000)
        assert w.step_status(work.number) == J.OK
        # the run ended once (the worker's RunEnded) and the tab's redraw, buttons, progress and
        # run list asked again: one computation for the change, none for the questions
        assert len(stand_calls) - before <= 2
        assert set(drawn) == {work.number}          # one step changed: the other lines are left alone
        quiet = len(stand_calls)
        drawn.clear()
        w._busy_changed(False)                      # nothing changed since: nothing worked out or drawn
        w._update_progress()
        w.refresh_history()
        assert len(stand_calls) == quiet and drawn == []
    finally:
        w.shutdown()


def test_the_live_plots_are_made_at_idle_and_a_run_start_reuses_them(qtbot, tmp_path, monkeypatch):
    import widgets.run_wizard as run_wizard
    from app.document import Document
    monkeypatch.setattr(run_wizard, "WARM_UP_MS", 50)
    path = write_fio_bed(tmp_path / "bed.yaml", "lin1", tmp_path / "fio.dat", {"transport": "local"})
    doc = Document()
    doc.open(path)
    w = run_wizard.RunWizard(doc)
    qtbot.addWidget(w)
    try:
        assert w.dashboard is None
        # before any run: the dashboard with the bed's criterion line (read latency < 20 ms)
        qtbot.waitUntil(lambda: w.dashboard is not None and bool(w.dashboard.thresholds), timeout=10000)
        lines = dict(w.dashboard._lines)
        assert [th.value for th in lines] == [20.0]
        w.new_run()
        assert w.session is not None
        assert w.dashboard._lines == lines and all(w.dashboard._lines[th] is line for th, line in lines.items())
    finally:
        w.shutdown()
