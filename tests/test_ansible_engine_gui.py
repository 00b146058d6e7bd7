"""A run driven through Ansible, shown in the Run tab and its live metrics tab: the same run
session and events as the built-in engine, so the view needs nothing of its own.  Real
ansible-playbook (through ansible-runner) on this machine (Ansible's local connection)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.document import Document
from app.run import journal as J
from tests.run_beds import TEMPLATES, write_bed, write_fio_bed
from widgets.run_wizard import RunWizard

pytestmark = pytest.mark.skipif(not Path(sys.executable).with_name("ansible-playbook").exists(),
                                reason="ansible-core is not installed (pip install -e .[test])")


def _wizard(qtbot, bed: Path, templates: list[str]) -> RunWizard:
    doc = Document()
    doc.open(bed)
    w = RunWizard(doc)
    w.extra_templates = templates
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    return w


def _ansible_run(bed: Path) -> J.RunInfo:
    """A run started with `testbed-studio run --engine ansible` that got no further than its start."""
    return J.new_run(str(bed.resolve()), "", engine="ansible")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_run_tab_shows_an_ansible_run_step_by_step_and_resumes_it_with_ansible(qtbot, tmp_path):
    bed = write_bed(tmp_path / "bed.yaml", [{"id": f"lin{i}", "transport": "local"} for i in (1, 2)],
                    mark_dir=tmp_path / "marks")
    info = _ansible_run(bed)
    w = _wizard(qtbot, bed, [TEMPLATES])
    try:
        started: list[str] = []
        w.controller.event.connect(lambda e: started.append(e.step) if type(e).__name__ == "StepStarted" else None)
        w.refresh_history()
        w.resume(info.id)
        assert w.session is not None and type(w.session.engine).__name__ == "AnsibleEngine"
        w.run_all_button.click()
        qtbot.waitUntil(lambda: not w.controller.busy and not w.abort_button.isEnabled(), timeout=240000)
        hosts_steps = [s for s in w.steps if s.section == "hosts"]
        assert all(w.step_status(s.number) == J.OK for s in hosts_steps), [
            (s.number, w.step_status(s.number), w.session.task_state(s.tasks[0]).message) for s in hosts_steps]
        # the view followed each step as Ansible reported it, not only the end of the run
        assert {s.number for s in hosts_steps} <= set(started)
        qtbot.waitUntil(lambda: "host=lin2" in w.output.toPlainText(), timeout=5000)
        records = J.read_records(info.dir)[0]
        assert all(r.get("engine") == "ansible" for r in records if r["kind"] == "start")
        assert (tmp_path / "marks" / "lin1.visits").read_text() == "visit\n"
    finally:
        w.shutdown()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_run_started_in_the_run_tab_with_ansible_feeds_the_live_metrics_tab_and_the_run_results(qtbot, tmp_path):
    from app.metrics import sample as M
    from app.metrics.results import load_samples
    bed = write_fio_bed(tmp_path / "fio.yaml", "c1", tmp_path / "c1.dat", access={"transport": "local"})
    w = _wizard(qtbot, bed, [])
    try:
        w.engine_choice.setCurrentIndex(w.engine_choice.findData("ansible"))
        w.new_button.click()
        assert w.session is not None and type(w.session.engine).__name__ == "AnsibleEngine"
        info = w.session.info
        assert info.engine == "ansible"
        load = next(s for s in w.steps if s.template.endswith("run.yaml#load"))
        w._run([load])
        qtbot.waitUntil(lambda: not w.controller.busy, timeout=240000)
        assert w.step_status(load.number) == J.OK, w.session.task_state(load.tasks[0]).message
        qtbot.waitUntil(lambda: ("c1", M.IOPS) in w.dashboard._curves, timeout=5000)
        assert len(w.dashboard._curves[("c1", M.IOPS)].getData()[1]) >= 3
        recorded = load_samples(info.dir)
        assert sum(1 for s in recorded if s.source == "c1" and s.metric == M.IOPS) >= 3
        # the same result file the built-in engine keeps: fio's own report, attached to the step and its run
        from app.metrics.run_results import attached
        (kept,) = attached(info.dir)
        assert (kept.tool, kept.host, kept.step, kept.how) == ("fio", "c1", load.number, "fetched")
        assert kept.position.get("repetition") == "1" and kept.figures["iops"] > 0
        # the report this run's fio left where the step ran (the local host's own folder), not a file of the
        # same name another run left in the login's home (~/oltp.json: missing on a fresh machine)
        from app.remote.local import LocalTransport
        host = LocalTransport("c1")
        host.open()
        assert (info.dir / kept.stored).read_bytes() == (host.workdir / "oltp.json").read_bytes()
        # opened again while the built-in engine is chosen for new runs: the run keeps its engine
        w.engine_choice.setCurrentIndex(w.engine_choice.findData("builtin"))
        w.resume(info.id)
        assert type(w.session.engine).__name__ == "AnsibleEngine"
        assert J.open_run(info.id).engine == "ansible"
    finally:
        w.shutdown()
