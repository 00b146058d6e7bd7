"""A value the source does not state: one marker in the file, one object in memory.

Published reports leave values out (a disk's size, a VM's memory, a port's MTU).  Writing a
guess would print as fact, so the project file says so instead, in any field that holds a
value (not an id, a name or a link end): the plain YAML scalar ``not stated``::

    memory_gb: not stated
    flow_control: not stated
    bios: {sriov: not stated}        # inside free-form settings too

Loaded, the marker is the single object `NOT_STATED`.  It is falsy and behaves as empty text
for string operations, so code that treats an empty field as "unknown" keeps doing so; it
prints as "not stated"; it equals only itself and survives copy and pickle as itself.  Code
that needs the value (arithmetic, comparisons, a rule's judgement) asks `is_not_stated` or
takes `stated(value)` (None when not stated) and says it could not judge, never a number.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

MARKER = "not stated"

_T = TypeVar("_T")


class NotStated(str):
    """The type of `NOT_STATED` (one instance).  A str subclass holding "" so string methods
    on a not-stated text field behave as on an empty one; shown as "not stated"."""
    __slots__ = ()
    _instance: NotStated | None = None

    def __new__(cls) -> NotStated:
        if cls._instance is None:
            cls._instance = super().__new__(cls, "")
        return cls._instance

    def __str__(self) -> str:
        return MARKER

    def __repr__(self) -> str:
        return "NOT_STATED"

    def __format__(self, spec: str) -> str:
        try:
            return format(MARKER, spec)
        except ValueError:   # a number's format (":g", ".1f") on a value that has none
            return MARKER

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    def __hash__(self) -> int:
        return hash(MARKER) ^ 0x5F3759DF

    def __reduce__(self) -> str:
        return "NOT_STATED"         # pickled by name: unpickling gives the one instance back

    def __copy__(self) -> NotStated:
        return self

    def __deepcopy__(self, memo: Any) -> NotStated:
        return self


# Typed Any: the marker sits in fields declared `int | None`, `str`, `list[str]` ..., and code tests
# `value is NOT_STATED` where the declared type cannot say so.
NOT_STATED: Any = NotStated()


def is_not_stated(value: Any) -> bool:
    """Whether a field (or a free-form setting) is marked "not stated in the source"."""
    return value is NOT_STATED


def stated(value: _T | NotStated | None) -> _T | None:
    """The value, or None when the source does not state it: `stated(s.memory_gb)` is a number or None."""
    return None if value is NOT_STATED else value  # type: ignore[return-value]


def stated_sum(values: Iterable[float | None]) -> float:
    """The sum of the numbers among `values`: None (not given) and the marker are left out."""
    return sum(v for v in values if v is not None and v is not NOT_STATED)


def as_plain_data(value: Any, _seen: dict[int, Any] | None = None) -> Any:
    """A value for a YAML or JSON writer: the marker as its plain text, in nested lists and mappings
    too.  A container without the marker is returned as it is, and one shared in several places
    stays shared (the saver writes it once, with an alias)."""
    if value is NOT_STATED:
        return MARKER
    if not isinstance(value, (dict, list)):
        return value
    seen = {} if _seen is None else _seen
    done = seen.get(id(value))
    if done is not None:
        return done
    if isinstance(value, dict):
        items = {k: as_plain_data(v, seen) for k, v in value.items()}
        out: Any = value if all(items[k] is v for k, v in value.items()) else items
    else:
        listed = [as_plain_data(v, seen) for v in value]
        out = value if all(a is b for a, b in zip(listed, value, strict=True)) else listed
    seen[id(value)] = out
    return out


def text_or_marker(value: Any, empty: str = "") -> str:
    """A field as text for a table or a label: "not stated" for the marker, `empty` for nothing."""
    if value is NOT_STATED:
        return MARKER
    if value is None or value == "":
        return empty
    return str(value)


# ------------------------------------------------------------------ which fields take it

# Whole classes that hold the lab's own decisions, not facts a source reports: a scenario,
# an exception, the validation policy and remote access are always stated.
_ALWAYS_STATED_CLASSES = frozenset({"Scenario", "ExceptionRecord", "Policy", "HostAccess"})
_SCALAR_KINDS = ("str", "int", "float", "bool")


def accepts_not_stated(cls: type, fp: Any) -> bool:
    """Whether field `fp` (a `topology.field_plan.FieldPlan`) of `cls` may be "not stated".

    Values may: text, numbers, true/false, choices, and lists of them.  Ids and names, the
    fields that name what a link, path or mapping joins (`stated=True` in the model), nested
    components and free-form mappings (mark a setting inside one instead) may not."""
    if fp.meta.get("may_be_unstated"):
        return True
    if cls.__name__ in _ALWAYS_STATED_CLASSES or fp.meta.get("stated") or fp.meta.get("path_part"):
        return False
    if fp.attr in ("id", "name", "format_version"):
        return False
    if fp.kind in _SCALAR_KINDS:
        return True
    return fp.kind == "list" and fp.inner[0] in _SCALAR_KINDS


def not_stated_fields(obj: Any) -> list[str]:
    """The names of `obj`'s fields that are marked not stated, in declaration order."""
    from topology.field_plan import plan  # the plan reads the model; this module is below both
    return [fp.attr for fp in plan(type(obj)) if getattr(obj, fp.attr, None) is NOT_STATED]


def refusal(kind: str, meta: dict, path: tuple) -> tuple[str, str]:
    """(message, hint) for the marker where the loader cannot take it: `kind` is the field's kind,
    or "item" for one item of a list."""
    key = next((p for p in reversed(path) if isinstance(p, str)), "this field")
    if kind == "item":
        return (f"an item of {key} cannot be {MARKER!r}",
                f"write `{key}: {MARKER}` for the whole list, or leave the item out")
    if kind in ("dict", "dc") or meta.get("items_are_components"):
        return (f"{key} cannot be {MARKER!r} as a whole",
                f"leave it out, or write {MARKER!r} for the values inside it that the source does not give")
    return (f"{key} cannot be {MARKER!r}: it names or joins components, or is the lab's own setting",
            "write the name the source uses; ids, names, link ends, scenarios and access are always stated")
