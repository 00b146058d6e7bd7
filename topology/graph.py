"""The bed as a networkx graph, and the storage-path analysis built on it.

`bed_graph` gives one node per device, port, controller and virtual switch, with the
cabling as edges: the canvas lays it out and the path rules walk it.  `PathAnalyzer`
routes each declared iSCSI session / FC path across the switch fabric (shortest route
on the switch-to-switch graph, cached per switch pair, so a bed with thousands of
paths stays fast) and reports the elements every path depends on, from which the
single points of failure of a host's paths to a volume follow (PATH-002).
"""
from __future__ import annotations

from collections.abc import Iterable, KeysView
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:      # networkx costs a quarter of a cold start: imported where a graph is built
    import networkx as nx

from topology.index import BedIndex, PortRef
from topology.model import VM, PathSpec, StorageArray, Switch
from topology.unknown import NOT_STATED


def bed_graph(idx: BedIndex) -> nx.Graph[str]:
    import networkx as nx
    g: nx.Graph[str] = nx.Graph()
    bed = idx.bed
    for s in bed.servers:
        g.add_node(s.id, kind="server", role=s.role)
    for sw in bed.switches:
        g.add_node(sw.id, kind="switch", fabric=sw.fabric)
    for a in bed.arrays:
        g.add_node(a.id, kind="array")
        for c in a.controllers:
            cid = controller_node(a.id, c.name)
            g.add_node(cid, kind="controller")
            g.add_edge(a.id, cid, kind="contains")
    for v in bed.vms:
        g.add_node(v.id, kind="vm")
    for ref, pr in idx.ports.items():
        if pr.implicit:
            continue
        g.add_node(ref, kind="port")
        owner = controller_node(pr.device.id, pr.controller.name) if pr.controller else pr.device.id
        g.add_edge(owner, ref, kind="contains")
    for vs in bed.virtual_switches:
        g.add_node(vs.id, kind="vswitch")
        g.add_edge(vs.host, vs.id, kind="contains")
        for up in vs.uplinks:
            g.add_edge(vs.id, up, kind="uplink")
    for v in bed.vms:
        for n in v.nics:
            if n.vswitch:
                g.add_edge(f"{v.id}:{n.name}", n.vswitch, kind="vnic")
        if v.host:
            g.add_edge(v.host, v.id, kind="runs")
    for link in bed.links:
        if link.b is NOT_STATED:
            continue    # the far end is not stated: nothing to join
        for end in (link.a, link.b):
            if end not in g:
                end_port = idx.port(end)
                g.add_node(end, kind="port")
                if end_port is not None:
                    g.add_edge(end_port.device.id, end, kind="contains")
        g.add_edge(link.a, link.b, kind=link.kind)
    return g


_MISSING = object()
_NONE: frozenset[str] = frozenset()

# A route's elements are port refs and device ids, plus two kinds of their own:
_CONTROLLER = "#"         # ARRAY#CONTROLLER
_FABRIC = "fabric:"       # fabric:A


def controller_node(array_id: str, controller: str) -> str:
    return f"{array_id}{_CONTROLLER}{controller}"


def fabric_element(fabric: str) -> str:
    return f"{_FABRIC}{fabric}"


def is_fabric(element: str) -> bool:
    return element.startswith(_FABRIC)


def element_text(element: str) -> str:
    """A route element as a sentence names it: 'fabric A', 'controller 0 of MD3000i'."""
    if is_fabric(element):
        return f"fabric {element[len(_FABRIC):]}"
    if _CONTROLLER in element:
        array, ctrl = element.split(_CONTROLLER, 1)
        return f"controller {ctrl} of {array}"
    return element


@dataclass(slots=True)
class Route:
    status: str                       # ok | unknown (cabling not in the bed) | disconnected | invalid
    elements: frozenset = frozenset()  # what the path depends on (ports, switches, controller, fabric)
    switches: tuple = ()
    reason: str = ""


