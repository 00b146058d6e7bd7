"""The designer as a person expects a desktop tool to behave (issue 15): the palette stays armed,
arrow keys nudge, right-click menus on the canvas and the tree, refusals shown over the
drawing, Find with jump-to, the tree filter, New from Example, Undo that names the step,
old messages cleared on another bed, a window that remembers where it was and never widens
itself."""
from __future__ import annotations

import pytest
from dialogs import forget_changes
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu
from test_canvas import small, studio  # noqa: F401 - fixtures

import resources
from widgets.connect_dialog import ConnectDialog
from widgets.context_menus import canvas_menu, storage_menu, tree_menu
from widgets.main_window import MainWindow


def titles(menu: QMenu) -> list[str]:
    return [a.text() for a in menu.actions() if a.text()]


def trigger(menu: QMenu, title: str) -> None:
    for action in menu.actions():
        if action.text() == title:
            action.trigger()
            return
        if action.menu() is not None and title.startswith(action.text() + " › "):
            trigger(action.menu(), title.split(" › ", 1)[1])
            return
    raise AssertionError(f"{title!r} not in {titles(menu)}")


# ================================================================================ palette and canvas

def test_palette_stays_armed_until_escape_or_a_second_click(studio):
    s = studio
    s.pick("server:hypervisor")
    assert s.canvas.armed == "server:hypervisor"
    assert s.palette.list.currentItem() is s.palette.item_for("server:hypervisor")
    assert s.canvas.notice.isVisible() and s.canvas.notice.kind == "armed"
    assert s.canvas.viewport().cursor().shape() == Qt.CursorShape.CrossCursor
    s.click(QPointF(120, 80))
    s.click(QPointF(420, 80))
    s.click(QPointF(720, 80))
    assert [x.id for x in s.bed.servers] == ["host-1", "host-2", "host-3"], "every click places one"
    assert s.canvas.armed == "server:hypervisor"
    s.pick("server:hypervisor")                          # the armed entry again: put it down
    assert s.canvas.armed is None and not s.palette.list.selectedItems()
    assert not s.canvas.notice.isVisible()
    s.click(QPointF(120, 400))
    assert len(s.bed.servers) == 3
    s.pick("switch:ethernet")
    s.qtbot.keyClick(s.palette.list, Qt.Key.Key_Escape)  # Escape where the focus is (the palette)
    assert s.canvas.armed is None and not s.palette.list.selectedItems()


def test_arrow_keys_nudge_the_selection_as_one_undoable_move(small):
    s = small
    host = s.bed.servers[0]
    s.selection.set(["host-1", "host-2"])
    x0, y0, x1 = host.x, host.y, s.bed.servers[1].x
    steps = s.document.undo_stack.count()
    s.key(Qt.Key.Key_Right)
    assert (host.x, host.y) == (x0 + 20, y0) and s.bed.servers[1].x == x1 + 20
    s.qtbot.keyClick(s.canvas, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert host.y == y0 + 100, "Shift moves five grid steps"
    assert s.document.undo_stack.count() == steps + 2
    assert s.document.undo_stack.undoText() == "Move 2 devices"
    s.document.undo_stack.undo()
    s.document.undo_stack.undo()
    assert (host.x, host.y) == (x0, y0)
    assert s.canvas.devices["host-1"].pos() == QPointF(x0, y0)


def test_right_click_selects_the_device_and_its_menu_acts_on_it(small):
    s = small
    s.selection.set(["host-2"])
    s.mouse(QEvent.Type.MouseButtonPress, s.centre("host-1"), button=Qt.MouseButton.RightButton,
            buttons=Qt.MouseButton.RightButton)
    assert s.canvas.selected_ids() == ["host-1"], "a right press selects what is under it"
    # the menu opens at once; the other views (the property form) follow when it has closed
    while_open: list[set] = []

    def look_and_close() -> None:
        popup = QApplication.activePopupWidget()
        if popup is None:
            QTimer.singleShot(10, look_and_close)
            return
        while_open.append(set(s.selection.ids))
        popup.close()
    QTimer.singleShot(10, look_and_close)
    at, viewport = s.view_pos(s.centre("host-1")), s.canvas.viewport()
    QApplication.sendEvent(viewport, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, viewport.mapToGlobal(at)))
    assert while_open == [{"host-2"}] and s.selection.ids == {"host-1"}
    menu = canvas_menu(s.canvas, s.view_pos(s.centre("host-1")))
    assert {"Properties of host-1", "Connect…", "Duplicate", "Delete host-1", "Select in component tree",
            "Validate this"} <= set(titles(menu))
    steps = s.document.undo_stack.count()
    trigger(menu, "Duplicate")
    assert [x.id for x in s.bed.servers][-1] not in ("host-1", "host-2") and len(s.bed.servers) == 3
    assert s.document.undo_stack.count() == steps + 1
    copy = s.bed.servers[-1].id
    assert s.selection.ids == {copy}
    menu = canvas_menu(s.canvas, s.view_pos(s.centre(copy)))
    trigger(menu, f"Delete {copy}")
    assert len(s.bed.servers) == 2


