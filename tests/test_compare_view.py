"""The window with configurations: the configuration chooser drives the methodology shown and
the run's plan, findings name their configuration, and the Compare page puts configurations
and runs side by side (real Qt widgets, offscreen)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.document import Document
from app.metrics.run_results import attach_file, attached
from app.run import journal as J

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"
DS2 = (ROOT / "tests" / "data" / "captures" / "dvdstore" / "ds2webdriver_doc_typical_run.txt").read_text()


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "study.yaml"
    shutil.copyfile(STUDY, path)
    return path


def _ds2(tmp: Path, name: str, opm: int) -> Path:
    """The real DVD Store driver output with the Final line's opm set to `opm`."""
    f = tmp / name
    f.write_text(re.sub(r"(Final: .*?opm=)147\b", rf"\g<1>{opm}", DS2, count=1))
    return f


def test_the_configuration_chooser_drives_the_methodology_the_run_plan_and_the_findings(qtbot, study):
    from widgets.main_window import MainWindow
    document = Document()
    document.open(study)
    w = MainWindow(document)
    qtbot.addWidget(w)
    w.show()
    bar = w.configuration_bar
    assert bar.isVisible() and [bar.combo.itemData(i) for i in range(bar.combo.count())] == ["hyperv", "esxi"]
    qtbot.waitUntil(lambda: w.methodology.methodology is not None, timeout=20000)
    first = "\n".join(s.text for s in w.methodology.methodology.steps())
    assert "Windows Server 2012 R2 Datacenter" in first and "ESXi 5.5" not in first
    bar.combo.setCurrentIndex(1)
    bar.combo.activated.emit(1)
    qtbot.waitUntil(lambda: w.methodology.methodology is not None and "ESXi 5.5" in "\n".join(
        s.text for s in w.methodology.methodology.steps()), timeout=20000)
    assert any("ESXi 5.5" in s.text for s in w.run.plan())
    w.document.validation.wait(20000)
    model = w.findings.model if hasattr(w.findings, "model") else None
    texts = [f"[{f.configuration}] {f.code}" for f in w.document.validation.findings if f.configuration]
    assert "[esxi] NET-005" in texts, (texts, model)
    w.methodology.wait()
    document.undo_stack.cleanChanged.disconnect()


