"""The project file: YAML in, model out, and back, with line numbers for every problem.

* Loading composes the YAML node tree with libyaml's *safe* loader (no Python objects
  can be built from a file), converts it to plain data, migrates old format versions,
  builds the model from the field declarations in `topology.model`, then checks every
  reference.  Every problem carries the file, line and column and a hint.
* Saving writes fields in declaration order, leaves defaults out, and replaces the
  file atomically (temporary file, fsync, rename), so a crash never leaves half a file.
"""
from __future__ import annotations

import dataclasses
import datetime
import difflib
import gc
import io
import os
import re
import tempfile
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

from topology import model
from topology.errors import BedFileError, Problem
from topology.index import BedIndex, parse_member
from topology.model import FORMAT_VERSION, Bed

try:  # libyaml is in the PyYAML wheels; the pure-Python classes are the fallback
    _Loader: Any = yaml.CSafeLoader
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader
    _Dumper = yaml.SafeDumper

MAX_PROBLEMS = 200

try:
    import yaml_rs as _fast_yaml
except ImportError:  # pragma: no cover - the located PyYAML path does everything, only slower
    _fast_yaml = None


# ====================================================================== YAML -> data

class _DataError(Exception):
    def __init__(self, node: yaml.Node, message: str, hint: str = ""):
        self.node, self.message, self.hint = node, message, hint


_INT10 = re.compile(r"^[-+]?[0-9][0-9_]*$")
_FLOAT12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_BOOL12 = {"true": True, "false": False}


def _scalar(node: yaml.ScalarNode) -> Any:
    """Resolve a scalar the YAML 1.2 way: `yes`/`on` stay text, 0777 is decimal, 1e3 is a number.

    PyYAML resolves with YAML 1.1 rules; the fast loader (yaml_rs) with 1.2 rules.  Both paths
    must give the same model, so plain scalars are re-resolved here.
    """
    tag = node.tag
    value = node.value
    plain = not node.style  # None (pure-Python parser) or "" (libyaml) for plain scalars
    if tag == "tag:yaml.org,2002:str":
        if plain and _FLOAT12.match(value) and any(c in value for c in "eE"):
            return float(value.replace("_", ""))
        return value
    if tag == "tag:yaml.org,2002:bool":
        return _BOOL12.get(value.lower(), value) if plain else value
    if tag == "tag:yaml.org,2002:int":
        v = value.replace("_", "")
        if ":" in v:
            return value
        sign = -1 if v.startswith("-") else 1
        body = v.lstrip("+-")
        if body[:2] in ("0x", "0X"):
            return sign * int(body[2:], 16)
        if body[:2] in ("0o", "0O"):
            return sign * int(body[2:], 8)
        if body[:2] in ("0b", "0B"):
            return sign * int(body[2:], 2)
        return int(v, 10)
    if tag == "tag:yaml.org,2002:float":
        if ":" in value:
            return value
        return _SafeCtor.construct_yaml_float(_CTOR, node)
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:timestamp":
        return _SafeCtor.construct_yaml_timestamp(_CTOR, node)
    raise _DataError(node, f"unsupported YAML tag {tag}",
                     "project files hold plain values only; remove the tag")


_SafeCtor = yaml.constructor.SafeConstructor
_CTOR = _SafeCtor()
_MERGE = "tag:yaml.org,2002:merge"


MAX_NODES = 5_000_000


