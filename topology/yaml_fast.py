"""Project files read at C speed where that is sure to give what the bounded loader gives.

`topology.yaml_bounded` builds data from libyaml's events in Python: every bound holds, but
reading a 7 MB bed's events alone takes over a second.  Here rapidyaml (C++) parses the text
and writes it out as JSON, which the C JSON decoder turns into Python data: several times
faster.  That path is taken only where it cannot differ from the bounded loader, and every
doubt sends the file to the bounded loader, which also gives every message its line:

* before rapidyaml sees the text: no anchor, alias or tag (so an alias bomb never reaches
  it; aliases are counted by the bounded loader alone), no directive, explicit key, tab,
  character libyaml refuses, or line break only YAML 1.1 knows; and none of the syntax
  libyaml refuses where rapidyaml reads on: a reserved indicator (`@`, a backtick, `%`), a
  colon right before a flow indicator, after a space or starting a value in a flow
  collection (`{a:, b}`, `a: :x`, `[:x]`), a value or line starting with `]`, `}` or `,`,
  anything but `,]}:` or a comment after a flow collection closes (`- {a: 1} - {b: 2}`),
  ` #` on a line with `[` or `{` (rapidyaml reads on past a comment inside a flow
  collection), text after a block scalar's `|` or `>` on its line (tests/test_yaml_fast.py
  compares the two loaders on mutated and generated text to find more);
* rapidyaml refusing the text (a syntax error, a key that is a list), or more than one
  document, or nesting deeper than `yaml_bounded.MAX_DEPTH`;
* duplicate keys (the JSON decoder would keep the last one silently);
* a number outside +-10**15 or not finite, or one written in a form the two read apart
  (`-.5` is text for the bounded loader, a number for rapidyaml);
* text the bounded loader reads as something else when it is written plain (`0048`, `~`,
  `True`, `2020-01-01`, `.inf`), unless it appears in the file only inside quotes.

The text `not stated` becomes `NOT_STATED` as it does in the bounded loader.  Memory stays
bounded as on the bounded path: with no alias, rapidyaml's tree, the JSON and the data are
each a small multiple of the text.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from topology import yaml_bounded
from topology.unknown import MARKER, NOT_STATED

try:  # the wheel is a dependency; without it every file takes the bounded path
    import ryml  # type: ignore[import-untyped]  # the wheel ships no type information
except ImportError:  # pragma: no cover
    ryml = None

# Bytes that may start something rapidyaml and libyaml read apart, or that JSON cannot show:
# node properties (&anchor *alias !tag), explicit keys, directives, a carriage return, tabs
# and control characters.  Most files hold none; where some are found, the text is looked at
# closely (_SUSPECT_TEXT).
_SUSPECT_BYTES = b"&*!?%@`\r" + bytes(range(0x00, 0x0a)) + b"\x0b\x0c" + bytes(range(0x0e, 0x20)) + b"\x7f"
_UNSUSPECT_BYTES = bytes(b for b in range(256) if b not in _SUSPECT_BYTES)
_CONTROL = re.compile(rb"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]")
_SUSPECT_TEXT = re.compile(r"(?:^|(?<=[\s\[\]{},:]))[&*!?@`%]|\r(?!\n)", re.M)
# Pairs of characters libyaml refuses where rapidyaml reads on, found in two translated copies
# of the text, each a single two-byte search: a value or line starting with `]`, `}` or `,`
# (`- ]x`, `a: ,`; spaces removed), a colon after a space or starting a value in a flow
# collection (`a: :x`, `[:x]`).
_LEFT, _RIGHT = b"\x01", b"\x02"
_BEFORE_CLOSE = bytes.maketrans(b"\n-:]},", _LEFT * 3 + _RIGHT * 3)
_BEFORE_COLON = bytes.maketrans(b"[{, \t\n:", _LEFT * 6 + _RIGHT)
_COLON_BEFORE_FLOW = re.compile(rb":[,\[\]{}]")
_OPENING_CLOSE = re.compile(rb"[ \n]*[\]},:]")
# a block scalar's header followed by text on its own line (`key: > text`)
_BLOCK_HEADER_WITH_TEXT = re.compile(rb"(?:^|(?<=\s))[|>][-+0-9]*[ \t]*[^\s#]", re.M)
# anything but `,]}:` or a comment after a flow collection closes (`- {a: 1} - {b: 2}`); one
# pattern per bracket, so that each search skips to its bracket at C speed
_AFTER_FLOW = (re.compile(rb"\](?:[ \t]*[^\s,\]}#:]|#)"), re.compile(rb"\}(?:[ \t]*[^\s,\]}#:]|#)"))
_COMMENT_IN_FLOW = re.compile(rb"^[^\n#]*[\[{][^\n]*\s#", re.M)
# what libyaml refuses or takes for a line break (NEL, LS, PS), and a byte-order mark
_SUSPECT_NON_ASCII = re.compile("[\x80-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")

# A JSON string that the bounded loader might read as something other than this text when
# it is written plain: what YAML 1.1 and 1.2 resolve to a number, a date, null, true or false,
# a merge or a value key.  A match may start at an escaped quote inside a string; it then
# ends at that string's own closing quote, so no real string is missed.  The words the bounded
# loader reads as true, false, null, a merge or a value key are the second alternative: as a
# value rapidyaml writes plain true, false and null as JSON literals and the rest as strings
# (as a key every one of them is a string, and a mapping with one goes to the bounded loader).
# One search of the JSON finds both: a match holds no quote but its first and last, and no JSON
# string's closing quote is followed by a digit or a letter, so no match of one alternative can
# hide one of the other (looking for the words in the text first cost more than the search).
_UNSURE_TEXT = re.compile(rb'"([-+0-9.](?:[-+0-9a-zA-Z._: ]|\\t)*|True|TRUE|False|FALSE|Null|NULL|~|<<|=)"(:?)')
_UNSURE_KEYS = frozenset(("true", "false", "TRUE", "FALSE", "Null", "NULL", "~", "<<", "=", ""))
# digits as 0, everything else as a space: a run of 16 zeros is a number beyond +-10**15
_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10).translate(
    bytes(b if 0x30 <= b <= 0x39 else 0x20 for b in range(256)))
_LONG_NUMBER = b"0" * 16
# Nesting: rapidyaml's JSON indents each block level by two spaces and writes a flow
# collection on one line, so every level is two spaces of indentation or a bracket on the
# line; a file under both limits below is within MAX_DEPTH, any other is counted exactly.
_DEEP_INDENT = b"\n" + b" " * (yaml_bounded.MAX_DEPTH // 2 * 2)
_BRACKETS = bytes.maketrans(b"{", b"[")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[{\n")
_MANY_BRACKETS = b"[" * (yaml_bounded.MAX_DEPTH // 2 - 1)

_STDERR = threading.Lock()


# a decimal integer or fraction as rapidyaml writes plain scalars out as JSON numbers
_CANONICAL_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


class _Unsure(Exception):
    """The fast reading might differ from the bounded loader's."""


