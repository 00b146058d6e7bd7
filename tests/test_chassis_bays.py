"""Blade chassis: the procedure installs each blade and I/O module in its stated bay, and the diagram
draws the bay count the bed or the model catalogue states -- never an assumed one."""
from __future__ import annotations

import re

from PySide6.QtGui import QColor, QImage, QPainter

from app.diagram.devices import paint_device
from resources import example_path
from topology import methodology as M
from topology.device_face import chassis_bays
from topology.fileformat import load, loads

BLADE = "bladecenter-hs22-ds5020-fc"


def _text(name: str) -> str:
    return example_path(name).read_text(encoding="utf-8")


def _hardware_steps(bed) -> list[str]:
    meth = M.generate(bed)
    section = meth.sections[0]
    assert section.title == "Installing the hardware (blade chassis)"
    assert all(s.manual and not s.automation for s in section.steps)    # no chassis CLI template: by hand
    return [s.text for s in section.steps]


def test_blades_and_modules_are_installed_in_their_stated_bays():
    texts = _hardware_steps(load(example_path(BLADE)))
    assert texts == [
        "Decide which bay of chassis BCH (IBM BladeCenter H) holds blade HS22-A (IBM BladeCenter HS22) (bay not "
        "stated in the bed), install it there, and record that bay as the bay of HS22-A in the bed.",
        "Install I/O module qlogic-bay3 (QLogic 8 Gb switch module) in I/O module bay 3 of chassis BCH (IBM "
        "BladeCenter H), and check that the chassis management module shows it in I/O module bay 3.",
        "Install I/O module qlogic-bay4 (QLogic 8 Gb switch module) in I/O module bay 4 of chassis BCH (IBM "
        "BladeCenter H), and check that the chassis management module shows it in I/O module bay 4.",
        "Decide which I/O module bay of chassis BCH (IBM BladeCenter H) holds I/O module lan-module (model not "
        "stated) (I/O module bay not stated in the bed), install it there, and record that I/O module bay as the "
        "bay of lan-module in the bed."]
    # nothing invented: no bay number the bed does not give, no unresolved value
    numbers = {int(n) for t in texts for n in re.findall(r"\bbay (\d+)", t)}
    assert numbers == {3, 4}
    assert not any("«" in t for t in texts)


def test_a_stated_blade_bay_is_installed_there():
    text = _text(BLADE).replace("    chassis: BCH\n    bay: not stated\n", "    chassis: BCH\n    bay: 7\n")
    texts = _hardware_steps(loads(text, f"{BLADE}.yaml"))
    assert texts[0] == ("Install blade HS22-A (IBM BladeCenter HS22) in bay 7 of chassis BCH (IBM BladeCenter H), "
                        "and check that the chassis management module shows it in bay 7.")


def test_a_bed_without_chassis_has_no_hardware_section():
    meth = M.generate(load(example_path("r710-rhev-hyperv-equallogic")))
    assert all(s.title != "Installing the hardware (blade chassis)" for s in meth.sections)


def _bay_edges(chassis, blades) -> int:
    """How many dark runs cross the chassis face's bay row: two per empty bay (its outline), one per filled bay."""
    w, h = 420, 110
    image = QImage(w, h, QImage.Format.Format_ARGB32)
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    paint_device(painter, chassis, w, h, vms=blades)
    painter.end()
    y = 48
    edges, inside = 0, False
    for x in range(4, w - 4):
        dark = QColor(image.pixel(x, y)).lightness() < 200
        if dark and not inside:
            edges += 1
        inside = dark
    return edges


