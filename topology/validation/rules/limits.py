"""LIM-001 .. LIM-004: more than the hardware holds: disks, blade bays, host ports and their cables, switch
ports.  Where the bed gives no limit of its own (max_disks, bays, port_count), the model catalogue's
documented limit for the component's model applies (`topology.model_catalogue`); a bed value wins."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from topology.ids import SEP
from topology.index import parse_slot_range
from topology.model_catalogue import limit as catalogue_limit
from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule


def _disks_in(enclosure) -> int:
    n = 0
    for ds in enclosure.disks:
        try:
            n += len(parse_slot_range(ds.slots))
        except ValueError:
            continue    # the loader and RAID-004 explain a range that does not parse
    return n


@rule("LIM-001", "error", "more disks than the array or enclosure holds",
      reason="An array takes at most its model's number of drives, and an enclosure one drive per slot: a "
             "bed with more cannot be built.",
      source="Seed 001 Appendix A (PS6110XV: '24x 600GB 15K 3.5\" SAS disk drives ... (each unit)'); seed 000 "
             "Figure 14 (the MD3000i's disk layout by slot)",
      hint="remove disks, or correct the array's max_disks or the enclosure's slot count")
def lim_001(ctx: Context) -> Iterator[Hit]:
    for a in ctx.bed.arrays:
        counts = {e.name: _disks_in(e) for e in a.enclosures}
        for e in a.enclosures:
            if e.slots is not NOT_STATED and counts[e.name] > e.slots:
                yield hit([a.id, f"{a.id}:{e.name}"], f"enclosure {e.name} of {a.id} holds {counts[e.name]} disks "
                                                      f"in {e.slots} slots")
        total = sum(counts.values())
        documented = catalogue_limit("arrays", a.model, "max_drives") if a.max_disks is None else None
        if a.max_disks is NOT_STATED:
            if total:
                yield could_not_judge(a.id, f"whether {a.id} takes its {total} disks", [f"{a.id} max disks"])
        elif a.max_disks is not None and total > a.max_disks:
            yield hit(a.id, f"{a.id} holds {total} disks; the array takes at most {a.max_disks}")
        elif documented is not None and total > documented[0]:
            yield hit(a.id, f"{a.id} holds {total} disks; a {documented[1].name} takes at most {documented[0]} "
                            f"({_cited(documented[1], 'max_drives')})")


@rule("LIM-002", "error", "a blade in a bay the chassis does not have, or two blades in one bay",
      reason="A blade chassis has a fixed number of bays, each holding one blade.",
      source="blade chassis basics (a fixed number of numbered bays, e.g. 14 in an IBM BladeCenter H)",
      hint="move the blade to a free bay that exists, or correct the chassis' bay count")
def lim_002(ctx: Context) -> Iterator[Hit]:
    by_bay: dict[tuple[str, int], list[str]] = defaultdict(list)
    for s in ctx.bed.servers:
        chassis = ctx.idx.chassis.get(s.chassis) if s.chassis else None
        if chassis is None or s.bay is None or s.bay is NOT_STATED:
            continue
        by_bay[(chassis.id, s.bay)].append(s.id)
        documented = catalogue_limit("chassis", chassis.model, "bays") if chassis.bays is None else None
        if chassis.bays is NOT_STATED:
            yield could_not_judge([s.id, chassis.id], f"whether bay {s.bay} exists in {chassis.id}",
                                  [f"{chassis.id} bays"])
        elif chassis.bays is not None and not 1 <= s.bay <= chassis.bays:
            yield hit([s.id, chassis.id],
                      f"{s.id} sits in bay {s.bay} of {chassis.id}, which has bays 1-{chassis.bays}")
        elif documented is not None and not 1 <= s.bay <= documented[0]:
            yield hit([s.id, chassis.id], f"{s.id} sits in bay {s.bay} of {chassis.id}; a {documented[1].name} has "
                                          f"bays 1-{documented[0]} ({_cited(documented[1], 'bays')})")
    for (chassis_id, bay), blades in sorted(by_bay.items()):
        if len(blades) > 1:
            yield hit([chassis_id, *blades], f"bay {bay} of {chassis_id} holds {', '.join(blades)}")


@rule("LIM-003", "error", "more host-side cables or host ports than the array's controllers have",
      reason="Each host-facing cable ends on a controller port: an array cabled more times than its "
             "controllers have host ports cannot be built that way, nor a controller drawn with more host ports "
             "than its model takes.",
      source="Seed 000 ('two controllers with two 1Gbps iSCSI ports per controller'); seed 001 Appendix A "
             "('Dual 1 port 10GbE controllers'); the model catalogue (resources/models/catalogue.yaml)",
      hint="cable each link to a named controller port, or add the ports the array model has")
def lim_003(ctx: Context) -> Iterator[Hit]:
    ends: Counter = Counter()
    arrays = ctx.idx.arrays
    for lk in ctx.bed.links:
        for end in (lk.a, lk.b):
            device = end if end in arrays else end.rpartition(SEP)[0] or end    # endpoint_device, inline
            if device not in arrays:
                continue
            pr = ctx.idx.port(end) if device != end else None
            if pr is None or pr.port.kind != "management":
                ends[device] += 1
    for array_id, n in sorted(ends.items()):
        a = ctx.idx.arrays[array_id]
        ports = [ref for ref, p, _ in ctx.idx.array_ports(a) if p.kind != "management"]
        if ports and n > len(ports):
            yield hit(array_id, f"{array_id} has {n} host-side cables but its controllers have {len(ports)} "
                                f"host ports ({', '.join(ports[:6])}{' ...' if len(ports) > 6 else ''})")
    for a in ctx.bed.arrays:       # ports drawn beyond what the model's controllers take
        per = catalogue_limit("arrays", a.model, "host_ports_per_controller")
        if per is None:
            continue
        for c in a.controllers:
            host = [p.name for p in c.ports if _serves_hosts(p)]
            if len(host) > per[0]:
                yield hit([a.id, f"{a.id}:{c.name}"],
                          f"controller {c.name} of {a.id} has {len(host)} host ports; a {per[1].name} controller takes "
                          f"at most {per[0]} ({_cited(per[1], 'host_ports_per_controller')})")


def _serves_hosts(port) -> bool:
    """A host port: one that carries iSCSI or FC (not management, not a drive-side expansion port)."""
    roles = port.roles if isinstance(port.roles, list) else []
    return port.kind == "fc" or "iscsi" in roles or "fc" in roles


def _cited(entry, name: str) -> str:
    """Where a catalogue limit comes from, for the message."""
    source = entry.source_of(name)
    return f"model catalogue: {source.title}" if source is not None else "model catalogue"


@rule("LIM-004", "error", "more cables on a switch than its model has ports",
      reason="A switch takes one cable per port: a bed that cables more ports than the model has cannot be built.",
      source="the switch models' documentation in the model catalogue (resources/models/catalogue.yaml), e.g. seed "
             "001 Table 10 (PowerConnect 6248: 48x 1GbE and 4x 10GbE interfaces)",
      hint="move cables to another switch, or correct the switch's model or its port_count")
def lim_004(ctx: Context) -> Iterator[Hit]:
    on: Counter = Counter()
    for lk in ctx.bed.links:
        for end in (lk.a, lk.b):
            device = end.rpartition(SEP)[0] or end
            if device in ctx.idx.switches:
                on[device] += 1
    for sw_id, n in sorted(on.items()):
        sw = ctx.idx.switches[sw_id]
        if sw.port_count is not None:
            continue        # the bed's own count: NET-012 judges it
        documented = catalogue_limit("switches", sw.model, "ports")
        if documented is not None and n > documented[0]:
            yield hit(sw_id, f"{sw_id} has {n} cable ends; a {documented[1].name} has {documented[0]} ports "
                             f"({_cited(documented[1], 'ports')})")
