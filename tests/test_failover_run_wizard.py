"""The failover-under-load part of a run as a person follows it in the Run tab, next to the printed
procedure: a matrix that fails fabric A, gives everything back, fails fabric B and gives it back again
(the h37u bed: path-a-down, all-paths, path-b-down, all-paths)."""
from __future__ import annotations

import re
from pathlib import Path

from app.run.plan import run_steps
from app.run.positions import place_text
from tests.test_path_failover_bed import bed
from topology import methodology as M
from topology.fileformat import loads

MATRIX = """scenarios:
  - {id: all-paths, reference: true}
  - {id: path-a-down, failed: ['lnx1:san0', 'lnx2:san0'], fail_after_minutes: 0.05, restore_after_minutes: 0.15}
  - {id: path-b-down, failed: ['swB:1', 'swB:2'], fail_after_minutes: 0.05}
test_matrix:
  - {id: baseline, variable: queue depth, levels: [1, 8], scenarios: [all-paths], workloads: [oltp-1]}
  - {id: failover, variable: failed fabric, scenarios: [path-a-down, all-paths, path-b-down, all-paths],
     workloads: [oltp-1]}
run_plan: {repetitions: 2}
"""


def _methodology():
    return M.generate(loads(bed() + MATRIX, "under-load.yaml"))


def test_the_run_tab_numbers_each_phase_as_the_printed_procedure_does():
    """The second all-paths phase of the failover matrix is 'Phase 6 of 6' on paper; the Run tab said
    'phase 4 of 5' for it (and for phase 4), keying phases by (matrix entry, scenario, level) alone."""
    meth = _methodology()
    printed = {s.number: s.heading for s in meth.steps()}
    steps = run_steps(meth, {"lnx1": "local", "lnx2": "local"})
    checked = set()
    for step in steps:
        said = place_text(step, steps)
        heading = re.match(r"Phase (\d+) of (\d+)", printed[step.number])
        if not said or heading is None:
            continue
        assert f"phase {heading[1]} of {heading[2]}" in said, (step.number, printed[step.number], said)
        run = re.search(r"run (\d+) of (\d+)", printed[step.number])
        if run:
            assert f"run {run[1]} of {run[2]}" in said, (step.number, printed[step.number], said)
        checked.add(heading[1])
    assert checked == {"1", "2", "3", "4", "5", "6"}


def _two_loads_bed(path, tmp_path) -> Path:
    """Two load clients on this machine (the local transport), their fio loads started together."""
    import yaml
    servers = [{"id": h, "role": "load_client", "platform": "linux", "os": "Debian 12"} for h in ("c1", "c2")]
    loads_ = [{"id": f"load-{h}", "tool": "fio", "driver": h, "targets": [h], "order": 1,
               "together_with": [f"load-{o}"],
               "parameters": {"filename": str(tmp_path / f"{h}.dat"), "size": "4m", "duration_minutes": 0.01},
               "access": [{"block_kb": 4, "read_pct": 100, "random_pct": 100}]}
              for h, o in (("c1", "c2"), ("c2", "c1"))]
    doc = {"format_version": 1, "bed": {"name": "two loads together"}, "servers": servers, "workloads": loads_,
           "run_plan": {"repetitions": 1}, "access": [{"host": h, "transport": "local"} for h in ("c1", "c2")]}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_run_step_on_one_load_starts_the_loads_the_procedure_starts_together_and_the_record_says_who_did_what(
        qtbot, tmp_path):
    """A person at the first of two loads clicks Run step (the step before says to start both at the same
    time): the wizard ran that load alone to its end and left the other pending, so the run's two loads
    never ran side by side (7.64 12:09:23-37, 7.65 12:09:49-12:10:02 in the as-run table)."""
    from app.document import Document
    from app.run import journal as J
    from widgets.run_wizard import RunWizard
    doc = Document()
    doc.open(_two_loads_bed(tmp_path / "bed.yaml", tmp_path))
    w = RunWizard(doc)
    qtbot.addWidget(w)
    w.show()
    try:
        w.new_run()
        loads_ = [s for s in w.steps if s.template.endswith("#load")]
        assert [s.target for s in loads_] == ["c1", "c2"]
        for step in w.steps[:w.steps.index(loads_[0])]:        # what comes before: skipped by hand
            w._select(step.number)
            w.skip_button.click()
        w._select(loads_[0].number)
        assert w.run_step_button.isEnabled()
        w.run_step_button.click()
        qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=20000)
        assert [w.step_status(s.number) for s in loads_] == [J.OK, J.OK], w.message.text()
        started = [w.session.task_state(s.tasks[0]).started for s in loads_]
        ended = [w.session.task_state(s.tasks[0]).ended for s in loads_]
        assert max(started) < min(ended), (started, ended)      # they ran side by side
        # the run's record: the results the engine fetched are not "done by hand", and a skipped step
        # says what it asked (the failover's skipped confirmation read "step 7.49 was skipped" alone)
        from app.run.as_run import as_run
        record = as_run(w.session.engine.info.dir)
        copies = [s for s in w.steps if s.fetched_by]
        assert copies and {r.status for r in record.rows if r.step in {s.number for s in copies}} == {
            "done by the engine"}
        first = w.steps[0]
        assert any(d.startswith(f"step {first.number}") and f"({first.text[:40]}" in d and "was skipped" in d
                   for d in record.deviations), record.deviations
    finally:
        w.shutdown()


