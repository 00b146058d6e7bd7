"""The project file: YAML in, model out, with line numbers for every problem.

Loading builds plain data with `topology.yaml_fast` (rapidyaml, where it is sure to read the
file as the bounded loader does) or `topology.yaml_bounded` (libyaml events; aliases shared
and counted before use; every number finite and bounded), migrates old format versions, builds
the model from the field declarations in `topology.model` (each number within its field's
range), runs `topology.load_checks` (slot ranges, ids used as path parts, access entries,
exception codes) and then checks every reference.  Every problem carries the file, line and
column and a hint.  Saving is `topology.project_save` (re-exported here).
"""
from __future__ import annotations

import dataclasses
import datetime
import difflib
import errno
import math
import os
import re
import stat
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from topology import load_checks, yaml_bounded, yaml_fast
from topology.errors import BedFileError, Problem
from topology.field_plan import FieldPlan, plan
from topology.fields import DEFAULT_MAXIMUM, PATH_PART_PATTERN
from topology.gc_pause import collector_paused
from topology.index import BedIndex, parse_member
from topology.migrations import MIGRATIONS, migrate
from topology.model import FORMAT_VERSION, Bed
from topology.names import id_problem
from topology.references import resolves, unresolved, walk_refs  # noqa: F401 (resolves, walk_refs: importable here)
from topology.unknown import MARKER, NOT_STATED, accepts_not_stated, refusal
from topology.xml_chars import xml_problems

MAX_PROBLEMS = 200


# ====================================================================== YAML -> data

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


# ====================================================================== data -> model

_PATH_PART = re.compile(PATH_PART_PATTERN)


def _bounds(kind: str, meta: dict) -> tuple[float, float]:
    """The range a number field accepts: its own bounds, else DEFAULT_MAXIMUM either way."""
    hi = meta.get("maximum")
    hi = DEFAULT_MAXIMUM[kind] if hi is None else hi
    lo = meta.get("minimum")
    return (-DEFAULT_MAXIMUM[kind] if lo is None else lo), hi


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) and not x.is_integer() else str(int(x))


_KIND_WORD = {"str": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
              "list": "a list", "dict": "a mapping", "dc": "a mapping"}


class _Builder:
    def __init__(self) -> None:
        self.problems: list[tuple[tuple, str, str]] = []

    def fail(self, path: tuple, message: str, hint: str = "") -> None:
        self.problems.append((path, message, hint))

    def value(self, kind: str, inner: Any, v: Any, meta: dict, path: tuple) -> Any:
        if v is NOT_STATED:
            return self.not_stated(kind, meta, path)
        if kind == "str":
            if isinstance(v, bool) or v is None or isinstance(v, (list, dict)):
                self.fail(path, f"expected text, found {_describe(v)}", "quote the value")
                return ""
            v = v if isinstance(v, str) else _text(v)
            bad_id = id_problem(v) if meta.get("path_part") else None
            if bad_id is not None:
                self.fail(path, *bad_id)
            elif meta.get("pattern") and not re.fullmatch(meta["pattern"], v):
                self.fail(path, f"{v!r} is not written as {meta.get('doc') or meta['pattern']}",
                          meta.get("doc") or f"match {meta['pattern']}")
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
            if isinstance(v, float) and not math.isfinite(v):
                self.fail(path, f"{v} is not a finite number", "write a number")
                return 0
            lo, hi = _bounds(kind, meta)
            if v < lo:
                word = "negative" if v < 0 else "too small"
                self.fail(path, f"{v} is {word} (the least allowed is {_num(lo)})",
                          "sizes and counts cannot be negative" if v < 0 else f"use at least {_num(lo)}")
            elif v > hi:
                self.fail(path, f"{v} is too large (the most allowed is {_num(hi)})", f"use at most {_num(hi)}")
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
            if NOT_STATED in v:
                self.fail(path, *refusal("item", meta, path))
                return []
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
                    if not isinstance(item, str) or item is NOT_STATED:
                        self.fail(path + (k,), f"expected text, found {_describe(item)}", "quote the value")
            return v
        if kind == "dc":
            return self.build(inner, v, path)
        return v

    def build(self, cls: type, data: Any, path: tuple) -> Any:
        return _compiled(cls)(self, data, path)

    def not_stated(self, kind: str, meta: dict, path: tuple) -> Any:
        """The marker where the field takes it; else a message saying where it may go."""
        if meta.get("not_stated"):
            return NOT_STATED
        self.fail(path, *refusal(kind, meta, path))
        return {"str": "", "int": 0, "float": 0, "bool": False, "list": [], "dict": {}}.get(kind)

    def not_mapping(self, cls: type, data: Any, path: tuple) -> Any:
        found = f"expected a mapping for {_cls_word(cls)}, found {_describe(data)}", "write key: value pairs"
        self.fail(path, *(refusal("dc", {}, path) if data is NOT_STATED else found))
        return _compiled(cls)(self, {}, path)

    def missing(self, cls: type, fp: FieldPlan, path: tuple) -> Any:
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


