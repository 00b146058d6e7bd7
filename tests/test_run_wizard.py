"""The run wizard driven like a person would: real engine, real shell commands on this
machine (the local transport), real widgets."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from app.document import Document
from app.run import journal as J
from tests.run_beds import TEMPLATES, write_bed, write_fio_bed
from widgets.run_wizard import RunWizard

LOCAL = [{"id": f"lin{i}", "transport": "local"} for i in (1, 2)]


@pytest.fixture
def wizard_for(qtbot, tmp_path):
    made = []

    def make(hosts=LOCAL, **bed_options) -> RunWizard:
        bed_options.setdefault("mark_dir", tmp_path / "marks")
        path = write_bed(tmp_path / "bed.yaml", hosts, **bed_options)
        doc = Document()
        doc.open(path)
        w = RunWizard(doc)
        w.extra_templates = [TEMPLATES]
        qtbot.addWidget(w)
        w.resize(1200, 760)
        w.show()
        made.append(w)
        return w

    yield make
    for w in made:
        w.shutdown()


def _hosts_steps(w):
    return [s for s in w.steps if s.section == "hosts"]


def _wait_idle(qtbot, w, timeout=20000):
    # The worker thread ends before the GUI thread has handled its last queued signals; a
    # person can only click once the window shows the run as over (Abort greyed out).
    qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=timeout)


def test_run_all_turns_every_step_green_and_shows_the_output(qtbot, wizard_for):
    w = wizard_for()
    w.new_run()
    assert w.run_all_button.isEnabled() and not w.abort_button.isEnabled()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    qtbot.waitUntil(lambda: "host=lin2" in w.output.toPlainText(), timeout=5000)
    assert all(w.step_status(s.number) == J.OK for s in _hosts_steps(w))
    assert w.progress.value() == w.progress.maximum() == len(w.steps) or w.progress.value() >= len(_hosts_steps(w))
    assert "elapsed" in w.progress_text.text()


def test_a_failed_step_shows_its_message_and_retry_runs_it_again(qtbot, wizard_for, tmp_path):
    (tmp_path / "marks").mkdir()
    (tmp_path / "marks" / "lin1.fail").touch()
    w = wizard_for()
    w.new_run()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    work = next(s for s in _hosts_steps(w) if s.template.endswith("#work") and s.target == "lin1")
    assert w.step_status(work.number) == J.FAILED
    assert "exit status 1" in w.message.text() and work.number in w.message.text()
    w._select(work.number)
    assert w.retry_button.isEnabled() and not w.run_step_button.isEnabled()
    (tmp_path / "marks" / "lin1.fail").unlink()
    w.retry_button.click()
    _wait_idle(qtbot, w)
    assert w.step_status(work.number) == J.OK
    assert w.session.task_state(work.tasks[0]).attempts == 2


def test_a_manual_step_is_ticked_off_or_skipped_by_the_user(qtbot, wizard_for):
    w = wizard_for(hosts=LOCAL[:1], manual_check=True)
    w.new_run()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    cabling = next(s for s in _hosts_steps(w) if s.template.endswith("#cabling"))
    w.run_all_button.click()          # stops at the manual step and selects it
    assert w.current_step().number == cabling.number
    assert w.done_button.isEnabled() and not w.run_step_button.isEnabled()
    assert "ticks it off" in w.command.toPlainText()
    w.done_button.click()
    assert w.step_status(cabling.number) == J.DONE


def test_abort_stops_a_long_step_while_the_window_stays_responsive(qtbot, wizard_for):
    w = wizard_for(hosts=LOCAL[:1], work_s=60)
    w.new_run()
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    w.run_all_button.click()
    work = next(s for s in _hosts_steps(w) if s.template.endswith("#work"))
    qtbot.waitUntil(lambda: w.step_status(work.number) == J.RUNNING, timeout=10000)
    qtbot.wait(400)
    assert w.abort_button.isEnabled()
    w.abort_button.click()
    _wait_idle(qtbot, w, timeout=10000)
    timer.stop()
    assert w.step_status(work.number) == J.CANCELLED
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert gaps and max(gaps) < 0.5        # the event loop never stalled while the step ran


def test_an_interrupted_run_is_offered_for_resume_and_continues_where_it_stopped(qtbot, wizard_for, tmp_path):
    w = wizard_for()
    bed_path = Path(w.document.path).resolve()
    info = J.new_run(str(bed_path), "")
    hello = next(s for s in w.plan() if s.template.endswith("#hello") and s.target == "lin1")
    with J.Journal(info.dir) as j:                   # the application died during this step
        j.record("start", step=hello.number, host="lin1")
    w.refresh_history()
    assert w.banner.isVisible() and "did not finish" in w.banner_text.text()
    w.resume_button.click()
    assert not w.banner.isVisible()
    assert w.current_step().number == hello.number
    assert w.step_status(hello.number) == J.INTERRUPTED
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    assert all(w.step_status(s.number) == J.OK for s in _hosts_steps(w))


def test_output_reaches_the_view_quickly(qtbot, wizard_for, tmp_path):
    tdir = tmp_path / "tpl" / "linux"
    tdir.mkdir(parents=True)
    (tdir / "hosts.yaml").write_text(
        "section: hosts\nsteps:\n  - id: tick\n    foreach: server\n    text: Tick on {host.id}.\n"
        "    automation:\n      - shell: bash\n"
        "        script: for i in 1 2 3 4 5 6 7 8 9 10; do echo tick; sleep 0.1; done\n")
    (tmp_path / "tpl" / "common").mkdir()
    (tmp_path / "tpl" / "common" / "hosts.yaml").write_text("section: hosts\nsteps: []\n")
    w = wizard_for(hosts=LOCAL[:1])
    w.extra_templates = [str(tmp_path / "tpl")]
    w.new_run()
    delays = []
    w.controller.output_lines.connect(lambda batch: delays.extend(time.monotonic() - b.received for b in batch))
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    qtbot.wait(100)
    assert len(delays) == 10
    print(f"output line -> view: median {sorted(delays)[5] * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms")
    assert max(delays) < 1.0      # the target is 100 ms (batches every 40 ms); generous here, a busy CI is slow


def test_the_wizard_screenshot(qtbot, wizard_for, tmp_path):
    w = wizard_for()
    w.new_run()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    qtbot.wait(100)
    out = Path(__file__).parent.parent / "build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    assert w.grab().save(str(out / "run_wizard.png"))


def test_a_fio_load_step_feeds_the_live_metrics_tab_and_is_recorded_with_the_run(qtbot, tmp_path):
    from app.metrics import sample as M
    from app.metrics.results import load_samples
    doc = Document()
    bed = write_fio_bed(tmp_path / "fio.yaml", "c1", tmp_path / "c1.dat", access={"transport": "local"})
    doc.open(bed)
    w = RunWizard(doc)
    qtbot.addWidget(w)
    try:
        w.new_run()
        load = next(s for s in w.steps if s.template.endswith("run.yaml#load"))
        w._run([load])
        qtbot.waitUntil(lambda: not w.controller.busy, timeout=30000)
        assert w.step_status(load.number) == J.OK, w.session.task_state(load.tasks[0]).message
        qtbot.waitUntil(lambda: ("c1", M.IOPS) in w.dashboard._curves, timeout=3000)
        assert len(w.dashboard._curves[("c1", M.IOPS)].getData()[1]) >= 3
        assert any(th.value == 20 for th in w.dashboard.thresholds)
        recorded = load_samples(w.session.info.dir)
        assert sum(1 for s in recorded if s.source == "c1" and s.metric == M.IOPS) >= 3
    finally:
        w.shutdown()


def test_resuming_says_the_journal_had_a_torn_line_and_the_bed_changed_since_the_run_began(qtbot, wizard_for):
    import hashlib
    w = wizard_for()
    bed_path = Path(w.document.path).resolve()
    info = J.new_run(str(bed_path), hashlib.sha256(bed_path.read_bytes()).hexdigest())
    hello = next(s for s in w.plan() if s.template.endswith("#hello") and s.target == "lin1")
    with J.Journal(info.dir) as j:
        j.record("start", step=hello.number, host="lin1")
        j.record("end", step=hello.number, host="lin1", status="ok", exit_code=0)
    with open(info.dir / "journal.jsonl", "ab") as fh:
        fh.write(b'{"kind":"start","step":"1.2","ho')            # the machine died mid-write
    with open(bed_path, "a", encoding="utf-8") as fh:
        fh.write("# edited after the run began\n")
    assert not w.warnings_label.isVisible()
    w.resume(info.id)
    assert w.session is not None and w.session.run_id == info.id
    assert w.warnings_label.isVisible()
    text = w.warnings_label.text()
    assert "project file changed since this run started" in text
    assert "journal.jsonl:3: an incomplete record" in text
    assert w.step_status(hello.number) == J.OK          # what the journal holds is still used
    w.new_run()                                         # the next run starts with nothing to say
    assert not w.warnings_label.isVisible()


def test_the_run_tab_and_the_command_line_journal_a_run_of_one_bed_alike(qtbot, wizard_for, tmp_path):
    import os
    import subprocess
    import sys
    w = wizard_for()
    w.new_run()
    gui_dir = w.session.info.dir
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    manual = w.current_step()
    assert manual is not None and manual.manual
    w.skip_button.click()
    assert "complete" in w.message.text()
    w.shutdown()

    runs = tmp_path / "runs"
    r = subprocess.run([sys.executable, "-m", "app.cli", "run", w.document.path, "--runs-dir", str(runs),
                        "--templates", TEMPLATES, "--skip-manual", "--no-preflight"], capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL, env=os.environ.copy())
    assert r.returncode == 0, r.stdout + r.stderr
    (cli_dir,) = runs.iterdir()

    def lanes(run_dir):
        records, problems = J.read_records(run_dir)
        assert not problems
        by_host: dict[str, list] = {}
        for x in records:
            if x["kind"] in ("start", "end", "mark"):
                by_host.setdefault(x["host"], []).append((x["kind"], x["step"], x.get("status")))
        ending = [(x["kind"], x.get("event")) for x in records if x["kind"] in ("run", "session-end")]
        return by_host, ending

    gui, cli = lanes(gui_dir), lanes(cli_dir)
    assert gui == cli
    assert sorted(gui[0]) == ["-", "lin1", "lin2"]
    # both said where the run waited, then that it was complete
    assert gui[1] == [("run", "waiting"), ("run", "complete"), ("session-end", None)]
    assert ("mark", manual.number, J.SKIPPED) in gui[0]["-"]


def test_a_step_event_arriving_after_its_run_was_closed_changes_nothing(qtbot, wizard_for):
    from app.run import events as E
    w = wizard_for(hosts=LOCAL[:1])
    seen: list = []
    w.controller.event.connect(seen.append)
    w.new_run()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    ended = [e for e in seen if isinstance(e, E.StepEnded)]
    assert ended and all(e.status == J.OK for e in ended)
    w.controller.shutdown()                 # the run is closed; its worker's signals may still be queued
    for e in ended:
        w.controller.event.emit(e)          # a late one must not reach into the closed run
    w.new_run()                             # and one of the run before must not paint the new one
    for e in ended:
        w.controller.event.emit(e)
    assert all(w.step_status(e.step) == J.PENDING for e in ended)
    assert all(w._items[e.step].toolTip(0).startswith("not run yet") for e in ended)


def test_a_run_is_made_on_a_worker_while_the_window_goes_on_and_is_of_the_saved_file(qtbot, wizard_for,
                                                                                   monkeypatch):
    """The procedure of a big bed takes seconds to generate: a new run makes it on a worker while the
    window repaints (issue 24: no action freezes the window).  The run is of the saved file: an edit
    made meanwhile is not in it (the run records the file it ran)."""
    import threading

    import topology.methodology as methodology
    from topology.edits import SetField
    w = wizard_for()
    real = methodology.generate
    made_on: list[str] = []

    def slow(bed, *args, **kwargs):
        made_on.append(threading.current_thread().name)
        time.sleep(1.0)
        return real(bed, *args, **kwargs)
    monkeypatch.setattr(methodology, "generate", slow)
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()) if w.controller.busy else None)
    timer.start(20)
    edited = []

    def edit_once() -> None:
        if not edited and w.controller.busy:
            edited.append(True)
            server = w.document.bed.servers[0]
            w.document.apply(SetField(server, "os", "Debian 12 (edited)"))
    editor = QTimer()
    editor.timeout.connect(edit_once)
    editor.start(50)
    w.new_run()
    timer.stop()
    editor.stop()
    assert w.session is not None and made_on == ["run-session"] and edited
    assert len(ticks) >= 3, "the window's event loop stood still while the run was made"
    assert w.session.bed.servers[0].os == "Debian 12"
    w.document.undo_stack.setClean()
