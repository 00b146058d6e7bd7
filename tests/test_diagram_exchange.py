"""The diagram for other tools: draw.io (a shape per device where the canvas draws it, ports,
cables from the right port to the right port, legend, colours) and GraphML (networkx and yEd),
from the canvas's File menu and `testbed-studio export`, one code path."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest
from test_canvas import Studio

from app.diagram.export import export_diagram
from app.document import Document
from resources import example_names, example_path
from topology.fileformat import loads
from topology.unknown import NOT_STATED


def _drawn_links(bed):
    """The cables with both ends stated (one whose far end is not stated has nothing to join)."""
    return [lk for lk in bed.links if lk.b is not NOT_STATED]

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).with_name("testbed-studio")
DEVICE_KINDS = {"server", "switch", "array", "chassis"}


def cells(path: Path) -> dict[str, dict]:
    """Every draw.io cell by id: its attributes (an <object>'s data merged in), parent, geometry."""
    root = ET.parse(path).getroot()
    assert root.tag == "mxfile"
    model = root.find("diagram/mxGraphModel/root")
    out: dict[str, dict] = {}
    for el in model:
        if el.tag == "object":
            cell = el.find("mxCell")
            info = {**el.attrib, **cell.attrib, "label": el.get("label", "")}
        else:
            cell = el
            info = {**el.attrib, "label": el.get("value", "")}
        geo = cell.find("mxGeometry")
        if geo is not None and geo.get("relative") != "1":
            info["geo"] = tuple(float(geo.get(k, 0)) for k in ("x", "y", "width", "height"))
        points = cell.findall("mxGeometry/Array/mxPoint")
        info["points"] = [(float(p.get("x")), float(p.get("y"))) for p in points]
        out[info["id"]] = info
    return out


def open_canvas(qtbot, name: str) -> Studio:
    doc = Document()
    studio = Studio(qtbot, doc)
    doc.open(example_path(name))
    return studio


@pytest.mark.parametrize("name", example_names())
def test_drawio_has_a_shape_per_device_where_the_canvas_draws_it_and_cables_between_the_right_ports(
        qtbot, tmp_path, name):
    s = open_canvas(qtbot, name)
    canvas, bed = s.canvas, s.bed
    out = tmp_path / f"{name}.drawio"
    done = canvas.export_to(out, "drawio")
    found = cells(out)
    devices = {c["testbed_id"]: c for c in found.values() if c.get("testbed_kind") in DEVICE_KINDS}
    assert set(devices) == set(canvas.devices)                        # one shape per device on the canvas
    boxes = canvas.current_boxes()
    for ident, cell in devices.items():
        b = boxes[ident]
        assert cell["geo"] == pytest.approx((b.x, b.y, b.w, b.h), abs=0.06), ident   # as on the canvas
        assert cell["parent"] == "1" and "html=0" in cell["style"]
    ports = {c["testbed_id"]: c for c in found.values() if c.get("testbed_kind") == "port"}
    for ident, cell in ports.items():
        assert found[cell["parent"]]["testbed_id"] == ident.rpartition(":")[0]   # a port sits on its device
        x, y, w, h = cell["geo"]
        dev = found[cell["parent"]]["geo"]
        assert -w <= x <= dev[2] and -h <= y <= dev[3]                # on the device's edge, local coordinates
    edges = [c for c in found.values() if c.get("edge") == "1"]
    cables = [c for c in edges if c.get("testbed_kind") not in ("path",)]
    paths = [c for c in edges if c.get("testbed_kind") == "path"]
    assert len(cables) == len(_drawn_links(bed))      # a cable whose far end is not stated joins nothing
    for edge in cables:
        ends = {found[edge["source"]]["testbed_id"], found[edge["target"]]["testbed_id"]}
        assert ends == {edge["a"], edge["b"]}                          # from the right port to the right port
    assert (len(cables), len(paths)) == (len(canvas.links), len(canvas.paths))    # edges as the canvas draws
    assert done.summary.startswith(f"{len(devices)} devices, {len(ports)} ports, {len(cables)} cables")
    legend = [c for c in found.values() if c.get("testbed_kind") == "legend"]
    assert len(legend) == 1
    labels = {c["label"] for c in found.values() if c.get("parent") == legend[0]["id"]}
    assert {"iSCSI (SAN)", "LAN / client", "Switch interconnect", "Path (cabling not drawn)"} <= labels
    # colours: each port in its role's colour, as on screen
    from app.diagram.geometry import device_ports
    from app.diagram.style import ROLE_COLOURS, port_role
    for dev in (*bed.servers, *bed.switches, *bed.arrays):
        for port, _ctrl in device_ports(dev):
            cell = ports[f"{dev.id}:{port.name}"]
            assert f"fillColor={ROLE_COLOURS[port_role(port, dev)]};" in cell["style"]


def test_drawio_of_a_cabled_bed_connects_every_cable_to_ports(qtbot, tmp_path):
    from topology.synthetic import generate
    bed = generate(hosts=6, vms=12, arrays=1, disks=24, pins=False, scenarios=False)
    out = tmp_path / "synthetic.drawio"
    export_diagram(bed, out, "drawio")
    found = cells(out)
    edges = [c for c in found.values() if c.get("edge") == "1" and c.get("testbed_kind") != "path"]
    assert len(edges) == len(bed.links) > 10
    from app.diagram.geometry import device_ports
    declared = {f"{d.id}:{p.name}" for d in (*bed.servers, *bed.switches, *bed.arrays) for p, _c in device_ports(d)}
    port_ends = 0
    for edge in edges:
        for end in (edge["source"], edge["target"]):
            ref = found[end]["testbed_id"]
            # a declared port's cable meets the port; a switch port the bed does not declare, the switch
            assert (found[end]["testbed_kind"] == "port") == (ref in declared)
            port_ends += ref in declared
        assert {found[edge["source"]]["testbed_id"], found[edge["target"]]["testbed_id"]} <= \
            {edge["a"], edge["b"], edge["a"].rpartition(":")[0], edge["b"].rpartition(":")[0]}
    switch_to_switch = sum(1 for lk in bed.links if lk.a.partition(":")[0] in {s.id for s in bed.switches}
                           and lk.b.partition(":")[0] in {s.id for s in bed.switches})
    assert port_ends == len(edges) - switch_to_switch   # every host and array cable starts at its port


def test_a_hostile_name_is_plain_text_in_drawio_and_graphml(tmp_path):
    hostile = '<img src=x onerror="alert(1)">&amp;\'"; rm -rf /'
    text = ("format_version: 1\nbed: {name: x}\nservers:\n  - id: h1\n    note: " + repr(hostile).replace("\\'", "''")
            + "\n    model: " + "'" + hostile.replace("'", "''") + "'\n")
    bed = loads(text)
    out = tmp_path / "x.drawio"
    export_diagram(bed, out, "drawio")
    found = cells(out)
    host = next(c for c in found.values() if c.get("testbed_id") == "h1")
    assert host["label"] == f"h1\n{hostile}" and "html=0" in host["style"]
    g = nx.read_graphml(export_diagram(bed, tmp_path / "x.graphml", "graphml").path)
    assert g.nodes["h1"]["model"] == hostile


@pytest.mark.parametrize("name", example_names())
def test_graphml_opens_in_networkx_with_every_component_and_link(tmp_path, name):
    bed = loads(example_path(name).read_text(encoding="utf-8"))
    done = export_diagram(bed, tmp_path / f"{name}.graphml")
    g = nx.read_graphml(done.path)
    kinds = nx.get_node_attributes(g, "component")
    for s in bed.servers:
        assert kinds[s.id] == "server" and g.nodes[s.id].get("memory_gb") == \
            (str(s.memory_gb) if s.memory_gb is NOT_STATED else s.memory_gb)
        for ad in s.adapters:
            for p in ad.ports:
                assert g.has_edge(s.id, f"{s.id}:{p.name}")
    for sw in bed.switches:
        assert kinds[sw.id] == "switch"
    for a in bed.arrays:
        assert kinds[a.id] == "array"
        for v in a.volumes:
            assert kinds[f"{a.id}:{v.name}"] == "volume"
    for vm in bed.vms:
        assert kinds[vm.id] == "vm" and g.has_edge(vm.id, vm.host)
    for n in bed.networks:
        assert kinds[n.id] == "network"
    cables = [(a, b, d) for a, b, d in g.edges(data=True) if d["relation"] == "cable"]
    assert len(cables) == len(_drawn_links(bed))
    assert {d["kind"] for _a, _b, d in cables} <= {"cable", "isl", "lag", "stack"}
    for a, b, d in cables:
        assert {a, b} == {d["a"], d["b"]}
    # yEd's geometry is there for the drawn devices (networkx reads it as x, y)
    for s in bed.servers:
        assert "x" in g.nodes[s.id] and "y" in g.nodes[s.id]
    keys = ET.parse(done.path).getroot().findall("{http://graphml.graphdrawing.org/xmlns}key")
    assert {k.get("yfiles.type") for k in keys} >= {"nodegraphics", "edgegraphics"}


@pytest.mark.parametrize("fmt", ["drawio", "graphml", "svg", "png", "pdf"])
def test_the_command_line_writes_each_format(tmp_path, fmt):
    out = tmp_path / f"bed.{fmt}"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([str(CLI), "export", str(example_path("md3000i-hyperv-cluster")), "--format", fmt,
                           "-o", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout
    data = out.read_bytes()
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
    elif fmt == "pdf":
        assert data[:5] == b"%PDF-"
        if shutil.which("pdftotext"):
            text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
            assert "R710-1" in text and "MD3000i" in text
    elif fmt == "svg":
        assert "R710-1" in "".join(ET.parse(out).getroot().itertext())
    elif fmt == "drawio":
        assert any(c.get("testbed_id") == "R710-1" for c in cells(out).values())
    else:
        assert "R710-1" in nx.read_graphml(out)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]        # no temporary file left


def test_the_command_line_offers_every_format_without_loading_qt():
    from app import cli_exchange
    from app.diagram import export
    assert cli_exchange.FORMATS == export.FORMATS
    code = ("import sys, app.cli; app.cli._parser(); "
            "print(sorted(m for m in ('PySide6.QtGui', 'networkx', 'app.diagram') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_command_line_refuses_a_bad_bed_and_an_unwritable_place(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("format_version: 1\nbed: {name: x}\nservers:\n  - id: h\n    memroy_gb: 4\n")
    proc = subprocess.run([str(CLI), "export", str(bad), "-o", str(tmp_path / "x.drawio")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "bad.yaml:5" in proc.stderr and "memory_gb" in proc.stderr
    proc = subprocess.run([str(CLI), "export", str(example_path("md3000i-hyperv-cluster")), "-o",
                           str(tmp_path / "missing" / "x.drawio")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "cannot write" in proc.stderr and "Traceback" not in proc.stderr


def test_the_file_menu_exports_drawio_and_graphml(qtbot, tmp_path):
    from dialogs import answer_modal, type_file_name

    from widgets.main_window import MainWindow
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.document.open(example_path("equallogic-ps6110-hyperv"))
    for action, suffix in (("export_drawio", "drawio"), ("export_graphml", "graphml")):
        target = tmp_path / f"from-menu.{suffix}"
        answered = answer_modal(type_file_name(target))
        window.actions_by_name[action].trigger()
        assert answered and target.is_file()
    found = cells(tmp_path / "from-menu.drawio")
    assert {c["testbed_id"] for c in found.values() if c.get("testbed_kind") in DEVICE_KINDS} == \
        set(window.canvas.devices)
    assert "from-menu.graphml" in window.statusBar().currentMessage()
    assert nx.read_graphml(tmp_path / "from-menu.graphml").number_of_nodes() > 50
