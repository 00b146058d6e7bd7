"""The hosts section's domains: servers, their BIOS settings, software and virtual switches.

`host_values` gives a server's or VM's values to every domain that names a host (ports, paths, VMs).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    Values,
    as_any,
    as_bool,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    plain,
    put,
    setting_entries,
)
from topology.model import VM, Server
from topology.unknown import NOT_STATED
from topology.vocabulary import ROLE_PROSE

HOST_FIELDS = ("id", "platform", "os", "role", "multipath", "kind", "domain", "model", "hypervisor", "software",
               "management_address", "dns", "port_names", "dns_csv", "is_dc", "cluster", "ip", "memory_gb",
               # what the templates are chosen by (topology.methodology.selection): os_family windows|linux|esxi,
               # os_distro (windows-server, hyper-v-server, rhel, centos, ubuntu ...), os_lineage (centos -> rhel),
               # os_version (2008 R2, 7.9), os_release ("Windows Server 2008 R2"), hypervisor_kind (hyper-v, kvm,
               # rhev, esxi), transports (iscsi, fc, sas), multipath_family (mpio, rdac, hdlm ...: families.yaml)
               "os_family", "os_distro", "os_lineage", "os_version", "os_release", "hypervisor_kind", "transports",
               "multipath_family", "multipath_name",
               # KVM / RHEV hosts: the physical functions whose virtual functions guests take (the uplinks of
               # its virtual switches with sriov: true), and the guests' vNICs served by vhost-net
               "sriov_uplinks", "vhost_net_nics",
               # a VM whose own storage steps (iSCSI, multipath, file systems) come in the VM section, once it
               # runs: a Linux guest, or one whose OS the bed does not state (Windows guests: connectivity)
               "setup_in_guest")



def host_values(ctx: BedContext, comp: Any, prefix: str = "host") -> Values:
    """The values of a server or VM as `prefix`.*: a fresh dict (callers add to it)."""
    if comp is None:
        return {}
    return dict(ctx.cached((id(comp), prefix), lambda: _host_values(ctx, comp, prefix)))


def _host_values(ctx: BedContext, comp: Any, prefix: str) -> Values:
    out: Values = {}
    cid = comp.id
    put(out, f"{prefix}.id", as_text(cid, f"{cid}.id"))
    put(out, f"{prefix}.platform", as_token(platform_of(comp)))
    profile = ctx.profile(cid)
    rel = profile.release
    os_src = f"{cid}.guest_os" if isinstance(comp, VM) else f"{cid}.os"
    put(out, f"{prefix}.os_family", as_token(rel.family, os_src))
    put(out, f"{prefix}.os_distro", as_token(rel.distro, os_src))
    put(out, f"{prefix}.os_lineage", as_token(rel.lineage, os_src))
    put(out, f"{prefix}.os_version", as_token(rel.version_text, os_src))
    if rel.family:
        put(out, f"{prefix}.os_release", as_text(rel.describe(), os_src))
    put(out, f"{prefix}.hypervisor_kind", as_token(rel.hypervisor, f"{cid}.hypervisor"))
    put(out, f"{prefix}.transports", as_list(profile.transports, f"{cid}"))
    put(out, f"{prefix}.multipath_family", as_token(profile.multipath_family, f"{cid}.multipath"))
    put(out, f"{prefix}.multipath_name", as_text(profile.multipath_name, f"{cid}.multipath"))
    put(out, f"{prefix}.setup_in_guest", as_bool(isinstance(comp, VM) and rel.family in ("linux", ""), os_src))
    if isinstance(comp, VM):
        put(out, f"{prefix}.os", as_text(comp.guest_os, f"{cid}.guest_os"))
        put(out, f"{prefix}.role", as_text(comp.role, f"{cid}.role"))
        put(out, f"{prefix}.multipath", as_text(comp.multipath, f"{cid}.multipath"))
        put(out, f"{prefix}.kind", as_token("vm"))
        put(out, f"{prefix}.domain", as_text(ctx.bed_domain, "bed.domain"))
        return out
    s: Server = comp
    put(out, f"{prefix}.kind", as_token("server"))
    put(out, f"{prefix}.model", as_text(s.model, f"{cid}.model"))
    put(out, f"{prefix}.os", as_text(s.os, f"{cid}.os"))
    put(out, f"{prefix}.hypervisor", as_text(s.hypervisor, f"{cid}.hypervisor"))
    put(out, f"{prefix}.role", as_token(s.role, f"{cid}.role"))
    put(out, f"{prefix}.multipath", as_text(s.multipath, f"{cid}.multipath"))
    put(out, f"{prefix}.software", as_list(s.software, f"{cid}.software"))
    put(out, f"{prefix}.management_address", as_text(s.management_address, f"{cid}.management_address"))
    if s.domain:
        put(out, f"{prefix}.domain", as_text(s.domain, f"{cid}.domain"))
    else:
        put(out, f"{prefix}.domain", as_text(ctx.bed_domain, "bed.domain"))
    put(out, f"{prefix}.dns", as_list(s.dns, f"{cid}.dns"))
    put(out, f"{prefix}.port_names", as_list([f"{p.name} ({p.label})" if p.label else p.name
                                              for ad in s.adapters for p in ad.ports
                                              if p.kind in ("ethernet", "management", "infiniband")
                                              and not p.bound_to],     # a bound iSCSI interface is no adapter
                                             f"{cid}.adapters"))
    put(out, f"{prefix}.dns_csv", as_text(",".join(str(d) for d in s.dns), f"{cid}.dns"))
    put(out, f"{prefix}.is_dc", as_bool(ctx.is_dc(s), f"{cid}.software"))
    c = ctx.cluster_of.get(cid)
    put(out, f"{prefix}.cluster", as_text(c.id if c else "", f"{c.id}.nodes" if c else ""))
    ip = ctx.primary_ip(s)
    if ip:
        put(out, f"{prefix}.ip", as_text(ip[0], ip[1]))
    if s.memory_gb is not None:
        put(out, f"{prefix}.memory_gb", as_number(s.memory_gb, f"{cid}.memory_gb"))
    for k, v in s.settings.items():
        put(out, f"{prefix}.settings.{k}", as_any(v, f"{cid}.settings.{k}"))
    uses = ctx.vnic_uses().get(cid, {})
    pfs: list[str] = []
    for _, _, vs in uses.get("sriov", ()):
        for up in vs.uplinks if vs.uplinks is not NOT_STATED else ():
            pr = ctx.idx.ports.get(up)
            if pr is not None and pr.port.name not in pfs:
                pfs.append(pr.port.name)
    put(out, f"{prefix}.sriov_uplinks", as_list(pfs, "virtual_switches"))
    put(out, f"{prefix}.vhost_net_nics", as_list([f"{vm.id}:{nic.name}" for vm, nic, _ in uses.get("vhost_net", ())],
                                                 "vms.nics.offloads"))
    return out


HOST_NAMES = field_names("host", *HOST_FIELDS)


def server_items(ctx: BedContext, per_server: Callable[[Server, Values], Iterable[tuple[Values, int]]]) -> list[Item]:
    """Items on the physical servers a lab sets up (not the simulated ones): `per_server` gets a server and
    a fresh copy of its host values, and yields each item's values and its order under that server."""
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.simulated:
            continue
        platform = platform_of(s)
        for vals, sub in per_server(s, host_values(ctx, s)):
            out.append(Item(vals, s.id, platform, (i,), sub))
    return out


