"""Who makes the file system (or datastore, or storage domain) on each volume, and why.

The machine that uses a volume formats it, and only that one:

* nobody formats an access (UTM) LUN (`purpose: access`) or a read-only volume (it holds data
  to keep, such as a "gold" image), nor a volume no machine is mapped to;
* a VM that reaches the LUN itself (in-guest iSCSI over a virtual NIC, an SR-IOV function) or
  gets it as a pass-through disk formats it inside the guest; its host never writes to it, even
  when the array also maps the LUN to the host;
* a volume that holds virtual disks (VHD, VMDK, qcow2) or is a cluster shared volume is
  formatted by its hypervisor host (NTFS, a VMFS datastore, a RHEV storage domain) -- the first
  cluster node when the host is clustered;
* any other volume by the machine it is mapped to.

When several machines own a volume (a guest cluster, a volume shared outside a cluster), the
first one formats it and the others only use it -- except where the owner is Linux (not a RHEV
host): ext4 and XFS are not cluster file systems and the bed states no cluster file system, so
nothing formats or mounts such a volume by script (`by_hand`: the owner's procedure says to make
GFS2/OCFS2 by hand).  The methodology (`host_volume` / `host_disks`) and the path view read these
answers; nothing else decides ownership or sharing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from topology.index import servers_behind_mapping_targets
from topology.model import VM, Bed, Server, StorageArray
from topology.os_release import parse_os

# storage access modes in which the guest itself sees the LUN
GUEST_ACCESS = ("guest_iscsi", "sriov", "passthrough")
_HOW_GUEST = {"guest_iscsi": "in-guest iSCSI", "sriov": "iSCSI over an SR-IOV function",
              "passthrough": "a pass-through disk"}


@dataclass(frozen=True)
class VolumeOwner:
    volume: str                      # ARRAY:VOLUME
    owner: str                       # the machine that formats it, or "" (nobody does)
    kind: str                        # guest | host | server | none
    reason: str                      # why, in words a lab engineer reads
    others: tuple[str, ...] = ()     # other machines that use it and never format it
    shared_with: tuple[str, ...] = ()  # of the others, those that mount it too (not a guest's own host)
    clusters: tuple[str, ...] = ()   # the clusters that list it as a shared volume
    by_hand: bool = False            # shared by Linux machines: no single-node file system by script
    raw_loads: tuple[str, ...] = ()  # fio workloads that run on its raw disk: no file system is made on it

    @property
    def formatted(self) -> bool:
        return bool(self.owner)

    @property
    def shared(self) -> bool:
        return bool(self.shared_with or self.clusters)

    def describe(self) -> str:
        """'Formatted by SQL1 (in-guest iSCSI): ...' or 'Never formatted: ...' for the path view."""
        if not self.owner:
            return f"Never formatted: {self.reason}."
        if self.raw_loads:
            return (f"Never formatted: the fio load {', '.join(self.raw_loads)} runs on its raw disk "
                    "(a file system made on it would be written over).")
        if self.by_hand:
            where = ", ".join(self.shared_with) or "the other nodes"
            cluster = f" (a shared volume of cluster {', '.join(self.clusters)})" if self.clusters else ""
            return (f"Formatted by hand, by no step: {self.owner} shares it with {where}{cluster}, and ext4 and XFS "
                    "are not cluster file systems; the bed states no cluster file system, so a cluster file "
                    f"system (GFS2, OCFS2) is made by hand on {self.owner} and mounted by the cluster's resource "
                    "manager.")
        more = (f"; {', '.join(self.others)} {'use' if len(self.others) > 1 else 'uses'} it without formatting it"
                if self.others else "")
        return f"Formatted by {self.owner}: {self.reason}{more}."


def _rank(bed: Bed) -> dict[str, int]:
    rank = {s.id: i for i, s in enumerate(bed.servers)}
    for i, vm in enumerate(bed.vms):
        rank.setdefault(vm.id, len(bed.servers) + i)
    return rank


def storage_scopes(bed: Bed) -> list[StorageArray]:
    """The arrays that hold volumes and access records: each array that is not simulated, and each
    array group that holds them itself (an EqualLogic group: its volumes are GROUP:VOLUME), seen as
    an array of its own as `topology.index` sees it."""
    out = [a for a in bed.arrays if not a.simulated]
    names = {a.id for a in bed.arrays}
    for g in bed.array_groups:
        if g.holds_storage and g.name not in names:
            out.append(StorageArray(id=g.name, model=g.model, group=g.name, connectivity="iscsi", pools=g.pools,
                                    volumes=g.volumes, host_groups=g.host_groups, hosts=g.hosts,
                                    mappings=g.mappings))
    return out


def volume_owners(bed: Bed) -> dict[str, VolumeOwner]:
    """ARRAY:VOLUME -> who formats it, for every volume of every array that is not simulated and of
    every array group that holds volumes."""
    rank = _rank(bed)
    by_rank = lambda ids: sorted(dict.fromkeys(ids), key=lambda c: rank.get(c, len(rank)))  # noqa: E731
    first_node = {n: c.nodes[0] for c in bed.clusters if c.nodes for n in c.nodes}
    shared = {v for c in bed.clusters for v in c.shared_volumes}
    raw = raw_load_targets(bed)
    vms = {vm.id: vm for vm in bed.vms}
    disks_on: dict[str, list[tuple[VM, str]]] = {}
    for vm in bed.vms:
        for d in vm.disks:
            if d.volume and not d.local and isinstance(d.volume, str):
                disks_on.setdefault(d.volume, []).append((vm, d.type))
    out: dict[str, VolumeOwner] = {}
    for a in storage_scopes(bed):
        members = servers_behind_mapping_targets(a)
        mapped: dict[str, list[str]] = {}
        for m in a.mappings:
            for machine in members.get(m.to, []):
                if machine in rank:
                    mapped.setdefault(m.volume, []).append(machine)
        for v in a.volumes:
            ref = f"{a.id}:{v.name}"
            users = by_rank(mapped.get(v.name, []))
            who = _with_sharing(bed, _owner_of(ref, v, users, disks_on.get(ref, []), vms, first_node, ref in shared,
                                               by_rank), vms)
            if who.owner and ref in raw and not v.drive and not v.reuse:
                who = replace(who, raw_loads=tuple(raw[ref]))
            out[ref] = who
    return out


def raw_load_targets(bed: Bed) -> dict[str, list[str]]:
    """ARRAY:VOLUME -> the fio workloads aimed at it: with no mount point of the bed's (`drive`), a load on a
    volume runs on its raw disk, so no step makes a file system there (the load's guard would refuse it, or
    the load would write over it)."""
    out: dict[str, list[str]] = {}
    for w in bed.workloads:
        if str(w.tool).lower() == "fio":
            for t in w.targets:
                if isinstance(t, str):
                    out.setdefault(t, []).append(w.id)
    return out


def _with_sharing(bed: Bed, who: VolumeOwner, vms: dict[str, VM]) -> VolumeOwner:
    """Who else mounts the volume (the hypervisor host of a guest that reaches its LUN itself does not),
    and whether its owner is Linux, which the templates never give a single-node file system on a volume
    other nodes share."""
    if not who.owner:
        return who
    owner_vm = vms.get(who.owner) if who.kind == "guest" else None
    shared_with = tuple(m for m in who.others if owner_vm is None or m != owner_vm.host)
    clusters = tuple(c.id for c in bed.clusters if who.volume in c.shared_volumes)
    if not (shared_with or clusters):
        return who
    return replace(who, shared_with=shared_with, clusters=clusters, by_hand=_single_node_fs(bed, who.owner, vms))


def _single_node_fs(bed: Bed, machine: str, vms: dict[str, VM]) -> bool:
    """Whether the machine's format step would make ext4/XFS: a Linux server that is not a RHEV host (RHEV
    makes a storage domain, a cluster's own), or a Linux guest."""
    server = next((s for s in bed.servers if s.id == machine), None)
    if isinstance(server, Server):
        rel = parse_os(server.os or "", server.hypervisor or "", server.platform or "")
    elif machine in vms:
        rel = parse_os(vms[machine].guest_os or "")
    else:
        return False
    return rel.family == "linux" and rel.hypervisor != "rhev"


