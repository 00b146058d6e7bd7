"""The checks one storage path must pass, hop by hop, as a lab engineer would make them.

Each check answers with None (the hop carries the path) or the sentence that says why it
does not.  `topology.derived_paths` runs them over every initiator/target pair to find the
paths the drawing carries, and over the bed's pinned `paths:` to say which hop fails.
A value the bed does not state (no address, no VLAN) is not held against a path: only two
stated values that disagree are.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from topology.index import BedIndex
from topology.model import StorageArray
from topology.unknown import NOT_STATED


@lru_cache(maxsize=65536)
def iface(address: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    if not address:
        return None
    try:
        return ipaddress.ip_interface(address)
    except ValueError:
        return None


# ------------------------------------------------------------------------------ masking

@dataclass(frozen=True, slots=True)
class Presented:
    """A volume an array presents to one host: its LUN and the array ports it is offered on."""
    volume: str                  # ARRAY:VOLUME
    array: str
    lun: int | None
    ports: frozenset[str]        # ARRAY:PORT refs; empty = every port
    via: str                     # the array host or host group the mapping names


class Masking:
    """The arrays' LUN masking: which component sees which volume, on which ports, as which LUN."""

    def __init__(self, idx: BedIndex):
        self.idx = idx
        self.presented: dict[str, dict[str, Presented]] = {}
        self.initiators: dict[tuple[str, str], frozenset[str]] = {}   # (array, component) -> allowed ports
        for a in idx.bed.arrays:
            self._array(a)
        for a in idx.group_views.values():
            self._array(a)

    def _array(self, a: StorageArray) -> None:
        scope = self.idx.scopes[a.id]
        reach: dict[str, list[str]] = {}
        for h in a.hosts:
            if not h.server:
                continue
            reach.setdefault(h.name, []).append(h.server)
            if h.host_group:
                reach.setdefault(h.host_group, []).append(h.server)
            allowed = self._registered_ports(h.initiators)
            # a WWPN the array registers is a port identity: when none of them is a port of the host,
            # the array lets none of its ports log in (an IQN names the host's whole initiator instead)
            if allowed or any(_looks_like_wwpn(text) for text in h.initiators):
                key = (a.id, h.server)
                self.initiators[key] = self.initiators.get(key, frozenset()) | allowed
        for m in a.mappings:
            if m.volume not in scope.volumes:
                continue
            ref = f"{a.id}:{m.volume}"
            ports = frozenset(f"{a.id}:{p}" for p in m.ports) if scope.group is None else \
                self._member_ports(a.id, scope.volumes[m.volume].pool)
            # hosts the mapping reaches alike share one Presented (derived_paths plans the paths of
            # hosts with the same presentations once)
            shared: Presented | None = None
            for comp in reach.get(m.to, ()):
                seen = self.presented.setdefault(comp, {})
                old = seen.get(ref)
                if old is None:
                    if shared is None:
                        shared = Presented(ref, a.id, m.lun, ports, m.to)
                    seen[ref] = shared
                    continue
                # mapped twice (host and its group): offered on both sets of ports (and so on to the
                # hosts after this one)
                ports = frozenset() if not old.ports or not ports else old.ports | ports
                seen[ref] = Presented(ref, a.id, old.lun, ports, m.to)
                shared = None

    def _member_ports(self, group: str, pool: str) -> frozenset[str]:
        """A group volume is offered on the ports of its pool's members (where the group redirects)."""
        return frozenset(ref for a in self.idx.group_members(group, pool) for ref, _, _ in self.idx.array_ports(a))

    def _registered_ports(self, initiators: list[str]) -> frozenset[str]:
        """The host ports an array host's initiator list names (DEVICE:PORT or a port's WWPN);
        IQNs cannot be tied to a port, so a list of IQNs restricts nothing."""
        out: set[str] = set()
        for text in initiators:
            pr = self.idx.port(text) if ":" in text and not text.lower().startswith("iqn.") else None
            if pr is not None:
                out.add(pr.ref)
                continue
            ref = self._wwpn_ports().get(text.lower().replace(":", ""))
            if ref:
                out.add(ref)
        return frozenset(out)

    def _wwpn_ports(self) -> dict[str, str]:
        table = getattr(self, "_wwpns", None)
        if table is None:
            table = {pr.port.wwpn.lower().replace(":", ""): ref for ref, pr in self.idx.ports.items()
                     if getattr(pr.port, "wwpn", "")}
            self._wwpns = table
        return table

    def of(self, component: str) -> dict[str, Presented]:
        return self.presented.get(component, {})

    def why_not(self, component: str, volume: str) -> str:
        """Why the array does not present `volume` to `component` (the masking hop that fails)."""
        array_id = volume.partition(":")[0]
        array = self.idx.arrays.get(array_id)
        if array is None:
            return f"{volume} is not a volume of any array in this configuration"
        names = [h for h in array.hosts if h.server == component]
        if not names:
            return f"{volume} is not mapped to {component}: {array_id} has no host entry for {component}"
        name = volume.partition(":")[2]
        targets = [m.to for m in array.mappings if m.volume == name]
        if not targets:
            return f"{volume} is not mapped to {component}: {array_id} maps {name} to no host or host group"
        groups = {h.host_group for h in names if h.host_group}
        shown = ", ".join(sorted(set(targets)))
        if groups:
            return (f"{volume} is not mapped to {component}: it is mapped to {shown}; {component} is host "
                    f"{names[0].name} in host group {', '.join(sorted(groups))}")
        return (f"{volume} is not mapped to {component}: it is mapped to {shown}; {component} is host "
                f"{names[0].name} in no host group")


# ------------------------------------------------------------------------------ networks

