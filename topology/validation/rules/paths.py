"""PATH-001 .. PATH-005: multipath redundancy from every host to every volume it uses."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from topology.graph import controller_node, element_text, is_fabric, shared_elements
from topology.model import StorageArray
from topology.unknown import NOT_STATED, stated_sum
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule, shown_names
from topology.validation.rules.network import facing_switch_ports

_SRC = ("Seed 000 Appendix F (4 sessions per host, 'Enable multi-path'); seed 002 best practice 4 "
        "(HDLM, primary and secondary path per LU)")


def _owner(ctx: Context, comp: str):
    return ctx.idx.servers.get(comp) or ctx.idx.vms.get(comp)


def _checked_uses(ctx: Context) -> list[tuple[str, str, str]]:
    """(host, volume, why) for volumes on real (not simulated) arrays used by real hosts (listed once:
    PATH-001 and PATH-002 read it)."""
    uses = ctx.memo.get("checked_uses")
    if uses is None:
        uses = ctx.memo["checked_uses"] = []
        volumes = ctx.idx.volumes
        for comp, vols in sorted(ctx.volumes_used.items()):
            owner = _owner(ctx, comp)
            if owner is None or getattr(owner, "simulated", False):
                continue
            for vol, why in sorted(vols.items()):
                hit_ = volumes.get(vol)
                if hit_ is None or hit_[0].simulated:
                    continue
                uses.append((comp, vol, why))
    return uses


@rule("PATH-001", "error", "fewer than two paths to a volume",
      reason="One path is one cable, port or controller away from losing the volume.",
      source=_SRC,
      hint="cable a second host port and array port on a shared subnet (iSCSI) or zone (FC), and map "
           "the volume to the host on the array",
      unknown="how many paths reach {n} volumes from the hosts that use them")
def path_001(ctx: Context) -> Iterator[Hit]:
    for host, vol, why in _checked_uses(ctx):
        n = len(ctx.working_paths(host, vol))
        unknown = _unstated(ctx, host, vol) if n < 2 else []
        most = _most_paths(ctx, host, vol) if unknown else 2
        if unknown and most < 2:
            # one initiator and one array port: a single path at best, whatever the values not stated
            yield hit([host, vol], f"{host} reaches {vol} over at most {most} path{'s' if most != 1 else ''} ({why}): "
                      f"{_ends_text(ctx, host, vol)}" + (f"; whether it logs in at all could not be judged: "
                                                          f"{shown_names(unknown)} not stated" if n == 0 else ""),
                      # at most none: cut off whatever is not stated (a failover must not read it as one path left)
                      cause=f"{host} has no path to {{n}} volumes it uses" if most == 0 else
                      "{n} volumes are reached over one path at most", item=vol if most == 0 else f"{host} to {vol}")
        elif unknown:
            yield could_not_judge([host, vol], f"how many paths {host} has to {vol} ({n} found)", unknown)
        elif n < 2:
            gap = f": {ctx.derived.why_no_path(host, vol)}{_taken_out(ctx)}" if n == 0 else ""
            yield hit([host, vol], f"{host} reaches {vol} over {n} path{'s' if n != 1 else ''} ({why}){gap}",
                      cause=f"{host} has no path to {{n}} volumes it uses" if n == 0 else
                      "{n} volumes are reached over one path at most", item=vol if n == 0 else f"{host} to {vol}")


def _initiators(ctx: Context, host: str) -> tuple[list[str], int]:
    """(the host's or VM's SAN initiators, its ports whose kind or role is not stated: they may be some)."""
    ends = [e.ref for e in ctx.derived.endpoints(host)]
    s, vm = ctx.idx.servers.get(host), ctx.idx.vms.get(host)
    if s is not None:
        maybe = sum(1 for ref, p in ctx.idx.server_ports(s) if ref not in ends and NOT_STATED in (p.kind, p.roles))
    else:
        maybe = sum(1 for n in vm.nics if n.role is NOT_STATED) if vm is not None else 0
    return ends, maybe


def _array_ports(ctx: Context, vol: str) -> int:
    """The array ports a session to a volume could end on: SAN ports, and those whose kind or role is not
    stated; a group's volume, on the ports of the members its pool spans."""
    array_id = vol.partition(":")[0]
    if array_id in ctx.idx.group_views:
        found = ctx.volume(vol)
        arrays = ctx.idx.group_members(array_id, found[1].pool if found is not None else None)
    else:
        array = ctx.idx.arrays.get(array_id)
        arrays = [array] if array is not None else []
    return sum(1 for a in arrays for _, p, _ in ctx.idx.array_ports(a) if NOT_STATED in (p.kind, p.roles)
               or p.kind == "fc" or "iscsi" in p.roles or "fc" in p.roles)