def test_diagram_draws_the_documented_bay_count_and_no_invented_one(qapp):
    bed = load(example_path(BLADE))
    chassis = bed.chassis[0]
    assert chassis.bays is None and chassis_bays(chassis) == 14     # the catalogue's sourced BladeCenter H count
    blades = [s for s in bed.servers if s.chassis == chassis.id]
    assert _bay_edges(chassis, blades) >= 14

    unknown = loads(_text(BLADE).replace("    model: IBM BladeCenter H\n", "    model: IBM BladeCenter H\n"
                                         "    bays: not stated\n", 1), f"{BLADE}.yaml")
    chassis = unknown.chassis[0]
    assert chassis_bays(chassis) is None
    blades = [s for s in unknown.servers if s.chassis == chassis.id]
    assert _bay_edges(chassis, blades) == 0           # the blade's bay is not stated either: no bay is drawn

    placed_text = (_text(BLADE).replace("    model: IBM BladeCenter H\n", "    model: IBM BladeCenter H\n"
                                        "    bays: not stated\n", 1)
                   .replace("    chassis: BCH\n    bay: not stated\n", "    chassis: BCH\n    bay: 5\n"))
    placed = loads(placed_text, f"{BLADE}.yaml")
    blades = [s for s in placed.servers if s.chassis == "BCH"]
    assert _bay_edges(placed.chassis[0], blades) == 1     # only the bay the blade names


# ----------------------------------------------------------------------------- blades and modules in their bays

CLUSTER = "bladecenter-fc-hyperv-2008r2"


def _face(bed, chassis_id: str):
    from topology.device_face import chassis_face
    from topology.layout import chassis_contents, layout
    box = layout(bed)[chassis_id]
    chassis = next(c for c in bed.chassis if c.id == chassis_id)
    return chassis_face(chassis, chassis_contents(bed, chassis_id), box.w, box.h), box


def _inside(tile, box) -> bool:
    return 0 <= tile.x and tile.x + tile.w <= box.w and 0 <= tile.y and tile.y + tile.h <= box.h


def test_io_modules_are_drawn_in_their_io_bays_and_an_unstated_bay_is_said():
    face, box = _face(load(example_path(BLADE)), "BCH")
    assert [(t.bay, t.occupants) for t in face.io] == [(3, ("qlogic-bay3",)), (4, ("qlogic-bay4",))]
    # the blade and the LAN module state no bay: no tile takes them, a note names them
    assert not any(t.occupants for t in face.blades)
    assert face.notes == ["bay not stated: HS22-A, lan-module"]
    assert all(_inside(t, box) for t in face.blades + face.io)
    # the I/O row lies below the blade bays, inside the chassis outline
    assert min(t.y for t in face.io) >= max(t.y + t.h for t in face.blades)


def test_blades_are_drawn_in_their_blade_bays():
    face, box = _face(load(example_path(CLUSTER)), "bch-1")
    assert [(t.bay, t.occupants) for t in face.blades if t.occupants] == [
        (1, ("hs22-1",)), (2, ("hs22-2",)), (3, ("hs22-3",)), (4, ("hs22-4",))]
    assert [t.bay for t in face.blades] == list(range(1, 15))      # the documented 14, the rest empty
    assert [(t.bay, t.occupants) for t in face.io] == [
        (1, ("esm-1",)), (2, ("esm-2",)), (3, ("fcsm-a",)), (4, ("fcsm-b",))]
    assert face.notes == [] and all(_inside(t, box) for t in face.blades + face.io)


def test_a_blade_beyond_the_bay_count_is_said_not_drawn_outside():
    text = example_path(CLUSTER).read_text(encoding="utf-8").replace("    chassis: bch-1\n    bay: 4\n",
                                                                    "    chassis: bch-1\n    bay: 16\n", 1)
    face, _box = _face(loads(text, f"{CLUSTER}.yaml"), "bch-1")
    assert "beyond its 14 bays: hs22-4 (bay 16)" in face.notes
    assert all("hs22-4" not in t.occupants for t in face.blades)