def test_the_empty_drawing_menu_adds_a_component_where_it_was_opened(small):
    s = small
    where = QPointF(900, 300)
    menu = canvas_menu(s.canvas, s.view_pos(where))
    assert "Add here" in titles(menu) and "Select all" in titles(menu)
    label = next(k.label for k in __import__("topology.operations", fromlist=["PALETTE"]).PALETTE
                 if k.key == "switch:fc")
    trigger(menu, f"Add here › {label}")
    new = s.bed.switches[-1]
    assert new.kind == "fc" and abs(new.x + 80 - where.x()) <= 20 and abs(new.y + 32 - where.y()) <= 20


def test_a_cable_menu_deletes_the_cable(small):
    s = small
    link = next(i for i in s.canvas.links.values() if i.model_obj.a == "host-1:SAN1")
    middle = link.path().pointAtPercent(0.5)
    s.mouse(QEvent.Type.MouseButtonPress, middle, button=Qt.MouseButton.RightButton, buttons=Qt.MouseButton.RightButton)
    menu = canvas_menu(s.canvas, s.view_pos(middle))
    trigger(menu, "Delete cable host-1:SAN1 — sw-1:1")
    assert ("host-1:SAN1", "sw-1:1") not in [(lk.a, lk.b) for lk in s.bed.links] and len(s.bed.links) == 3


def test_a_refused_cable_is_said_over_the_drawing(small):
    s = small
    s.drag(s.port("host-1:SAN1"), s.centre("host-2"))
    notice = s.canvas.notice
    assert notice.isVisible() and notice.kind == "refusal"
    assert notice.text() == s.canvas.last_message and notice.text() in s.status
    assert notice.geometry().top() < s.canvas.viewport().height() // 4, "at the top of the drawing"


def test_connect_dialog_offers_only_ends_that_fit_and_shows_a_refusal_in_place(small):
    s = small
    s.document.apply(__import__("topology.operations", fromlist=["x"]).add_device(s.bed, "switch", "fc", 800, 600))
    dialog = ConnectDialog(s.document, "host-1")
    sources = [dialog.source.itemData(i) for i in range(dialog.source.count())]
    assert "host-1:SAN1" not in sources and "host-1:LAN1" in sources       # SAN1 is cabled already
    dialog.source.setCurrentIndex(sources.index("host-1:LAN1"))
    ends = [dialog.target.itemData(i) for i in range(dialog.target.count())]
    # a LAN port: another LAN port, an Ethernet switch; never the FC switch, an iSCSI port or itself
    assert "host-2:LAN1" in ends and "sw-1" in ends
    assert "fcsw-1" not in ends and "host-2:SAN1" not in ends and "array-1:A0" not in ends
    assert not [e for e in ends if e.startswith("host-1:")]
    words = dialog.target.itemText(ends.index("sw-1"))
    assert words == "sw-1 (takes 3, the next free port that fits)"     # 1 and 2 are cabled
    dialog.source.setCurrentIndex(sources.index("host-1:HB1"))
    ends = [dialog.target.itemData(i) for i in range(dialog.target.count())]
    assert "host-2:HB1" in ends and "host-2:LAN1" not in ends             # heartbeat to heartbeat only
    dialog.source.setCurrentIndex(sources.index("host-1:LAN1"))
    ends = [dialog.target.itemData(i) for i in range(dialog.target.count())]
    dialog.target.setCurrentIndex(ends.index("host-2:LAN1"))
    # the bed changed while the dialog was open: the cable is refused, and the dialog stays open
    s.document.apply(__import__("topology.operations", fromlist=["x"]).connect(s.bed, "host-2:LAN1", "sw-2"))
    links = len(s.bed.links)
    assert dialog.connect_chosen() is False
    assert "already cabled" in dialog.error.text() and len(s.bed.links) == links and not dialog.result()
    dialog._fill_targets()
    ends = [dialog.target.itemData(i) for i in range(dialog.target.count())]
    dialog.target.setCurrentIndex(ends.index("sw-1"))
    assert dialog.connect_chosen() is True and ("host-1:LAN1", "sw-1:3") in {(lk.a, lk.b) for lk in s.bed.links}


