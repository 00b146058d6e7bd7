"""The diagram as a draw.io (diagrams.net) document: the drawing people paste into wikis.

One shape per device where the canvas draws it, its ports as small shapes on its edge in
their role colours, every cable an edge from port to port (with the bends the canvas
routes), paths without cabling dashed, networks and VMs without a host as chips, and the
legend.  Labels are plain text (`html=0`): a name from a bed is shown, never interpreted.
Every shape carries the bed's id, kind and port name as attributes (draw.io's "Edit
Data"), so the drawing can be traced back to the bed.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.diagram.findings import badges
from app.diagram.geometry import content_rect, link_geometry, port_marks, ref_parts, uncabled_paths, vm_chip_rects
from app.diagram.style import LEGEND_KEYS, ROLE_COLOURS, ROLE_LABELS, ROUTED_MAX, body_style, colour
from topology.device_face import GROUP_HEAD_H, GROUP_LINE_H, GROUP_VOLUMES_SHOWN, chassis_face, group_card_lines
from topology.layout import Box, chassis_contents, drawn_groups, group_member_ids, layout, network_label, vms_by_host
from topology.model import ArrayGroup, Chassis, Network, Server, StorageArray, Switch

_BASE_TEXT = "html=0;whiteSpace=wrap;fontFamily=DejaVu Sans;"


@dataclass
class DrawioCounts:
    """What the document holds, for the user's message and the tests."""
    devices: int = 0
    ports: int = 0
    cables: int = 0
    paths: int = 0
    chips: int = 0
    vms: int = 0
    volumes: int = 0                                    # an array group's volumes, on its card
    skipped: list[str] = field(default_factory=list)   # links with an end the drawing lacks

    @property
    def edges(self) -> int:
        return self.cables + self.paths


def _hex(c: Any) -> str:
    return c.name() if hasattr(c, "name") else str(c)


def _kind(dev: Any) -> str:
    return {Server: "server", Switch: "switch", StorageArray: "array", Chassis: "chassis"}.get(type(dev), "device")


