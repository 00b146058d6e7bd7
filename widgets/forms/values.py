"""Text a person typed into a field, read as the value the model stores, and values shown as text."""
from __future__ import annotations

import math
from typing import Any

import yaml

NOT_SET = "(not set)"         # how a choice reads when nothing is chosen


class FieldError(ValueError):
    """Input the field cannot take; the message is shown next to the field."""


def format_number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def parse_number(text: str, *, integer: bool, minimum: float | None, optional: bool, unit: str = "") -> Any:
    """The number a person typed, or FieldError saying what is wrong with it."""
    raw = text.strip()
    if unit and raw.lower().endswith(unit.lower()):
        raw = raw[: -len(unit)].strip()      # "8 GB" in a GB field
    if not raw:
        if optional:
            return None
        raise FieldError("a value is required")
    try:
        number = float(raw.replace(",", ""))
    except ValueError:
        raise FieldError(f"{text.strip()!r} is not a number") from None
    if integer and math.isfinite(number):
        if not number.is_integer():
            raise FieldError(f"{text.strip()!r} is not a whole number")
        value: Any = int(number)
    else:
        value = number
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(f"{text.strip()!r} is not a number")
    if minimum is not None and value < minimum:
        raise FieldError(f"must be at least {format_number(minimum)}")
    return value


def parse_scalar(text: str) -> Any:
    """A mapping value or list item typed as text: numbers and true/false become typed values."""
    text = text.strip()
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (str, int, float, bool)) or value is None else text


def scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return format_number(value) if isinstance(value, (int, float)) else str(value)


def parse_structured(text: str) -> Any:
    """A mapping value: a YAML list or mapping when it looks like one, else a scalar."""
    text = text.strip()
    if text.startswith(("[", "{")):
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return text
    return parse_scalar(text)
