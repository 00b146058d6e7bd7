"""The model catalogue: what a model of array, switch, blade chassis or server holds, as its
documentation says (`resources/models/catalogue.yaml`, each limit with its source).

The LIM rules ask `limit(kind, model, field)` when the bed gives no limit of its own: a bed
value always wins, and a limit no source states is `not stated` here too (the rule then
says nothing from the catalogue).  An entry is chosen by its `match` pattern, searched
case-insensitively in the component's `model:`; the first entry that matches wins.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from topology.unknown import MARKER, NOT_STATED

CATALOGUE_FILE = Path(__file__).resolve().parent.parent / "resources" / "models" / "catalogue.yaml"
# the limits each kind of entry may give, and the word a message uses for the kind
LIMITS: dict[str, tuple[str, ...]] = {
    "arrays": ("controllers", "max_drives", "enclosure_slots", "host_ports_per_controller",
               "cache_gb_per_controller"),
    "switches": ("ports",),
    "chassis": ("bays",),
    "servers": ("sockets", "drive_bays"),
}
_OTHER_KEYS = frozenset({"name", "match", "note", "sources", "searched"})


class CatalogueError(ValueError):
    """The catalogue file breaks its own rules (a limit with no source, an unknown field)."""


@dataclass(frozen=True)
class Source:
    title: str
    url: str
    gives: tuple[str, ...]
    says: str


@dataclass(frozen=True)
class ModelEntry:
    kind: str
    name: str
    pattern: re.Pattern[str]
    limits: dict[str, Any] = field(hash=False)
    sources: tuple[Source, ...] = ()
    note: str = ""
    searched: str = ""

    def limit(self, name: str) -> Any:
        """The limit, NOT_STATED where no source states it."""
        return self.limits.get(name, NOT_STATED)

    def source_of(self, name: str) -> Source | None:
        return next((s for s in self.sources if name in s.gives), None)


def entries(path: Path = CATALOGUE_FILE) -> tuple[ModelEntry, ...]:
    return _read(str(path))


@cache
def _read(path: str) -> tuple[ModelEntry, ...]:
    with open(path, encoding="utf-8") as fh:
        data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(data, dict) or set(data) - set(LIMITS):
        raise CatalogueError(f"{path}: the catalogue is a mapping of {', '.join(LIMITS)}")
    out: list[ModelEntry] = []
    for kind, items in data.items():
        for item in items or ():
            out.append(_entry(path, kind, item))
    return tuple(out)


def _entry(path: str, kind: str, item: dict) -> ModelEntry:
    name = str(item.get("name", ""))
    where = f"{path}: {kind} entry {name or '(no name)'}"
    unknown = set(item) - _OTHER_KEYS - set(LIMITS[kind])
    if not name or "match" not in item or unknown:
        raise CatalogueError(f"{where}: needs name and match" + (f"; unknown fields {sorted(unknown)}" if unknown
                                                                 else ""))
    sources = tuple(Source(str(s.get("title", "")), str(s.get("url", "")), tuple(s.get("gives") or ()),
                           str(s.get("says", ""))) for s in item.get("sources") or ())
    limits: dict[str, Any] = {}
    for key in LIMITS[kind]:
        value = item.get(key, MARKER)
        if value == MARKER:
            limits[key] = NOT_STATED
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CatalogueError(f"{where}: {key} is a whole number or 'not stated', not {value!r}")
        if not any(key in s.gives for s in sources):
            raise CatalogueError(f"{where}: {key} = {value} has no source that gives it")
        limits[key] = value
    if not sources and not item.get("searched"):
        raise CatalogueError(f"{where}: with no source, say what was searched (searched:)")
    return ModelEntry(kind, name, re.compile(str(item["match"]), re.IGNORECASE), limits, sources,
                      str(item.get("note", "")), str(item.get("searched", "")))


def find(kind: str, model: Any) -> ModelEntry | None:
    """The catalogue entry for a component's model (kind: arrays, switches, chassis, servers), or None."""
    if not isinstance(model, str) or not model or model is NOT_STATED:
        return None
    return _find(kind, model)


@cache
def _find(kind: str, model: str) -> ModelEntry | None:
    return next((e for e in entries() if e.kind == kind and e.pattern.search(model)), None)


def limit(kind: str, model: Any, name: str) -> tuple[int, ModelEntry] | None:
    """(the limit, its entry) where the catalogue knows the model and a source states the limit."""
    entry = find(kind, model)
    if entry is None:
        return None
    value = entry.limit(name)
    return None if value is NOT_STATED else (value, entry)
