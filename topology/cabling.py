"""Cabling: which two ends a cable may join, the cable that joins them (one undoable edit), and
the ends one port may be cabled to (what the Connect dialog offers).

An end is DEVICE:PORT, or a bare switch (a cable dropped on the switch body, or a report that
names no port).  The rules: one medium on both ends (Ethernet or FC into a switch), a port is
cabled once and not while marked unused, management stays off the SAN, a direct cable carries
the same traffic on both ends, FC fabrics A and B stay apart, a switch port fits what is
plugged into it (topology/switch_ports.py), and a switch has room.  `connect` refuses with the
first rule broken; `cable_ends` lists the ends no rule refuses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topology import switch_ports
from topology.edits import Compound, Edit, InsertItem, Refused, Touch
from topology.ids import DEVICE_COLLECTIONS, find, port_ref, split_endpoint
from topology.model import VM, Bed, Link, Port, Server, StorageArray, Switch
from topology.vocabulary import words


class LinkRefused(Refused):
    """Two ports that cannot be cabled together (FC to Ethernet, a port already in use ...)."""


SAN_ROLES = {"iscsi", "fc"}


@dataclass
class _End:
    ref: str
    device: Any
    port: Port | None         # None: a bare switch end ("SWITCH")
    listed: bool              # the port is declared on its device (not an implicit switch port)

    @property
    def is_switch(self) -> bool:
        return isinstance(self.device, Switch)

    @property
    def roles(self) -> set[str]:
        if self.port is not None and self.port.roles:
            return set(self.port.roles) - {"unused"}
        if self.is_switch:
            return set(self.device.roles) | ({"fc"} if self.device.kind == "fc" else set())
        return set()

    @property
    def medium(self) -> str:
        """What the cable plugs into: ethernet (management ports are Ethernet too), fc, sas ..."""
        if self.port is None:
            return "fc" if self.device.kind == "fc" else "ethernet"
        return "ethernet" if self.port.kind == "management" else self.port.kind

    @property
    def fabric(self) -> str:
        own = self.port.fabric if self.port is not None else ""
        return (own or getattr(self.device, "fabric", "")).strip().upper()

    @property
    def management(self) -> bool:
        return self.port is not None and (self.port.kind == "management" or "management" in self.port.roles)


def _ports_of(device: Any) -> list[Port]:
    if isinstance(device, Server):
        return [p for ad in device.adapters for p in ad.ports]
    if isinstance(device, StorageArray):
        return [p for c in device.controllers for p in c.ports]
    if isinstance(device, Switch):
        return list(device.ports)
    return []


def _device_port(device: Any, name: str) -> Port | None:
    return next((p for p in _ports_of(device) if p.name == name), None)


def _resolve_end(bed: Bed, ref: str) -> _End:
    dev_id, name = split_endpoint(ref)
    device = find(bed, dev_id, DEVICE_COLLECTIONS) if dev_id else None
    bare = device is None
    if bare:   # a bare device, or an id with a colon in it
        dev_id, name = ref, ""
        device = find(bed, ref, DEVICE_COLLECTIONS)
    if device is None:
        raise LinkRefused(f"{dev_id} is not in the bed")
    if isinstance(device, VM):
        raise LinkRefused(f"{dev_id} is a VM: its NICs connect through a virtual switch, not a cable")
    if not isinstance(device, (Server, Switch, StorageArray)):
        raise LinkRefused(f"{dev_id} has no ports to cable")
    if bare:
        if isinstance(device, Switch):
            return _End(ref, device, None, False)
        raise LinkRefused(f"Pick a port on {dev_id}: drag from one of its port markers")
    port = _device_port(device, name)
    if port is not None:
        return _End(ref, device, port, True)
    if isinstance(device, Switch):  # a switch port the bed names only in its cables (or a new one)
        return _End(ref, device, Port(name=name, kind="fc" if device.kind == "fc" else "ethernet",
                                      mtu=device.mtu, flow_control=device.flow_control), False)
    raise LinkRefused(f"{dev_id} has no port {name}")


class _Cabled:
    """What the bed's cables take already: the other end of each cabled end, cables per switch."""

    def __init__(self, bed: Bed):
        self.bed = bed
        self.other: dict[str, str] = {}
        for lk in bed.links:
            self.other.setdefault(lk.a, lk.b)
            self.other.setdefault(lk.b, lk.a)
        self._at: dict[str, int] = {}

    def cables_at(self, dev_id: str) -> int:
        n = self._at.get(dev_id)
        if n is None:
            prefix = port_ref(dev_id, "")
            n = self._at[dev_id] = sum(1 for lk in self.bed.links if lk.a == dev_id or lk.b == dev_id
                                       or lk.a.startswith(prefix) or lk.b.startswith(prefix))
        return n


