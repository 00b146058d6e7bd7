"""Subject ids: the one grammar for naming things in a bed, and finding a component by id.

Findings, selections, documented exceptions and edits all name things the same way:

    COMPONENT                 a server, switch, array, VM, network, cluster ... (ids are bed-wide unique)
    DEVICE:PORT               a port of a server, switch or array, or a VM's virtual NIC
    ARRAY:VOLUME              a volume (also a controller or an enclosure of the array)
    ARRAY:group:NAME          a disk group
    ARRAY:pool:NAME           a pool
    ARRAY:ENCLOSURE:SLOT      a drive slot

The component a subject belongs to is the text before the first colon; the device of a
link end or port is the text before the last colon (a bare device has none).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from topology.model import Bed

SEP = ":"
GROUP = "group"
POOL = "pool"

# Top-level collections whose members carry a bed-wide unique `id`, with the word a person uses.
COMPONENT_COLLECTIONS: tuple[tuple[str, str], ...] = (
    ("servers", "server"), ("switches", "switch"), ("arrays", "storage array"), ("vms", "VM"),
    ("networks", "network"), ("chassis", "chassis"), ("clusters", "cluster"),
    ("virtual_switches", "virtual switch"), ("workloads", "workload"), ("scenarios", "scenario"),
)
# The components a cable can end on or that sit on the diagram.
DEVICE_COLLECTIONS = ("servers", "switches", "arrays", "vms", "chassis", "networks")


# ----------------------------------------------------------------------------- formatting

def port_ref(device_id: str, port: str) -> str:
    return f"{device_id}{SEP}{port}"


def volume_ref(array_id: str, volume: str) -> str:
    return f"{array_id}{SEP}{volume}"


def container_ref(array_id: str, kind: str, name: str) -> str:
    """A disk group (kind "group") or a pool (kind "pool") of an array."""
    return f"{array_id}{SEP}{kind}{SEP}{name}"


def group_ref(array_id: str, name: str) -> str:
    return container_ref(array_id, GROUP, name)


def pool_ref(array_id: str, name: str) -> str:
    return container_ref(array_id, POOL, name)


def slot_ref(array_id: str, enclosure: str, slot: int) -> str:
    return f"{array_id}{SEP}{enclosure}{SEP}{slot}"


# ----------------------------------------------------------------------------- parsing

def split_owner(subject: str) -> tuple[str, str]:
    """('R710-1', 'SAN1') for 'R710-1:SAN1'; ('R710-1', '') for a component."""
    owner, _, rest = subject.partition(SEP)
    return owner, rest


def owner_of(subject: str) -> str:
    """The component a subject id belongs to: 'MD3000i' for 'MD3000i:group:SQL'."""
    return subject.partition(SEP)[0]


def split_endpoint(ref: str) -> tuple[str, str]:
    """('R710-1', 'SAN1') for a link end 'R710-1:SAN1'; ('', 'sw1') for a bare device."""
    device, _, port = ref.rpartition(SEP)
    return device, port


def endpoint_device(ref: str) -> str:
    """The device of a link end written DEVICE:PORT or DEVICE."""
    return ref.rpartition(SEP)[0] or ref


def parent_of(subject: str) -> str:
    """The subject one level up: 'MD3000i:E0:3' -> 'MD3000i:E0'; '' for a component."""
    return subject.rpartition(SEP)[0]


def leaf_name(ref: str) -> str:
    """The last part of an id: the volume name of 'MD3000i:Logs'."""
    return ref.rpartition(SEP)[2]


@dataclass(frozen=True)
class ArrayPart:
    """What the part after 'ARRAY:' names: kind is group, pool, slot, or "" for a plain name
    (a volume, port, controller or enclosure, which only the array itself can tell apart)."""
    kind: str
    name: str
    slot: tuple[str, int] | None = None


def parse_array_part(rest: str) -> ArrayPart:
    """'group:SQL' -> group SQL; 'E0:3' -> slot (E0, 3); 'Logs' -> plain name Logs."""
    head, sep, name = rest.partition(SEP)
    if sep and head in (GROUP, POOL):
        return ArrayPart(head, name)
    enclosure, sep, number = rest.rpartition(SEP)
    if sep and number.isdigit():
        return ArrayPart("slot", rest, (enclosure, int(number)))
    return ArrayPart("", rest)


# ----------------------------------------------------------------------------- finding

def components(bed: Bed, collections: tuple[str, ...] | None = None) -> Iterator[tuple[str, Any]]:
    """(kind word, component) for every top-level component (of the given collections)."""
    for attr, word in COMPONENT_COLLECTIONS:
        if collections is None or attr in collections:
            for c in getattr(bed, attr):
                yield word, c


def find_component(bed: Bed, ident: str, collections: tuple[str, ...] | None = None) -> tuple[str, Any] | None:
    """(kind word, component) for the component with this id, or None."""
    for word, c in components(bed, collections):
        if c.id == ident:
            return word, c
    return None


def find(bed: Bed, ident: str, collections: tuple[str, ...] | None = None) -> Any:
    """The component with this id (server, switch, array, VM, network, ...), or None."""
    hit = find_component(bed, ident, collections)
    return hit[1] if hit else None


def taken_ids(bed: Bed) -> set[str]:
    """Every id in the bed's one namespace (the loader refuses duplicates across kinds)."""
    return {c.id for _, c in components(bed)}
