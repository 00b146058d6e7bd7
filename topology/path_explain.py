"""Why a host reaches a volume or not, hop by hop: what the path view lists and the diagram
highlights.

Nothing is judged here: the paths, their hops and the first hop that fails come from
topology/derived_paths.py (through the validation context, as the PATH rules see them), for
the reference configuration or a scenario's view of the bed.  What this module adds is what
a drawing needs: the cable behind each hop and the switch ports it lands on (looked up in the
bed's cables), and, in a scenario, which of the parts the scenario takes out the reference
configuration's paths crossed ("port failed in this scenario").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from topology.abandon import check as check_abandoned
from topology.gc_pause import collector_paused
from topology.ids import SEP, endpoint_device
from topology.index import BedIndex
from topology.letting_go import let_go
from topology.model import Bed, Link
from topology.path_parts import Hop, StoragePath
from topology.scenario_view import removed_by, scenario_view
from topology.validation.context import Context

_CONTROLLER = "#"      # topology.graph's controller node: ARRAY#CONTROLLER


@dataclass(frozen=True)
class Step:
    """One hop as the diagram shows it."""
    kind: str                      # vnic | vswitch | iface | port | cable | switch_port | switch | isl |
    #                                target | controller | lun
    ref: str                       # the id the canvas knows: DEVICE:PORT, a device, ARRAY for a controller
    text: str
    ends: tuple[str, ...] = ()      # a cable's two ends, as the bed writes them (the canvas finds it by them)


@dataclass
class ShownPath:
    initiator: str
    target: str
    steps: list[Step]
    pinned: bool = False
    working: bool = True           # the route the rules count (not cut, not invalid)

    def text(self) -> str:
        """'host-1:SAN1 → sw-1:2 → sw-1 → sw-1:7 → array-1:A0 → controller A → VMStore (LUN 0)'."""
        return " → ".join(s.text for s in self.steps if s.kind not in ("cable", "isl"))

    @property
    def refs(self) -> set[str]:
        return {s.ref for s in self.steps if s.ref}


@dataclass
class Explanation:
    host: str
    volume: str
    scenario: str | None                 # None: the reference configuration
    why_used: str = ""                   # "mapped to it", "VM x has disk d on it" ...
    paths: list[ShownPath] = field(default_factory=list)
    missing: str = ""                    # the first hop that fails, when no path carries the volume
    reference_paths: int = 0             # in a scenario: how many paths the reference configuration has
    taken_out: list[str] = field(default_factory=list)   # parts the scenario takes out that those crossed
    problem_refs: list[str] = field(default_factory=list)  # what the diagram marks as the trouble
    owner: str = ""                      # who formats the volume, and why (`topology.volume_owner`)

    def summary_lines(self) -> list[str]:
        """The explanation's facts in words (a terminal, a test)."""
        lines = [f"{self.host} -> {self.volume}: {len(self.working)} working path(s)"
                 + (f" ({self.why_used})" if self.why_used else "")]
        if self.missing:
            lines.append(f"First hop that fails: {self.missing}")
        if self.owner:
            lines.append(self.owner)
        return lines

    @property
    def working(self) -> list[ShownPath]:
        return [p for p in self.paths if p.working]


def _context(bed: Bed, scenario: str | None) -> tuple[Context, Any]:
    if scenario is None:
        return Context(bed), None
    idx = BedIndex(bed)
    sc = idx.scenarios.get(scenario)
    if sc is None:
        raise KeyError(f"no scenario {scenario!r} in this bed")
    return Context(scenario_view(bed, sc, idx), scenario=sc, drawn=bed), (sc, idx)


def volumes_used(bed: Bed, scenario: str | None = None) -> dict[str, dict[str, str]]:
    """Host or VM -> {ARRAY:VOLUME: why it uses it}, in the reference or a scenario."""
    ctx, _ = _context(bed, scenario)
    return _uses(ctx)


def _uses(ctx: Context) -> dict[str, dict[str, str]]:
    """Who uses which volume, leaving out the hosts and VMs the configuration does not run (the
    array's host entries still name a failed or excluded host: it uses nothing in that scenario)."""
    there = ctx.idx.components
    return {h: dict(v) for h, v in sorted(ctx.volumes_used.items()) if h in there}