def value_problems(cls: type, attr: str, value: Any) -> list[tuple[str, str]]:
    """(message, hint) for each reason the loader refuses `value` in field `attr` of `cls`
    (`topology.names.field_problem` is how editors ask)."""
    fp = next(f for f in plan(cls) if f.attr == attr)
    if value is None:                   # left out, as a key written with no value reads
        return [] if not fp.required else [(f"{_cls_word(cls)} needs its {fp.key}", f"add {fp.key}: ...")]
    builder = _Builder()
    meta = {**fp.meta, "not_stated": accepts_not_stated(cls, fp)}
    builder.value(fp.kind, fp.inner, value, meta, (fp.key,))
    return [(message, hint) for _path, message, hint in builder.problems]


@cache
def _compiled(cls: type) -> Callable[[_Builder, Any, tuple], Any]:
    """Generate a builder function for one model class.

    Loading a 20,000-VM bed builds about 100,000 objects; a generic loop over field
    descriptions costs several seconds there, so each class gets straight-line code
    whose common case (the value already has the right type) is one type test.  Anything
    unusual goes through `_Builder.value`, which produces the user-facing message.
    """
    fields = plan(cls)
    env: dict[str, Any] = {"CLS": cls, "KNOWN": frozenset(fp.key for fp in fields),
                           "compiled": _compiled, "PATH_PART": _PATH_PART.fullmatch, "NEW": object.__new__}
    # The model's dataclasses only store their fields, so the object is made empty and each field
    # set once (its value, or the default __init__ would give): 3x faster than calling the class.
    declared = {f.name: f for f in dataclasses.fields(cls)}
    direct = not hasattr(cls, "__post_init__") and "__init__" not in {
        name for klass in cls.__mro__[1:-1] for name in vars(klass)}
    lines = ["def build(B, d, path):",
             "    if type(d) is not dict:",
             "        return B.not_mapping(CLS, d, path)",
             "    o = NEW(CLS)" if direct else "    o = {}"]
    head, starts, absent = len(lines), [], []   # each field's first line; its line when its key is absent
    for i, fp in enumerate(fields):
        env[f"FP{i}"] = fp
        slot = f"o.{fp.attr}" if direct else f"o[{fp.attr!r}]"
        starts.append(len(lines))
        if fp.required:
            default = f"B.missing(CLS, FP{i}, path)"
        elif declared[fp.attr].default_factory is not dataclasses.MISSING:
            env[f"F{i}"] = declared[fp.attr].default_factory
            default = f"F{i}()"
        else:
            env[f"D{i}"] = declared[fp.attr].default
            default = f"D{i}"
        env[f"META{i}"] = {**fp.meta, "not_stated": accepts_not_stated(cls, fp),
                           "items_are_components": fp.kind == "list" and fp.inner[0] == "dc"}
        slow = f"B.value(FP{i}.kind, FP{i}.inner, v, META{i}, path + ({fp.key!r},))"
        choices = fp.meta.get("choices")
        if fp.kind in ("int", "float"):
            lo, hi = _bounds(fp.kind, fp.meta)
        if choices:
            env[f"CH{i}"] = frozenset(choices)
        if fp.kind == "str":
            test = "type(v) is str"
            if fp.meta.get("path_part"):
                test += " and PATH_PART(v) is not None"
            if fp.meta.get("pattern"):
                env[f"PAT{i}"] = re.compile(fp.meta["pattern"]).fullmatch
                test += f" and PAT{i}(v) is not None"
            if choices:
                test += f" and v in CH{i}"
        elif fp.kind == "int":
            test = f"type(v) is int and {lo!r} <= v <= {hi!r}"
        elif fp.kind == "float":
            # the parser admits no NaN or infinity; the bounds keep whatever else out
            test = f"(type(v) is int or type(v) is float) and {lo!r} <= v <= {hi!r}"
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
        absent.append(f"        {slot} = {default}")
        # a key written with no value (`key:`) is read as if it were not there
        lines.append(f"    v = d.get({fp.key!r})")
        lines.append("    if v is None:")
        lines.append(f"        {slot} = {default}")
        if fp.kind == "dc":
            env[f"T{i}"] = fp.inner
            lines.append("    else:")
            lines.append(f"        {slot} = compiled(T{i})(B, v, path + ({fp.key!r},))")
        elif fp.kind == "list" and fp.inner[0] == "dc":
            env[f"T{i}"] = fp.inner[1]
            lines.append("    elif type(v) is list:")
            lines.append(f"        f = compiled(T{i})")
            lines.append(f"        p = path + ({fp.key!r},)")
            lines.append(f"        {slot} = [f(B, x, p + (j,)) for j, x in enumerate(v)]")
            lines.append("    else:")
            lines.append(f"        {slot} = {slow}")
        elif test is not None:
            lines.append("    else:")
            lines.append(f"        {slot} = v if {test} else {slow}")
        else:
            lines.append("    else:")
            lines.append(f"        {slot} = {slow}")
    starts.append(len(lines))
    # a mapping of required keys only (a switch port's name: 72,000 of a 5,000-device bed's 135,000) sets
    # every other field to its default without looking its key up: the same fields, in the same order
    env["REQUIRED"] = frozenset(fp.key for fp in fields if fp.required)
    lines[head:head] = ["    if d.keys() <= REQUIRED:"] + [ln for i, fp in enumerate(fields) for ln in (
        ["    " + x for x in lines[starts[i]:starts[i + 1]]] if fp.required else [absent[i]])] + [
        "        return o" if direct else "        return CLS(**o)"]
    lines.append("    if not KNOWN.issuperset(d):")
    lines.append("        B.unknown(CLS, d, KNOWN, path)")
    lines.append("    return o" if direct else "    return CLS(**o)")
    code = "\n".join(lines)
    exec(compile(code, f"<builder {cls.__name__}>", "exec"), env)  # the code was generated above from the model
    return env["build"]


