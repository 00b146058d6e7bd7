"""NET-001 .. NET-012: port roles, addressing, MTU and flow control, switch use."""
from __future__ import annotations

import ipaddress
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from topology.path_checks import iface
from topology.unknown import NOT_STATED, stated
from topology.validation.context import Context
from topology.validation.port_facts import (
    SAN,
    cable_facts,
    facing_switch_ports,
    initiator_mtu_values,
    initiator_mtus,
    inter_switch_mtus,
    server_port_facts,
    target_mtus,
)
from topology.validation.registry import Hit, could_not_judge, hit, rule, unstated
from topology.validation.vm_facts import vm_facts

_SEED000 = "Seed 000 (Dell MD3000i / Hyper-V, PT), Appendix F best practices"
_SEED001 = "Seed 001 (Dell EqualLogic PS6110 reference architecture), section 6 network best practices"

CLIENT_ROLES = {"lan", "vm"}


def _roles(p) -> set[str]:
    """The traffic a port carries.  (Whether it carries one kind is `KIND in p.roles`: "unused" is
    no kind of traffic, and a list or NOT_STATED -- an empty text -- answers that without a set.)"""
    return set(p.roles) - {"unused"}


@rule("NET-001", "error", "iSCSI port shared with other traffic",
      reason="Storage I/O on a port that also carries other traffic competes for bandwidth and "
             "suffers latency spikes; iSCSI ports are dedicated.",
      source=f"{_SEED000}: 'Dedicate at least two NICs for server-storage iSCSI communication'; "
             f"{_SEED001} NW-01",
      hint="give the port the iSCSI role only and move the other traffic to a port of its own",
      unknown="whether the ports of {n} hosts mix iSCSI with other traffic")
def net_001(ctx: Context) -> Iterator[Hit]:
    facts = server_port_facts(ctx)
    for s, ref, p in facts.san:
        if p.roles == _SAN_ONLY:
            continue        # iSCSI alone (the common case, judged without a set)
        roles = _roles(p)
        if len(roles) > 1:
            others = ", ".join(sorted(roles - {SAN}))
            yield hit([s.id, ref], f"{ref} carries iSCSI together with {others}")
    yield from _guest_iscsi_on_shared_uplinks(ctx)
    unknown: dict[str, list[str]] = defaultdict(list)
    for s, ref, _p in facts.roles_unstated:
        unknown[s.id].append(ref)
    for sid, refs in unknown.items():
        yield could_not_judge([sid, *refs], f"whether {sid}'s ports mix iSCSI with other traffic",
                              (f"{r} roles" for r in refs))


# what an uplink may carry besides its guests' iSCSI without sharing a port with the host's own traffic
_GUEST_UPLINK_ROLES = frozenset((SAN, "vm", "unused"))


def _guest_iscsi_on_shared_uplinks(ctx: Context) -> Iterator[Hit]:
    """In-guest iSCSI leaves the host by its virtual switch's uplinks: an uplink that carries the
    host's LAN, management or cluster traffic too is as shared as a host iSCSI port would be.  (An
    uplink with the iSCSI role of its own is judged as a host iSCSI port above.)"""
    guests: dict[str, list[str]] = {}
    for vm, nic in vm_facts(ctx).iscsi_nics:
        vs = ctx.idx.vswitches.get(nic.vswitch) if nic.role == SAN else None
        if vs is not None and type(vs.uplinks) is list:
            for uplink in vs.uplinks:
                guests.setdefault(uplink, []).append(f"{vm.id}:{nic.name}")
    for uplink, nics in guests.items():
        pr = ctx.idx.port(uplink)
        if pr is None or type(pr.port.roles) is not list or SAN in pr.port.roles:
            continue
        roles = pr.port.roles
        others = set(roles) - _GUEST_UPLINK_ROLES
        if others:
            named = ", ".join(nics[:3]) + (f" and {len(nics) - 3} more" if len(nics) > 3 else "")
            yield hit([pr.device.id, uplink, *nics], f"{uplink} carries the in-guest iSCSI of {named} "
                      f"together with {', '.join(sorted(others))}")