def test_the_painted_chassis_shows_its_modules_in_the_io_row(qapp):
    """What a person sees: the I/O bay tiles are painted where the face puts them (the chassis alone,
    its modules not given to it, paints no tile there)."""
    from topology.layout import chassis_contents
    bed = load(example_path(BLADE))
    face, box = _face(bed, "BCH")
    chassis = bed.chassis[0]

    def painted(contents) -> QImage:
        image = QImage(int(box.w), int(box.h), QImage.Format.Format_ARGB32)
        image.fill(QColor("#ffffff"))
        painter = QPainter(image)
        paint_device(painter, chassis, box.w, box.h, vms=contents)
        painter.end()
        return image

    def tile_colour(image: QImage, tile) -> str:
        return QColor(image.pixel(int(tile.x + tile.w - 3), int(tile.y + tile.h / 2))).name()

    full = painted(chassis_contents(bed, "BCH"))
    bare = painted([s for s in bed.servers if s.chassis == "BCH"])
    for tile in face.io:
        assert tile_colour(full, tile) == "#c5cae9"
        assert tile_colour(bare, tile) != "#c5cae9"


def test_drawio_and_graphml_put_each_blade_and_module_in_its_bay(tmp_path):
    import networkx as nx
    from test_diagram_exchange import cells

    from app.diagram.export import export_diagram
    bed = load(example_path(BLADE))
    everything = cells(export_diagram(bed, tmp_path / "bed.drawio").path)
    (chassis,) = [c for c in everything.values() if c.get("testbed_id") == "BCH"]
    inside = [c for c in everything.values() if c.get("parent") == chassis["id"]]
    io = {c["testbed_id"]: c["bay"] for c in inside if c.get("testbed_kind") == "I/O module bay"}
    assert io == {"qlogic-bay3": "3", "qlogic-bay4": "4"}
    assert sum(c.get("testbed_kind") == "blade bay" for c in inside) == 14
    assert not any(c.get("testbed_id") == "HS22-A" for c in inside)       # its bay is not stated
    (note,) = [c for c in inside if c.get("testbed_kind") == "chassis note"]
    assert note["label"] == "bay not stated: HS22-A, lan-module"

    g = nx.read_graphml(export_diagram(bed, tmp_path / "bed.graphml").path)
    bays = {a: d["bay"] for a, b, d in g.edges(data=True) if b == "BCH" and d["relation"] == "in_bay"}
    assert bays == {"HS22-A": "not stated", "qlogic-bay3": "3", "qlogic-bay4": "4", "lan-module": "not stated"}


def test_on_the_canvas_a_module_is_picked_in_its_bay_and_follows_an_edit_of_it(qtbot):
    """On the canvas the chassis is painted with its modules, a click on a bay picks its module, and the
    chassis follows an edit of a module's bay."""
    from PySide6.QtCore import Qt
    from test_canvas import Studio

    from app.document import Document
    from topology.edits import SetField
    doc = Document()
    studio = Studio(qtbot, doc)
    doc.open(example_path(BLADE))
    canvas = studio.canvas
    assert {d.id for d in canvas.blades_of["BCH"]} == {"HS22-A", "qlogic-bay3", "qlogic-bay4", "lan-module"}
    item = canvas.devices["BCH"]
    # a module is picked where it is drawn: a click on its bay selects it, its tooltip says where it is
    canvas.centerOn(item)
    face, _box = _face(doc.bed, "BCH")
    bay4 = next(t for t in face.io if t.bay == 4)
    centre = item.mapToScene(bay4.x + bay4.w / 2, bay4.y + bay4.h / 2)
    assert "qlogic-bay4</b> in I/O module bay 4 of BCH" in canvas._tooltip(centre)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=canvas.mapFromScene(centre))
    qtbot.waitUntil(lambda: studio.selection.ids == {"qlogic-bay4"}, timeout=5000)
    assert canvas.devices["qlogic-bay4"].isSelected()
    painted = []
    item.update = lambda *a: painted.append(a)          # the chassis is asked to repaint
    lan = next(s for s in doc.bed.switches if s.id == "lan-module")
    doc.apply(SetField(lan, "bay", 1, text="Set bay of lan-module", owner="lan-module"))
    qtbot.waitUntil(lambda: bool(painted), timeout=5000)
    doc.undo_stack.clear()
