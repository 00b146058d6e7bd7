"""Appendix D for array groups (EqualLogic): the group and its discovery address, its pools with
the members each spans, its volumes (pool, members, size, settings) and its access records.

A group's storage is not any one member's: a pool spans members, a volume lives in a pool, so a
volume's table row names the members its pool spans.  A volume's settings (segment size, cache
policy, snapshot reserve) print as the source gives them, each one the source leaves open as
"not stated", and a volume that gives none reads "not stated" rather than a blank.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from app.report.tables.model import Cell, Table, missing
from app.report.tables.values import add_notes, flat, number, setting, slug
from topology.index import BedIndex
from topology.unknown import MARKER, NOT_STATED, stated
from topology.vocabulary import raid_name

# how a setting the bed names reads in a table; any other key reads humanized ("read_ahead" -> "Read ahead")
SETTING_LABELS = {"segment_size_kb": "segment size", "read_cache": "read cache", "write_cache": "write cache",
                  "write_cache_mirroring": "write cache mirroring", "read_ahead": "read-ahead",
                  "cache_policy": "cache policy"}


def volume_settings(v: Any) -> str:
    """The settings of a volume in one line ('segment size 128 KB; read cache Enabled; snapshot reserve
    100 GB (100 %)'), each the source leaves open as 'not stated'; '' when it gives none."""
    parts = []
    for key, value in v.settings.items():
        label = SETTING_LABELS.get(key) or str(key).replace("_", " ")
        text = setting(value)
        if key == "segment_size_kb" and stated(value) is not None:
            text = f"{text} KB"
        parts.append(f"{label} {text}")
    reserve = v.reserve_gb
    if reserve is NOT_STATED:
        parts.append(f"snapshot reserve {MARKER}")
    elif reserve is not None:
        size = stated(v.size_gb)
        share = f" ({round(100 * reserve / size)} %)" if size else ""
        parts.append(f"snapshot reserve {number(reserve)} GB{share}")
    return "; ".join(parts)


def settings_cell(v: Any, ref: str) -> Cell:
    text = volume_settings(v)
    return Cell(text, ref=ref) if text else Cell(MARKER, ref=ref)


def group_tables(bed: Any, idx: BedIndex, sizes: dict[str, float]) -> list[Table]:
    """The tables of each array group of the bed (its members' own tables are the arrays')."""
    tables: list[Table] = []
    for g in bed.array_groups:
        members = [a.id for a in bed.arrays if a.group == g.name]
        unsure = any(a.group is NOT_STATED for a in bed.arrays)     # any of them may be a member
        tables.append(_group_summary(g, members, unsure))
        if not (g.name in idx.group_views and g.holds_storage):
            continue
        pool_members = {p.name: _pool_members(p, members) for p in g.pools}
        if g.pools:
            pt = Table(f"group-{slug(g.name)}-pools", f"Pools: array group {g.name}",
                       ["Pool", "RAID policy", "Members it spans", "Provisioning", "Purpose"],
                       widths=[18, 16, 38, 14, 14], compact=True)
            for p in g.pools:
                pref = f"{g.name}:pool:{p.name}"
                pt.add(Cell(p.name, ref=pref, bold=True),
                       Cell(raid_name(p.raid), ref=pref) if p.raid or p.raid is NOT_STATED else "",
                       pool_members[p.name], p.provisioning, flat(p.purpose))
            tables.append(add_notes(pt, [(p.name, p) for p in g.pools]))
        if g.volumes:
            presented: dict[str, list[str]] = defaultdict(list)
            for m in g.mappings:
                presented[m.volume].append(m.to + (f" (LUN {m.lun})" if m.lun is not None else ""))
            vt = Table(f"group-{slug(g.name)}-volumes", f"Volumes: array group {g.name}",
                       ["Volume", "Pool", "Members", "Size (GB)", "Purpose", "Settings", "Access records"],
                       widths=[15, 10, 17, 9, 10, 24, 15], compact=True)
            for v in g.volumes:
                vref = f"{g.name}:{v.name}"
                size = sizes.get(vref, stated(v.size_gb))
                size_cell = (Cell(number(round(size, 1)) + (" thin" if v.provisioning == "thin" else ""), ref=vref)
                             if size is not None else missing(vref, v.size_gb))
                spans = pool_members.get(v.pool) if v.pool and v.pool is not NOT_STATED else None
                vt.add(Cell(v.name + (f" ({v.label})" if v.label else ""), ref=vref, bold=True),
                       Cell(flat(v.pool), ref=vref) if v.pool else missing(vref, v.pool),
                       spans if spans is not None else (Cell(MARKER, ref=vref) if v.pool is NOT_STATED else ""),
                       size_cell, flat(v.purpose), settings_cell(v, vref),
                       "; ".join(presented.get(v.name, [])))
            tables.append(add_notes(vt, [(v.name, v) for v in g.volumes]))
        if g.hosts or g.host_groups:
            ht = Table(f"group-{slug(g.name)}-hosts", f"Access records: array group {g.name}",
                       ["Host", "Server", "Initiators", "Volumes"], compact=True, widths=[18, 18, 40, 24])
            reaches: dict[str, list[str]] = defaultdict(list)
            for m in g.mappings:
                reaches[m.to].append(m.volume)
            for h in g.hosts:
                ht.add(Cell(h.name, bold=True), Cell(h.server, ref=h.server) if h.server else flat(h.server),
                       Cell(flat(h.initiators), mono=True) if h.initiators else missing(h.server or h.name,
                                                                                        h.initiators),
                       ", ".join(reaches.get(h.name, [])))
            tables.append(add_notes(ht, [(h.name, h) for h in g.hosts]))
    return tables


def _group_summary(g: Any, members: list[str], unsure: bool) -> Table:
    t = Table(f"group-{slug(g.name)}", f"Array group: {g.name}", ["Array group", g.name], kind="keyvalue",
              widths=[40, 60])
    t.add("Group model", Cell(flat(g.model), ref=g.name) if g.model else missing(g.name, g.model))
    if g.firmware:
        t.add("Firmware", Cell(flat(g.firmware), ref=g.name))
    t.add("Group (discovery) address", Cell(flat(g.address), ref=g.name, mono=g.address is not NOT_STATED)
          if g.address else missing(g.name, g.address))
    if g.network or g.network is NOT_STATED:
        t.add("Network", Cell(flat(g.network), ref=g.network if g.network is not NOT_STATED else g.name))
    listed = f"{len(members)}: {', '.join(members)}" if members else ""
    if unsure:      # arrays whose group the source does not state may be members too
        listed = f"{listed}; others not stated" if listed else flat(NOT_STATED)
    t.add("Members", Cell(listed, ref=g.name) if listed else missing(g.name))
    if g.holds_storage:
        t.add("Pools", Cell(", ".join(p.name for p in g.pools) or "", ref=g.name))
        t.add("Volumes", Cell(str(len(g.volumes)), ref=g.name))
    return add_notes(t, [(g.name, g)])


def _pool_members(p: Any, members: list[str]) -> Cell | str:
    """The members a pool spans: those it lists, every member when it lists none, 'not stated' when the
    source leaves them open."""
    if p.members is NOT_STATED:
        return Cell(MARKER)
    if p.members:
        return ", ".join(p.members)
    return f"every member ({', '.join(members)})" if members else "every member"
