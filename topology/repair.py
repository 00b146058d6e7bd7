"""Repairing a bed whose references name nothing (a file opened in the repair view).

`broken_references(bed)` lists what is still broken (the loader's own check);
`drop_broken_references(bed)` is one edit that removes them: cables whose end names no
device or port, disk-group members on an enclosure the array lacks, mapping ports the
array lacks, placements of unknown VMs or hosts, and every other unresolved reference
(an optional one blanked, a list entry dropped).  The person chooses it; nothing is
dropped while the file is opened.
"""
from __future__ import annotations

from topology.edits import Compound, Edit, RemoveItem, SetField
from topology.fileformat import check_references
from topology.index import BedIndex, parse_member
from topology.model import Bed
from topology.operations import clear_dangling


def broken_references(bed: Bed) -> list[tuple[tuple, str, str]]:
    """(path, what is wrong, how to fix it) for every reference that names nothing."""
    return check_references(bed)


def drop_broken_references(bed: Bed) -> Edit:
    idx = BedIndex(bed)
    edits: list[Edit] = [RemoveItem(bed.links, link, owner=link.a.partition(":")[0])
                         for link in bed.links
                         if idx.endpoint_device(link.a) is None or idx.endpoint_device(link.b) is None]
    for array in bed.arrays:
        scope = idx.scopes[array.id]
        for group in array.disk_groups:
            kept = [m for m in group.members
                    if _member_enclosure(m) in scope.enclosures or _member_enclosure(m) is None]
            if len(kept) != len(group.members):
                edits.append(SetField(group, "members", kept, owner=array.id))
        for mapping in array.mappings:
            kept = [p for p in mapping.ports if f"{array.id}:{p}" in idx.ports]
            if len(kept) != len(mapping.ports):
                edits.append(SetField(mapping, "ports", kept, owner=array.id))
    edits += clear_dangling(bed, idx, None)
    count = len(check_references(bed))
    return Compound(edits, text=f"Drop {count} broken reference{'s' if count != 1 else ''}")


def _member_enclosure(spec: str) -> str | None:
    try:
        return parse_member(spec)[0]
    except ValueError:
        return None
