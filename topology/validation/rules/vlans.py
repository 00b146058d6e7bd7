"""NET-013: a port and the switch it is cabled to disagree on the VLAN.

The path derivation matches an initiator and a portal by their own subnet and VLAN; the switch
between them was not asked.  A host port in VLAN 201 plugged into an access port of VLAN 202,
or into a switch that does not carry VLAN 201 at all, sends its frames nowhere, however well
the two ends agree.  The switch's own VLANs (`vlans:`) and each described port's access VLAN
(`vlan:`) are what the lab configures on the switch: this rule reads them.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from topology.model import Switch
from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, hit, rule


def _vlan(ctx: Context, port: Any) -> int | None:
    """The VLAN a port's frames are in: its own, else its network's (None: not given or not stated)."""
    vlan = getattr(port, "vlan", None)
    if vlan is None or vlan is NOT_STATED:
        net = ctx.idx.networks.get(getattr(port, "network", "") or "")
        vlan = net.vlan if net is not None else None
    return vlan if isinstance(vlan, int) and not isinstance(vlan, bool) else None


def _riders(ctx: Context) -> dict[str, list[tuple[str, int]]]:
    """Cabled port -> (the port or an interface bound to it, its VLAN) for every VLAN that rides the cable."""
    out: dict[str, list[tuple[str, int]]] = {}
    for ref, pr in ctx.idx.ports.items():
        if pr.implicit or isinstance(pr.device, Switch) or getattr(pr.port, "kind", "") != "ethernet":
            continue
        vlan = _vlan(ctx, pr.port)
        if vlan is not None:
            out.setdefault(getattr(pr.port, "bound_to", "") or ref, []).append((ref, vlan))
    return out


@rule("NET-013", "error", "a port's VLAN is not carried by the switch port it is cabled to",
      reason="A switch forwards a port's frames only in the VLANs it carries on that port: a host or array port "
             "in one VLAN plugged into an access port of another, or into a switch without its VLAN, reaches "
             "nothing, whatever subnet and VLAN the two ends agree on.",
      source="Seed 001 section 2.5 (each IP network segregated by its own VLAN on the switches, tagged)",
      hint="set the switch port's access VLAN (or the switch's VLANs) to the port's VLAN, or correct the "
           "port's VLAN or network")
def net_013(ctx: Context) -> Iterator[Hit]:
    if not any(isinstance(sw.vlans, list) and sw.vlans or any(_vlan(ctx, p) is not None for p in sw.ports)
               for sw in ctx.bed.switches):
        return      # no switch states a VLAN: nothing to hold a port's VLAN against
    riders = _riders(ctx)
    if not riders:
        return
    for lk in ctx.bed.links:
        for end, other in ((lk.a, lk.b), (lk.b, lk.a)):
            carried = riders.get(end)
            if not carried:
                continue
            sw = ctx.idx.switches.get(other.rpartition(":")[0]) or ctx.idx.switches.get(other)
            if sw is None:
                continue
            access = _vlan(ctx, ctx.idx.ports[other].port) if other in ctx.idx.ports else None
            allowed = sw.vlans if isinstance(sw.vlans, list) else []
            for ref, vlan in carried:
                if access is not None and vlan != access:
                    yield hit([ref, other], f"{ref} is in VLAN {vlan} and is cabled to {other}, an access port "
                                            f"of VLAN {access}")
                elif allowed and vlan not in allowed:
                    yield hit([ref, sw.id], f"{ref} is in VLAN {vlan} and is cabled to switch {sw.id}, which "
                                            f"carries VLAN {', '.join(str(v) for v in allowed)} only")
