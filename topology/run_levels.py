"""Levels of a test matrix as text: the same level written two ways ("2", 2, "2 cells") is one level.

A matrix writes its levels as it likes (`levels: [1, 2, 3, 4]`, `[200, 500]`); results and a
workload's per-level machines write them as the report does ("500 users", "2 cells").  A level is
known by its first number when it has one, else by its words, so the two meet.
"""
from __future__ import annotations

import re
from typing import Any

_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")


def level_key(level: Any) -> str:
    """'2 cells', 2, '2' -> '2'; 'peak' -> 'peak'; '' -> ''."""
    text = str(level).strip()
    m = _NUMBER.search(text)
    if m:
        number = float(m.group(0).replace(",", "."))
        return f"{number:g}"
    return " ".join(text.lower().split())


def same_level(a: Any, b: Any) -> bool:
    return level_key(a) == level_key(b)


def level_label(level: Any, variable: str = "") -> str:
    """How a step and a result name a level: '2 active cells' from 2 and 'active cells'; a level
    written with its own words ('500 users') is kept."""
    text = str(level).strip()
    if variable and _NUMBER.fullmatch(text):
        return f"{text} {variable}"
    return text
