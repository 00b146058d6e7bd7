"""What the hosts showed that the bed does not state, written back as one undoable edit: volumes'
WWNs, serials and targets (the storage steps select their disk by these at run time), ports'
MACs and link speeds, hosts' iSCSI initiator names (on the array's host entries).  Only empty
fields are filled: a value the bed states is compared (an ASB finding when it differs), never
overwritten.  Two hosts that show different values for one field write nothing and say so."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from topology.asbuilt.result import Learnt
from topology.edits import Compound, Edit, SetField
from topology.model import Bed
from topology.unknown import stated

FIELDS = ("wwn", "serial", "target", "mac", "speed_gbps", "iqn")


@dataclass
class LearnPlan:
    edit: Edit | None = None
    changes: list[str] = field(default_factory=list)     # what the edit sets, in words
    notes: list[str] = field(default_factory=list)       # what it leaves alone, and why


def learn_edit(bed: Bed, learnt: Iterable[Learnt], fields: Iterable[str] = FIELDS) -> LearnPlan:
    wanted = set(fields)
    plan = LearnPlan()
    values: dict[tuple[str, str], dict[Any, str]] = {}
    for item in learnt:
        if item.field in wanted:
            values.setdefault((item.subject, item.field), {}).setdefault(item.value, item.source)
    volumes = {f"{a.id}:{v.name}": v for a in bed.arrays for v in a.volumes}
    ports = {f"{s.id}:{p.name}": p for s in bed.servers for ad in s.adapters for p in ad.ports}
    edits: list[Edit] = []
    for (subject, name), seen in sorted(values.items(), key=lambda kv: kv[0]):
        if len(seen) > 1:
            plan.notes.append(f"{subject} {name}: the hosts show different values ("
                              + "; ".join(f"{v} on {src}" for v, src in seen.items()) + "): left as it is")
            continue
        value, source = next(iter(seen.items()))
        if name == "iqn":
            edits += _initiator(bed, subject, value, source, plan)
            continue
        obj = volumes.get(subject) if name in ("wwn", "serial", "target") else ports.get(subject)
        if obj is None or stated(getattr(obj, name)) not in (None, ""):
            continue
        edits.append(SetField(obj, name, value, owner=subject.split(":")[0]))
        plan.changes.append(f"{subject} {name}: {value} (seen on {source})")
    if edits:
        plan.edit = Compound(edits, text=f"Take {len(edits)} value(s) learnt from the hosts into the bed")
    return plan


def _initiator(bed: Bed, host: str, iqn: str, source: str, plan: LearnPlan) -> list[Edit]:
    """The host's initiator name on each array host entry for it that registers no IQN yet."""
    out: list[Edit] = []
    for a in bed.arrays:
        for h in a.hosts:
            if h.server == host and not any(str(i).lower().startswith("iqn.") for i in h.initiators):
                out.append(SetField(h, "initiators", [*h.initiators, iqn], owner=a.id))
                plan.changes.append(f"{a.id} host {h.name} initiators: + {iqn} (seen on {source})")
    return out