@rule("NET-002", "error", "fewer than two dedicated iSCSI ports",
      reason="With one iSCSI port a cable, port or NIC failure cuts the host off its storage; "
             "two dedicated ports give multipath something to fail over to.",
      source=f"{_SEED000}: 'Dedicate at least two NICs for server-storage iSCSI communication'",
      hint="add a second port with the iSCSI role and a session from it",
      unknown="whether {n} hosts have enough dedicated iSCSI ports")
def net_002(ctx: Context) -> Iterator[Hit]:
    hosts = {p.host for p in ctx.paths if p.kind == "iscsi"}
    for s, san_ports, unknown in server_port_facts(ctx).by_server:
        if s.simulated:
            continue
        if s.id not in hosts and not (unknown and ctx.volumes_used.get(s.id)):
            continue
        # iSCSI interfaces bound to one NIC (port binding) are that NIC: one cable, one port
        iscsi_only = [(ref, p) for ref, p in san_ports if _iscsi_only(p.roles)]
        dedicated = list(dict.fromkeys(p.bound_to or ref for ref, p in iscsi_only))
        bound = [ref for ref, p in iscsi_only if p.bound_to]
        if len(dedicated) < ctx.policy.min_iscsi_ports and unknown:
            yield could_not_judge([s.id, *unknown], f"whether {s.id} has {ctx.policy.min_iscsi_ports} dedicated "
                                  "iSCSI ports", (f"{r} roles" for r in unknown))
        elif len(dedicated) < ctx.policy.min_iscsi_ports:
            through = f" ({len(bound)} iSCSI interfaces bound to {', '.join(dedicated)})" if bound else ""
            yield hit([s.id, *dedicated],
                      f"{s.id} uses iSCSI storage with {len(dedicated)} dedicated iSCSI port(s){through}; "
                      f"at least {ctx.policy.min_iscsi_ports} are needed")


def _iscsi_only(roles) -> bool:
    """Whether a port carries iSCSI and no other traffic (`_roles(p) == {SAN}`, without building sets)."""
    return roles == _SAN_ONLY or SAN in roles and not set(roles) - {SAN, "unused"}


_SAN_ONLY = [SAN]


@rule("NET-003", "warning", "no client/LAN port",
      reason="Client traffic on the storage or cluster ports disturbs both; a server that serves "
             "clients needs a port for them.",
      source=f"{_SEED000}: 'Dedicate at least one NIC for Client-Server communication'",
      hint="add a port with the lan (or vm) role",
      unknown="whether {n} servers have a port for client/LAN traffic")
def net_003(ctx: Context) -> Iterator[Hit]:
    for s in ctx.bed.servers:
        if s.role not in ("hypervisor", "application", "infrastructure", NOT_STATED) or s.simulated:
            continue
        ports = [(ref, p) for ref, p in ctx.idx.server_ports(s) if p.kind in ("ethernet", NOT_STATED)]
        if not ports:
            continue  # the bed does not describe this server's Ethernet side
        if not any(not CLIENT_ROLES.isdisjoint(p.roles) and SAN not in p.roles for _, p in ports):
            unknown = unstated(s, s.id, "role") + [f"{ref} {what}" for ref, p in ports
                                                   for what in ("kind", "roles") if getattr(p, what) is NOT_STATED]
            if unknown:
                yield could_not_judge(s.id, f"whether {s.id} has a port for client/LAN traffic", unknown)
            else:
                yield hit(s.id, f"{s.id} serves clients but has no port dedicated to client/LAN traffic")


@rule("NET-004", "warning", "clustered host without a heartbeat port",
      reason="Cluster heartbeats that share a busy port can be delayed, and a node is evicted "
             "although it is healthy.",
      source=f"{_SEED000}: 'Dedicate at least one NIC for the cluster heartbeat'",
      hint="add a port with the heartbeat role on a cluster-only network",
      unknown="whether {n} cluster nodes have a heartbeat port")