def _to_data(root: yaml.Node) -> Any:
    """Plain data from a node tree.  An aliased node is converted once and shared, and the
    total is bounded, so an alias bomb ('billion laughs') cannot exhaust the machine."""
    memo: dict[int, Any] = {}
    count = 0

    def conv(node: yaml.Node, depth: int) -> Any:
        nonlocal count
        count += 1
        if count > MAX_NODES:
            raise _DataError(node, "the document is too large (or expands aliases too often)",
                             "split the bed or use fewer aliases")
        if depth > 60:
            raise _DataError(node, "the document is nested too deeply", "flatten the structure")
        if isinstance(node, yaml.ScalarNode):
            return _scalar(node)
        key_id = id(node)
        if key_id in memo:
            return memo[key_id]
        if isinstance(node, yaml.SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                raise _DataError(node, f"unsupported YAML tag {node.tag}", "remove the tag")
            out_list: list[Any] = []
            memo[key_id] = out_list
            out_list.extend(conv(n, depth + 1) for n in node.value)
            return out_list
        if isinstance(node, yaml.MappingNode):
            if node.tag != "tag:yaml.org,2002:map":
                raise _DataError(node, f"unsupported YAML tag {node.tag}", "remove the tag")
            out: dict[str, Any] = {}
            memo[key_id] = out
            merged_keys: set[str] = set()
            for knode, vnode in node.value:
                if knode.tag == _MERGE:
                    merged = conv(vnode, depth + 1)
                    for m in merged if isinstance(merged, list) else [merged]:
                        if not isinstance(m, dict):
                            raise _DataError(vnode, "a merge key (<<) needs a mapping", "merge an anchored mapping")
                        for k, v in m.items():
                            if k not in out:
                                out[k] = v
                                merged_keys.add(k)
                    continue
                if not isinstance(knode, yaml.ScalarNode):
                    raise _DataError(knode, "a key must be a plain name", "write keys as simple words")
                key = _scalar(knode)
                if not isinstance(key, str):
                    key = _text(key) if key is not None else "null"
                if key in out and key not in merged_keys:
                    raise _DataError(knode, f"key {key!r} appears twice in the same mapping",
                                     "remove or rename one of them")
                merged_keys.discard(key)
                out[key] = conv(vnode, depth + 1)
            return out
        raise _DataError(node, "unexpected YAML node", "")

    return conv(root, 0)


def _text(v: Any) -> str:
    """A scalar written where text belongs (a version 1.6, a date) as the text it was written as."""
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return repr(v)
    return str(v)


def _locate(root: yaml.Node | None, path: tuple) -> tuple[int | None, int | None]:
    """Line and column (1-based) of the deepest node along path."""
    node = root
    best = node
    for step in path:
        if node is None:
            break
        nxt = None
        if isinstance(node, yaml.MappingNode) and isinstance(step, str):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == step:
                    nxt = v
                    # a block value starts on the next line: point at its key instead
                    best = k if isinstance(v, (yaml.MappingNode, yaml.SequenceNode)) else v
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            if 0 <= step < len(node.value):
                nxt = node.value[step]
                best = nxt
        if nxt is None:
            break
        node = nxt
    if best is None:
        return None, None
    return best.start_mark.line + 1, best.start_mark.column + 1


def _fmt_path(path: tuple) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (("." if out else "") + str(step))
    return out


# ====================================================================== migrations

def _migrate_0_to_1(data: dict) -> dict:
    """Draft files (format 0) gave VM memory in MB as ``memory_mb``."""
    for vm in data.get("vms") or []:
        if isinstance(vm, dict) and "memory_mb" in vm and "memory_gb" not in vm:
            mb = vm.pop("memory_mb")
            if isinstance(mb, (int, float)) and not isinstance(mb, bool):
                gb = mb / 1024
                vm["memory_gb"] = int(gb) if gb == int(gb) else gb
            else:
                vm["memory_gb"] = mb
    data["format_version"] = 1
    return data


MIGRATIONS: dict[int, Callable[[dict], dict]] = {0: _migrate_0_to_1}


def migrate(data: dict) -> dict:
    version = data.get("format_version")
    while version in MIGRATIONS:
        data = MIGRATIONS[version](data)
        version = data.get("format_version")
    return data


# ====================================================================== data -> model

@dataclasses.dataclass(frozen=True)
class _FieldPlan:
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
    if origin is typing.Union:
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


@lru_cache(maxsize=None)
def plan(cls: type) -> tuple[_FieldPlan, ...]:
    hints = typing.get_type_hints(cls, vars(model))
    out = []
    for f in dataclasses.fields(cls):
        kind, inner, _ = _kind_of(hints[f.name])
        if f.default is not dataclasses.MISSING:
            default, required = f.default, False
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default, required = f.default_factory(), False  # type: ignore[misc]
        else:
            default, required = None, True
        meta = dict(f.metadata)
        out.append(_FieldPlan(f.name, meta.get("key") or f.name, kind, inner, required, default, meta))
    return tuple(out)


_KIND_WORD = {"str": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
              "list": "a list", "dict": "a mapping", "dc": "a mapping"}


class _Builder:
    def __init__(self) -> None:
        self.problems: list[tuple[tuple, str, str]] = []

    def fail(self, path: tuple, message: str, hint: str = "") -> None:
        self.problems.append((path, message, hint))

    def value(self, kind: str, inner: Any, v: Any, meta: dict, path: tuple) -> Any:
        if kind == "str":
            if isinstance(v, bool) or v is None or isinstance(v, (list, dict)):
                self.fail(path, f"expected text, found {_describe(v)}", "quote the value")
                return ""
            v = v if isinstance(v, str) else _text(v)
            choices = meta.get("choices")
            if choices and v not in choices:
                close = difflib.get_close_matches(v, choices, 1)
                self.fail(path, f"{v!r} is not one of {', '.join(c or '(empty)' for c in choices)}",
                          f"did you mean {close[0]!r}?" if close else "use one of the listed values")
            return v
        if kind in ("int", "float"):
            ok = isinstance(v, int) and not isinstance(v, bool)
            if kind == "float":
                ok = ok or isinstance(v, float)
            if not ok:
                self.fail(path, f"expected {_KIND_WORD[kind]}, found {_describe(v)}",
                          "write a plain number without units (sizes are in GB)")
                return 0
            if isinstance(v, float) and v != v:
                self.fail(path, "NaN is not a value", "write a number")
                return 0
            lo = meta.get("minimum")
            if lo is not None and v < lo:
                word = "negative" if v < 0 else "too small"
                self.fail(path, f"{v} is {word} (the least allowed is {lo})",
                          "sizes and counts cannot be negative" if v < 0 else f"use at least {lo}")
            return v
        if kind == "bool":
            if not isinstance(v, bool):
                self.fail(path, f"expected true or false, found {_describe(v)}", "write true or false")
                return False
            return v
        if kind == "list":
            if not isinstance(v, list):
                self.fail(path, f"expected a list, found {_describe(v)}", "write a YAML list (- item)")
                return []
            ik, itp = inner
            if ik == "dc":
                return [self.build(itp, item, path + (i,)) for i, item in enumerate(v)]
            return [self.value(ik, itp, item, meta, path + (i,)) for i, item in enumerate(v)]
        if kind == "dict":
            if not isinstance(v, dict):
                self.fail(path, f"expected a mapping, found {_describe(v)}", "write key: value pairs")
                return {}
            if any(not isinstance(k, str) for k in v):
                v = {(k if isinstance(k, str) else _text(k)): item for k, item in v.items()}
            if inner is str:
                for k, item in v.items():
                    if not isinstance(item, str):
                        self.fail(path + (k,), f"expected text, found {_describe(item)}", "quote the value")
            return v
        if kind == "dc":
            return self.build(inner, v, path)
        return v

    def build(self, cls: type, data: Any, path: tuple) -> Any:
        return _compiled(cls)(self, data, path)

    def not_mapping(self, cls: type, data: Any, path: tuple) -> Any:
        self.fail(path, f"expected a mapping for {_cls_word(cls)}, found {_describe(data)}",
                  "write key: value pairs")
        return _compiled(cls)(self, {}, path)

    def missing(self, cls: type, fp: "_FieldPlan", path: tuple) -> Any:
        self.fail(path, f"{_cls_word(cls)} is missing the required field {fp.key!r}", f"add {fp.key}: ...")
        return _placeholder(fp)

    def unknown(self, cls: type, data: dict, known: frozenset, path: tuple) -> None:
        for key in data:
            if key not in known:
                close = difflib.get_close_matches(str(key), list(known), 1)
                what = "section" if cls is Bed else "field"
                self.fail(path + (key,), f"unknown {what} {key!r} in {_cls_word(cls)}",
                          f"did you mean {close[0]!r}?" if close else
                          f"known {what}s: {', '.join(sorted(known))}")


_MISSING = object()


@lru_cache(maxsize=None)
def _compiled(cls: type) -> Callable[["_Builder", Any, tuple], Any]:
    """Generate a builder function for one model class.

    Loading a 20,000-VM bed builds about 100,000 objects; a generic loop over field
    descriptions costs several seconds there, so each class gets straight-line code
    whose common case (the value already has the right type) is one type test.  Anything
    unusual goes through `_Builder.value`, which produces the user-facing message.
    """
    fields = plan(cls)
    env: dict[str, Any] = {"CLS": cls, "MISSING": _MISSING, "KNOWN": frozenset(fp.key for fp in fields),
                           "compiled": _compiled}
    lines = ["def build(B, d, path):",
             "    if type(d) is not dict:",
             "        return B.not_mapping(CLS, d, path)",
             "    kw = {}",
             "    n = 0"]
    for i, fp in enumerate(fields):
        env[f"FP{i}"] = fp
        env[f"META{i}"] = fp.meta
        slow = f"B.value(FP{i}.kind, FP{i}.inner, v, META{i}, path + ({fp.key!r},))"
        choices = fp.meta.get("choices")
        lo = fp.meta.get("minimum")
        if choices:
            env[f"CH{i}"] = frozenset(choices)
        if fp.kind == "str":
            test = f"type(v) is str and v in CH{i}" if choices else "type(v) is str"
        elif fp.kind == "int":
            test = "type(v) is int" + (f" and v >= {lo!r}" if lo is not None else "")
        elif fp.kind == "float":
            test = ("(type(v) is int or type(v) is float)" +
                    (f" and v >= {lo!r}" if lo is not None else " and v == v"))
        elif fp.kind == "bool":
            test = "type(v) is bool"
        elif fp.kind == "list" and fp.inner[0] == "str" and not choices:
            test = "type(v) is list and all(type(x) is str for x in v)"
        elif fp.kind == "list" and fp.inner[0] == "str":
            test = f"type(v) is list and all(type(x) is str and x in CH{i} for x in v)"
        elif fp.kind == "dict" and fp.inner is not str:
            test = "type(v) is dict and all(type(k) is str for k in v)"
        else:
            test = None
        lines.append(f"    v = d.get({fp.key!r}, MISSING)")
        lines.append("    if v is not MISSING:")
        lines.append("        n += 1")
        lines.append("    if v is not MISSING and v is not None:")
        if fp.kind == "dc":
            env[f"T{i}"] = fp.inner
            lines.append(f"        kw[{fp.attr!r}] = compiled(T{i})(B, v, path + ({fp.key!r},))")
        elif fp.kind == "list" and fp.inner[0] == "dc":
            env[f"T{i}"] = fp.inner[1]
            lines.append("        if type(v) is list:")
            lines.append(f"            f = compiled(T{i})")
            lines.append(f"            p = path + ({fp.key!r},)")
            lines.append(f"            kw[{fp.attr!r}] = [f(B, x, p + (j,)) for j, x in enumerate(v)]")
            lines.append("        else:")
            lines.append(f"            kw[{fp.attr!r}] = {slow}")
        elif test is not None:
            lines.append(f"        kw[{fp.attr!r}] = v if {test} else {slow}")
        else:
            lines.append(f"        kw[{fp.attr!r}] = {slow}")
        if fp.required:
            lines.append("    else:")
            lines.append(f"        kw[{fp.attr!r}] = B.missing(CLS, FP{i}, path)")
    lines.append("    if n != len(d):")
    lines.append("        B.unknown(CLS, d, KNOWN, path)")
    lines.append("    return CLS(**kw)")
    code = "\n".join(lines)
    exec(compile(code, f"<builder {cls.__name__}>", "exec"), env)  # noqa: S102 - code generated above from the model
    return env["build"]


def _placeholder(fp: _FieldPlan) -> Any:
    if fp.kind == "dc":
        return _Builder().build(fp.inner, {}, ())
    return {"str": "", "int": 0, "float": 0, "bool": False}.get(fp.kind)


def _cls_word(cls: type) -> str:
    return {"Bed": "the project", "BedInfo": "bed", "VM": "VM", "PathSpec": "path",
            "StorageArray": "array"}.get(cls.__name__, cls.__name__.lower())


def _describe(v: Any) -> str:
    if v is None:
        return "nothing"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, (int, float)):
        return f"the number {v}"
    if isinstance(v, str):
        return f"the text {v!r}" if len(v) < 40 else "text"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a mapping"
    return type(v).__name__


