"""Beds whose values the source does not state: every field that takes the marker holds it."""
from __future__ import annotations

import dataclasses
from typing import Any

from topology.field_plan import plan
from topology.model import Bed
from topology.unknown import NOT_STATED, accepts_not_stated


def mark_everything_not_stated(obj: Any) -> int:
    """Set every field of `obj` (and of the components in it) that may be "not stated" to the marker,
    and every free-form setting's value too; the number of values marked."""
    n = 0
    for fp in plan(type(obj)):
        v = getattr(obj, fp.attr)
        if accepts_not_stated(type(obj), fp):
            setattr(obj, fp.attr, NOT_STATED)
            n += 1
        elif fp.kind == "dc" and v is not None:
            n += mark_everything_not_stated(v)
        elif fp.kind == "list" and fp.inner[0] == "dc":
            for item in v:
                n += mark_everything_not_stated(item)
        elif fp.kind == "dict" and fp.inner is not str:
            for k in v:
                v[k] = NOT_STATED
                n += 1
    return n


def everything_not_stated(bed: Bed) -> Bed:
    """A copy of `bed` whose every value is "not stated": only ids, names and what joins them stay."""
    out = dataclasses.replace(bed)
    import copy
    out = copy.deepcopy(bed)
    mark_everything_not_stated(out)
    return out
