"""The cluster section's domains: clusters, the disks they take and their cluster shared volumes."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.registry import Item, domain
from topology.methodology.values import (
    Values,
    as_any,
    as_list,
    as_number,
    as_text,
    as_token,
    field_names,
    put,
    put_address,
)
from topology.unknown import NOT_STATED
from topology.vocabulary import humanize

_QUORUM_TEXT = {"node_majority": "Node Majority", "node_and_disk_majority": "Node and Disk Majority",
                "node_and_file_share_majority": "Node and File Share Majority",
                "disk_only": "No Majority: Disk Only", "cloud_witness": "Cloud Witness"}

CLUSTER_FIELDS = ("id", "nodes", "node_count", "first_node", "address", "ip", "prefix", "mask", "ignore_networks",
                  "ignore_network_names", "quorum", "quorum_text", "witness", "witness_name", "shared_volumes",
                  "disks", "lm_networks", "lm_network_names")
CLUSTER_NAMES = field_names("cluster", *CLUSTER_FIELDS)


def _cluster_values(ctx: BedContext, c: Any) -> Values:
    out: Values = {}
    r = c.id
    put(out, "cluster.id", as_text(c.id, f"{r}.id"))
    put(out, "cluster.nodes", as_list(c.nodes, f"{r}.nodes"))
    put(out, "cluster.node_count", as_number(len(c.nodes), f"{r}.nodes") if c.nodes else None)
    put(out, "cluster.first_node", as_text(c.nodes[0] if c.nodes else c.nodes if c.nodes is NOT_STATED else "",
                                         f"{r}.nodes"))
    put(out, "cluster.address", as_text(c.address, f"{r}.address"))
    put_address(out, "cluster", c.address, f"{r}.address")
    nets = [ctx.idx.networks.get(n) for n in c.excluded_networks]
    cidrs = [n.cidr for n in nets if n is not None and n.cidr]
    if nets and len(cidrs) == len(nets):  # every excluded network is known and has its CIDR
        put(out, "cluster.ignore_networks", as_list(cidrs, f"{r}.excluded_networks"))
    put(out, "cluster.ignore_network_names", as_list(c.excluded_networks, f"{r}.excluded_networks"))
    lm = [ctx.idx.networks.get(n) for n in c.live_migration_networks]
    lm_cidrs = [n.cidr for n in lm if n is not None and n.cidr]
    if lm and len(lm_cidrs) == len(lm):
        put(out, "cluster.lm_networks", as_list(lm_cidrs, f"{r}.live_migration_networks"))
    put(out, "cluster.lm_network_names", as_list(c.live_migration_networks, f"{r}.live_migration_networks"))
    put(out, "cluster.quorum", as_token(c.quorum, f"{r}.quorum"))
    put(out, "cluster.quorum_text", as_text(_QUORUM_TEXT.get(c.quorum, humanize(c.quorum)), f"{r}.quorum"))
    put(out, "cluster.witness", as_text(c.witness, f"{r}.witness"))
    put(out, "cluster.witness_name", as_text(c.witness.rpartition(":")[2], f"{r}.witness"))
    put(out, "cluster.shared_volumes", as_list([v.rpartition(":")[2] for v in c.shared_volumes],
                                               f"{r}.shared_volumes"))
    disks = ([c.witness] if c.witness and ":" in c.witness else []) + list(c.shared_volumes)
    put(out, "cluster.disks", as_list([v.rpartition(":")[2] for v in disks], f"{r}.shared_volumes"))
    for k, v in c.settings.items():
        put(out, f"cluster.settings.{k}", as_any(v, f"{r}.settings.{k}"))
    return out


def _cluster_platform(ctx: BedContext, c: Any) -> str:
    for n in c.nodes:
        s = ctx.idx.servers.get(n)
        if s is not None and platform_of(s):
            return platform_of(s)
    return ""


def _cluster_items(ctx: BedContext, sub: int, per_cluster: Callable[[Any, Values], Iterable[Values]]) -> list[Item]:
    """Items of each cluster, done on its first node: `per_cluster` gets a cluster and its values."""
    out = []
    for i, c in enumerate(ctx.bed.clusters):
        target, platform = c.nodes[0] if c.nodes else c.id, _cluster_platform(ctx, c)
        for j, vals in enumerate(per_cluster(c, _cluster_values(ctx, c))):
            out.append(Item(vals, target, platform, (i,), sub + j))
    return out


@domain("cluster", CLUSTER_NAMES, "each cluster (commands run on its first node)")
def _clusters(ctx: BedContext) -> list[Item]:
    return [Item(_cluster_values(ctx, c), c.nodes[0] if c.nodes else c.id, _cluster_platform(ctx, c), (i,), 0)
            for i, c in enumerate(ctx.bed.clusters)]


@domain("cluster_disk", CLUSTER_NAMES | field_names("disk", "name", "volume", "role", "lun_pattern"),
        "each disk a cluster takes (witness first, then shared volumes)")
def _cluster_disks(ctx: BedContext) -> list[Item]:
    def per(c: Any, base: Values):
        disks = ([(c.witness, "witness")] if c.witness and ":" in c.witness else []) + \
                [(v, "cluster shared volume") for v in c.shared_volumes]
        for ref, role in disks:
            vals = dict(base)
            put(vals, "disk.name", as_text(ref.rpartition(":")[2], f"{c.id}.shared_volumes"))
            put(vals, "disk.volume", as_text(ref, f"{c.id}.shared_volumes"))
            put(vals, "disk.role", as_text(role))
            if ref in ctx.lun:
                put(vals, "disk.lun_pattern", as_text(f"LUN {ctx.lun[ref]}$", f"{ref.partition(':')[0]}.mappings"))
            yield vals
    return _cluster_items(ctx, 100, per)


@domain("csv", CLUSTER_NAMES | field_names("csv", "name", "volume", "index", "path"), "each cluster shared volume")
def _csvs(ctx: BedContext) -> list[Item]:
    def per(c: Any, base: Values):
        for j, ref in enumerate(c.shared_volumes, 1):
            vals = dict(base)
            put(vals, "csv.name", as_text(ref.rpartition(":")[2], f"{c.id}.shared_volumes"))
            put(vals, "csv.volume", as_text(ref, f"{c.id}.shared_volumes"))
            put(vals, "csv.index", as_number(j))
            if _cluster_platform(ctx, c) == "windows":   # a Windows failover cluster's CSV folder
                put(vals, "csv.path", as_text(f"C:\\ClusterStorage\\Volume{j}", f"{c.id}.shared_volumes"))
            elif (vol := ctx.idx.volume(ref)) is not None and vol.drive:   # elsewhere: where the bed mounts it
                put(vals, "csv.path", as_text(vol.drive, f"{ref}.drive"))
            yield vals
    return _cluster_items(ctx, 201, per)   # the first shared volume is number 1

