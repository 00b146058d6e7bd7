"""What a disk group or pool can deliver, what its workloads ask of it, and which volume a
host's disk device is: the IOPS model behind RAID-009 and the predicted-vs-measured tables.

The model (each assumption is listed with every prediction):
- a disk's random small-block IOPS by media and RPM (`capacity.disk_iops`);
- a random host write costs the RAID level's write penalty in disk operations (RAID-5: 4,
  RAID-1/10: 2, RAID-6: 6);
- sequential writes (a log volume) are gathered by the controller into full stripes: a host
  write costs (data + redundancy) / data disk writes on parity RAID and 2 on mirrors, and a
  disk that need not seek serves SEQUENTIAL_FACTOR times its random IOPS (flash: no gain);
- the controller's cache is not modelled: the figures are steady state, not bursts.

A workload's demand goes to the volumes it uses: the databases (and other data volumes) take
its stated IOPS at its read/write mix; its log volumes take only the log write rate the
workload states (`parameters.log_iops`), all sequential writes.  Where the workload states no
mix, 70 % random reads is assumed, and every figure says so.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from topology import capacity as cap
from topology.ids import container_ref
from topology.index import ArrayScope
from topology.model import Volume, Workload
from topology.unknown import NOT_STATED

SEQUENTIAL_FACTOR = 4.0          # HDD: sequential small-block operations per random one (no seeks)
ASSUMED_READ_FRACTION = 0.7
LOG_PURPOSE = "log"


@dataclass(frozen=True)
class Mix:
    """Shares of a load (they add up to 1): random and sequential reads and writes."""
    random_read: float = 0.0
    sequential_read: float = 0.0
    random_write: float = 0.0
    sequential_write: float = 0.0

    @property
    def read_fraction(self) -> float:
        return self.random_read + self.sequential_read

    @property
    def sequential_fraction(self) -> float:
        return self.sequential_read + self.sequential_write

    def text(self) -> str:
        parts = [f"{self.read_fraction:.0%} reads"]
        if self.sequential_fraction >= 0.995:
            parts.append("sequential")
        elif self.sequential_fraction > 0.005:
            parts.append(f"{self.sequential_fraction:.0%} sequential")
        else:
            parts.append("random")
        return ", ".join(parts)


def mix_of(read_fraction: float, sequential_fraction: float = 0.0) -> Mix:
    r = min(max(read_fraction, 0.0), 1.0)
    s = min(max(sequential_fraction, 0.0), 1.0)
    return Mix(r * (1 - s), r * s, (1 - r) * (1 - s), (1 - r) * s)


def blend(parts: list[tuple[float, Mix]]) -> Mix:
    total = sum(w for w, _ in parts)
    if total <= 0:
        return Mix()
    return Mix(*(sum(w * getattr(m, f) for w, m in parts) / total
                 for f in ("random_read", "sequential_read", "random_write", "sequential_write")))


def workload_mix(w: Workload) -> tuple[Mix | None, str]:
    """The workload's mix and where it comes from (stated, from its access specifications, or
    assumed); None when the source leaves its read share not stated (nothing is guessed then)."""
    if w.read_pct is NOT_STATED or any(x.share_pct is NOT_STATED or x.read_pct is NOT_STATED for x in w.access):
        return None, "the read share is not stated"
    sequential = 0.0
    if w.access and all(x.random_pct is not NOT_STATED for x in w.access):
        total = sum(x.share_pct for x in w.access) or 1.0
        sequential = 1 - sum(x.share_pct * x.random_pct for x in w.access) / total / 100
    if w.read_pct is not None:
        return mix_of(w.read_pct / 100, sequential), f"{w.read_pct:g} % reads as the workload states"
    if w.access:
        total = sum(x.share_pct for x in w.access) or 1.0
        reads = sum(x.share_pct * x.read_pct for x in w.access) / total / 100
        return mix_of(reads, sequential), "the mix of its access specifications"
    return mix_of(ASSUMED_READ_FRACTION), (f"assumed: {ASSUMED_READ_FRACTION:.0%} random reads (the workload "
                                           "states no read share)")


# ====================================================================== the model

@dataclass
class Prediction:
    array: str
    kind: str                 # group | pool
    name: str
    mix: Mix
    iops: float               # front-end IOPS the container sustains at the mix
    disks: int
    levels: str               # "RAID 5 (8D+1P)" ...
    assumptions: list[str] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return container_ref(self.array, self.kind, self.name)


def _cost(level: str, geometry: cap.Geometry, media: str, mix: Mix) -> float:
    """Disk operations, in units of one random disk operation, per front-end operation."""
    seq = 1.0 if media in ("ssd", "nvme") else SEQUENTIAL_FACTOR
    if level in ("raid1", "raid10"):
        full_stripe = 2.0
    elif geometry.data and geometry.redundancy:
        full_stripe = (geometry.data + geometry.redundancy) / geometry.data
    else:
        full_stripe = 1.0
    return (mix.random_read + mix.sequential_read / seq + mix.random_write * cap.WRITE_PENALTY.get(level, 1)
            + mix.sequential_write * full_stripe / seq)


def _groups(scope: ArrayScope, kind: str, name: str) -> list:
    if kind == "group":
        return [scope.groups[name]] if name in scope.groups else []
    return scope.pool_groups(name) if kind == "pool" else []


def unknown_parts(scope: ArrayScope, kind: str, name: str) -> list[str]:
    """What the model needs of a group or pool that the source does not state."""
    groups = _groups(scope, kind, name)
    out = [f"group {g.name} {what}" for g in groups for what, v in (("RAID level", g.raid), ("members", g.members))
           if v is NOT_STATED]
    out += [f"media or speed of the disks in {d.enclosure}:{d.spec.slots}" for g in groups
            for d in scope.group_disks(g) if not cap.disk_iops(d.spec.media, d.spec.rpm)]
    return list(dict.fromkeys(out))


def predict(scope: ArrayScope, kind: str, name: str, mix: Mix) -> Prediction | None:
    """What a disk group or pool (its groups' disks) sustains at `mix`; None when the bed
    draws no disks for it or leaves what the model needs not stated (`unknown_parts`)."""
    if unknown_parts(scope, kind, name):
        return None
    groups = _groups(scope, kind, name)
    total, disks, levels, media = 0.0, 0, [], set()
    for g in groups:
        members = scope.group_disks(g)
        if not members:
            continue
        per = [cap.disk_iops(d.spec.media, d.spec.rpm) for d in members]
        geo = cap.geometry(g.raid, len(members), g.geometry)
        kinds = {d.spec.media for d in members}
        media |= kinds
        cost = max(_cost(g.raid, geo, next(iter(kinds)) if len(kinds) == 1 else "hdd", mix), 1e-9)
        total += sum(per) / cost
        disks += len(members)
        levels.append(f"{cap.LEVEL_NAMES.get(g.raid, g.raid)} ({geo})")
    if not disks:
        return None
    distinct = list(dict.fromkeys(levels))
    shown = distinct[0] if len(distinct) == 1 else ", ".join(distinct[:3]) + (" ..." if len(distinct) > 3 else "")
    if len(distinct) == 1 and len(levels) > 1:
        shown = f"{len(levels)} x {shown}"
    kinds_of_disk = sorted({(d.spec.media, d.spec.rpm or 0) for g in groups for d in scope.group_disks(g)})
    per_disk = ", ".join(f"{m.upper()}{f' {r:,} RPM' if r and m == 'hdd' else ''} "
                         f"{cap.disk_iops(m, r or None):.0f} random IOPS" for m, r in kinds_of_disk)
    assumptions = [
        f"per disk: {per_disk}",
        "random host write: the RAID write penalty (RAID 5: 4, RAID 1/10: 2, RAID 6: 6 disk operations)",
        "controller cache not modelled (steady state)"]
    if mix.sequential_fraction > 0.005:
        assumptions.insert(2, f"sequential I/O: full-stripe writes, a disk does {SEQUENTIAL_FACTOR:g} x its random "
                              "IOPS when it need not seek (flash: 1 x)")
    return Prediction(scope.array.id, kind, name, mix, total, disks, shown, assumptions)


# ====================================================================== demand

def volume_home(scope: ArrayScope, v: Volume) -> tuple[set[str], set[str]]:
    """(groups, pools) whose disks a volume lives on."""
    groups: set[str] = set()
    pools: set[str] = set()
    if v.group:
        groups.add(v.group)
        g = scope.groups.get(v.group)
        if g is not None and g.pool:
            pools.add(g.pool)
    if v.pool:
        pools.add(v.pool)
        groups |= {g.name for g in scope.pool_groups(v.pool)}
    return groups, pools


def container_of(scope: ArrayScope, v: Volume) -> tuple[str, str] | None:
    """The pool a volume lives in, else its disk group: where its I/O is judged."""
    groups, pools = volume_home(scope, v)
    if pools:
        return "pool", sorted(pools)[0]
    if groups:
        return "group", sorted(groups)[0]
    return None


def workload_volumes(ctx: Any, w: Workload) -> list[str]:
    """ARRAY:VOLUME refs a workload loads: its volume targets, its VMs' data disks (the OS
    disk only when it has no other) and in-guest volumes, its servers' volumes."""
    vols: list[str] = []
    for t in w.targets:
        if t in ctx.idx.volumes:
            vols.append(t)
        elif t in ctx.idx.vms:
            vm = ctx.idx.vms[t]
            disks = [d.volume for d in vm.disks if d.volume]
            data = [v for v in disks if v in ctx.idx.volumes and "os" not in ctx.idx.volumes[v][1].purpose] \
                if disks else []
            vols += data or disks
            vols += [v for v in ctx.guest_volumes.get(t, ()) if v not in vols]
        elif t in ctx.idx.servers:
            vols += sorted(ctx.volumes_used.get(t, {}))
    return list(dict.fromkeys(v for v in vols if v in ctx.idx.volumes))


