"""The Run tab's "As built" page as a person uses it: "Check the bed" reads this machine (a host
reached by the local transport) on a worker, lists where it differs from the drawing with the
counts as badges, "Take into the bed" writes the values it showed that the bed does not state as
one undo step, and a run started with "Check the bed when a run starts" keeps the check with the
run (run.json names it; the as-run appendix prints the as-built table).  A screenshot is written
to build/asbuilt-panel.png."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from app.document import Document
from tests.dialogs import answer_modal, click
from tests.run_beds import linux_bed_text
from widgets.run_wizard import RunWizard


def _real_interface() -> dict:
    items = json.loads(subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True,
                                      timeout=20).stdout)
    for item in items:
        if item["ifname"] != "lo" and any(a.get("family") == "inet" for a in item.get("addr_info", [])):
            return item
    pytest.skip("no interface with an IPv4 address here")


def _bed(tmp_path: Path) -> Path:
    iface = _real_interface()
    inet = next(a for a in iface["addr_info"] if a.get("family") == "inet")
    doc = yaml.safe_load(linux_bed_text([{"id": "lin1", "transport": "local"}], mark_dir=tmp_path / "marks"))
    doc["servers"][0]["platform"] = "linux"
    doc["servers"][0]["adapters"] = [{"name": "NIC1", "ports": [
        {"name": iface["ifname"].split("@")[0], "address": f"{inet['local']}/{inet['prefixlen']}",
         "mtu": 9216 if iface["mtu"] != 9216 else 1500},                           # an MTU the host does not have
        {"name": "nosuch0", "address": "198.51.100.7/24"}]}]                       # a port the host does not have
    path = tmp_path / "bed.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def wizard(qtbot, tmp_path):
    doc = Document()
    doc.open(_bed(tmp_path))
    w = RunWizard(doc)
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    w.pages.setCurrentWidget(w.asbuilt)
    yield w
    w.shutdown()


def test_check_the_bed_lists_differences_with_badges_and_takes_learnt_values_in_one_undo(wizard, qtbot):
    panel = wizard.asbuilt
    assert panel.check()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    codes = sorted(panel.tree.topLevelItem(i).text(1) for i in range(panel.tree.topLevelItemCount()))
    assert codes == ["ASB-001", "ASB-003"], [panel.tree.topLevelItem(i).text(3)
                                            for i in range(panel.tree.topLevelItemCount())]
    assert "2 errors" in panel.badges.text()
    Path("build").mkdir(exist_ok=True)
    wizard.grab().save("build/asbuilt-panel.png")
    # the MAC of the port the host has is learnt; taking it is one undo step
    assert panel.learn_button.isEnabled()
    port = wizard.document.bed.servers[0].adapters[0].ports[0]
    stack = wizard.document.undo_stack
    before = stack.count()
    panel.learn_button.click()
    assert stack.count() == before + 1 and port.mac
    stack.undo()
    assert port.mac == ""


def test_a_run_started_with_the_check_keeps_it_and_the_appendix_prints_the_table(wizard, qtbot, tmp_path):
    from app.asbuilt.check import RECORD
    from app.metrics.report import load_run_results
    from app.report.tables.results import run_record_tables
    panel = wizard.asbuilt
    panel.before_run.setChecked(True)
    from app.run.journal import runs_root  # noqa: F401  (the state directory is the test's own: conftest)
    answer_modal(click("Run Anyway"))       # the bed has validation errors (a port on no network ...)
    wizard.new_run()
    assert wizard.session is not None
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    run_dir = wizard.session.info.dir
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["as_built"]["file"] == RECORD and meta["as_built"]["codes"] == ["ASB-001", "ASB-003"]
    titles = [t.title for t in run_record_tables(load_run_results(str(run_dir), wizard.document.bed))]
    assert any(t.startswith("As built") for t in titles), titles


def test_show_on_diagram_in_the_main_window_selects_and_centres_the_host_on_the_diagram(qtbot, tmp_path):
    from PySide6.QtCore import Qt

    from widgets.main_window import MainWindow
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    assert window.open_path(_bed(tmp_path))
    window.canvas.scale(4, 4)                           # zoomed in: the host is not in sight by itself
    window.canvas.centerOn(-5000, -5000)
    window.tabs.setCurrentWidget(window.run)
    panel = window.run.asbuilt
    window.run.pages.setCurrentWidget(panel)
    assert panel.check()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    mtu = next(panel.tree.topLevelItem(i) for i in range(panel.tree.topLevelItemCount())
               if panel.tree.topLevelItem(i).text(1) == "ASB-003")
    panel.tree.setCurrentItem(mtu)
    assert panel.show_button.isEnabled()
    qtbot.mouseClick(panel.show_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is window.canvas
    assert window.selection.ids == {"lin1"}
    selected = [i for i in window.canvas.scene().selectedItems() if getattr(i, "ident", "") == "lin1"]
    assert selected, "the host is selected on the diagram"
    seen = window.canvas.mapToScene(window.canvas.viewport().rect()).boundingRect()
    assert seen.intersects(selected[0].sceneBoundingRect()), "the host is brought into sight"
    Path("build").mkdir(exist_ok=True)
    window.grab().save("build/asbuilt-show-on-diagram.png")
