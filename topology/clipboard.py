"""Copy and paste: components as project-file text, and that text back in with fresh ids.

The copied text loads on its own (the networks the copies use come along, references to
anything left behind are cleared); pasting renames what clashes with the bed (R710-1 ->
R710-3) and rewrites every reference to it, as one undoable step.
"""
from __future__ import annotations

import copy as _copy
import re
from collections.abc import Iterable

from topology.edits import Compound, Edit, InsertItem
from topology.errors import BedFileError
from topology.fileformat import dumps, loads
from topology.ids import SEP, endpoint_device, split_owner, taken_ids
from topology.index import BedIndex
from topology.model import VM, Bed, BedInfo, Chassis, Server, StorageArray, Switch
from topology.operations import Refused, clear_dangling, fresh_id, item_owner, ref_slots, top_items

CLIPBOARD_NAME = "Testbed Studio clipboard"
# the kinds of operations.POSITIONED: components with a canvas position in the model
_POSITIONED_TYPES = (Server, Switch, StorageArray, Chassis)
_ARRAY_LOCAL = {"disk_group", "pool", "controller", "local_volume", "host_group", "array_target"}


def copy(bed: Bed, ids: Iterable[str], positions: dict[str, tuple[float, float]] | None = None) -> str:
    """Project-file text holding copies of the selected components and the links among them.

    The text loads on its own: networks the copies use come along, and references to
    anything left behind are cleared.  `positions` supplies places for devices the model
    has not positioned (the canvas's automatic layout).
    """
    wanted = set(ids)
    clip = Bed(bed=BedInfo(name=CLIPBOARD_NAME))
    for name in ("chassis", "servers", "switches", "arrays", "vms"):
        setattr(clip, name, [_copy.deepcopy(c) for c in getattr(bed, name) if c.id in wanted])
    picked = {c.id for name in ("chassis", "servers", "switches", "arrays", "vms") for c in getattr(clip, name)}
    if not picked:
        raise Refused("Nothing to copy: select devices or VMs (the networks they use come along)")
    positioned: list[Server | Switch | StorageArray | Chassis] = [*clip.servers, *clip.switches, *clip.arrays,
                                                                  *clip.chassis]
    for dev in positioned:
        if (dev.x is None or dev.y is None) and positions and dev.id in positions:
            dev.x, dev.y = (round(float(v), 1) for v in positions[dev.id])

    clip.links = [_copy.deepcopy(lk) for lk in bed.links
                  if endpoint_device(lk.a) in picked and endpoint_device(lk.b) in picked]
    clip.paths = [_copy.deepcopy(p) for p in bed.paths
                  if {p.host, endpoint_device(p.initiator), endpoint_device(p.target)} <= picked]
    clip.virtual_switches = [_copy.deepcopy(v) for v in bed.virtual_switches if v.host in picked]
    used_networks = {p.network for dev in clip.servers for ad in dev.adapters for p in ad.ports}
    used_networks |= {p.network for dev in clip.arrays for c in dev.controllers for p in c.ports}
    used_networks |= {p.network for dev in clip.switches for p in dev.ports}
    used_networks |= {n.network for vm in clip.vms for n in vm.nics}
    clip.networks = [_copy.deepcopy(n) for n in bed.networks if n.id in used_networks or n.id in wanted]
    for network in clip.networks:
        network.routed_to = [r for r in network.routed_to if r in {n.id for n in clip.networks}]
    Compound(clear_dangling(clip, BedIndex(clip), None)).apply()
    return dumps(clip)


def paste(bed: Bed, text: str, offset: tuple[float, float] = (40.0, 40.0)) -> Edit:
    """Insert the clipboard's components with fresh ids, shifted by `offset`, as one step."""
    try:
        clip = loads(text)
    except BedFileError:
        raise Refused("The clipboard holds no test-bed components") from None
    taken = taken_ids(bed)
    rename: dict[str, str] = {}
    existing_networks = {n.id for n in bed.networks}
    networks = [n for n in clip.networks if n.id not in existing_networks]
    for name in ("chassis", "servers", "switches", "arrays", "vms"):
        for c in getattr(clip, name):
            if c.id in taken:
                rename[c.id] = _copy_name(c.id, taken)
            taken.add(rename.get(c.id, c.id))
    for n in networks:
        if n.id in taken:  # an id used by some other kind of component
            rename[n.id] = _copy_name(n.id, taken)
        taken.add(rename.get(n.id, n.id))
    for vs in clip.virtual_switches:
        host_new = rename.get(vs.host, vs.host)
        new = vs.id
        if vs.id.startswith(vs.host + "/"):
            new = host_new + vs.id[len(vs.host):]
        if new in taken:
            new = _copy_name(new, taken)
        if new != vs.id:
            rename[vs.id] = new
        taken.add(new)
    _rename_everywhere(clip, rename)
    dx, dy = offset
    edits: list[Edit] = []
    for name, items in (("networks", networks), ("chassis", clip.chassis), ("servers", clip.servers),
                        ("switches", clip.switches), ("arrays", clip.arrays), ("vms", clip.vms),
                        ("virtual_switches", clip.virtual_switches), ("links", clip.links),
                        ("paths", clip.paths)):
        for item in items:
            if isinstance(item, _POSITIONED_TYPES) and item.x is not None and item.y is not None:
                item.x, item.y = round(item.x + dx, 1), round(item.y + dy, 1)
            edits.append(InsertItem(getattr(bed, name), item, owner=item_owner(item)))
    count = sum(len(getattr(clip, n)) for n in ("chassis", "servers", "switches", "arrays", "vms"))
    if not edits:
        raise Refused("The clipboard holds no test-bed components")
    return Compound(edits, f"Paste {count} component{'s' if count != 1 else ''}")


def pasted_ids(edit: Edit) -> list[str]:
    """The component ids a paste inserts (the canvas selects them)."""
    out = []
    for e in getattr(edit, "edits", []):
        if isinstance(e, InsertItem) and isinstance(e.item, (Server, Switch, StorageArray, Chassis, VM)):
            out.append(e.item.id)
    return out


def _rename_everywhere(clip: Bed, rename: dict[str, str]) -> None:
    if not rename:
        return

    def mapped(v: str) -> str:
        if v in rename:
            return rename[v]
        head, tail = split_owner(v)
        return f"{rename[head]}{SEP}{tail}" if SEP in v and head in rename else v

    for _coll, item in top_items(clip):
        if getattr(item, "id", None) in rename:
            item.id = rename[item.id]
        for obj, fp, _array, _c in ref_slots(item):
            if fp.meta["ref"] in _ARRAY_LOCAL:
                continue
            v = getattr(obj, fp.attr)
            if fp.kind == "list":
                setattr(obj, fp.attr, [mapped(x) for x in v])
            elif v:
                setattr(obj, fp.attr, mapped(v))
    for lk in clip.links:
        lk.a, lk.b = mapped(lk.a), mapped(lk.b)
    for a in clip.arrays:
        for h in a.hosts:
            h.initiators = [mapped(i) for i in h.initiators]
    for sc in clip.scenarios:
        sc.placement = {mapped(k): mapped(v) for k, v in sc.placement.items()}


def _copy_name(ident: str, taken: set[str]) -> str:
    """R710-1 -> R710-3 when R710-1 and R710-2 exist; MD3000i -> MD3000i-2."""
    m = re.match(r"^(.*)-(\d+)$", ident)
    base, first = (m.group(1), 1) if m else (ident, 2)
    return fresh_id(base, taken, first=first)
