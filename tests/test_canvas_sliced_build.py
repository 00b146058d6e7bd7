"""A big bed's canvas is built a slice at a time (widgets/canvas/building.py): opening it does not
hold the window, the live validator's findings do not wait for the drawing, and the drawing it
ends with is the one a build in one go makes.  The times are bench.canvas --live-only's."""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.document import Document
from app.selection import Selection
from topology.operations import move
from topology.synthetic import generate
from widgets.canvas.building import SlicedBuild
from widgets.canvas.view import Canvas


def _big_bed():
    # more devices than the canvas routes around (app/diagram/style.py ROUTED_MAX): the build stays quick
    bed = generate(hosts=420, vms=0, arrays=2, disks=24, rack_size=20)
    assert SlicedBuild.builds_in_slices(bed), "the bed must be big enough to be built in slices"
    return bed


def _drawing(canvas: Canvas) -> tuple:
    return (sorted((i, d.pos().x(), d.pos().y(), d.w, d.h) for i, d in canvas.devices.items()),
            sorted((i, c.pos().x(), c.pos().y()) for i, c in canvas.chips.items()),
            sorted(tuple(item.path().boundingRect().getRect()) for item in canvas.links.values()),
            len(canvas.paths))


def test_opening_a_big_bed_leaves_the_window_answering_and_ends_with_the_whole_drawing(qtbot):
    doc = Document()
    canvas = Canvas(doc, Selection())
    qtbot.addWidget(canvas)
    canvas.resize(1000, 700)
    canvas.show()
    bed = _big_bed()
    doc.replace(bed, None)
    assert canvas.building, "the build goes on after the open returns"
    drawn = len(bed.servers) + len(bed.switches) + len(bed.arrays)
    assert len(canvas.devices) < drawn
    answered: list[bool] = []       # a timer set now fires while the build is still going on
    QTimer.singleShot(0, lambda: answered.append(canvas.building))
    seen: list[bool] = []
    doc.validation.findings_changed.connect(lambda _f: seen.append(canvas.building))
    qtbot.waitUntil(lambda: not canvas.building, timeout=60000)
    assert answered == [True]
    qtbot.waitUntil(lambda: bool(seen), timeout=60000)
    assert seen[0], "the findings were shown before the drawing was done, not after it"
    QApplication.processEvents()
    assert len(canvas.devices) == drawn

    at_once = Canvas(doc, Selection())         # the same bed built in one go
    qtbot.addWidget(at_once)
    assert not at_once.building
    assert _drawing(canvas) == _drawing(at_once)


def test_an_edit_while_the_drawing_is_built_finishes_it_first_and_is_drawn(qtbot):
    doc = Document()
    canvas = Canvas(doc, Selection())
    qtbot.addWidget(canvas)
    doc.replace(_big_bed(), None)
    assert canvas.building
    host = doc.bed.servers[0]
    doc.apply(move(doc.bed, {host.id: (12340.0, 5670.0)}))
    assert not canvas.building
    item = canvas.devices[host.id]
    assert (item.pos().x(), item.pos().y()) == (12340.0, 5670.0)
    doc.undo_stack.undo()
    reference = Canvas(doc, Selection())
    qtbot.addWidget(reference)
    assert _drawing(canvas) == _drawing(reference)


def test_another_bed_opened_during_the_build_drops_the_first_one(qtbot):
    doc = Document()
    canvas = Canvas(doc, Selection())
    qtbot.addWidget(canvas)
    doc.replace(_big_bed(), None)
    assert canvas.building
    small = generate(hosts=4, vms=4, arrays=1, disks=8)
    doc.replace(small, None)
    assert not canvas.building
    assert set(canvas.devices) == {d.id for d in (*small.servers, *small.switches, *small.arrays)}
    QApplication.processEvents()
    assert set(canvas.devices) == {d.id for d in (*small.servers, *small.switches, *small.arrays)}