@domain("server", HOST_NAMES | field_names("server", *HOST_FIELDS),
        "every physical server (values as host.* and server.*)")
def _servers(ctx: BedContext) -> list[Item]:
    def per(s: Server, vals: Values):
        vals.update({"server." + k[5:]: v for k, v in vals.items()})
        yield vals, 0
    return server_items(ctx, per)


@domain("bios", HOST_NAMES | field_names("bios", "name", "label", "value", "value_text"),
        "each BIOS setting of each server")
def _bios(ctx: BedContext) -> list[Item]:
    def per(s: Server, base: Values):
        for j, vals, src, v in setting_entries(base, "bios", s.bios, f"{s.id}.bios"):
            put(vals, "bios.value_text", as_text(plain(v) if not isinstance(v, bool) else
                                                 ("Enabled" if v else "Disabled"), src))
            yield vals, j
    return server_items(ctx, per)


def put_software(vals: Values, owner_id: str, index: int, name: str) -> None:
    """The software.* values of the `index`th item of a server's or VM's software list."""
    put(vals, "software.name", as_text(name, f"{owner_id}.software[{index}]"))
    put(vals, "software.index", as_number(index + 1))


@domain("software", HOST_NAMES | field_names("software", "name", "index"), "each software item listed on each server")
def _software(ctx: BedContext) -> list[Item]:
    def per(s: Server, base: Values):
        for j, name in enumerate(s.software):
            vals = dict(base)
            put_software(vals, s.id, j, name)
            yield vals, j
    return server_items(ctx, per)


