"""The project file on disk: model to YAML text, and an atomic write that keeps the file's
place (a symlink keeps pointing at the file it named) and its permissions.

Fields are written in declaration order and defaults are left out; a value the source does
not state is written as the plain scalar `not stated` (`topology.unknown`).  The new text goes to
a temporary file beside the real file, is fsync'd and renamed over it, so a crash, a full
disk or a read-only mount never leaves half a file.
"""
from __future__ import annotations

import dataclasses
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from topology import yaml_emit
from topology.field_plan import cache_by_class, plan
from topology.gc_pause import collector_paused
from topology.model import FORMAT_VERSION, Bed
from topology.unknown import MARKER, NOT_STATED
from topology.yaml_emit import Flow, FlowMap


def to_data(obj: Any) -> Any:
    """A model object as plain data (dicts, lists, scalars): fields in declaration order,
    defaults left out.  Anything that is not a model object comes back as it is."""
    if not dataclasses.is_dataclass(obj):
        return obj
    return _writer(type(obj))(obj)


def _plain_copy(value: Any) -> Any:
    """Free-form values (settings, attributes) copied, so the data shares nothing mutable with
    the model; the not-stated marker as its plain text."""
    if value is NOT_STATED:
        return MARKER
    kind = type(value)
    if kind is dict:
        return {k: _plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [_plain_copy(v) for v in value]
    return value


@cache_by_class
def _writer(cls: type) -> Callable[[Any], dict]:
    """Generate the plain-data writer of one model class.

    Saving a 20,000-VM bed converts about 100,000 objects; a generic loop over the field
    descriptions spent most of a second there, so each class gets straight-line code (as
    the loader's builders do).
    """
    env: dict[str, Any] = {"writer": _writer, "Flow": Flow, "FlowMap": FlowMap, "copy": _plain_copy,
                           "NOT_STATED": NOT_STATED, "MARKER": MARKER,
                           "CONTAINER": (dict, list)}
    lines = ["def write(o):", "    d = {}"]
    for i, fp in enumerate(plan(cls)):
        env[f"D{i}"] = fp.default
        lines.append(f"    v = o.{fp.attr}")
        # a plain scalar, so any YAML writer keeps it as the marker
        lines.append("    if v is NOT_STATED:")
        lines.append(f"        d[{fp.key!r}] = MARKER")
        if fp.required:
            lines.append("    else:")
        elif fp.kind in ("list", "dict"):
            lines.append("    elif v:")
        else:
            lines.append(f"    elif v is not None and v != D{i}:")
        flow = bool(fp.meta.get("flow"))
        if fp.kind == "dc":
            env[f"T{i}"] = fp.inner
            lines.append(f"        d[{fp.key!r}] = writer(T{i})(v) if v is not None else None")
        elif fp.kind == "list" and fp.inner[0] == "dc":
            env[f"T{i}"] = fp.inner[1]
            lines.append(f"        w = writer(T{i})")
            lines.append(f"        d[{fp.key!r}] = [w(x) for x in v]")
        elif fp.kind == "list":
            lines.append("        v = [copy(x) for x in v]")
            if flow:
                lines.append("        if not any(isinstance(x, CONTAINER) for x in v):")
                lines.append("            v = Flow(v)")
            lines.append(f"        d[{fp.key!r}] = v")
        elif fp.kind == "dict":
            lines.append("        v = {k: copy(x) for k, x in v.items()}")
            if flow:
                lines.append("        if not any(isinstance(x, CONTAINER) for x in v.values()):")
                lines.append("            v = FlowMap(v)")
            lines.append(f"        d[{fp.key!r}] = v")
        else:
            lines.append(f"        d[{fp.key!r}] = copy(v)")
    lines.append("    return d")
    code = "\n".join(lines)
    exec(compile(code, f"<writer {cls.__name__}>", "exec"), env)  # generated above from the model
    return env["write"]


def dumps(bed: Any) -> str:
    """A bed (or its plain data) as project-file text, format_version first."""
    with collector_paused():
        data = to_data(bed)
        data = {"format_version": FORMAT_VERSION, **{k: v for k, v in data.items() if k != "format_version"}}
        return yaml_emit.dumps(data)


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


def fsync_dir(directory: Path) -> None:
    """The names in `directory` on disk: a file just created, renamed or removed there survives a power cut."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:  # pragma: no cover - directories cannot be fsynced everywhere
        pass


def write_atomic(target: Path, payload: bytes, *, through_symlink: bool = True) -> None:
    """Replace the file `target` names (through any symlinks) with payload, all or nothing.

    An existing file keeps its permission bits; a new one gets 0666 less the umask, as any
    program creating a file would.  A file with several hard links is written in place, so every
    link keeps seeing it (a copy of the old text stays beside it until the new one is on disk).
    `through_symlink=False` (exports): a symlink at `target` is refused, never written through.
    """
    if not through_symlink and os.path.islink(target):
        raise OSError(errno.ELOOP, f"{target} is a symbolic link: an export is not written through one "
                                   "(remove it or choose another name)")
    real = Path(os.path.realpath(target))
    directory = real.parent
    try:
        old: os.stat_result | None = real.stat()
    except FileNotFoundError:
        old = None
    if old is not None and old.st_nlink > 1 and stat.S_ISREG(old.st_mode):
        _write_in_place(real, payload)
        return
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
    fsync_dir(directory)


def _write_in_place(real: Path, payload: bytes) -> None:
    """Rewrite a hard-linked file's content (a replace would split it from its other names): the
    old text is copied beside it first and removed once the new text is on disk, so a crash in
    between leaves the old text to recover."""
    fd, backup = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".before-save", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as out, open(real, "rb") as src:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        os.unlink(backup)       # nothing was changed yet
        raise
    with open(real, "r+b") as fh:    # should this fail, the copy of the old text stays beside it
        fh.write(payload)
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())
    os.unlink(backup)
