"""What a value may be, decided once for the loader, the forms, import and rename.

An id that becomes a folder or file name (hosts, workloads, scenarios, configurations ...)
holds no '/', '\\' or control character, is not '.' or '..', and holds no ':' (a ':' would
split it where subject ids join a device to its ports and volumes: `R710-1:SAN1`); no space
starts or ends it.  `field_problem` is the loader's own verdict on one value of one field
(kind, choice, pattern, range, id), so nothing an editor lets through is refused on open.
"""
from __future__ import annotations

import re
from typing import Any

from topology.fields import PATH_PART_PATTERN

_ID = re.compile(PATH_PART_PATTERN)
ID_HINT = "use no '/', '\\', ':' or control characters, no space at either end, and not '.' or '..' alone"


def id_problem(text: str) -> tuple[str, str] | None:
    """(message, hint) when `text` cannot be an id; None when it can."""
    if _ID.fullmatch(text):
        return None
    if ":" in text and _ID.fullmatch(text.replace(":", "-")):
        return (f"{text!r} cannot be an id: ':' joins a device to its ports and volumes (R710-1:SAN1)",
                ID_HINT)
    if text and text != text.strip() and _ID.fullmatch(text.strip()):
        return f"{text!r} cannot be an id: it starts or ends with a space", ID_HINT
    return f"{text!r} cannot be an id: ids become folder and file names", ID_HINT


def field_problem(cls: type, attr: str, value: Any) -> tuple[str, str] | None:
    """(message, hint) when the loader would refuse `value` in field `attr` of `cls`; None when it
    takes it.  A reference that names nothing is not judged here (the bed as a whole is)."""
    from topology.fileformat import value_problems  # the loader's builder (it imports the model)
    problems = value_problems(cls, attr, value)
    return problems[0] if problems else None