# ====================================================================== references

_REF_WORD = {"server": "server", "switch": "switch", "array": "storage array", "network": "network",
             "port": "port (DEVICE:PORT)", "chassis": "chassis", "volume": "volume (ARRAY:VOLUME)",
             "cluster": "cluster", "vm": "VM", "vswitch": "virtual switch", "workload": "workload",
             "scenario": "scenario", "component": "component", "target": "server, VM, array or volume",
             "disk_group": "disk group in this array", "pool": "pool in this array",
             "controller": "controller in this array", "local_volume": "volume in this array",
             "array_target": "host or host group in this array", "host_group": "host group in this array"}


def walk_refs(obj: Any, path: tuple = (), array: Any = None):
    """Yield (path, value, ref_kind, array) for every reference field in the model."""
    if isinstance(obj, model.StorageArray):
        array = obj
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
    if kind in ("server", "switch", "array", "network", "chassis", "cluster", "vm", "workload",
                "scenario"):
        table = {"server": idx.servers, "switch": idx.switches, "array": idx.arrays,
                 "network": idx.networks, "chassis": idx.chassis, "cluster": idx.clusters,
                 "vm": idx.vms, "workload": idx.workloads, "scenario": idx.scenarios}[kind]
        return value in table
    if kind == "vswitch":
        return value in idx.vswitches
    if kind == "port":
        return idx.port(value) is not None
    if kind == "volume":
        return value in idx.volumes
    if kind == "component":
        return value in idx.components or idx.port(value) is not None
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


