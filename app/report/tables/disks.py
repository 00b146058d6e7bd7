"""How the storage tables describe drives: kinds, short slot labels, hot spares."""
from __future__ import annotations

from collections import defaultdict

from app.report.tables.values import gb, number, rpm
from topology.model import StorageArray
from topology.storage_ops import expand
from topology.unknown import MARKER, NOT_STATED, stated


def disks_by_interface(scope) -> dict[str, list]:
    by: dict[str, list] = defaultdict(list)
    for d in scope.disks.values():
        by[(d.spec.interface or d.spec.media).upper() or MARKER].append(d)
    return by


def disk_kind(spec) -> str:
    parts = [gb(spec.size_gb), rpm(spec.rpm) if spec.media in ("hdd", NOT_STATED) else "",
             (spec.interface or "").upper(), spec.media.upper() if spec.media != "hdd" else ""]
    if NOT_STATED in (spec.media, spec.interface):
        parts.append(f"({'media' if spec.media is NOT_STATED else 'interface'} not stated)")
    return " ".join(p for p in parts if p)


def short_disk(spec) -> str:
    """'300G 15K' / '800G SSD': what fits under a slot number."""
    size = spec.size_gb
    text = "size not stated" if size is NOT_STATED else \
        f"{number(size / 1000)}T" if size >= 1000 else f"{number(size)}G"
    if spec.media is NOT_STATED:
        return text
    if spec.media != "hdd":
        return f"{text} {spec.media.upper()}"
    return f"{text} {spec.rpm / 1000:g}K" if stated(spec.rpm) else text


def spare_slots(a: StorageArray) -> set[tuple[str, int]]:
    return set(expand(a.spares))
