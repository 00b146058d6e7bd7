"""The networkx view of a bed and the synthetic beds the benchmark uses."""
from __future__ import annotations

import networkx as nx
from beds import clean_bed

from topology.fileformat import dumps, loads
from topology.graph import PathAnalyzer, bed_graph
from topology.index import BedIndex
from topology.layout import auto_layout, overlapping
from topology.model import PathSpec
from topology.synthetic import generate
from topology.validation import validate


def test_bed_graph_connects_hosts_to_the_array_through_the_switches():
    idx = BedIndex(clean_bed())
    g = bed_graph(idx)
    assert isinstance(g, nx.Graph)
    path = nx.shortest_path(g, "h1", "arr")
    assert "sw-a" in path or "sw-b" in path
    assert g.nodes["arr#c0"]["kind"] == "controller"
    # the VM hangs off its host
    assert g.has_edge("h1", "sql")


def test_routes_name_the_switch_and_controller():
    bed = clean_bed()
    pa = PathAnalyzer(BedIndex(bed))
    route = pa.route(PathSpec(host="h1", initiator="h1:san1", target="arr:c0-a"))
    assert route.status == "ok"
    assert {"h1:san1", "arr:c0-a", "arr#c0", "sw-a"} <= set(route.elements)


def test_synthetic_bed_is_clean_and_round_trips():
    bed = generate(hosts=30, vms=120, arrays=3, disks=90, rack_size=10)
    assert len(bed.servers) == 30 and len(bed.vms) == 120 and len(bed.arrays) == 3
    assert validate(bed) == []
    text = dumps(bed)
    assert loads(text) == bed


def test_automatic_layout_puts_nothing_on_top_of_anything():
    from resources import example_names, example_path
    from topology.fileformat import load
    beds = [load(example_path(n)) for n in example_names()]
    beds.append(generate(hosts=300, vms=0, arrays=12, disks=120, rack_size=20))
    for bed in beds:
        boxes = auto_layout(bed)
        assert len(boxes) == len(bed.servers) + len(bed.switches) + len(bed.arrays)
        assert overlapping(boxes) == []
    # a planted overlap is found, so the check above can fail
    first, second = list(boxes)[:2]
    boxes[second] = boxes[first]
    assert (first, second) in overlapping(boxes) or (second, first) in overlapping(boxes)
