"""A big bed seen from far away (issue 32): the view keeps its one-pass drawing of the devices as
a picture, so a repaint that changes nothing drawn (a finding's badge elsewhere, a tool tip, a
window over it) blits it instead of drawing thousands of devices again; a move, an edit, the
selection, the badges and the zoom draw it afresh, and the screen shows what changed."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QPointF
from PySide6.QtWidgets import QApplication

from app import diagram
from app.document import Document
from app.selection import Selection
from topology.operations import move
from topology.synthetic import generate
from widgets.canvas.far_drawing import FAR_ZOOM
from widgets.canvas.view import Canvas

SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"


def _far_canvas(qtbot) -> Canvas:
    doc = Document(generate(hosts=60, vms=0, arrays=1, disks=8, rack_size=20))
    canvas = Canvas(doc, Selection())
    qtbot.addWidget(canvas)
    canvas.resize(400, 300)       # the devices too small on screen for their names
    with qtbot.waitExposed(canvas):
        canvas.show()
    canvas.fit()
    QApplication.processEvents()
    assert canvas.zoom() < FAR_ZOOM
    return canvas


def _count_passes(canvas: Canvas) -> list[float]:
    """Each drawing pass: the share of the view it drew (1.0: all of it)."""
    passes: list[float] = []
    draw = canvas._draw_devices

    def counted(painter, exposed, devices):
        view = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
        shown = exposed.intersected(view)
        passes.append(shown.width() * shown.height() / (view.width() * view.height()))
        draw(painter, exposed, devices)
    canvas._draw_devices = counted
    return passes


def _colour_at_centre(canvas: Canvas, ident: str) -> str:
    item = canvas.devices[ident]
    centre = canvas.mapFromScene(item.pos() + QPointF(item.w / 2, item.h / 2))
    return canvas.viewport().grab().toImage().pixelColor(centre).name()


def test_a_repaint_that_changes_nothing_drawn_does_not_draw_the_devices_again(qtbot):
    canvas = _far_canvas(qtbot)
    passes = _count_passes(canvas)
    first = canvas.viewport().grab().toImage()
    for _ in range(3):
        canvas.viewport().repaint()
    canvas.viewport().update(0, 0, 40, 40)       # a small piece of it, as a badge or a tool tip asks
    QApplication.processEvents()
    assert len(passes) <= 1, f"{len(passes)} passes for the same picture"
    assert canvas.viewport().grab().toImage() == first, "the blitted picture is the drawn one"


def test_moving_a_far_device_draws_the_picture_again_with_the_device_at_its_new_place(qtbot):
    canvas = _far_canvas(qtbot)
    before = canvas.viewport().grab().toImage()
    passes = _count_passes(canvas)
    doc = canvas.document
    host = canvas.devices["host5"]
    fill = diagram.body_style(canvas.objects["host5"])[0].name()
    assert _colour_at_centre(canvas, "host5") == fill
    doc.apply(move(doc.bed, {"host5": (host.pos().x() + host.w / 2, host.pos().y() + host.h * 2)}))
    qtbot.wait(50)          # the view repaints where the device and its cables were and are
    moved = canvas.viewport().grab().toImage()
    SHOTS.mkdir(parents=True, exist_ok=True)
    moved.save(str(SHOTS / "far-picture-after-move.png"))
    assert passes, "the move drew the devices again"
    assert moved != before
    assert _colour_at_centre(canvas, "host5") == fill, "the device is drawn at its new place"
    canvas.far_changed()            # drawn afresh, the picture is the same: the kept one was not stale
    canvas.viewport().repaint()
    assert canvas.viewport().grab().toImage() == moved
    # a device changed in place (its badge, as the findings do) is drawn again in its own area
    count = len(passes)
    host7 = canvas.devices["host7"]
    canvas.badges = {**canvas.badges, "host7": diagram.Badge("error", 1)}
    host7.update()
    # its area repainted, though the item has no contents of its own far away
    qtbot.waitUntil(lambda: len(passes) > count, timeout=5000)
    assert len(passes) == count + 1 and passes[-1] < 0.1, f"drew {passes[-1]:.0%} of the view for one device"
    badged = canvas.viewport().grab().toImage()
    assert len(passes) == count + 1, "the grab blits it"
    corner = badged.pixelColor(canvas.mapFromScene(host7.pos() + QPointF(host7.w - 8, 5)))
    assert corner.red() > corner.green() + 60, f"the badge is on screen ({corner.name()})"
    canvas.far_changed()
    canvas.viewport().repaint()
    assert canvas.viewport().grab().toImage() == badged, "the piece drawn again matches a whole drawing"
    # the selection and the zoom draw it whole
    for change in (lambda: host7.setSelected(True), lambda: canvas.scale(1.1, 1.1)):
        count = len(passes)
        change()
        QApplication.processEvents()
        canvas.viewport().grab()
        assert len(passes) == count + 1 and passes[-1] == 1.0


class _Paints(QObject):
    """The viewport's paint events: how many rectangles each one's region has."""

    def __init__(self, viewport):
        super().__init__()
        self.rects: list[int] = []
        viewport.installEventFilter(self)

    def eventFilter(self, _obj, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.rects.append(event.region().rectCount())
        return False


def test_an_edit_that_moves_far_devices_repaints_once_in_one_rectangle(qtbot):
    # the devices' old and new places join their cables' areas in the view's one repaint rectangle:
    # a region of several made the raster engine clip every span it painted there (+40 ms per edit
    # on the 5,000-device bed), and a repaint of their own was a second paint in the edit's turn
    canvas = _far_canvas(qtbot)
    doc = canvas.document
    paints = _Paints(canvas.viewport())
    first, last = canvas.devices["host1"], canvas.devices["host58"]
    doc.apply(move(doc.bed, {"host1": (first.pos().x() + first.w, first.pos().y()),
                             "host58": (last.pos().x() - last.w, last.pos().y())}))
    qtbot.wait(50)
    assert paints.rects == [1], f"paints after the move (rectangles in each): {paints.rects}"
    for ident in ("host1", "host58"):
        assert _colour_at_centre(canvas, ident) == diagram.body_style(canvas.objects[ident])[0].name()


def test_a_badged_device_moved_over_another_is_drawn_over_it(qtbot):
    # as when the badged devices were painted one by one after the plain ones
    canvas = _far_canvas(qtbot)
    doc = canvas.document
    under = canvas.devices["host4"]
    doc.apply(move(doc.bed, {"host3": (under.pos().x() - under.w / 2, under.pos().y() + under.h / 4)}))
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=10000)  # its badges are in
    canvas.badges = {**canvas.badges, "host3": diagram.Badge("error", 1)}
    canvas.devices["host3"].update()
    qtbot.wait(20)
    over = canvas.devices["host3"]
    # the plain device's left edge, where it runs under the badged device's body
    edge = canvas.mapFromScene(QPointF(under.pos().x(), over.pos().y() + over.h * 0.6))
    fill = diagram.body_style(canvas.objects["host3"])[0].name()
    assert canvas.viewport().grab().toImage().pixelColor(edge).name() == fill


def test_a_device_changed_in_place_is_drawn_again_reading_only_the_places_of_the_devices_there(
        qtbot, monkeypatch):
    # reading every device item's place from Python was 7-10 ms of each such repaint on the
    # 5,000-device bed, after every edit
    from PySide6.QtWidgets import QGraphicsItem

    from widgets.canvas.items import DeviceItem
    canvas = _far_canvas(qtbot)
    assert len(canvas.devices) > 64
    passes = _count_passes(canvas)
    read: list[str] = []
    monkeypatch.setattr(DeviceItem, "x", lambda item: (read.append(item.ident), QGraphicsItem.x(item))[1])
    host7 = canvas.devices["host7"]
    canvas.badges = {**canvas.badges, "host7": diagram.Badge("error", 1)}
    host7.update()
    qtbot.waitUntil(lambda: bool(passes), timeout=5000)
    assert passes[-1] < 0.1 and "host7" in read and len(read) < 10, (passes, read)
    badged = canvas.viewport().grab().toImage()
    canvas.far_changed()
    canvas.viewport().repaint()
    assert canvas.viewport().grab().toImage() == badged, "the piece drawn again matches a whole drawing"