def _most_paths(ctx: Context, host: str, vol: str) -> int:
    """The most paths the drawing allows between a host and a volume, whatever is not stated: each of its
    initiators to each of the array's SAN ports."""
    ends, maybe = _initiators(ctx, host)
    return (len(ends) + maybe) * _array_ports(ctx, vol)


def _ends_text(ctx: Context, host: str, vol: str) -> str:
    ends, maybe = _initiators(ctx, host)
    array_id = vol.partition(":")[0]
    ports = _array_ports(ctx, vol)
    mine = ", ".join(ends) if ends else "no initiator"
    return f"{mine} on {host}{f' (and {maybe} port(s) of unstated role)' if maybe else ''}, " \
           f"{ports} SAN port{'s' if ports != 1 else ''} on {array_id}"


def _forced(ctx: Context, host: str) -> frozenset[str]:
    """What every path of `host` crosses whatever its target: its one initiator, the one physical port
    that initiator leaves by, the one switch that port is cabled to (shared by all its initiators)."""
    memo = ctx.memo.setdefault("forced_elements", {})
    found = memo.get(host)
    if found is None:
        _ends, maybe = _initiators(ctx, host)
        sets = []
        for e in ctx.derived.endpoints(host):
            own = {e.ref}
            if len(e.exits) == 1:
                own.add(e.exits[0])
            if len(e.attach) == 1 and len(e.attach[0][1]) == 1 and not e.attach[0][2]:
                own |= e.attach[0][1]
            sets.append(frozenset(own))
        found = memo[host] = frozenset.intersection(*sets) if sets and not maybe else frozenset()
    return found


def _unstated(ctx: Context, host: str, vol_or_array: str) -> list[str]:
    """What the paths between a host and a volume's (or an array's) ports depend on that is not stated."""
    return ctx.reach_unstated(host, vol_or_array)


def _taken_out(ctx: Context) -> str:
    """What the scenario judged takes out: the first hop that fails is often one of them."""
    sc = ctx.scenario
    if sc is None or not (sc.failed or sc.excluded):
        return ""
    gone = [*sc.failed, *sc.excluded]
    shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
    return f" (scenario {sc.id} fails or leaves out {shown})"


@rule("PATH-002", "error", "all paths share a single point of failure",
      reason="Redundant paths protect nothing when every one of them crosses the same host port, "
             "switch, fabric or controller.",
      source="Seed 001 ST-02 / NW-02 (redundant switches and controller ports); seed 002 R8",
      hint="route the paths through different host ports, switches (fabrics) and controllers",
      unknown="whether the paths to {n} volumes share a single point of failure")
def path_002(ctx: Context) -> Iterator[Hit]:
    groups: dict[tuple[str, frozenset], list[str]] = defaultdict(list)
    for host, vol, _ in _checked_uses(ctx):
        routes = [r for _, r in ctx.working_paths(host, vol)]
        if len(routes) < 2:
            continue
        common = shared_elements(routes)
        array = ctx.idx.arrays.get(vol.partition(":")[0])
        unknown = _unstated(ctx, host, vol) + [f"{array.id} controller {c.name} mode" for c in array.controllers
                                               if c.mode is NOT_STATED] if common and array is not None else []
        certain = common & _forced(ctx, host) if unknown else common
        if certain:     # the host's own single port (and the switch it is cabled to) whatever is not stated
            groups[(host, certain)].append(vol)
        elif unknown:
            yield could_not_judge([host, vol], f"whether {host}'s paths to {vol} share a single point of failure",
                                  unknown)
    for (host, common), vols in groups.items():
        where = ", ".join(sorted(element_text(e) for e in common))
        shown = ", ".join(vols[:5]) + (f" and {len(vols) - 5} more" if len(vols) > 5 else "")
        # what the hosts share is the fact: guests behind one uplink all cross it, each with its own vNIC
        own = f"{host}:"
        shared = sorted(element_text(e) for e in common if not e.startswith(own))
        cause = (f"every path of {{n}} hosts to their volumes goes through {', '.join(shared)}"
                 + (" (and each host's own port)" if len(shared) < len(common) else "")) if shared else None
        yield hit([host, *sorted(e for e in common if not is_fabric(e)), *vols],
                  f"every path from {host} to {shown} goes through {where}", cause=cause, item=f"{host} to {shown}")


