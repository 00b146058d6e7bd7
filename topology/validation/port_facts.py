"""What the network and path rules read about ports, worked out once per validation: the server
ports sorted out in one walk (a 2,000-host bed has 10,000, and most rules judge only its few
thousand iSCSI ports, or the ports whose roles the source does not state), and the MTU hops at
each end of an iSCSI path (the switch ports facing a port, with their MTUs) and between the
switches it crosses."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from topology.model import VM, Switch
from topology.unknown import NOT_STATED
from topology.validation.context import Context

SAN = "iscsi"

Row = tuple[Any, str, Any]          # (server, DEVICE:PORT, port)


@dataclass(slots=True)
class ServerPortFacts:
    san: list[Row]                  # those with the iSCSI role (`SAN in port.roles`), in bed order
    roles_unstated: list[Row]       # those whose roles the source does not state, in bed order
    # per server, in bed order: (server, its iSCSI ports, refs of its ports whose roles are not stated)
    by_server: list[tuple[Any, list[tuple[str, Any]], list[str]]]


def server_port_facts(ctx: Context) -> ServerPortFacts:
    return ctx.once("server_port_facts", _facts_now)


def _facts_now(ctx: Context) -> ServerPortFacts:
    server_ports = ctx.idx.server_ports
    san: list[Row] = []
    roles_unstated: list[Row] = []
    by_server = []
    for s in ctx.bed.servers:
        san_ports: list[tuple[str, Any]] = []
        unknown: list[str] = []
        for ref, p in server_ports(s):
            roles = p.roles
            if roles is NOT_STATED:
                roles_unstated.append((s, ref, p))
                unknown.append(ref)
            elif SAN in roles:
                san.append((s, ref, p))
                san_ports.append((ref, p))
        by_server.append((s, san_ports, unknown))
    return ServerPortFacts(san, roles_unstated, by_server)


def path_mtus(ctx: Context, path, route) -> list[tuple[str, int | None, bool]]:
    """(where, MTU, is_endpoint) along an iSCSI path and its route, from initiator to target."""
    ini = initiator_mtus(ctx, path.initiator)
    tgt = target_mtus(ctx, path.target)
    if ini is None or tgt is None:
        return []
    return ini + inter_switch_mtus(ctx, route.switches) + tgt


def initiator_mtus(ctx: Context, ref: str) -> list[tuple[str, int | None, bool]] | None:
    """The initiator's end of `path_mtus` (once per port: it has paths to many targets); None: no such port."""
    cache = ctx.memo.setdefault("initiator_mtus", {})
    if ref in cache:
        return cache[ref]
    idx = ctx.idx
    ini = idx.port(ref)
    out: list[tuple[str, int | None, bool]] | None = None
    if ini is not None:
        out = []
        starts = [ref]
        if isinstance(ini.device, VM):
            out.append((ref, ini.port.mtu, True))
            starts = ctx.analyzer.uplinks_of(ini)
        for start in starts:
            pr = ini if start == ref else idx.port(start)
            if pr is None:
                continue
            out.append((start, idx.effective_mtu(pr), True))
            out += facing_switch_ports(ctx, start)
    cache[ref] = out
    return out


def target_mtus(ctx: Context, ref: str) -> list[tuple[str, int | None, bool]] | None:
    """The target's end of `path_mtus` (once per port: every host's paths share the array's ports)."""
    cache = ctx.memo.setdefault("target_mtus", {})
    if ref in cache:
        return cache[ref]
    tgt = ctx.idx.port(ref)
    out = None if tgt is None else facing_switch_ports(ctx, ref) + [(ref, ctx.idx.effective_mtu(tgt), True)]
    cache[ref] = out
    return out


def facing_switch_ports(ctx: Context, ref: str) -> list[tuple[str, int | None, bool]]:
    cache = ctx.memo.setdefault("facing_switch_ports", {})
    if ref not in cache:
        cache[ref] = _facing_now(ctx, ref)
    return cache[ref]


def _facing_now(ctx: Context, ref: str) -> list[tuple[str, int | None, bool]]:
    return _switch_ends(ctx, ctx.analyzer._neighbors.get(ref, ()))