def _role_text(roles: set[str]) -> str:
    return "/".join(words(r) for r in sorted(roles)) or "no role"


def _ordered(a: _End, b: _End) -> tuple[_End, _End]:
    """Written DEVICE:PORT -> SWITCH, the way the examples read."""
    return (b, a) if a.is_switch and not b.is_switch else (a, b)


def _refusal(a: _End, b: _End, cabled: _Cabled) -> str | None:
    """The first cabling rule a cable between the two ends breaks, in words (None: none)."""
    if a.device is b.device:
        return f"Both ends are on {a.device.id}: cable it to another device"
    if a.medium != b.medium:
        return f"{_medium_text(a)} {a.ref} cannot be cabled to {_medium_text(b)} {b.ref}"
    if a.medium not in ("ethernet", "fc") and (a.is_switch or b.is_switch):
        return f"{a.ref} is a {a.medium.upper()} port: switches take Ethernet or FC only"
    for end in (a, b):
        if end.port is None:
            continue
        cabled_to = cabled.other.get(end.ref)
        if cabled_to is not None:
            return f"{end.ref} is already cabled to {cabled_to}"
        if end.port.roles == ["unused"]:
            return f"{end.ref} is marked unused: give it a role first"
    for mgmt, other in ((a, b), (b, a)):
        if mgmt.management and not (mgmt.roles - {"management"}) and other.roles and other.roles <= SAN_ROLES:
            return (f"{mgmt.ref} is a management port and {other.ref} is on the SAN "
                    f"({_role_text(other.roles)}): keep management off the storage network")
    if not a.is_switch and not b.is_switch and a.roles and b.roles and not (a.roles & b.roles):
        return (f"{a.ref} carries {_role_text(a.roles)} and {b.ref} carries {_role_text(b.roles)}: "
                "a direct cable needs the same traffic on both ends")
    if a.medium == "fc" and a.fabric and b.fabric and a.fabric != b.fabric:
        return f"{a.ref} is on fabric {a.fabric} and {b.ref} on fabric {b.fabric}: FC fabrics A and B stay apart"
    for end, other in ((a, b), (b, a)):
        if end.is_switch and end.port is not None and end.listed:
            why = switch_ports.misfit(end.device, end.port, other.port, other.ref)
            if why:
                return f"{why}: pick another port, or change the port in its properties"
    for end in (a, b):
        if end.is_switch and end.device.port_count is not None:
            ports = max(end.device.port_count, len(end.device.ports))
            if cabled.cables_at(end.device.id) >= ports:
                return f"{end.device.id} has all its {ports} ports in use"
    for end, other in ((a, b), (b, a)):
        if end.is_switch and end.port is None and end.device.ports:
            got = switch_ports.pick(cabled.bed, end.device, other.port, other.ref)
            if got.port is None and not switch_ports.has_room(cabled.bed, end.device):
                return f"{got.reason}. Add ports to {end.device.id} in its properties, or free one"
    return None


