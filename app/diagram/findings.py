"""Which drawn device a finding belongs to, and the badge each device carries."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.diagram.devices import Badge


def device_of_subject(subject: str, devices: Any, vm_hosts: dict[str, str] | None = None) -> str | None:
    """The drawn component a finding subject belongs to (R710-1:SAN1 -> R710-1; a VM -> its host)."""
    if subject in devices:
        return subject
    if vm_hosts and subject in vm_hosts:
        return vm_hosts[subject]
    head = subject.partition(":")[0]
    if head in devices:
        return head
    if vm_hosts and head in vm_hosts:
        return vm_hosts[head]
    return None


def drawn(bed: Any) -> tuple[set[str], dict[str, str]]:
    """(the ids the diagram draws as devices, VM -> the host it is drawn in), as the canvas draws a
    bed: servers, switches, arrays, chassis and networks; a VM inside its host, or on its own when
    its host is not a server of the bed."""
    devices = {c.id for coll in (bed.servers, bed.switches, bed.arrays, bed.chassis, bed.networks) for c in coll}
    servers = {s.id for s in bed.servers}
    vm_hosts: dict[str, str] = {}
    for vm in bed.vms:
        if vm.host in servers:
            vm_hosts[vm.id] = vm.host
        else:
            devices.add(vm.id)
    return devices, vm_hosts


def badges(findings: Iterable[Any], devices: Any, vm_hosts: dict[str, str] | None = None,
           scenario: str | None = None) -> dict[str, Badge]:
    """Open (not accepted) errors and warnings per drawn component, in the reference configuration
    and, when given, one scenario (its id; "*" for every scenario).  Runs on the GUI thread after
    every validation, so each subject is placed once and each message written once (a stress bed
    has tens of thousands of findings naming the same few thousand subjects)."""
    per: dict[str, list[Any]] = {}
    placed: dict[str, str | None] = {}
    for f in findings or ():
        if f.severity not in ("error", "warning") or getattr(f, "accepted", False):
            continue
        if scenario != "*":
            places = getattr(f, "where", ()) or ((None, getattr(f, "scenario", None)),)
            if not any(s is None or s == scenario for _, s in places):
                continue
        seen: set[str] = set()
        for s in f.subjects:
            dev = placed.get(s, _UNPLACED)
            if dev is _UNPLACED:
                dev = placed[s] = device_of_subject(s, devices, vm_hosts)
            if dev is not None and dev not in seen:
                seen.add(dev)
                per.setdefault(dev, []).append(f)
    out = {}
    text: dict[int, str] = {}
    for dev, fs in per.items():
        sev = "error" if any(f.severity == "error" for f in fs) else "warning"
        messages = []
        for f in fs:
            line = text.get(id(f))
            if line is None:
                said = getattr(f, "holds_in", "") or (f"scenario {f.scenario}" if getattr(f, "scenario", None) else "")
                line = text[id(f)] = ((f"[{said}] " if said and said != "the reference configuration" else "")
                                      + f"{f.code} ({f.severity}): {f.message}")
            messages.append(line)
        out[dev] = Badge(sev, len(fs), tuple(messages))
    return out


_UNPLACED: Any = object()
