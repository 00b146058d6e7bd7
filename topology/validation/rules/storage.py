"""RAID-001 .. RAID-009: disk groups, spares, placement of data, capacity and IOPS sizing."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from topology import capacity as cap
from topology import prediction
from topology.ids import container_ref, group_ref, slot_ref, volume_ref
from topology.index import ArrayScope, Disk
from topology.model import StorageArray, Volume
from topology.unknown import NOT_STATED, stated_sum
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule, unstated

_SEED002 = "Seed 002 (Hitachi AMS 2500 ESRP)"


def _scopes(ctx: Context) -> Iterator[tuple[StorageArray, ArrayScope]]:
    """Arrays whose layout is real: a simulated array (seed 002's replica) exists only as a setting."""
    for a in ctx.bed.arrays:
        if not a.simulated:
            yield a, ctx.idx.scopes[a.id]


@rule("RAID-001", "error", "RAID level impossible with the member count",
      reason="Each RAID level needs a minimum (and for mirrors an even) number of disks.",
      source="RAID definitions: RAID 1 = 2, RAID 10 even >= 4, RAID 5 >= 3, RAID 6 >= 4, RAID 50 >= 6, RAID 60 >= 8",
      hint="add or remove members, or choose a level that fits the disk count",
      unknown="whether {n} disk groups have enough members for their RAID level")
def raid_001(ctx: Context) -> Iterator[Hit]:
    for a, scope in _scopes(ctx):
        for g in a.disk_groups:
            counted = g.members is NOT_STATED and isinstance(g.disk_count, int)    # how many, not which slots
            unknown = unstated(g, f"group {g.name}", "raid", *(() if counted else ("members",)))
            if unknown:
                yield could_not_judge([a.id, group_ref(a.id, g.name)], f"whether disk group {g.name} on {a.id} has "
                                      "enough members for its RAID level", unknown)
                continue
            n = g.disk_count if counted and isinstance(g.disk_count, int) else sum(1 for _ in scope.members(g.members))
            why = cap.member_problem(g.raid, n)
            if why:
                yield hit([a.id, group_ref(a.id, g.name)], f"disk group {g.name} on {a.id} has {n} members: {why}")


def _group_disks(ctx: Context, scope: ArrayScope, group) -> list[Disk]:
    """scope.group_disks, once per validation (two rules read every group's 10,000 disks)."""
    memo = ctx.memo.setdefault("group_disks", {})
    hit_ = memo.get(id(group))
    if hit_ is None or hit_[0] is not group:
        hit_ = memo[id(group)] = (group, scope.group_disks(group))
    return hit_[1]


def _describe(d: Disk) -> tuple:
    return (d.spec.media, d.spec.rpm, d.spec.size_gb)


@rule("RAID-002", "warning", "disk group mixes media, speeds or sizes",
      reason="A group runs at the pace of its slowest disk and uses only the smallest disk's capacity.",
      source="Seed 000 (groups of one drive type only: 'Select SATA' for OS); RAID practice",
      hint="build the group from identical disks",
      unknown="whether {n} disk groups mix disks")
def raid_002(ctx: Context) -> Iterator[Hit]:
    for a, scope in _scopes(ctx):
        for g in a.disk_groups:
            disks = _group_disks(ctx, scope, g)
            # disks of one disk set are alike: each set is described once, in the order its disks come
            per_set: dict[int, list] = {}
            for d in disks:
                seen = per_set.get(id(d.spec))
                if seen is None:
                    per_set[id(d.spec)] = [d, 1]
                else:
                    seen[1] += 1
            kinds: Counter = Counter()
            in_doubt = set()
            for d, n in per_set.values():
                k = _describe(d)
                if NOT_STATED in k:
                    in_doubt.add(id(d.spec))
                else:
                    kinds[k] += n
            unknown = [f"{what} of the disks in {d.enclosure}:{d.spec.slots}" for d in disks
                       if id(d.spec) in in_doubt
                       for what, v in zip(("media", "speed", "size"), _describe(d), strict=True)
                       if v is NOT_STATED] if in_doubt else []
            # disks of one `disks:` line are alike by definition, whatever it leaves unstated
            if len(kinds) <= 1 and unknown and len(per_set) > 1:
                yield could_not_judge([a.id, group_ref(a.id, g.name)],
                                      f"whether disk group {g.name} on {a.id} mixes disks", unknown)
            elif len(kinds) > 1:
                parts = ", ".join(f"{n} x {sz:g} GB {m} {rpm or ''}".rstrip() for (m, rpm, sz), n in kinds.items())
                yield hit([a.id, group_ref(a.id, g.name)], f"disk group {g.name} on {a.id} mixes {parts}")


@rule("RAID-003", "warning", "no hot spare covers a disk group",
      reason="Without a spare of the same media and at least the same size, a failed disk leaves the "
             "group degraded until someone replaces it by hand.",
      source=f"Seed 001 B-03 ('RAID without spare drives ... not recommended'); {_SEED002} App. A (global hot spares)",
      hint="mark a free disk of the same media and at least the same size as a hot spare",
      unknown="whether hot spares cover the disk groups of {n} arrays")
def raid_003(ctx: Context) -> Iterator[Hit]:
    for a, scope in _scopes(ctx):
        if not a.disk_groups or a.simulated:
            continue
        spares = [scope.disks[k] for k in scope.members(a.spares) if k in scope.disks]
        uncovered = []
        unknown = unstated(a, a.id, "spares")
        for g in a.disk_groups:
            disks = _group_disks(ctx, scope, g)
            if not disks:
                continue
            if not spares and not unknown:
                uncovered.append(g)     # no spare covers nothing, whatever the disks' sizes and media
                continue
            sizes = [d.spec.size_gb for d in disks + spares if d.spec.size_gb is NOT_STATED or
                     d.spec.media is NOT_STATED]
            if sizes or unknown:
                unknown += [f"size or media of the disks of group {g.name} or its spares"] if sizes else []
                continue
            need = max(d.spec.size_gb for d in disks)
            media = {d.spec.media for d in disks}
            if not any(s.spec.media in media and s.spec.size_gb >= need for s in spares):
                uncovered.append(g)
        if unknown:
            yield could_not_judge(a.id, f"whether hot spares cover the disk groups of {a.id}", unknown)
        if uncovered:
            names = ", ".join(g.name for g in uncovered[:8]) + (f" and {len(uncovered) - 8} more"
                                                                 if len(uncovered) > 8 else "")
            what = "no hot spares" if not spares else f"{len(spares)} hot spare(s), none suitable for"
            yield hit([a.id, *(group_ref(a.id, g.name) for g in uncovered)],
                      f"{a.id} has {what} {len(uncovered)} disk group(s): {names}" if spares else
                      f"{a.id} has no hot spares: {len(uncovered)} disk group(s) uncovered ({names})",
                      cause=None if spares else "{n} arrays have no hot spares", item=f"{a.id} ({names})")


@rule("RAID-004", "warning", "disk, slot or port used twice, or a slot that does not exist",
      reason="A disk belongs to one group or is a spare; a member in a slot the enclosure does not have "
             "(or that holds no disk) is a typing error that would fail at deployment.",
      source="array configuration basics (seed 000 Figure 14, seed 002 Table 1 slot maps)",
      hint="correct the member ranges so each disk is used once and every slot exists")
def raid_004(ctx: Context) -> Iterator[Hit]:
    for a, scope in _scopes(ctx):
        used: dict[tuple[str, int], list[str]] = {}
        for owner, specs in [*((f"group {g.name}", g.members) for g in a.disk_groups), ("hot spares", a.spares)]:
            for key in scope.members(specs):
                owners = used.get(key)
                if owners is None:
                    used[key] = [owner]
                else:
                    owners.append(owner)
        # (most slots are fine: only the others are named and sorted)
        disks, enclosures = scope.disks, scope.enclosures
        slots = {name: e.slots for name, e in enclosures.items() if e.slots is not NOT_STATED}
        # the slots there is something to say of: used twice, or in an enclosure where they are empty or not there
        doubt = [(key, owners) for key, owners in used.items() if len(owners) > 1 or key[0] in enclosures and (
                 key not in disks or key[0] in slots and key[1] >= slots[key[0]])]
        for (enc, slot), owners in sorted(doubt):
            ref = slot_ref(a.id, enc, slot)
            e = scope.enclosures.get(enc)
            if e is not None and e.slots is not NOT_STATED and slot >= e.slots:
                yield hit([a.id, ref], f"{ref}: enclosure {enc} has slots 0-{e.slots - 1}; slot {slot} does not exist")
            elif e is not None and (enc, slot) not in scope.disks:
                yield hit([a.id, ref], f"{ref} is empty but used by {', '.join(owners)}")
            if len(owners) > 1:
                yield hit([a.id, ref], f"disk {ref} is used twice: {', '.join(owners)}")


_volume_home = prediction.volume_home


@rule("RAID-005", "error", "a database and its logs share spindles",
      reason="Logs are written sequentially and are the recovery copy of the database: on the same "
             "disks they lose their speed and both are lost with the group.  Database and log volumes of "
             "different applications may share a group; those of one VM or one workload may not.",
      source=f"Seed 000 ('two 146GB 15K ... SQL and Exchange logs'); {_SEED002} BP 6 ('a separate pool for the logs')",
      hint="put the database and log volumes of the VM or workload in different disk groups and pools")
def raid_005(ctx: Context) -> Iterator[Hit]:
    for a, _ in _scopes(ctx):
        for v in a.volumes:
            if "database" in v.purpose and "log" in v.purpose:
                yield hit(volume_ref(a.id, v.name), f"volume {a.id}:{v.name} holds both a database and its logs")
    yield from _disks_sharing_a_volume(ctx)
    dbset = {ref for ref, (_, v) in ctx.idx.volumes.items() if "database" in v.purpose}
    logset = {ref for ref, (_, v) in ctx.idx.volumes.items() if "log" in v.purpose} - dbset
    if not dbset or not logset:
        return
    seen: set[tuple[str, str]] = set()
    homes: dict[str, tuple[set[str], set[str]]] = {}     # an Exchange bed asks of each volume hundreds of times
    for owner, vols in _data_owners(ctx):
        dbs = [v for v in vols if v in dbset]
        logs = [v for v in vols if v in logset]
        if not dbs or not logs:
            continue
        near = _sharing_candidates(ctx, dbs, logs, homes)
        if not near:
            continue    # the usual case: an Exchange workload's 80 x 80 pairs are not walked
        for dv in dbs:
            for lv in logs:
                if (dv, lv) in seen or (dv, lv) not in near:
                    continue
                where = _shared_home(ctx, dv, lv, homes)
                if where:
                    seen.add((dv, lv))
                    yield hit([owner, dv, lv], f"database {dv} and log {lv} of {owner} share {where}")


def _disks_sharing_a_volume(ctx: Context) -> Iterator[Hit]:
    """A VM's database disk and its log disk (virtual disks whose purpose says so) on one volume: whatever
    the volume's own purpose, the two files share its spindles."""
    for vm in ctx.bed.vms:
        on: dict[str, tuple[list[str], list[str]]] = {}
        for d in vm.disks:
            if not d.purpose or not d.volume or d.local or type(d.purpose) is not list:
                continue    # (most disks say nothing of what they hold: looked at once, nothing built)
            dbs, logs = on.setdefault(d.volume, ([], []))
            if "database" in d.purpose:
                dbs.append(d.name)
            if "log" in d.purpose:
                logs.append(d.name)
        for vol, (dbs, logs) in on.items():
            if dbs and logs and ctx.volume(vol) is not None:
                yield hit([vm.id, vol], f"database disk {', '.join(dbs)} and log disk {', '.join(logs)} of {vm.id} "
                          f"are on one volume, {vol}", cause="{n} VMs keep their database and log disks on one volume",
                          item=f"{vm.id} on {vol}")


def _data_owners(ctx: Context) -> Iterator[tuple[str, list[str]]]:
    """(VM or workload, the volumes its data lives on): whose database and logs belong together."""
    for vm in ctx.bed.vms:
        vols = [d.volume for d in vm.disks if d.volume and not d.local]
        vols += sorted(ctx.guest_volumes.get(vm.id, ()))
        yield vm.id, [v for v in dict.fromkeys(vols) if v in ctx.idx.volumes]
    for w in ctx.bed.workloads:
        yield f"workload {w.id}", prediction.workload_volumes(ctx, w, data_only=False)


def _home_of(ctx: Context, ref: str, homes: dict[str, tuple[set[str], set[str]]]) -> tuple[set[str], set[str]]:
    if ref not in homes:
        arr, v = ctx.idx.volumes[ref]
        homes[ref] = _volume_home(ctx.idx.scopes[arr.id], v)
    return homes[ref]


def _sharing_candidates(ctx: Context, dbs: list[str], logs: list[str],
                        homes: dict[str, tuple[set[str], set[str]]]) -> set[tuple[str, str]]:
    """(database, log) pairs on one array that name a common group or pool: the only ones that can
    share spindles (an Exchange bed's workload has forty of each, each volume in a pool of fifty
    groups: the homes are compared as sets before any pair is listed)."""
    log_groups: dict[str, set[str]] = defaultdict(set)
    log_pools: dict[str, set[str]] = defaultdict(set)
    for lv in logs:
        arr = ctx.idx.volumes[lv][0].id
        groups, pools = _home_of(ctx, lv, homes)
        log_groups[arr] |= groups
        log_pools[arr] |= pools
    on: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for dv in dbs:
        arr = ctx.idx.volumes[dv][0].id
        if arr not in log_groups:
            continue
        groups, pools = _home_of(ctx, dv, homes)
        for g in groups & log_groups[arr]:
            on[(arr, "g", g)].append(dv)
        for p in pools & log_pools[arr]:
            on[(arr, "p", p)].append(dv)
    pairs: set[tuple[str, str]] = set()
    if not on:
        return pairs
    for lv in logs:
        arr = ctx.idx.volumes[lv][0].id
        groups, pools = _home_of(ctx, lv, homes)
        for key in [(arr, "g", g) for g in groups] + [(arr, "p", p) for p in pools]:
            pairs.update((dv, lv) for dv in on.get(key, ()))
    return pairs


def _shared_home(ctx: Context, a_ref: str, b_ref: str,
                 homes: dict[str, tuple[set[str], set[str]]]) -> str:
    """The disk group or pool two volumes of one array share ('' when none); `homes` keeps each
    volume's (groups, pools) once worked out."""
    arr_a, arr_b = ctx.idx.volumes[a_ref][0], ctx.idx.volumes[b_ref][0]
    if arr_a is not arr_b or arr_a.simulated:
        return ""
    (ga, pa), (gb, pb) = _home_of(ctx, a_ref, homes), _home_of(ctx, b_ref, homes)
    groups, pools = sorted(ga & gb), sorted(pa & pb)
    return f"disk group {groups[0]} on {arr_a.id}" if groups else f"pool {pools[0]} on {arr_a.id}" if pools else ""


@rule("RAID-006", "error", "active and replica copies share a pool or array",
      reason="A replica on the same disks or array as the active copy does not survive the failure it "
             "is there for.",
      source=f"Seed 001 ST-08; {_SEED002} BP 12 ('Isolate active databases and their replicated copies in "
             "separate pools or ... on a separate 2500')",
      hint="put the replica in another pool, better on another array")
def raid_006(ctx: Context) -> Iterator[Hit]:
    copies: dict[str, list[tuple[StorageArray, Volume]]] = defaultdict(list)
    for a in ctx.bed.arrays:
        for v in a.volumes:
            if v.dataset and v.copy:
                copies[v.dataset].append((a, v))
    pairs = []
    for vols in copies.values():
        for a1, v1 in vols:
            for a2, v2 in vols:
                if v1.copy == "active" and v2.copy == "replica":
                    pairs.append((a1, v1, a2, v2))
    for r in ctx.bed.replications:
        s, t = ctx.volume(r.source), ctx.volume(r.target)
        if s and t:
            pairs.append((s[0], s[1], t[0], t[1]))
    for a1, v1, a2, v2 in pairs:
        if a1 is not a2:
            continue
        s1 = ctx.idx.scopes[a1.id]
        shared_pool = _volume_home(s1, v1)[1] & _volume_home(s1, v2)[1]
        where = f"pool {sorted(shared_pool)[0]}" if shared_pool else "array"
        yield hit([volume_ref(a1.id, v1.name), volume_ref(a2.id, v2.name)],
                  f"active {a1.id}:{v1.name} and replica {a2.id}:{v2.name} share the {where} {a1.id}"
                  if not shared_pool else
                  f"active {a1.id}:{v1.name} and replica {a2.id}:{v2.name} share {where} on {a1.id}")


@rule("RAID-007", "error", "volumes exceed usable capacity",
      reason="Thick volumes larger than the group or pool cannot be created; thin volumes beyond it "
             "fail writes when the pool fills up.",
      source=f"{_SEED002} R24 (sum of DP-VOL sizes against pool capacity); seed 001 ST-06 (thin provisioning)",
      hint="shrink the volumes, add disks, or use thin provisioning with monitoring",
      unknown="whether the volumes on {n} disk groups or pools fit")
def raid_007(ctx: Context) -> Iterator[Hit]:
    groups = [(a, ctx.idx.scopes[a.id]) for a in ctx.idx.group_views.values()]    # pools spanning members
    for a, scope in [*_scopes(ctx), *groups]:
        for kind, name, vols in cap.containers(a):
            total = cap.container_usable(scope, kind, name)
            sized = stated_sum(v.size_gb for v in vols)
            unknown = cap.unstated_inputs(scope, kind, name) + [f"{a.id}:{v.name} size" for v in vols
                                                                if v.size_gb is NOT_STATED]
            if unknown and (total <= 0 or sized <= total):
                yield could_not_judge([a.id, container_ref(a.id, kind, name)],
                                      f"whether the volumes on {kind} {name} of {a.id} fit", unknown)
                continue
            if total <= 0 or sized <= total:
                if [v for v in vols if v.size_gb is None and v.remainder] and sized >= total > 0:
                    yield hit([a.id, container_ref(a.id, kind, name)],
                              f"{kind} {name} on {a.id} has no space left for its remainder volumes")
                continue
            pool = scope.pools.get(name) if kind == "pool" else None
            thin = (pool is not None and pool.provisioning == "thin") or all(v.provisioning == "thin" for v in vols)
            ref = container_ref(a.id, kind, name)
            if not thin and (pool is not None and pool.provisioning is NOT_STATED
                             or any(v.provisioning is NOT_STATED for v in vols)):
                yield hit([a.id, ref], f"volumes on {kind} {name} of {a.id} need {sized:g} GB; it has {total:g} GB "
                          "usable (thin or thick: provisioning not stated)", severity="warning")
            elif thin:
                yield hit([a.id, ref], f"thin {kind} {name} on {a.id} is overcommitted {sized / total:.2f}:1 "
                          f"({sized:g} GB of volumes on {total:g} GB)", severity="warning",
                          hint="watch the pool's free space with an alarm, or add capacity")
            else:
                yield hit([a.id, ref], f"volumes on {kind} {name} of {a.id} need {sized:g} GB; "
                          f"it has {total:g} GB usable")


@rule("RAID-008", "warning", "ownership unbalanced across controllers",
      reason="With all groups or volumes on one controller, that controller does all the work and "
             "the other idles.",
      source="Seed 000 Figure 14 (groups owned alternately by controller 0 and 1); seed 002 (8/8 primary paths)",
      hint="assign owners so each active controller carries a similar share",
      unknown="whether ownership is balanced across controllers on {n} arrays")
def raid_008(ctx: Context) -> Iterator[Hit]:
    for a, _ in _scopes(ctx):
        active = [c.name for c in a.controllers if c.mode != "standby"]
        if len(active) < 2:
            continue
        modes = [f"controller {c.name} mode" for c in a.controllers if c.mode is NOT_STATED]
        # groups' owners decide when any group has one (stated or not); else the volumes'
        what, items = ("group", a.disk_groups) if any(g.owner for g in a.disk_groups) or \
            any(g.owner is NOT_STATED for g in a.disk_groups) else ("volume", a.volumes)
        owned = Counter(x.owner for x in items if x.owner)
        unknown = [f"{what} {x.name} owner" for x in items if x.owner is NOT_STATED]
        if modes:
            yield could_not_judge(a.id, f"whether ownership on {a.id} is balanced across controllers",
                                  modes + unknown)
            continue
        verdicts = _ownership_verdicts(owned, active, len(unknown))
        if verdicts == {False} or not verdicts:
            continue
        if verdicts == {True, False}:
            yield could_not_judge(a.id, f"whether ownership on {a.id} is balanced across controllers", unknown)
            continue
        detail = ", ".join(f"{c}: {owned.get(c, 0)}" for c in active)
        whatever = f"; whatever the owner{'s' if len(unknown) > 1 else ''} not stated ({', '.join(unknown)})" \
            if unknown else ""
        yield hit(a.id, f"ownership on {a.id} is unbalanced ({detail}){whatever}")


def _unbalanced(owned: Counter, active: list[str]) -> bool | None:
    """Whether owners are unbalanced across the active controllers (None: too few to say)."""
    if sum(owned.values()) < 2:
        return None
    counts = [owned.get(c, 0) for c in active]
    return max(counts) - min(counts) > 1 and max(counts) >= 2 * max(min(counts), 1)


def _ownership_verdicts(owned: Counter, active: list[str], unknown: int) -> set[bool]:
    """RAID-008's verdict for every way the owners not stated could fall on the active controllers: the
    stated owners decide alone when every way gives the same answer.  (Beyond a few hundred ways the
    unknowns are too many to settle it: both answers.)"""
    from itertools import combinations_with_replacement
    if unknown and len(active) ** min(unknown, 8) > 4096:
        return {True, False}
    out: set[bool] = set()
    for placed in combinations_with_replacement(active, unknown):
        verdict = _unbalanced(owned + Counter(placed), active)
        if verdict is not None:
            out.add(verdict)
    return out


@rule("RAID-009", "warning", "predicted IOPS below the workload's demand",
      reason="Back-end IOPS are set by the spindles and the RAID write penalty: a group that cannot "
             "deliver the demand shows as latency above the thresholds.",
      source=f"{_SEED002} App. A / R10-R11 (write penalty RAID-5 = 4, RAID-1+0 = 2, RAID-6 = 6; "
             "size for performance first)",
      hint="add spindles, use a RAID level with a smaller write penalty, or faster media",
      unknown="whether storage delivers the IOPS asked of it in {n} cases")
def raid_009(ctx: Context) -> Iterator[Hit]:
    for w in ctx.bed.workloads:
        if w.demand_iops is NOT_STATED or w.demand_iops and prediction.workload_mix(w)[0] is None:
            yield could_not_judge(w.id, f"whether storage delivers the IOPS of workload {w.id}",
                                  unstated(w, w.id, "demand_iops") or [f"{w.id} read share"])
    for (array_id, kind, name), need in sorted(prediction.demands(ctx).items()):
        if not need.iops:
            continue
        scope = ctx.idx.scopes[array_id]
        unknown = prediction.unknown_parts(scope, kind, name)
        if unknown:
            yield could_not_judge([array_id, need.ref], f"whether {kind} {name} on {array_id} delivers "
                                                        f"{need.iops:.0f} IOPS", unknown)
            continue
        mix = need.mix
        supply = prediction.predict(scope, kind, name, mix)
        if supply is not None and supply.iops < need.iops:
            assumed = " (an assumed mix: the workload states none)" if need.assumed else ""
            yield hit([array_id, need.ref],
                      f"{kind} {name} on {array_id} can deliver about {supply.iops:.0f} IOPS at {mix.text()}"
                      f"{assumed}; its workloads need {need.iops:.0f}")