def check_references(bed: Bed, idx: BedIndex | None = None) -> list[tuple[tuple, str, str]]:
    idx = idx or BedIndex(bed)
    problems = list(idx.problems)
    for path, value, kind, array in walk_refs(bed):
        if not resolves(idx, kind, value, array):
            names = _candidates(idx, kind, array)
            close = difflib.get_close_matches(value, names, 1)
            problems.append((path, f"{value!r} does not name a {_REF_WORD.get(kind, kind)}",
                             f"did you mean {close[0]!r}?" if close else
                             "add the component it names, or correct the name"))
    for i, link in enumerate(bed.links):
        for end in ("a", "b"):
            ref = getattr(link, end)
            if idx.endpoint_device(ref) is None:
                dev = ref.rpartition(":")[0] or ref
                if dev in idx.components:
                    msg = f"{ref!r}: device {dev!r} has no such port"
                else:
                    msg = f"{ref!r} does not name a device or DEVICE:PORT"
                problems.append((("links", i, end), msg, "use DEVICE:PORT with a port the device declares"))
    for i, sc in enumerate(bed.scenarios):
        for vm, host in sc.placement.items():
            if vm not in idx.vms:
                problems.append((("scenarios", i, "placement", vm), f"{vm!r} is not a VM",
                                 "placement maps VM names to server names"))
            if host not in idx.servers:
                problems.append((("scenarios", i, "placement", vm), f"{host!r} is not a server",
                                 "placement maps VM names to server names"))
    for ai, a in enumerate(bed.arrays):
        scope = idx.scopes[a.id]
        for gi, g in enumerate(a.disk_groups):
            for mi, spec in enumerate(g.members):
                try:
                    enc, _ = parse_member(spec)
                except ValueError:
                    continue
                if enc not in scope.enclosures:
                    problems.append((("arrays", ai, "disk_groups", gi, "members", mi),
                                     f"{spec!r}: the array has no enclosure {enc!r}",
                                     f"enclosures: {', '.join(scope.enclosures) or 'none declared'}"))
        for mi, m in enumerate(a.mappings):
            for pi, p in enumerate(m.ports):
                if f"{a.id}:{p}" not in idx.ports:
                    problems.append((("arrays", ai, "mappings", mi, "ports", pi),
                                     f"{p!r} is not a port of array {a.id!r}", "name a controller port"))
    return problems