def net_004(ctx: Context) -> Iterator[Hit]:
    for c in ctx.bed.clusters:
        for node in c.nodes:
            s = ctx.idx.servers.get(node)
            if s is None:
                continue
            ok = False
            unknown: list[str] = []
            for _ref, p in ctx.idx.server_ports(s):
                net = ctx.idx.networks.get(p.network)
                if ("heartbeat" in p.roles and SAN not in p.roles) or \
                        (net is not None and net.cluster_use == "cluster_only"):
                    ok = True
                    break
            if not ok:
                for ref, p in ctx.idx.server_ports(s):
                    net = ctx.idx.networks.get(p.network)
                    unknown += unstated(p, ref, "roles")
                    unknown += unstated(net, f"network {net.id}", "cluster_use") if net is not None else []
            if not ok and unknown:
                yield could_not_judge([node, c.id], f"whether {node} has a heartbeat port", unknown)
            elif not ok:
                yield hit([node, c.id], f"{node} (cluster {c.id}) has no dedicated heartbeat/cluster network port",
                          cause=f"{{n}} nodes of cluster {c.id} have no dedicated heartbeat/cluster network port",
                          item=node)


@rule("NET-005", "error", "MTU differs along an iSCSI path",
      reason="A frame larger than any hop's MTU is dropped or fragmented: jumbo frames must be set "
             "end to end (host port, every switch port, array port) or not at all.",
      source=f"{_SEED000}: 'Enable Jumbo Frames on the storage, NIC, and network switch'; {_SEED001} NW-06/NW-07",
      hint="set the same MTU on the host and array ports and at least that frame size on every switch port between",
      unknown="the MTU along {n} iSCSI paths")
def net_005(ctx: Context) -> Iterator[Hit]:
    seen: set = set()
    # each end's shape (its look, end MTUs, least and most switch-port MTU), worked out once from its
    # MTUs alone: the hops with their names are listed only for a pair of looks that says something
    ini_shapes: dict[str, Any] = {}
    tgt_shapes: dict[str, Any] = {}
    looks: dict[tuple, int] = {}
    shapes: dict[tuple, tuple] = {}
    quiet: set[tuple[int, int, int]] = set()    # looks that say nothing together (the verdict reads only them)
    no_middle: Any = _mtu_shape((), looks, shapes)
    middles: dict[tuple[str, ...], Any] = {}
    for path, route in ctx.routes:
        if path.kind != "iscsi":
            continue
        crossed = route.switches
        mid: Any = no_middle if len(crossed) < 2 else middles.get(crossed)
        if mid is None:
            mid = middles[crossed] = _mtu_shape(_values(inter_switch_mtus(ctx, crossed)), looks, shapes)
        ini_ref, tgt_ref = path.initiator, path.target
        ini = ini_shapes.get(ini_ref, _MISSING)
        if ini is _MISSING:
            ini = ini_shapes[ini_ref] = _mtu_shape(initiator_mtu_values(ctx, ini_ref), looks, shapes)
        tgt = tgt_shapes.get(tgt_ref, _MISSING)
        if tgt is _MISSING:
            tgt = tgt_shapes[tgt_ref] = _mtu_shape(_values(target_mtus(ctx, tgt_ref)), looks, shapes)
        if ini is None or tgt is None:
            continue
        pair = (ini[0], mid[0], tgt[0])
        if pair in quiet:
            continue
        key = (ini_ref, tgt_ref)
        if key in seen:     # one verdict per session, whatever volumes it carries
            continue
        seen.add(key)
        said = False
        middle = inter_switch_mtus(ctx, crossed) if len(crossed) > 1 else []
        for found in _mtu_verdict(path, _MtuSide(initiator_mtus(ctx, ini_ref) or [], *ini),
                                  _MtuSide(middle, *mid), _MtuSide(target_mtus(ctx, tgt_ref) or [], *tgt)):
            said = True
            yield found
        if not said:
            quiet.add(pair)


