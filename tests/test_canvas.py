"""The canvas and the palette, driven with the mouse and keyboard the way a person would:
build a small bed from nothing, cable it, move, copy, delete, undo, export, and look at
the example beds."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QDropEvent, QImage, QKeySequence, QMouseEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QSplitter

from app.document import Document
from app.selection import Selection
from topology import layout, operations
from topology.fileformat import dumps
from topology.model import Switch
from widgets.canvas.placing import KIND_MIME
from widgets.canvas.view import Canvas
from widgets.palette import Palette

IMAGES = Path("/tmp/testbed-canvas")


class Studio:
    """A window with the palette and the canvas side by side, as the main window has them."""

    def __init__(self, qtbot, document: Document):
        self.qtbot = qtbot
        self.document = document
        self.selection = Selection()
        self.window = QMainWindow()
        split = QSplitter(self.window)
        self.palette = Palette(document, self.selection, split)
        self.canvas = Canvas(document, self.selection, split)
        split.addWidget(self.palette)
        split.addWidget(self.canvas)
        split.setSizes([220, 1000])
        self.window.setCentralWidget(split)
        self.window.resize(1300, 850)
        qtbot.addWidget(self.window)
        self.window.show()
        qtbot.waitExposed(self.window)

    @property
    def bed(self):
        return self.document.bed

    @property
    def status(self) -> str:
        return self.window.statusBar().currentMessage()

    # ------------------------------------------------------------------ a person's hands
    def view_pos(self, scene: QPointF) -> QPoint:
        return self.canvas.mapFromScene(scene)

    def mouse(self, kind: QEvent.Type, scene: QPointF, *, button=Qt.MouseButton.LeftButton,
              buttons=Qt.MouseButton.LeftButton, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
        vp = self.canvas.viewport()
        pos = QPointF(self.view_pos(scene))
        event = QMouseEvent(kind, pos, QPointF(vp.mapToGlobal(pos.toPoint())), button, buttons, modifiers)
        QApplication.sendEvent(vp, event)

    def click(self, scene: QPointF, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
        self.qtbot.mouseClick(self.canvas.viewport(), Qt.MouseButton.LeftButton, modifiers, self.view_pos(scene))

    def drag(self, start: QPointF, end: QPointF, steps: int = 6, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
        self.mouse(QEvent.Type.MouseButtonPress, start, modifiers=modifiers)
        for i in range(1, steps + 1):
            self.mouse(QEvent.Type.MouseMove, start + (end - start) * (i / steps), button=Qt.MouseButton.NoButton,
                       modifiers=modifiers)
        self.mouse(QEvent.Type.MouseButtonRelease, end, buttons=Qt.MouseButton.NoButton, modifiers=modifiers)

    def pick(self, key: str) -> None:
        item = self.palette.item_for(key)
        rect = self.palette.list.visualItemRect(item)
        self.qtbot.mouseClick(self.palette.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())

    def place(self, key: str, scene: QPointF) -> str:
        """One component: pick the kind, click the diagram, Escape (the kind stays armed until then)."""
        before = operations.taken_ids(self.bed)
        self.pick(key)
        assert self.canvas.armed == key
        self.click(scene)
        self.key(Qt.Key.Key_Escape)
        (new,) = operations.taken_ids(self.bed) - before
        return new

    def port(self, ref: str) -> QPointF:
        dev, _, name = ref.rpartition(":")
        item = self.canvas.devices[dev]
        return item.mapToScene(item.marks[name].rect.center())

    def centre(self, ident: str) -> QPointF:
        item = self.canvas.devices[ident]
        if isinstance(self.canvas.objects.get(ident), Switch):
            # beside the port strip, which expands under a dragged cable: the switch's body
            return item.mapToScene(QPointF(item.w - 6, 14))
        return item.mapToScene(QPointF(item.w / 2, 14))   # on the name: not a port, not a VM chip

    def key(self, sequence: QKeySequence.StandardKey | Qt.Key) -> None:
        if isinstance(sequence, Qt.Key):
            self.qtbot.keyClick(self.canvas, sequence)
            return
        combo = QKeySequence(sequence)[0]
        self.qtbot.keyClick(self.canvas, combo.key(), combo.keyboardModifiers())


@pytest.fixture
def studio(qtbot) -> Studio:
    return Studio(qtbot, Document())


@pytest.fixture
def small(studio) -> Studio:
    """Two hosts, two switches and an array, placed with the palette; four iSCSI cables drawn by mouse."""
    s = studio
    s.place("server:hypervisor", QPointF(120, 80))
    s.place("server:hypervisor", QPointF(420, 80))
    s.place("switch:ethernet", QPointF(120, 330))
    s.place("switch:ethernet", QPointF(420, 330))
    s.place("array", QPointF(270, 520))
    for a, b in (("host-1:SAN1", "sw-1"), ("host-1:SAN2", "sw-2"), ("host-2:SAN1", "sw-1"), ("host-2:SAN2", "sw-2")):
        s.drag(s.port(a), s.centre(b))
    return s


# ================================================================================ building

def test_build_a_bed_from_an_empty_canvas(small):
    s = small
    bed = s.bed
    assert [x.id for x in bed.servers] == ["host-1", "host-2"]
    assert [x.id for x in bed.switches] == ["sw-1", "sw-2"]
    assert [x.id for x in bed.arrays] == ["array-1"]
    # dropped on the switch bodies, each cable took the next free port of its switch
    assert [(lk.a, lk.b) for lk in bed.links] == [("host-1:SAN1", "sw-1:1"), ("host-1:SAN2", "sw-2:1"),
                                                   ("host-2:SAN1", "sw-1:2"), ("host-2:SAN2", "sw-2:2")]
    # each placement and each cable was one undoable step
    assert s.document.undo_stack.count() == 9
    # placed where clicked (centred, on the grid)
    host = bed.servers[0]
    assert (host.x, host.y) == (40.0, 40.0)
    assert host.x % 20 == 0 and host.y % 20 == 0
    # the canvas shows what the model holds
    assert set(s.canvas.devices) == {"host-1", "host-2", "sw-1", "sw-2", "array-1"}
    assert len(s.canvas.links) == 4 and all(i.isVisible() for i in s.canvas.links.values())
    assert s.canvas.cabled["host-1"] == {"SAN1", "SAN2"}
    assert s.status.startswith("Connect host-2:SAN2 to sw-2")


def test_placing_selects_the_new_device_and_escape_cancels(studio):
    s = studio
    new = s.place("switch:fc", QPointF(200, 200))
    assert s.selection.ids == {new} and s.canvas.devices[new].isSelected()
    s.pick("server:load_client")
    s.key(Qt.Key.Key_Escape)
    assert s.canvas.armed is None
    s.click(QPointF(500, 200))
    assert [x.id for x in s.bed.servers] == []


def test_drop_from_the_palette(studio):
    s = studio
    mime = QMimeData()
    mime.setData(KIND_MIME, b"server:infrastructure")
    pos = QPointF(s.view_pos(QPointF(300, 300)))
    for kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
        from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent
        cls = QDragEnterEvent if kind == QEvent.Type.DragEnter else QDragMoveEvent
        event = cls(pos.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(s.canvas.viewport(), event)
        assert event.isAccepted()
    drop = QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(s.canvas.viewport(), drop)
    assert [x.id for x in s.bed.servers] == ["infra-1"]
    assert s.canvas.devices["infra-1"].sceneBoundingRect().contains(QPointF(300, 300))


def test_vm_dropped_on_a_host_shows_as_a_chip_inside_it(small):
    s = small
    height = s.canvas.devices["host-2"].h
    vm = s.place("vm", s.centre("host-2"))
    assert next(v for v in s.bed.vms if v.id == vm).host == "host-2"
    assert [v.id for v in s.canvas.vms_of["host-2"]] == [vm]
    item = s.canvas.devices["host-2"]
    assert item.h > height                      # the host grew a row of VM chips
    from app.diagram import vm_chip_rects
    s.click(item.mapToScene(vm_chip_rects(item.w - 8, 1)[0].center()))
    assert s.selection.ids == {vm}
    assert not item.isSelected() and vm in s.canvas.highlight


def test_a_selected_vm_chip_is_deleted_with_the_delete_key(small):
    s = small
    vm = s.place("vm", s.centre("host-1"))
    item = s.canvas.devices["host-1"]
    from app.diagram import vm_chip_rects
    s.click(item.mapToScene(vm_chip_rects(item.w - 8, 1)[0].center()))
    assert s.selection.ids == {vm}
    s.key(QKeySequence.StandardKey.Delete)
    assert vm not in {v.id for v in s.bed.vms}
    assert s.canvas.vms_of.get("host-1", []) == []


def test_enclosure_must_be_dropped_on_an_array(small):
    s = small
    s.pick("enclosure")
    s.click(QPointF(900, 700))
    assert "storage array" in s.status
    assert s.canvas.armed == "enclosure", "a refused click leaves the kind armed for the next try"
    s.click(s.centre("array-1"))
    assert len(s.bed.arrays[0].enclosures) == 2


# ================================================================================ cabling

@pytest.mark.parametrize("a, b, reason", [
    ("host-1:HB1", "array-1:A0", "carries heartbeat"),
    ("host-1:SAN1", "host-1:SAN2", "Both ends are on host-1"),
    ("host-1:SAN1", "sw-2", "already cabled to sw-1"),
])
def test_refused_link_says_why_and_draws_nothing(small, a, b, reason):
    s = small
    before = dumps(s.bed)
    steps = s.document.undo_stack.count()
    target = s.port(b) if ":" in b else s.centre(b)
    s.drag(s.port(a), target)
    assert reason in s.status
    assert s.canvas.last_message == s.status
    assert dumps(s.bed) == before and s.document.undo_stack.count() == steps
    assert len(s.canvas.links) == 4
    assert s.canvas._link_line is None          # the rubber line is gone


def test_link_released_on_nothing_is_not_made(small):
    s = small
    before = dumps(s.bed)
    s.drag(s.port("host-1:LAN1"), QPointF(900, 900))
    assert "release the mouse over a port" in s.status
    assert dumps(s.bed) == before


def test_click_a_cable_and_delete_it(small):
    s = small
    item = next(i for i in s.canvas.links.values() if i.model_obj.a == "host-1:SAN1")
    poly = item.polyline
    middle = (poly.at(1) + poly.at(2)) / 2
    s.click(middle)
    assert item.selected
    s.key(QKeySequence.StandardKey.Delete)
    assert ("host-1:SAN1", "sw-1:1") not in {(lk.a, lk.b) for lk in s.bed.links}
    assert len(s.canvas.links) == 3
    s.document.undo_stack.undo()
    assert len(s.canvas.links) == 4


# ================================================================================ moving, selecting

def test_drag_moves_the_whole_selection_as_one_step(small):
    s = small
    # rubber band around both hosts, starting on empty canvas
    s.drag(QPointF(0, 10), QPointF(640, 170))
    assert s.selection.ids == {"host-1", "host-2"}
    before = dumps(s.bed)
    steps = s.document.undo_stack.count()
    start = {h.id: (h.x, h.y) for h in s.bed.servers}
    s.drag(s.centre("host-1"), s.centre("host-1") + QPointF(63, 41))
    assert s.document.undo_stack.count() == steps + 1
    moved = {h.id: (h.x, h.y) for h in s.bed.servers}
    for ident in ("host-1", "host-2"):
        assert moved[ident] == (start[ident][0] + 60, start[ident][1] + 40)   # snapped to the 20 px grid
        assert s.canvas.devices[ident].pos() == QPointF(*moved[ident])
    # the cables followed their hosts
    link = next(i for i in s.canvas.links.values() if i.model_obj.a == "host-1:SAN1")
    port = s.port("host-1:SAN1")
    assert link.polyline.at(0) == port + QPointF(0, link.polyline.at(0).y() - port.y())
    s.document.undo_stack.undo()
    assert dumps(s.bed) == before
    assert s.canvas.devices["host-1"].pos() == QPointF(*start["host-1"])


def test_grid_toggle_allows_free_positions(small):
    s = small
    s.canvas.toggle_grid()
    assert not s.canvas.grid_enabled
    s.click(s.centre("sw-1"))
    x0 = s.bed.switches[0].x
    s.drag(s.centre("sw-1"), s.centre("sw-1") + QPointF(13, 0))
    assert s.bed.switches[0].x == pytest.approx(x0 + 13, abs=1.0)


def test_selection_follows_other_views_and_back(small):
    s = small
    s.selection.set({"sw-2"})
    assert [i.ident for i in s.canvas.scene().selectedItems()] == ["sw-2"]
    s.click(s.centre("array-1"))
    assert s.selection.ids == {"array-1"}
    s.selection.set({"host-1:SAN2"})     # a port: its device shows it, nothing else is selected
    assert s.canvas.scene().selectedItems() == []
    assert "host-1:SAN2" in s.canvas.highlight
    s.key(QKeySequence.StandardKey.SelectAll)
    assert s.selection.ids == {"host-1", "host-2", "sw-1", "sw-2", "array-1"}


def test_centre_on_brings_a_device_into_view(small):
    s = small
    s.canvas.scale(3, 3)
    s.canvas.centerOn(QPointF(-2000, -2000))
    s.selection.focus({"array-1"})
    visible = s.canvas.mapToScene(s.canvas.viewport().rect()).boundingRect()
    assert visible.contains(s.canvas.devices["array-1"].sceneBoundingRect().center())
    assert s.canvas.devices["array-1"].isSelected()


def test_zoom_and_fit(small):
    s = small
    z = s.canvas.zoom()
    s.canvas.zoom_in()
    assert s.canvas.zoom() == pytest.approx(z * 1.25)
    s.canvas.zoom_out()
    s.canvas.zoom_out()
    assert s.canvas.zoom() == pytest.approx(z / 1.25)
    from PySide6.QtGui import QWheelEvent
    vp = s.canvas.viewport()
    centre = QPointF(vp.rect().center())
    wheel = QWheelEvent(centre, QPointF(vp.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.ControlModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(vp, wheel)
    assert s.canvas.zoom() > z / 1.25 * 1.3
    s.canvas.fit()
    visible = s.canvas.mapToScene(vp.rect()).boundingRect()
    for item in s.canvas.devices.values():
        assert visible.contains(item.sceneBoundingRect())


def test_middle_button_pans(small):
    s = small
    s.canvas.scale(2, 2)
    before = s.canvas.mapToScene(s.canvas.viewport().rect().center())
    start = s.canvas.mapToScene(QPoint(300, 300))
    s.mouse(QEvent.Type.MouseButtonPress, start, button=Qt.MouseButton.MiddleButton,
            buttons=Qt.MouseButton.MiddleButton)
    s.mouse(QEvent.Type.MouseMove, s.canvas.mapToScene(QPoint(200, 250)), button=Qt.MouseButton.NoButton,
            buttons=Qt.MouseButton.MiddleButton)
    s.mouse(QEvent.Type.MouseButtonRelease, s.canvas.mapToScene(QPoint(200, 250)), button=Qt.MouseButton.MiddleButton,
            buttons=Qt.MouseButton.NoButton)
    after = s.canvas.mapToScene(s.canvas.viewport().rect().center())
    assert after.x() > before.x() + 30 and after.y() > before.y() + 15


def test_space_and_drag_pans_without_moving_anything(small):
    s = small
    s.canvas.scale(2, 2)
    text = dumps(s.bed)
    before = s.canvas.mapToScene(s.canvas.viewport().rect().center())
    s.qtbot.keyPress(s.canvas, Qt.Key.Key_Space)
    s.drag(s.centre("host-1"), s.centre("host-1") + QPointF(-60, -40))    # even when starting on a device
    s.qtbot.keyRelease(s.canvas, Qt.Key.Key_Space)
    after = s.canvas.mapToScene(s.canvas.viewport().rect().center())
    assert after.x() > before.x() + 20 and after.y() > before.y() + 10
    assert dumps(s.bed) == text


def test_an_edit_from_another_view_redraws_the_device(small):
    s = small
    from topology.edits import SetField
    port = next(p for ad in s.bed.servers[0].adapters for p in ad.ports if p.name == "SAN1")
    link = next(i for i in s.canvas.links.values() if i.model_obj.a == "host-1:SAN1")
    assert link.role == "iscsi"
    s.document.apply(SetField(port, "roles", ["lan"], owner="host-1"))
    assert s.canvas.devices["host-1"].marks["SAN1"].role == "lan"
    assert link.role == "lan"
    s.document.apply(SetField(s.bed.switches[0], "id", "core-1"))       # a rename
    assert "core-1" in s.canvas.devices and "sw-1" not in s.canvas.devices


# ================================================================================ undo, clipboard, delete

def test_undo_and_redo_through_every_step_restore_the_exact_model(studio):
    s = studio
    texts = [dumps(s.bed)]

    def step(action):
        action()
        texts.append(dumps(s.bed))

    step(lambda: s.place("server:hypervisor", QPointF(120, 80)))
    step(lambda: s.place("server:hypervisor", QPointF(420, 80)))
    step(lambda: s.place("switch:ethernet", QPointF(270, 330)))
    step(lambda: s.place("array", QPointF(270, 520)))
    step(lambda: s.drag(s.port("host-1:SAN1"), s.centre("sw-1")))
    step(lambda: s.drag(s.port("array-1:A0"), s.centre("sw-1")))
    step(lambda: s.drag(s.centre("host-2"), s.centre("host-2") + QPointF(80, 20)))
    step(lambda: (s.click(s.centre("host-1")), s.key(QKeySequence.StandardKey.Copy),
                  s.key(QKeySequence.StandardKey.Paste)))
    step(lambda: (s.click(s.centre("sw-1")), s.key(QKeySequence.StandardKey.Delete)))
    step(s.canvas.auto_layout)
    stack = s.document.undo_stack
    assert stack.count() == len(texts) - 1
    for expected in reversed(texts[:-1]):
        stack.undo()
        assert dumps(s.bed) == expected
        assert set(s.canvas.devices) == {d.id for d in (*s.bed.servers, *s.bed.switches, *s.bed.arrays)}
        assert len(s.canvas.links) == len(s.bed.links)
    for expected in texts[1:]:
        stack.redo()
        assert dumps(s.bed) == expected
        for d in (*s.bed.servers, *s.bed.switches, *s.bed.arrays):
            if d.x is not None:
                assert s.canvas.devices[d.id].pos() == QPointF(d.x, d.y)


def test_copy_paste_with_the_cable_between(small):
    s = small
    s.click(s.centre("host-1"))
    s.click(s.centre("sw-1"), Qt.KeyboardModifier.ControlModifier)
    assert s.selection.ids == {"host-1", "sw-1"}
    s.key(QKeySequence.StandardKey.Copy)
    assert "host-1" in QApplication.clipboard().text()
    steps = s.document.undo_stack.count()
    s.key(QKeySequence.StandardKey.Paste)
    assert s.document.undo_stack.count() == steps + 1
    assert s.selection.ids == {"host-3", "sw-3"}
    assert ("host-3:SAN1", "sw-3:1") in {(lk.a, lk.b) for lk in s.bed.links}
    h1, h3 = (next(h for h in s.bed.servers if h.id == i) for i in ("host-1", "host-3"))
    assert (h3.x - h1.x, h3.y - h1.y) == (40, 40)
    s.key(QKeySequence.StandardKey.Paste)                 # a second paste lands further along
    h4 = next(h for h in s.bed.servers if h.id == "host-4")
    assert (h4.x - h1.x, h4.y - h1.y) == (80, 80)


def test_paste_of_foreign_text_says_so(small):
    s = small
    QApplication.clipboard().setText("just some words")
    before = dumps(s.bed)
    s.key(QKeySequence.StandardKey.Paste)
    assert "no test-bed components" in s.status
    assert dumps(s.bed) == before


def test_cut_and_delete_remove_the_cables_too(small):
    s = small
    s.click(s.centre("sw-1"))
    s.key(QKeySequence.StandardKey.Delete)
    assert "sw-1" not in {x.id for x in s.bed.switches}
    assert [(lk.a, lk.b) for lk in s.bed.links] == [("host-1:SAN2", "sw-2:1"), ("host-2:SAN2", "sw-2:2")]
    assert len(s.canvas.links) == 2 and "sw-1" not in s.canvas.devices
    assert s.canvas.cabled["host-1"] == {"SAN2"}
    s.document.undo_stack.undo()
    assert len(s.canvas.links) == 4 and "sw-1" in s.canvas.devices
    s.click(s.centre("host-2"))
    s.key(QKeySequence.StandardKey.Cut)
    assert "host-2" not in {x.id for x in s.bed.servers}
    assert "host-2" in QApplication.clipboard().text()
    assert len(s.bed.links) == 2


# ================================================================================ findings

def test_findings_mark_the_devices(qtbot, examples_dir):
    doc = Document()
    s = Studio(qtbot, doc)
    doc.open(examples_dir / "equallogic-ps6110-hyperv.yaml")
    qtbot.waitUntil(lambda: bool(s.canvas.badges), timeout=10000)
    findings = doc.validation.findings
    host = s.canvas.badges["R720-1"]
    errors = [f for f in findings if "R720-1" in f.subjects and f.severity == "error" and not f.accepted]
    assert host.severity == "error" and errors and host.count >= len(errors)
    text = s.canvas._tooltip(s.centre("R720-1"))
    assert errors[0].code in text


# ================================================================================ export and looks

def _ink(image: QImage) -> tuple[int, int]:
    """(pixels that are not white, pixels in the iSCSI colour) on a sampling grid."""
    iscsi = QColor("#0b6fc0")
    ink = blue = 0
    for y in range(0, image.height(), 3):
        for x in range(0, image.width(), 3):
            c = image.pixelColor(x, y)
            if (c.red(), c.green(), c.blue()) != (255, 255, 255):
                ink += 1
            if all(abs(a - b) < 30 for a, b in ((c.red(), iscsi.red()), (c.green(), iscsi.green()),
                                                (c.blue(), iscsi.blue()))):
                blue += 1
    return ink, blue


def test_export_png_and_svg(small, tmp_path):
    s = small
    png = tmp_path / "bed.png"
    size = s.canvas.export_png(png)
    image = QImage(str(png))
    assert not image.isNull() and (image.width(), image.height()) == (size.width(), size.height())
    assert image.width() >= 1200 and image.height() >= 900       # 2 px per unit: report quality
    ink, blue = _ink(image)
    assert ink > 2000 and blue > 50
    svg = tmp_path / "bed.svg"
    s.canvas.export_svg(svg)
    root = ET.parse(svg).getroot()
    texts = " ".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("text"))
    for ident in ("host-1", "host-2", "sw-1", "array-1", "Legend", "iSCSI (SAN)"):
        assert ident in texts


def test_print_to_pdf(small, tmp_path):
    from PySide6.QtPrintSupport import QPrinter
    printer = QPrinter(QPrinter.PrinterMode.HighResolution)
    printer.setOutputFormat(QPrinter.OutputFormat.PdfFormat)
    pdf = tmp_path / "bed.pdf"
    printer.setOutputFileName(str(pdf))
    small.canvas.print_to(printer)
    assert pdf.stat().st_size > 5000
    import shutil
    import subprocess
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
        assert "host-1" in text and "array-1" in text


@pytest.mark.parametrize("name", ["md3000i-hyperv-cluster", "equallogic-ps6110-hyperv", "ams2500-exchange-esrp"])
def test_example_beds_are_drawn_readably(qtbot, examples_dir, name):
    doc = Document()
    s = Studio(qtbot, doc)
    doc.open(examples_dir / f"{name}.yaml")
    bed = doc.bed
    canvas = s.canvas
    assert set(canvas.devices) == {d.id for d in (*bed.servers, *bed.switches, *bed.arrays, *bed.chassis)}
    assert len(canvas.links) == len(bed.links)
    boxes = canvas.current_boxes()
    assert layout.overlapping(boxes) == []
    # tiers: every host sits above every switch, every switch above every array
    hosts = [boxes[x.id] for x in bed.servers if x.role in ("hypervisor", "application")]
    switches = [boxes[x.id] for x in bed.switches]
    arrays = [boxes[x.id] for x in bed.arrays]
    if hosts and switches:
        assert max(b.y + b.h for b in hosts) < min(b.y for b in switches)
    if switches and arrays:
        assert max(b.y + b.h for b in switches) < min(b.y for b in arrays)
    # opening does not make the document "modified"
    assert not doc.dirty
    IMAGES.mkdir(exist_ok=True)
    size = canvas.export_png(IMAGES / f"{name}.png")
    assert size.width() > 800
    canvas.setTransform(canvas.transform().fromScale(1, 1))     # 100 %: the labels at their true size
    canvas.centerOn(canvas.devices[bed.servers[0].id].sceneBoundingRect().center())
    grab = canvas.grab()
    assert grab.save(str(IMAGES / f"{name}-canvas-100.png"))
    ink, _blue = _ink(grab.toImage())
    assert ink > 500