# ================================================================================ the window

@pytest.fixture
def window(qtbot, dialogs, tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    w = MainWindow()
    qtbot.addWidget(w, before_close_func=forget_changes)
    w.show()
    qtbot.waitExposed(w)
    assert w.open_path(resources.example_path(resources.DEFAULT_EXAMPLE))
    w.document.validation.wait()
    return w


def test_find_goes_to_an_address_and_centres_it(qtbot, window):
    w = window
    w.tabs.setCurrentWidget(w.storage)
    w.actions_by_name["find"].trigger()
    assert w.find_bar.isVisible() and w.find_bar.field.hasFocus() or w.find_bar.isVisible()
    w.find_bar.field.setText("192.168.130.211")
    match = w.find_bar.go(1)
    assert match is not None and match.subject == "R710-2:SAN1"
    assert w.selection.ids == {"R710-2:SAN1"} and w.tabs.currentWidget() is w.canvas
    visible = w.canvas.mapToScene(w.canvas.viewport().rect()).boundingRect()
    assert visible.intersects(w.canvas.devices["R710-2"].sceneBoundingRect())
    assert "1 of 1" in w.find_bar.result.text()
    w.find_bar.field.setText("no such thing anywhere")
    assert w.find_bar.go(1) is None and w.find_bar.result.text() == "Nothing matches"


def test_find_takes_a_port_as_the_application_prints_it_and_zooms_to_where_it_reads(qtbot, window):
    w = window
    w.canvas.fit()
    w.actions_by_name["find"].trigger()
    w.find_bar.field.setText("R710-2:SAN1")
    match = w.find_bar.go(1)
    assert match is not None and match.subject == "R710-2:SAN1"
    assert w.selection.ids == {"R710-2:SAN1"}
    # close enough that the device draws its ports' names, and the device in sight
    assert w.canvas.zoom() >= 1.6
    visible = w.canvas.mapToScene(w.canvas.viewport().rect()).boundingRect()
    assert visible.contains(w.canvas.devices["R710-2"].sceneBoundingRect().center())
    w.find_bar.field.setText("R710:SAN")          # the start of each part: every SAN port of both hosts
    assert w.find_bar.go(1) is not None
    assert [m.subject for m in w.find_bar.matches][:4] == ["R710-1:SAN1", "R710-1:SAN2", "R710-2:SAN1", "R710-2:SAN2"]


def test_a_big_bed_fitted_to_the_window_still_shows_its_device_names(qtbot, window):
    from PySide6.QtGui import QColor
    w = window
    assert w.open_path(resources.example_path("ams2500-exchange-esrp"))
    w.resize(1366, 768)
    w.tabs.setCurrentWidget(w.canvas)
    w.canvas.fit()
    qtbot.wait(50)
    assert w.canvas.zoom() < 0.3            # far away: the drawing's details are left out
    image = w.canvas.viewport().grab().toImage()
    body = w.canvas.mapFromScene(w.canvas.devices["SUN141"].sceneBoundingRect()).boundingRect()
    dark = sum(1 for x in range(body.left() + 2, body.right() - 2) for y in range(body.top() + 2, body.bottom() - 2)
               if QColor(image.pixel(x, y)).lightness() < 100)
    assert dark > 20, "no name drawn on the device"


def test_the_tree_filter_keeps_matching_components(qtbot, window):
    w = window
    box = w.docks["tree"].widget()
    box.filter.setText("R710")
    shown = box.apply()
    rows = [w.tree.topLevelItem(i).child(j) for i in range(w.tree.topLevelItemCount())
            for j in range(w.tree.topLevelItem(i).childCount())]
    visible = {r.text(0) for r in rows if not r.isHidden()}
    assert {"R710-1", "R710-2"} <= visible and not {"PC5448-1", "LAN", "LoadGen", "Exchange"} & visible
    assert shown == len(visible)
    box.filter.setText("192.168.130.101")             # an array controller port's address
    box.apply()
    assert {r.text(0) for r in rows if not r.isHidden()} == {"MD3000i"}
    box.filter.clear()
    assert box.apply() == len(rows)


def test_tree_menu_offers_properties_delete_and_validate(qtbot, window):
    w = window
    menu = tree_menu(w.tree, ["DC"], False)
    assert {"Properties of DC", "Duplicate", "Delete DC", "Select on canvas", "Validate this"} <= set(titles(menu))
    trigger(menu, "Validate this")
    assert w.findings.search.text() == "DC"
    trigger(menu, "Delete DC")
    assert "DC" not in {v.id for v in w.document.bed.vms} | {s.id for s in w.document.bed.servers}
    assert w.actions_by_name["undo"].text() == "&Undo " + w.document.undo_stack.undoText()


def test_undo_names_the_step(qtbot, window):
    w = window
    w.selection.set(["R710-1"])
    w.canvas.setFocus()
    qtbot.keyClick(w.canvas, Qt.Key.Key_Left)
    assert w.actions_by_name["undo"].text() == "&Undo Move R710-1"
    w.actions_by_name["undo"].trigger()
    assert w.actions_by_name["redo"].text() == "&Redo Move R710-1" and w.actions_by_name["undo"].text() == "&Undo"


def test_another_bed_clears_the_old_messages(qtbot, window):
    w = window
    w.canvas.say("Link not made: something", refusal=True)
    w.findings.notice.setText("DISK-001 on MD3000i accepted")
    assert w.canvas.notice.isVisible()
    assert w.files.open_example("equallogic-ps6110-hyperv")
    assert w.statusBar().currentMessage().startswith("New bed from the example")
    assert not w.canvas.notice.isVisible() and w.findings.notice.text() == "" and w.canvas.last_message == ""


def test_new_from_example_lists_descriptions_and_opens_unsaved(qtbot, window):
    from widgets.example_gallery import ExampleGallery
    gallery = ExampleGallery(w := window)
    qtbot.addWidget(gallery)
    assert gallery.list.count() == len(resources.example_names()) >= 3
    for row in range(gallery.list.count()):
        gallery.list.setCurrentRow(row)
        bed = gallery.beds[gallery.chosen()]
        assert bed.bed.description and bed.bed.description[:40] in gallery.detail.toPlainText()
    assert w.files.open_example(gallery.chosen())
    assert w.document.path is None and w.document.dirty
    assert w.document.bed.bed.name == gallery.beds[gallery.chosen()].bed.name


def test_storage_lists_have_menus(qtbot, window):
    w = window
    w.tabs.setCurrentWidget(w.storage)
    qtbot.waitUntil(lambda: w.storage.groups_tab.groups.topLevelItemCount() > 0)
    assert "Delete group" in titles(storage_menu(w.storage.groups_tab.groups))
    assert "Delete volume" in titles(storage_menu(w.storage.volumes_tab.volumes))
    assert "Unmap" in titles(storage_menu(w.storage.mappings_tab.mappings))
    assert "Mark as hot spare" in titles(storage_menu(w.storage.slot_map))


def test_the_window_never_widens_itself_when_the_selection_changes(qtbot, window):
    w = window
    w.resize(1366, 740)
    qtbot.wait(20)
    size = w.size()
    assert size.width() == 1366 and size.height() == 740, "the window fits a 1366×768 screen with a taskbar"
    bed = w.document.bed
    for ident in [c.id for c in bed.servers + bed.arrays + bed.switches + bed.vms[:4]] + ["R710-1:SAN1", ""]:
        w.selection.set([ident] if ident else [])
        qtbot.wait(5)
        assert w.size() == size, f"selecting {ident or 'nothing'} resized the window"
    for i in range(w.tabs.count()):
        w.tabs.setCurrentIndex(i)
        qtbot.wait(5)
        assert w.size() == size, f"the {w.tabs.tabText(i)} tab resized the window"


def test_the_window_opens_maximised_then_where_it_was_closed(qtbot, tmp_path, monkeypatch, dialogs):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "fresh"))
    first = MainWindow()
    qtbot.addWidget(first, before_close_func=forget_changes)
    first.show_restored()
    assert first.isMaximized(), "the first start opens maximised"
    first.showNormal()
    first.setGeometry(30, 40, 760, 500)       # inside the offscreen screen (800×600)
    qtbot.wait(20)
    assert first.close()
    assert (tmp_path / "fresh" / "window.ini").is_file()
    second = MainWindow()
    qtbot.addWidget(second, before_close_func=forget_changes)
    second.show_restored()
    qtbot.waitExposed(second)
    assert not second.isMaximized() and second.size().toTuple() == (760, 500)


