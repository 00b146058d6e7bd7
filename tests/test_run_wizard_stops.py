"""The Run tab's Run all and its clock, driven like a person would (real engine, local hosts,
real widgets): Run all stops at the step a person must do and says so; the elapsed time stops
with the run and a finished run opened again is not counted on."""
from __future__ import annotations

import re

from app.run import journal as J
from tests.test_run_wizard import LOCAL, _hosts_steps, _wait_idle, wizard_for  # noqa: F401  (fixture)


def _elapsed(w) -> str:
    found = re.search(r"(\d+:\d\d:\d\d) elapsed", w.progress_text.text())
    assert found, w.progress_text.text()
    return found.group(1)


def test_run_all_stops_at_the_step_a_person_does_and_says_so(qtbot, wizard_for):
    w = wizard_for(hosts=LOCAL, manual_check=True)
    w.new_run()
    w.run_all_button.click()
    _wait_idle(qtbot, w)
    cabling = [s for s in _hosts_steps(w) if s.template.endswith("#cabling")]
    first_manual = cabling[0]
    qtbot.waitUntil(lambda: "done by hand" in w.message.text(), timeout=5000)
    assert w.current_step().number == first_manual.number and first_manual.number in w.message.text()
    assert w.done_button.isEnabled()
    after = w.steps[w.steps.index(first_manual) + 1:]
    # nothing past the step the person must do has run on that host
    assert all(w.step_status(s.number) == J.PENDING for s in after if s.target == first_manual.target)


def test_the_elapsed_time_stops_with_the_run_and_a_finished_run_reopened_is_not_counted_on(qtbot, wizard_for):
    w = wizard_for(hosts=LOCAL[:1])
    w.new_run()
    while (first := w.session.first_unfinished()) is not None:
        if first.manual:
            w._select(first.number)
            w.skip_button.click()           # the bed's steps done by hand: not this test's matter
        else:
            w.run_all_button.click()
            _wait_idle(qtbot, w)
    assert w.session.standing().complete
    w._update_progress()
    stopped = _elapsed(w)
    qtbot.wait(2200)
    w._update_progress()
    assert _elapsed(w) == stopped
    run_id = w.session.run_id

    w.detach()
    w.resume(run_id)           # Open in the run list: the finished run shown again
    assert w.session is not None and w.session.run_id == run_id
    w._update_progress()
    shown = _elapsed(w)
    qtbot.wait(2200)
    w._update_progress()
    assert _elapsed(w) == shown


def test_the_wait_step_says_its_duration_as_a_person_would(tmp_path):
    """'Wait until these loads have finished (about 1 minutes)' was the step of every one-minute run."""
    from tests.run_beds import write_fio_bed
    from topology.configurations import procedures
    from topology.fileformat import load
    from topology.methodology import to_markdown
    said = {}
    for minutes in (0.5, 1, 2, 2.5):
        bed = load(write_fio_bed(tmp_path / "bed.yaml", "h1", tmp_path / "data", {"transport": "local"},
                                 minutes=minutes))
        text = to_markdown(procedures(bed, None)[0][1])
        said[minutes] = re.search(r"Wait until these loads have finished \(about ([^)]*)\)", text).group(1)
    assert said == {0.5: "30 seconds", 1: "1 minute", 2: "2 minutes", 2.5: "2.5 minutes"}
