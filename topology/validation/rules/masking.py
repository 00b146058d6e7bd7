"""MAP-001 .. MAP-003: LUN masking, the array's own say in who sees a volume.

Cabling and subnets give a host a way to the array's ports; the array's host entries, host
groups and mappings decide which volumes it then sees.  A bed that uses a volume the array
does not present fails on the day whatever the cables say.
"""
from __future__ import annotations

from collections.abc import Iterator

from topology.ids import volume_ref
from topology.model import StorageArray
from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule

_SRC = ("Seed 000 Appendix F (Host-to-Virtual Disk mappings of every virtual disk to the host group of both "
        "R710s); seed 002 Table 2 (LUs presented to each Exchange server through host groups)")
# what a host uses a volume for, that does not by itself say the array presents it
_NEEDS_MASKING = ("VM ", "shared volume", "witness")


def _array_used(ctx: Context, vol: str) -> StorageArray | None:
    hit_ = ctx.volume(vol)
    return None if hit_ is None or hit_[0].simulated else hit_[0]


def _vms_of(ctx: Context, host: str) -> list[str]:
    return [vm.id for vm in ctx.bed.vms if vm.host == host]


def _host_entries(array, comp: str) -> list:
    return [h for h in array.hosts if h.server == comp]


def _group_mappings(array, volume: str) -> list[str]:
    groups = {g.name for g in array.host_groups}
    return [m.to for m in array.mappings if m.volume == volume and m.to in groups]


def _unmasked_uses(ctx: Context) -> Iterator[tuple[str, str, str, StorageArray]]:
    """(host or VM, volume, why it is used, array) for each use the array's masking does not cover."""
    for comp, vols in sorted(ctx.volumes_used.items()):
        if comp not in ctx.idx.servers and comp not in ctx.idx.vms:
            continue
        presented = ctx.mapped.get(comp, set())
        for vol, why in sorted(vols.items()):
            if vol in presented or not why.startswith(_NEEDS_MASKING):
                continue
            array = _array_used(ctx, vol)
            if array is not None:
                yield comp, vol, why, array


@rule("MAP-001", "error", "a host uses a volume the array does not present to it",
      reason="The array shows a volume only to the hosts its mappings name: a host that runs VMs or cluster "
             "disks from a volume not mapped to it sees no disk, whatever the cabling.",
      source=_SRC,
      hint="map the volume to the host (or to a host group the host belongs to) on the array",
      unknown="whether the arrays present {n} volumes to the hosts that use them")
def map_001(ctx: Context) -> Iterator[Hit]:
    for comp, vol, why, array in _unmasked_uses(ctx):
        name = vol.partition(":")[2]
        if _group_mappings(array, name) and _host_entries(array, comp):
            continue    # mapped to a host group the host is not in: MAP-002 says so
        unknown = [f"{array.id} host {h.name} {w}" for h in array.hosts
                   for w, v in (("server", h.server), ("host group", h.host_group)) if v is NOT_STATED]
        if unknown:
            yield could_not_judge([comp, vol], f"whether {array.id} presents {vol} to {comp}", unknown)
            continue
        yield hit([comp, vol, array.id], f"{comp} uses {vol} ({why}) but {array.id} does not present it: "
                                         f"{ctx.derived.masking.why_not(comp, vol)}")


@rule("MAP-002", "error", "a volume mapped to a host group the host is not in",
      reason="A mapping to a host group reaches only the hosts entered in that group: a host left out of the "
             "group does not see the volume the rest of the cluster sees.",
      source=_SRC,
      hint="put the host's entry on the array into the host group, or map the volume to the host itself",
      unknown="whether {n} hosts are in the host groups their volumes are mapped to",
      explains=("PATH-001", "PATH-002", "PATH-003", "CAP-005", "CLU-002", "WL-001"))