def subnet_key(address: str) -> tuple[int, int, int] | None:
    """(IP version, network number, prefix length) of 'A.B.C.D/N'; two ports share a subnet when
    their keys are equal.  IPv4 is parsed by hand: ipaddress objects for thousands of ports
    cost more than the rest of the path derivation; and remembered, since live validation
    asks again about the same addresses after every edit."""
    if type(address) is str:
        return _subnet_key_of_text(address)
    return _subnet_key(address)


def _subnet_key(address: str) -> tuple[int, int, int] | None:
    if not address:
        return None
    addr, _, plen = address.partition("/")
    parts = addr.split(".")
    if len(parts) == 4 and (plen.isdigit() or not plen):
        try:
            octets = [int(x) for x in parts]
        except ValueError:
            return None
        prefix = int(plen) if plen else 32
        if prefix > 32 or min(octets) < 0 or max(octets) > 255:
            return None
        n = octets[0] << 24 | octets[1] << 16 | octets[2] << 8 | octets[3]
        return (4, n >> (32 - prefix), prefix)
    ip = iface(address)
    if ip is None:
        return None
    net = ip.network
    return (ip.version, int(net.network_address) >> (net.max_prefixlen - net.prefixlen), net.prefixlen)


_subnet_key_of_text = lru_cache(maxsize=1 << 16)(_subnet_key)


@dataclass(slots=True)
class Layer3:
    """What a port states about its subnet and VLAN (None / '' where the bed is silent)."""
    address: str
    subnet: tuple[int, int, int] | None
    network: str                    # the network id the port names
    vlan: int | None


def layer3(idx: BedIndex, port: Any) -> Layer3:
    address = getattr(port, "address", "") or ""
    network = getattr(port, "network", "") or ""
    vlan = getattr(port, "vlan", None)
    if vlan is None and network:
        net = idx.networks.get(network)
        vlan = net.vlan if net is not None else None
    if vlan is NOT_STATED:   # unknown, so not held against a path
        vlan = None
    return Layer3(address, subnet_key(address), network, vlan)


def _network_of(idx: BedIndex, l3: Layer3) -> str:
    """The network id a port is on: its own, else the network whose CIDR holds its address."""
    if l3.network or l3.subnet is None:
        return l3.network
    ip = iface(l3.address)
    if ip is None:
        return ""
    for net in idx.bed.networks:
        cidr = _network_cidr(net.cidr)
        if cidr is not None and ip.version == cidr.version and ip.ip in cidr:
            return net.id
    return ""


@lru_cache(maxsize=4096)
def _network_cidr(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(cidr, strict=False) if cidr else None
    except ValueError:
        return None


def _routed(idx: BedIndex, a: str, b: str) -> bool:
    na, nb = idx.networks.get(a), idx.networks.get(b)
    return bool(na is not None and b in na.routed_to or nb is not None and a in nb.routed_to)


def network_gap(idx: BedIndex, ini_ref: str, a: Layer3, tgt_ref: str, b: Layer3) -> str | None:
    """Why an iSCSI initiator cannot reach a portal at layer 3 (subnet and VLAN), or None."""
    same = None
    if a.subnet is not None and b.subnet is not None:
        same = a.subnet == b.subnet
    if same is not True:
        na, nb = _network_of(idx, a), _network_of(idx, b)
        if same is None and na and nb:
            same = na == nb
        if same is False:
            if na and nb and _routed(idx, na, nb):
                return None   # a declared route: VLANs may differ across a router
            return (f"{ini_ref} ({a.address or na}) and {tgt_ref} ({b.address or nb}) are on different "
                    f"subnets and no route between them is declared")
    if a.vlan is not None and b.vlan is not None and a.vlan != b.vlan:
        return f"{ini_ref} is on VLAN {a.vlan} and {tgt_ref} on VLAN {b.vlan}"
    return None


# ------------------------------------------------------------------------------ zoning

def _member_keys(pr_ref: str, port: Any) -> set[str]:
    keys = {pr_ref.lower()}
    wwpn = getattr(port, "wwpn", "")
    if wwpn:
        keys.add(wwpn.lower().replace(":", ""))
    return keys


class Zoning:
    """FC zones per fabric; a fabric is a set of switches joined by ISLs (a connected component)."""

    def __init__(self, idx: BedIndex, component_of: dict[str, int]):
        self.component_of = component_of
        self.zones: dict[int, list[tuple[str, frozenset[str]]]] = {}
        for sw in idx.bed.switches:
            for z in getattr(sw, "zones", ()):
                members = frozenset(m.lower().replace(":", "") if _looks_like_wwpn(m) else m.lower()
                                    for m in z.members)
                self.zones.setdefault(component_of.get(sw.id, -1), []).append((z.name, members))

    def gap(self, switches: tuple[str, ...], ini_ref: str, ini_port: Any,
            tgt_ref: str, tgt_port: Any) -> tuple[str | None, int | None]:
        """(why no zone lets the two ports see each other, or None; the fabric when it is open)."""
        if not switches:
            return None, None
        fabric = self.component_of.get(switches[0], -1)
        zones = self.zones.get(fabric)
        if not zones:
            return None, fabric
        a, b = _member_keys(ini_ref, ini_port), _member_keys(tgt_ref, tgt_port)
        for _, members in zones:
            if members & a and members & b:
                return None, None
        return (f"no zone of the fabric of {switches[0]} holds both {ini_ref} and {tgt_ref}", None)


def _looks_like_wwpn(text: str) -> bool:
    bare = text.replace(":", "")
    return len(bare) == 16 and all(c in "0123456789abcdefABCDEF" for c in bare)
