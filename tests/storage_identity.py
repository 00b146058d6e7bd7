"""Beds whose volumes carry the identity a lab learns from its hosts (issue 28's as-built check
writes them): a WWN and a serial on every volume, so the storage steps that write to a disk get
their commands, and the script checks see them; and the file system the lab chose for each volume
(`file_system`: a step that makes one is done by hand while the bed states none)."""
from __future__ import annotations

from topology.model import Bed


def with_identities(bed: Bed, wwn: bool = True, serial: bool = True, file_system: str = "ext4") -> Bed:
    """`bed` with a distinct NAA WWN (32 hex digits) and serial on every volume of every array, and
    `file_system` where the volume states none (ext4: every Linux release the templates know makes it)."""
    for i, a in enumerate(bed.arrays):
        for j, v in enumerate(a.volumes):
            if file_system and not v.file_system:
                v.file_system = file_system
            if wwn:
                v.wwn = f"naa.6{i:03x}{j:012x}{'0' * 15}1"
            if serial:
                v.serial = f"SN{i:02d}{j:05d}"
    return bed