def _mtu_verdict(path, ini: _MtuSide, middle: _MtuSide, tgt: _MtuSide) -> Iterator[Hit]:
    """NET-005's verdict on one session from its MTU hops: the initiator's end, the ports of the links
    between the switches it crosses, the target's end."""
    sides = (ini, middle, tgt)
    known = ini.known + middle.known + tgt.known
    unknown = ini.unknown + middle.unknown + tgt.unknown
    if not known and not unknown:
        return
    ends = ini.ends | tgt.ends
    # switch frame sizes quote the Ethernet header too (9014 for a 9000-byte MTU)
    need = max(ends) if ends else 0
    small = any(side.least is not None and side.least < need for side in sides)
    if len(ends) > 1 or small:
        detail = ", ".join(f"{w}={m}" for w, m, _ in known)
        # the fact is the hops below the ends' MTU, whatever sessions cross them
        low = ", ".join(dict.fromkeys(f"{w}={m}" for w, m, _ in known if m < need))
        yield hit([w for w, _, _ in known], f"MTU differs along {path.initiator} -> {path.target}: {detail}",
                  cause=f"{low} below the {need}-byte MTU of the ends on {{n}} iSCSI paths",
                  item=f"{path.initiator} -> {path.target}")
    elif unknown:
        yield could_not_judge([path.initiator, path.target, *unknown],
                              f"the MTU along {path.initiator} -> {path.target}", (f"{w} MTU" for w in unknown))
    elif ends == {1500} and all(side.most is None or side.most <= 1500 for side in sides) \
            and len(known) == ini.hops + middle.hops + tgt.hops:
        yield hit([path.initiator, path.target],
                  f"{path.initiator} -> {path.target} runs standard 1500-byte frames end to end",
                  severity="info", hint="consider jumbo frames (MTU 9000) end to end for iSCSI",
                  cause="{n} iSCSI paths run standard 1500-byte frames end to end",
                  item=f"{path.initiator} -> {path.target}")


@dataclass(frozen=True, slots=True)
class _MtuSide:
    """One end of an iSCSI path's MTU hops (`path_mtus`) and its shape (`_mtu_shape`)."""
    path_hops: list[tuple[str, Any, bool]]  # (where, MTU, is_endpoint)
    look: int       # equal for ends whose MTUs are alike, whatever the ports are called
    ends: frozenset[Any]                    # the MTUs of the end ports
    least: Any                              # the smallest and largest switch-port MTU given (None: none)
    most: Any
    hops: int

    @property
    def known(self) -> list[tuple[str, Any, bool]]:
        """The hops whose MTU is given."""
        return [(w, m, e) for w, m, e in self.path_hops if m is not None and m is not NOT_STATED]

    @property
    def unknown(self) -> list[str]:
        """Where the source does not state the MTU."""
        return [w for w, m, _ in self.path_hops if m is NOT_STATED]


_MISSING = object()


def _values(hops: list[tuple[str, Any, bool]] | None) -> tuple[tuple[Any, bool], ...] | None:
    """(MTU, is_endpoint) of each hop, without where."""
    return None if hops is None else tuple([(m, e) for _, m, e in hops])


def _mtu_shape(mtus: tuple[tuple[Any, bool], ...] | None, looks: dict[tuple, int],
               shapes: dict[tuple, tuple]) -> tuple | None:
    """(look, end MTUs, least and most switch-port MTU, hop count) of an end whose hops have `mtus`;
    `looks`: the look of each kind of end; `shapes`: what ends with the same MTUs share."""
    if mtus is None:
        return None
    shape = shapes.get(mtus)
    if shape is None:
        known = [(m, e) for m, e in mtus if m is not None and m is not NOT_STATED]
        unknown = any(m is NOT_STATED for m, _ in mtus)
        switch_ports = [m for m, e in known if not e]
        look = looks.setdefault((tuple(known), unknown, len(mtus)), len(looks))
        shape = shapes[mtus] = (look, frozenset(m for m, e in known if e), min(switch_ports, default=None),
                                max(switch_ports, default=None), len(mtus))
    return shape


@rule("NET-006", "warning", "flow control off on an iSCSI port or the switch port facing one",
      reason="Without flow control a congested iSCSI port drops frames and TCP retransmits; "
             "Ethernet pause frames keep the SAN lossless.",
      source=f"{_SEED000}: 'Flow control set to Generate & Respond on all NICs'; {_SEED001} NW-04/NW-05",
      hint="enable flow control (Rx and Tx / Generate & Respond) on the port",
      unknown="flow control on {n} iSCSI ports or the switch ports facing them")
