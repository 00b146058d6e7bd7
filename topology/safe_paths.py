"""File names and folders made from bed values (host ids, workload ids) that stay where they belong.

A bed value used in a path is data, not a path: `..`, `.`, `/`, a leading `-` or a control
character must never move a file out of its folder or turn into an option.  `file_name_for`
turns any value into one plain file-name component; `safe_child` joins such a component to a
folder and refuses anything that resolves outside it, so the guarantee holds even for values
that never went through the project-file loader (beds built in Python).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

_PLAIN = re.compile(r"[^A-Za-z0-9._-]")
_MAX_LEN = 100


def file_name_for(value: str) -> str:
    """One file-name component naming `value`: letters, digits, `.`, `_`, `-`; never `.`, `..`,
    empty, hidden or starting with `-`.  A value that had to be changed gets a short digest of
    the original, so two different values never share a name (`a/b` and `a_b` differ)."""
    value = str(value)
    name = _PLAIN.sub("_", value)
    if not name or name[0] in ".-":
        name = "_" + name
    if name != value or len(name) > _MAX_LEN:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        name = f"{name[:_MAX_LEN]}-{digest}"
    return name


class PathEscapeError(ValueError):
    pass


def safe_child(base: Path, name: str) -> Path:
    """`base / name`, resolved, after checking that it is a strict descendant of `base`
    (symbolic links included).  Raises PathEscapeError for `..`, `.`, absolute names and the like."""
    base = Path(base).resolve()
    if not name or "\x00" in name:
        raise PathEscapeError(f"{name!r} is not a file name")
    child = (base / name).resolve()
    if child == base or base not in child.parents:
        raise PathEscapeError(f"{name!r} would leave the folder {base}")
    return child
