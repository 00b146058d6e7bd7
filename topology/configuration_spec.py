"""What a project file says about a software configuration of the bed's hardware.

A comparison study runs the same servers, switches and arrays under several configurations:
hypervisor A against hypervisor B, SR-IOV against paravirtual NICs, 4 active array ports
against 8.  A configuration names the components it changes and the fields it gives them;
everything else is the bed as drawn.  `topology.configurations` turns one into a view of the
bed (the bed as it stands in that configuration) and checks what a file writes here.

The field hints are read in `topology.model`'s namespace (see `topology.field_plan`), which
imports this class, so `HostAccess` needs no import at run time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topology.fields import fld, lst, mapping

if TYPE_CHECKING:
    from topology.model import HostAccess


@dataclass(slots=True, kw_only=True)
class Configuration:
    id: str = fld(path_part=True, doc="name of the configuration, e.g. hyperv or esxi-5.5")
    description: str = fld("", doc="what the configuration is, as a report's table heads it")
    overrides: dict[str, dict[str, Any]] = mapping(
        "component (SERVER, VM, DEVICE:PORT, ARRAY:VOLUME, ARRAY:group:NAME, ARRAY:pool:NAME ...) -> the "
        "fields it has in this configuration; a mapping field (settings, bios, offloads) is merged key by "
        "key, a key set to null is taken out; a list of parts (a VM's disks or nics, an array's volumes, "
        "hosts or mappings) given in full replaces the drawn one; null resets any other field to empty",
        key="set")
    excluded: list[str] = lst("components and ports not in use in this configuration (inactive ports, "
                              "switched-off hosts, workloads it does not run)", ref="component", flow=True)
    access: list[HostAccess] = lst("how a run reaches a host in this configuration (replaces the "
                                   "bed's entry for that host: another OS, another transport)")
    note: str = fld("")
