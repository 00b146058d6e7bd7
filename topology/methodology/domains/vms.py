"""The vms section's domains: VM hosts, VMs (on their host and inside the guest), their software,
virtual disks and virtual NICs."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.bed_wide import bed_values
from topology.methodology.domains.hosts import HOST_NAMES, host_values, put_software
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    Values,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    not_stated,
    put,
    put_address,
    scaled,
    size_text,
)
from topology.model import VM, Server
from topology.unknown import NOT_STATED
from topology.vocabulary import ROLE_PROSE

VM_FIELDS = ("id", "host", "role", "vcpu", "memory_gb", "memory_mb", "dynamic_memory", "startup_mb", "min_mb",
             "max_mb", "guest_os", "guest_platform", "ha", "cluster", "vswitch", "path", "production",
             "under_load", "storage_access", "index")
VM_NAMES = field_names("vm", *VM_FIELDS) | HOST_NAMES


def _vm_base(ctx: BedContext, vm: VM, n: int, host: Server | None) -> Values:
    base = _vm_values(ctx, vm, n)
    base.update(host_values(ctx, host))
    if host is None:
        put(base, "host.id", as_text(vm.host, f"{vm.id}.host"))
    return base


def _vm_values(ctx: BedContext, vm: VM, index: int) -> Values:
    out: Values = {}
    r = vm.id
    put(out, "vm.id", as_text(vm.id, f"{r}.id"))
    put(out, "vm.host", as_text(vm.host, f"{r}.host"))
    put(out, "vm.role", as_text(vm.role, f"{r}.role"))
    put(out, "vm.vcpu", as_number(vm.vcpu, f"{r}.vcpu"))
    put(out, "vm.memory_gb", as_number(vm.memory_gb, f"{r}.memory_gb"))
    put(out, "vm.memory_mb", scaled(vm.memory_gb, 1024, f"{r}.memory_gb"))
    dm = vm.dynamic_memory
    put(out, "vm.dynamic_memory", as_bool(dm is not None, f"{r}.dynamic_memory"))
    if dm is not None:
        for key, val in (("startup_mb", dm.startup_gb), ("min_mb", dm.min_gb), ("max_mb", dm.max_gb)):
            put(out, f"vm.{key}", scaled(val, 1024, f"{r}.dynamic_memory"))
    put(out, "vm.guest_os", as_text(vm.guest_os, f"{r}.guest_os"))
    put(out, "vm.guest_platform", as_token(platform_of(vm), f"{r}.guest_os"))
    put(out, "vm.ha", as_bool(vm.highly_available, f"{r}.highly_available"))
    c = ctx.cluster_of.get(vm.host)
    if c is not None:
        put(out, "vm.cluster", as_text(c.id, f"{c.id}.nodes"))
    for nic in vm.nics:
        vs = ctx.vswitch_by_id.get(nic.vswitch)
        if vs is not None:
            put(out, "vm.vswitch", as_text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
            break
    folder = _vm_folder(ctx, vm)
    if folder:
        put(out, "vm.path", as_text(folder[0], folder[1]))
    put(out, "vm.production", as_bool(vm.production, f"{r}.production"))
    put(out, "vm.under_load", as_bool(vm.under_load, f"{r}.under_load"))
    put(out, "vm.storage_access", as_token(vm.storage_access, f"{r}.storage_access"))
    put(out, "vm.index", as_number(index + 1))
    return out


def _disk_folder(ctx: BedContext, vm: VM, d: Any) -> tuple[str, str] | None:
    if d.path:
        return d.path, f"{vm.id}.disks.{d.name}.path"
    if d.volume in ctx.csv_path:
        path, _, c = ctx.csv_path[d.volume]
        return path, f"{c.id}.shared_volumes"
    host = ctx.idx.servers.get(vm.host)
    if host is not None:
        for key in ("hyperv_default_paths", "vm_path", "default_vm_path"):
            if host.settings.get(key):
                return str(host.settings[key]), f"{host.id}.settings.{key}"
    return None


def _volume_folder(ctx: BedContext, d: Any) -> tuple[str, str] | None:
    """The drive letter or mount point of the volume a virtual disk sits on, when the bed gives it."""
    if not d.volume or d.local or not isinstance(d.volume, str):
        return None
    v = ctx.idx.volume(d.volume)
    drive = getattr(v, "drive", "") if v is not None else ""
    if not drive or drive is NOT_STATED:
        return None
    drive = f"{drive.rstrip(':')}:\\" if len(drive.rstrip(":")) == 1 else drive
    return drive, f"{d.volume}.drive"


def _vm_folder(ctx: BedContext, vm: VM) -> tuple[str, str] | None:
    for d in vm.disks:
        f = _disk_folder(ctx, vm, d)
        if f:
            return f
    return None



def _vm_items(ctx: BedContext, sub: int, per_vm: Callable[[VM, Values], Iterable[tuple[Values, str, str]]]
              ) -> list[Item]:
    out = []
    for n, vm in enumerate(ctx.bed.vms):
        host = ctx.idx.servers.get(vm.host)
        base = ctx.cached(("vm", id(vm)), partial(_vm_base, ctx, vm, n, host))
        for j, (vals, target, platform) in enumerate(per_vm(vm, base)):
            out.append(Item(vals, target, platform, (ctx.host_rank(vm.host), n), sub + j))
    return out


@domain("vm_host", HOST_NAMES | field_names("host", "vm_path", "vm_count"), "each server that hosts VMs")
def _vm_hosts(ctx: BedContext) -> list[Item]:
    counts: dict[str, int] = {}
    for vm in ctx.bed.vms:
        counts[vm.host] = counts.get(vm.host, 0) + 1
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.id not in counts:
            continue
        vals = host_values(ctx, s)
        for key in ("hyperv_default_paths", "vm_path", "default_vm_path"):
            if s.settings.get(key):
                put(vals, "host.vm_path", as_text(str(s.settings[key]), f"{s.id}.settings.{key}"))
                break
        put(vals, "host.vm_count", as_number(counts[s.id], f"{s.id}"))
        out.append(Item(vals, s.id, platform_of(s), (i,), 0))
    return out


@domain("vm", VM_NAMES, "each virtual machine (commands run on its host)")
def _vms(ctx: BedContext) -> list[Item]:
    return _vm_items(ctx, 0, lambda vm, base: [(base, vm.host, platform_of(ctx.idx.servers.get(vm.host)))])


@domain("vm_guest", VM_NAMES, "each virtual machine, inside the guest (commands run in the VM)")
def _vm_guests(ctx: BedContext) -> list[Item]:
    return _vm_items(ctx, 500, lambda vm, base: [(base, vm.id, platform_of(vm))])


@domain("vm_software", VM_NAMES | field_names("software", "name", "index"),
        "each software item listed on each VM (inside the guest)")
def _vm_software(ctx: BedContext) -> list[Item]:
    def per(vm: VM, base: Values):
        for k, name in enumerate(vm.software):
            vals = dict(base)
            put_software(vals, vm.id, k, name)
            yield vals, vm.id, platform_of(vm)
    return _vm_items(ctx, 700, per)




def _default_disk_format(ctx: BedContext, host_id: str) -> str:
    """The virtual disk file a host makes when the bed does not say: VHD on Hyper-V below Windows Server
    2012 (VHDX arrived with 2012), VHDX from 2012, VMDK on ESXi, qcow2 on KVM."""
    release = ctx.profile(host_id).release
    if release.family == "esxi":
        return "vmdk"
    if release.family == "linux":
        return "qcow2"
    if release.family == "windows" and release.version and release.version < (2012, 0):
        return "vhd"
    return "vhdx"


VDISK_FIELDS = ("name", "size_gb", "size_mb", "size_text", "format", "format_text", "type", "type_text", "fixed",
                "dynamic", "volume",
                "volume_name", "folder", "file", "controller", "local", "index", "first")


@domain("vm_disk", VM_NAMES | field_names("disk", *VDISK_FIELDS), "each virtual disk of each VM")
def _vm_disks(ctx: BedContext) -> list[Item]:
    def per(vm: VM, base: Values):
        for k, d in enumerate(vm.disks):
            vals = dict(base)
            src = f"{vm.id}.disks.{d.name}"
            put(vals, "disk.name", as_text(d.name, f"{src}.name"))
            put(vals, "disk.size_gb", as_number(d.size_gb, f"{src}.size_gb"))
            put(vals, "disk.size_mb", scaled(d.size_gb, 1024, f"{src}.size_gb"))
            put(vals, "disk.size_text", as_text(size_text(d.size_gb), f"{src}.size_gb"))
            fmt = d.format or ""
            put(vals, "disk.format", as_token(fmt, f"{src}.format"))
            put(vals, "disk.format_text", as_text(fmt.upper(), f"{src}.format"))
            put(vals, "disk.type", as_token(d.type, f"{src}.type"))
            put(vals, "disk.type_text", as_text({"fixed": "fixed-size", "dynamic": "dynamically expanding",
                                                 "differencing": "differencing",
                                                 "passthrough": "pass-through"}.get(d.type, d.type), f"{src}.type"))
            if d.type == "fixed":
                put(vals, "disk.fixed", as_bool(True, f"{src}.type"))
            if d.type == "dynamic":
                put(vals, "disk.dynamic", as_bool(True, f"{src}.type"))
            put(vals, "disk.volume", as_text(d.volume, f"{src}.volume"))
            put(vals, "disk.volume_name", as_text(d.volume.rpartition(":")[2], f"{src}.volume"))
            folder = _disk_folder(ctx, vm, d) or _volume_folder(ctx, d)
            vol = ctx.idx.volume(d.volume) if isinstance(d.volume, str) and d.volume else None
            if not folder and NOT_STATED in (d.path, d.volume, vm.host, getattr(vol, "drive", "")):
                # where the file goes is not stated (a volume whose drive or mount point the source leaves open)
                put(vals, "disk.folder", not_stated(f"{src}.path"))
                put(vals, "disk.file", not_stated(f"{src}.path"))
            if folder:
                put(vals, "disk.folder", as_text(folder[0], folder[1]))
                ext = fmt or _default_disk_format(ctx, vm.host)
                sep = "/" if "/" in folder[0] and "\\" not in folder[0] else "\\"
                put(vals, "disk.file", as_text(f"{folder[0].rstrip(sep)}{sep}{vm.id}-{d.name}.{ext}", folder[1]))
            put(vals, "disk.controller", as_text(d.controller, f"{src}.controller"))
            put(vals, "disk.local", as_bool(d.local, f"{src}.local"))
            put(vals, "disk.index", as_number(k + 1))
            put(vals, "disk.first", as_bool(k == 0))
            yield vals, vm.host, platform_of(ctx.idx.servers.get(vm.host))
    return _vm_items(ctx, 100, per)



VNIC_FIELDS = ("name", "vswitch", "role", "address", "ip", "prefix", "mask", "network", "mtu", "index", "first",
               "dns", "dns_csv",
               # addressed: the NIC gets an address (stated, or one the source leaves unstated); sriov: it is an
               # SR-IOV virtual function (a vNIC on a virtual switch with sriov: true); vhost_net: a virtio NIC
               # served by vhost-net; ifaces: the in-guest iSCSI interfaces bound to it
               "addressed", "sriov", "vhost_net", "ifaces", "uplink")


def _vnic_values(ctx: BedContext, vm: VM, nic: Any, k: int) -> Values:
    vals: Values = {}
    src = f"{vm.id}:{nic.name}"
    put(vals, "nic.name", as_text(nic.name, f"{src}.name"))
    vs = ctx.vswitch_by_id.get(nic.vswitch)
    if vs is not None:
        put(vals, "nic.vswitch", as_text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
    elif nic.vswitch is NOT_STATED:
        put(vals, "nic.vswitch", not_stated(f"{src}.vswitch"))
    put(vals, "nic.role", as_text(ROLE_PROSE.get(nic.role, nic.role), f"{src}.role"))
    put(vals, "nic.address", as_text(nic.address, f"{src}.address"))
    put(vals, "nic.addressed", as_bool(nic.address is NOT_STATED or bool(nic.address), f"{src}.address"))
    put_address(vals, "nic", nic.address, f"{src}.address")
    sriov = vs is not None and vs.sriov and nic.offloads.get("sriov") is not False
    put(vals, "nic.sriov", as_bool(sriov, f"{vs.id}.sriov" if vs is not None else f"{src}.vswitch"))
    put(vals, "nic.vhost_net", as_bool(not sriov and nic.offloads.get("vhost_net") is True, f"{src}.offloads"))
    put(vals, "nic.ifaces", as_list([i for i in nic.iscsi_ifaces if isinstance(i, str)], f"{src}.iscsi_ifaces"))
    if vs is not None and vs.uplinks and vs.uplinks is not NOT_STATED:
        pr = ctx.idx.ports.get(vs.uplinks[0])
        if pr is not None:
            put(vals, "nic.uplink", as_text(pr.port.name, f"{vs.id}.uplinks"))
    put(vals, "nic.network", as_text(nic.network, f"{src}.network"))
    put(vals, "nic.mtu", as_number(nic.mtu, f"{src}.mtu"))
    put(vals, "nic.index", as_number(k + 1))
    put(vals, "nic.first", as_bool(k == 0))
    if nic.role in ("lan", "management"):
        bed_dns = bed_values(ctx)
        if "bed.dns" in bed_dns:
            vals["nic.dns"] = bed_dns["bed.dns"]
            vals["nic.dns_csv"] = bed_dns["bed.dns_csv"]
    return vals


def _nic_items(ctx: BedContext, sub: int, in_guest: bool) -> list[Item]:
    """Each vNIC, set up on the VM's host or inside the guest: the same values, another target."""
    def per(vm: VM, base: Values):
        for k, nic in enumerate(vm.nics):
            vals = dict(base)
            vals.update(ctx.cached(("nic", id(nic)), partial(_vnic_values, ctx, vm, nic, k)))
            if in_guest:
                yield vals, vm.id, platform_of(vm)
            else:
                yield vals, vm.host, platform_of(ctx.idx.servers.get(vm.host))
    return _vm_items(ctx, sub, per)


@domain("vm_nic", VM_NAMES | field_names("nic", *VNIC_FIELDS), "each virtual NIC of each VM (on the host)")
def _vm_nics(ctx: BedContext) -> list[Item]:
    return _nic_items(ctx, 200, in_guest=False)


@domain("guest_nic", VM_NAMES | field_names("nic", *VNIC_FIELDS), "each virtual NIC of each VM (inside the guest)")
def _guest_nics(ctx: BedContext) -> list[Item]:
    return _nic_items(ctx, 600, in_guest=True)