def _candidates(idx: BedIndex, kind: str, array: Any) -> list[str]:
    if kind == "port":
        return idx.port_refs()
    if kind == "volume":
        return list(idx.volumes)
    scope = idx.scopes.get(array.id) if array is not None else None
    if scope is not None:
        local = {"disk_group": scope.groups, "pool": scope.pools, "controller": scope.controllers,
                 "local_volume": scope.volumes, "host_group": scope.host_groups,
                 "array_target": {**scope.hosts, **scope.host_groups}}.get(kind)
        if local is not None:
            return list(local)
    return list(idx.components)


# ====================================================================== public API

def _problems(root: yaml.Node | None, raw: list[tuple[tuple, str, str]]) -> list[Problem]:
    out = []
    for path, msg, hint in raw[:MAX_PROBLEMS]:
        line, col = _locate(root, path)
        out.append(Problem(msg, hint, line, col, _fmt_path(path)))
    return out


def loads(text: str, filename: str = "") -> Bed:
    """Parse a project document.  Raises BedFileError (never anything else) on bad input.

    The fast path parses with yaml_rs (a Rust YAML 1.2 parser, about 20x faster than
    PyYAML) and builds the model; a file with any problem at all is parsed again with
    PyYAML's composer, whose node marks give every message its line and column.
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()  # building ~10^5 objects: the cyclic GC would rescan them again and again
    try:
        if _fast_yaml is not None:
            bed = _fast_loads(text)
            if bed is not None:
                return bed
        return _located_loads(text, filename)
    finally:
        if gc_was_enabled:
            gc.enable()


def _fast_loads(text: str) -> Bed | None:
    """The model, or None when anything is wrong (the located path then explains it)."""
    try:
        data = _fast_yaml.loads(text)
    except Exception:  # noqa: BLE001 - any parser complaint is re-diagnosed with line numbers
        return None
    if not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION:
        return None
    builder = _Builder()
    try:
        bed = builder.build(Bed, data, ())
    except (TypeError, ValueError, RecursionError):
        return None
    if builder.problems or check_references(bed):
        return None
    return bed


def _located_loads(text: str, filename: str) -> Bed:
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        msg = (exc.problem or exc.context or "malformed YAML").strip()
        raise BedFileError([Problem(f"malformed YAML: {msg}", "check the indentation and quoting near here",
                                    mark.line + 1 if mark else None,
                                    mark.column + 1 if mark else None)], filename) from None
    except yaml.YAMLError as exc:
        raise BedFileError([Problem(f"malformed YAML: {exc}", "check the file is YAML")], filename) from None
    except (ValueError, UnicodeError, RecursionError) as exc:
        raise BedFileError([Problem(f"unreadable text: {exc}", "save the file as UTF-8 YAML text")],
                           filename) from None
    if root is None:
        raise BedFileError([Problem("the file is empty", "start from `testbed-studio new --example NAME`")],
                           filename)
    try:
        data = _to_data(root)
    except _DataError as exc:
        m = exc.node.start_mark
        raise BedFileError([Problem(exc.message, exc.hint, m.line + 1, m.column + 1)], filename) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise BedFileError([Problem(f"bad value: {exc}", "check the value's spelling")], filename) from None
    if not isinstance(data, dict):
        raise BedFileError([Problem("a project file is a mapping with format_version and bed at the top",
                                    "start from `testbed-studio new --example NAME`", 1, 1)], filename)
    version = data.get("format_version")
    if version is None:
        raise BedFileError([Problem("format_version is missing", f"add `format_version: {FORMAT_VERSION}` at the top",
                                    1, 1)], filename)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        line, col = _locate(root, ("format_version",))
        raise BedFileError([Problem(f"format_version {version!r} is not a version number",
                                    f"this Testbed Studio writes format_version: {FORMAT_VERSION}", line, col)],
                           filename)
    if version > FORMAT_VERSION:
        line, col = _locate(root, ("format_version",))
        raise BedFileError([Problem(f"format_version {version} is newer than this Testbed Studio understands "
                                    f"(up to {FORMAT_VERSION})", "open it with a newer Testbed Studio", line, col)],
                           filename)
    if version < FORMAT_VERSION:
        data = migrate(data)
        if data.get("format_version") != FORMAT_VERSION:
            raise BedFileError([Problem(f"format_version {version} cannot be migrated",
                                        f"supported versions: {sorted(MIGRATIONS)} and {FORMAT_VERSION}", 1, 1)],
                               filename)
    builder = _Builder()
    try:
        bed = builder.build(Bed, data, ())
    except RecursionError:
        raise BedFileError([Problem("the document is nested too deeply", "flatten the structure")],
                           filename) from None
    if builder.problems:
        raise BedFileError(_problems(root, builder.problems), filename)
    refs = check_references(bed)
    if refs:
        raise BedFileError(_problems(root, refs), filename)
    return bed


def load(path: str | os.PathLike) -> Bed:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise BedFileError([Problem(f"cannot read the file: {exc.strerror or exc}",
                                    "check the path and its permissions")], str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BedFileError([Problem(f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8 text")],
                           str(p)) from None
    return loads(text, str(p))


# ====================================================================== model -> data

class _Flow(list):
    pass


def _flow_repr(dumper: Any, data: _Flow) -> Any:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


class _FlowMap(dict):
    pass


def _flowmap_repr(dumper: Any, data: _FlowMap) -> Any:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _str_repr(dumper: Any, data: str) -> Any:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


class _ProjectDumper(_Dumper):  # type: ignore[misc,valid-type]
    pass


_ProjectDumper.add_representer(_Flow, _flow_repr)
_ProjectDumper.add_representer(_FlowMap, _flowmap_repr)
_ProjectDumper.add_representer(str, _str_repr)


def to_data(obj: Any) -> Any:
    if not dataclasses.is_dataclass(obj):
        return obj
    out: dict[str, Any] = {}
    for fp in plan(type(obj)):
        v = getattr(obj, fp.attr)
        if not fp.required:
            if v is None or v == fp.default:
                continue
            if isinstance(v, (list, dict)) and not v:
                continue
        if fp.kind == "dc":
            v = to_data(v)
        elif fp.kind == "list":
            v = [to_data(i) for i in v]
            if fp.meta.get("flow") and all(not isinstance(i, (dict, list)) for i in v):
                v = _Flow(v)
        elif fp.kind == "dict":
            v = dict(v)
            if fp.meta.get("flow") and all(not isinstance(i, (dict, list)) for i in v.values()):
                v = _FlowMap(v)
        out[fp.key] = v
    return out


def dumps(bed: Bed) -> str:
    data = to_data(bed)
    data["format_version"] = FORMAT_VERSION
    data = {"format_version": data.pop("format_version"), **data}
    buf = io.StringIO()
    yaml.dump(data, buf, Dumper=_ProjectDumper, sort_keys=False, allow_unicode=True,
              default_flow_style=False, width=100, indent=2)
    return buf.getvalue()


def save(bed: Bed, path: str | os.PathLike) -> None:
    """Write atomically: the old file stays whole until the new one is complete on disk."""
    write_atomic(Path(path), dumps(bed).encode("utf-8"))


def write_atomic(target: Path, payload: bytes) -> None:
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o777)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:  # pragma: no cover - directories cannot be fsynced everywhere
        pass
