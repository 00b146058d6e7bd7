"""Find in a bed: which components (and ports) an id, a name, an address or a note matches.

Used by the designer's Find bar and the component tree's filter.  A match names the
subject to select (a component id, or DEVICE:PORT for a port, so that the port itself is
highlighted) and says where the text was found ("port SAN1 address 10.0.0.11/24").  A text with
a colon also matches the ids the application prints for parts (`R720:SAN1`, `MD3000i:Logs`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from topology.ids import SEP, components, port_ref
from topology.model import Bed, Port, VNic, Volume

# the text fields a person searches for; everything else (models, firmware) is detail
SEARCHED = ("id", "name", "address", "management_address", "note", "label", "description", "wwpn", "model",
            "os", "ip")
SNIPPET = 60


@dataclass(frozen=True, slots=True)
class Match:
    subject: str          # what to select: a component id or DEVICE:PORT
    component: str        # the top-level component it belongs to
    kind: str             # "server", "switch", ... (the component's word)
    where: str            # "port SAN1 address", "note"
    text: str             # the matched value, cut to a line

    def describe(self) -> str:
        return f"{self.component} ({self.kind}) — {self.where}: {self.text}"


def _snippet(value: str, needle: str) -> str:
    line = next((ln for ln in value.splitlines() if needle in ln.lower()), value.splitlines()[0] if value else "")
    if len(line) <= SNIPPET:
        return line
    start = max(0, min(line.lower().find(needle) - SNIPPET // 3, len(line) - SNIPPET))
    cut = line[start:start + SNIPPET]
    return ("…" if start else "") + cut + ("…" if start + SNIPPET < len(line) else "")


def _walk(obj: Any, path: str, depth: int = 0) -> Iterator[tuple[Any, str, str, str]]:
    """(object, path words, field, text) for every searched text field below `obj`."""
    if depth > 4 or not dataclasses.is_dataclass(obj):
        return
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name, None)
        if isinstance(value, str):
            if f.name in SEARCHED and value:
                yield obj, path, f.name, value
        elif isinstance(value, list):
            for item in value:
                if dataclasses.is_dataclass(item):
                    label = getattr(item, "name", "") or getattr(item, "id", "")
                    word = type(item).__name__.lower()
                    yield from _walk(item, f"{path} {word} {label}".strip(), depth + 1)
        elif dataclasses.is_dataclass(value):
            yield from _walk(value, f"{path} {f.name}".strip(), depth + 1)


def find_in_bed(bed: Bed, text: str, limit: int = 500) -> list[Match]:
    """Every place `text` occurs (case-insensitive), components in bed order, one match per
    subject and field.  An empty text matches nothing."""
    needle = text.strip().lower()
    if not needle:
        return []
    out: list[Match] = _port_refs(bed, needle)      # 'R710:SAN': the start of each part
    named = {m.subject for m in out}
    whole_ids = SEP in needle       # 'R720:SAN1', as the application prints a port, volume or vNIC
    for word, comp in components(bed):
        for obj, path, field, value in _walk(comp, ""):
            if whole_ids and field == "name" and obj is not comp:
                value = f"{comp.id}{SEP}{value}"
            if needle not in value.lower():
                continue
            subject = port_ref(comp.id, obj.name) if isinstance(obj, (Port, VNic, Volume)) and obj.name else comp.id
            where = f"{path} {field}".strip() if field != "id" or path else "id"
            if field == "name" and subject in named:
                continue        # the port a DEVICE:PORT text named, already first
            out.append(Match(subject, comp.id, word, where, _snippet(value, needle)))
            if len(out) >= limit:
                return out
    return out


def _port_refs(bed: Bed, needle: str) -> list[Match]:
    """The ports a `DEVICE:PORT` text names: the device's id and the port's name, each equal to
    its part or starting with it; exact names first."""
    device, sep, port = needle.rpartition(SEP)
    if not sep or not device or not port:
        return []
    found: list[tuple[int, Match]] = []
    for word, comp in components(bed):
        ident = comp.id.lower()
        if not ident.startswith(device):
            continue
        for obj, path, field, value in _walk(comp, ""):
            if field != "name" or not isinstance(obj, Port) or not value.lower().startswith(port):
                continue
            exact = (ident == device) + (value.lower() == port)
            ref = port_ref(comp.id, obj.name)
            found.append((-exact, Match(ref, comp.id, word, f"{path} {field}".strip(), ref)))
    found.sort(key=lambda pair: pair[0])
    return [m for _, m in found]


def matching_components(bed: Bed, text: str) -> set[str]:
    """The top-level component ids that `text` matches anywhere (the tree filter)."""
    return {m.component for m in find_in_bed(bed, text, limit=100_000)}
