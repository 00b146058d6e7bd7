"""The references in a bed (a link end, a VM's host, a mapping's volume) and whether each
names something: the loader's own check, which `topology.fileformat.check_references`
words as messages and the edit operations reuse.

A 2,000-host bed holds about 80,000 references among 100,000 objects.  Walking it with the
field plans costs a `getattr` and a few tests per field of every object; instead each model
class gets generated code that reads only its reference fields and descends only into the
fields whose classes can hold a reference, in the plan's order (so problems come out in the
order of the file).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from topology import model
from topology.field_plan import cache_by_class, plan
from topology.index import BedIndex

# reference kinds that name an entry of one of the index's tables
_TABLES = {"server": "servers", "switch": "switches", "array": "arrays", "network": "networks",
           "chassis": "chassis", "cluster": "clusters", "vm": "vms", "workload": "workloads",
           "scenario": "scenarios", "vswitch": "vswitches", "volume": "volumes"}


def walk_refs(obj: Any, path: tuple = (), array: Any = None) -> Iterator[tuple[tuple, Any, str, Any]]:
    """Yield (path, value, ref_kind, array) for every reference field in the model."""
    if isinstance(obj, model.StorageArray):
        array = obj
    elif isinstance(obj, model.ArrayGroup):     # its volumes, pools and hosts are named within the group
        array = model.StorageArray(id=obj.name)
    for fp in plan(type(obj)):
        v = getattr(obj, fp.attr)
        ref = fp.meta.get("ref")
        if ref:
            if fp.kind == "list":
                for i, item in enumerate(v):
                    if item:
                        yield path + (fp.key, i), item, ref, array
            elif v:
                yield path + (fp.key,), v, ref, array
        elif fp.kind == "dc" and v is not None:
            yield from walk_refs(v, path + (fp.key,), array)
        elif fp.kind == "list" and fp.inner[0] == "dc":
            for i, item in enumerate(v):
                yield from walk_refs(item, path + (fp.key, i), array)


def resolves(idx: BedIndex, kind: str, value: str, array: Any) -> bool:
    """Whether a reference of `kind` names something in the bed (the loader's own check)."""
    table = _TABLES.get(kind)
    if table is not None:
        return value in getattr(idx, table)
    if kind == "port":
        return idx.port(value) is not None
    if kind == "component":
        return value in idx.components or idx.port(value) is not None or _array_part(idx, value)
    if kind == "target":
        return value in idx.components or value in idx.volumes
    if kind == "device":
        return value in idx.components
    scope = idx.scopes.get(array.id) if array is not None else None
    if scope is None:
        return False
    if kind == "disk_group":
        return value in scope.groups
    if kind == "pool":
        return value in scope.pools
    if kind == "controller":
        return value in scope.controllers
    if kind == "local_volume":
        return value in scope.volumes
    if kind == "host_group":
        return value in scope.host_groups
    if kind == "array_target":
        return value in scope.hosts or value in scope.host_groups
    return True


def _array_part(idx: BedIndex, value: str) -> bool:
    """A controller (ARRAY:CONTROLLER) or a drive (ARRAY:ENCLOSURE:SLOT), as a scenario fails them."""
    array_id, _, rest = value.partition(":")
    scope = idx.scopes.get(array_id)
    if scope is None or not rest:
        return False
    enclosure, sep, slot = rest.rpartition(":")
    if sep and slot.isdigit():
        return (enclosure, int(slot)) in scope.disks
    return rest in scope.controllers


def unresolved(bed: model.Bed, idx: BedIndex) -> list[tuple[tuple, Any, str, Any]]:
    """(path, value, ref_kind, array) of every reference that names nothing, as `walk_refs`
    yields them and `resolves` judges them."""
    out: list[tuple[tuple, Any, str, Any]] = []
    _checker(model.Bed)(idx, bed, (), None, out)
    return out


@cache_by_class
def _holds_refs(cls: type) -> bool:
    return any(fp.meta.get("ref") or (fp.kind == "dc" and _holds_refs(fp.inner))
               or (fp.kind == "list" and fp.inner[0] == "dc" and _holds_refs(fp.inner[1]))
               for fp in plan(cls))


@cache_by_class
def _leaf_refs(cls: type) -> tuple[str, ...]:
    """The reference fields of a class whose checker does nothing unless one of them is set (it
    holds no component with references of its own and is no array scope); () for any other."""
    if cls in (model.StorageArray, model.ArrayGroup):
        return ()
    fields = plan(cls)
    if any((fp.kind == "dc" and _holds_refs(fp.inner))
           or (fp.kind == "list" and fp.inner[0] == "dc" and _holds_refs(fp.inner[1])) for fp in fields):
        return ()
    return tuple(fp.attr for fp in fields if fp.meta.get("ref"))


_Checker = Callable[[BedIndex, Any, tuple, Any, list], None]


@cache_by_class
def _checker(cls: type) -> _Checker:
    env: dict[str, Any] = {"resolves": resolves, "checker": _checker}
    lines = ["def check(idx, obj, path, array, out):"]
    if cls is model.StorageArray:
        lines.append("    array = obj")
    elif cls is model.ArrayGroup:   # its volumes, pools and hosts are named within the group's own scope
        lines.append("    array = idx.group_views.get(obj.name, array)")
    for i, fp in enumerate(plan(cls)):
        ref = fp.meta.get("ref")
        if ref:
            table = _TABLES.get(ref)
            if table is not None:
                lines.append(f"    names = idx.{table}")
                test = "v not in names"
            elif ref == "port":
                test = "idx.port(v) is None"
            else:
                test = f"not resolves(idx, {ref!r}, v, array)"
            if fp.kind == "list":
                lines += [f"    for i, v in enumerate(obj.{fp.attr}):",
                          f"        if v and {test}:",
                          f"            out.append((path + ({fp.key!r}, i), v, {ref!r}, array))"]
            else:
                lines += [f"    v = obj.{fp.attr}",
                          f"    if v and {test}:",
                          f"            out.append((path + ({fp.key!r},), v, {ref!r}, array))"]
        elif fp.kind == "dc" and _holds_refs(fp.inner):
            env[f"T{i}"] = fp.inner
            lines += [f"    v = obj.{fp.attr}",
                      "    if v is not None:",
                      f"        checker(T{i})(idx, v, path + ({fp.key!r},), array, out)"]
        elif fp.kind == "list" and fp.inner[0] == "dc" and _holds_refs(fp.inner[1]):
            env[f"T{i}"] = fp.inner[1]
            leaf = _leaf_refs(fp.inner[1])
            lines += [f"    items = obj.{fp.attr}",
                      "    if items:",
                      f"        c = checker(T{i})",
                      "        for i, v in enumerate(items):"]
            if leaf:    # an item whose references are all empty has nothing to check (a switch port)
                lines += [f"            if {' or '.join(f'v.{attr}' for attr in leaf)}:",
                          f"                c(idx, v, path + ({fp.key!r}, i), array, out)"]
            else:
                lines += [f"            c(idx, v, path + ({fp.key!r}, i), array, out)"]
    lines.append("    return None")
    exec(compile("\n".join(lines), f"<references of {cls.__name__}>", "exec"), env)  # generated above
    return env["check"]
