"""The straightforward versions of the validator's hot spots, as they were before they were made
fast: tests/test_fast_validation.py puts them back in place and checks that every bed gets the
same findings (the fast code works the same answers out once per port and shares them)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from topology.graph import Route, controller_node, fabric_element
from topology.model import VM, PathSpec, StorageArray, Switch
from topology.unknown import NOT_STATED
from topology.validation.port_facts import facing_switch_ports
from topology.validation.registry import Hit, could_not_judge, hit


def route(self: Any, path: PathSpec) -> Route:
    """PathAnalyzer.route, working everything out for each path."""
    idx = self.idx
    ini = idx.port(path.initiator)
    tgt = idx.port(path.target)
    if ini is None or tgt is None:
        return Route("invalid", reason="an end of the path does not exist")
    if not isinstance(tgt.device, StorageArray):
        return Route("invalid", reason=f"{path.target} is not an array port")
    elements = {path.initiator}
    uplinks = self.uplinks_of(ini)
    if isinstance(ini.device, VM):
        if not uplinks:
            return Route("disconnected", frozenset(elements),
                         reason=f"{path.initiator} is on no virtual switch with an uplink")
    if len(uplinks) == 1:
        elements.add(uplinks[0])
    array = tgt.device
    failover = self._standby.get(array.id, False)
    if not failover:
        elements.add(path.target)
        if tgt.controller is not None:
            elements.add(controller_node(array.id, tgt.controller.name))
    fabric = getattr(tgt.port, "fabric", "") or getattr(ini.port, "fabric", "")
    if fabric:
        elements.add(fabric_element(fabric))
    tgt_sw, tgt_direct = self.attached(path.target)
    ini_sw: set[str] = set()
    ini_direct: set[str] = set()
    for up in uplinks:
        s, d = self.attached(up)
        ini_sw |= s
        ini_direct |= d
    if path.target in ini_direct or any(u in tgt_direct for u in uplinks):
        return Route("ok", frozenset(elements))
    if not ini_sw or not tgt_sw:
        return Route("unknown", frozenset(elements), reason="the bed does not say how this path is cabled")
    best: tuple | None = None
    for a in sorted(ini_sw):
        for b in sorted(tgt_sw):
            r = self._switch_route(a, b)
            if r is not None and (best is None or len(r) < len(best)):
                best = r
    if best is None:
        return Route("disconnected", frozenset(elements),
                     reason=f"no switch route from {', '.join(sorted(ini_sw))} to {', '.join(sorted(tgt_sw))}")
    if len(ini_sw) == 1 and len(tgt_sw) == 1:
        elements.update(best)
    elif len(ini_sw) == 1:
        elements.update(ini_sw)
    elif len(tgt_sw) == 1:
        elements.update(tgt_sw)
    return Route("ok", frozenset(elements), best)


def inter_switch_mtus(ctx: Any, switches: tuple[str, ...]) -> list[tuple[str, Any, bool]]:
    """port_facts.inter_switch_mtus: each link between each two switches crossed found by a walk of
    every link, for each pair."""
    idx = ctx.idx
    out: list[tuple[str, Any, bool]] = []
    for a, b in zip(switches, switches[1:]):
        for link in idx.bed.links:
            da, db = idx.endpoint_device(link.a), idx.endpoint_device(link.b)
            if link.kind == "stack" or not isinstance(da, Switch) or not isinstance(db, Switch):
                continue
            if (da.id, db.id) == (a, b):
                ends = (link.a, link.b)
            elif (db.id, da.id) == (a, b):
                ends = (link.b, link.a)
            else:
                continue
            for ref in ends:
                pr = idx.port(ref)
                out.append((ref, idx.effective_mtu(pr) if pr is not None else idx.endpoint_device(ref).mtu, False))
    return out


def path_mtus(ctx: Any, path: PathSpec, route: Any) -> list[tuple[str, Any, bool]]:
    """port_facts.path_mtus: (where, MTU, is_endpoint) along an iSCSI path, looked up for each path."""
    idx = ctx.idx
    out: list[tuple[str, Any, bool]] = []
    ini = idx.port(path.initiator)
    tgt = idx.port(path.target)
    if ini is None or tgt is None:
        return out
    starts = [path.initiator]
    if isinstance(ini.device, VM):
        out.append((path.initiator, ini.port.mtu, True))
        starts = ctx.analyzer.uplinks_of(ini)
    for ref in starts:
        pr = idx.port(ref)
        if pr is None:
            continue
        out.append((ref, idx.effective_mtu(pr), True))
        out += facing_switch_ports(ctx, ref)
    out += inter_switch_mtus(ctx, route.switches)
    out += facing_switch_ports(ctx, path.target)
    out.append((path.target, idx.effective_mtu(tgt), True))
    return out


def net_005(ctx: Any) -> Iterator[Hit]:
    """NET-005 judging each path's MTU hops one by one."""
    seen: set = set()
    for path, route in ctx.routes:
        key = (path.initiator, path.target)
        if path.kind != "iscsi" or key in seen:
            continue
        seen.add(key)
        hops = path_mtus(ctx, path, route)
        known = [(w, m, e) for w, m, e in hops if m is not None and m is not NOT_STATED]
        unknown = [w for w, m, _ in hops if m is NOT_STATED]
        if not known and not unknown:
            continue
        ends = {m for _, m, e in known if e}
        need = max(ends) if ends else 0
        small = [w for w, m, e in known if not e and m < need]
        if len(ends) > 1 or small:
            detail = ", ".join(f"{w}={m}" for w, m, _ in known)
            low = ", ".join(dict.fromkeys(f"{w}={m}" for w, m, _ in known if m < need))
            yield hit([w for w, _, _ in known], f"MTU differs along {path.initiator} -> {path.target}: {detail}",
                      cause=f"{low} below the {need}-byte MTU of the ends on {{n}} iSCSI paths",
                      item=f"{path.initiator} -> {path.target}")
        elif unknown:
            yield could_not_judge([path.initiator, path.target, *unknown],
                                  f"the MTU along {path.initiator} -> {path.target}", (f"{w} MTU" for w in unknown))
        elif ends == {1500} and not [1 for _, m, e in known if not e and m > 1500] and len(known) == len(hops):
            yield hit([path.initiator, path.target],
                      f"{path.initiator} -> {path.target} runs standard 1500-byte frames end to end",
                      severity="info", hint="consider jumbo frames (MTU 9000) end to end for iSCSI",
                      cause="{n} iSCSI paths run standard 1500-byte frames end to end",
                      item=f"{path.initiator} -> {path.target}")