def read(text: str) -> Any:
    """Plain data from one YAML document, as `yaml_bounded.parse` gives it (YamlProblem too)."""
    data = parse(text)
    return yaml_bounded.parse(text) if data is None else data


def parse(text: str) -> Any:
    """The document's plain data when the fast path is sure of it, else None."""
    if ryml is None:
        return None
    try:
        raw = text.encode("utf-8")
    except UnicodeError:
        return None
    if _suspect(text, raw):
        return None
    js = _as_json(raw)
    if not js or _too_deep(js):
        return None
    try:
        data = json.loads(js, object_pairs_hook=_mapping, parse_float=_float)
    except (ValueError, RecursionError, _Unsure):
        return None
    # each text once: a big bed writes the same few (switch ports '1' to '48') tens of thousands of times
    for written, colon in set(_UNSURE_TEXT.findall(js)):
        if not _reads_as_written(written.decode(), bool(colon), text):
            return None
    if b'"' + MARKER.encode() + b'"' in js:
        data = _marked(data)
    return data


def _suspect(text: str, raw: bytes) -> bool:
    left = raw.translate(None, _UNSUSPECT_BYTES)
    if left and (_CONTROL.search(left) or _SUSPECT_TEXT.search(text)):
        return True
    if not text.isascii() and _SUSPECT_NON_ASCII.search(text):
        return True
    if _COLON_BEFORE_FLOW.search(raw) or _OPENING_CLOSE.match(raw):
        return True
    if _LEFT + _RIGHT in raw.translate(_BEFORE_CLOSE, b" ") or _LEFT + _RIGHT in raw.translate(_BEFORE_COLON):
        return True
    if (b"|" in raw or b">" in raw) and _BLOCK_HEADER_WITH_TEXT.search(raw):
        return True
    if any(pattern.search(raw) for pattern in _AFTER_FLOW):
        return True
    if b"#" in raw and _COMMENT_IN_FLOW.search(raw):
        return True
    return _LONG_NUMBER in raw.translate(_DIGITS)


def _as_json(raw: bytes) -> bytearray | None:
    buf = bytearray(raw)
    with _quiet_stderr():   # rapidyaml prints every error to stderr before raising it
        try:
            tree = ryml.Tree()
            tree.reserve(_nodes_at_most(raw))   # a tree that grows as it fills takes 3x as long to parse
            ryml.parse_in_place(buf, tree=tree)   # the tree points into buf: both live until here
            root = tree.root_id()
            if tree.is_stream(root):
                if tree.num_children(root) != 1:
                    return None
                root = tree.first_child(root)
            out = bytearray(2 * len(raw) + 4096)   # JSON is about 1.9 times the YAML
            failed, size = ryml.emit_json_to_substr(tree, root, out)
            if failed:
                out = bytearray(size)
                failed, size = ryml.emit_json_to_substr(tree, root, out)
        except Exception:  # rapidyaml's parse and visit errors, and SWIG's own
            return None
    if failed:  # pragma: no cover - the second buffer has the size rapidyaml asked for
        return None
    del out[size:]
    return out


