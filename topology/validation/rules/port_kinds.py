"""NET-015: Ethernet settings on a Fibre Channel port.

An FC port has a WWPN and a fabric, never an IP address, an MTU or the iSCSI role: a bed that
gives it one has either the wrong kind on the port or the iSCSI settings on the wrong port, and
the paths, the MTU rule and the methodology then judge a port that does not exist.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from topology.validation.context import Context
from topology.validation.registry import Hit, hit, rule


def _fc_ports(ctx: Context) -> Iterator[tuple[str, str, Any]]:
    """(device, DEVICE:PORT, port) for every Fibre Channel port of a server, array or FC switch."""
    for s in ctx.bed.servers:
        for ref, p in ctx.idx.server_ports(s):
            if p.kind == "fc":
                yield s.id, ref, p
    for a in ctx.bed.arrays:
        for ref, p, _ in ctx.idx.array_ports(a):
            if p.kind == "fc":
                yield a.id, ref, p
    for sw in ctx.bed.switches:
        if sw.kind == "fc":
            for p in sw.ports:
                yield sw.id, f"{sw.id}:{p.name}", p


@rule("NET-015", "error", "iSCSI or IP settings on a Fibre Channel port",
      reason="A Fibre Channel port carries FC frames addressed by WWPN: an IP address, an MTU or the iSCSI role "
             "on it means the port's kind is wrong or the settings belong to an Ethernet port, and the paths and "
             "steps built on it do not exist.",
      source="Seed 002 (FC host ports with WWPNs, the iSCSI ports of other beds with addresses and MTU 9000)",
      hint="set the port's kind to ethernet if it is an iSCSI port, or remove the address, MTU and iSCSI role "
           "from the FC port")
def net_015(ctx: Context) -> Iterator[Hit]:
    for dev, ref, p in _fc_ports(ctx):
        wrong = []
        roles = getattr(p, "roles", [])
        if type(roles) is list and "iscsi" in roles:
            wrong.append("the iSCSI role")
        address = getattr(p, "address", "")
        if address:
            wrong.append(f"address {address}")
        mtu = getattr(p, "mtu", None)
        if isinstance(mtu, int):
            wrong.append(f"MTU {mtu}")
        if wrong:
            yield hit([dev, ref], f"Fibre Channel port {ref} has {', '.join(wrong)}",
                      cause="{n} Fibre Channel ports have iSCSI or IP settings", item=f"{ref} ({', '.join(wrong)})")