def net_006(ctx: Context) -> Iterator[Hit]:
    san = server_port_facts(ctx).san
    for s, ref, p in san:
        if p.flow_control is False:
            yield hit([s.id, ref], f"flow control is off on iSCSI host port {ref}",
                      cause="flow control is off on {n} iSCSI host ports", item=ref)
        elif p.flow_control is NOT_STATED:
            yield could_not_judge([s.id, ref], f"flow control on iSCSI host port {ref}", [f"{ref} flow control"])
    if not any(sw.flow_control is False or sw.flow_control is NOT_STATED or
               any(p.flow_control is False or p.flow_control is NOT_STATED for p in sw.ports)
               for sw in ctx.bed.switches):
        return      # every switch port has flow control on, or the bed does not say: nothing to judge
    facing: list[tuple[str, str]] = []      # (SAN port, what it is) whose switch side is judged
    for _server, ref, p in san:
        if not p.bound_to:      # a bound interface's switch port is its NIC's
            facing.append((ref, "iSCSI host port"))
    for a in ctx.bed.arrays:
        facing += [(ref, "array port") for ref, p, _ in ctx.idx.array_ports(a) if SAN in p.roles]
    san_switches: set[str] = set()
    for ref, what in facing:
        for sw_ref, _, _ in facing_switch_ports(ctx, ref):
            san_switches.add(sw_ref.partition(":")[0])
            pr = ctx.idx.port(sw_ref)
            fc = ctx.idx.effective_flow_control(pr) if pr is not None else \
                getattr(ctx.idx.endpoint_device(sw_ref), "flow_control", None)
            if fc is False:
                yield hit([sw_ref, ref], f"flow control is off on switch port {sw_ref} facing {what} {ref}",
                          cause=f"flow control is off on switch {sw_ref.partition(':')[0]} facing {{n}} iSCSI ports",
                          item=f"{sw_ref} facing {ref}")
            elif fc is NOT_STATED:
                yield could_not_judge([sw_ref, ref], f"flow control on switch port {sw_ref} facing {what} {ref}",
                                      [f"{sw_ref} flow control"])
    yield from _described_switch_ports(ctx, san_switches)


def _described_switch_ports(ctx: Context, san_switches: set[str]) -> Iterator[Hit]:
    """Ports of a SAN switch the bed describes with flow control off but cables to nothing: the drawing
    leaves the cable out (a report lists the switch's settings, not its cabling), the port is still there."""
    cabled = ctx.analyzer.cable_ends
    for sw in ctx.bed.switches:
        if sw.kind == "fc" or not (sw.id in san_switches or type(sw.roles) is list and SAN in sw.roles):
            continue
        for p in sw.ports:
            ref = f"{sw.id}:{p.name}"
            carries_other = type(p.roles) is list and p.roles and SAN not in p.roles
            if p.flow_control is False and ref not in cabled and not carries_other:
                label = f" ({p.label})" if p.label else ""
                yield hit([sw.id, ref], f"flow control is off on switch port {ref}{label} of SAN switch {sw.id}, "
                          "which the drawing cables to nothing",
                          cause=f"flow control is off on {{n}} ports of SAN switch {sw.id} the drawing cables to "
                                "nothing", item=f"{ref}{label}")


# four numbers without leading zeros (anything else -- other digits included -- goes to ipaddress)
_PLAIN_IPV4 = re.compile(r"(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*)){3}")


@lru_cache(maxsize=65536)
def _host_part(addr: str) -> str:
    """The address without its prefix, in canonical form (parsing only what is not plain IPv4);
    remembered, as live validation asks again after every edit."""
    ip = addr.partition("/")[0].strip()
    if _PLAIN_IPV4.fullmatch(ip):
        return ip
    i = iface(addr)
    return str(i.ip) if i is not None else ip


@lru_cache(maxsize=65536)
def _subnet(interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface):
    """The interface's network (ipaddress builds a new object on every .network access)."""
    return interface.network


@lru_cache(maxsize=65536)
def _inside(address: str, cidr: str) -> bool:
    """Whether an address (a valid interface) lies in a network (a valid CIDR)."""
    i, net = iface(address), _network(cidr)
    assert i is not None and net is not None
    return i.ip in net


