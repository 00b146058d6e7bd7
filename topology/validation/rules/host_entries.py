"""MAP-005 .. MAP-007: what an array's host entries say of the hosts they stand for.

A host entry names its server, the initiators the array admits and the host type the array
answers with.  An IQN entered for a server that has only Fibre Channel ports never logs in; a
Linux host type on a Windows host gives it the wrong failover behaviour; a LUN presented to
several VMs that each write to it without a cluster file system is corrupted by the first two
writes.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from topology.ids import volume_ref
from topology.os_release import parse_os
from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule

_SRC = ("Seed 000 Appendix F (host access: the host's iSCSI initiator names, host type Windows); "
        "seed 002 Table 2 (host groups with their WWPNs and host mode)")
_IQN = re.compile(r"^(iqn\.|eui\.|naa\.)", re.IGNORECASE)
_WWPN = re.compile(r"^(?:[0-9a-f]{2}:){7}[0-9a-f]{2}$|^[0-9a-f]{16}$", re.IGNORECASE)


def _protocols(ctx: Context, comp: str) -> set[str] | None:
    """The SAN protocols a server's (or VM's) ports can speak; None when a port's kind is not stated."""
    s = ctx.idx.servers.get(comp)
    if s is not None:
        ports = [p for _, p in ctx.idx.server_ports(s)]
        if any(p.kind is NOT_STATED for p in ports):
            return None
        return {"fc" if p.kind == "fc" else "iscsi" for p in ports if p.kind in ("fc", "ethernet")}
    vm = ctx.idx.vms.get(comp)
    return {"iscsi"} if vm is not None and vm.nics else set()


def _arrays(ctx: Context) -> list:
    """The arrays that hold host entries: each array, and each group that holds storage (its access records)."""
    return [*ctx.bed.arrays, *ctx.idx.group_views.values()]


@rule("MAP-005", "error", "an initiator of the wrong kind for its server's ports",
      reason="An array admits the initiators its host entry lists: an iSCSI name (IQN) for a server with only "
             "Fibre Channel ports, or a WWPN for one with only Ethernet ports, never logs in, and the host sees "
             "no volume.",
      source=_SRC,
      hint="enter the server's own initiators: its HBA ports' WWPNs for FC, its iSCSI initiator name for iSCSI",
      unknown="whether {n} host entries list initiators their servers can use",
      explains=("PATH-001", "PATH-002", "PATH-003", "CAP-005", "CLU-002", "WL-001"))
def map_005(ctx: Context) -> Iterator[Hit]:
    for a in _arrays(ctx):
        if a.simulated:
            continue
        for h in a.hosts:
            if type(h.initiators) is not list or not h.initiators or not h.server:
                continue
            kinds = {"iscsi" for i in h.initiators if _IQN.match(i)} | {"fc" for i in h.initiators if _WWPN.match(i)}
            if not kinds:
                continue
            has = _protocols(ctx, h.server)
            if has is None:
                yield could_not_judge([a.id, h.server], f"whether host entry {h.name} on {a.id} lists initiators "
                                      f"{h.server} can use", [f"{h.server} port kinds"])
                continue
            wrong = kinds - has
            if has and wrong:
                which = [i for i in h.initiators if ("iscsi" if _IQN.match(i) else "fc" if _WWPN.match(i) else "")
                         in wrong]
                ports = "only Fibre Channel ports" if has == {"fc"} else "only Ethernet ports"
                # with none of its initiators usable, the host's lost paths and disks follow from this one
                root = ([h.server, *(vm.id for vm in ctx.bed.vms if vm.host == h.server)],
                        _presented(a, h)) if not kinds & has else None
                yield hit([a.id, h.server], f"host entry {h.name} on {a.id} lists {', '.join(which)} "
                          f"({'iSCSI' if 'iscsi' in wrong else 'FC'}), but {h.server} has {ports}",
                          cause=f"{{n}} host entries on {a.id} list {'iSCSI names' if 'iscsi' in wrong else 'WWPNs'} "
                                f"for servers with {ports}", item=f"{h.name} ({', '.join(which)})", root=root)