def explain(bed: Bed, host: str, volume: str, scenario: str | None = None) -> Explanation:
    """The paths `host` has to `volume` with every hop, or the first hop that fails."""
    ctx, scoped = _context(bed, scenario)
    return _explain(bed, ctx, scoped, host, volume)


@dataclass
class Survey:
    """What the path view shows at once: who uses which volume, and one host and volume explained."""
    uses: dict[str, dict[str, str]]
    host: str = ""
    volume: str = ""
    explanation: Explanation | None = None


def survey(bed: Bed, host: str = "", volume: str = "", scenario: str | None = None) -> Survey:
    """Who uses which volume in this configuration, and `host` and `volume` explained (the first
    host that uses a volume, and a host's first volume, when they are not given or no longer
    apply; a host that uses none is kept, with nothing to explain).  The collector waits meanwhile
    (topology.gc_pause): walking the 155,000 containers a 5,000-device bed's survey makes, at every
    tick of the GUI thread's collector, held that thread 30-75 ms at a time after each edit."""
    with collector_paused():
        return _survey(bed, host, volume, scenario)


def _survey(bed: Bed, host: str, volume: str, scenario: str | None) -> Survey:
    scraps: list[Any] = list(_context(bed, scenario))   # the bed's index and its paths: let go piecewise
    try:                                                # (topology.letting_go says why), abandoned or not
        ctx, scoped = scraps
        check_abandoned()
        uses = _uses(ctx)
        check_abandoned()
        if not host and volume:             # a volume picked first: the first host that uses it
            host = next((h for h, vols in uses.items() if volume in vols), "")
        if not host or host not in uses and host not in ctx.idx.components:
            host = next(iter(uses), "")
        mine = uses.get(host, {})
        if volume not in mine:
            volume = sorted(mine)[0] if mine else ""
        out = Survey(uses, host, volume)
        if host and volume:
            out.explanation = _explain(bed, ctx, scoped, host, volume)
        return out
    finally:
        ctx = scoped = None     # only `scraps` holds them now
        let_go(scraps)


def _explain(bed: Bed, ctx: Context, scoped: Any, host: str, volume: str) -> Explanation:
    out = Explanation(host, volume, ctx.scenario.id if ctx.scenario is not None else None,
                      ctx.volumes_used.get(host, {}).get(volume, ""))
    from topology.volume_owner import volume_owners
    who = volume_owners(ctx.bed).get(volume)
    out.owner = who.describe() if who is not None else ""
    working = {id(p) for p, _ in ctx.working_paths(host, volume)}
    cables = _Cables(ctx.bed)
    for sp in ctx.derived.paths:
        if sp.host == host and volume in sp.spec.volumes:
            out.paths.append(ShownPath(sp.spec.initiator, sp.spec.target, cables.steps(sp, volume), sp.pinned,
                                       id(sp.spec) in working))
    if not out.working and ctx.scenario is not None and host not in ctx.idx.components:
        out.missing = f"{host} does not run in scenario {ctx.scenario.id} (failed, excluded or not listed)"
        out.problem_refs = [host]
    elif not out.working:
        out.missing = ctx.derived.why_no_path(host, volume)
        out.problem_refs = _named_refs(out.missing, ctx)
    if scoped is not None:
        sc, idx = scoped
        reference = _reference(bed, host, volume)
        if len(out.working) < len(reference):
            out.reference_paths = len(reference)
            out.taken_out = _taken_out(reference, removed_by(bed, sc, idx))
            out.problem_refs = list(dict.fromkeys([*out.problem_refs, *out.taken_out]))
    return out


def _taken_out(reference: list[ShownPath], gone: Any) -> list[str]:
    """The parts a scenario takes out that the reference configuration's paths cross."""
    hit: list[str] = []
    for path in reference:
        for step in path.steps:
            if step.kind in ("vnic", "vswitch", "iface", "port", "switch_port", "target", "switch") \
                    and gone.gone(step.ref):
                hit.append(step.ref)
            elif step.kind == "controller":
                ctrl = step.text.removeprefix("controller ")
                if (step.ref, ctrl) in gone.controllers or step.ref in gone.devices:
                    hit.append(f"{step.ref}{SEP}{ctrl}")
    return list(dict.fromkeys(hit))


