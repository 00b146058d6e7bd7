"""What the VM rules look for among a bed's VMs, picked out in one walk per validation: a
2,000-host bed has 20,000 VMs, and most rules have something to say of only a few of them
(production VMs, VMs with no memory, SR-IOV adapters, addressed vNICs)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topology.unknown import NOT_STATED
from topology.validation.context import Context


@dataclass(slots=True)
class VmFacts:
    production: list[Any]                       # VMs marked production (CAP-007), in bed order
    memory_unset: list[Any]                     # VMs whose memory is not stated or 0 (CAP-008), in bed order
    # vNICs that may be in SR-IOV mode (offloads set, or an iSCSI role: SRIOV-001 decides), in bed order
    sriov_candidates: list[tuple[Any, Any]]
    addressed_nics: list[tuple[str, str, str]]  # (VM:NIC, address, network) of every addressed vNIC, in bed order
    iscsi_nics: list[tuple[Any, Any]]           # (VM, vNIC) of every in-guest iSCSI vNIC (NET-001), in bed order


def vm_facts(ctx: Context) -> VmFacts:
    return ctx.once("vm_facts", _facts_now)


def _facts_now(ctx: Context) -> VmFacts:
    production: list[Any] = []
    memory_unset: list[Any] = []
    sriov: list[tuple[Any, Any]] = []
    addressed: list[tuple[str, str, str]] = []
    iscsi: list[tuple[Any, Any]] = []
    for vm in ctx.bed.vms:
        if vm.production:
            production.append(vm)
        memory = vm.memory_gb
        if memory is NOT_STATED or not memory:
            memory_unset.append(vm)
        for n in vm.nics:
            if n.role == "iscsi":
                sriov.append((vm, n))
                iscsi.append((vm, n))
            elif n.offloads:
                sriov.append((vm, n))
            if n.address:
                addressed.append((f"{vm.id}:{n.name}", n.address, n.network))
    return VmFacts(production, memory_unset, sriov, addressed, iscsi)