@rule("PATH-003", "warning", "paths reach only one controller",
      reason="If the one controller a host reaches fails or is taken down for an update, the "
             "host loses its volumes although the array is still up.",
      source="Seed 000 (each host NIC logs in to both controllers' portals); seed 002 R6",
      hint="add a path to a port of the other controller",
      unknown="whether {n} hosts reach both controllers of their arrays")
def path_003(ctx: Context) -> Iterator[Hit]:
    reached: dict[tuple[str, str], set[str]] = defaultdict(set)
    owners: dict[str, tuple[str, str] | None] = {}      # target port -> (array, controller), once per port
    for p, r in ctx.routes:
        if r.status not in ("ok", "unknown"):
            continue
        if p.target in owners:
            owner = owners[p.target]
        else:
            tgt = ctx.idx.port(p.target)
            owner = owners[p.target] = None if tgt is None or not isinstance(tgt.device, StorageArray) \
                or tgt.controller is None else (tgt.device.id, tgt.controller.name)
        if owner is not None:
            reached[(p.host, owner[0])].add(owner[1])
    for (host, array_id), ctrls in sorted(reached.items()):
        array = ctx.idx.arrays[array_id]
        active = [c.name for c in array.controllers if c.mode != "standby"]
        if len(active) >= 2 and len(ctrls & set(active)) < 2:
            unknown = _unstated(ctx, host, array_id) + [
                f"{array_id} controller {c.name} mode" for c in array.controllers if c.mode is NOT_STATED]
            if unknown:
                yield could_not_judge([host, array_id], f"whether {host} reaches both controllers of {array_id}",
                                      unknown)
                continue
            only = ", ".join(sorted(ctrls))
            yield hit([host, array_id, *(controller_node(array_id, c) for c in sorted(ctrls))],
                      f"{host} reaches {array_id} only through controller {only}")


@rule("PATH-004", "error", "several paths but no multipath software",
      reason="Without a multipath driver the OS sees each path as a separate disk: data "
             "corruption risk and no failover.",
      source="Seed 000: 'Install the ... MD3000i Management software on every system ... so that the MPIO "
             "driver is active'; seed 001 ST-01; seed 002 BP 4 (HDLM)",
      hint="set the host's multipath software (MPIO/DSM, HDLM, RDAC, dm-multipath)",
      unknown="whether the paths of {n} hosts run under multipath software")
def path_004(ctx: Context) -> Iterator[Hit]:
    count: dict[str, int] = defaultdict(int)
    for p in ctx.paths:
        count[p.host] += 1
    for host, n in sorted(count.items()):
        owner = _owner(ctx, host)
        if owner is None or n < 2 or getattr(owner, "simulated", False):
            continue
        if owner.multipath is NOT_STATED:
            yield could_not_judge(host, f"whether {host}'s {n} paths run under multipath software",
                                  [f"{host} multipath software"])
        elif not owner.multipath:
            yield hit(host, f"{host} has {n} paths but declares no multipath software",
                      cause="{n} hosts have several paths but declare no multipath software",
                      item=f"{host} ({n} paths)")


@rule("PATH-005", "warning", "array bandwidth to host SAN bandwidth far from 1:1",
      reason="More host SAN bandwidth than the active array ports carry oversubscribes the array side; the "
             "reverse leaves array bandwidth unused.  Ports of different speeds are weighed by their speed; the "
             "ports of an array group's members that serve the host count together.",
      source="Seed 001 ST-03: 'Maintain a close as possible to a 1:1 ratio between the number of network ports "
             "on the active controller of the array and the number of host network adapters'",
      hint="balance the active array ports' bandwidth and the host's SAN bandwidth (or record an exception with "
           "the reason)",
      unknown="the bandwidth ratio of {n} host and array pairs")
