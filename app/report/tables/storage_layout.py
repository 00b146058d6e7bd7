"""Appendix E: the drive slots of every enclosure, coloured by disk group, with a legend."""
from __future__ import annotations

from collections import defaultdict

from app.report.tables.disks import disk_kind, short_disk, spare_slots
from app.report.tables.model import Cell, Row, Table, missing
from app.report.tables.values import flat, slug
from topology.index import BedIndex, shown_slots
from topology.model import Bed, StorageArray
from topology.unknown import MARKER, NOT_STATED
from topology.vocabulary import raid_name

# Disk-group colours for the slot map: light enough for black text, distinct side by side.
GROUP_COLOURS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
                 "#f7b6d2", "#dbdb8d", "#9edae5", "#fdd0a2", "#b5cf6b", "#e7ba52")
SPARE_COLOUR = "#ffffff"
EMPTY_COLOUR = "#d0d0d0"
UNASSIGNED_COLOUR = "#f0f0f0"


def group_colours(a: StorageArray) -> dict[str, str]:
    return {g.name: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, g in enumerate(a.disk_groups)}


SLOTS_PER_ROW = 16


def slot_map_tables(bed: Bed) -> list[Table]:
    """Per array: the drive slots of every enclosure, coloured by disk group, and a legend."""
    idx = BedIndex(bed)
    tables = []
    for a in bed.arrays:
        scope = idx.scopes[a.id]
        if not a.enclosures:
            continue
        colours = group_colours(a)
        owner: dict[tuple[str, int], str] = {}
        for g in a.disk_groups:
            for key in scope.members(g.members):
                owner.setdefault(key, g.name)
        spares = spare_slots(a)
        slots_of = {e.name: shown_slots(e) for e in a.enclosures}
        width = max(1, min(max(slots_of.values(), default=1), SLOTS_PER_ROW))    # 1: an enclosure with no slot stated
        if width > 12 and max(slots_of.values()) > SLOTS_PER_ROW:
            width = 12
        t = Table(f"slots-{slug(a.id)}", f"Drive-slot layout: {a.id}", ["Enclosure"] + [""] * width,
                  kind="slotmap", compact=True)
        for e in a.enclosures:
            n = slots_of[e.name]
            for start in range(0, max(n, 1), width):
                label = e.name if n <= width else f"{e.name} {start}-{min(start + width, n) - 1}"
                cells = [Cell(label, bold=True, ref=a.id)]
                for s in range(start, start + width):
                    if s >= slots_of[e.name]:
                        cells.append(Cell(""))
                        continue
                    sref = f"{a.id}:{e.name}:{s}"
                    disk = scope.disks.get((e.name, s))
                    group = owner.get((e.name, s))
                    if disk is None:
                        cells.append(Cell(f"{s}\nEMPTY", fill=EMPTY_COLOUR, ref=sref))
                    elif (e.name, s) in spares:
                        cells.append(Cell(f"{s}\nspare\n{short_disk(disk.spec)}", fill=SPARE_COLOUR, ref=sref,
                                          bold=True))
                    elif group:
                        cells.append(Cell(f"{s}\n{group}\n{short_disk(disk.spec)}", fill=colours[group],
                                          ref=f"{a.id}:group:{group}"))
                    else:
                        cells.append(Cell(f"{s}\nfree\n{short_disk(disk.spec)}", fill=UNASSIGNED_COLOUR, ref=sref))
                t.rows.append(Row(cells))
        tables.append(t)
        legend = Table(f"slots-{slug(a.id)}-legend", f"Disk groups of {a.id}: legend",
                       ["", "Group", "RAID", "Drives", "Slots", "Owner", "Contents"],
                       widths=[4, 14, 14, 22, 14, 12, 20], compact=True)
        for g in a.disk_groups:
            disks = scope.group_disks(g)
            kinds = defaultdict(int)
            for d in disks:
                kinds[disk_kind(d.spec)] += 1
            contents = ", ".join(v.name + (f" ({', '.join(v.purpose)})" if v.purpose else "")
                                 for v in a.volumes if v.group == g.name) or (f"pool {g.pool}" if g.pool else "")
            gref = f"{a.id}:group:{g.name}"
            legend.add(Cell("", fill=colours[g.name]), Cell(g.name + (f" ({g.label})" if g.label else ""), ref=gref,
                                                             bold=True),
                       raid_name(g.raid) + (f" {g.geometry}" if g.geometry else ""),
                       "; ".join(f"{n} x {k}" for k, n in kinds.items()) or
                       (MARKER if g.members is NOT_STATED else missing(gref)),
                       flat(g.members), g.owner, contents)
        if spares:
            legend.add(Cell("", fill=SPARE_COLOUR), Cell("Hot spare", bold=True), "", str(len(spares)),
                       ", ".join(a.spares), "", "")
        empty = sum(1 for e in a.enclosures for s in range(slots_of[e.name]) if (e.name, s) not in scope.disks)
        if empty:
            legend.add(Cell("", fill=EMPTY_COLOUR), Cell("Empty slot", bold=True), "", str(empty), "", "", "")
        tables.append(legend)
    return tables
