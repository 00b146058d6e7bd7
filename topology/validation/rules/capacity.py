"""CAP-001 .. CAP-009: host memory and CPU, failover capacity, NUMA, VM storage placement, VM memory, virtual
disk formats a host can make."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from topology.capacity import volume_sizes
from topology.model import VM
from topology.os_release import parse_os
from topology.placement import memory_and_unstated, memory_needed, memory_not_stated, scenario_label, vm_memory
from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule, unstated
from topology.validation.vm_facts import vm_facts

_SEED001 = "Seed 001 (Dell EqualLogic / Hyper-V RA)"


def _host_loads(ctx: Context) -> Iterator[tuple[Any, str, list[VM]]]:
    """(scenario, host, VMs) for the placement judged: the bed's own, or a scenario's view, whose VMs
    already sit where the scenario puts them (the runner judges each scenario on its view)."""
    for host, vms in sorted(_loads(ctx).items()):
        if host in ctx.idx.servers:
            yield ctx.scenario, host, vms


def _loads(ctx: Context) -> dict[str, list[VM]]:
    """Host -> the VMs the judged placement runs on it (once per validation: three rules read it)."""
    hit = ctx.memo.get("host_loads")
    if hit is None:
        hit = ctx.memo["host_loads"] = ctx.placement.loads_as_drawn()
    return hit


@rule("CAP-001", "error", "VM memory exceeds host RAM",
      reason="Static VM memory is reserved up front: VMs beyond the host's RAM less the parent "
             "partition's reserve do not start.",
      source=f"{_SEED001} 4.5 ('22 VMs ... close to the physical boundary of 192GB'); seed 000 (36 of 48 GB degraded)",
      hint="move VMs to another host, reduce their memory, or add RAM",
      unknown="whether {n} hosts hold their VMs' memory")
def cap_001(ctx: Context) -> Iterator[Hit]:
    reserve = ctx.policy.memory_reserve_gb
    for sc, host, vms in _host_loads(ctx):
        s = ctx.idx.servers[host]
        if s.memory_gb is None:
            continue
        need, unknown = memory_and_unstated(vms)
        if s.memory_gb is not NOT_STATED and need > s.memory_gb - reserve:
            stated_part = f"the {len(vms) - len(unknown)} VMs whose memory is stated" if unknown else f"{len(vms)} VMs"
            yield hit([host, *(v.id for v in vms)],
                      f"{host}{scenario_label(sc)}: {stated_part} need {need:g} GB, host has {s.memory_gb:g} GB "
                      f"less {reserve:g} GB reserve",
                      cause=f"{host}'s {s.memory_gb:g} GB less the {reserve:g} GB reserve is too little for its VMs "
                            "({n} cases)", item=f"{need:g} GB for {stated_part}{scenario_label(sc)}")
        elif unknown or s.memory_gb is NOT_STATED:
            yield could_not_judge([host, *unknown], f"whether {host}{scenario_label(sc)} holds its VMs' memory",
                                  unstated(s, host, "memory_gb") + [f"{v} memory" for v in unknown])


@rule("CAP-002", "warning", "vCPU to hardware-thread ratio above policy",
      reason="Beyond the bed's overcommit policy, vCPUs wait for physical threads and the results "
             "measure CPU contention, not storage.",
      source="Seed 000 degraded state (22 vCPU on 16 threads); seed 001 (34 vCPU on 16 cores)",
      hint="move VMs, reduce vCPUs, or raise the policy's vcpu_per_thread with a reason",
      unknown="the vCPU ratio of {n} hosts' loads")
def cap_002(ctx: Context) -> Iterator[Hit]:
    limit = ctx.policy.vcpu_per_thread
    for sc, host, vms in _host_loads(ctx):
        s = ctx.idx.servers[host]
        if not vms:
            continue
        vcpus = [v.vcpu for v in vms if v.vcpu is not NOT_STATED]
        vcpu = sum(vcpus)
        cpu = s.cpu
        cores = cpu.cores if cpu is not None and type(cpu.cores_per_socket) is int else None
        if cpu is None or not cores:
            yield could_not_judge([host, *(v.id for v in vms)], f"the vCPU ratio of {host}{scenario_label(sc)}",
                                  [f"{host} CPU cores"], hint="state the host's sockets and cores per socket")
            continue
        per_core = cpu.threads_per_core if type(cpu.threads_per_core) is int else None
        # without threads per core the threads are at least the cores: a ratio within the policy per core
        # is within it per thread, anything more could not be judged (Hyper-Threading unknown)
        threads = cores * per_core if per_core else cores
        if vcpu / threads <= limit and len(vcpus) < len(vms):
            yield could_not_judge([host, *(v.id for v in vms if v.vcpu is NOT_STATED)],
                                  f"the vCPU ratio of {host}{scenario_label(sc)}",
                                  (f"{v.id} vCPU count" for v in vms if v.vcpu is NOT_STATED))
            continue
        ratio = vcpu / threads
        if ratio > limit and not per_core:
            yield could_not_judge([host], f"the vCPU ratio of {host}{scenario_label(sc)} ({vcpu} vCPU on {cores} "
                                  f"cores: {ratio:.2f} per core, policy {limit:g} per thread)",
                                  [f"{host} threads per core"])
        elif ratio > limit:
            yield hit(host, f"{host}{scenario_label(sc)}: {vcpu} vCPU on {threads} hardware threads "
                      f"({ratio:.2f} per thread, policy {limit:g})")


@rule("CAP-003", "error", "cluster cannot absorb the loss of a node",
      reason="After a node fails, its highly available VMs restart on the survivors only if the "
             "survivors have the memory for them.",
      source=f"{_SEED001} 5.3 ('neither of the two hosts can sustain the memory workload of both blocks of VMs in "
             "case of an outage'); seed 000 degraded state",
      hint="add a node, reduce VM memory, or keep fewer highly available VMs",
      unknown="whether {n} clusters absorb the loss of a node")
def cap_003(ctx: Context) -> Iterator[Hit]:
    loads = _loads(ctx)
    for c in ctx.bed.clusters:
        nodes = [n for n in c.nodes if n in ctx.idx.servers]
        if len(nodes) < 2:
            continue
        unknown = [u for n in nodes for u in unstated(ctx.idx.servers[n], n, "memory_gb")]
        unknown += [f"{v} memory" for n in nodes for v in memory_not_stated(loads.get(n, []))]
        if unknown:
            yield could_not_judge([c.id, *nodes], f"whether cluster {c.id} absorbs the loss of a node", unknown)
            continue
        for lost in nodes:
            outcome = ctx.placement.stranded_after_loss(nodes, lost, loads)
            if outcome is None:
                continue
            moving, stranded = outcome
            if stranded:
                need = memory_needed(stranded)
                yield hit([c.id, lost, *(v.id for v in stranded)],
                          f"with every VM on its home host, if {lost} fails, {len(stranded)} of its "
                          f"{len(moving)} highly available VMs ({need:g} GB) find no room on the "
                          f"surviving node(s) of {c.id}",
                          cause=f"with every VM on its home host, {c.id} cannot absorb the loss of {{n}} of its nodes",
                          item=f"{lost} ({len(stranded)} of its {len(moving)} highly available VMs, {need:g} GB, "
                               "find no room)")
    if ctx.scenario is not None and ctx.scenario.failed:
        yield from _no_room_in_scenario(ctx)


def _no_room_in_scenario(ctx: Context) -> Iterator[Hit]:
    """A scenario's failed hosts whose highly available VMs the survivors have no room for: the
    placement view shows them stopped, for the same reason (topology.placement_ops.outcome)."""
    from topology.placement_ops import outcome
    scenario = ctx.scenario
    if scenario is None:
        return
    result = outcome(ctx.drawn, scenario.id, ctx.drawn_placement)
    vms = {v.id: v for v in ctx.drawn.vms}
    by_host: dict[str, list[str]] = {}
    for vm_id, host in sorted(result.no_room.items()):
        by_host.setdefault(host, []).append(vm_id)
    clusters: dict[str, Any] = {}
    for c in ctx.drawn.clusters:
        for n in c.nodes:
            clusters.setdefault(n, c)      # as Placement.cluster_of: the first cluster naming the node
    for host, stranded in by_host.items():
        moved = [v for v, origin in result.failed_over.items() if origin == host]
        need = memory_needed(vms[v] for v in stranded)
        cluster = clusters[host].id
        yield hit([cluster, host, *stranded],
                  f"{host} failed{scenario_label(scenario)}: {len(stranded)} of its {len(stranded) + len(moved)} "
                  f"highly available VMs ({need:g} GB) find no room on the surviving node(s) of {cluster}")


@rule("CAP-004", "warning", "VM memory larger than a NUMA node",
      reason="Memory spanning NUMA nodes is reached across the interconnect, slower and less predictable.",
      source=f"{_SEED001} HV-02 ('size the VMs to have their memory resources entirely contained in a single "
             "NUMA node')",
      hint="keep the VM's memory within one NUMA node (host RAM / NUMA nodes)",
      unknown="whether the memory of {n} VMs fits a NUMA node")
def cap_004(ctx: Context) -> Iterator[Hit]:
    per_host: dict[str, Any] = {}   # host -> its NUMA node's memory (a number), or _JUDGE_EACH, or None: skip
    for vm in ctx.bed.vms:
        per_node = per_host.get(vm.host, _UNSEEN)
        if per_node is _UNSEEN:
            per_node = per_host[vm.host] = _numa_node_memory(ctx, vm.host)
        if per_node is None:
            continue
        memory = vm.memory_gb
        if per_node is not _JUDGE_EACH and memory.__class__ in (int, float):
            if memory > per_node:
                s = ctx.idx.servers[vm.host]
                yield hit([vm.id, s.id], f"{vm.id} has {memory:g} GB; a NUMA node of {s.id} has {per_node:g} GB",
                          cause=f"{{n}} VMs on {s.id} have more memory than its NUMA node's {per_node:g} GB",
                          item=f"{vm.id} ({memory:g} GB)")
            continue
        s = ctx.idx.servers[vm.host]
        if s.memory_gb is None:
            continue        # (not judged: _numa_node_memory said None)
        nodes = s.numa_nodes or (s.cpu.sockets if s.cpu else None)
        unknown = unstated(s, s.id, "memory_gb", "numa_nodes") + unstated(vm, vm.id, "memory_gb") \
            if NOT_STATED in (s.memory_gb, s.numa_nodes, vm.memory_gb) else ()
        if unknown:
            yield could_not_judge([vm.id, s.id], f"whether {vm.id}'s memory fits a NUMA node of {s.id}", unknown)
            continue
        node_gb = s.memory_gb / (nodes or 1)   # a stated node count: not stated was judged above
        if vm.memory_gb > node_gb:
            yield hit([vm.id, s.id], f"{vm.id} has {vm.memory_gb:g} GB; a NUMA node of {s.id} has {node_gb:g} GB")


_UNSEEN = object()
_JUDGE_EACH = object()


def _numa_node_memory(ctx: Context, host: str) -> Any:
    """What CAP-004 compares a VM on `host` with: the memory of one NUMA node; None when the host is
    not judged; _JUDGE_EACH when a value of the host is not stated (each VM is judged in full)."""
    s = ctx.idx.servers.get(host)
    if s is None or s.memory_gb is None:
        return None
    nodes = s.numa_nodes or (s.cpu.sockets if s.cpu else None)
    if not nodes and s.numa_nodes is not NOT_STATED:
        return None
    if NOT_STATED in (s.memory_gb, s.numa_nodes) or s.memory_gb.__class__ not in (int, float):
        return _JUDGE_EACH
    return s.memory_gb / (nodes or 1)


@rule("CAP-005", "error", "VM disk on a volume its host cannot reach",
      reason="A VM whose disk its host cannot reach does not start; a clustered VM must keep its disks "
             "on a cluster shared volume so any node can run it.",
      source="Seed 000 R1/R17 (VHDs on CSVs; the survivor reaches the failed host's data); seed 001 HV-14",
      hint="put the disk on a volume the host has paths to (a cluster shared volume for clustered VMs)",
      unknown="whether {n} VM disks are on volumes their hosts reach")
def cap_005(ctx: Context) -> Iterator[Hit]:
    volumes, cluster_of = ctx.idx.volumes, ctx.placement.cluster_of    # 40,000 disks: looked up, not called
    guests, reaches = ctx.guests, ctx.reaches
    reachable = ctx.reachable      # reaches(), without a call per disk
    clusters: dict[str, Any] = {}
    for vm in ctx.bed.vms:
        host = vm.host
        if not host:
            cluster = None
        else:
            cluster = clusters.get(host, _UNSEEN)
            if cluster is _UNSEEN:
                cluster = clusters[host] = cluster_of(host)
        shared = cluster.shared_volumes if vm.highly_available and cluster is not None else None
        for d in vm.disks:
            if not d.volume or d.local:
                continue
            if shared is None and (host, d.volume) in reachable and vm.id not in guests:
                continue    # its host reaches it, and no cluster asks for a shared volume: nothing to say
            hit_ = volumes.get(d.volume)
            if hit_ is None or hit_[0].simulated:
                continue
            user = ctx.vm_disk_user(vm, d.volume)
            reached = reaches(user, d.volume)
            unknown = ctx.reach_unstated(user, d.volume) if user and not reached else []
            if unknown:
                yield could_not_judge([vm.id, user, d.volume], f"whether {user} reaches {d.volume} (disk {d.name} "
                                      f"of {vm.id})", unknown)
            elif user and not reached:
                yield hit([vm.id, user, d.volume],
                          f"disk {d.name} of {vm.id} is on {d.volume}, which {user} cannot reach",
                          cause=f"{user} cannot reach the volumes of {{n}} of its VMs' disks",
                          item=f"{vm.id}:{d.name} on {d.volume}")
            if shared is None or cluster is None or user != vm.host:
                continue
            if shared is NOT_STATED:
                yield could_not_judge([vm.id, d.volume, cluster.id], f"whether disk {d.name} of clustered VM "
                                      f"{vm.id} is on a shared volume", [f"cluster {cluster.id} shared volumes"])
            elif d.volume not in shared:
                yield hit([vm.id, d.volume, cluster.id],
                          f"disk {d.name} of clustered VM {vm.id} is on {d.volume}, "
                          f"not a shared volume of {cluster.id}",
                          cause=f"{{n}} disks of clustered VMs are on {d.volume}, not a shared volume of {cluster.id}",
                          item=f"{vm.id}:{d.name}")


@rule("CAP-006", "error", "volume smaller than the virtual disks on it",
      reason="Fixed virtual disks take their full size at creation, and each VM also writes a memory "
             "image / saved-state file of its RAM size next to its configuration.",
      source=f"{_SEED001} HV-05 (520 GB of VHDX became 684 GB with the .BIN files, 700 GB reserve)",
      hint="grow the volume or move virtual disks elsewhere",
      unknown="whether the virtual disks on {n} volumes fit")
def cap_006(ctx: Context) -> Iterator[Hit]:
    sizes = volume_sizes(ctx.idx)
    # (plain dicts, looked up once per disk: 20,000 VMs)
    need: dict[str, float] = {}
    who: dict[str, list[str]] = {}
    unknown: dict[str, list[str]] = {}
    for vm in ctx.bed.vms:
        first = True    # the VM's configuration, memory image and saved state live with its first disk
        for d in vm.disks:
            volume = d.volume
            if not volume or d.local:
                first = False
                continue
            kind, size = d.type, d.size_gb
            if kind == "fixed" and size:
                need[volume] = need.get(volume, 0.0) + size
                names = who.get(volume)
                if names is None:
                    who[volume] = [vm.id]
                else:
                    names.append(vm.id)
            if kind is NOT_STATED or size is NOT_STATED:
                unknown.setdefault(volume, []).extend(
                    f"{vm.id} disk {d.name} {what}" for what, v in (("type", kind), ("size", size))
                    if v is NOT_STATED and (what == "type" or kind in ("fixed", NOT_STATED)))
            if first:
                first = False
                memory = vm.memory_gb
                if vm.dynamic_memory is None and memory is not NOT_STATED:
                    need[volume] = need.get(volume, 0.0) + memory
                    continue
                need[volume] = need.get(volume, 0.0) + vm_memory(vm)
                unknown.setdefault(volume, []).extend(f"{v} memory" for v in memory_not_stated([vm]))
    for vol in sorted(need.keys() | {v for v, names in unknown.items() if names}):
        n = need.get(vol, 0.0)
        size = sizes.get(vol)
        if size is None:
            hit_ = ctx.volume(vol)
            if hit_ is not None and hit_[1].size_gb is NOT_STATED:
                yield could_not_judge(vol, f"whether the virtual disks on {vol} fit", [f"{vol} size"])
            continue
        said_unknown = unknown.get(vol)
        if n <= size + 1e-6 and said_unknown:
            yield could_not_judge(vol, f"whether the virtual disks on {vol} fit", said_unknown)
        elif n > size + 1e-6:
            yield hit([vol, *dict.fromkeys(who.get(vol, ()))],
                      f"{vol} holds {n:g} GB of fixed virtual disks and VM memory files but is {size:g} GB")


@rule("CAP-007", "warning", "dynamically expanding disks for production VMs",
      reason="Dynamic disks fragment and stall while they grow; on a thin volume the two layers of "
             "over-allocation can run out of space together.",
      source=f"{_SEED001} HV-07 / HV-09; seed 000 ('We recommend fixed size VHDs for best performance')",
      hint="use fixed-size virtual disks for production VMs",
      unknown="whether {n} disks of production VMs are dynamically expanding")
def cap_007(ctx: Context) -> Iterator[Hit]:
    for vm in vm_facts(ctx).production:
        for d in vm.disks:
            if d.type is NOT_STATED and vm.production is True:
                yield could_not_judge(vm.id, f"whether production VM {vm.id} uses dynamic disks",
                                      [f"{vm.id} disk {d.name} type"])
            if d.type not in ("dynamic", "differencing"):
                continue
            hit_ = ctx.volume(d.volume) if d.volume else None
            thin = False
            if hit_ is not None:
                a, v = hit_
                scope = ctx.idx.scopes[a.id]
                pool = scope.pools.get(v.pool) if v.pool else None
                thin = v.provisioning == "thin" or (pool is not None and pool.provisioning == "thin")
            if thin:
                yield hit([vm.id, d.volume], f"{d.type} disk {d.name} of {vm.id} sits on thin volume {d.volume}",
                          severity="error", cause="{n} dynamically expanding disks sit on thin volumes",
                          item=f"{vm.id}:{d.name} on {d.volume}")
            else:
                yield hit(vm.id, f"production VM {vm.id} uses a {d.type} disk ({d.name})",
                          cause="{n} disks of production VMs are dynamically expanding", item=f"{vm.id}:{d.name}")


@rule("CAP-008", "error", "a VM with no memory",
      reason="A VM needs memory to start; a size of zero is a typing slip, and every memory rule that counts "
             "on it (host RAM, fail-over, NUMA) judges the wrong figure.",
      source=f"{_SEED001} Table 14 (memory per VM); seed 000 Appendix F (RAM per VM)",
      hint="give the VM its memory in GB as the report states it, or mark it not stated",
      unknown="the memory of {n} VMs")
def cap_008(ctx: Context) -> Iterator[Hit]:
    for vm in vm_facts(ctx).memory_unset:
        dm = vm.dynamic_memory
        if vm.memory_gb is NOT_STATED:
            yield could_not_judge(vm.id, f"the memory of {vm.id}", [f"{vm.id} memory"])
        elif not vm.memory_gb and not (dm is not None and (dm.startup_gb or dm.min_gb)):
            yield hit(vm.id, f"VM {vm.id} has 0 GB of memory")


@rule("CAP-009", "error", "a virtual disk format its host cannot make",
      reason="VHDX arrived with Windows Server 2012 (Hyper-V 3.0): Hyper-V on Windows Server 2008 and 2008 R2 "
             "makes and opens only VHD files, so a step that creates a VHDX there fails, and a bed that says so "
             "describes another release.",
      source="Issue 27 (the RHEV 3.0 / Hyper-V Server 2008 R2 comparison bed: every virtual disk written as "
             ".vhdx); Microsoft, Hyper-V in Windows Server 2012: the VHDX format",
      hint="state format: vhd for the VMs of a Hyper-V host below Windows Server 2012, or the host's newer "
           "Windows version if it runs one")
def cap_009(ctx: Context) -> Iterator[Hit]:
    hosts = {s.id: s for s in ctx.bed.servers}
    for vm in ctx.bed.vms:
        host = hosts.get(vm.host) if isinstance(vm.host, str) else None
        if host is None:
            continue
        release = parse_os(host.os or "", host.hypervisor or "", host.platform or "")
        if release.family != "windows" or not release.version or release.version >= (2012, 0):
            continue
        for d in vm.disks:
            if d.format == "vhdx":
                yield hit([vm.id, host.id], f"virtual disk {d.name} of {vm.id} is VHDX, which {host.id} "
                                            f"({release.describe()}) cannot make: VHDX exists from Windows Server "
                                            "2012", hint=f"state format: vhd for {vm.id}'s disk {d.name}")
