"""WL-001, WL-002: every workload targets something that exists and can reach its storage."""
from __future__ import annotations

from collections.abc import Iterator

from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule, unstated


@rule("WL-001", "error", "workload target missing or unreachable",
      reason="A load aimed at a component that is not in the bed, or at a volume its machine cannot "
             "reach, measures nothing.",
      source="Seed 000 Appendix F (each load tool runs on a named VM or client against its own data)",
      hint="point the workload at an existing VM, server or volume its driver can reach")
def wl_001(ctx: Context) -> Iterator[Hit]:
    idx = ctx.idx
    for w in ctx.bed.workloads:
        for t in w.targets:
            if t not in idx.components and t not in idx.volumes:
                yield hit(w.id, f"workload {w.id} targets {t!r}, which is not in the bed")
                continue
            if t in idx.volumes:
                hit_ = ctx.volume(t)
                if hit_ is not None and hit_[0].simulated:
                    continue
                users = [_reacher(ctx, w.driver, t)] if w.driver else \
                    [c for c, vols in ctx.volumes_used.items() if t in vols]
                if not users or any(ctx.reaches(u, t) for u in users):
                    continue
                # what the sources leave unstated matters only where no user reaches the volume
                unknown = [x for u in users for x in ctx.reach_unstated(u, t)] + unstated(w, w.id, "driver")
                if unknown:
                    yield could_not_judge([w.id, t, *users], f"whether workload {w.id} reaches volume {t}", unknown)
                else:
                    yield hit([w.id, t, *users], f"workload {w.id}: {', '.join(users)} cannot reach volume {t}")
            elif t in idx.vms:
                vm = idx.vms[t]
                if vm.host is NOT_STATED:
                    yield could_not_judge([w.id, t], f"where VM {t} (a target of {w.id}) runs", [f"{t} host"])
                elif not vm.host:
                    yield hit([w.id, t], f"workload {w.id} targets VM {t}, which is placed on no host")
        if w.driver and w.driver not in idx.components:
            yield hit(w.id, f"workload {w.id} is driven from {w.driver!r}, which is not in the bed")


def _reacher(ctx: Context, driver: str, volume: str) -> str:
    """Who must reach `volume` for a load `driver` runs: a VM whose virtual disk sits on the volume
    through its hypervisor (a datastore, a CSV) reaches it through its host; anyone else itself."""
    vm = ctx.idx.vms.get(driver)
    if vm is not None and any(d.volume == volume and not d.local for d in vm.disks):
        return ctx.vm_disk_user(vm, volume) or driver
    return driver


@rule("WL-002", "error", "a workload with no target",
      reason="A load with nothing to run against measures nothing: the procedure cannot say where the tool "
             "runs or which data it reads and writes.",
      source="Seed 000 Appendix F (each load tool runs on a named VM or client against its own data)",
      hint="name the VMs, servers or volumes the workload runs against (targets)")
def wl_002(ctx: Context) -> Iterator[Hit]:
    for w in ctx.bed.workloads:
        if w.targets is NOT_STATED:
            yield could_not_judge(w.id, f"what workload {w.id} runs against", [f"{w.id} targets"])
        elif not w.targets:
            yield hit(w.id, f"workload {w.id} ({w.tool or 'no tool'}) has no target")