@domain("vswitch", HOST_NAMES | field_names("vswitch", "id", "name", "role", "uplinks", "uplink_names", "uplink_labels",
                                            "sriov", "management_os", "vfs", "vf_nics"),
        "each virtual switch, on its host (vfs: the virtual functions its guests take)")
def _vswitches(ctx: BedContext) -> list[Item]:
    out = []
    for j, vs in enumerate(ctx.bed.virtual_switches):
        host = ctx.idx.servers.get(vs.host)
        if host is not None and host.simulated:
            continue
        vals = host_values(ctx, host) if host else {}
        if host is None:
            put(vals, "host.id", as_text(vs.host, f"{vs.id}.host"))
        put(vals, "vswitch.id", as_text(vs.id, f"{vs.id}.id"))
        put(vals, "vswitch.name", as_text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
        put(vals, "vswitch.role", as_text(ROLE_PROSE.get(vs.role, vs.role), f"{vs.id}.role"))
        put(vals, "vswitch.uplinks", as_list(vs.uplinks, f"{vs.id}.uplinks"))
        names, labels = [], []
        for up in vs.uplinks:
            pr = ctx.idx.ports.get(up)
            if pr is not None:
                names.append(pr.port.name)
                labels.append(getattr(pr.port, "label", "") or pr.port.name)
        if vs.uplinks is NOT_STATED:
            names = labels = NOT_STATED
        put(vals, "vswitch.uplink_names", as_list(names, f"{vs.id}.uplinks"))
        put(vals, "vswitch.uplink_labels", as_list(labels, f"{vs.id}.uplinks"))
        put(vals, "vswitch.sriov", as_bool(vs.sriov, f"{vs.id}.sriov"))
        put(vals, "vswitch.management_os", as_bool(vs.management_os, f"{vs.id}.management_os"))
        if vs.sriov:
            # a virtual function per guest vNIC on the switch: the count the bed's guests need, unless the
            # server's settings state the count to create (settings.sriov_numvfs)
            takers = [f"{vm.id}:{nic.name}" for vm, nic, s in ctx.vnic_uses().get(vs.host, {}).get("sriov", ())
                      if s is vs]
            put(vals, "vswitch.vf_nics", as_list(takers, f"{vs.id}"))
            numvfs = host.settings.get("sriov_numvfs") if host is not None else None
            if numvfs not in (None, ""):
                put(vals, "vswitch.vfs", as_number(numvfs, f"{vs.host}.settings.sriov_numvfs"))
            elif takers:
                put(vals, "vswitch.vfs", as_number(len(takers), f"{vs.id} (one per guest vNIC on it)"))
        out.append(Item(vals, vs.host, platform_of(host) if host else "", (ctx.host_rank(vs.host),), 1000 + j))
    return out

