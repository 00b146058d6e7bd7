"""What a derived storage path is made of: its hops, the path itself, the two ends it joins
(`Endpoint`), a pin that fails, and which SAN protocol a port speaks.  `topology.derived_paths`
builds them from the drawing."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from topology.index import PortRef
from topology.model import VM, PathSpec
from topology.path_checks import Layer3
from topology.unknown import NOT_STATED

SAN_KINDS = ("fc", "sas")


@dataclass(frozen=True, slots=True)
class Hop:
    kind: str       # vnic | vswitch | iface | port | switch | portal | target | controller | lun
    element: str    # the id the canvas and the findings use
    text: str = ""  # how a sentence names it, when not the id

    def __str__(self) -> str:
        return self.text or self.element


@dataclass(slots=True)
class StoragePath:
    """One path a host has to some of its volumes on one array, hop by hop."""
    spec: PathSpec                  # host, initiator, target, kind, volumes: what the rules read
    hops: tuple[Hop, ...]
    pinned: bool = False
    # volume -> LUN number (read only: the paths of hosts alike share one)
    luns: Mapping[str, int | None] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return self.spec.host

    def describe(self) -> str:
        return " -> ".join(str(h) for h in self.hops)


@dataclass(slots=True)
class Endpoint:
    ref: str                        # DEVICE:PORT (a VM's vNIC for a guest initiator)
    port: Any                       # Port or VNic
    proto: str                      # iscsi | fc | sas
    exits: tuple[str, ...]          # physical ports the traffic leaves by
    lead: tuple[Hop, ...] = ()      # hops before the physical port (vNIC, virtual switch)
    l3: Layer3 | None = None        # subnet and VLAN (iSCSI)
    # per exit: (exit port, switches it is cabled to, other ends cabled to it directly)
    attach: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = ()
    sig: Any = None                 # equal for ports any target treats alike (see _verdict)


@dataclass(slots=True)
class PinFailure:
    index: int                      # position in bed.paths
    spec: PathSpec
    hop: str                        # the hop that fails
    reason: str


_new_spec = PathSpec.__new__
_SPEC_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(PathSpec)}
assert list(_SPEC_DEFAULTS) == ["host", "initiator", "target", "kind", "volumes", "multipath", "persistent",
                                "preferred"], "a new PathSpec field: set it in derived_spec"
_MULTIPATH, _PERSISTENT, _PREFERRED = (_SPEC_DEFAULTS[name] for name in ("multipath", "persistent", "preferred"))


def derived_spec(host: str, initiator: str, target: str, kind: str, volumes: list[str]) -> PathSpec:
    """PathSpec(host=..., initiator=..., target=..., kind=..., volumes=...), the other fields at their
    defaults, without the keyword call: it costs more than the rest of a derived path's objects."""
    spec = _new_spec(PathSpec)
    spec.host = host
    spec.initiator = initiator
    spec.target = target
    spec.kind = kind
    spec.volumes = volumes
    spec.multipath = _MULTIPATH
    spec.persistent = _PERSISTENT
    spec.preferred = _PREFERRED
    return spec


def protocol_not_stated(pr: PortRef) -> bool:
    """Whether the source leaves open what a port carries (its kind or roles; a vNIC's role)."""
    p = pr.port
    return any(getattr(p, name, None) is NOT_STATED for name in ("kind", "roles", "role"))


def port_protocol(pr: PortRef) -> str:
    """iscsi, fc or sas for a SAN port; '' for anything else (LAN, management, unused)."""
    p = pr.port
    roles = set(getattr(p, "roles", ()) or ())
    if isinstance(pr.device, VM):
        return "iscsi" if getattr(p, "role", "") == "iscsi" else ""
    if "unused" in roles:
        return ""
    kind = getattr(p, "kind", "ethernet")
    if kind in SAN_KINDS or "fc" in roles:
        return "fc" if kind != "sas" else "sas"
    if kind in ("ethernet", "infiniband") and "iscsi" in roles:
        return "iscsi"
    return ""