def _placeholder(fp: FieldPlan) -> Any:
    if fp.kind == "dc":
        return _Builder().build(fp.inner, {}, ())
    return {"str": "", "int": 0, "float": 0, "bool": False}.get(fp.kind)


def _cls_word(cls: type) -> str:
    return {"Bed": "the project", "BedInfo": "bed", "VM": "VM", "PathSpec": "path",
            "StorageArray": "array"}.get(cls.__name__, cls.__name__.lower())


def _describe(v: Any) -> str:
    if v is None:
        return "nothing"
    if v is NOT_STATED:
        return repr(MARKER)
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


def check_references(bed: Bed, idx: BedIndex | None = None) -> list[tuple[tuple, str, str]]:
    idx = idx or BedIndex(bed)
    problems = list(idx.problems)
    for path, value, kind, array in unresolved(bed, idx):
        part = _missing_part(idx, value) if kind in ("component", "port") else None
        if part is not None:
            problems.append((path, *part))
            continue
        names = _candidates(idx, kind, array)
        close = difflib.get_close_matches(value, names, 1)
        problems.append((path, f"{value!r} does not name a {_REF_WORD.get(kind, kind)}",
                         f"did you mean {close[0]!r}?" if close else
                         "add the component it names, or correct the name"))
    for i, link in enumerate(bed.links):
        for end in ("a", "b"):
            ref = getattr(link, end)
            if ref is NOT_STATED:
                if link.a is NOT_STATED:
                    problems.append((("links", i, "a"), "a cable with neither end stated says nothing",
                                     "write the end the source names in a:, or leave the cable out"))
                continue    # cabled, the far end not stated in the source
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


def _missing_part(idx: BedIndex, value: str) -> tuple[str, str] | None:
    """(message, hint) for DEVICE:PART where the device exists and the part does not ('DS5020:ZZ9'): the
    device is not what is wrong, its port (controller, drive) is."""
    device, sep, part = value.partition(":")
    if not sep or device not in idx.components:
        return None
    ports = sorted(r.partition(":")[2] for r in idx.port_refs() if r.startswith(f"{device}:"))
    close = difflib.get_close_matches(part, ports, 1)
    shown = ", ".join(ports[:12]) + (f" and {len(ports) - 12} more" if len(ports) > 12 else "")
    return (f"{value!r}: {device!r} has no port, controller or drive {part!r}",
            f"did you mean {device}:{close[0]}?" if close else
            (f"its ports: {shown}" if ports else f"{device!r} declares no ports")
            + "; a controller is ARRAY:CONTROLLER, a drive ARRAY:ENCLOSURE:SLOT")


def _candidates(idx: BedIndex, kind: str, array: Any) -> list[str]:
    if kind == "port":
        return idx.port_refs()
    if kind == "volume":
        return list(idx.volumes)
    scope = idx.scopes.get(array.id) if array is not None else None
    if scope is not None:
        tables: dict[str, dict[str, Any]] = {
            "disk_group": scope.groups, "pool": scope.pools, "controller": scope.controllers,
            "local_volume": scope.volumes, "host_group": scope.host_groups,
            "array_target": {**scope.hosts, **scope.host_groups}}
        local = tables.get(kind)
        if local is not None:
            return list(local)
    return list(idx.components)


