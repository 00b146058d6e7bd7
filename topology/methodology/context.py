"""What every domain reads besides the bed itself: the index, ordering ranks and derived relations.

One `BedContext` lives for one generation; values several domains share are built once in it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from topology.index import BedIndex
from topology.methodology.values import Values, interface_of
from topology.model import VM, Bed, Server
from topology.unknown import NOT_STATED, stated

_WINDOWS = re.compile(r"windows|hyper-v", re.I)
_LINUX = re.compile(r"linux|kvm|rhel|red hat|centos|rocky|alma|ubuntu|debian|suse|sles|fedora|oracle linux|proxmox",
                    re.I)
_ESXI = re.compile(r"esx|vsphere|vmware", re.I)


def platform_of(component: Any) -> str:
    """How commands reach a server or VM: windows, linux, esxi, or "" when the bed does not say."""
    if isinstance(component, Server):
        if component.platform:
            return component.platform
        text = f"{component.hypervisor} {component.os}"
    elif isinstance(component, VM):
        text = component.guest_os or ""
    else:
        return ""
    return _platform_from_text(text)


@lru_cache(maxsize=4096)
def _platform_from_text(text: str) -> str:
    if _ESXI.search(text):
        return "esxi"
    if _WINDOWS.search(text):
        return "windows"
    if _LINUX.search(text):
        return "linux"
    return ""


class BedContext:
    """What the domains share: the index, ranks for ordering, derived relations."""

    def __init__(self, bed: Bed):
        self.bed = bed
        self.idx = BedIndex(bed)
        self._shared_values: dict[tuple, Values] = {}
        self.bed_domain = bed.bed.domain if bed.bed is not None else ""
        self.server_rank = {s.id: i for i, s in enumerate(bed.servers)}
        self.vm_rank = {v.id: i for i, v in enumerate(bed.vms)}
        self.cluster_of: dict[str, Any] = {}
        for c in bed.clusters:
            for n in c.nodes:
                self.cluster_of.setdefault(n, c)
        self.vswitch_by_id = {vs.id: vs for vs in bed.virtual_switches}
        self.vswitch_of_port: dict[str, Any] = {}
        for vs in bed.virtual_switches:
            for up in vs.uplinks:
                self.vswitch_of_port.setdefault(up, vs)
        self.dc_servers = [s for s in bed.servers if self.is_dc(s)]
        self.csv_path: dict[str, tuple[str, int, Any]] = {}
        for c in bed.clusters:
            for i, v in enumerate(c.shared_volumes, 1):
                self.csv_path.setdefault(v, (f"C:\\ClusterStorage\\Volume{i}", i, c))
        # LUN of each mapped volume: the bed's, else the next free number for its host (group), the
        # way the array assigns them; `stated` tells prose (only the bed's) from commands (both)
        self.lun: dict[str, int] = {}
        self.lun_stated: set[str] = set()
        self.lun_not_stated: set[str] = set()     # marked `not stated`: prose says so
        for a in bed.arrays:
            per_target: dict[str, int] = {}
            for m in a.mappings:
                next_free = per_target.get(m.to, 0)
                given = stated(m.lun)
                lun = given if given is not None else next_free
                per_target[m.to] = max(next_free, lun) + 1
                ref = f"{a.id}:{m.volume}"
                if ref not in self.lun:
                    self.lun[ref] = lun
                    if given is not None:
                        self.lun_stated.add(ref)
                    elif m.lun is NOT_STATED:
                        self.lun_not_stated.add(ref)

    @staticmethod
    def is_dc(s: Server) -> bool:
        text = " ".join(str(x) for x in s.software) + " " + " ".join(str(k) for k in s.settings)
        return bool(re.search(r"active directory|domain controller|dcpromo|forest", text, re.I))

    def server_or_vm(self, cid: str) -> Any:
        return self.idx.servers.get(cid) or self.idx.vms.get(cid)

    def host_rank(self, cid: str) -> int:
        if cid in self.server_rank:
            return self.server_rank[cid]
        if cid in self.vm_rank:
            return len(self.server_rank) + self.vm_rank[cid]
        return len(self.server_rank) + len(self.vm_rank)

    def primary_ip(self, s: Server) -> tuple[str, str] | None:
        for role in ("lan", "management"):
            for ad in s.adapters:
                for p in ad.ports:
                    if role in p.roles and (i := interface_of(p.address)):
                        return str(i.ip), f"{s.id}:{p.name}.address"
        if (i := interface_of(s.management_address)):
            return str(i.ip), f"{s.id}.management_address"
        return None

    def cached(self, key: tuple, build: Callable[[], Values]) -> Values:
        """Values shared by several domains, built once per generation (read-only: callers copy)."""
        hit = self._shared_values.get(key)
        if hit is None:
            hit = self._shared_values[key] = build()
        return hit

    def runners(self, w: Any) -> list[str]:
        """Where a workload's tool runs: its driver, else each target that is a machine."""
        if w.driver:
            return [w.driver]
        out = [t for t in w.targets if t in self.idx.servers or t in self.idx.vms]
        return out or [NOT_STATED if NOT_STATED in (w.driver, w.targets) else ""]
