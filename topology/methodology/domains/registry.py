"""Domains: what a template's `foreach` names.  A domain turns the bed into items, one per bed object.

Each domain declares the value names it can give; templates are checked against them when they are
loaded, so a misspelt `{port.ipp}` is an error naming the file and line.  A declared value may still
be absent for a given item, which is what «missing: …» marks.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from topology.methodology.context import BedContext
from topology.methodology.domains.bed_wide import BED_WIDE_NAMES
from topology.methodology.values import Values

GLOBAL_NAMES = BED_WIDE_NAMES
# free-form mappings: any key below these prefixes is accepted
WILDCARDS = ("host.settings.", "server.settings.", "array.attributes.", "switch.settings.", "cluster.settings.",
             "workload.parameters.", "scenario.settings.", "volume.settings.")


@dataclass(slots=True)
class Item:
    """One bed object a template step is applied to."""
    values: Values
    target: str
    platform: str
    group: tuple
    sub: int
    # the storage transports this item is about (a path's own kind); empty: those of its target machine
    transports: tuple[str, ...] = ()
    # the run section: where in the test the item is (phase, scenario, level, repetition), recorded with
    # each result, and the heading printed where a new part of the test begins
    position: dict | None = None
    heading: str = ""


@dataclass(frozen=True)
class Domain:
    name: str
    names: frozenset
    build: Callable[[BedContext], list[Item]]
    doc: str


DOMAINS: dict[str, Domain] = {}


def domain(name: str, names: set[str], doc: str):
    """Register the decorated builder as the domain `name`, giving `names` and the bed-wide values."""
    def register(fn: Callable[[BedContext], list[Item]]):
        DOMAINS[name] = Domain(name, frozenset(names | GLOBAL_NAMES), fn, doc)
        return fn
    return register


def domain_reference() -> str:
    """Every foreach domain and the values it gives: the reference for template authors."""
    out = []
    for name in sorted(DOMAINS):
        d = DOMAINS[name]
        own = sorted(n for n in d.names if n not in GLOBAL_NAMES)
        out.append(f"{name}: {d.doc}\n    " + ", ".join(own))
    out.append("everywhere: " + ", ".join(sorted(GLOBAL_NAMES)))
    out.append("free-form: " + ", ".join(w + "KEY" for w in WILDCARDS))
    return "\n".join(out)