# ====================================================================== public API

def loads(text: str, filename: str = "") -> Bed:
    """Parse a project document.  Raises BedFileError (never anything else) on bad input.

    The data comes from `topology.yaml_fast` or, for any file it is not sure of, from
    `topology.yaml_bounded` (libyaml events, aliases shared and counted before use, numbers
    bounded).  Only a file with a problem is composed a second time
    into libyaml's node tree, whose marks give every message its line and column.
    """
    with collector_paused():
        return _loads(text, filename, _Marks(text))


class _Marks:
    """Line and column of a path in the document, composed only when a message needs one."""

    def __init__(self, text: str):
        self.text = text
        self._root: Any = False

    @property
    def root(self) -> yaml.Node | None:
        if self._root is False:
            try:  # only documents that already parsed (bounded, single, not too deep) get here
                self._root = yaml.compose(self.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except (yaml.YAMLError, ValueError, RecursionError):  # pragma: no cover
                self._root = None
        return self._root

    def __call__(self, path: tuple) -> tuple[int | None, int | None]:
        return _locate(self.root, path)

    def problems(self, raw: list[tuple[tuple, str, str]]) -> list[Problem]:
        out = []
        for path, msg, hint in raw[:MAX_PROBLEMS]:
            line, col = self(path)
            out.append(Problem(msg, hint, line, col, _fmt_path(path)))
        return out


def _loads(text: str, filename: str, marks: _Marks, broken: list[Problem] | None = None) -> Bed:
    try:
        data = yaml_fast.read(text)
    except yaml_bounded.YamlProblem as exc:
        raise BedFileError([Problem(exc.message, exc.hint, exc.line, exc.column)], filename) from None
    if data is None:
        raise BedFileError([Problem("the file is empty", "start from `testbed-studio new --example NAME`")],
                           filename)
    if not isinstance(data, dict):
        raise BedFileError([Problem("a project file is a mapping with format_version and bed at the top",
                                    "start from `testbed-studio new --example NAME`", 1, 1)], filename)
    version = data.get("format_version")
    if version is None:
        raise BedFileError([Problem("format_version is missing", f"add `format_version: {FORMAT_VERSION}` at the top",
                                    1, 1)], filename)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        line, col = marks(("format_version",))
        raise BedFileError([Problem(f"format_version {version!r} is not a version number",
                                    f"this Testbed Studio writes format_version: {FORMAT_VERSION}", line, col)],
                           filename)
    if version > FORMAT_VERSION:
        line, col = marks(("format_version",))
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
    except RecursionError:  # pragma: no cover - the parser refuses deep nesting first
        raise BedFileError([Problem("the document is nested too deeply", "flatten the structure")],
                           filename) from None
    if builder.problems:
        raise BedFileError(marks.problems(builder.problems), filename)
    not_xml = xml_problems(text, data)      # names, notes, labels: the exports write them as XML
    if not_xml:
        raise BedFileError(marks.problems(not_xml), filename)
    # before the index is built: it walks every slot range and names every component
    checked = load_checks.check(bed, marks)
    if checked:
        raise BedFileError(marks.problems(checked), filename)
    refs = check_references(bed)
    if refs:
        found = BedFileError(marks.problems(refs), filename)
        if broken is None:
            raise found
        broken.extend(found.problems)
    return bed


def loads_keeping_broken_references(text: str, filename: str = "") -> tuple[Bed, list[Problem]]:
    """A bed whose only problems are references that name nothing, with those problems (in file
    order): the designer opens it to be repaired.  Any other problem raises BedFileError."""
    broken: list[Problem] = []
    bed = _loads(text, filename, _Marks(text), broken)
    return bed, broken


def load(path: str | os.PathLike) -> Bed:
    p = Path(path)
    return loads(read_text(p), str(p))


def read_text(path: str | os.PathLike) -> str:
    """A project file's text; BedFileError when it cannot be read or is not UTF-8."""
    p = Path(path)
    try:
        raw = read_regular_file(p)
    except OSError as exc:
        raise BedFileError([Problem(f"cannot read the file: {exc.strerror or exc}",
                                    "check the path and its permissions")], str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BedFileError([Problem(f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8 text")],
                           str(p)) from None
    return text


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file; OSError for anything else (a FIFO would block the reader for
    ever, a device would never end), said in words."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a folder, a FIFO or a device); give the project file")
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)


# saving lives in its own module; these names stay importable from here
from topology.project_save import dumps, save, to_data, write_atomic  # noqa: E402,F401
