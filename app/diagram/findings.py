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


def badges(findings: Iterable[Any], devices: Any, vm_hosts: dict[str, str] | None = None,
           scenario: str | None = None) -> dict[str, Badge]:
    """Open (not accepted) errors and warnings per drawn component, in the reference configuration
    and, when given, one scenario (its id; "*" for every scenario)."""
    per: dict[str, list[Any]] = {}
    for f in findings or ():
        if getattr(f, "accepted", False) or f.severity not in ("error", "warning"):
            continue
        where = getattr(f, "scenario", None)
        if where is not None and scenario != "*" and where != scenario:
            continue
        seen: set[str] = set()
        for s in f.subjects:
            dev = device_of_subject(s, devices, vm_hosts)
            if dev is not None and dev not in seen:
                seen.add(dev)
                per.setdefault(dev, []).append(f)
    out = {}
    for dev, fs in per.items():
        sev = "error" if any(f.severity == "error" for f in fs) else "warning"
        out[dev] = Badge(sev, len(fs), tuple(
            (f"[{f.scenario}] " if getattr(f, "scenario", None) else "") + f"{f.code} ({f.severity}): {f.message}"
            for f in fs))
    return out
