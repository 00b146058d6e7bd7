"""A scenario that takes parts out of service on purpose (`failed:` a fabric's ports, a cable, a NIC)
is a failover test: the redundancy those parts gave is meant to be gone there.  A host left with one
iSCSI port (NET-002), a volume reached over one path (PATH-001) or over paths that now share a part
(PATH-002, PATH-003) is what such a scenario tests, not a fault of the bed: those findings are noted
as expected instead of failing validation (`validate` exited 1 on every failover bed).

Only when the scenario changes nothing else (no `excluded`, `placement` or `settings`): its findings
are the reference's plus what it adds (the runner keeps only the additions), so then every addition
comes from the parts it fails.  A host left with no path at all to a volume stays an error: a
failover that cuts a host off its storage is a failed test plan, not a failover.
"""
from __future__ import annotations

from topology.model import Scenario
from topology.validation.registry import Finding

DEGRADED_BY_DESIGN = frozenset({"NET-002", "PATH-001", "PATH-002", "PATH-003"})
_NO_PATH = "has no path to"          # PATH-001's cause for a host left with no path (rules/paths.py)


def only_fails_parts(sc: Scenario, reference: Scenario | None = None) -> bool:
    """Whether `sc` differs from the reference it is compared with by the parts it fails alone.  A
    reference scenario that leaves things out (a standalone reference without the second node) or
    runs fewer VMs: a failover scenario that does not do the same brings them back, and what they
    lack (a node cabled to one switch) would have been noted as the failover's design."""
    if not sc.failed:
        return False
    if reference is None:
        return not (sc.excluded or sc.placement or sc.settings)
    return (sc.excluded, sc.vms, sc.placement, sc.settings) == \
        (reference.excluded, reference.vms, reference.placement, reference.settings)


def note_designed_losses(sc: Scenario, added: list[Finding], reference: Scenario | None = None) -> None:
    """`added`: what scenario `sc` adds to the findings of `reference` (None: the bed as drawn); the
    losses it was made for become notes that say so."""
    if not only_fails_parts(sc, reference):
        return
    parts = ", ".join(sc.failed)
    for f in added:
        if f.code in DEGRADED_BY_DESIGN and f.severity != "info" and _NO_PATH not in f.cause:
            f.severity = "info"
            f.hint = f"none needed: scenario {sc.id} takes {parts} out of service on purpose, to test the failover"