def test_a_run_whose_first_steps_were_skipped_does_not_count_them_as_done():
    """The Run tab's list of runs read 'waiting for manual step 7.33, 92 task(s) done' after a person skipped
    the 92 steps before the failover; `testbed-studio runs` printed them as 92 ok."""
    from app.run.standing import stand
    records = [{"kind": "mark", "time": "2026-11-29T12:07:00.000+00:00", "step": f"1.{i}", "host": "-",
                "status": "skipped", "message": "in the run wizard"} for i in range(1, 4)]
    records.append({"kind": "mark", "time": "2026-11-29T12:07:01.000+00:00", "step": "1.4", "host": "-",
                    "status": "done", "message": "in the run wizard"})
    records.append({"kind": "run", "time": "2026-11-29T12:07:02.000+00:00", "event": "waiting", "step": "1.5"})
    standing = stand("r1", records)
    assert standing.summary() == "waiting for manual step 1.5, 1 task(s) done, 3 skipped"
    only_skipped = stand("r2", records[:3])
    assert only_skipped.summary() == "3 skipped"


def test_the_run_tab_says_what_a_click_starts_and_what_is_next_not_what_it_said_before(qtbot, tmp_path):
    """Run all from the first load said "Running 7.46, 7.47, 7.48, … 7.136 …" (every step to the end) and
    stopped at 7.48; after Run step on 7.64 the line kept "Running 7.64 …" with nothing running, and after
    Mark done on 7.48 it kept "Step 7.48 is done by hand" under step 7.49."""
    from app.document import Document
    from tests.run_beds import TEMPLATES, write_bed
    from widgets.run_wizard import RunWizard
    doc = Document()
    doc.open(write_bed(tmp_path / "bed.yaml", [{"id": "lin1", "transport": "local"}], mark_dir=tmp_path / "marks",
                       manual_check=True))
    w = RunWizard(doc)
    w.extra_templates = [TEMPLATES]
    qtbot.addWidget(w)
    w.show()
    try:
        w.new_run()
        automated = [s for s in w.steps if not s.manual]
        manual = next(s for s in w.steps if s.manual)
        assert w.steps.index(automated[1]) < w.steps.index(manual), [s.number for s in w.steps]
        w._select(automated[0].number)
        w.run_step_button.click()
        assert w.message.text() == f"Running {automated[0].number} …"
        qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=20000)
        assert w.message.text().startswith(f"Step {automated[1].number} is next"), w.message.text()
        w.run_all_button.click()
        before = [s.number for s in w.steps[1:w.steps.index(manual)]]
        assert w.message.text() == f"Running {', '.join(before)} …; then step {manual.number} is done by hand."
        qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=20000)
        assert w.message.text().startswith(f"Step {manual.number} is done by hand"), w.message.text()
        w.done_button.click()
        assert w.message.text() == f"Step {manual.number} ticked off.", w.message.text()
    finally:
        w.shutdown()


def test_a_step_said_before_the_loads_it_happens_during_says_so_and_its_tick_is_recorded_as_made_before_them():
    """At "While the loads run: 3 seconds after they start, take port san0 of lnx1 out of service" the Run tab
    offered Mark done with nothing to say that the loads come after it; the person ticked off ten such steps,
    and the as-run table read 'swA done by hand 12:08:05' for a port to be taken out 3 s after loads that
    began at 12:08:21."""
    from app.run.plan import mark_note
    from app.run.positions import step_place
    from widgets.run_place import where_text
    steps = run_steps(_methodology(), {"lnx1": "local", "lnx2": "local"})
    run = [s for s in steps if (step_place(s).get("scenario"), step_place(s).get("repetition")) == ("path-a-down", "1")]
    kind = {s.number: s.template.split("#")[1] for s in run}
    take_out = next(s for s in run if kind[s.number] == "part-fail-under-load")
    loads = [s.number for s in run if kind[s.number] == "load"]
    confirm = next(s.number for s in run if kind[s.number] == "confirm-under-load")
    said = where_text(take_out, None, steps)
    assert f"it happens while the loads of step {loads[0]} run, which come after it" in said, said
    assert f"step {confirm} asks, once they have ended, what the checks showed" in said
    for s in run:       # every step the loads' clock governs says so; the loads, the wait and the rest do not
        assert bool(s.during_loads) == ("under-load" in kind[s.number] and kind[s.number] != "confirm-under-load"), s
    assert mark_note(take_out, lambda n: "pending", "in the run wizard") == \
        f"in the run wizard, before the loads it happens during began (step(s) {loads[0]})"
    assert mark_note(take_out, lambda n: "ok", "in the run wizard") == "in the run wizard"     # ticked after them
    wait = next(s for s in run if kind[s.number] == "wait")
    assert mark_note(wait, lambda n: "pending", "in the run wizard") == "in the run wizard"
