"""CON-001 .. CON-003: parts drawn but not joined to anything, the half-built bed a new user saves.

A bed with hosts, switches and an array but no cables, no disk groups or no volumes used to
pass every rule: nothing was connected, so nothing was wrong.  These rules say what is missing.
"""
from __future__ import annotations

from collections.abc import Container, Iterator

from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule

_SEED000 = "Seed 000 Appendix F (each host's iSCSI NICs cabled to the iSCSI switches, then to both controllers)"


def _cabled(ctx: Context) -> Container[str]:
    """Every DEVICE:PORT a link ends on."""
    return ctx.analyzer.cable_ends


def _pinned(ctx: Context) -> set[str]:
    """Ports a pinned session names: the bed states the session, the cabling may be unknown."""
    memo = ctx.memo.get("pinned_ports")
    if memo is None:
        memo = ctx.memo["pinned_ports"] = {ref for p in ctx.bed.paths for ref in (p.initiator, p.target)}
    return memo


@rule("CON-001", "error", "a host that uses storage has no cabled SAN port",
      reason="A host reaches its volumes through iSCSI or FC ports cabled to the SAN: with none, every VM and "
             "cluster disk it runs is out of reach.",
      source=_SEED000,
      hint="give the host iSCSI (or FC) ports and cable them to the SAN switches or the array",
      unknown="whether {n} hosts have a cabled SAN port")
def con_001(ctx: Context) -> Iterator[Hit]:
    cabled, pinned = _cabled(ctx), _pinned(ctx)
    for s in ctx.bed.servers:
        if s.role != "hypervisor" or s.simulated or not ctx.volumes_used.get(s.id):
            continue
        endpoints = ctx.derived.endpoints(s.id)      # its SAN ports, each with the physical port it leaves by
        if any(e.ref in pinned or any(x in cabled for x in e.exits) for e in endpoints):
            continue
        san = [e.ref for e in endpoints]
        unknown = [f"{ref} {'kind' if p.kind is NOT_STATED else 'roles'}" for ref, p in ctx.idx.server_ports(s)
                   if NOT_STATED in (p.kind, p.roles)]
        if unknown:
            yield could_not_judge(s.id, f"whether {s.id} has a cabled SAN port", unknown)
            continue
        used = sorted(ctx.volumes_used[s.id])
        shown = ", ".join(used[:3]) + (f" and {len(used) - 3} more" if len(used) > 3 else "")
        yield hit([s.id, *san], f"{s.id} uses {shown} but " +
                  (f"none of its SAN ports ({', '.join(san)}) is cabled" if san else "has no iSCSI or FC port"))


@rule("CON-002", "warning", "a storage array with no disk groups or no volumes",
      reason="An array without disk groups (or pools) holds no data, and one without volumes presents "
             "nothing: the bed is not finished, and no storage rule can judge it.  A member of an array group "
             "that holds the pools and volumes needs only to be in one of its pools.",
      source="Seed 000 Appendix F / Figure 14 (disk groups, then virtual disks, then host mappings)",
      hint="add the array's disk groups (or pools) and the volumes the hosts use")
def con_002(ctx: Context) -> Iterator[Hit]:
    for a in ctx.bed.arrays:
        if a.simulated:
            continue
        group = ctx.idx.scopes.get(ctx.idx.storage_owner(a))
        if group is not None and group.group is not None:   # a member: its disks serve the group's pools
            missing = [] if a.disk_groups or any(a in ctx.idx.group_members(group.array.id, p) for p in group.pools) \
                else ["disk groups, and is in no pool of its group"]
        else:
            missing = [what for what, have in (("disk groups or pools", a.disk_groups or a.pools),
                                               ("volumes", a.volumes)) if not have]
        if missing:
            yield hit(a.id, f"array {a.id} has no {' and no '.join(missing)}")


@rule("CON-003", "warning", "an addressed port with no cable",
      reason="A port given an IP address is meant to carry traffic; with no cable it carries none, and the "
             "paths and rules that count on it are wrong.",
      source="cabling basics; seed 000 Table 3 (every addressed NIC is cabled to a switch)",
      hint="cable the port to its switch (or remove the address if the port is not used)")
def con_003(ctx: Context) -> Iterator[Hit]:
    cabled, pinned = _cabled(ctx), _pinned(ctx)
    for ref, pr in ctx.idx.ports.items():
        p = pr.port
        if pr.implicit or not getattr(p, "address", "") or ref in cabled or ref in pinned:
            continue
        if getattr(p, "bound_to", "") or getattr(pr.device, "simulated", False) or not hasattr(p, "kind"):
            continue    # a bound interface rides its NIC's cable; a VM's vNIC has none
        far = ctx.analyzer.unstated_far_ends     # cables whose far end is not stated may end here
        if far:
            shown = sorted(far)
            yield could_not_judge([pr.device.id, ref], f"whether {ref} (address {p.address}) is cabled",
                                  [f"where {end}'s cable goes" for end in shown])
            continue
        yield hit([pr.device.id, ref], f"{ref} has address {p.address} but no cable",
                  cause="{n} ports have an address but no cable", item=f"{ref} ({p.address})")
