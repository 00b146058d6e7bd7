"""CAP-010 .. CAP-011: VMs the bed gives a way to storage but no storage, or a host the scenario took away."""
from __future__ import annotations

from collections.abc import Iterator

from topology.validation.context import Context
from topology.validation.registry import Hit, hit, rule


@rule("CAP-010", "warning", "a VM with an in-guest initiator and no LUN",
      reason="A VM set up for in-guest iSCSI (or SR-IOV) logs in to reach its own LUN: with no volume presented "
             "to it and no disk on one, it has nothing to log in to, and its workload runs on the wrong disk.",
      source="Seed 001 (in-guest iSCSI data volumes for the SQL and Exchange VMs, each mapped to its VM)",
      hint="map the VM's LUN to its host entry on the array (its initiator name), or give it a virtual disk on the "
           "volume it uses; set storage access to hypervisor if it uses none")
def cap_009(ctx: Context) -> Iterator[Hit]:
    for vm in ctx.bed.vms:
        if vm.storage_access not in ("guest_iscsi", "sriov"):
            continue
        if any(n.role == "iscsi" for n in vm.nics) is False and vm.storage_access == "guest_iscsi":
            continue    # no iSCSI vNIC: the rules of its vNICs say so
        if ctx.mapped.get(vm.id) or ctx.guest_volumes.get(vm.id):
            continue
        if any(d.volume and not d.local and ctx.vm_disk_user(vm, d.volume) == vm.id for d in vm.disks):
            continue
        words = "in-guest iSCSI" if vm.storage_access == "guest_iscsi" else "SR-IOV iSCSI"
        yield hit(vm.id, f"{vm.id} uses {words} but no volume is presented to it",
                  cause="{n} VMs with an in-guest initiator have no LUN presented to them", item=vm.id)


@rule("CAP-011", "error", "a scenario moves a VM to a host it takes out",
      reason="A scenario's placement that puts a VM on a host the same scenario fails or leaves out runs the VM "
             "nowhere: the VM silently drops out of the scenario, and its load with it.",
      source="Seed 000 degraded state (the VMs of the unplugged host run on the survivor)",
      hint="move the VM to a host the scenario keeps, or take the host out of the scenario's failed/excluded list")
def cap_010(ctx: Context) -> Iterator[Hit]:
    judged = ctx.scenario       # judged alone (--scenario): its own placement; else every scenario's
    for sc in ctx.drawn.scenarios:
        if judged is not None and sc.id != judged.id:
            continue
        failed, excluded = set(sc.failed), set(sc.excluded)
        for vm_id, host in sorted(sc.placement.items()):
            if host in excluded:
                yield hit([vm_id, host], f"scenario {sc.id} moves {vm_id} to {host}, which it leaves out: {vm_id} "
                          "runs nowhere in that scenario",
                          cause=f"scenario {sc.id} moves {{n}} VMs to hosts it leaves out: they run nowhere",
                          item=f"{vm_id} to {host}")
            elif host in failed:
                yield hit([vm_id, host], f"scenario {sc.id} moves {vm_id} to {host}, which it fails: {vm_id} runs "
                          "there only until the fail-over", severity="warning",
                          cause=f"scenario {sc.id} moves {{n}} VMs to hosts it fails", item=f"{vm_id} to {host}")
