"""Big beds (issue 32, item 10): a bed that takes long to open shows a splash with its progress
until the window has drawn it; VM placement builds only the host cards in view and Methodology
asks only for the step rows in view, so a first visit costs what the screen shows, not what the
bed holds.  The times themselves are bench.big_bed_gui's (targets live in benchmarks)."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

import resources
from app.document import Document
from app.selection import Selection
from topology.fileformat import load
from topology.synthetic import generate
from widgets import open_progress
from widgets.methodology_steps import StepModel
from widgets.methodology_view import MethodologyView
from widgets.placement_cards import HostCard
from widgets.placement_view import PlacementView

SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"


@pytest.fixture
def window(laptop_window):
    return laptop_window


def test_opening_a_big_bed_shows_each_stage_until_the_diagram_is_drawn(qtbot, window, monkeypatch):
    seen: list[tuple[str, bool, str]] = []       # stage, splash on screen, the bed the window had then
    splashes: list[open_progress.OpenProgress] = []
    stage = open_progress.OpenProgress.stage

    def watched(self, key):
        before = self.key
        stage(self, key)
        if self not in splashes:
            splashes.append(self)
        if self.key != before:
            seen.append((key, self.isVisible(), window.document.bed.bed.name))
    monkeypatch.setattr(open_progress.OpenProgress, "stage", watched)
    example = resources.example_path("md3000i-hyperv-cluster")
    small = example.stat().st_size
    assert small < open_progress.BIG_BED_BYTES
    assert window.open_path(example)             # a small bed opens before a splash would be seen
    assert not splashes

    monkeypatch.setattr(open_progress, "BIG_BED_BYTES", small)       # this one counts as big now
    before = window.document.bed.bed.name
    assert window.open_path(resources.example_path("equallogic-ps6110-hyperv"))
    assert [key for key, _on, _bed in seen] == ["reading", "model", "validation", "drawing"]
    assert all(on for _key, on, _bed in seen), "the splash is on screen at every stage"
    assert [bed for _key, _on, bed in seen][:3] == [before] * 3     # the old bed until the new one is built
    splash = splashes[0]
    SHOTS.mkdir(parents=True, exist_ok=True)
    splash.grab().save(str(SHOTS / "open-progress-splash.png"))
    assert splash.text.startswith("Drawing") and "equallogic-ps6110-hyperv.yaml" in splash.name
    qtbot.waitUntil(lambda: splash.closed, timeout=10000)     # gone once the diagram has painted
    assert not _splash_on_screen()


def _splash_on_screen() -> bool:
    return any(isinstance(w, open_progress.OpenProgress) and w.isVisible() for w in QApplication.topLevelWidgets())


def test_a_bed_that_cannot_be_read_closes_its_splash_before_the_message(qtbot, window, monkeypatch, tmp_path):
    import widgets.file_controller as file_controller
    shown: list[tuple[str, bool]] = []      # the message, and whether a splash sat over it
    monkeypatch.setattr(file_controller.QMessageBox, "critical",
                        lambda parent, title, text, *a, **k: shown.append((text, _splash_on_screen())))
    monkeypatch.setattr(open_progress, "BIG_BED_BYTES", 1)
    bad = tmp_path / "bad.yaml"
    bad.write_text("format_version: 1\nbed: {name: x}\nservers: [{id: 'a/b', role: nas}]\n", encoding="utf-8")
    assert not window.open_path(bad)
    assert len(shown) == 1 and "bad.yaml" in shown[0][0]
    assert shown[0][1] is False, "the splash closed before the message"
    assert not _splash_on_screen()


def test_vm_placement_builds_only_the_host_cards_in_view(qtbot):
    bed = generate(hosts=300, vms=300, arrays=2, disks=48, rack_size=20)
    doc = Document(bed)
    view = PlacementView(doc, Selection())
    qtbot.addWidget(view)
    view.resize(1000, 700)
    with qtbot.waitExposed(view):
        view.show()
    hosts = list(view.cards)
    assert len(hosts) == 300 and "300 VMs on 300 of 300 hosts" in view.summary.text()
    built = view.board.findChildren(HostCard)
    assert 3 <= len(built) <= 12, len(built)             # the cards in view and a couple beside them
    last = hosts[-1]
    assert last not in {c.host_id for c in built}
    bar = view.scroll.horizontalScrollBar()
    bar.setValue(bar.maximum())                           # scrolled to the end: its cards are built
    QApplication.processEvents()
    card = next(c for c in view.board.findChildren(HostCard) if c.host_id == last and c.isVisible())
    corner = card.mapTo(view.scroll.viewport(), card.rect().topLeft())
    assert view.scroll.viewport().rect().contains(corner)
    assert card.ram_bar.text.startswith("RAM ") and [c.vm_id for c in card.chips] == \
        view.loads[last]["vms"]
    assert hosts[0] not in {c.host_id for c in view.board.findChildren(HostCard) if not c.isHidden()}
    SHOTS.mkdir(parents=True, exist_ok=True)
    view.grab().save(str(SHOTS / "placement-300-hosts-scrolled.png"))
    doc.undo_stack.blockSignals(True)


def test_methodology_asks_only_for_the_rows_in_view(qtbot, monkeypatch):
    asked: set[int] = set()
    data = StepModel.data

    def counted(self, index, role=0):
        asked.add(index.row())
        return data(self, index, role)
    monkeypatch.setattr(StepModel, "data", counted)
    document = Document(load(resources.example_path("md3000i-hyperv-cluster")))
    view = MethodologyView(document, Selection())
    qtbot.addWidget(view)
    view.resize(1300, 800)
    view.show()
    qtbot.waitUntil(lambda: view.methodology is not None, timeout=15000)
    QApplication.processEvents()
    rows = view.tree.model().rowCount()
    assert rows > 400 and asked
    assert max(asked) < 80, f"rows asked for up to {max(asked)} of {rows}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    view.grab().save(str(SHOTS / "methodology-virtual-rows.png"))
    view.wait()
    document.undo_stack.blockSignals(True)


def test_a_fitted_big_bed_draws_every_device_in_one_pass_and_selection_still_shows(qtbot):
    from PySide6.QtCore import QPointF, Qt

    from app import diagram
    from widgets.canvas import items
    from widgets.canvas.far_drawing import FAR_ZOOM
    from widgets.canvas.view import Canvas

    painted: list[str] = []
    paint = items.DeviceItem.paint
    items.DeviceItem.paint = lambda self, *a: (painted.append(self.ident), paint(self, *a))[1]
    try:
        doc = Document(generate(hosts=300, vms=300, arrays=2, disks=48, rack_size=20))
        selection = Selection()
        canvas = Canvas(doc, selection)
        qtbot.addWidget(canvas)
        canvas.resize(1000, 700)
        with qtbot.waitExposed(canvas):
            canvas.show()
        canvas.fit()
        QApplication.processEvents()
        assert canvas.zoom() < FAR_ZOOM
        image = canvas.viewport().grab().toImage()
        assert not painted, "far away, no device item paints itself"
        checked = 0         # each device big enough on screen shows its body's colour at its centre
        for ident, item in canvas.devices.items():
            centre = canvas.mapFromScene(item.pos() + QPointF(item.w / 2, item.h / 2))
            if item.w * canvas.zoom() < 6 or not image.rect().contains(centre):
                continue
            fill, _border = diagram.body_style(canvas.objects[ident])
            assert image.pixelColor(centre).name() == fill.name(), ident
            checked += 1
        assert checked > 250, checked
        # a click on a far device selects it, and it is drawn selected (its edge in the selection colour)
        host = canvas.devices["host5"]
        on_screen = canvas.mapFromScene(host.sceneBoundingRect()).boundingRect()
        before = image.copy(on_screen)
        qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton,
                         pos=canvas.mapFromScene(host.pos() + QPointF(host.w / 2, host.h / 2)))
        assert selection.ids == frozenset({"host5"})
        QApplication.processEvents()
        assert canvas.viewport().grab().toImage().copy(on_screen) != before, "the selected device looks selected"
        assert not painted
        SHOTS.mkdir(parents=True, exist_ok=True)
        canvas.viewport().grab().save(str(SHOTS / "canvas-300-hosts-fitted.png"))
    finally:
        items.DeviceItem.paint = paint
    doc.undo_stack.blockSignals(True)
