"""Declarative field helpers shared by the model, the file format and the JSON Schema.

A model class is a plain dataclass; each field carries metadata saying how it is
written in the project file (its YAML key, the allowed values, the kind of component
it refers to, a lower bound).  The loader, the saver and the schema generator all read
this one description, so the three can never disagree.
"""
from __future__ import annotations

import dataclasses
from typing import Any

# Reference kinds: the loader checks that a field with ref=KIND names an existing
# component of that kind.  "port" references are written DEVICE:PORT.
REF_KINDS = (
    "server", "switch", "array", "network", "port", "device", "chassis",
    "volume", "cluster", "vm", "vswitch", "workload", "scenario", "component",
    "disk_group", "pool", "host_group", "array_host", "controller", "enclosure",
    "target", "local_volume", "array_target",
)


# Bounds for number fields that declare none: sizes in GB, IOPS and thresholds fit easily,
# and no value can overflow a float conversion, a timer or a range further on.
DEFAULT_MAXIMUM = {"int": 1_000_000_000, "float": 1e15}
# Ids that become folder or file names: no separators, no control characters, not . or ..; no ':'
# (it joins a device to its ports in subject ids) and no space at either end (topology/names.py)
PATH_PART_PATTERN = r"^(?!\.\.?$)(?!\s)[^/\\:\x00-\x1f\x7f]+(?<!\s)$"


def fld(default: Any = dataclasses.MISSING, *, doc: str = "", ref: str | None = None,
        choices: tuple[str, ...] | None = None, minimum: float | None = None,
        maximum: float | None = None, key: str | None = None, factory: Any = dataclasses.MISSING,
        flow: bool = False, pattern: str | None = None, path_part: bool = False, stated: bool = False,
        may_be_unstated: bool = False) -> Any:
    """A model field.

    doc      -- one line for the JSON Schema and the format reference
    ref      -- the value (or each list item) names a component of this kind
    choices  -- allowed string values
    minimum  -- lower bound for numbers (sizes and counts are never negative)
    maximum  -- upper bound for numbers; a number field without one is bounded by
                DEFAULT_MAXIMUM (no value from a file may be unbounded)
    pattern  -- regular expression a text value must match as a whole
    path_part -- the id becomes a folder or file name (run output, local host folders)
    stated   -- names what a link, path or mapping joins: never "not stated" (`topology.unknown`)
    may_be_unstated -- takes "not stated" although its class is always stated (a scenario's VMs)
    key      -- YAML key when it differs from the attribute name
    flow     -- write this list/mapping on one line in the project file
    """
    if ref is not None and ref not in REF_KINDS:
        raise ValueError(f"unknown reference kind {ref!r}")
    meta = {"doc": doc, "ref": ref, "choices": choices, "minimum": minimum, "maximum": maximum,
            "key": key, "flow": flow, "pattern": pattern, "path_part": path_part,
            "stated": stated, "may_be_unstated": may_be_unstated}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def lst(doc: str = "", **kw: Any) -> Any:
    """A list field that defaults to empty."""
    return fld(doc=doc, factory=list, **kw)


def mapping(doc: str = "", **kw: Any) -> Any:
    """A free-form mapping (string keys) that defaults to empty."""
    return fld(doc=doc, factory=dict, **kw)