def _owner_of(ref: str, v, users: list[str], disks: list[tuple[VM, str]], vms: dict[str, VM],
              first_node: dict[str, str], shared: bool, by_rank) -> VolumeOwner:
    purposes = v.purpose if isinstance(v.purpose, list) else []
    if "access" in purposes:
        return VolumeOwner(ref, "", "none", "the array's access (UTM) LUN carries no data and is never formatted",
                           tuple(users))
    if v.read_only is True:
        return VolumeOwner(ref, "", "none", "it is read-only: it holds data to keep", tuple(users))
    guests: dict[str, str] = {}
    for machine in users:
        vm = vms.get(machine)
        # a VM mapped on the array logs in itself when its storage access says so (in one configuration
        # of a bed the same VM may get its disks from its host instead)
        if vm is not None and vm.storage_access in ("guest_iscsi", "sriov"):
            guests.setdefault(vm.id, _HOW_GUEST[vm.storage_access])
    for vm, disk_type in disks:
        # a guest's other disks (its system disk on the host's datastore) are its host's to format
        if disk_type == "passthrough" or vm.storage_access == "passthrough":
            guests.setdefault(vm.id, _HOW_GUEST["passthrough"])
    if guests:
        order = by_rank(guests)
        owner = order[0]
        others = order[1:] + [u for u in users if u not in guests]
        return VolumeOwner(ref, owner, "guest", f"VM {owner} reaches it itself ({guests[owner]}); "
                                                "its host never writes to it", tuple(others))
    hosted = by_rank(vm.host for vm, _ in disks if isinstance(vm.host, str) and vm.host)
    disks = [(vm, t) for vm, t in disks if vm.id not in guests]
    if hosted or shared:
        hosts = hosted or users
        candidates = [h for h in hosts if h in users] or hosts
        if not candidates:
            return VolumeOwner(ref, "", "none", "no host is mapped to it")
        owner = first_node.get(candidates[0], candidates[0])
        if owner not in users and candidates[0] in users:
            owner = candidates[0]
        held = sorted({vm.id for vm, _ in disks})
        why = (f"it holds the virtual disks of {', '.join(held)}" if held else "it is a cluster shared volume")
        if owner in first_node and len(users) > 1:
            why += " (the cluster's first node formats it)"
        return VolumeOwner(ref, owner, "host", why, tuple(u for u in users if u != owner))
    if not users:
        return VolumeOwner(ref, "", "none", "no machine is mapped to it")
    owner = first_node.get(users[0], users[0]) if first_node.get(users[0]) in users else users[0]
    why = f"it is mapped to {', '.join(users)}" + (" (the cluster's first node formats it)" if len(users) > 1 and
                                                   first_node.get(owner) == owner else "")
    return VolumeOwner(ref, owner, "server", why, tuple(u for u in users if u != owner))