def test_a_bed_without_configurations_shows_no_chooser(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    from PySide6.QtWidgets import QMainWindow

    from widgets.configuration_chooser import ConfigurationBar
    window = QMainWindow()
    qtbot.addWidget(window)
    document = Document()
    bar = ConfigurationBar(document, window)
    window.addToolBar(bar)
    window.show()
    assert not bar.isVisible() and bar.choice.name is None
    from topology.fileformat import load
    document.replace(load(STUDY), None)
    assert bar.isVisible() and bar.choice.name == "hyperv"


def test_the_compare_page_puts_configurations_side_by_side_and_attaches_result_files(qtbot, study, tmp_path):
    from widgets.compare_view import CompareView
    for configuration, runs in (("hyperv", [(5000, 5000), (5100, 5300), (4900, 4900)]),
                                ("esxi", [(5200, 5280), (5300, 5400), (5100, 5200)])):
        for n, (sql1, sql2) in enumerate(runs):
            info = J.new_run(str(study), "", configuration=configuration)
            attach_file(info.dir, _ds2(tmp_path, f"{configuration}{n}-1.txt", sql1), host="SQL1")
            attach_file(info.dir, _ds2(tmp_path, f"{configuration}{n}-2.txt", sql2), host="SQL2")
    document = Document()
    document.open(study)
    view = CompareView(document)
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    assert view.checked() == ["hyperv", "esxi"]

    def row(subject: str) -> list[str]:
        r = next(i for i in range(view.grid.rowCount()) if view.grid.item(i, 0).text() == subject)
        return [view.grid.item(r, c).text() for c in range(view.grid.columnCount())]
    assert view.grid.horizontalHeaderItem(3).text() == "esxi vs hyperv"
    assert row("Total") == ["Total", "10,000", "10,480", "+4.8 %"]
    assert row("SQL1") == ["SQL1", "5,000", "5,200", "+4.0 %"]
    assert not view.chart.pixmap().isNull() and view.chart.pixmap().width() == view.chart_width()
    # the other denominator: the same two totals read -4.6 % against esxi, and the notes say so
    view.baseline.setCurrentIndex(1)
    view.baseline.activated.emit(1)
    assert row("Total") == ["Total", "10,000", "10,480", "-4.6 %"]
    assert "the denominator is esxi" in view.notes.text()

    # attach a result file to a run from this page: all or nothing, with the reason
    target = view._my_runs()[0]
    view.import_run.setCurrentIndex(view.import_run.findData(target.id))
    view.import_host.setText("SQL1")
    before = len(attached(target.dir))
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing to see\n")
    assert not view.attach([_ds2(tmp_path, "extra.txt", 1234), junk])
    assert "Nothing was attached" in view.import_status.text() and len(attached(target.dir)) == before
    assert view.attach([_ds2(tmp_path, "extra.txt", 1234)])
    assert "Attached 1 file(s)" in view.import_status.text() and len(attached(target.dir)) == before + 1
    view.sides.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert view.table_shown is None and "Tick two or more" in view.notes.text()
    document.undo_stack.cleanChanged.disconnect()


def test_runs_that_end_join_the_compare_page_when_it_is_shown_read_on_a_worker(qtbot, study, tmp_path):
    """Starting or stopping a run tells the page (follow_runs); it reads the runs folder and compares
    again on a worker, and only once it is looked at (issue 24: 0.2-1.2 s on the GUI thread before)."""
    import threading

    from PySide6.QtWidgets import QTabWidget

    from app.metrics import comparison as C
    from widgets.compare_view import CompareView
    for configuration, opm in (("hyperv", 5000), ("esxi", 5200)):
        info = J.new_run(str(study), "", configuration=configuration)
        attach_file(info.dir, _ds2(tmp_path, f"{configuration}.txt", opm), host="SQL1")
    document = Document()
    document.open(study)
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    view = CompareView(document)
    other = QTabWidget()
    tabs.addTab(other, "another page")
    tabs.addTab(view, "Compare")
    tabs.show()
    assert view.table_shown is None          # a hidden page lists and compares nothing at open ...
    tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.table_shown is not None, timeout=10000)     # ... it does when shown
    tabs.setCurrentWidget(other)
    assert not view.isVisible()
    listed = view.sides.count()
    threads: list[str] = []
    resolve = C.resolve_sides

    def spied(*args, **kw):
        threads.append(threading.current_thread().name)
        return resolve(*args, **kw)
    C.resolve_sides = spied
    try:
        newer = J.new_run(str(study), "", configuration="esxi")
        attach_file(newer.dir, _ds2(tmp_path, "esxi-2.txt", 5400), host="SQL1")
        view.follow_runs()
        qtbot.wait(200)
        assert view.sides.count() == listed and threads == []       # a hidden page waits
        tabs.setCurrentWidget(view)
        qtbot.waitUntil(lambda: view.sides.count() == listed + 1 and not view._following.busy, timeout=10000)
        assert view.sides.item(listed).data(Qt.ItemDataRole.UserRole) == newer.id
        assert threads and "MainThread" not in threads
        # the ticked configurations compared again, with the newer esxi run among esxi's figures
        sql1 = next(r for r in view.table_shown.rows if r.subject == "SQL1")
        assert view.checked() == ["hyperv", "esxi"]
        assert sql1.values[0] == 5000 and sql1.values[1] == pytest.approx((5200 + 5400) / 2)
    finally:
        C.resolve_sides = resolve
        document.undo_stack.cleanChanged.disconnect()