def _switch_ends(ctx: Context, refs: Iterable[str]) -> list[tuple[str, int | None, bool]]:
    """(the cable end, its MTU, False) of each of `refs` that is on a switch.  A switch end is cabled to
    many ports (a switch that names no ports is one end for all): each is looked up once."""
    ends = ctx.memo.setdefault("switch_ends", {})
    out = []
    for ref in refs:
        end = ends.get(ref, _MISSING)
        if end is _MISSING:
            end = ends[ref] = _switch_end(ctx, ref)
        if end is not None:
            out.append(end)
    return out


_MISSING = object()


def _switch_end(ctx: Context, other: str) -> tuple[str, int | None, bool] | None:
    dev = ctx.idx.endpoint_device(other)
    if not isinstance(dev, Switch):
        return None
    pr = ctx.idx.port(other)
    return other, ctx.idx.effective_mtu(pr) if pr is not None else dev.mtu, False


def inter_switch_mtus(ctx: Context, switches: tuple[str, ...]) -> list[tuple[str, int | None, bool]]:
    """(cable end, MTU, False) of both ends of every cable, ISL or LAG member between each two
    switches of `switches`, in the order a frame crosses them.  A stack makes its switches one: its
    ports set no frame size of their own."""
    between = ctx.once("inter_switch_ends", _inter_switch_ends)
    return _switch_ends(ctx, [ref for a, b in zip(switches, switches[1:])
                              for link_ends in between.get((a, b), ()) for ref in link_ends])


def _inter_switch_ends(ctx: Context) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(switch, switch) -> (end on the first, end on the second) of each link joining them (not stacks)."""
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for link, (ea, eb) in zip(ctx.idx.bed.links, ctx.analyzer.link_ends):
        da, db = ea[2], eb[2]
        if link.kind == "stack" or da is db or not isinstance(da, Switch) or not isinstance(db, Switch):
            continue
        out.setdefault((da.id, db.id), []).append((ea[0], eb[0]))
        out.setdefault((db.id, da.id), []).append((eb[0], ea[0]))
    return out


def initiator_mtu_values(ctx: Context, ref: str) -> tuple[tuple[Any, bool], ...] | None:
    """(MTU, is_endpoint) of each hop of `initiator_mtus`, without where (NET-005 looks at these
    first); a server port's straight from the port and the switch ends facing it."""
    idx = ctx.idx
    pr = idx.ports.get(ref)
    if pr is None or pr.device.__class__ is VM:
        hops = initiator_mtus(ctx, ref)
        return None if hops is None else tuple([(m, e) for _, m, e in hops])
    return tuple([(idx.effective_mtu(pr), True)] + [(m, e) for _, m, e in facing_switch_ports(ctx, ref)])


@dataclass(slots=True)
class CableFacts:
    """What NET-009 and NET-012 count over the cable ends, in one walk (a 2,000-host bed has 20,000)."""
    uses: dict[str, int]            # cable end that is a port -> the cables on it
    links_on: dict[str, int]        # switch id -> the cable ends on it
    # switch id -> the traffic (roles) of the non-switch ports cabled to it, switches in the order a
    # cable first reaches them
    roles_cabled: dict[str, set[str]]


def cable_facts(ctx: Context) -> CableFacts:
    return ctx.once("cable_facts", _cable_facts_now)


def _cable_facts_now(ctx: Context) -> CableFacts:
    uses: dict[str, int] = {}
    links_on: dict[str, int] = {}
    roles_cabled: dict[str, set[str]] = {}
    for a, b in ctx.analyzer.link_ends:
        for (end, pr, dev), (_, other_pr, _) in ((a, b), (b, a)):
            if pr is not None:
                uses[end] = uses.get(end, 0) + 1
            if isinstance(dev, Switch):
                links_on[dev.id] = links_on.get(dev.id, 0) + 1
                if other_pr is not None and not isinstance(other_pr.device, Switch):
                    on_switch = roles_cabled.get(dev.id)
                    if on_switch is None:
                        on_switch = roles_cabled[dev.id] = set()
                    for role in other_pr.port.roles:
                        if role != "unused":
                            on_switch.add(role)
    return CableFacts(uses, links_on, roles_cabled)