@dataclass
class Demand:
    """What the workloads ask of one group or pool."""
    array: str
    kind: str
    name: str
    parts: list[tuple[str, float, Mix, str]] = field(default_factory=list)   # workload, IOPS, mix, how
    notes: list[str] = field(default_factory=list)

    @property
    def iops(self) -> float:
        return sum(p[1] for p in self.parts)

    @property
    def mix(self) -> Mix:
        return blend([(p[1], p[2]) for p in self.parts])

    @property
    def assumed(self) -> bool:
        return any(p[3].startswith("assumed") for p in self.parts)

    @property
    def ref(self) -> str:
        return container_ref(self.array, self.kind, self.name)


def demands(ctx: Any) -> dict[tuple[str, str, str], Demand]:
    """(array, group|pool, name) -> the demand of the workloads on it (module docstring)."""
    out: dict[tuple[str, str, str], Demand] = {}

    def at(vol_ref: str) -> Demand | None:
        a, vol = ctx.idx.volumes[vol_ref]
        if a.simulated:
            return None
        home = container_of(ctx.idx.scopes[a.id], vol)
        if home is None:
            return None
        key = (a.id, *home)
        return out.setdefault(key, Demand(*key))

    for w in ctx.bed.workloads:
        vols = workload_volumes(ctx, w)
        logs = [v for v in vols if LOG_PURPOSE in ctx.idx.volumes[v][1].purpose]
        data = [v for v in vols if v not in logs] or logs
        mix, how = workload_mix(w)
        if w.demand_iops and mix is not None:
            counts: dict[tuple[str, str, str], int] = defaultdict(int)
            homes: dict[tuple[str, str, str], Demand] = {}
            for v in data:
                d = at(v)
                if d is not None:
                    key = (d.array, d.kind, d.name)
                    counts[key] += 1
                    homes[key] = d
            for key, n in counts.items():      # by the volumes it loads there, not one share per home
                homes[key].parts.append((w.id, w.demand_iops * n / len(data), mix, how))
        log_iops = _number(w.parameters.get("log_iops"))
        if logs and data is not logs:
            for v in logs:
                d = at(v)
                if d is None:
                    continue
                if log_iops is not None:
                    d.parts.append((w.id, log_iops / len(logs), mix_of(0.0, 1.0),
                                    "its stated log_iops, sequential writes"))
                elif w.demand_iops:
                    note = (f"{w.id}: the log write rate is not stated (parameters.log_iops); its log volumes "
                            "carry no predicted demand")
                    if note not in d.notes:
                        d.notes.append(note)
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


