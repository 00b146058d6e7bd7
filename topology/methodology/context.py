"""What every domain reads besides the bed itself: the index, ordering ranks and derived relations.

One `BedContext` lives for one generation; values several domains share are built once in it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from topology.index import BedIndex
from topology.methodology.selection import Families, HostProfile, release_of
from topology.methodology.values import Values, interface_of
from topology.model import VM, Bed, PathSpec, Server
from topology.unknown import NOT_STATED, stated


def platform_of(component: Any) -> str:
    """How commands reach a server or VM: windows, linux, esxi, or "" when the bed does not say."""
    if isinstance(component, (Server, VM)):
        return release_of(component).family
    return ""


class BedContext:
    """What the domains share: the index, ranks for ordering, derived relations."""

    def __init__(self, bed: Bed, families: Families | None = None, configuration: Any = None):
        self.bed = bed
        # the configuration this procedure is for (topology.configurations.procedures), else None
        self.configuration = configuration
        self._phases: list | None = None
        self.idx = BedIndex(bed)
        self.families = families if families is not None else Families()
        self._profiles: dict[str, HostProfile] = {}
        self._host_paths: dict[str, list[tuple[str, PathSpec]]] | None = None
        # (host, initiator, target) -> the switches a path crosses, in order (derived paths only)
        self.path_switches: dict[tuple[str, str, str], tuple[str, ...]] = {}
        self._shared_values: dict[tuple, Values] = {}
        self._owners: dict | None = None
        self._scopes: list | None = None
        self._vnic_uses: dict[str, dict[str, list[tuple[Any, Any, Any]]]] | None = None
        self._shared_ids: set[int] = set()     # id() of each of them (they live as long as this context)
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

    def management_station(self) -> str:
        """The server a lab manages its arrays and switches from (role `management`), or ''."""
        return next((s.id for s in self.bed.servers if s.role == "management" and not s.simulated), "")

    def volume_owners(self) -> dict:
        """ARRAY:VOLUME -> `topology.volume_owner.VolumeOwner`: who formats each volume."""
        if self._owners is None:
            from topology.volume_owner import volume_owners
            self._owners = volume_owners(self.bed)
        return self._owners

    def storage_scopes(self) -> list:
        """The arrays, and the array groups that hold volumes themselves (`topology.volume_owner`)."""
        if self._scopes is None:
            from topology.volume_owner import storage_scopes
            self._scopes = storage_scopes(self.bed)
        return self._scopes

    @property
    def phases(self) -> list:
        """The test's phases in run order (`topology.methodology.run_timeline`)."""
        if self._phases is None:
            from topology.methodology.run_timeline import phases
            self._phases = phases(self.bed, self.idx, self.configuration.name if self.configuration else "")
        return self._phases

    def server_or_vm(self, cid: str) -> Any:
        return self.idx.servers.get(cid) or self.idx.vms.get(cid)

    def host_rank(self, cid: str) -> int:
        if cid in self.server_rank:
            return self.server_rank[cid]
        if cid in self.vm_rank:
            return len(self.server_rank) + self.vm_rank[cid]
        return len(self.server_rank) + len(self.vm_rank)

    def machine_group(self, cid: str) -> tuple:
        """Where a machine's storage steps sort: a Linux guest's (or one whose OS is not stated) with its
        VM's other steps in the VM section (its host's rank, then the VM's), any other machine's by its rank."""
        vm = self.idx.vms.get(cid)
        if vm is not None and release_of(vm).family in ("linux", ""):
            return (self.host_rank(vm.host), self.vm_rank[cid])
        return (self.host_rank(cid),)

    def primary_ip(self, s: Server) -> tuple[str, str] | None:
        for role in ("lan", "management"):
            for ad in s.adapters:
                for p in ad.ports:
                    if role in p.roles and (i := interface_of(p.address)):
                        return str(i.ip), f"{s.id}:{p.name}.address"
        if (i := interface_of(s.management_address)):
            return str(i.ip), f"{s.id}.management_address"
        return None

    def host_paths(self) -> dict[str, list[tuple[str, PathSpec]]]:
        """Host -> its storage paths as the drawing carries them (`topology.derived_paths`: the
        bed's `paths:` where it pins them, else worked out from cabling, subnets, zones and
        masking), each with the field it comes from: `paths[N]` for a pin, the initiator port
        for a derived path.  A pin the drawing cannot carry is left out (the validator says why)."""
        if self._host_paths is None:
            from topology.derived_paths import PathDerivation
            pins = {(p.host, p.initiator, p.target): i for i, p in enumerate(self.bed.paths)}
            ordered: list[tuple[tuple, str, PathSpec]] = []
            try:
                derived = PathDerivation(self.idx).paths
            except Exception:  # a bed the derivation cannot read (the validator says so): its pins as written
                derived = None
            if derived is None:
                ordered = [((0, i, 0), f"paths[{i}]", p) for i, p in enumerate(self.bed.paths)]
            for k, sp in enumerate(derived or ()):
                p = sp.spec
                self.path_switches[(p.host, p.initiator, p.target)] = tuple(h.element for h in sp.hops
                                                                            if h.kind == "switch")
                pin = pins.get((p.host, p.initiator, p.target)) if sp.pinned else None
                key = (0, pin, 0) if pin is not None else (1, 0, k)
                ordered.append((key, f"paths[{pin}]" if pin is not None else p.initiator, p))
            ordered.sort(key=lambda t: t[0])
            out: dict[str, list[tuple[str, PathSpec]]] = {}
            for _, src, p in ordered:
                out.setdefault(p.host, []).append((src, p))
            self._host_paths = out
        return self._host_paths

    def profile(self, cid: str) -> HostProfile:
        """The platform, transports and multipath family of the server or VM `cid`."""
        hit = self._profiles.get(cid)
        if hit is None:
            comp = self.server_or_vm(cid)
            if comp is None:
                hit = HostProfile(cid, release_of(None))
            else:
                kinds = {p.kind for _, p in self.host_paths().get(cid, ())} or self._port_transports(comp)
                mp = self.families.of("multipath", getattr(comp, "multipath", ""))
                hit = HostProfile(cid, release_of(comp), tuple(sorted(kinds)), mp.id if mp else "",
                                  mp.name if mp else "")
            self._profiles[cid] = hit
        return hit

    def _port_transports(self, comp: Any) -> set[str]:
        """The SAN protocols of a machine's own ports, for one with no path (nothing mapped yet)."""
        from topology.path_parts import port_protocol
        refs = [ref for ref, _ in self.idx.server_ports(comp)] if isinstance(comp, Server) else \
            [f"{comp.id}:{n.name}" for n in comp.nics]
        out = set()
        for ref in refs:
            pr = self.idx.port(ref)
            if pr is not None and (proto := port_protocol(pr)):
                out.add(proto)
        return out

    def vnic_uses(self) -> dict[str, dict[str, list[tuple[Any, Any, Any]]]]:
        """Host id -> 'sriov' / 'vhost_net' -> the (VM, vNIC, virtual switch) on it that take an SR-IOV
        virtual function (a vNIC on a virtual switch with `sriov: true`, unless its offloads say
        `sriov: false`) or are served by vhost-net (`offloads: {vhost_net: true}`)."""
        if self._vnic_uses is None:
            out: dict[str, dict[str, list[tuple[Any, Any, Any]]]] = {}
            for vm in self.bed.vms:
                for nic in vm.nics:
                    vs = self.vswitch_by_id.get(nic.vswitch)
                    host = vs.host if vs is not None else vm.host
                    uses = out.setdefault(host, {"sriov": [], "vhost_net": []})
                    if vs is not None and vs.sriov and nic.offloads.get("sriov") is not False:
                        uses["sriov"].append((vm, nic, vs))
                    elif nic.offloads.get("vhost_net") is True:
                        uses["vhost_net"].append((vm, nic, vs))
            self._vnic_uses = out
        return self._vnic_uses

    def cached(self, key: tuple, build: Callable[[], Values]) -> Values:
        """Values shared by several domains, built once per generation (read-only: callers copy)."""
        hit = self._shared_values.get(key)
        if hit is None:
            hit = self._shared_values[key] = build()
            self._shared_ids.add(id(hit))
        return hit

    def shared_value_ids(self) -> set[int]:
        """The ids of the dicts `cached` hands out (several items may hold one: never changed in place)."""
        return self._shared_ids

    def runners(self, w: Any) -> list[str]:
        """Where a workload's tool runs: its driver, else each target that is a machine."""
        if w.driver:
            return [w.driver]
        out = [t for t in w.targets if t in self.idx.servers or t in self.idx.vms]
        return out or [NOT_STATED if NOT_STATED in (w.driver, w.targets) else ""]
