"""The Run tab says where in the test the selected step is (issue 29): phase, level, scenario,
run N of M, above where it runs."""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from app.document import Document
from tests.run_beds import write_fio_bed
from widgets.run_wizard import RunWizard


def test_the_selected_steps_place_in_the_test_is_shown(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    bed = write_fio_bed(tmp_path / "fio.yaml", "lc1", tmp_path / "lc1.dat", access={"transport": "local"})
    doc = yaml.safe_load(bed.read_text())
    doc["run_plan"]["repetitions"] = 3
    bed.write_text(yaml.safe_dump(doc, sort_keys=False))
    document = Document()
    document.open(bed)
    w = RunWizard(document)
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    try:
        w.new_run()
        run = [s for s in w.steps if s.section == "run"]
        second = next(s for s in run if s.tasks[0].position.get("repetition") == "2" and not s.manual)
        w._select(second.number)
        qtbot.waitUntil(lambda: w.step_where.text().startswith("In the test:"), timeout=5000)
        lines = w.step_where.text().splitlines()
        assert lines[0] == "In the test: phase 1 of 1; run 2 of 3"
        assert lines[1].startswith("Runs on lc1 via")
        setup = next(s for s in w.steps if s.section != "run")
        w._select(setup.number)
        assert not w.step_where.text().startswith("In the test:")       # outside the run section: no place
        w._select(second.number)
        qtbot.wait(200)          # the layout follows the new text on the next pass
        if os.environ.get("TESTBED_STUDIO_SCREENSHOTS"):
            out = Path(__file__).resolve().parent.parent / "build" / "run-tab-place.png"
            w.grab().save(str(out))
    finally:
        w.shutdown()