def path_005(ctx: Context) -> Iterator[Hit]:
    targets: dict[tuple[str, str], set[str]] = {}
    active: dict[str, str | None] = {}      # target port -> its array, None: no active array port
    last: tuple[str, str] | None = None     # a host's paths come one after another: its set, looked up once
    last_ports: set[str] = set()
    for p in ctx.paths:
        target = p.target
        array_id = active.get(target, "")
        if array_id == "":
            tgt = ctx.idx.port(target)
            array_id = active[target] = None if tgt is None or not isinstance(tgt.device, StorageArray) or \
                tgt.controller is not None and tgt.controller.mode == "standby" else ctx.idx.storage_owner(tgt.device)
        if array_id is not None:
            if last is None or last[0] != p.host or last[1] != array_id:
                last = (p.host, array_id)
                last_ports = targets.setdefault(last, set())
            last_ports.add(target)
    t = ctx.policy.port_ratio_tolerance
    quiet: set[tuple] = set()       # pairs of sides' speeds that said nothing
    known = ctx.memo.setdefault("port_speed", {})     # _speed's memo, read without a call per port
    array_sides: dict[frozenset[str], tuple[list[str], tuple]] = {}   # hosts reach the same target ports
    for (host, array_id), ports in sorted(targets.items()):
        s = ctx.idx.servers.get(host)
        if s is None or s.simulated:
            continue
        # a bound iSCSI interface is its NIC's bandwidth, counted once
        host_ports = list(dict.fromkeys(
            p.bound_to or ref for ref, p in ctx.idx.server_ports(s)
            if ("iscsi" in p.roles or "fc" in p.roles or p.kind == "fc") and "unused" not in p.roles))
        if not host_ports:
            continue
        array_side = array_sides.get(frozen := frozenset(ports))
        if array_side is None:
            refs = sorted(ports)
            array_side = array_sides[frozen] = (refs, tuple([known[r] if r in known else _speed(ctx, r)
                                                             for r in refs]))
        array_ports, array_speeds = array_side
        host_speeds = tuple([known[r] if r in known else _speed(ctx, r) for r in host_ports])
        look = (array_speeds, host_speeds)
        if look in quiet:
            continue    # the verdict reads only the two sides' speeds (and their counts)
        quiet.add(look)
        side = {"array": array_ports, "host": host_ports}
        speeds = {"array": list(array_speeds), "host": list(host_speeds)}
        unknown = [f"{r} speed" for k, refs in side.items() for r, v in zip(refs, speeds[k], strict=True)
                   if v is NOT_STATED] + ctx.derived.unstated_cabling(host, array_id)
        given = all(v is not None and v is not NOT_STATED for v in speeds["array"] + speeds["host"])
        a_bw, h_bw = (stated_sum(speeds["array"]), stated_sum(speeds["host"])) if given else \
            (len(ports), len(host_ports))
        ratio = a_bw / h_bw if h_bw else 0
        if ratio and (ratio < 1 / t or ratio > t):
            quiet.discard(look)
            if unknown:
                yield could_not_judge([host, array_id], f"the bandwidth ratio of {array_id} to {host}", unknown)
                continue
            what = (f"{_gbps(a_bw)} Gb/s on {len(ports)} active port(s) for {_gbps(h_bw)} Gb/s on "
                    f"{len(host_ports)} host SAN port(s)" if given else
                    f"{len(ports)} active port(s) for {len(host_ports)} host SAN port(s) (speeds not given: ports "
                    "counted)")
            yield hit([host, array_id], f"{array_id} offers {host} {what}: ratio {_ratio(a_bw, h_bw)}",
                      cause=f"{array_id} offers each of {{n}} hosts {what}: ratio {_ratio(a_bw, h_bw)}", item=host)


def _speed(ctx: Context, ref: str) -> Any:
    memo = ctx.memo.setdefault("port_speed", {})
    if ref not in memo:
        pr = ctx.idx.port(ref)
        memo[ref] = getattr(pr.port, "speed_gbps", None) if pr is not None else None
    return memo[ref]


def _gbps(x: float) -> str:
    return f"{x:g}"


def _ratio(a: float, b: float) -> str:
    """'1:4' for 10 and 40; '1:2.5' where the two do not divide."""
    low = min(a, b)
    return f"{a / low:g}:{b / low:g}" if low else f"{a:g}:{b:g}"


@rule("PATH-008", "warning", "mixed link speeds on one path",
      reason="A path runs at the speed of its slowest hop: a 10 Gb/s host port into a 1 Gb/s switch or array "
             "port delivers 1 Gb/s, and the results measure the slow hop.",
      source="Seed 001 Appendix A (10GbE end to end: host 57810 ports, Force10 S4810, PS6110XV 10GbE "
             "controllers); seed 000 (1 Gbps iSCSI NICs, switch and MD3000i ports)",
      hint="use the same speed on the host port, the switch ports between and the array port")
