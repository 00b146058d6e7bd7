"""Characters no XML 1.0 document can carry (C0 controls other than tab, line feed and carriage
return; lone surrogates; U+FFFE and U+FFFF).  A bed's text ends up in draw.io, GraphML, SVG and
HTML files, so the loader refuses such a character in any text of the bed, with its line, rather
than let an export write a file no program can open.

Raw YAML cannot hold these characters; only an escape in a double-quoted scalar ("\\x01",
"\\u0007", "\\0", "\\e") can.  So the text is searched once, in C, and the loaded values are walked
only when it holds a backslash or such a character: a bed without either costs one regex pass.
"""
from __future__ import annotations

import re
from typing import Any

NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_MAY_HOLD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff\\\\]")
# the ASCII characters of _MAY_HOLD, as bytes to delete: what is left of an ASCII text is what it holds of them
_ASCII_NOT_HELD = bytes(b for b in range(128) if not _MAY_HOLD.match(chr(b)))
MOST_REPORTED = 20

Found = list[tuple[tuple, str, str]]


def describe(ch: str) -> str:
    return f"U+{ord(ch):04X}" if len(ch) == 1 else repr(ch)


def problem_text(value: str) -> tuple[str, str]:
    """(message, hint) for a text that holds a character XML cannot carry."""
    found = NOT_XML.search(value)
    ch = found.group() if found else "?"
    shown = value if len(value) <= 60 else value[:57] + "..."
    return (f"{shown!r} holds the control character {describe(ch)}, which no XML file (draw.io, GraphML, SVG, "
            "HTML) can carry", "remove it (a tab or a line break is fine)")


def xml_problems(text: str, data: Any) -> Found:
    """(path, message, hint) for each text in the loaded `data` (keys too) holding a character XML
    1.0 cannot carry; [] at once when the file's text cannot hold one."""
    if not _may_hold(text):
        return []
    found: Found = []
    todo: list[tuple[tuple, Any]] = [((), data)]
    while todo and len(found) < MOST_REPORTED:
        path, value = todo.pop()
        if isinstance(value, str):
            if NOT_XML.search(value):
                found.append((path, *problem_text(value)))
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and NOT_XML.search(key):
                    found.append((path + (key,), *problem_text(key)))
                todo.append((path + (key,), item))
        elif isinstance(value, list):
            todo.extend((path + (i,), item) for i, item in enumerate(value))
    return sorted(found, key=lambda f: [str(p) for p in f[0]])


def _may_hold(text: str) -> bool:
    """Whether `text` holds a character of _MAY_HOLD.  An ASCII text (every bed written by this
    program) is searched as bytes: a 7 MB bed's regex pass took 50 ms of its File › Open, this 10."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_NOT_HELD))
    return _MAY_HOLD.search(text) is not None