def map_002(ctx: Context) -> Iterator[Hit]:
    for comp, vol, why, array in _unmasked_uses(ctx):
        groups = _group_mappings(array, vol.partition(":")[2])
        entries = _host_entries(array, comp)
        if not groups or not entries:
            continue
        names = ", ".join(h.name for h in entries)
        if any(h.host_group is NOT_STATED for h in entries):
            yield could_not_judge([comp, vol], f"whether {comp} is in host group {', '.join(sorted(set(groups)))}",
                                  [f"{array.id} host {h.name} host group" for h in entries
                                   if h.host_group is NOT_STATED])
            continue
        member_of = sorted({h.host_group for h in entries if h.host_group})
        in_group = f"host group {', '.join(member_of)}" if member_of else "no host group"
        wanted = ', '.join(sorted(set(groups)))
        # one cause: the host's entry out of the group; its lost paths and disks are listed under it
        yield hit([comp, vol, array.id],
                  f"{vol} is mapped to host group {wanted}, which {comp} ({why}) is not in: its host entry {names} "
                  f"is in {in_group}",
                  cause=f"{comp} is not in host group {wanted} on {array.id} (its host entry {names} is in "
                        f"{in_group}): it does not see the {{n}} volumes mapped to that group it uses",
                  item=vol, root=([comp, *_vms_of(ctx, comp)], [vol]))


@rule("MAP-003", "warning", "a volume mapped to nobody",
      reason="A volume no host or host group is mapped to is seen by no server: either a mapping is missing "
             "or the volume is not part of the test.",
      source=_SRC,
      hint="map the volume to the host or host group that uses it, or delete it if the bed does not need it")
def map_003(ctx: Context) -> Iterator[Hit]:
    replicas = {r.target for r in ctx.bed.replications}
    for a in ctx.bed.arrays:
        if a.simulated:
            continue
        mapped = {m.volume for m in a.mappings}
        for v in a.volumes:
            ref = volume_ref(a.id, v.name)
            # a replica is written by the array itself; no host mounts it until a fail-over
            if v.name in mapped or v.copy == "replica" or ref in replicas:
                continue
            yield hit([ref, a.id], f"volume {ref} is mapped to no host or host group")


def _presentations(a: StorageArray) -> Iterator[tuple[str, list[tuple[int, str, frozenset[str]]]]]:
    """(array host, [(LUN, volume, ports)]) for each host entry: its own mappings and its host group's."""
    by_target: dict[str, list[tuple[int, str, frozenset[str]]]] = {}
    for m in a.mappings:
        if isinstance(m.lun, int):
            by_target.setdefault(m.to, []).append((m.lun, m.volume, frozenset(m.ports)))
    for h in a.hosts:
        seen = by_target.get(h.name, []) + (by_target.get(h.host_group, []) if h.host_group else [])
        if len(seen) > 1:
            yield h.name, seen


@rule("MAP-004", "error", "two volumes presented to one host under the same LUN number",
      reason="A host addresses the volumes an array presents to it by LUN number: two volumes under one number "
             "(through the host's own mappings and its host group's) are refused by the array or hide each other.",
      source=_SRC,
      hint="give each volume presented to the host its own LUN number")
def map_004(ctx: Context) -> Iterator[Hit]:
    for a in ctx.bed.arrays:
        # an array group (EqualLogic) presents every volume as its own target, each at LUN 0
        if a.simulated or a.group:
            continue
        for host, seen in _presentations(a):
            said: set[tuple[int, str, str]] = set()
            for i, (lun, vol, ports) in enumerate(seen):
                for lun2, vol2, ports2 in seen[i + 1:]:
                    first, second = sorted((vol, vol2))
                    # presented on different ports, the two never meet under one target
                    if lun2 != lun or vol2 == vol or ports and ports2 and not ports & ports2 or \
                            (lun, first, second) in said:
                        continue
                    said.add((lun, first, second))
                    refs = [volume_ref(a.id, first), volume_ref(a.id, second)]
                    yield hit([*refs, a.id], f"{a.id} presents {refs[0]} and {refs[1]} to host {host} both "
                                             f"as LUN {lun}")
