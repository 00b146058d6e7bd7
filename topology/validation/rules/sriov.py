"""SRIOV-001: a VM network adapter in SR-IOV mode gets a virtual function only when the whole chain
allows it: BIOS (SR-IOV and VT-d/IOMMU), a virtual switch created with SR-IOV on a capable NIC,
a hypervisor and a guest operating system that support it.  Otherwise the adapter silently falls
back to the software path, and the test measures something else than it says.

Only what the bed states is judged: a setting it leaves out is not held against the VM; one it
marks `not stated` gives an info finding.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule
from topology.validation.vm_facts import vm_facts

_ON = {"true", "enabled", "enable", "on", "yes", "1"}
_OFF = {"false", "disabled", "disable", "off", "no", "0"}
_SRIOV_KEY = re.compile(r"sr_?iov", re.I)
_IOMMU_KEY = re.compile(r"vt_?d|iommu|direct_?i_?o|amd_?vi", re.I)
# Hyper-V offers SR-IOV from Windows Server 2012; vSphere from ESXi 5.1
_HYPERV_BEFORE = re.compile(r"\b(2003|2008)\b", re.I)
_ESXI_VERSION = re.compile(r"(?:esxi?|vsphere)\D*(\d+)\.(\d+)", re.I)
# guests with no virtual-function driver under Hyper-V: before Windows Server 2012 / Windows 8
_OLD_WINDOWS_GUEST = re.compile(r"windows\s*(server\s*)?(2003|2008|xp|vista|7)\b", re.I)


def _state(value: Any) -> Any:
    """True, False, NOT_STATED, or None when the bed does not say."""
    if value is NOT_STATED or value is None:
        return value
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in _ON else False if text in _OFF else None


def _setting(mapping: dict, key: re.Pattern) -> tuple[str, Any]:
    for k, v in mapping.items():
        if key.search(str(k).replace("-", "_").replace(" ", "_")):
            return str(k), _state(v)
    return "", None


def _sriov_nics(ctx: Context) -> Iterator[tuple[Any, Any]]:
    for vm, n in vm_facts(ctx).sriov_candidates:
        offloads = n.offloads
        wanted = _state(offloads.get("sriov")) if offloads and isinstance(offloads, dict) else None
        if wanted is True or vm.storage_access == "sriov" and n.role == "iscsi" and wanted is not False:
            yield vm, n


def _problems(ctx: Context, vm: Any, nic: Any) -> tuple[list[str], list[str]]:
    """(what stands in the way, what is not stated) for one SR-IOV adapter."""
    wrong: list[str] = []
    unknown: list[str] = []
    ref = f"{vm.id}:{nic.name}"
    vs = ctx.idx.vswitches.get(nic.vswitch)
    if nic.vswitch is NOT_STATED:
        unknown.append(f"{ref} virtual switch")
    elif vs is not None:
        if vs.sriov is NOT_STATED:
            unknown.append(f"virtual switch {vs.id} SR-IOV")
        elif not vs.sriov:
            wrong.append(f"virtual switch {vs.id} was not created with SR-IOV (Hyper-V enables it only when the "
                         "switch is created)")
        for up in vs.uplinks:
            pr = ctx.idx.port(up)
            offloads = getattr(pr.port, "offloads", {}) if pr is not None else {}
            cap = _state(offloads.get("sriov")) if isinstance(offloads, dict) else None
            if cap is False:
                wrong.append(f"uplink {up} has SR-IOV off (or no SR-IOV support)")
            elif cap is NOT_STATED:
                unknown.append(f"{up} SR-IOV")
    host = ctx.idx.servers.get(vm.host)
    if host is None:
        return wrong, unknown
    for what, key in (("SR-IOV", _SRIOV_KEY), ("VT-d / IOMMU", _IOMMU_KEY)):
        name, state = _setting(host.bios if isinstance(host.bios, dict) else {}, key)
        if state is False:
            wrong.append(f"{host.id} BIOS has {what} off ({name})")
        elif state is NOT_STATED:
            unknown.append(f"{host.id} BIOS {what}")
    hv = f"{host.hypervisor} {host.os}"
    hyperv = "hyper-v" in hv.lower() or "hyperv" in hv.lower()
    esxi = _ESXI_VERSION.search(hv)
    if hyperv and _HYPERV_BEFORE.search(str(host.os)):
        wrong.append(f"Hyper-V on {host.os} offers no SR-IOV (from Windows Server 2012 on)")
    elif esxi and (int(esxi.group(1)), int(esxi.group(2))) < (5, 1):
        wrong.append(f"{host.hypervisor} offers no SR-IOV (from ESXi 5.1 on)")
    unknown += [f"{host.id} {w}" for w, v in (("hypervisor", host.hypervisor), ("OS", host.os)) if v is NOT_STATED]
    if vm.guest_os is NOT_STATED:
        unknown.append(f"{vm.id} guest OS")
    elif hyperv and _OLD_WINDOWS_GUEST.search(str(vm.guest_os)):
        wrong.append(f"guest {vm.guest_os} has no SR-IOV virtual-function driver under Hyper-V "
                     "(64-bit Windows Server 2012 / Windows 8 and later)")
    return wrong, unknown


@rule("SRIOV-001", "error", "a VM adapter in SR-IOV mode that cannot get a virtual function",
      reason="SR-IOV needs the server BIOS to enable SR-IOV and VT-d/IOMMU, a NIC that supports it under a "
             "virtual switch created with SR-IOV, and a hypervisor and guest OS with virtual-function support; "
             "where one is missing the adapter falls back to the software path without saying so.",
      source="Seed 001 section 4 ('The SR-IOV functionality must first be enabled on the server BIOS ... Hyper-V "
             "currently supports the SR-IOV activation only at the time of the switch creation'); J. Howard, "
             "'Everything you wanted to know about SR-IOV in Hyper-V', Microsoft, 2012 (IOMMU, SR-IOV NIC, "
             "firmware, Windows Server 2012)",
      hint="enable SR-IOV and VT-d in the BIOS, create the virtual switch with SR-IOV on a capable NIC, and use "
           "a hypervisor and guest OS that support it, or turn SR-IOV off for this adapter")
def sriov_001(ctx: Context) -> Iterator[Hit]:
    for vm, nic in _sriov_nics(ctx):
        wrong, unknown = _problems(ctx, vm, nic)
        ref = f"{vm.id}:{nic.name}"
        if wrong:
            yield hit([vm.id, ref, *([vm.host] if vm.host else [])],
                      f"{ref} is set for SR-IOV but " + "; ".join(dict.fromkeys(wrong)))
        elif unknown:
            yield could_not_judge([vm.id, ref], f"whether {ref} gets an SR-IOV virtual function", unknown)
