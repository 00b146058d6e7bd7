"""CLU-001 .. CLU-003: quorum, shared-volume reachability, live-migration network."""
from __future__ import annotations

from collections.abc import Iterator

from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.registry import Hit, could_not_judge, hit, rule, unstated

_SRC = "Seed 000 (Node and Disk Majority with a Witness disk); seed 001 section 5 (disk witness on the SAN)"


@rule("CLU-001", "warning", "even node count without a witness",
      reason="With an even number of votes a network split leaves no majority and the whole cluster stops.",
      source=_SRC,
      hint="add a disk or file-share witness (node and disk majority)",
      unknown="whether {n} clusters have a witness")
def clu_001(ctx: Context) -> Iterator[Hit]:
    for c in ctx.bed.clusters:
        if len(c.nodes) % 2 == 0 and c.nodes and not c.witness and "witness" not in c.quorum.lower():
            unknown = unstated(c, f"cluster {c.id}", "witness", "quorum")
            if unknown:
                yield could_not_judge(c.id, f"whether cluster {c.id} has a witness", unknown)
            else:
                yield hit(c.id, f"cluster {c.id} has {len(c.nodes)} nodes and no witness")


@rule("CLU-002", "error", "cluster node cannot reach a shared volume",
      reason="Every node must reach every cluster shared volume (and the witness), or VMs cannot fail over to it.",
      source="Seed 000 R17 ('The single remaining ... R710 was then able to access both its own data and that of the "
             "unplugged' host)",
      hint="map the volume to every node (host group) and give each node paths to it",
      unknown="whether cluster nodes reach {n} shared volumes")
def clu_002(ctx: Context) -> Iterator[Hit]:
    for c in ctx.bed.clusters:
        vols = list(c.shared_volumes) + ([c.witness] if c.witness else [])
        for node in c.nodes:
            for v in vols:
                hit_ = ctx.volume(v)
                if hit_ is None or hit_[0].simulated:
                    continue
                what = "witness" if v == c.witness else "shared volume"
                unknown = ctx.reach_unstated(node, v) if not ctx.reaches(node, v) else []
                if unknown:
                    yield could_not_judge([c.id, node, v], f"whether {node} reaches {what} {v} of cluster {c.id}",
                                          unknown)
                elif not ctx.reaches(node, v):
                    yield hit([c.id, node, v], f"{node} cannot reach {what} {v} of cluster {c.id}",
                              cause=f"{node} cannot reach {{n}} shared volumes of cluster {c.id}", item=v)


@rule("CLU-003", "warning", "no dedicated live-migration network",
      reason="Live migration copies VM memory at full speed; on a shared network it starves other "
             "traffic or takes far longer.",
      source="Seed 001 HV-15 ('Use dedicated network adapters or guaranteed bandwidth for Live Migration networks')",
      hint="add a port with the live_migration role on each node, or name the cluster's live-migration network",
      unknown="whether {n} clusters have a live-migration network")
def clu_003(ctx: Context) -> Iterator[Hit]:
    for c in ctx.bed.clusters:
        if c.live_migration_networks:
            continue
        missing = []
        unknown: list[str] = []
        for node in c.nodes:
            s = ctx.idx.servers.get(node)
            if s is None:
                continue
            if not any("live_migration" in p.roles for _, p in ctx.idx.server_ports(s)):
                missing.append(node)
                unknown += [f"{ref} roles" for ref, p in ctx.idx.server_ports(s) if p.roles is NOT_STATED]
        if c.live_migration_networks is NOT_STATED:
            unknown.append(f"cluster {c.id} live-migration networks")
        if missing and unknown:
            yield could_not_judge([c.id, *missing], f"whether cluster {c.id} has a live-migration network", unknown)
        elif missing:
            yield hit([c.id, *missing], f"cluster {c.id} has no dedicated live-migration network "
                      f"(no live-migration port on {', '.join(missing)})")