class _Doc:
    def __init__(self, name: str):
        self.root_el = ET.Element("mxfile", host="Testbed Studio", type="device")
        diagram = ET.SubElement(self.root_el, "diagram", id="testbed", name=name or "test bed")
        self.model = ET.SubElement(diagram, "mxGraphModel", dx="0", dy="0", grid="1", gridSize="10", guides="1",
                                   tooltips="1", connect="1", arrows="1", fold="1", page="0", pageScale="1",
                                   math="0", shadow="0")
        self.root = ET.SubElement(self.model, "root")
        ET.SubElement(self.root, "mxCell", id="0")
        ET.SubElement(self.root, "mxCell", id="1", parent="0")
        self.serial = 0

    def new_id(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    def vertex(self, label: str, style: str, x: float, y: float, w: float, h: float, *, parent: str = "1",
               data: dict[str, str] | None = None, prefix: str = "v") -> str:
        ident = self.new_id(prefix)
        holder = self._holder(ident, label, data)
        if holder.tag == "mxCell":
            cell = holder
            for k, v in (("style", style), ("vertex", "1"), ("parent", parent)):
                cell.set(k, v)
        else:
            cell = ET.SubElement(holder, "mxCell", style=style, vertex="1", parent=parent)
        ET.SubElement(cell, "mxGeometry", x=_n(x), y=_n(y), width=_n(w), height=_n(h), **{"as": "geometry"})
        return ident

    def edge(self, source: str, target: str, style: str, points: Iterable[tuple[float, float]], *,
             data: dict[str, str] | None = None, label: str = "") -> str:
        ident = self.new_id("e")
        holder = self._holder(ident, label, data)
        if holder.tag == "mxCell":
            cell = holder
            for k, v in (("style", style), ("edge", "1"), ("parent", "1"), ("source", source), ("target", target)):
                cell.set(k, v)
        else:
            cell = ET.SubElement(holder, "mxCell", style=style, edge="1", parent="1", source=source, target=target)
        geo = ET.SubElement(cell, "mxGeometry", relative="1", **{"as": "geometry"})
        pts = list(points)
        if pts:
            arr = ET.SubElement(geo, "Array", **{"as": "points"})
            for x, y in pts:
                ET.SubElement(arr, "mxPoint", x=_n(x), y=_n(y))
        return ident

    def _holder(self, ident: str, label: str, data: dict[str, str] | None) -> ET.Element:
        if data:
            # draw.io keeps custom attributes on an <object> that wraps the cell
            return ET.SubElement(self.root, "object", id=ident, label=label, **data)
        return ET.SubElement(self.root, "mxCell", id=ident, value=label)

    def text(self) -> str:
        ET.indent(self.root_el, space="  ")
        return ET.tostring(self.root_el, encoding="unicode", xml_declaration=False) + "\n"


def _chassis_bays(doc: _Doc, cell: str, chassis: Chassis, contents: list[Any], w: float, h: float) -> None:
    """The chassis' bays inside it, as the canvas draws them: each blade and I/O module in the bay it
    states (a traceable cell per occupied bay), and a note naming those whose bay is not stated."""
    face = chassis_face(chassis, contents, w, h)
    for tile in face.blades + face.io:
        blade = tile.kind == "blade"
        label = (f"{tile.bay}" if blade else f"I/O {tile.bay}") + ("" if not tile.occupants else
                                                                  " · " + ", ".join(tile.occupants))
        style = (f"{_BASE_TEXT}fontSize=7;fontStyle=0;strokeColor=#3f51b5;resizable=0;movable=0;"
                 f"fillColor={'#c5cae9' if not blade else '#9fa8da' if tile.occupants else '#ffffff'};"
                 + ("horizontal=0;verticalAlign=bottom;" if blade else "align=left;spacingLeft=3;"))
        data = {"testbed_kind": "blade bay" if blade else "I/O module bay", "bay": str(tile.bay)}
        if tile.occupants:
            data["testbed_id"] = ", ".join(tile.occupants)
        doc.vertex(label, style, tile.x, tile.y, tile.w, tile.h, parent=cell, data=data, prefix="b")
    if face.notes:
        doc.vertex("; ".join(face.notes), f"text;{_BASE_TEXT}fontSize=8;fontStyle=0;align=left;verticalAlign=middle;",
                   8, h - 16, w - 16, 14, parent=cell, data={"testbed_kind": "chassis note"}, prefix="b")


def _n(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".") if v == v else "0"


def drawio_document(bed: Any, positions: dict[str, Box] | None = None,
                    findings: Iterable[Any] = ()) -> tuple[str, DrawioCounts]:
    """The draw.io XML of the bed's diagram and what it holds."""
    boxes = positions if positions is not None else layout(bed)
    doc = _Doc(bed.bed.name)
    counts = DrawioCounts()
    devices = {d.id: d for d in (*bed.servers, *bed.switches, *bed.arrays, *bed.chassis)}
    hosted = vms_by_host(bed)
    chips: dict[str, Any] = {n.id: n for n in bed.networks}
    chips.update({v.id: v for v in bed.vms if v.host not in devices})
    chips.update({g.name: g for g in drawn_groups(bed)})
    vm_hosts = {v.id: v.host for v in bed.vms if v.host in devices}
    found = badges(findings or (), {**devices, **chips}, vm_hosts)
    port_cells: dict[str, dict[str, str]] = {}
    device_cells: dict[str, str] = {}
    rects: dict[str, tuple[float, float, float, float]] = {}
    marks: dict[str, Any] = {}

    # devices, drawn first so edges and chips stack above them
    for ident, dev in devices.items():
        b = boxes.get(ident)
        if b is None:
            continue
        fill, border = body_style(dev)
        badge = found.get(ident)
        label = ident + _subtitle(dev)
        stroke = _hex(border) if badge is None else ("#d32f2f" if badge.severity == "error" else "#f2a900")
        style = (f"rounded=1;arcSize=8;{_BASE_TEXT}fillColor={_hex(fill)};strokeColor={stroke};"
                 f"strokeWidth={1.2 if badge is None else 2.5};"
                 "verticalAlign=top;align=left;spacingLeft=8;spacingTop=2;fontSize=11;fontStyle=1;"
                 "container=1;collapsible=0;recursiveResize=0;")
        data = {"testbed_id": ident, "testbed_kind": _kind(dev)}
        if badge:
            data["findings"] = f"{badge.count} {badge.severity}{'s' if badge.count != 1 else ''}"
        cell = doc.vertex(label, style, b.x, b.y, b.w, b.h, data=data, prefix="d")
        device_cells[ident] = cell
        counts.devices += 1
        rects[ident] = (b.x, b.y, b.w, b.h)
        marks[ident] = port_marks(dev, b.w, b.h)
        port_cells[ident] = {}
        for name, m in marks[ident].items():
            r = m.rect
            role = m.role
            bottom = m.side > 0
            pstyle = (f"{_BASE_TEXT}fillColor={ROLE_COLOURS.get(role, '#8a8a8a')};"
                      f"strokeColor={_hex(colour(role).darker(130))};fontSize=7;fontStyle=0;"
                      f"verticalLabelPosition={'bottom' if bottom else 'top'};"
                      f"verticalAlign={'top' if bottom else 'bottom'};labelPosition=center;align=center;"
                      "resizable=0;movable=0;points=[[0.5,0,0],[0.5,1,0]];")
            pdata = {"testbed_id": f"{ident}:{name}", "testbed_kind": "port", "role": ROLE_LABELS.get(role, role)}
            if m.controller:
                pdata["controller"] = m.controller
            address = getattr(m.port, "address", "")
            if address:
                pdata["address"] = address
            port_cells[ident][name] = doc.vertex(name, pstyle, r.x(), r.y(), r.width(), r.height(),
                                                 parent=cell, data=pdata, prefix="p")
            counts.ports += 1
        vms = hosted.get(ident, ()) if isinstance(dev, Server) else ()
        shown = vm_chip_rects(b.w - 8, len(vms), 50.0, 4.0)
        for i, r in enumerate(shown):
            more = len(vms) - len(shown)
            label = f"+{more + 1}" if more > 0 and i == len(shown) - 1 else vms[i].id
            doc.vertex(label, f"rounded=1;{_BASE_TEXT}fillColor=#ffffff;strokeColor=#8796a8;fontSize=8;",
                       r.x(), r.y(), r.width(), r.height(), parent=cell,
                       data={"testbed_id": vms[i].id, "testbed_kind": "vm"} if not label.startswith("+") else None,
                       prefix="m")
            counts.vms += 1
        if isinstance(dev, Chassis):
            _chassis_bays(doc, cell, dev, chassis_contents(bed, ident), b.w, b.h)

    # cables from port to port, with the canvas's bends
    obstacles = list(rects.values()) if len(rects) <= ROUTED_MAX else []
    for link in bed.links:
        line = link_geometry(link.a, link.b, devices, rects, marks, obstacles)
        ends = [_end_cell(ref, devices, device_cells, port_cells) or "" for ref in (link.a, link.b)]
        if line is None or "" in ends:
            counts.skipped.append(f"{link.a} - {link.b}")
            continue
        poly, role = line
        width = 3 if link.kind in ("isl", "lag", "stack") or role == "isl" else 1.6
        style = (f"endArrow=none;startArrow=none;html=0;rounded=0;edgeStyle=none;strokeColor={ROLE_COLOURS.get(role)};"
                 f"strokeWidth={width};" + ("dashed=1;dashPattern=8 3 1 3;" if link.kind == "lag" else ""))
        data = {"testbed_kind": link.kind or "cable", "a": link.a, "b": link.b, "role": ROLE_LABELS.get(role, role)}
        doc.edge(ends[0], ends[1], style, _bends(poly), data=data)
        counts.cables += 1
    for path in uncabled_paths(bed, devices):
        line = link_geometry(path.initiator, path.target, devices, rects, marks)
        ends = [_end_cell(ref, devices, device_cells, port_cells) or "" for ref in (path.initiator, path.target)]
        if line is None or "" in ends:
            continue
        style = (f"endArrow=none;html=0;edgeStyle=none;dashed=1;strokeColor={ROLE_COLOURS.get(line[1])};"
                 "strokeWidth=1.2;opacity=70;")
        doc.edge(ends[0], ends[1], style, _bends(line[0]),
                 data={"testbed_kind": "path", "a": path.initiator, "b": path.target})
        counts.paths += 1

    # networks and VMs without a host
    for ident, item in chips.items():
        b = boxes.get(ident)
        if b is None:
            continue
        if isinstance(item, ArrayGroup):
            counts.volumes += _group_card(doc, item, group_member_ids(bed, ident), b, found.get(ident))
        elif isinstance(item, Network):
            role = item.role if item.role in ROLE_COLOURS else "lan"
            style = (f"rounded=1;arcSize=50;{_BASE_TEXT}fillColor=#ffffff;strokeColor={ROLE_COLOURS[role]};"
                     "strokeWidth=2;fontSize=10;")
            doc.vertex(network_label(item), style, b.x, b.y, b.w, b.h,
                       data={"testbed_id": ident, "testbed_kind": "network"}, prefix="n")
        else:
            doc.vertex(f"{ident} (no host)", f"rounded=1;{_BASE_TEXT}fillColor=#ffffff;strokeColor=#8796a8;"
                       "dashed=1;fontSize=10;", b.x, b.y, b.w, b.h,
                       data={"testbed_id": ident, "testbed_kind": "vm"}, prefix="n")
        counts.chips += 1

    _legend(doc, content_rect({k: b for k, b in boxes.items() if k in devices or k in chips}))
    return doc.text(), counts


def _group_card(doc: _Doc, g: ArrayGroup, members: list[str], b: Box, badge: Any) -> int:
    """An array group as a container: its name, address and members, and a row per volume (each
    traceable as GROUP:VOLUME), as the canvas draws it.  Returns the volumes written."""
    head, rows = group_card_lines(g, members)
    fill, border = body_style(StorageArray(id=g.name))
    stroke = _hex(border) if badge is None else ("#d32f2f" if badge.severity == "error" else "#f2a900")
    style = (f"rounded=1;arcSize=6;{_BASE_TEXT}fillColor={_hex(fill)};strokeColor={stroke};dashed=1;"
             "verticalAlign=top;align=left;spacingLeft=8;spacingTop=2;fontSize=11;fontStyle=1;"
             "container=1;collapsible=0;recursiveResize=0;")
    data = {"testbed_id": g.name, "testbed_kind": "array_group", "members": ", ".join(members)}
    if badge:
        data["findings"] = f"{badge.count} {badge.severity}{'s' if badge.count != 1 else ''}"
    card = doc.vertex(f"{g.name}\n{head}", style, b.x, b.y, b.w, b.h, data=data, prefix="g")
    row_style = f"text;{_BASE_TEXT}fontSize=9;fontStyle=0;align=left;verticalAlign=middle;spacingLeft=18;"
    written = 0
    for i, text in enumerate(rows):
        y = GROUP_HEAD_H + i * GROUP_LINE_H
        if i < min(len(g.volumes), GROUP_VOLUMES_SHOWN):
            v = g.volumes[i]
            vdata = {"testbed_id": f"{g.name}:{v.name}", "testbed_kind": "volume", "group": g.name}
            if v.pool:
                vdata["pool"] = str(v.pool)
            doc.vertex(text, row_style, 4, y, b.w - 8, GROUP_LINE_H, parent=card, data=vdata, prefix="g")
            written += 1
        else:
            doc.vertex(text, row_style, 4, y, b.w - 8, GROUP_LINE_H, parent=card, prefix="g")
    return written


def _subtitle(dev: Any) -> str:
    if isinstance(dev, Server):
        detail = dev.model or dev.role
        return f"\n{detail}" if detail else ""
    if isinstance(dev, Switch):
        return f"\n{dev.model or ('FC switch' if dev.kind == 'fc' else 'Ethernet switch')}"
    if isinstance(dev, StorageArray):
        return f"\n{dev.model}" if dev.model else ""
    return ""


def _end_cell(ref: str, devices: dict[str, Any], device_cells: dict[str, str],
              port_cells: dict[str, dict[str, str]]) -> str | None:
    dev, port = ref_parts(ref, devices)
    if dev not in device_cells:
        return None
    if port and port in port_cells.get(dev, {}):
        return port_cells[dev][port]
    return device_cells[dev]   # a switch whose ports are not declared: the cable meets its body


def _bends(poly: Any) -> list[tuple[float, float]]:
    points = [(poly[i].x(), poly[i].y()) for i in range(poly.size())]
    return points[1:-1]


def _legend(doc: _Doc, content: Any) -> None:
    x, y = content.right() + 30, content.top()
    rows = len(LEGEND_KEYS) + 1
    box = doc.vertex("Legend", f"rounded=1;arcSize=4;{_BASE_TEXT}fillColor=#ffffff;strokeColor=#b0b7c0;"
                     "verticalAlign=top;align=left;spacingLeft=10;fontStyle=1;fontSize=11;container=1;collapsible=0;",
                     x, y, 190, 30 + 17 * rows, data={"testbed_kind": "legend"}, prefix="l")
    row_y = 27.0
    for key in LEGEND_KEYS:
        width = 3 if key == "isl" else 1.6
        doc.vertex("", f"line;strokeWidth={width};strokeColor={ROLE_COLOURS[key]};html=0;", 10, row_y + 6, 28, 2,
                   parent=box, prefix="l")
        doc.vertex(ROLE_LABELS[key], f"text;{_BASE_TEXT}fontSize=10;align=left;verticalAlign=middle;",
                   46, row_y, 134, 15, parent=box, prefix="l")
        row_y += 17
    doc.vertex("", f"line;dashed=1;strokeWidth=1.2;strokeColor={ROLE_COLOURS['iscsi']};html=0;", 10, row_y + 6, 28,
               2, parent=box, prefix="l")
    doc.vertex("Path (cabling not drawn)", f"text;{_BASE_TEXT}fontSize=10;align=left;verticalAlign=middle;",
               46, row_y, 134, 15, parent=box, prefix="l")
