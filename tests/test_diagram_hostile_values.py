"""draw.io and GraphML exports of beds whose ids and texts are hostile to XML (`<`, `&`,
quotes, `]]>`, line breaks, a right-to-left override, 5,000-character names, ids that
read like another's port): every value stays data, read back by a real XML parser and by
networkx, and no two things share an XML id; and a generated bed exports with every device."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import networkx as nx

from app.diagram.export import export_diagram
from topology import synthetic
from topology.fileformat import loads

HOSTILE_IDS = ["a<b", "c&d", "e\"f'g", "x]]>y", "L" * 5000, "h1", "h1-p1", "h1_p1", "h1.p1", "--", "sp ace",
               "\u202eevil", "💾disk"]
MODEL = "line1\nline2 ]]> & < \" \u2028 x"


def hostile_bed():
    text = "format_version: 1\nbed: {name: 'x]]>&<\"'}\nservers:\n"
    for ident in HOSTILE_IDS:
        text += ("  - id: '" + ident.replace("'", "''") + "'\n    model: \"line1\\nline2 ]]> & < \\\" \\u2028 x\"\n"
                 "    adapters: [{name: nic, ports: [{name: p1}]}]\n")
    return loads(text)


def test_hostile_ids_and_texts_stay_data_in_drawio(tmp_path):
    bed = hostile_bed()
    root = ET.parse(export_diagram(bed, tmp_path / "x.drawio", "drawio").path).getroot()
    ids = [el.get("id") for el in root.iter() if el.tag in ("object", "mxCell") and el.get("id")]
    assert len(ids) == len(set(ids))
    servers = {o.get("testbed_id"): o.get("label") for o in root.iter("object") if o.get("testbed_kind") == "server"}
    assert servers == {ident: f"{ident}\n{MODEL}" for ident in HOSTILE_IDS}
    ports = {o.get("testbed_id") for o in root.iter("object") if o.get("testbed_kind") == "port"}
    assert ports == {f"{ident}:p1" for ident in HOSTILE_IDS}
    assert [d.get("name") for d in root.iter("diagram")] == ["x]]>&<\""]


def test_hostile_ids_and_texts_stay_data_in_graphml(tmp_path):
    bed = hostile_bed()
    g = nx.read_graphml(export_diagram(bed, tmp_path / "x.graphml", "graphml").path)
    servers = {d["testbed_id"]: d for _n, d in g.nodes(data=True) if d.get("component") == "server"}
    assert set(servers) == set(HOSTILE_IDS) and all(d["model"] == MODEL for d in servers.values())
    ports = [n for n, d in g.nodes(data=True) if d.get("component") == "port"]
    assert len(ports) == len(HOSTILE_IDS) and g.number_of_edges() == len(HOSTILE_IDS)
    # servers named like h1's port are nodes of their own, each port linked to its own owner
    assert {d["testbed_id"] for _n, d in g.nodes(data=True)} >= {"h1:p1", "h1-p1", "h1-p1:p1", "h1_p1:p1"}
    assert len(set(g.nodes)) == g.number_of_nodes() == 2 * len(HOSTILE_IDS)


def test_a_generated_bed_exports_every_device_and_cable(tmp_path):
    bed = synthetic.generate(hosts=30, vms=60, arrays=2, disks=40)
    root = ET.parse(export_diagram(bed, tmp_path / "s.drawio", "drawio").path).getroot()
    kinds = [o.get("testbed_kind") for o in root.iter("object")]
    assert kinds.count("server") == len(bed.servers) and kinds.count("switch") == len(bed.switches)
    assert kinds.count("array") == len(bed.arrays)
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    edges = [c for c in root.iter("mxCell") if c.get("edge") == "1"]
    assert len(edges) == len(bed.links) and all(e.get("source") in ids and e.get("target") in ids for e in edges)
    g = nx.read_graphml(export_diagram(bed, tmp_path / "s.graphml", "graphml").path)
    assert sum(1 for _a, _b, d in g.edges(data=True) if d.get("relation") == "cable") == len(bed.links)