# ====================================================================== devices to volumes

def volume_of_device(ctx: Any, host: str, device: str) -> str | None:
    """The ARRAY:VOLUME a host's disk device is: a volume the host (or VM) uses whose `drive`
    is the device's name ("sdb", "/dev/sdb") or its drive letter ("E:" in Windows' "1 E:")."""
    host_id = _host_id(ctx, host)
    if host_id is None:
        return None
    if host_id in ctx.idx.vms:
        vm = ctx.idx.vms[host_id]
        candidates = [d.volume for d in vm.disks if d.volume] + sorted(ctx.guest_volumes.get(host_id, ()))
    else:
        candidates = sorted(ctx.mapped.get(host_id, ())) + sorted(ctx.volumes_used.get(host_id, {}))
    names = _device_names(device)
    for ref in dict.fromkeys(candidates):
        hit = ctx.idx.volumes.get(ref)
        if hit is not None and hit[1].drive and _drive_names(hit[1].drive) & names:
            return ref
    return None


def _host_id(ctx: Any, host: str) -> str | None:
    if host in ctx.idx.components:
        return host
    lowered = host.lower()       # Windows counters name the computer in capitals
    return next((c for c in ctx.idx.components if c.lower() == lowered), None)


def _drive_names(drive: str) -> set[str]:
    d = drive.strip().rstrip("\\/").lower()
    return {d, d.rpartition("/")[2]} - {""}


def _device_names(device: str) -> set[str]:
    """"sdb" -> {sdb}; "/dev/sdb" -> {/dev/sdb, sdb}; "1 E:" -> {1 e:, e:}; "E:" -> {e:}."""
    d = device.strip().lower()
    out = {d, d.rpartition("/")[2]}
    out |= {part for part in d.split() if part.endswith(":")}
    return out - {""}
