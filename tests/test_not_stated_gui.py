"""A bed whose values the source does not state, in the designer: it opens, every page draws it,
and every component's form shows the marker (pytest-qt fails the test on any exception a Qt
callback raises)."""
from __future__ import annotations

import pytest
from not_stated_beds import everything_not_stated
from PySide6.QtWidgets import QApplication

from resources import example_path
from topology.fileformat import dumps, load
from topology.ids import components
from topology.index import BedIndex
from widgets.main_window import MainWindow

EXAMPLES = ("md3000i-hyperv-cluster", "equallogic-ps6110-hyperv")


@pytest.fixture(autouse=True)
def private_state(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_page_and_form_shows_a_bed_of_values_not_stated(qtbot, tmp_path, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text(dumps(everything_not_stated(load(example_path(name)))))
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.open_path(path)
    doc = window.document
    for i in range(window.tabs.count()):          # canvas, storage, placement, methodology, run ...
        window.tabs.setCurrentIndex(i)
        QApplication.processEvents()
    shown = 0
    idx = BedIndex(doc.bed)
    subjects = [c.id for _w, c in components(doc.bed, ("servers", "switches", "arrays", "vms", "networks",
                                                        "clusters"))]
    subjects += [ref for ref, pr in idx.ports.items() if not pr.implicit][:40] + list(idx.volumes)[:20]
    for subject in subjects:
        window.selection.set({subject})
        QApplication.processEvents()
        markers = [b for b in window.properties._bindings if b.marker is not None]
        assert markers, subject
        shown += sum(b.marker.isChecked() for b in markers)
    assert shown > 50
    doc.validation.wait()
    qtbot.waitUntil(lambda: bool(window.findings.findings), timeout=10000)
    assert {f.severity for f in window.findings.findings} == {"info"}
    doc.undo_stack.clear()
