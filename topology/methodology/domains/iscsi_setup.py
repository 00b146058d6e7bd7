"""iSCSI set-up that does not wait for the cabling: the interfaces a guest binds to its storage NIC
(`VNic.iscsi_ifaces`) and the array groups each machine discovers at the group address.

The path domains (`connectivity.py`) follow the drawn cabling; a report that binds three
interfaces to one NIC and discovers one group address says what each machine must do even when it
states no cable.  An EqualLogic group answers a SendTargets discovery at its group address with one
target per volume the initiator's access records allow, and redirects each login to a member port:
so a machine discovers the group once per interface and logs in to what it is offered.
"""
from __future__ import annotations

from typing import Any

from topology.index import servers_behind_mapping_targets
from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.hosts import HOST_NAMES, host_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    interface_of,
    not_stated,
    put,
)
from topology.model import VM
from topology.unknown import NOT_STATED

IFACE_FIELDS = ("name", "nic", "index", "count", "first")


def _ifaces(machine: Any) -> list[tuple[str, str]]:
    """(iface, the NIC it is bound to) of a VM's vNICs, in order."""
    if not isinstance(machine, VM):
        return []
    return [(name, nic.name) for nic in machine.nics for name in nic.iscsi_ifaces
            if isinstance(name, str) and name]


@domain("iscsi_iface", HOST_NAMES | field_names("iface", *IFACE_FIELDS),
        "each in-guest iSCSI interface a VM binds to one of its vNICs (VNic.iscsi_ifaces), inside the guest")
def _iscsi_ifaces(ctx: BedContext) -> list[Item]:
    out = []
    for n, vm in enumerate(ctx.bed.vms):
        ifaces = _ifaces(vm)
        for k, (name, nic) in enumerate(ifaces):
            vals = host_values(ctx, vm)
            src = f"{vm.id}:{nic}.iscsi_ifaces"
            put(vals, "iface.name", as_text(name, src))
            put(vals, "iface.nic", as_text(nic, src))
            put(vals, "iface.index", as_number(k + 1))
            put(vals, "iface.count", as_number(len(ifaces), src))
            put(vals, "iface.first", as_bool(k == 0))
            out.append(Item(vals, vm.id, platform_of(vm), (ctx.host_rank(vm.host), n), 800 + k))
    return out


GROUP_SESSION_FIELDS = ("name", "model", "family", "address", "ip", "volumes", "volume_count", "ifaces",
                        "iface_count", "nics", "members", "network")


def _machines_of(ctx: BedContext, view: Any) -> dict[str, list[str]]:
    """Machine id -> the volumes of the group view its access records give it, in volume order."""
    members = servers_behind_mapping_targets(view)
    order = {v.name: i for i, v in enumerate(view.volumes)}
    out: dict[str, list[str]] = {}
    for m in view.mappings:
        for machine in members.get(m.to, []):
            if ctx.server_or_vm(machine) is not None and m.volume not in out.setdefault(machine, []):
                out[machine].append(m.volume)
    for vols in out.values():
        vols.sort(key=lambda v: order.get(v, len(order)))
    return out


@domain("group_session", HOST_NAMES | field_names("array_group", *GROUP_SESSION_FIELDS),
        "each machine an array group's access records name (an EqualLogic group): discovery at the group "
        "address, one target per volume, sessions redirected to member ports")
def _group_sessions(ctx: BedContext) -> list[Item]:
    out = []
    for gi, g in enumerate(ctx.bed.array_groups):
        view = ctx.idx.group_views.get(g.name)
        if view is None:
            continue
        src = f"array_groups.{g.name}"
        members = [a.id for a in ctx.bed.arrays if a.group == g.name]
        family = ctx.families.of("array", g.model or next((a.model for a in ctx.bed.arrays
                                                            if a.group == g.name), ""))
        for machine_id, vols in _machines_of(ctx, view).items():
            machine = ctx.server_or_vm(machine_id)
            vals = host_values(ctx, machine)
            put(vals, "array_group.name", as_text(g.name, f"{src}.name"))
            put(vals, "array_group.model", as_text(g.model, f"{src}.model"))
            if family is not None:
                put(vals, "array_group.family", as_token(family.id, f"{src}.model"))
            put(vals, "array_group.address", as_text(g.address, f"{src}.address"))
            put(vals, "array_group.network", as_text(g.network, f"{src}.network"))
            if g.address is NOT_STATED:
                put(vals, "array_group.ip", not_stated(f"{src}.address"))
            else:
                i = interface_of(g.address)
                if i is not None:
                    put(vals, "array_group.ip", as_token(str(i.ip), f"{src}.address"))
            put(vals, "array_group.volumes", as_list(vols, f"{src}.mappings"))
            put(vals, "array_group.volume_count", as_number(len(vols), f"{src}.mappings"))
            ifaces = _ifaces(machine)
            put(vals, "array_group.ifaces", as_list([name for name, _ in ifaces], f"{machine_id}.nics.iscsi_ifaces"))
            put(vals, "array_group.iface_count", as_number(len(ifaces), f"{machine_id}.nics.iscsi_ifaces")
                if ifaces else None)
            put(vals, "array_group.nics", as_list(list(dict.fromkeys(nic for _, nic in ifaces)),
                                                  f"{machine_id}.nics"))
            put(vals, "array_group.members", as_list(members, f"{src}"))
            # a guest's steps sit with its other steps in the VM section, a server's with its connectivity
            out.append(Item(vals, machine_id, platform_of(machine), ctx.machine_group(machine_id), 900 + gi,
                            ("iscsi",)))
    return out
