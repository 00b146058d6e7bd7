"""The project file on disk: model to YAML text, and an atomic write that keeps the file's
place (a symlink keeps pointing at the file it named) and its permissions.

Fields are written in declaration order and defaults are left out; a value the source does
not state is written as the plain scalar `not stated` (`topology.unknown`).  The new text goes to
a temporary file beside the real file, is fsync'd and renamed over it, so a crash, a full
disk or a read-only mount never leaves half a file.
"""
from __future__ import annotations

import dataclasses
import io
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from topology.field_plan import plan
from topology.model import FORMAT_VERSION, Bed
from topology.unknown import MARKER, NOT_STATED, as_plain_data

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


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


class _ProjectDumper(_Dumper):
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
        if v is NOT_STATED:  # a plain scalar, so any YAML writer keeps it as the marker
            out[fp.key] = MARKER
            continue
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
            v = dict(as_plain_data(v))
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


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc: read it the only other way, and put it back at once
    os.umask(mask)
    return mask


def write_atomic(target: Path, payload: bytes) -> None:
    """Replace the file `target` names (through any symlinks) with payload, all or nothing.

    An existing file keeps its permission bits; a new one gets 0666 less the umask, as any
    program creating a file would.
    """
    real = Path(os.path.realpath(target))
    directory = real.parent
    try:
        old: os.stat_result | None = real.stat()
    except FileNotFoundError:
        old = None
    mode = old.st_mode & 0o7777 if old else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                try:  # root saving someone else's file: it stays theirs
                    os.fchown(fh.fileno(), old.st_uid, old.st_gid)
                except OSError:
                    pass
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, real)
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
