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