def _reference(bed: Bed, host: str, volume: str) -> list[ShownPath]:
    ctx = Context(bed)
    cables = _Cables(bed)
    working = {id(p) for p, _ in ctx.working_paths(host, volume)}
    return [ShownPath(sp.spec.initiator, sp.spec.target, cables.steps(sp, volume), sp.pinned)
            for sp in ctx.derived.paths if sp.host == host and volume in sp.spec.volumes and id(sp.spec) in working]


_TOKEN = re.compile(r"[^\s,;()]+")


def _named_refs(text: str, ctx: Context) -> list[str]:
    """The ports and devices a reason names ("host-1:SAN1 has no cable"): what the diagram marks."""
    ports, devices = [], []
    for token in _TOKEN.findall(text):
        token = token.rstrip(".:")
        if token in ctx.idx.ports:
            ports.append(token)
        elif token in ctx.idx.components:
            devices.append(token)
    return list(dict.fromkeys(ports or devices))     # the ports say it more precisely than their devices


class _Cables:
    """The bed's cables by their ends, to put the cable and switch ports behind each hop."""

    def __init__(self, bed: Bed):
        self.by_end: dict[str, list[Link]] = {}
        for lk in bed.links:
            for end in (lk.a, lk.b):
                self.by_end.setdefault(end, []).append(lk)
                dev = endpoint_device(end)
                if dev != end:
                    self.by_end.setdefault(dev, []).append(lk)

    def between(self, a: str, b_device: str) -> tuple[Link, str] | None:
        """A cable from end `a` (a port or a device) to device `b_device`, and its end there."""
        for lk in self.by_end.get(a, ()):
            for mine, other in ((lk.a, lk.b), (lk.b, lk.a)):
                if (mine == a or endpoint_device(mine) == a) and endpoint_device(other) == b_device:
                    return lk, other
        return None

    def steps(self, sp: StoragePath, volume: str) -> list[Step]:
        out: list[Step] = []
        hops = list(sp.hops)
        previous: str | None = None            # the last physical end: a port, then switches
        for hop in hops:
            if hop.kind in ("vnic", "vswitch", "iface"):
                out.append(Step(hop.kind, hop.element, str(hop)))
                continue
            if hop.kind == "port":
                out.append(Step("port", hop.element, hop.element))
                previous = hop.element
                continue
            if hop.kind in ("switch", "target") and previous is not None:
                self._cable(out, previous, hop)
            if hop.kind == "switch":
                out.append(Step("switch", hop.element, hop.element))
                previous = hop.element
            elif hop.kind == "target":
                out.append(Step("target", hop.element, hop.element))
                previous = None
            elif hop.kind == "controller":
                array, _, ctrl = hop.element.partition(_CONTROLLER)
                out.append(Step("controller", array, f"controller {ctrl}"))
            elif hop.kind == "lun" and hop.element == volume:
                out.append(Step("lun", hop.element, str(hop)))
        return out

    def _cable(self, out: list[Step], previous: str, hop: Hop) -> None:
        """The cable (and the switch ports it lands on) from `previous` to this hop."""
        here = endpoint_device(hop.element) if hop.kind == "target" else hop.element
        found = self.between(previous, here) if hop.kind == "switch" else self.between(hop.element, previous)
        if found is None:
            if hop.kind == "target":      # a direct cable, or cabling the bed does not give
                direct = self.between(hop.element, endpoint_device(previous))
                if direct is not None:
                    out.append(Step("cable", "", "cable", (direct[0].a, direct[0].b)))
            return
        link, far = found
        isl = out and out[-1].kind == "switch" and hop.kind == "switch"
        if hop.kind == "switch":
            near = link.b if far == link.a else link.a
            if isl and near != previous:
                out.append(Step("switch_port", near, near))
            out.append(Step("isl" if isl else "cable", "", "switch link" if isl else "cable", (link.a, link.b)))
            if far != here:
                out.append(Step("switch_port", far, far))
        else:                              # from the last switch to the array port
            if far != previous:
                out.append(Step("switch_port", far, far))
            out.append(Step("cable", "", "cable", (link.a, link.b)))
