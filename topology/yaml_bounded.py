"""YAML text to plain data with bounds that hold for any input.

libyaml (the C parser in the PyYAML wheels) produces the event stream; plain data is built
here from the events.  An alias is never expanded: the object it names is shared, and its
*expanded* size (the characters and nodes it would stand for if written out) is added to a
budget before it is used, so a 10 KB "billion laughs" is refused after a few events rather
than after gigabytes.  The budget is a multiple of the file's own length, which a file
without aliases can never reach, so anything that later walks the data (validation, the
methodology, saving) is bounded by the file size too.

Plain scalars are resolved the YAML 1.2 way (`yes`/`on` stay text, 0777 is decimal, 1e3 is
a number), and every number is finite and within +-10**15: no value from a file can overflow
a float conversion, a sleep or a range further on.  The text `not stated`, however quoted, is
`topology.unknown.NOT_STATED` (a key stays text).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from topology.unknown import MARKER, NOT_STATED

try:  # libyaml is in the PyYAML wheels; the pure-Python parser is the fallback
    from yaml._yaml import CParser
    _parser: Callable[[str], Any] = CParser
except ImportError:  # pragma: no cover
    _parser = yaml.SafeLoader

MAX_DEPTH = 60
# Expanded size allowed per character of the file.  Without aliases a document's expanded
# size (characters of its scalars plus one per node) is at most about its length.
EXPANSION_PER_CHAR = 8
EXPANSION_FLOOR = 100_000
MAX_NUMBER = 10 ** 15

_TAG = "tag:yaml.org,2002:"
_MERGE = _TAG + "merge"
_STR, _INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP = (_TAG + t for t in
                                                ("str", "int", "float", "bool", "null", "timestamp"))
_INT12 = re.compile(r"^[-+]?[0-9][0-9_]*$")
_FLOAT12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_BOOL12 = {"true": True, "false": False}
_RESOLVERS = yaml.resolver.Resolver.yaml_implicit_resolvers
_CTOR = yaml.constructor.SafeConstructor()


_NO_KEY = object()
_MERGE_KEY = object()


@dataclass(frozen=True)
class Tagged:
    """A scalar under a local tag the caller named (an Ansible inventory's `!vault`): kept as
    its tag and text, never interpreted."""
    tag: str
    text: str


class YamlProblem(Exception):
    """What is wrong, where (1-based line and column) and how to fix it."""

    def __init__(self, message: str, hint: str, line: int | None, column: int | None):
        super().__init__(message)
        self.message, self.hint, self.line, self.column = message, hint, line, column


def _at(mark: Any, message: str, hint: str) -> YamlProblem:
    return YamlProblem(message, hint, mark.line + 1 if mark else None, mark.column + 1 if mark else None)


def _resolve_plain(value: str) -> str:
    for tag, regexp in _RESOLVERS.get(value[:1] if value else "", ()):
        if regexp.match(value):
            return tag
    return _STR


def scalar_value(tag: str, value: str, plain: bool, mark: Any) -> Any:
    """The Python value of a scalar whose tag is known (resolved or explicit)."""
    if tag == _STR:  # what YAML 1.1 leaves as text but 1.2 reads as a number: 0048, 1e3
        if value == MARKER:
            return NOT_STATED
        if plain and _INT12.match(value):
            return _number(int(value.replace("_", ""), 10), value, mark)
        if plain and _FLOAT12.match(value) and ("e" in value or "E" in value):
            return _number(float(value.replace("_", "")), value, mark)
        return value
    if tag == _BOOL:
        return _BOOL12.get(value.lower(), value) if plain else value
    if tag == _INT:
        v = value.replace("_", "")
        if ":" in v:
            return value
        sign = -1 if v.startswith("-") else 1
        body = v.lstrip("+-")
        try:
            if body[:2] in ("0x", "0X"):
                n = sign * int(body[2:], 16)
            elif body[:2] in ("0o", "0O"):
                n = sign * int(body[2:], 8)
            elif body[:2] in ("0b", "0B"):
                n = sign * int(body[2:], 2)
            else:
                n = int(v, 10)
        except ValueError:
            raise _at(mark, f"{value!r} is not a whole number", "write digits only") from None
        return _number(n, value, mark)
    if tag == _FLOAT:
        if ":" in value:
            return value
        try:
            f = _CTOR.construct_yaml_float(yaml.ScalarNode(tag, value))
        except ValueError:
            raise _at(mark, f"{value!r} is not a number", "write a plain number") from None
        return _number(f, value, mark)
    if tag == _NULL:
        return None
    if tag == _TIMESTAMP:
        try:
            return _CTOR.construct_yaml_timestamp(yaml.ScalarNode(tag, value))
        except (ValueError, OverflowError):
            raise _at(mark, f"{value!r} is not a valid date", "write YYYY-MM-DD, or quote it") from None
    raise _at(mark, f"unsupported YAML tag {tag}", "project files hold plain values only; remove the tag")


def _number(n: Any, text: str, mark: Any) -> Any:
    if isinstance(n, float) and not math.isfinite(n):
        raise _at(mark, f"{text!r} is not a finite number",
                  "write a number (NaN and infinity are not values); quote it if it is text")
    if abs(n) > MAX_NUMBER:
        raise _at(mark, f"{text} is out of range (numbers lie within -10^15..10^15)",
                  "write a smaller number; quote it if it is an identifier such as a serial number")
    return n


def _plain_value(text: str, mark: Any) -> Any:
    tag = _resolve_plain(text)
    return _MERGE_KEY if tag == _MERGE else scalar_value(tag, text, True, mark)


def plain_reading(text: str) -> Any:
    """What the loader makes of `text` written as a plain scalar (YamlProblem if nothing)."""
    return _plain_value(text, None)


def key_text(key: Any) -> str:
    """A scalar written as a key (a number, a date, null) as the text it stands for."""
    if key is None:
        return "null"
    if key is NOT_STATED:
        return MARKER
    if hasattr(key, "isoformat"):
        return key.isoformat()
    if isinstance(key, float) and key.is_integer() and abs(key) < 1e15:
        return repr(key)
    return str(key)


class _Frame:
    __slots__ = ("container", "is_map", "key", "key_mark", "merged", "start", "anchor", "mark")

    def __init__(self, container: Any, is_map: bool, start: int, anchor: str | None, mark: Any):
        self.container, self.is_map, self.start, self.anchor, self.mark = container, is_map, start, anchor, mark
        self.key: Any = _NO_KEY
        self.key_mark = None
        self.merged: set[str] | None = None


def parse(text: str, kept_tags: frozenset[str] = frozenset()) -> Any:
    """Plain data (dicts, lists, scalars) from one YAML document; None for an empty one.
    A scalar under one of `kept_tags` is a `Tagged` value (its text uninterpreted).

    Raises YamlProblem for anything that is not a bounded, plain, single YAML document.
    """
    budget = EXPANSION_PER_CHAR * len(text) + EXPANSION_FLOOR
    try:
        return _build(_parser(text), budget, kept_tags)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        msg = (exc.problem or exc.context or "malformed YAML").strip()
        raise _at(mark, f"malformed YAML: {msg}", "check the indentation and quoting near here") from None
    except yaml.reader.ReaderError as exc:
        line, column = _line_col(text, exc.position, exc.encoding)
        raise YamlProblem(f"unreadable text: {exc.reason} (#x{exc.character:04x})" if isinstance(exc.character, int)
                          else f"unreadable text: {exc.reason}",
                          "remove the character, or write it as an escape inside double quotes",
                          line, column) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(f"malformed YAML: {exc}", "check the file is YAML", None, None) from None
    except (ValueError, UnicodeError) as exc:
        raise YamlProblem(f"unreadable text: {exc}", "save the file as UTF-8 YAML text", None, None) from None


def _line_col(text: str, position: int, encoding: Any) -> tuple[int, int]:
    # libyaml counts the position in bytes of the UTF-8 text it was given
    if encoding:
        prefix = text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "replace")
    else:
        prefix = text[:position]
    line = prefix.count("\n") + 1
    return line, len(prefix) - (prefix.rfind("\n") + 1) + 1


def _build(parser: Any, budget: int, kept_tags: frozenset[str] = frozenset()) -> Any:
    get = parser.get_event
    stack: list[_Frame] = []
    anchors: dict[str, tuple[Any, int | None]] = {}   # name -> (object, expanded size or None while open)
    expanded = 0
    root: Any = None
    documents = 0

    def add(value: Any, ev: Any, is_scalar: bool) -> None:
        nonlocal root
        if value is _MERGE_KEY and not (stack and stack[-1].is_map and stack[-1].key is _NO_KEY):
            raise _at(ev.start_mark, "a merge key (<<) stands only as a key", "quote '<<' if it is text")
        if not stack:
            root = value
            return
        top = stack[-1]
        if not top.is_map:
            top.container.append(value)
            return
        if top.key is _NO_KEY:
            if not is_scalar or isinstance(value, (list, dict)):
                raise _at(ev.start_mark, "a key must be a plain name", "write keys as simple words")
            if value is _MERGE_KEY:
                top.key = _MERGE_KEY
            else:
                key = value if type(value) is str else key_text(value)
                if key in top.container and not (top.merged and key in top.merged):
                    raise _at(ev.start_mark, f"key {key!r} appears twice in the same mapping",
                              "remove or rename one of them")
                top.key = key
            top.key_mark = ev.start_mark
            return
        out = top.container
        if top.key is _MERGE_KEY:
            for m in value if isinstance(value, list) else [value]:
                if not isinstance(m, dict):
                    raise _at(ev.start_mark, "a merge key (<<) needs a mapping", "merge an anchored mapping")
                if top.merged is None:
                    top.merged = set()
                for k, v in m.items():
                    if k not in out:
                        out[k] = v
                        top.merged.add(k)
        else:
            if top.merged:
                top.merged.discard(top.key)
            out[top.key] = value
        top.key = _NO_KEY

    def open_(container: Any, is_map: bool, ev: Any) -> None:
        nonlocal expanded
        if stack and stack[-1].is_map and stack[-1].key is _NO_KEY:
            raise _at(ev.start_mark, "a key must be a plain name", "write keys as simple words")
        if len(stack) >= MAX_DEPTH:
            raise _at(ev.start_mark, "the document is nested too deeply", "flatten the structure")
        tag = ev.tag
        if tag not in (None, "!", _TAG + ("map" if is_map else "seq")):
            raise _at(ev.start_mark, f"unsupported YAML tag {tag}", "remove the tag")
        expanded += 1
        if ev.anchor is not None:
            anchors[ev.anchor] = (container, None)
        stack.append(_Frame(container, is_map, expanded, ev.anchor, ev.start_mark))

    def close(ev: Any) -> None:
        frame = stack.pop()
        if frame.is_map and frame.key is not _NO_KEY:  # pragma: no cover - libyaml pairs keys and values
            raise _at(ev.start_mark, "a key has no value", "write key: value")
        if frame.anchor is not None:
            anchors[frame.anchor] = (frame.container, expanded - frame.start + 1)
        add(frame.container, ev, False)

    plain_values: dict[str, Any] = {}   # resolved plain scalars: ids and words repeat a lot
    while True:
        ev = get()
        kind = type(ev)
        if kind is ScalarEvent:
            text = ev.value
            if ev.tag is None and ev.implicit[0]:
                value = plain_values.get(text, _NO_KEY)
                if value is _NO_KEY:
                    value = plain_values[text] = _plain_value(text, ev.start_mark)
            elif ev.tag is None or ev.tag == "!":
                value = NOT_STATED if text == MARKER else text
            elif ev.tag == _MERGE:
                value = _MERGE_KEY
            elif ev.tag in kept_tags:
                value = Tagged(ev.tag, text)
            else:
                value = scalar_value(ev.tag, text, not ev.style, ev.start_mark)
            expanded += len(text) + 1
            if ev.anchor is not None:
                anchors[ev.anchor] = (value, len(text) + 1)
            top = stack[-1] if stack else None
            if top is not None and top.is_map and top.key is not _NO_KEY and top.key is not _MERGE_KEY \
                    and value is not _MERGE_KEY:
                if top.merged:
                    top.merged.discard(top.key)
                top.container[top.key] = value
                top.key = _NO_KEY
            elif top is not None and not top.is_map and value is not _MERGE_KEY:
                top.container.append(value)
            else:
                add(value, ev, True)
        elif kind is MappingStartEvent:
            open_({}, True, ev)
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            close(ev)
        elif kind is SequenceStartEvent:
            open_([], False, ev)
        elif kind is AliasEvent:
            found = anchors.get(ev.anchor)
            if found is None:
                raise _at(ev.start_mark, f"the alias *{ev.anchor} names no anchor before it",
                          f"define &{ev.anchor} before using *{ev.anchor}")
            value, size = found
            if size is None:
                raise _at(ev.start_mark, f"the alias *{ev.anchor} is inside the node it names",
                          "an alias cannot contain itself; copy the values instead")
            expanded += size
            if expanded > budget:
                raise _at(ev.start_mark, "the aliases expand to far more data than the file holds "
                          f"(over {budget:,} characters)",
                          "use fewer aliases, or write the repeated values out")
            add(value, ev, not isinstance(value, (list, dict)))
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _at(ev.start_mark, "the file holds more than one YAML document",
                          "a project file is one document: remove the '---' and what follows")
        elif kind is StreamEndEvent or ev is None:
            return root
        elif kind is StreamStartEvent or kind is DocumentEndEvent:
            continue
        else:  # pragma: no cover - every event kind is listed above
            raise _at(getattr(ev, "start_mark", None), "unexpected YAML event", "")