@dataclass
class PathAnalyzer:
    idx: BedIndex
    _neighbors: dict[str, set[str]] = field(default_factory=dict)
    _switch_graph: Any = None
    _component: dict[str, int] = field(default_factory=dict)
    _route_cache: dict[tuple[str, str], tuple | None] = field(default_factory=dict)
    _standby: dict[str, bool] = field(default_factory=dict)
    _attached: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    _ini_sides: dict[str, Any] = field(default_factory=dict)
    _tgt_sides: dict[str, Any] = field(default_factory=dict)
    _best_cache: dict[tuple[frozenset[str], frozenset[str]], tuple | None] = field(default_factory=dict)
    _far_sides: dict[tuple, tuple[str, frozenset, tuple, str]] = field(default_factory=dict)
    _end_devices: dict[str, Any] = field(default_factory=dict)      # cable end -> its device (None: unknown)
    # each cable's two ends as (ref, its port or None, its device or None): the rules that walk
    # every cable read them here instead of resolving 20,000 ends again each
    link_ends: list[tuple[tuple[str, PortRef | None, Any], tuple[str, PortRef | None, Any]]] = \
        field(default_factory=list)
    # ports whose cable's far end the source does not state: cabled, to nothing the paths can follow
    unstated_far_ends: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        import networkx as nx
        idx = self.idx
        sg: nx.Graph[str] = nx.Graph()
        sg.add_nodes_from(idx.switches)
        ends: dict[str, tuple[str, PortRef | None, Any]] = {}
        neighbors, link_ends, indexed = self._neighbors, self.link_ends, idx.ports
        for link in idx.bed.links:
            end_a, end_b = link.a, link.b
            if end_b is NOT_STATED:     # a cable the source states on one end only
                neighbors.setdefault(end_a, set())
                self.unstated_far_ends.add(end_a)
                pr = indexed.get(end_a) or idx.port(end_a)
                link_ends.append(((end_a, pr, pr.device if pr is not None else idx.components.get(end_a)),
                                  (end_b, None, None)))
                continue
            # (each end in turn, written out: 20,000 cable ends)
            near = neighbors.get(end_a)
            if near is None:
                neighbors[end_a] = {end_b}
            else:
                near.add(end_b)
            near = neighbors.get(end_b)
            if near is None:
                neighbors[end_b] = {end_a}
            else:
                near.add(end_a)
            ea = ends.get(end_a)
            if ea is None:
                # idx.endpoint_device(ref), without resolving the port again
                pr = indexed.get(end_a) or idx.port(end_a)
                ea = ends[end_a] = (end_a, pr, pr.device if pr is not None else idx.components.get(end_a))
            eb = ends.get(end_b)
            if eb is None:
                pr = indexed.get(end_b) or idx.port(end_b)
                eb = ends[end_b] = (end_b, pr, pr.device if pr is not None else idx.components.get(end_b))
            link_ends.append((ea, eb))
            da, db = ea[2], eb[2]
            if isinstance(da, Switch) and isinstance(db, Switch) and da is not db:
                sg.add_edge(da.id, db.id)
        self._switch_graph = sg
        self._end_devices = {ref: end[2] for ref, end in ends.items()}
        for n, comp in enumerate(nx.connected_components(sg)):
            for s in comp:
                self._component[s] = n
        for a in idx.bed.arrays:
            self._standby[a.id] = any(c.mode == "standby" for c in a.controllers)

    @property
    def cable_ends(self) -> KeysView[str]:
        """Every DEVICE:PORT (or bare device) a cable ends on."""
        return self._neighbors.keys()

    # -------------------------------------------------------------- attachment
    def attached(self, endpoint: str) -> tuple[frozenset[str], frozenset[str]]:
        """(switch ids, other endpoints) directly cabled to a port (cached: every path to an
        array port asks about the same few ports)."""
        hit = self._attached.get(endpoint)
        if hit is not None:
            return hit
        hit = self._attached[endpoint] = self._attached_now(endpoint)
        return hit

    def _attached_now(self, endpoint: str) -> tuple[frozenset[str], frozenset[str]]:
        switches: list[str] = []
        direct: list[str] = []
        devices = self._end_devices
        for other in self._neighbors.get(endpoint, ()):
            dev = devices[other]        # every neighbour is a cable end
            if isinstance(dev, Switch):
                switches.append(dev.id)
            else:
                direct.append(other)
        # most ports have no direct cable: one empty set stands for all of them
        return (frozenset(switches) if switches else _NONE), (frozenset(direct) if direct else _NONE)

    def uplinks_of(self, pr: PortRef) -> list[str]:
        """A VM vNIC leaves the host through its virtual switch's uplinks; an iSCSI interface
        bound to a physical port (port binding) through that port."""
        if isinstance(pr.device, VM):
            vs = self.idx.vswitches.get(getattr(pr.port, "vswitch", ""))
            return list(vs.uplinks) if vs else []
        bound = getattr(pr.port, "bound_to", "")
        return [bound] if bound else [pr.ref]

    def _switch_route(self, a: str, b: str) -> tuple | None:
        """The switches from a to b.  One route is kept per pair of switches, in name order, and
        given back reversed when asked for from the other end."""
        forward = a <= b
        key = (a, b) if forward else (b, a)
        if key in self._route_cache:
            route = self._route_cache[key]
        else:
            if self._component.get(a) != self._component.get(b):
                route = None
            else:
                import networkx as nx
                route = tuple(nx.shortest_path(self._switch_graph, *key))
            self._route_cache[key] = route
        return route if forward or route is None else route[::-1]

    # -------------------------------------------------------------- routing
    def route(self, path: PathSpec) -> Route:
        """How a path crosses the cabling and what it depends on (`routes` of one path)."""
        return self.routes((path,))[0][1]

    def routes(self, paths: Iterable[PathSpec]) -> list[tuple[PathSpec, Route]]:
        """(path, route) for each path, in one loop for a bed's tens of thousands of paths.  What an
        end contributes is worked out once per port (the paths share a few hundred target ports, and
        each initiator port has a path to several of them)."""
        ini_sides, tgt_sides, far_sides = self._ini_sides, self._tgt_sides, self._far_sides
        out: list[tuple[PathSpec, Route]] = []
        append = out.append
        for path in paths:
            ini = ini_sides.get(path.initiator, _MISSING)
            if ini is _MISSING:
                ini = self._initiator_side(path.initiator)
            tgt = tgt_sides.get(path.target, _MISSING)
            if tgt is _MISSING:
                tgt = self._target_side(path.target)
            if ini is None or tgt is None or tgt.__class__ is str or ini[2] is None:
                append((path, _not_carried(path, ini, tgt)))
                continue
            ini_pr, uplinks, ini_elements, ini_sw, ini_direct = ini
            target = path.target
            tgt_direct = tgt[3]
            # what the target, the cabling between the two and the fabric add to the initiator's own
            # elements is the same for every initiator cabled alike (a rack of hosts to the same ports)
            direct = bool(ini_direct) and target in ini_direct \
                or bool(tgt_direct) and any(u in tgt_direct for u in uplinks)
            key = (target, ini_sw, direct, getattr(ini_pr.port, "fabric", ""))
            far = far_sides.get(key)
            if far is None:
                far = far_sides[key] = self._far_side(tgt, ini_sw, direct, key[3])
            append((path, Route(far[0], ini_elements | far[1], far[2], far[3])))
        return out

    def _far_side(self, tgt: tuple, ini_sw: frozenset[str], direct: bool, ini_fabric: str
                  ) -> tuple[str, frozenset, tuple, str]:
        """(status, elements beyond the initiator's own, switches crossed, reason) of a route to a target."""
        tgt_pr, tgt_elements, tgt_sw, _ = tgt
        fabric = getattr(tgt_pr.port, "fabric", "") or ini_fabric
        elements = tgt_elements
        if fabric:
            elements = elements | {fabric_element(fabric)}
        if direct:
            return "ok", elements, (), ""
        if not ini_sw or not tgt_sw:
            return "unknown", elements, (), "the bed does not say how this path is cabled"
        best = self._best_switch_route(ini_sw, tgt_sw)
        if best is None:
            return ("disconnected", elements, (),
                    f"no switch route from {', '.join(sorted(ini_sw))} to {', '.join(sorted(tgt_sw))}")
        # a switch is a single point of failure only when the initiator or target has no other attachment
        if len(ini_sw) == 1 and len(tgt_sw) == 1:
            elements = elements.union(best)
        elif len(ini_sw) == 1:
            elements = elements | ini_sw
        elif len(tgt_sw) == 1:
            elements = elements | tgt_sw
        return "ok", elements, best, ""

    def _initiator_side(self, ref: str) -> tuple | None:
        """(port, uplinks, what the path depends on at this end or None when a vNIC has no way out,
        switches the uplinks are cabled to, other ends cabled to them directly); None: no such port."""
        hit = self._ini_sides.get(ref, _MISSING)
        if hit is not _MISSING:
            return hit
        pr = self.idx.port(ref)
        if pr is None:
            hit = None
        else:
            uplinks = self.uplinks_of(pr)
            elements: frozenset | None = frozenset(((ref,) + tuple(uplinks)) if len(uplinks) == 1 else (ref,))
            if isinstance(pr.device, VM) and not uplinks:
                elements = None
            if len(uplinks) == 1:
                sw, direct = self.attached(uplinks[0])
            else:
                sw, direct = _NONE, _NONE
                for up in uplinks:
                    s, d = self.attached(up)
                    sw, direct = sw | s, direct | d
            hit = (pr, tuple(uplinks), elements, sw, direct)
        self._ini_sides[ref] = hit
        return hit

    def _target_side(self, ref: str) -> tuple | str | None:
        """(port, what the path depends on at this end, switches cabled to it, other ends cabled to it),
        why it cannot be a target, or None: no such port."""
        hit = self._tgt_sides.get(ref, _MISSING)
        if hit is not _MISSING:
            return hit
        pr = self.idx.port(ref)
        if pr is None:
            hit = None
        elif not isinstance(pr.device, StorageArray):
            hit = f"{ref} is not an array port"
        else:
            elements: set[str] = set()
            if not self._standby.get(pr.device.id, False):
                elements.add(ref)
                if pr.controller is not None:
                    elements.add(controller_node(pr.device.id, pr.controller.name))
            sw, direct = self.attached(ref)
            hit = (pr, frozenset(elements), sw, direct)
        self._tgt_sides[ref] = hit
        return hit

    def _best_switch_route(self, ini_sw: frozenset[str], tgt_sw: frozenset[str]) -> tuple | None:
        """The shortest switch route between two sets of switches (the first found of the shortest,
        in name order), cached: thousands of hosts share the same few switch pairs."""
        key = (ini_sw, tgt_sw)
        if key in self._best_cache:
            return self._best_cache[key]
        best: tuple | None = None
        for a in sorted(ini_sw):
            for b in sorted(tgt_sw):
                r = self._switch_route(a, b)
                if r is not None and (best is None or len(r) < len(best)):
                    best = r
        self._best_cache[key] = best
        return best


def _not_carried(path: PathSpec, ini: tuple | None, tgt: tuple | str | None) -> Route:
    """The route of a path an end of which is missing, is no array port, or is a vNIC with no way out."""
    if ini is None or tgt is None:
        return Route("invalid", reason="an end of the path does not exist")
    if isinstance(tgt, str):
        return Route("invalid", reason=tgt)
    return Route("disconnected", frozenset((path.initiator,)),
                 reason=f"{path.initiator} is on no virtual switch with an uplink")


def shared_elements(routes: Iterable[Route]) -> frozenset:
    """Elements every one of the routes depends on: the single points of failure."""
    routes = list(routes)
    if not routes:
        return frozenset()
    common = set(routes[0].elements)
    for r in routes[1:]:
        common &= r.elements
    return frozenset(common)
