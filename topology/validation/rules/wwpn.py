"""NET-014: one WWPN on two ports.

A WWPN is an FC port's identity in the fabric: zones and the array's host entries name ports
by it.  A bed built by copying a blade or an HBA keeps the copied WWPN; the fabric then logs
the second port out (or both fight), and every zone and host entry means one port or the other
at random.  The rule says so before the paths it would garble are read.
"""
from __future__ import annotations

from collections.abc import Iterator

from topology.validation.context import Context
from topology.validation.registry import Hit, hit, rule


@rule("NET-014", "error", "duplicate WWPN",
      reason="Zones and the array's host entries name FC ports by WWPN: two ports with one WWPN cannot both log "
             "in to the fabric, and every zone and host entry that names it means one of them at random.",
      source="FC addressing basics; the BladeCenter example's zones and DS5020 host entries name each HBA port "
             "by its own WWPN",
      hint="give each FC port its own WWPN (a copied blade or HBA keeps the original's)")
def net_014(ctx: Context) -> Iterator[Hit]:
    owners: dict[str, list[str]] = {}
    for ref, pr in ctx.idx.ports.items():
        wwpn = getattr(pr.port, "wwpn", "")
        if wwpn and not pr.implicit:
            owners.setdefault(wwpn.lower().replace(":", "").replace("-", ""), []).append(ref)
    for refs in owners.values():
        if len(refs) > 1:
            wwpn = ctx.idx.ports[refs[0]].port.wwpn
            yield hit(refs, f"WWPN {wwpn} is used by {', '.join(refs)}")