def connect(bed: Bed, a_ref: str, b_ref: str) -> Edit:
    """A cable between two ports (or a port and a switch).  Raises LinkRefused with the reason."""
    if a_ref == b_ref:
        raise LinkRefused("A port cannot be cabled to itself")
    a, b = _ordered(_resolve_end(bed, a_ref), _resolve_end(bed, b_ref))
    why = _refusal(a, b, _Cabled(bed))
    if why:
        raise LinkRefused(why)
    edits: list[Edit] = []
    chosen = ""
    for end, other in ((a, b), (b, a)):
        if not end.is_switch or not end.device.ports or end.listed:
            continue
        if end.port is None:       # dropped on the switch body: the next free port that fits
            got = switch_ports.pick(bed, end.device, other.port, other.ref)
            if got.port is not None:
                end.port, end.listed = got.port, True
                end.ref = port_ref(end.device.id, got.port.name)
                chosen = end.ref
                continue
        # a port the switch does not describe yet (it has room for more): describe it now
        name = end.port.name if end.port is not None else switch_ports.next_names(end.device, 1)[0]
        port = Port(name=name, kind="fc" if end.device.kind == "fc" else "ethernet", roles=sorted(other.roles))
        edits.append(InsertItem(end.device.ports, port, text=f"Add port {name}", owner=end.device.id))
        end.ref = port_ref(end.device.id, name)
        chosen = end.ref if end.port is None else chosen
    kind = "isl" if a.is_switch and b.is_switch else "cable"
    link = Link(a=a.ref, b=b.ref, kind=kind)
    text = f"Connect {a.ref} to {b.ref}"
    edits.append(InsertItem(bed.links, link, text=text, owner=a.device.id))
    edits.append(Touch({b.device.id}))
    return Connection(edits, text=text, chosen=chosen)


def cable_ends(bed: Bed, source_ref: str) -> list[tuple[str, str]]:
    """Every end a cable from `source_ref` may go to, as (end, what to call it): the free ports
    that fit, and each switch that would take it on its body (saying which port it would take).
    Raises LinkRefused when the source itself cannot be cabled."""
    src = _resolve_end(bed, source_ref)
    cabled = _Cabled(bed)
    out: list[tuple[str, str]] = []
    for coll in (bed.servers, bed.switches, bed.arrays):
        for dev in coll:
            if dev is src.device:
                continue
            ends = [_End(port_ref(dev.id, p.name), dev, p, True) for p in _ports_of(dev)
                    if port_ref(dev.id, p.name) not in cabled.other]
            if isinstance(dev, Switch):
                ends.append(_End(dev.id, dev, None, False))
            for end in ends:
                a, b = _ordered(src, end)
                if _refusal(a, b, cabled) is None:
                    out.append((end.ref, _end_words(bed, end, src)))
    return out


def _end_words(bed: Bed, end: _End, src: _End) -> str:
    if end.port is not None:
        return f"{end.ref} ({switch_ports.describe_port(end.port)})"
    if not end.device.ports:
        return f"{end.ref} (the switch; its ports are not described)"
    got = switch_ports.pick(bed, end.device, src.port, src.ref)
    taken = got.port.name if got.port is not None else "a new port"
    return f"{end.ref} (takes {taken}, the next free port that fits)"


@dataclass
class Connection(Compound):
    """A new cable; `chosen` names the switch port picked for a cable dropped on the switch body."""
    chosen: str = ""

    def message(self) -> str:
        """What the canvas says once the cable is made ("... takes sw-1:3, the next free port that fits")."""
        if not self.chosen:
            return self.text
        return f"{self.text}: {self.chosen} is the next free port that fits"


def _medium_text(end: _End) -> str:
    if end.port is None:
        return "FC switch" if end.medium == "fc" else "Ethernet switch"
    return {"fc": "FC port", "ethernet": "Ethernet port", "sas": "SAS port",
            "infiniband": "InfiniBand port"}.get(end.medium, f"{end.medium} port")