def _presented(a, h) -> list[str]:
    """The volumes an array presents to a host entry: its own mappings and its host group's."""
    to = {h.name} | ({h.host_group} if h.host_group else set())
    return [volume_ref(a.id, m.volume) for m in a.mappings if m.to in to]


def _host_type_family(text: str) -> str:
    t = text.lower()
    if "linux" in t or "lnx" in t:
        return "linux"
    if "vmware" in t or "esx" in t:
        return "esxi"
    if "windows" in t or re.search(r"\bwin", t):
        return "windows"
    return ""


@rule("MAP-006", "warning", "a host type that does not match the host's operating system",
      reason="The host type tells the array how the host's multipath driver fails over (AVT/ALUA, reservations, "
             "inquiry data): a Linux host type on a Windows host (or the reverse) fails over wrongly or not at all.",
      source=_SRC,
      hint="choose the array's host type for the host's operating system (and its multipath driver)",
      unknown="whether the host types of {n} host entries fit their hosts")
def map_006(ctx: Context) -> Iterator[Hit]:
    for a in _arrays(ctx):
        if a.simulated:
            continue
        for h in a.hosts:
            if not h.host_type or not h.server or h.server is NOT_STATED:
                continue
            wants = _host_type_family(h.host_type)
            s, vm = ctx.idx.servers.get(h.server), ctx.idx.vms.get(h.server)
            if s is not None:
                family = parse_os(s.os or "", s.hypervisor or "", s.platform or "").family
            elif vm is not None:
                family = parse_os(vm.guest_os or "").family
            else:
                continue
            if not wants or not family or wants == family:
                continue
            words = {"windows": "Windows", "linux": "Linux", "esxi": "ESXi"}
            yield hit([a.id, h.server], f"host entry {h.name} on {a.id} has host type {h.host_type!r} "
                      f"({words[wants]}), but {h.server} runs {words[family]}",
                      cause=f"{{n}} host entries on {a.id} have a {words[wants]} host type for {words[family]} hosts",
                      item=f"{h.name} ({h.host_type})")


@rule("MAP-007", "error", "a volume written by several VMs that share no cluster",
      reason="A volume presented read-write to several VMs, each with a file system of its own on it and no "
             "cluster between them, is corrupted as soon as two of them write: a gold image shared by VMs is "
             "read-only, a shared data volume belongs to a cluster.",
      source="Seed 000 (each VM has its own VHDs; only cluster shared volumes are reached by several nodes)",
      hint="mark the volume read-only (a gold image), give each VM a volume of its own, or make the VMs a cluster "
           "whose shared volume it is")
def map_007(ctx: Context) -> Iterator[Hit]:
    users: dict[str, list[str]] = {}
    for comp, vols in ctx.mapped.items():       # in-guest initiators the array presents it to
        if comp in ctx.idx.vms:
            for v in vols:
                users.setdefault(v, []).append(comp)
    for vm in ctx.bed.vms:                      # pass-through disks: the raw LUN inside the VM
        for d in vm.disks:
            if d.type == "passthrough" and d.volume and vm.id not in users.get(d.volume, ()):
                users.setdefault(d.volume, []).append(vm.id)
    shared = {v for c in ctx.bed.clusters if type(c.shared_volumes) is list for v in c.shared_volumes}
    shared |= {c.witness for c in ctx.bed.clusters if c.witness}
    clustered = {n for c in ctx.bed.clusters if type(c.nodes) is list for n in c.nodes}
    for vol, vms in sorted(users.items()):
        found = ctx.volume(vol)
        if len(vms) < 2 or found is None or vol in shared or found[0].simulated:
            continue
        array, volume = found
        if volume.read_only is True:
            continue
        if all(vm in clustered for vm in vms):
            continue    # guest cluster nodes share it on purpose (it may simply not be listed as shared)
        writers = sorted(vms)
        if volume.read_only is NOT_STATED:
            yield could_not_judge([vol, *writers], f"whether {len(writers)} VMs write to {vol}",
                                  [f"{volume_ref(array.id, volume.name)} read-only"])
            continue
        yield hit([vol, *writers], f"{vol} is presented read-write to {len(writers)} VMs that share no cluster: "
                  f"{', '.join(writers)}")
