"""Checks the loader makes on a built model before anything walks it.

The index, the validator and the methodology iterate slot ranges and use ids as folder
names, so a range must lie inside its enclosure and an id must be a safe name before any
of them runs.  Two access entries for one host, or an exception for a rule that does not
exist, are refused here too: each would be silently ignored further on; so is a configuration
that changes a component or field the bed does not have (`topology.configurations.check`).
"""
from __future__ import annotations

from collections.abc import Callable

from topology.index import parse_member, parse_slot_range
from topology.model import Bed, Enclosure
from topology.unknown import stated

MOST_SLOTS = 10_000   # Enclosure.slots' maximum in the model

Locate = Callable[[tuple], tuple]
Found = list[tuple[tuple, str, str]]


def check(bed: Bed, locate: Locate) -> Found:
    """(path, message, hint) for every problem; locate(path) gives (line, column) of a path."""
    found = (_slot_ranges(bed) + _access_hosts(bed, locate) + _exception_codes(bed) + _workload_timing(bed)
             + _failover_timing(bed))
    if not found and (bed.configurations or bed.scenarios or bed.results or bed.test_matrix):
        from topology.configurations import check as configuration_problems  # it builds the index
        found = configuration_problems(bed)
    return found


def _slots(e: Enclosure) -> int:
    """The enclosure's slot count; where the source does not state it, the most an enclosure may have,
    so a range still cannot make the index walk a billion slots."""
    n = stated(e.slots)
    return MOST_SLOTS if n is None else n


def _slot_ranges(bed: Bed) -> Found:
    found: Found = []
    for ai, a in enumerate(bed.arrays):
        sizes = {e.name: _slots(e) for e in a.enclosures}
        base = ("arrays", ai)
        for ei, e in enumerate(a.enclosures):
            for di, ds in enumerate(e.disks):
                _within(found, base + ("enclosures", ei, "disks", di, "slots"), e.name, ds.slots,
                        _slots(e), parse_slot_range)
        for gi, g in enumerate(a.disk_groups):
            for mi, spec in enumerate(g.members):
                _member_within(found, base + ("disk_groups", gi, "members", mi), spec, sizes)
        for si, spec in enumerate(a.spares):
            _member_within(found, base + ("spares", si), spec, sizes)
    return found


def _member_within(found: Found, path: tuple, spec: str, sizes: dict[str, int]) -> None:
    try:
        enc, slots = parse_member(spec)
    except ValueError:
        return  # the index explains a member that does not parse
    if enc in sizes:  # an unknown enclosure is a reference problem, reported with the others
        _within(found, path, enc, spec, sizes[enc], lambda _: slots)


def _within(found: Found, path: tuple, enclosure: str, spec: str, size: int, parse: Callable) -> None:
    try:
        slots = parse(spec)
    except ValueError:
        return  # the index explains a range that does not parse
    if slots.stop > size:
        last = f"{size - 1}" if size else "none: it has 0 slots"
        found.append((path, f"{spec!r} runs past the end of enclosure {enclosure!r} "
                      f"(it has {size} slots, the last is {last})",
                      f"keep slots within 0-{size - 1}, or raise the enclosure's slots" if size else
                      "give the enclosure its slot count"))


def _access_hosts(bed: Bed, locate: Locate) -> Found:
    found: Found = []
    first: dict[str, int] = {}
    for i, entry in enumerate(bed.access):
        if entry.host in first:
            line, _ = locate(("access", first[entry.host], "host"))
            where = f" on line {line}" if line else f" (access[{first[entry.host]}])"
            found.append((("access", i, "host"),
                          f"host {entry.host!r} has a second access entry; the first is{where}",
                          "keep one entry per host: merge the two into one"))
        else:
            first[entry.host] = i
    return found


def _exception_codes(bed: Bed) -> Found:
    if not bed.exceptions:
        return []
    from topology.validation import rule_catalogue  # the rules import the model, not the loader
    known = {r.code for r in rule_catalogue()}
    found: Found = []
    for i, ex in enumerate(bed.exceptions):
        if ex.code not in known:
            prefix = ex.code.split("-")[0]
            same = sorted(c for c in known if c.startswith(prefix + "-"))
            found.append((("exceptions", i, "code"), f"{ex.code!r} is not a rule code",
                          f"codes of that kind: {', '.join(same)}" if same else
                          "`testbed-studio rules` lists the codes"))
    return found


def _workload_timing(bed: Bed) -> Found:
    """A workload's per-level machines name levels of a matrix entry that runs it, and the loads it
    starts together with share its order: either slip would put a load on the wrong VMs or at the
    wrong time in the generated run."""
    if not any(w.levels or w.together_with for w in bed.workloads):
        return []
    from topology.run_levels import level_key  # (Qt-free, no model import cycle)
    found: Found = []
    orders = {w.id: w.order or 0 for w in bed.workloads}
    for i, w in enumerate(bed.workloads):
        entries = [m for m in bed.test_matrix if not m.workloads or w.id in m.workloads]
        known = list(dict.fromkeys(str(lv) for m in entries for lv in m.levels))
        keys = {level_key(k) for k in known}
        seen: set[str] = set()
        for j, entry in enumerate(w.levels):
            key = level_key(entry.level)
            if key in seen:
                found.append((("workloads", i, "levels", j, "level"),
                              f"level {entry.level!r} of workload {w.id!r} is listed twice",
                              "keep one entry per level"))
            seen.add(key)
            if key not in keys:
                found.append((("workloads", i, "levels", j, "level"),
                              f"{entry.level!r} is not a level of a test_matrix entry that runs workload {w.id!r}",
                              f"levels there: {', '.join(known)}" if known else
                              f"add a test_matrix entry with levels that lists {w.id!r} under workloads"))
        for j, other in enumerate(w.together_with):
            if other in orders and orders[other] != orders[w.id]:
                found.append((("workloads", i, "together_with", j),
                              f"workload {w.id!r} (order {orders[w.id]}) starts together with {other!r}, "
                              f"whose order is {orders[other]}",
                              "give loads that start together the same order"))
    return found


def _failover_timing(bed: Bed) -> Found:
    """A scenario's parts come back after they went out, and only when they go out under load: a restore
    time alone, or one before the failure, would put the parts back before they were taken out."""
    found: Found = []
    for i, sc in enumerate(bed.scenarios):
        fail, back = stated(sc.fail_after_minutes), stated(sc.restore_after_minutes)
        if back is None:
            continue
        if fail is None:
            found.append((("scenarios", i, "restore_after_minutes"),
                          f"scenario {sc.id!r} gives its parts back {back} minutes into the loads but does not "
                          "take them out under load", "add fail_after_minutes, or remove restore_after_minutes"))
        elif back <= fail:
            found.append((("scenarios", i, "restore_after_minutes"),
                          f"scenario {sc.id!r} gives its parts back {back} minutes into the loads, not after it "
                          f"takes them out ({fail} minutes)", "make restore_after_minutes larger than "
                          "fail_after_minutes"))
    return found
