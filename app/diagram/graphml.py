"""The bed as GraphML: every component and link with its attributes, for networkx and yEd.

Nodes: servers, switches, arrays, chassis (`component` says which), their ports
(`DEVICE:PORT`), networks, VMs, clusters and volumes (`ARRAY:VOLUME`).  Edges (`relation`):
`cable` from port to port as the bed links them (its `kind`: cable, isl, lag, stack), `port`
from a device to each of its ports,
`network` from a port to the network it is addressed in, `runs_on` from a VM to its host,
`member` from a server to its cluster, `holds` from an array or an array group to its volumes
(`GROUP:VOLUME`, with the members its pool spans), `group_member` from an array to its group.  Each model
field a component states becomes an attribute of its type (lists as comma-separated text,
free-form settings as JSON text).

yEd reads the `nodegraphics`/`edgegraphics` data: each node where the canvas draws it, in
its colour, and each cable in its role's colour.  networkx.read_graphml reads the same file
(it takes yEd's label and position as `label`, `x` and `y`, so no model field uses those
names here).
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import is_dataclass
from typing import Any

from app.diagram.geometry import device_ports, port_marks
from app.diagram.style import ROLE_COLOURS, body_style, link_role, port_role
from topology.field_plan import plan
from topology.layout import Box, layout
from topology.model import Chassis, Server, StorageArray, Switch
from topology.project_save import to_data
from topology.unknown import MARKER, NOT_STATED

GRAPHML = "http://graphml.graphdrawing.org/xmlns"
YED = "http://www.yworks.com/xml/graphml"
_RESERVED = {"x", "y", "label", "id", "shape_type"}   # networkx puts yEd's graphics under these names
_TYPE_ORDER = {"boolean": 0, "long": 1, "double": 2, "string": 3}


def _value(v: Any) -> tuple[str, Any] | None:
    """(GraphML type, value) of a field value; None for an empty one."""
    if v is NOT_STATED:
        return "string", MARKER
    if v is None or v == "" or v == [] or v == {}:
        return None
    if isinstance(v, bool):
        return "boolean", v
    if isinstance(v, int):
        return "long", v
    if isinstance(v, float):
        return "double", v
    if isinstance(v, str):
        return "string", v
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return "string", ", ".join(str(x) for x in v)
    if isinstance(v, list):
        v = [to_data(x) for x in v]
    return "string", json.dumps(to_data(v), default=str, sort_keys=False)


def attributes(obj: Any, skip: Iterable[str] = ()) -> dict[str, tuple[str, Any]]:
    """Each field the object states, flattened one level into nested records (`cpu_sockets`)."""
    skipped = set(skip)
    out: dict[str, tuple[str, Any]] = {}
    for fp in plan(type(obj)):
        if fp.key in skipped or fp.key == "id":   # the node's id and testbed_id say it
            continue
        v = getattr(obj, fp.attr)
        if fp.kind == "dc" and v is not None and is_dataclass(v):
            for key, typed in attributes(v).items():
                out[f"{fp.key}_{key}"] = typed
            continue
        if fp.kind == "list" and fp.inner[0] == "dc" and fp.key in ("ports", "adapters", "controllers", "volumes"):
            continue   # these are nodes of their own
        typed = _value(v)
        if typed is not None:
            out[fp.key if fp.key not in _RESERVED else f"{fp.key}_"] = typed
    return out


class _Graph:
    def __init__(self) -> None:
        self.nodes: dict[str, tuple[dict[str, tuple[str, Any]], dict | None]] = {}
        self.edges: list[tuple[str, str, dict[str, tuple[str, Any]], dict | None]] = []

    def node(self, ident: str, kind: str, attrs: dict[str, tuple[str, Any]], shape: dict | None = None) -> str:
        key = ident if ident not in self.nodes else f"{kind}:{ident}"
        self.nodes[key] = ({"component": ("string", kind), "testbed_id": ("string", ident), **attrs}, shape)
        return key

    def edge(self, a: str, b: str, kind: str, attrs: dict[str, tuple[str, Any]] | None = None,
             shape: dict | None = None) -> None:
        self.edges.append((a, b, {"relation": ("string", kind), **(attrs or {})}, shape))


def graphml_document(bed: Any, positions: dict[str, Box] | None = None) -> tuple[str, int, int]:
    """The GraphML text, its node count and its edge count."""
    boxes = positions if positions is not None else layout(bed)
    g = _Graph()
    devices = {d.id: d for d in (*bed.servers, *bed.switches, *bed.arrays, *bed.chassis)}
    kinds = {Server: "server", Switch: "switch", StorageArray: "array", Chassis: "chassis"}
    ports: dict[str, str] = {}
    for ident, dev in devices.items():
        b = boxes.get(ident)
        fill, border = body_style(dev)
        shape = {"x": b.x, "y": b.y, "w": b.w, "h": b.h, "fill": fill.name(), "border": border.name(),
                 "label": ident} if b else None
        node = g.node(ident, kinds[type(dev)], attributes(dev), shape)
        marks = port_marks(dev, b.w, b.h) if b else {}
        for port, controller in device_ports(dev):
            ref = f"{ident}:{port.name}"
            attrs = attributes(port)
            attrs["device"] = ("string", ident)
            attrs["drawn_role"] = ("string", port_role(port, dev))
            if controller:
                attrs["controller"] = ("string", controller)
            m = marks.get(port.name)
            pshape = {"x": b.x + m.rect.x(), "y": b.y + m.rect.y(), "w": m.rect.width(), "h": m.rect.height(),
                      "fill": ROLE_COLOURS.get(m.role, "#8a8a8a"), "border": "#52656f", "label": port.name,
                      "small": True} if b and m else None
            ports[ref] = g.node(ref, "port", attrs, pshape)
            g.edge(node, ports[ref], "port")
    networks = {}
    for n in bed.networks:
        b = boxes.get(n.id)
        networks[n.id] = g.node(n.id, "network", attributes(n),
                                {"x": b.x, "y": b.y, "w": b.w, "h": b.h, "fill": "#ffffff",
                                 "border": ROLE_COLOURS.get(n.role, ROLE_COLOURS["lan"]), "label": n.id}
                                if b else None)
    for dev in devices.values():
        for port, _ctrl in device_ports(dev):
            if getattr(port, "network", "") in networks:
                g.edge(ports[f"{dev.id}:{port.name}"], networks[port.network], "network")
    for link in bed.links:
        a = ports.get(link.a) or (link.a if link.a in devices else None)
        b_ = ports.get(link.b) or (link.b if link.b in devices else None)
        if a is None or b_ is None:
            continue
        ra, rb = _ref_device(link.a, devices), _ref_device(link.b, devices)
        role = link_role(ra[0], ra[1], rb[0], rb[1]) if ra[0] is not None and rb[0] is not None else "lan"
        attrs = attributes(link, skip=("a", "b"))
        attrs.update({"a": ("string", link.a), "b": ("string", link.b), "role": ("string", role)})
        g.edge(a, b_, "cable", attrs, {"colour": ROLE_COLOURS.get(role, "#8a8a8a"),
                                                  "width": 3.0 if link.kind in ("isl", "lag", "stack") else 1.6})
    for vm in bed.vms:
        b = boxes.get(vm.id)
        node = g.node(vm.id, "vm", attributes(vm), {"x": b.x, "y": b.y, "w": b.w, "h": b.h, "fill": "#ffffff",
                                                    "border": "#8796a8", "label": vm.id} if b else None)
        if vm.host in devices:
            g.edge(node, vm.host, "runs_on")
    for cl in bed.clusters:
        node = g.node(cl.id, "cluster", attributes(cl))
        for member in cl.nodes:
            if member in devices:
                g.edge(member, node, "member")
    for ident, dev in devices.items():     # a blade or I/O module in its chassis' bay, or 'not stated'
        if isinstance(dev, (Server, Switch)) and dev.chassis in devices:
            bay = dev.bay
            g.edge(ident, dev.chassis, "in_bay", {"bay": ("string", MARKER if bay is NOT_STATED else
                                                          "" if bay is None else str(bay))})
    for array in bed.arrays:
        for vol in array.volumes:
            ref = f"{array.id}:{vol.name}"
            attrs = attributes(vol)
            attrs["array"] = ("string", array.id)
            g.edge(array.id, g.node(ref, "volume", attrs), "holds")
    for group in bed.array_groups:
        if group.name in devices or group.name in g.nodes:
            continue
        b = boxes.get(group.name)
        node = g.node(group.name, "array_group", attributes(group, skip=("pools", "volumes", "hosts", "mappings",
                                                                          "host_groups")),
                      {"x": b.x, "y": b.y, "w": b.w, "h": b.h, "label": group.name, "border": "#7a6a58",
                       "fill": body_style(StorageArray(id=group.name))[0].name()} if b else None)
        for array in bed.arrays:
            if array.group == group.name:
                g.edge(array.id, node, "group_member")
        spans = {p.name: p.members for p in group.pools}
        for vol in group.volumes:
            attrs = attributes(vol)
            attrs["array_group"] = ("string", group.name)
            members = spans.get(vol.pool) if isinstance(vol.pool, str) else None
            if members is NOT_STATED:
                attrs["pool_members"] = ("string", MARKER)
            elif members:
                attrs["pool_members"] = ("string", ", ".join(members))
            elif members is not None:
                attrs["pool_members"] = ("string", ", ".join(a.id for a in bed.arrays if a.group == group.name))
            g.edge(node, g.node(f"{group.name}:{vol.name}", "volume", attrs), "holds")
    return _write(g, bed.bed.name), len(g.nodes), len(g.edges)


def _ref_device(ref: str, devices: dict[str, Any]) -> tuple[Any, Any]:
    if ref in devices:
        return devices[ref], None
    dev_id, _, port_name = ref.rpartition(":")
    dev = devices.get(dev_id)
    port = next((p for p, _c in device_ports(dev) if p.name == port_name), None) if dev is not None else None
    return dev, port


def _write(g: _Graph, name: str) -> str:
    ET.register_namespace("", GRAPHML)
    ET.register_namespace("y", YED)
    root = ET.Element(f"{{{GRAPHML}}}graphml")
    keys: dict[tuple[str, str], str] = {}
    types: dict[tuple[str, str], str] = {}
    for where, items in (("node", [a for a, _s in g.nodes.values()]), ("edge", [e[2] for e in g.edges])):
        for attrs in items:
            for key, (typ, _v) in attrs.items():
                old = types.get((where, key))
                types[(where, key)] = typ if old is None else max(old, typ, key=_TYPE_ORDER.__getitem__)
    for n, ((where, key), typ) in enumerate(sorted(types.items())):
        ident = f"{where[0]}{n}"
        keys[(where, key)] = ident
        ET.SubElement(root, f"{{{GRAPHML}}}key", {"id": ident, "for": where, "attr.name": key, "attr.type": typ})
    ET.SubElement(root, f"{{{GRAPHML}}}key", {"id": "ng", "for": "node", "yfiles.type": "nodegraphics"})
    ET.SubElement(root, f"{{{GRAPHML}}}key", {"id": "eg", "for": "edge", "yfiles.type": "edgegraphics"})
    graph = ET.SubElement(root, f"{{{GRAPHML}}}graph", id=name or "testbed", edgedefault="undirected")
    for ident, (attrs, shape) in g.nodes.items():
        el = ET.SubElement(graph, f"{{{GRAPHML}}}node", id=ident)
        _data(el, keys, "node", attrs, types)
        if shape is not None:
            _shape_node(ET.SubElement(el, f"{{{GRAPHML}}}data", key="ng"), shape)
    for n, (a, b, attrs, shape) in enumerate(g.edges):
        el = ET.SubElement(graph, f"{{{GRAPHML}}}edge", id=f"e{n}", source=a, target=b)
        _data(el, keys, "edge", attrs, types)
        if shape is not None:
            line = ET.SubElement(ET.SubElement(el, f"{{{GRAPHML}}}data", key="eg"), f"{{{YED}}}PolyLineEdge")
            ET.SubElement(line, f"{{{YED}}}LineStyle", color=shape["colour"], type="line", width=f"{shape['width']}")
            ET.SubElement(line, f"{{{YED}}}Arrows", source="none", target="none")
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _data(el: ET.Element, keys: dict, where: str, attrs: dict, types: dict) -> None:
    for key, (typ, v) in attrs.items():
        if types[(where, key)] == "string" and typ != "string":
            v = str(v).lower() if typ == "boolean" else str(v)
        elif typ == "boolean":
            v = "true" if v else "false"
        ET.SubElement(el, f"{{{GRAPHML}}}data", key=keys[(where, key)]).text = str(v)


def _shape_node(data: ET.Element, shape: dict) -> None:
    node = ET.SubElement(data, f"{{{YED}}}ShapeNode")
    ET.SubElement(node, f"{{{YED}}}Geometry", x=f"{shape['x']:.1f}", y=f"{shape['y']:.1f}",
                  width=f"{shape['w']:.1f}", height=f"{shape['h']:.1f}")
    ET.SubElement(node, f"{{{YED}}}Fill", color=shape["fill"], transparent="false")
    ET.SubElement(node, f"{{{YED}}}BorderStyle", color=shape["border"], type="line", width="1.0")
    label = ET.SubElement(node, f"{{{YED}}}NodeLabel", fontSize="7" if shape.get("small") else "11")
    label.text = shape["label"]
    ET.SubElement(node, f"{{{YED}}}Shape", type="rectangle" if shape.get("small") else "roundrectangle")