def _nodes_at_most(raw: bytes) -> int:
    """A hint for the tree's size: one node per line, sequence item and flow item, a little
    over what rapidyaml makes of a block-style bed.  Bounded by one node per eight bytes, so
    that text full of commas inside quotes reserves no more than such a file's size calls for
    (at ~140 bytes a node); a denser file grows the tree as it would without a hint."""
    counted = raw.count(b"\n") + raw.count(b"- ") + raw.count(b",") + raw.count(b"[") + raw.count(b"{")
    return 16 + min(counted + counted // 32, len(raw) // 8)


def _too_deep(js: bytearray) -> bool:
    if _DEEP_INDENT not in js and _MANY_BRACKETS not in js.translate(_BRACKETS, _NOT_BRACKETS):
        return False
    try:
        data = json.loads(js)
    except (ValueError, RecursionError):
        return True
    return _depth(data, 0) > yaml_bounded.MAX_DEPTH


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 on /dev/null meanwhile (other threads' output then is lost too)."""
    with _STDERR:
        try:
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        try:
            saved = os.dup(2)
            null = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            yield
            return
        try:
            os.dup2(null, 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(null)


def _mapping(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len(pairs) == 1:     # half a big bed's mappings (a switch port's name): no key to repeat
        key, value = pairs[0]
        if key in _UNSURE_KEYS:
            raise _Unsure("a key is a word read otherwise when written plain")
        return {key: value}
    mapping = dict(pairs)
    if len(mapping) != len(pairs) or not _UNSURE_KEYS.isdisjoint(mapping):
        raise _Unsure("a key appears twice, or is a word read otherwise when written plain")
    return mapping


_FLOATS: dict[str, float] = {}


def _float(written: str) -> float:
    """A number with a point or an exponent, read as the bounded loader reads every form
    rapidyaml may have written it in (it writes .5 as 0.5 and 1. as 1.0)."""
    value = _FLOATS.get(written)
    if value is None:
        forms = [written]
        if written.startswith(("0.", "-0.")):
            forms.append(written.replace("0.", ".", 1))
        if written.endswith(".0"):
            forms.append(written[:-1])
        readings = [_plain(form) for form in forms]
        value = readings[0]
        if type(value) is not float or any(r != value or type(r) is not float for r in readings):
            raise _Unsure(written)
        _FLOATS[written] = value
    return value


def _plain(text: str) -> Any:
    try:
        return yaml_bounded.plain_reading(text)
    except yaml_bounded.YamlProblem:
        return _Unsure


def _reads_as_written(written: str, is_key: bool, text: str) -> bool:
    """Whether the bounded loader reads this JSON text as the same text (or key)."""
    if "\\" in written or written in (".nan", ".inf", "-.inf"):
        return False   # rapidyaml writes inf, nan and their kin as these; escapes: not worth it
    if not is_key and _CANONICAL_NUMBER.fullmatch(written):
        # rapidyaml writes such a scalar written plain as a JSON number: as a JSON string it was
        # quoted (or a block scalar), which the bounded loader reads as text too (switch ports '1')
        return True
    reading = _plain(written)
    if reading is _Unsure:
        pass
    elif type(reading) is str:
        return True
    elif is_key and yaml_bounded.key_text(reading) == written:
        return True
    if not written:
        # rapidyaml writes an empty plain value as null, so "" was quoted; not so for a key
        return not is_key
    if " " in written:
        return False   # a plain scalar folded over lines is not found verbatim below
    # written plain it would read otherwise: it must stand in the file only inside quotes
    plain = re.compile(r"(?:^|(?<=[\s\[{,:]))" + re.escape(written) + r"(?=$|[\s,\]}:])", re.M)
    return plain.search(text) is None


def _marked(data: Any) -> Any:
    """The not-stated marker in place of the text `not stated` (values only: keys stay text)."""
    if type(data) is dict:
        for key, value in data.items():
            if value == MARKER and type(value) is str:
                data[key] = NOT_STATED
            elif type(value) is dict or type(value) is list:
                _marked(value)
    elif type(data) is list:
        for i, value in enumerate(data):
            if value == MARKER and type(value) is str:
                data[i] = NOT_STATED
            elif type(value) is dict or type(value) is list:
                _marked(value)
    elif data == MARKER:
        return NOT_STATED
    return data


def _depth(node: Any, level: int) -> int:
    if type(node) is dict:
        node = node.values()
    elif type(node) is not list:
        return level
    if level >= yaml_bounded.MAX_DEPTH:
        return level + 1
    return max((_depth(child, level + 1) for child in node), default=level + 1)