def path_008(ctx: Context) -> Iterator[Hit]:
    if len(_san_speeds(ctx)) < 2:
        return      # one speed (or none) stated on the SAN side of the bed: no path can mix them
    seen: set = set()
    judged: set[tuple[str, ...]] = set()
    for sp in ctx.derived.paths:
        hop_ports = tuple(h.element for h in sp.hops if h.kind in ("port", "target"))
        if hop_ports in judged:     # one verdict per port pair, whatever volumes the path carries
            continue
        judged.add(hop_ports)
        speeds = dict(x for port in hop_ports for x in _stated_speeds(ctx, port))
        key = (sp.host, tuple(sorted(speeds.items())))
        if len(set(speeds.values())) > 1 and key not in seen:
            seen.add(key)
            detail = ", ".join(f"{r} {_gbps(v)} Gb/s" for r, v in speeds.items())
            slow = min(speeds.values())
            fast = ", ".join(f"{r} {_gbps(v)} Gb/s" for r, v in speeds.items() if v != slow)
            yield hit([sp.host, *speeds], f"{sp.spec.initiator} -> {sp.spec.target} mixes link speeds: {detail}",
                      cause=f"{fast} run{'s' if ',' not in fast else ''} into {_gbps(slow)} Gb/s ports on {{n}} paths",
                      item=f"{sp.spec.initiator} -> {sp.spec.target}")


def _san_speeds(ctx: Context) -> set[Any]:
    """Every speed stated on a port that can be on a storage path: SAN ports, array and switch ports."""
    out = set()
    for s in ctx.bed.servers:
        out |= {p.speed_gbps for _, p in ctx.idx.server_ports(s) if p.roles and set(p.roles) & {"iscsi", "fc"}
                or p.kind == "fc"}
    out |= {p.speed_gbps for a in ctx.bed.arrays for _, p, _ in ctx.idx.array_ports(a)}
    out |= {p.speed_gbps for sw in ctx.bed.switches for p in sw.ports}
    return out - {None, NOT_STATED}


def _stated_speeds(ctx: Context, port: str) -> tuple[tuple[str, Any], ...]:
    """(ref, speed) of a port and the switch ports cabled to it, where the speed is stated (cached)."""
    memo = ctx.memo.setdefault("stated_speeds", {})
    hit_ = memo.get(port)
    if hit_ is None:
        refs = (port, *(r for r, _m, _e in facing_switch_ports(ctx, port)))
        hit_ = memo[port] = tuple((r, v) for r in refs if (v := _speed(ctx, r)) is not None and v is not NOT_STATED)
    return hit_


@rule("PATH-006", "error", "a pinned path the drawing cannot carry",
      reason="A session written in `paths:` that the cabling, subnets, zoning or LUN masking cannot carry "
             "does not log in on the day: the host has fewer paths than the plan says.",
      source="Seed 000 Appendix F (sessions per host NIC to each controller's portal on its subnet); "
             "seed 002 Table 2 (primary and secondary path per LU through the mapped ports)",
      hint="fix the hop the message names (cable, address, zone, mapping) or remove the pin and let the "
           "paths follow the drawing",
      unknown="whether {n} pinned paths can log in")
def path_006(ctx: Context) -> Iterator[Hit]:
    for f in ctx.derived.failed_pins:
        subjects = [f.spec.host, f.spec.initiator, f.spec.target]
        unknown = _unstated(ctx, f.spec.host, f.spec.target)
        if unknown:
            yield could_not_judge(subjects, f"whether pinned path {f.spec.initiator} -> {f.spec.target} can log in "
                                  f"(it stops at the {f.hop} hop)", unknown)
            continue
        yield hit(subjects, f"pinned path {f.spec.initiator} -> {f.spec.target} of {f.spec.host} fails at "
                            f"the {f.hop} hop: {f.reason}")


@rule("PATH-007", "info", "FC fabric without zoning",
      reason="With no zones every initiator sees every target port: a lab usually zones one initiator "
             "to its target ports, and an open fabric may give hosts more paths than the plan counts.",
      source="Seed 002 (Brocade 5320 FC fabric; zoning not stated: Q14)",
      hint="declare the zones on the fabric's switch (zones: name and member ports or WWPNs), or record "
           "an exception when the fabric is open on purpose")
def path_007(ctx: Context) -> Iterator[Hit]:
    for switches in ctx.derived.open_fabrics.values():
        shown = ", ".join(sorted(switches))
        yield hit(sorted(switches), f"FC fabric of {shown} declares no zones: it is an open fabric",
                  cause="{n} FC fabrics declare no zones: they are open fabrics", item=f"fabric of {shown}")
