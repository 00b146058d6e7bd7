"""The hardware section's domain: what goes into each blade chassis (blades and I/O modules), by bay.

A bay the bed does not state is given as `not stated` with `member.bay_stated: false`, so the template
can make that step a decision to record instead of an installation in an invented bay."""
from __future__ import annotations

from typing import Any

from topology.methodology.context import BedContext
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import Values, as_bool, as_number, as_text, field_names, not_stated, put
from topology.unknown import NOT_STATED

MEMBER_NAMES = field_names("chassis", "id", "model") | field_names(
    "member", "id", "model", "display", "kind_text", "bay_kind", "bay", "bay_stated")


def _member_values(chassis: Any, member: Any, kind_text: str, bay_kind: str) -> Values:
    out: Values = {}
    put(out, "chassis.id", as_text(chassis.id, f"{chassis.id}.id"))
    put(out, "chassis.model", as_text(chassis.model, f"{chassis.id}.model"))
    r = member.id
    put(out, "member.id", as_text(r, f"{r}.id"))
    put(out, "member.model", as_text(member.model, f"{r}.model"))
    if member.model is NOT_STATED:
        display = f"{r} (model not stated)"
    else:
        display = f"{r} ({member.model})" if member.model else r
    put(out, "member.display", as_text(display, f"{r}.model"))
    put(out, "member.kind_text", as_text(kind_text, f"{r}.chassis"))
    put(out, "member.bay_kind", as_text(bay_kind, f"{r}.bay"))
    bay = member.bay
    known = isinstance(bay, int) and not isinstance(bay, bool)
    put(out, "member.bay", as_number(bay, f"{r}.bay") if known else not_stated(f"{r}.bay"))
    put(out, "member.bay_stated", as_bool(known, f"{r}.bay"))
    return out


@domain("chassis_member", MEMBER_NAMES,
        "each blade (a server with a chassis) and I/O module (a switch with a chassis) of each blade chassis")
def _chassis_members(ctx: BedContext) -> list[Item]:
    out = []
    for i, chassis in enumerate(ctx.bed.chassis):
        blades = [s for s in ctx.bed.servers if s.chassis == chassis.id]
        modules = [sw for sw in ctx.bed.switches if sw.chassis == chassis.id and not sw.simulated]
        for j, s in enumerate(blades):
            out.append(Item(_member_values(chassis, s, "blade", "bay"), chassis.id, "chassis", (i, j), 0))
        for j, sw in enumerate(modules):
            out.append(Item(_member_values(chassis, sw, "I/O module", "I/O module bay"), chassis.id, "chassis",
                            (i, len(blades) + j), 0))
    return out

