"""The designer for the whole job (issue 32), driven as a person would in the real main window
(offscreen): the access, workload and configuration forms, readiness beside validation, the findings
list, stale state, the configuration chooser, nothing moving by itself, 'not stated' as a state.
The same bed built in a real X server and run to the end: tests/x_session_job.py."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QToolButton

import resources
from tests.dialogs import forget_changes
from topology.fileformat import load
from widgets.main_window import MainWindow

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "tests" / "data" / "configurations" / "one-server-two-hypervisors.yaml"


@pytest.fixture
def window(laptop_window):
    return laptop_window


def _bed(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bed.yaml"
    path.write_text(text, encoding="utf-8")
    return path


TWO_HOSTS = """format_version: 1
bed: {name: two hosts}
servers:
  - id: h1
    role: load_client
    adapters: [{name: nic, ports: [{name: SAN1, roles: [iscsi]}, {name: SAN2, roles: [iscsi]}]}]
  - id: h2
    role: load_client
    adapters: [{name: nic, ports: [{name: SAN1, roles: [iscsi]}]}]
"""


def _type(qtbot, widget, text: str) -> None:
    line = widget.lineEdit() if callable(getattr(widget, "lineEdit", None)) else widget
    line.setFocus()
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)


# ---------------------------------------------------------------------------- item 1: access, workload, configurations

def test_a_host_gets_its_access_entry_from_its_form_and_tests_the_connection(qtbot, window, tmp_path):
    from widgets.forms.access_box import AccessBox
    w = window
    assert w.open_path(_bed(tmp_path, TWO_HOSTS))
    w.selection.set(["h1"])
    box = w.properties.findChild(AccessBox)
    assert box is not None and box.add.isVisible() and not box.test_button.isVisible()
    qtbot.mouseClick(box.add, Qt.MouseButton.LeftButton)
    assert [a.host for a in w.document.bed.access] == ["h1"]
    assert w.document.undo_stack.undoText() == "Add an access entry for h1"
    combo = w.properties.editor("access.transport")
    combo.setCurrentIndex(combo.findData("local"))
    combo.activated.emit(combo.currentIndex())
    assert w.document.bed.access[0].transport == "local" and w.document.undo_stack.count() == 2
    _type(qtbot, w.properties.editor("access.port"), "70000")            # the loader's range, at edit time
    assert "65535" in w.properties.message("access.port") and w.document.bed.access[0].port is None
    box = w.properties.findChild(AccessBox)
    assert box.test()
    qtbot.waitUntil(lambda: "OK" in box.last_result or "Failed" in box.last_result, timeout=30000)
    assert "OK: reachable, logged in" in box.last_result
    w.document.undo_stack.undo()
    w.document.undo_stack.undo()
    assert w.document.bed.access == []


def test_set_password_keeps_it_in_the_keyring_never_in_the_file(qtbot, window, tmp_path, memory_keyring, dialogs):
    from PySide6.QtWidgets import QInputDialog

    from tests.dialogs import answer_modal
    from widgets.forms.access_box import AccessBox
    w = window
    assert w.open_path(_bed(tmp_path, TWO_HOSTS + "access:\n  - {host: h1, transport: ssh, address: 10.0.0.1,"
                                                  " user: root}\n"))
    w.selection.set(["h1"])
    box = w.properties.findChild(AccessBox)
    def type_password(dialog):
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("s3cret-pw")
        dialog.accept()
    answer_modal(type_password)
    assert box.set_password()
    assert "s3cret-pw" in memory_keyring.items.values()
    w.document.save(tmp_path / "saved.yaml")
    assert "s3cret-pw" not in (tmp_path / "saved.yaml").read_text()


def test_a_workload_is_added_and_filled_in_from_its_form_one_edit_each(qtbot, window, tmp_path):
    from widgets.forms.record_table import RecordTable
    w = window
    assert w.open_path(_bed(tmp_path, TWO_HOSTS))
    w.selection.set(["h1"])
    ident = w.add_workload()
    bed = w.document.bed
    load_ = bed.workloads[0]
    assert ident == load_.id and load_.driver == "h1" and load_.targets == ["h1"] and load_.tool == "fio"
    assert w.properties.shown_subject == ident
    params = w.properties.editor("parameters")
    keys = [params.table.item(r, 0).text() for r in range(params.table.rowCount())]
    assert keys[:3] == ["filename", "size", "iodepth"]                    # fio's known parameters, listed
    params.table.item(keys.index("filename"), 1).setText(str(tmp_path / "fio.dat"))
    qtbot.waitUntil(lambda: load_.parameters == {"filename": str(tmp_path / "fio.dat")}, timeout=3000)
    tables = {t.fp.attr: t for t in w.properties.findChildren(RecordTable)}
    mix = tables["access"]
    for column, text in enumerate(["", "4", "70"]):                       # share, block, read: the new row
        if text:
            mix.table.item(mix.table.rowCount() - 1, column).setText(text)
            qtbot.wait(20)
    qtbot.waitUntil(lambda: len(load_.access) == 1, timeout=3000)
    assert len(load_.access) == 1 and load_.access[0].block_kb == 4 and load_.access[0].read_pct == 70
    criteria = tables["criteria"]
    criteria.table.item(0, 0).setText("read_latency_avg_ms")
    criteria.table.item(0, 1).setText("<")
    qtbot.waitUntil(lambda: "fill in Threshold" in criteria.message.text(), timeout=3000)
    assert not load_.criteria
    criteria.table.item(0, 2).setText("20")
    qtbot.waitUntil(lambda: bool(load_.criteria), timeout=3000)
    assert [(c.metric, c.comparison, c.threshold) for c in load_.criteria] == [("read_latency_avg_ms", "<", 20)]
    _type(qtbot, w.properties.editor("duration_minutes"), "0.1")
    steps = w.document.undo_stack.count()
    assert steps == 5            # add, filename, a mix row, a criterion row, duration: one edit each
    path = tmp_path / "saved.yaml"
    w.document.save(path)
    again = load(path).workloads[0]
    assert again.duration_minutes == 0.1 and again.parameters["filename"] == str(tmp_path / "fio.dat")


def test_configurations_side_by_side_edit_one_cell_one_undo_and_refuse_what_the_loader_refuses(qtbot, window,
                                                                                              tmp_path):
    from widgets.configurations_dialog import ConfigurationsDialog
    w = window
    path = tmp_path / "study.yaml"
    shutil.copyfile(STUDY, path)
    assert w.open_path(path)
    dialog = ConfigurationsDialog(w.document, w)
    qtbot.addWidget(dialog)
    headers = [dialog.table.horizontalHeaderItem(c).text() for c in range(dialog.table.columnCount())]
    assert headers == ["as drawn", "hyperv", "esxi"]
    rows = [dialog.table.verticalHeaderItem(r).text() for r in range(dialog.table.rowCount())]
    os_row = rows.index("R720 · os")
    assert dialog.table.item(os_row, 0).text().startswith("Windows Server 2012 R2")
    assert dialog.table.item(os_row, 2).text() == "VMware ESXi 5.5 Update 2"
    dialog.table.item(os_row, 2).setText("VMware ESXi 6.0")
    esxi = w.document.bed.configurations[1]
    assert esxi.overrides["R720"]["os"] == "VMware ESXi 6.0"
    assert w.document.undo_stack.undoText() == "Set R720 os in configuration esxi"
    mtu_row = rows.index("R720:SAN1 · mtu")
    dialog.table.item(mtu_row, 2).setText("70000")
    assert "too large" in dialog.message.text() and esxi.overrides["R720:SAN1"]["mtu"] == 1500
    w.document.undo_stack.undo()
    assert esxi.overrides["R720"]["os"] == "VMware ESXi 5.5 Update 2"
    w.document.save(path)
    load(path)


# ---------------------------------------------------------------------------- item 3: readiness beside validation

def test_validation_is_never_green_while_the_procedure_is_red(qtbot, window, tmp_path):
    w = window
    assert w.open_path(_bed(tmp_path, "format_version: 1\nbed: {name: bare}\nservers:\n  - id: h1\n"
                                      "    adapters: [{name: nic, ports: [{name: SAN1, roles: [lan]}]}]\n"))
    w.document.validation.wait()
    qtbot.waitUntil(lambda: bool(w.readiness.gaps), timeout=30000)
    assert "not ready" in w.findings.readiness.text()
    assert "not ready" in w.docks["findings"].windowTitle()
    listed = w.findings.model.rowCount()
    texts = [w.findings.model.index(r, 0).data() for r in range(listed)]
    assert not any("passes every rule" in (t or "") for t in texts)
    messages = " | ".join(g.message for g in w.readiness.gaps)
    assert "operating system of h1 is not stated" in messages
    first_gap = w.readiness.view.model().index(1, 0)         # the first group's first gap
    qtbot.mouseClick(w.readiness.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=w.readiness.view.visualRect(first_gap).center())
    assert w.selection.ids == {"h1"}


def test_an_address_typed_without_a_prefix_is_refused_and_paths_stay(qtbot, window):
    w = window
    assert w.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
    w.selection.set(["R710-1:SAN1"])
    before = load(resources.example_path(resources.DEFAULT_EXAMPLE))
    _type(qtbot, w.properties.editor("address"), "10.9.9.9")
    assert "prefix" in w.properties.message("address")
    port = next(p for s in w.document.bed.servers if s.id == "R710-1" for a in s.adapters for p in a.ports
                if p.name == "SAN1")
    assert port.address == next(p for s in before.servers if s.id == "R710-1" for a in s.adapters
                                for p in a.ports if p.name == "SAN1").address


# ---------------------------------------------------------------------------- item 5: the findings list

def test_the_findings_list_shows_eight_rows_at_1366x768_and_whole_codes(qtbot, window):
    w = window
    assert w.open_path(resources.example_path("ams2500-exchange-esrp"))
    w.document.validation.wait()
    qtbot.waitUntil(lambda: bool(w.findings.findings), timeout=30000)
    w.docks["findings"].raise_()
    qtbot.wait(50)
    tree = w.findings.tree
    row = tree.sizeHintForRow(0) or tree.fontMetrics().height()
    visible = (tree.viewport().height()) // row
    assert visible >= 8, (tree.viewport().height(), row)
    assert tree.columnWidth(0) >= tree.fontMetrics().horizontalAdvance("SRIOV-001") + 40


# ---------------------------------------------------------------------------- item 6: stale state

def test_validate_this_filter_and_messages_do_not_outlive_what_they_were_about(qtbot, window, tmp_path):
    from widgets.context_menus import ComponentActions
    w = window
    assert w.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
    w.document.validation.wait()
    ComponentActions(w.canvas).validate(["R710-1"])
    assert w.findings.search.text() == "R710-1"
    w.selection.set(["MD3000i"])                                  # the person moved on
    assert w.findings.search.text() == ""
    w.findings._tell("NET-009 on PC5448-1 accepted (Undo takes it back).")
    w.selection.set(["R710-2"])
    assert w.findings.notice.text() == ""
    w.find_bar.open_bar()
    w.find_bar.field.setText("R710")
    w.tree.parent().filter.setText("R710") if hasattr(w.tree.parent(), "filter") else None
    w.findings.search.setText("RAID")
    assert w.open_path(_bed(tmp_path, TWO_HOSTS))
    assert not w.find_bar.isVisible() and w.find_bar.field.text() == ""
    assert w.findings.search.text() == ""


def test_print_preview_closed_with_escape_claims_nothing_was_printed(qtbot, window):
    from PySide6.QtPrintSupport import QPrintPreviewDialog
    w = window
    assert w.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
    w.methodology.wait(60000)
    qtbot.waitUntil(lambda: w.methodology.methodology is not None, timeout=60000)
    w.methodology.print_preview()
    dialog = w.methodology._preview
    assert isinstance(dialog, QPrintPreviewDialog)
    qtbot.waitUntil(lambda: dialog.isVisible(), timeout=10000)
    from PySide6.QtPrintSupport import QPrintPreviewWidget
    preview = dialog.findChild(QPrintPreviewWidget)
    preview.updatePreview()                   # the pages are painted for the preview, as on a real screen
    qtbot.waitUntil(lambda: preview.pageCount() > 0, timeout=30000)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10000)
    assert "Printed" not in w.methodology.status.text()


# ---------------------------------------------------------------------------- item 7 and issue 30: configurations

def test_the_configuration_chooser_switches_every_view(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "study.yaml"
    shutil.copyfile(STUDY, path)
    assert w.open_path(path)
    w.document.validation.wait(30000)
    bar = w.configuration_bar
    assert bar.isVisible()
    from topology.device_face import server_lines as device_face_lines
    hyperv_lines = device_face_lines(w.canvas.shown("R720", w.canvas.objects["R720"]))
    assert any("Hyper-V" in line or "Windows" in line for line in hyperv_lines)
    bar.combo.setCurrentIndex(1)
    bar.combo.activated.emit(1)
    shown = w.canvas.shown("R720", w.canvas.objects["R720"])
    assert "ESXi" in shown.os and not any("Windows" in line for line in device_face_lines(shown))
    assert "PS6110" in w.canvas.excluded_ids or "PS6110:eth0b" in w.canvas.excluded_ids
    w.selection.set(["R720"])
    assert "in configuration esxi" in w.properties.subtitle.text() and "ESXi" in w.properties.subtitle.text()
    qtbot.waitUntil(lambda: bool(w.findings.findings), timeout=30000)
    listed = w.findings.visible_findings()
    assert any(f.configuration == "esxi" for f in listed)          # the esxi configuration's own findings
    assert all(getattr(f, "configuration", None) in (None, "esxi") for f in listed)
    bar.combo.setCurrentIndex(0)
    bar.combo.activated.emit(0)
    assert not any(f.configuration == "esxi" for f in w.findings.visible_findings())
    bar.combo.setCurrentIndex(1)
    bar.combo.activated.emit(1)
    tree_rows = w.tree.items_for("R720")
    assert any("ESXi" in r.text(2) for r in tree_rows)


def test_compare_speaks_the_pages_words_and_keeps_the_figure_picked(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "study.yaml"
    shutil.copyfile(STUDY, path)
    assert w.open_path(path)
    page = w.compare
    page.reload()
    for box in range(page.sides.count()):                 # both configurations, no figures recorded for them
        page.sides.item(box).setCheckState(Qt.CheckState.Checked)
    page.refresh()
    assert page.notes.text() and "testbed-studio" not in page.notes.text()
    index = page.figure.count() - 1
    page.figure.setCurrentIndex(index)
    page.figure.activated.emit(index)
    chosen = page.figure.currentData()
    page.reload()
    assert page.figure.currentData() == chosen


def test_unknown_memory_and_threads_never_print_as_numbers(qtbot, window, tmp_path):
    w = window
    assert w.open_path(_bed(tmp_path, "format_version: 1\nbed: {name: t}\nservers:\n  - id: h1\n"
                                      "    memory_gb: not stated\n    cpu: {sockets: 2, cores_per_socket: 4}\n"
                                      "vms:\n  - {id: v1, host: h1, memory_gb: not stated, vcpu: 2}\n"))
    assert "memory not stated" in w.tree.items_for("h1")[0].text(2)
    w.tabs.setCurrentWidget(w.placement)
    qtbot.waitUntil(lambda: "h1" in w.placement.cards, timeout=10000)
    card = w.placement.cards["h1"]
    assert "threads not stated" in card.detail.text() and "RAM not stated" in card.detail.text()
    assert card.chips[0].load_text.startswith("memory not stated")


# ---------------------------------------------------------------------------- item 8: nothing moves by itself

def test_bars_and_selection_move_nothing(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "study.yaml"
    shutil.copyfile(STUDY, path)
    assert w.open_path(path)
    qtbot.wait(100)
    top = w.tabs.mapTo(w, QPoint(0, 0)).y()
    w.find_bar.open_bar()
    qtbot.wait(50)
    assert w.tabs.mapTo(w, QPoint(0, 0)).y() == top                       # the find bar floats over the pages
    assert w.configuration_bar.isVisible() and w.tabs.mapTo(w, QPoint(0, 0)).y() == top
    w.find_bar.close_bar()
    canvas = w.canvas
    before = (canvas.horizontalScrollBar().value(), canvas.verticalScrollBar().value())
    w.selection.focus(["R720"])                                            # wholly in sight already
    assert (canvas.horizontalScrollBar().value(), canvas.verticalScrollBar().value()) == before


def test_find_matches_device_port_ids_and_zooms_to_the_match(qtbot, window):
    w = window
    assert w.open_path(resources.example_path("ams2500-exchange-esrp"))
    w.canvas.fit()
    zoom = w.canvas.zoom()
    w.find_bar.open_bar()
    server = w.document.bed.servers[0]
    port = server.adapters[0].ports[0].name
    w.find_bar.field.setText(f"{server.id}:{port}")
    match = w.find_bar.go(1)
    assert match is not None and match.subject == f"{server.id}:{port}"
    assert w.canvas.zoom() > zoom


def test_add_here_adds_a_vm_on_the_host_clicked_not_far_from_it(qtbot, window):
    from widgets.context_menus import canvas_menu
    w = window
    assert w.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
    canvas = w.canvas
    item = canvas.devices["R710-1"]
    menu = canvas_menu(canvas, canvas.mapFromScene(item.sceneBoundingRect().center()))
    action = next(a for a in menu.actions() if a.text() == "Add virtual machine on R710-1")
    before = {v.id for v in w.document.bed.vms}
    action.trigger()
    new = [v for v in w.document.bed.vms if v.id not in before]
    assert len(new) == 1 and new[0].host == "R710-1"
    empty = canvas_menu(canvas, QPoint(5, 5))
    add_here = next(a.menu() for a in empty.actions() if a.text() == "Add here")
    assert "Virtual machine" not in [a.text() for a in add_here.actions()]


def test_the_window_fits_a_1366x768_screen(qtbot, window):
    area = window.screen().availableGeometry()
    fresh = MainWindow()
    qtbot.addWidget(fresh, before_close_func=forget_changes)
    assert fresh.width() <= area.width() and fresh.height() <= area.height()


# ---------------------------------------------------------------------------- item 9: not stated is a state

def test_not_stated_is_a_field_state_not_a_column_of_buttons(qtbot, window):
    w = window
    assert w.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
    w.selection.set(["R710-1"])
    buttons = [b for b in w.properties.findChildren(QToolButton) if b.text() == "not stated"]
    assert buttons == []
    memory = w.properties.editor("memory_gb")
    marker = w.properties._binding("memory_gb").marker
    assert marker.text() == "Not stated in the source" and marker in memory.actions()
    memory.setFocus()
    qtbot.keyClick(memory.lineEdit(), Qt.Key.Key_U, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)
    assert memory.lineEdit().placeholderText() == "not stated" and memory.text() == ""
    w.selection.set(["R710-1:SAN1"])
    flow = w.properties.editor("flow_control")
    flow_text = flow.text()
    assert flow_text.count("not stated") <= 1


def test_every_parameter_a_template_reads_is_a_known_parameter_of_some_tool():
    import re

    from topology.workload_tools import COMMON, SPECIFIC
    read = set()
    for path in (ROOT / "resources" / "templates").rglob("*.yaml"):
        read |= set(re.findall(r"workload\.parameters\.([a-z_]+)", path.read_text(encoding="utf-8")))
    known = {k for k, _ in COMMON} | {k for params in SPECIFIC.values() for k, _ in params}
    assert read and read <= known, read - known
