"""How the storage tables describe drives: kinds, short slot labels, hot spares."""
from __future__ import annotations

from collections import defaultdict

from app.report.tables.values import gb, number, rpm
from topology.model import StorageArray
from topology.storage_ops import expand


def disks_by_interface(scope) -> dict[str, list]:
    by: dict[str, list] = defaultdict(list)
    for d in scope.disks.values():
        by[(d.spec.interface or d.spec.media).upper()].append(d)
    return by


def disk_kind(spec) -> str:
    parts = [gb(spec.size_gb), rpm(spec.rpm) if spec.media == "hdd" else "",
             (spec.interface or "").upper(), spec.media.upper() if spec.media != "hdd" else ""]
    return " ".join(p for p in parts if p)


def short_disk(spec) -> str:
    """'300G 15K' / '800G SSD': what fits under a slot number."""
    size = spec.size_gb
    text = f"{number(size / 1000)}T" if size >= 1000 else f"{number(size)}G"
    if spec.media != "hdd":
        return f"{text} {spec.media.upper()}"
    return f"{text} {spec.rpm / 1000:g}K" if spec.rpm else text


def spare_slots(a: StorageArray) -> set[tuple[str, int]]:
    return set(expand(a.spares))