@lru_cache(maxsize=4096)
def _network(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None


def _addresses(ctx: Context) -> list[tuple[str, str, str]]:
    """(owner ref, address, network id) for every address in the bed (listed once: two rules read it)."""
    hit_ = ctx.memo.get("addresses")
    if hit_ is None:
        hit_ = ctx.memo["addresses"] = list(_addresses_now(ctx))
    return hit_


def _addresses_now(ctx: Context) -> Iterator[tuple[str, str, str]]:
    for s in ctx.bed.servers:
        for ref, p in ctx.idx.server_ports(s):
            if p.address:
                yield ref, p.address, p.network
        if s.management_address:
            yield s.id, s.management_address, ""
    for sw in ctx.bed.switches:
        for p in sw.ports:
            if p.address:
                yield f"{sw.id}:{p.name}", p.address, p.network
    for a in ctx.bed.arrays:
        for ref, p, _ in ctx.idx.array_ports(a):
            if p.address:
                yield ref, p.address, p.network
    yield from vm_facts(ctx).addressed_nics
    for c in ctx.bed.clusters:
        if c.address:
            yield c.id, c.address, ""
    for g in ctx.bed.array_groups:
        if g.address:
            yield g.name, g.address, g.network


@rule("NET-007", "error", "duplicate IP address",
      reason="Two devices answering for one address break discovery, sessions and management.",
      source="IP addressing basics; every seed's address table gives each port its own address",
      hint="give each port its own address")
def net_007(ctx: Context) -> Iterator[Hit]:
    owners: dict[str, list[str]] = defaultdict(list)
    for ref, addr, _ in _addresses(ctx):
        owners[_host_part(addr)].append(ref)
    for ip, refs in owners.items():
        if len(refs) > 1:
            yield hit(refs, f"{ip} is used by {', '.join(refs)}")


@rule("NET-008", "error", "address outside its network / no route to the target",
      reason="An address outside its subnet, or an initiator with no subnet (or route) in common "
             "with its target portal, cannot reach the storage.",
      source=f"{_SEED000}: each storage NIC logs in to the portals of its own subnet (192.168.130/24, 192.168.131/24)",
      hint="correct the address or prefix, or log in from a port on the portal's subnet")
def net_008(ctx: Context) -> Iterator[Hit]:
    for ref, addr, net_id in _addresses(ctx):
        i = iface(addr)
        if addr and i is None:
            yield hit(ref, f"{ref}: {addr!r} is not an IP address with prefix (e.g. 10.0.0.5/24)")
            continue
        net = ctx.idx.networks.get(net_id)
        if i is None or net is None or not net.cidr:
            continue
        cidr = _network(net.cidr)
        if cidr is None:
            yield hit(net.id, f"network {net.id}: {net.cidr!r} is not a CIDR such as 192.168.1.0/24")
            continue
        if not _inside(addr, net.cidr):
            yield hit([ref, net.id], f"{ref} has {addr}, outside its network {net.id} ({net.cidr})")
    for path in ctx.bed.paths:
        if path.kind != "iscsi":
            continue
        ini, tgt = ctx.idx.port(path.initiator), ctx.idx.port(path.target)
        if ini is None or tgt is None:
            continue
        a, b = iface(getattr(ini.port, "address", "")), iface(getattr(tgt.port, "address", ""))
        if a is None or b is None:
            unknown = [f"{ref} address" for ref, pr in ((path.initiator, ini), (path.target, tgt))
                       if getattr(pr.port, "address", "") is NOT_STATED]
            if unknown:
                yield could_not_judge([path.initiator, path.target],
                                      f"whether {path.initiator} shares a subnet with portal {path.target}", unknown)
            continue
        if b.ip in _subnet(a) or a.ip in _subnet(b):
            continue
        na = ctx.idx.networks.get(getattr(ini.port, "network", ""))
        nb_id = getattr(tgt.port, "network", "")
        if na is not None and nb_id and nb_id in na.routed_to:
            continue
        yield hit([path.initiator, path.target],
                  f"{path.initiator} ({a}) shares no subnet or route with portal {path.target} ({b})")


@rule("NET-009", "warning", "LAN and SAN on one switch",
      reason="A switch that carries both client and iSCSI traffic lets a LAN storm or a "
             "misconfiguration reach the storage network.",
      source=f"{_SEED001} NW-01: 'Design separated network infrastructures to isolate the LAN traffic from the "
             "SAN traffic'",
      hint="cable LAN and iSCSI ports to separate switches")
def net_009(ctx: Context) -> Iterator[Hit]:
    carried: dict[str, set[str]] = defaultdict(set)
    for sw in ctx.bed.switches:
        carried[sw.id] |= set(sw.roles)
    for sw_id, roles in cable_facts(ctx).roles_cabled.items():
        carried[sw_id] |= roles
    for sw_id, roles in carried.items():
        if SAN in roles and roles & CLIENT_ROLES:
            yield hit(sw_id, f"switch {sw_id} carries both iSCSI and LAN/VM traffic")


@rule("NET-010", "warning", "iSCSI network used for cluster communication",
      reason="Cluster traffic on the iSCSI network competes with storage I/O and can mask a "
             "storage-network failure.",
      source=f"{_SEED001} NW-11; {_SEED000}: the iSCSI subnets are unchecked in the cluster wizard",
      hint="set the iSCSI networks to 'none' for cluster use (exclude them from the cluster)")
def net_010(ctx: Context) -> Iterator[Hit]:
    for net in ctx.bed.networks:
        if net.role == SAN and net.cluster_use in ("cluster_only", "cluster_and_client"):
            yield hit(net.id, f"iSCSI network {net.id} is enabled for cluster communication ({net.cluster_use})")
    for c in ctx.bed.clusters:
        excluded = set(c.excluded_networks)
        for node in c.nodes:
            s = ctx.idx.servers.get(node)
            if s is None:
                continue
            for _ref, p in ctx.idx.server_ports(s):
                port_net = ctx.idx.networks.get(p.network)
                if port_net is None or port_net.role not in (SAN, NOT_STATED) or port_net.id in excluded:
                    continue
                if port_net.cluster_use:
                    continue   # its cluster use is stated: the first loop judged it
                unknown = unstated(port_net, f"network {port_net.id}", "role", "cluster_use")
                if c.excluded_networks is NOT_STATED:
                    unknown.append(f"cluster {c.id} excluded networks")
                if unknown:
                    yield could_not_judge([c.id, port_net.id], f"whether cluster {c.id} keeps off iSCSI network "
                                          f"{port_net.id}", unknown)
                    continue
                yield hit([c.id, port_net.id], f"cluster {c.id} does not exclude iSCSI network {port_net.id}")


@rule("NET-011", "warning", "NIC teaming on SAN ports",
      reason="Teaming (LBFO) on iSCSI ports defeats multipath I/O; the array vendor's MPIO "
             "balances and fails over sessions instead.",
      source=f"{_SEED001} 4.1: 'The use of LBFO is not recommended for NICs dedicated to SAN connectivity'",
      hint="remove the team and give each port its own session under multipath")
def net_011(ctx: Context) -> Iterator[Hit]:
    for s, ref, p in server_port_facts(ctx).san:
        if p.team:
            yield hit([s.id, ref], f"iSCSI port {ref} is in team {p.team}")
        elif p.team is NOT_STATED:
            yield could_not_judge([s.id, ref], f"whether iSCSI port {ref} is teamed", [f"{ref} team"])
    for vs in ctx.bed.virtual_switches:
        ups = [u for u in vs.uplinks if (pr := ctx.idx.port(u)) is not None and SAN in pr.port.roles]
        if len(ups) > 1:
            yield hit([vs.id, *ups], f"virtual switch {vs.id} teams iSCSI ports {', '.join(ups)}")


@rule("NET-012", "error", "port used twice / too many links",
      reason="A port holds one cable; a switch cannot take more links than it has ports.",
      source="cabling basics",
      hint="move one of the links to a free port, or raise the switch's port count")
def net_012(ctx: Context) -> Iterator[Hit]:
    facts = cable_facts(ctx)
    uses = facts.uses
    per_switch = Counter(facts.links_on)
    for ref, n in uses.items():
        if n > 1:
            yield hit(ref, f"port {ref} is used by {n} links")
    for sw in ctx.bed.switches:
        capacity = stated(sw.port_count) if sw.port_count is not None else (len(sw.ports) or None)
        if capacity is None and sw.port_count is NOT_STATED and per_switch[sw.id] > len(sw.ports):
            yield could_not_judge(sw.id, f"whether switch {sw.id} has ports for its {per_switch[sw.id]} links",
                                  [f"switch {sw.id} port count"])
        if capacity is not None and per_switch[sw.id] > capacity:
            yield hit(sw.id, f"switch {sw.id} has {per_switch[sw.id]} links but {capacity} ports")
