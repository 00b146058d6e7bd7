"""The methodology view driven the way a person uses it: read the sections of the seed 000
procedure, narrow it to one host, pick a step with the mouse, copy its command, follow a
value to the component it came from, edit the bed and see the step follow, export and
preview the printed appendix."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtPrintSupport import QPrintPreviewDialog, QPrintPreviewWidget
from PySide6.QtWidgets import QApplication, QFileDialog

import resources
from app.document import Document
from app.report.steps import step_targets
from app.selection import Selection
from topology.edits import SetField
from topology.fileformat import load
from topology.methodology import generate
from widgets.methodology_view import MethodologyView

SEED000 = "md3000i-hyperv-cluster"


@pytest.fixture
def view(qtbot):
    document = Document(load(resources.example_path(SEED000)))
    selection = Selection()
    v = MethodologyView(document, selection)
    qtbot.addWidget(v)
    v.resize(1300, 800)
    v.show()
    qtbot.waitUntil(lambda: v.methodology is not None, timeout=15000)
    yield v
    v.wait()
    # the document goes away with the test; its undo stack must not signal into it while it does
    document.undo_stack.cleanChanged.disconnect()


def click_step(qtbot, view, number: str):
    item = view.item_for(number)
    assert item is not None, number
    view.tree.scrollTo(item)
    rect = view.tree.visualRect(item)
    qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.tree.currentIndex() == item
    return view._step(item)


def choose(qtbot, combo, text: str) -> None:
    """Open the drop-down with a click and click the entry, as a person picks from a list."""
    qtbot.mouseClick(combo, Qt.MouseButton.LeftButton)
    popup = combo.view()
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    qtbot.wait(QApplication.keyboardInputInterval() + 50)   # a fresh type-ahead, not one continued
    qtbot.keyClicks(popup, text)                     # type-ahead in the open list
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not popup.isVisible(), timeout=5000)


def first_step(view, predicate):
    for step in view.methodology.steps():
        if predicate(step):
            return step
    raise AssertionError("no such step")


def test_shows_the_sections_of_seed_000(view):
    expected = generate(view.document.bed)
    model = view.tree.model()       # a row per section title (spanning the table) and per step under it
    rows = [model.index(i, 0).data() for i in range(model.rowCount())]
    shown = [r for r in rows if not r.startswith(" ")]
    assert shown == [f"{s.number}. {s.title}" for s in expected.sections]
    assert len(shown) >= 8
    assert all(view.tree.columnSpan(i, 0) == 2 for i in range(len(rows)) if not rows[i].startswith(" "))
    steps = [r for r in rows if r.startswith(" ")]
    assert steps == [f"    {t.number}  {' '.join(t.text.split())}" for s in expected.sections for t in s.steps]
    assert "sections" in view.status.text() and "steps" in view.status.text()


def test_filtering_by_host_hides_the_other_hosts_steps(qtbot, view):
    all_steps = view.visible_steps()
    on_other = [s for s in all_steps if "R710-2" in step_targets(s) and "R710-1" not in step_targets(s)]
    assert on_other, "seed 000 has steps on R710-2"
    choose(qtbot, view.target_filter, "R710-1")
    assert view.target_filter.currentText() == "R710-1"
    shown = view.visible_steps()
    assert len(shown) > 10
    assert all("R710-1" in step_targets(s) for s in shown)
    assert not any(s in shown for s in on_other)
    # back to everything
    choose(qtbot, view.target_filter, "All hosts")
    assert len(view.visible_steps()) == len(all_steps)


def test_copying_a_command_puts_exactly_that_command_on_the_clipboard(qtbot, view):
    step = first_step(view, lambda s: s.automation and "\n" in s.automation[0].script)
    click_step(qtbot, view, step.number)
    QGuiApplication.clipboard().setText("something else")
    button = view.findChild(type(view.copy_buttons[0]), "copy_command_0")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == step.automation[0].script
    if step.automation[0].verify:
        qtbot.mouseClick(view.findChild(type(button), "copy_verify_0"), Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == step.automation[0].verify


def test_clicking_a_values_source_selects_that_component(qtbot, view):
    step = first_step(view, lambda s: any(str(src).startswith("R710-1:SAN1.") for src in s.sources.values()))
    click_step(qtbot, view, step.number)
    button = next(b for b in view.source_buttons if b.text().startswith("R710-1:SAN1."))
    centred = []
    view.selection.centre_requested.connect(lambda ids: centred.append(ids))
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert view.selection.ids == frozenset({"R710-1:SAN1"})
    assert centred == [frozenset({"R710-1:SAN1"})]


def test_an_edit_to_the_bed_shows_in_the_step_after_a_moment(qtbot, view):
    port = next(p for a in view.document.bed.servers[0].adapters for p in a.ports if p.name == "SAN1")
    assert view.document.bed.servers[0].id == "R710-1"
    step = first_step(view, lambda s: "192.168.130.201" in s.text)
    number = step.number
    click_step(qtbot, view, number)
    view.document.apply(SetField(port, "address", "192.168.130.221/24", owner="R710-1:SAN1"))
    qtbot.waitUntil(lambda: view.revision_shown == view.document.revision, timeout=15000)
    item = view.item_for(number)
    assert "192.168.130.221" in view._step(item).text
    assert view.tree.currentIndex() == item          # the step stays picked across regenerations


def test_export_buttons_write_the_appendix(qtbot, view, tmp_path, monkeypatch):
    target = tmp_path / "seed000-appendix.pdf"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    qtbot.mouseClick(view.export_buttons["pdf"], Qt.MouseButton.LeftButton)
    assert target.read_bytes().startswith(b"%PDF")
    assert "Wrote" in view.status.text() and "pages" in view.status.text()
    md = tmp_path / "seed000.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(md), "")))
    qtbot.mouseClick(view.export_buttons["md"], Qt.MouseButton.LeftButton)
    assert "192.168.130.101" in md.read_text()
    bad = tmp_path / "missing-folder" / "x.html"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(bad), "")))
    qtbot.mouseClick(view.export_buttons["html"], Qt.MouseButton.LeftButton)
    assert "Cannot write" in view.status.text()


def test_print_preview_shows_the_pages(qtbot, view):
    qtbot.mouseClick(view.preview_button, Qt.MouseButton.LeftButton)
    dialog = view._preview
    assert isinstance(dialog, QPrintPreviewDialog)
    qtbot.waitUntil(dialog.isVisible, timeout=10000)
    preview = dialog.findChild(QPrintPreviewWidget)
    qtbot.waitUntil(lambda: preview.pageCount() > 10, timeout=20000)
    dialog.reject()


def test_the_figures_of_a_run_of_this_bed_go_into_the_exported_appendix(qtbot, tmp_path, monkeypatch):
    import shutil

    from app.metrics import sample as M
    from app.metrics.results import MetricsRecorder
    from app.metrics.sample import Sample
    from app.run import journal as J
    bed_path = tmp_path / "seed000.yaml"
    shutil.copyfile(resources.example_path(SEED000), bed_path)
    other = J.new_run(str(tmp_path / "another-bed.yaml"), "")           # another project's run: not offered
    MetricsRecorder(other.dir).append([Sample(1.0, "x", M.IOPS, 1.0, "IO/s")])
    info = J.new_run(str(bed_path), "")
    rec = MetricsRecorder(info.dir)
    rec.append([Sample(1000.0 + i, host, M.IOPS, 1000.0 + 10 * i, "IO/s")
                for i in range(30) for host in ("NODE1", "NODE2")])
    rec.append([Sample(1000.0 + i, "NODE1", M.READ_LATENCY_MS, 4.0, "ms") for i in range(30)])
    rec.close()
    document = Document()
    document.open(bed_path)
    v = MethodologyView(document, Selection())
    qtbot.addWidget(v)
    v.show()
    qtbot.waitUntil(lambda: v.methodology is not None, timeout=15000)
    offered = [v.run_results.itemData(i) for i in range(v.run_results.count())]
    assert offered == [None, info.id] and v.run_results.currentData() == info.id
    target = tmp_path / "with-results.html"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    qtbot.mouseClick(v.export_buttons["html"], Qt.MouseButton.LeftButton)
    html = target.read_text()
    assert f"Measured in run {info.id}" in html and html.count('img class="chart"') == 2
    assert "NODE2" in html and "1,145 IO/s" in html         # NODE2's average IOPS: 1000 + 10 x 14.5
    v.run_results.setCurrentIndex(0)                         # "none": the appendix as before
    qtbot.mouseClick(v.export_buttons["html"], Qt.MouseButton.LeftButton)
    assert "Measured in run" not in target.read_text()
    v.wait()
    document.undo_stack.cleanChanged.disconnect()


def test_the_procedure_shown_before_an_edit_is_let_go_of_off_the_gui_thread(qtbot, view):
    """Freed on the GUI thread as the page took the next one, the 5,000-device bed's procedure
    (88,593 steps) held the window for 0.15-0.2 s on the first visit to Methodology after an edit."""
    import threading
    import weakref
    gui, freed_on = threading.get_ident(), []
    shown = [view.methodology]          # the test's own hold on it, let go of below
    qtbot.waitUntil(lambda: view.steps.methodology is shown[0], timeout=15000)
    refs = [weakref.ref(step, lambda _r: freed_on.append(threading.get_ident()))
            for section in shown[0].sections for step in section.steps]
    shown.clear()
    doc = view.document
    server = doc.bed.servers[0]
    doc.apply(SetField(server, "note", "moved to rack 2"))
    qtbot.waitUntil(lambda: view.revision_shown == doc.revision and view.steps.methodology is view.methodology,
                    timeout=15000)
    qtbot.waitUntil(lambda: all(r() is None for r in refs), timeout=15000)
    assert freed_on and gui not in freed_on, f"{freed_on.count(gui)} of {len(freed_on)} steps freed on the GUI thread"
