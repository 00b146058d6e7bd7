"""How each model field is read and written: its YAML key, kind (text, number, list of
components ...), default and metadata, worked out once per class from the dataclass
declarations in `topology.model`.  The loader, the saver and the operations share it."""
from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from topology import model

_T = TypeVar("_T")


def cache_by_class(fn: Callable[[type], _T]) -> Callable[[type], _T]:
    """functools.cache for a function of a class.  Typed as a plain function because mypy
    takes a class object (`type(obj)`) for unhashable against the cache wrapper's signature."""
    return cache(fn)


@dataclasses.dataclass(frozen=True)
class FieldPlan:
    attr: str
    key: str
    kind: str            # str int float bool any list dict dc opt-*
    inner: Any           # nested class or inner kind
    required: bool
    default: Any
    meta: dict


def _kind_of(tp: Any) -> tuple[str, Any, bool]:
    """(kind, inner, optional) for a type hint."""
    optional = False
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:  # Optional[X] and X | None
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = True
        tp = args[0]
        origin = typing.get_origin(tp)
    if origin is list:
        (inner,) = typing.get_args(tp)
        ik = _kind_of(inner)[0]
        return "list", (ik, inner), optional
    if origin is dict:
        return "dict", typing.get_args(tp)[1], optional
    if dataclasses.is_dataclass(tp):
        return "dc", tp, optional
    return {str: "str", int: "int", float: "float", bool: "bool"}.get(tp, "any"), tp, optional


@cache_by_class
def plan(cls: type) -> tuple[FieldPlan, ...]:
    hints = typing.get_type_hints(cls, vars(model))
    out = []
    for f in dataclasses.fields(cls):
        kind, inner, _ = _kind_of(hints[f.name])
        if f.default is not dataclasses.MISSING:
            default, required = f.default, False
        elif f.default_factory is not dataclasses.MISSING:
            default, required = f.default_factory(), False
        else:
            default, required = None, True
        meta = dict(f.metadata)
        out.append(FieldPlan(f.name, meta.get("key") or f.name, kind, inner, required, default, meta))
    return tuple(out)