def derive_host_array(self: Any, comp: str, array_id: str, presented: list) -> None:
    """PathDerivation._derive_host_array working each host's paths out on its own (no plan shared
    by hosts whose initiators look alike)."""
    inis = self.endpoints(comp)
    allowed = self.masking.initiators.get((array_id, comp))
    for ini in inis:
        if allowed is not None and not set(ini.exits) & allowed and ini.ref not in allowed:
            continue
        for tgt in self.targets(array_id):
            exit_at, switches, _ = self._carry_now(ini, tgt, False)
            if exit_at is None:
                continue
            vols = [pr for pr in presented if not pr.ports or tgt.ref in pr.ports]
            if vols:
                self._add(comp, ini, tgt, self._hops(ini, tgt, exit_at, switches), vols, pinned=False)


def raid_002(ctx: Any) -> Iterator[Hit]:
    """RAID-002 describing every disk of every group one by one."""
    from collections import Counter

    from topology.ids import group_ref
    for a in ctx.bed.arrays:
        if a.simulated:
            continue
        scope = ctx.idx.scopes[a.id]
        for g in a.disk_groups:
            described = [(d, (d.spec.media, d.spec.rpm, d.spec.size_gb)) for d in scope.group_disks(g)]
            kinds = Counter(k for _, k in described if NOT_STATED not in k)
            unknown = [f"{what} of the disks in {d.enclosure}:{d.spec.slots}" for d, k in described
                       if NOT_STATED in k for what, v in zip(("media", "speed", "size"), k, strict=True)
                       if v is NOT_STATED]
            if len(kinds) <= 1 and unknown and len({id(d.spec) for d, _ in described}) > 1:
                yield could_not_judge([a.id, group_ref(a.id, g.name)],
                                      f"whether disk group {g.name} on {a.id} mixes disks", unknown)
            elif len(kinds) > 1:
                parts = ", ".join(f"{n} x {sz:g} GB {m} {rpm or ''}".rstrip() for (m, rpm, sz), n in kinds.items())
                yield hit([a.id, group_ref(a.id, g.name)], f"disk group {g.name} on {a.id} mixes {parts}")