# ================================================================================ keys in a property field

@pytest.fixture
def form(qtbot):
    from app.document import Document
    from app.selection import Selection
    from widgets.property_editor import PropertyEditor
    doc = Document()
    doc.open(resources.example_path(resources.DEFAULT_EXAMPLE))
    selection = Selection()
    editor = PropertyEditor(doc, selection)
    qtbot.addWidget(editor)
    editor.resize(420, 800)
    editor.show()
    qtbot.waitExposed(editor)
    editor.activateWindow()
    yield doc, selection, editor
    doc.validation.wait()
    doc.undo_stack.clear()


def _type(qtbot, field, text: str, enter: bool = True) -> None:
    target = field.lineEdit() if hasattr(field, "lineEdit") and field.lineEdit() is not None else field
    target.setFocus()
    target.selectAll()
    qtbot.keyClick(target, Qt.Key.Key_Backspace)
    qtbot.keyClicks(target, text)
    if enter:
        qtbot.keyClick(target, Qt.Key.Key_Return)


def test_ctrl_z_in_a_field_undoes_the_committed_value(qtbot, form):
    doc, selection, editor = form
    selection.set(["R710-1"])
    memory = editor.editor("memory_gb")
    _type(qtbot, memory, "64")
    host = next(s for s in doc.bed.servers if s.id == "R710-1")
    assert host.memory_gb == 64 and doc.undo_stack.count() == 1
    memory = editor.editor("memory_gb")
    memory.setFocus()
    qtbot.keyClick(memory.lineEdit(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: host.memory_gb == 48)
    assert editor.editor("memory_gb").text() == "48" and doc.undo_stack.index() == 0
    qtbot.keyClick(editor.editor("memory_gb").lineEdit(), Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: host.memory_gb == 64)


def test_ctrl_z_with_a_pending_edit_stays_the_fields_own(qtbot, form):
    doc, selection, editor = form
    selection.set(["R710-1"])
    model = editor.editor("model")
    before = model.text()
    _type(qtbot, model, "typed", enter=False)
    qtbot.keyClick(model, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(10)
    assert doc.undo_stack.count() == 0 and model.text() != "typed", "the typing was undone, not the bed"
    assert model.text() in (before, "")


def test_escape_reverts_a_refused_entry(qtbot, form):
    doc, selection, editor = form
    selection.set(["R710-1"])
    memory = editor.editor("memory_gb")
    _type(qtbot, memory, "-5")
    assert "at least 0" in editor.message("memory_gb") and memory.text() == "-5"
    qtbot.keyClick(memory.lineEdit(), Qt.Key.Key_Escape)
    assert memory.text() == "48" and editor.message("memory_gb") == ""
    assert doc.undo_stack.count() == 0


def test_at_1366x768_the_legend_is_folded_and_says_how_to_open_it(qtbot, window):
    w = window
    w.resize(1366, 740)
    qtbot.wait(20)
    legend = w.canvas.legend
    assert legend.folded and "Show" in legend.toolTip()
    assert legend.width() * legend.height() < w.canvas.viewport().width() * w.canvas.viewport().height() / 40
    qtbot.mouseClick(legend, Qt.MouseButton.LeftButton)
    assert not legend.folded and "Hide" in legend.toolTip()
    qtbot.mouseClick(legend, Qt.MouseButton.LeftButton)
    assert legend.folded


def test_an_inline_error_is_drawn_under_its_field_not_over_the_next(qtbot, form):
    doc, selection, editor = form
    editor.resize(330, 700)                            # the Properties dock at 1366×768
    selection.set(["R710-1"])
    qtbot.wait(10)
    _type(qtbot, editor.editor("memory_gb"), "-5")
    qtbot.wait(10)
    message = next(b.message for b in editor._bindings if b.path == "memory_gb")
    assert message.isVisible() and message.heightForWidth(message.width()) > message.fontMetrics().lineSpacing()
    host = editor.scroll.widget()
    bottom = message.mapTo(host, message.rect().bottomLeft()).y()
    below = editor.editor("numa_nodes")
    assert bottom < below.mapTo(host, below.rect().topLeft()).y(), "the message overlaps the next field"
    assert message.height() >= message.heightForWidth(message.width())


def test_switching_scenario_clears_the_last_scenarios_message(qtbot, window):
    w = window
    w.tabs.setCurrentWidget(w.placement)
    combo = w.placement.scenario_combo
    qtbot.waitUntil(lambda: combo.count() > 1)
    w.placement.say("Done: moved SQL2008 to R710-1.")
    assert w.placement.message.text()
    combo.setCurrentIndex((combo.currentIndex() + 1) % combo.count())
    assert w.placement.message.text() == "" and w.statusBar().currentMessage() == ""


def test_a_findings_menu_narrows_the_list_and_shows_properties(qtbot, window):
    from widgets.validation_panel import add_finding_entries
    w = window
    panel = w.findings
    qtbot.waitUntil(lambda: bool(panel.findings))
    f = panel.findings[0]
    menu = QMenu(panel)
    add_finding_entries(panel, menu, f)
    trigger(menu, f"Show only {f.code}")
    assert panel.search.text() == f.code
    trigger(menu, f"Properties of {f.subjects[0]}")
    assert w.selection.ids == {f.subjects[0]} and w.properties.shown_subject == f.subjects[0]


# ================================================================================ broken references

@pytest.fixture
def broken_file(tmp_path):
    """The default example with its switch PC5448-1 renamed in its own entry only: every cable to it,
    and the VM placements of a made-up host, name nothing."""
    text = resources.example_path(resources.DEFAULT_EXAMPLE).read_text(encoding="utf-8")
    text = text.replace("- id: PC5448-1", "- id: PC5448-X", 1)
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_with_broken_references_opens_for_repair_with_every_problem_listed(
        qtbot, window, broken_file, monkeypatch):
    import widgets.file_controller as fc
    from topology.errors import BedFileError
    from topology.fileformat import load
    with pytest.raises(BedFileError) as loader:
        load(broken_file)
    shown: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(fc, "show_problems", lambda parent, title, intro, items, choices:
                        shown.append((title, list(items))) or "open")
    w = window
    assert w.open_path(broken_file)
    assert shown[0][0] == "Broken references in broken.yaml"
    assert len(shown[0][1]) == len(loader.value.problems) >= 4, "every problem listed"
    assert w.document.path == broken_file and not w.document.dirty
    links = [lk for lk in w.document.bed.links if "PC5448-1" in (lk.a + lk.b)]
    assert len(links) >= 4, "nothing was dropped on opening"
    assert "PC5448-X" in w.canvas.devices and len(w.canvas.devices) >= 5
    w.document.validation.wait()

    # saving refuses while they are broken ...
    before = broken_file.read_bytes()
    monkeypatch.setattr(fc, "show_problems", lambda parent, title, intro, items, choices:
                        shown.append((title, list(items))) or "cancel")
    w.document.apply(__import__("topology.edits", fromlist=["SetField"]).SetField(w.document.bed.bed, "name", "x"))
    assert w.files.save() is False and broken_file.read_bytes() == before
    assert shown[-1][0] == "Broken references" and len(shown[-1][1]) == len(loader.value.problems)
    # ... until the person chooses to drop them: one undoable step, and the saved file opens anywhere
    monkeypatch.setattr(fc, "show_problems", lambda *a: "drop")
    assert w.files.save() is True
    assert load(broken_file).bed.name == "x"
    assert w.document.undo_stack.undoText().startswith("Drop ")


def test_the_problems_dialog_is_never_taller_than_the_screen(qtbot, window):
    from widgets.problems_dialog import ProblemsDialog
    items = [f"bed.yaml:{i}:3: 'sw-{i}' does not name a device or DEVICE:PORT\n    how to fix: use DEVICE:PORT"
             for i in range(1, 33)]
    dialog = ProblemsDialog(window, "Broken references", "32 problems", items, (("open", "Open to repair"),
                                                                             ("cancel", "Cancel")))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry()
    assert dialog.height() <= screen.height() * 0.8 and dialog.list.count() == 32
    assert dialog.list.verticalScrollBar().maximum() > 0, "the list scrolls"
    qtbot.mouseClick(dialog.buttons["open"], Qt.MouseButton.LeftButton)
    assert dialog.choice == "open"


def test_a_long_error_is_a_scrolling_list(qtbot, window, monkeypatch):
    import widgets.file_controller as fc
    seen = []
    monkeypatch.setattr(fc, "show_problems", lambda parent, title, intro, items, choices: seen.append(items) or "ok")
    text = "\n".join(f"bed.yaml:{i}:1: bad value\n    how to fix: write a number" for i in range(30))
    window.files.error("Cannot open test bed", text)
    assert len(seen) == 1 and len(seen[0]) == 30 and seen[0][0].endswith("how to fix: write a number")


def test_placing_does_not_slide_the_drawing_under_the_mouse(studio):
    """Found in the real-X session: each placement grew the scene and the view slid, so the next
    click landed 200 px from where the person aimed."""
    s = studio
    vp = s.canvas.viewport()
    aims = [QPoint(vp.width() // 2 - 250, 120), QPoint(vp.width() // 2 + 150, 120), QPoint(vp.width() // 2, 380)]
    s.pick("server:hypervisor")
    for aim in aims:
        s.qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=aim)
    for server, aim in zip(s.bed.servers, aims):
        item = s.canvas.devices[server.id]
        centre = s.canvas.mapFromScene(item.mapToScene(item.w / 2, item.h / 2))
        assert (centre - aim).manhattanLength() <= 40, f"{server.id} is not under the click"



def test_ctrl_d_duplicates_the_selection_and_leaves_the_clipboard_alone(qtbot, window):
    from PySide6.QtGui import QGuiApplication
    w = window
    QGuiApplication.clipboard().setText("the person's own text")
    w.selection.set(["R710-1"])
    w.canvas.setFocus()
    servers = len(w.document.bed.servers)
    w.actions_by_name["duplicate"].trigger()
    assert len(w.document.bed.servers) == servers + 1 and w.selection.ids - {"R710-1"}
    assert QGuiApplication.clipboard().text() == "the person's own text"
    assert [k.toString() for k in w.actions_by_name["duplicate"].shortcuts()] == ["Ctrl+D"]
