"""The disk a load step reads and writes: a workload aimed at a volume (`targets: [ARRAY:VOLUME]`) runs
on the volume's own disk, which the step selects on its machine at run time by the identity the bed
states for the volume (WWN, serial, or target and LUN: `topology/volume_identity.py`), never by a
device name typed into the tool's parameters.  A load that writes to a whole disk (fio with writes in
its mix on a volume's raw disk, or on a `/dev/...` file name) is a step that writes to a disk: it is
guarded, confirmed and listed as such, and one that cannot name its disk by identity is done by hand."""
from __future__ import annotations

import re
from typing import Any

from topology.index import servers_behind_mapping_targets
from topology.methodology.context import BedContext
from topology.methodology.domains.storage import (
    ARRAY_NAMES,
    VOLUME_FIELDS,
    array_values,
    identity_values,
    volume_values,
)
from topology.methodology.values import Values, as_bool, as_number, as_text, field_names, put

# fio's --rw modes that write (trim discards blocks: as destructive as a write)
_FIO_WRITES = {"write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite", "randtrimwrite"}

LOAD_DISK_NAMES = ARRAY_NAMES | field_names("volume", *VOLUME_FIELDS) | field_names(
    "workload", "writes_disk", "on_volume", "volume_note", "disk_write_note")


def _may_name_a_device(filename: str) -> bool:
    """Whether fio's `filename` may reach a block device: fio takes several names split by ':' (a literal
    colon is written '\\:'), and the kernel takes /dev however it is written (//dev/sdb, /./dev/sdb,
    /proc/self/root/dev/sdb); a name with '..' lands where the directory fio starts in says."""
    for name in re.split(r"(?<!\\):", filename):
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts or (name.startswith("/") and parts[:1] in (["dev"], ["proc"])):
            return True
    return False


def _lun_for(members: dict, a: Any, volume: str, machine: str) -> int | None:
    for m in a.mappings:
        if m.volume == volume and machine in members.get(m.to, []) and isinstance(m.lun, int):
            return m.lun
    return None


def _mapped_to(members: dict, a: Any, volume: str, machine: str) -> bool:
    return any(m.volume == volume and machine in members.get(m.to, []) for m in a.mappings)


def load_disk_values(ctx: BedContext, w: Any, machine: str, vals: Values) -> Values:
    """The values of the disk workload `w` runs on when `machine` runs it (added to a load item's `vals`):
    the volume's identity when `w` aims at one volume mapped to `machine` that holds no file system of the
    bed's (no `drive:`, not reused), and `workload.writes_disk` when the load writes to a whole disk."""
    out: Values = {}
    volumes = [ctx.idx.volumes[t] for t in w.targets if isinstance(t, str) and t in ctx.idx.volumes]
    # array host or group -> the machines behind it, once per array the workload aims at
    members = {a.id: servers_behind_mapping_targets(a) for a, _ in volumes} if machine else {}
    mine = [(a, v) for a, v in volumes if machine and _mapped_to(members[a.id], a, v.name, machine)]
    raw = [(a, v) for a, v in mine if not v.drive and not v.reuse]
    if len(raw) == 1:
        a, v = raw[0]
        out.update(array_values(ctx, a))
        out.update(volume_values(ctx, a, v, False, None))
        lun = _lun_for(members[a.id], a, v.name, machine)
        if lun is not None:
            put(out, "volume.lun", as_number(lun, f"{a.id}.mappings"))
        elif (other := out.get("volume.lun")) is not None and other.kind == "number":
            # the number another machine's mapping states: on this one the LUN may be any other
            del out["volume.lun"]
        identity_values(ctx, out, a, v, lun)
    put(out, "workload.on_volume", as_bool(len(raw) == 1, f"{w.id}.targets"))
    if len(raw) > 1:
        put(out, "workload.volume_note", as_text(
            f"it aims at {len(raw)} volumes of {machine} and a load step runs on one disk: give each volume a "
            "workload of its own", f"{w.id}.targets"))
    elif volumes and not mine and machine:
        names = ", ".join(f"{a.id}:{v.name}" for a, v in volumes)
        one = len(volumes) == 1
        put(out, "workload.volume_note", as_text(
            f"{names} {'is' if one else 'are'} not mapped to {machine}, which cannot see "
            f"{'that LUN' if one else 'those LUNs'}: map it to {machine} on the array, or aim the workload at a "
            f"volume {machine} sees", f"{w.id}.targets"))
    mode = vals.get("workload.fio_rw")
    name = vals.get("workload.parameters.filename")
    on_device = bool(raw) or (name is not None and name.kind != "not_stated" and _may_name_a_device(name.text))
    # a mix the bed does not give may write: taken as one that does
    writes = str(w.tool).lower() == "fio" and (mode is None or mode.kind == "not_stated" or mode.text in _FIO_WRITES)
    put(out, "workload.writes_disk", as_bool(on_device and writes, f"{w.id}.access"))
    if raw and writes:
        put(out, "workload.disk_write_note", as_text(
            "its mix writes: it writes over the whole disk and refuses one that is mounted or holds a partition "
            "table, file system or LVM signature", f"{w.id}.access"))
    return out
