"""Project files of an older format version, brought up to the current one on load: one
function per version step, registered in MIGRATIONS (from-version -> function)."""
from __future__ import annotations

from collections.abc import Callable


def _migrate_0_to_1(data: dict) -> dict:
    """Draft files (format 0) gave VM memory in MB as ``memory_mb``."""
    for vm in data.get("vms") or []:
        if isinstance(vm, dict) and "memory_mb" in vm and "memory_gb" not in vm:
            mb = vm.pop("memory_mb")
            if isinstance(mb, (int, float)) and not isinstance(mb, bool):
                gb = mb / 1024
                vm["memory_gb"] = int(gb) if gb == int(gb) else gb
            else:
                vm["memory_gb"] = mb
    data["format_version"] = 1
    return data


MIGRATIONS: dict[int, Callable[[dict], dict]] = {0: _migrate_0_to_1}


def migrate(data: dict) -> dict:
    version = data.get("format_version")
    while version in MIGRATIONS:
        data = MIGRATIONS[version](data)
        version = data.get("format_version")
    return data
