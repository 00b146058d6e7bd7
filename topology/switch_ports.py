"""A switch's own ports: which one fits a cable, which one a cable dropped on the switch takes,
adding many at once, and how the property editor sums them up.

A port fits a cable from another port when nothing stated on both ends disagrees: the
medium (Ethernet or FC), the traffic (a switch port with roles takes a port that carries one
of them), the speed, the FC fabric and the access VLAN.  A value stated on one end only
never refuses a port (a report that gives the host's speed and not the switch's is the
common case).  `operations.connect` refuses a cable to a port that does not fit, and a cable
dropped on the switch body takes the first free port that fits (ports that carry the same
traffic before ports with no role), so the canvas, the Connect dialog and the property
editor all agree on what fits.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from topology.edits import Compound, Edit, InsertItem, SetField
from topology.ids import port_ref
from topology.model import Bed, Port, Switch
from topology.vocabulary import words

MAX_ADDED = 4096          # ports one "add ports" edit may add (a big director has 512)


def medium(port: Any) -> str:
    """What a cable on this port plugs into: management ports are Ethernet too."""
    kind = getattr(port, "kind", "ethernet")
    return "ethernet" if kind in ("ethernet", "management") else kind


def _roles(port: Any) -> set[str]:
    return set(getattr(port, "roles", ()) or ()) - {"unused"}


def _role_text(roles: Iterable[str]) -> str:
    return "/".join(words(r) for r in sorted(roles)) or "no role"


def speed_text(gbps: float | None) -> str:
    return "speed not stated" if gbps is None else f"{gbps:g} Gb/s"


def misfit(switch: Switch, port: Port, other: Any, other_ref: str) -> str | None:
    """Why switch port `port` cannot take a cable from `other` (a Port, or None for a bare
    device end), or None when it can."""
    ref = port_ref(switch.id, port.name)
    if "unused" in (port.roles or ()):
        return f"{ref} is marked unused"
    if other is None:
        return None
    if medium(port) != medium(other):
        return f"{ref} is an {_medium_word(port)} port and {other_ref} an {_medium_word(other)} port"
    mine, theirs = _roles(port), _roles(other)
    if mine and theirs and not mine & theirs:
        return f"{ref} carries {_role_text(mine)} and {other_ref} carries {_role_text(theirs)}"
    a, b = port.speed_gbps, getattr(other, "speed_gbps", None)
    if a is not None and b is not None and a != b:
        return f"{ref} runs at {speed_text(a)} and {other_ref} at {speed_text(b)}"
    if medium(port) == "fc":
        fa = (port.fabric or switch.fabric or "").strip().upper()
        fb = (getattr(other, "fabric", "") or "").strip().upper()
        if fa and fb and fa != fb:
            return f"{ref} is on fabric {fa} and {other_ref} on fabric {fb}"
    va, vb = port.vlan, getattr(other, "vlan", None)
    if va is not None and vb is not None and va != vb:
        return f"{ref} is on VLAN {va} and {other_ref} on VLAN {vb}"
    return None


def _medium_word(port: Any) -> str:
    return {"fc": "FC", "ethernet": "Ethernet", "sas": "SAS", "infiniband": "InfiniBand"}.get(medium(port),
                                                                                            medium(port))


def cabled_names(bed: Bed, switch: Switch) -> set[str]:
    """Names of the switch's ports some cable names."""
    prefix = port_ref(switch.id, "")
    out = set()
    for lk in bed.links:
        for end in (lk.a, lk.b):
            if end.startswith(prefix):
                out.add(end[len(prefix):])
    return out


def free_ports(bed: Bed, switch: Switch) -> list[Port]:
    used = cabled_names(bed, switch)
    return [p for p in switch.ports if p.name not in used]


def has_room(bed: Bed, switch: Switch) -> bool:
    """Whether the switch has ports it does not describe one by one (a cable may take a new one)."""
    return switch.port_count is not None and switch.port_count > len(switch.ports)


@dataclass
class Pick:
    port: Port | None          # the free port that fits, or None
    reason: str = ""           # why none fits (when port is None)


def pick(bed: Bed, switch: Switch, other: Any, other_ref: str) -> Pick:
    """The free port of `switch` a cable from `other` takes: the first that carries the same
    traffic, else the first with no role; with none, why (in one sentence)."""
    free = free_ports(bed, switch)
    theirs = _roles(other) if other is not None else set()
    fitting = [p for p in free if misfit(switch, p, other, other_ref) is None]
    if fitting:
        same = [p for p in fitting if theirs and _roles(p) & theirs]
        return Pick((same or fitting)[0])
    if not free:
        return Pick(None, f"{switch.id} has no free port: all {len(switch.ports)} described ports are cabled")
    reasons: dict[str, int] = {}
    for p in free:
        why = misfit(switch, p, other, other_ref) or ""
        kind = _reason_kind(why)
        reasons[kind] = reasons.get(kind, 0) + 1
    what = ", ".join(f"{n} {kind}" for kind, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
    return Pick(None, f"{switch.id} has no free port that fits {other_ref} ({describe_port(other)}): "
                      f"its {len(free)} free port{'s' if len(free) != 1 else ''} — {what}")


def _reason_kind(why: str) -> str:
    for needle, text in (("unused", "marked unused"), ("carries", "carry other traffic"),
                         ("runs at", "run at another speed"), ("fabric", "are on the other fabric"),
                         ("VLAN", "are on another VLAN"), (" port and ", "are another medium")):
        if needle in why:
            return text
    return "do not fit"


def describe_port(port: Any) -> str:
    """'iSCSI, 10 Gb/s' — what a port carries and how fast, for messages and lists."""
    if port is None:
        return "the device"
    bits = [_role_text(_roles(port)) if _roles(port) else _medium_word(port)]
    if getattr(port, "speed_gbps", None) is not None:
        bits.append(speed_text(port.speed_gbps))
    return ", ".join(bits)


def next_names(switch: Switch, count: int, prefix: str = "") -> list[str]:
    """`count` port names the switch does not use yet: prefix1, prefix2 ..., the lowest first."""
    taken = {p.name for p in switch.ports}
    out: list[str] = []
    n = 1
    while len(out) < count:
        name = f"{prefix}{n}"
        if name not in taken:
            out.append(name)
        n += 1
    return out


def add_ports(bed: Bed, switch: Switch, count: int, *, speed_gbps: float | None = None,
              roles: Iterable[str] = (), prefix: str = "", mtu: int | None = None,
              flow_control: bool | None = None, vlan: int | None = None) -> Edit:
    """`count` new ports on `switch` as one undoable step; the switch's port count grows to
    hold them.  Raises ValueError with the reason for a count out of range."""
    if not 1 <= count <= MAX_ADDED:
        raise ValueError(f"add between 1 and {MAX_ADDED} ports at a time (asked for {count})")
    kind = "fc" if switch.kind == "fc" else "ethernet"
    roles = sorted(set(roles))
    edits: list[Edit] = []
    for name in next_names(switch, count, prefix):
        port = Port(name=name, kind=kind, speed_gbps=speed_gbps, roles=list(roles), mtu=mtu,
                    flow_control=flow_control, vlan=vlan)
        edits.append(InsertItem(switch.ports, port, owner=switch.id))
    total = len(switch.ports) + count
    if switch.port_count is not None and switch.port_count < total:
        edits.append(SetField(switch, "port_count", total, owner=switch.id))
    return Compound(edits, text=f"Add {count} port{'s' if count != 1 else ''} to {switch.id}")


def describe_all(bed: Bed, switch: Switch) -> str:
    """The switch's ports in one line for its properties: how many, cabled and free, speeds."""
    bare = sum(1 for lk in bed.links for end in (lk.a, lk.b) if end == switch.id)
    bare_text = (f"; {bare} cable{'s name' if bare != 1 else ' names'} only the switch") if bare else ""
    if not switch.ports:
        if switch.port_count:
            return f"{switch.port_count} ports, none described one by one{bare_text}"
        return f"no ports described{bare_text}"
    used = cabled_names(bed, switch) & {p.name for p in switch.ports}
    speeds: dict[str, int] = {}
    for p in switch.ports:
        key = speed_text(p.speed_gbps)
        speeds[key] = speeds.get(key, 0) + 1
    speed_bits = ", ".join(f"{n} × {s}" if len(speeds) > 1 else s for s, n in speeds.items())
    more = ""
    if switch.port_count is not None and switch.port_count > len(switch.ports):
        more = f" (of {switch.port_count})"
    n = len(switch.ports)
    return (f"{n} port{'s' if n != 1 else ''}{more}: {len(used)} cabled, {n - len(used)} free · "
            f"{speed_bits}{bare_text}")
