"""Reading bytes a host or a person hands over, whatever they hold: decoded without raising,
JSON found and parsed in linear time with its nesting bounded, and a parser that trips over a
value turned into a ResultFileError that names the line, never a traceback.

The parsers themselves (registry.PARSERS) read what a tool writes; this module is what stands
between them and a file that no tool wrote (a damaged copy, a hostile host).
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator

from app.metrics.parsed import ParsedResult, ResultFileError, refuse_non_finite

MAX_DEPTH = 100          # no tool's report nests deeper than a dozen levels

# a JSON string (possibly unterminated: then it runs to the end, so a stray quote never makes a
# scan go back over the text) or a bracket
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[{}\[\]]', re.S)


def decode(raw: bytes) -> str:
    """A result file's text: typeperf and PowerShell write UTF-16 when redirected on some
    Windows.  Never raises: an odd byte count, a lone surrogate or bad UTF-8 become U+FFFD."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", errors="replace")
    return raw.decode("utf-8-sig", errors="replace")


def line_at(text: str, index: int) -> int:
    return text.count("\n", 0, max(0, index)) + 1


def json_objects(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every outermost {...} in `text`, found in one pass: text around them (fio's
    "note:" lines) is skipped, and a `{` that never closes does not hide the objects after it
    (they are then taken as outermost).  Whether each is valid JSON is for `loads` to say."""
    stack: list[tuple[int, int]] = []               # (start, the start of the brace around it or -1)
    spans: list[tuple[int, int, int]] = []          # (start, end, the start of the brace around it or -1)
    for m in _TOKEN.finditer(text):
        c = m.group()
        if c == "{":
            stack.append((m.start(), stack[-1][0] if stack else -1))
        elif c == "}" and stack:
            start, parent = stack.pop()
            spans.append((start, m.end(), parent))
    unclosed = {start for start, _ in stack}
    for start, end, parent in sorted(spans):
        if parent == -1 or parent in unclosed:
            yield start, end


def loads(text: str, what: str = "the JSON", offset_line: int = 1):
    """json.loads with the nesting bounded; ResultFileError naming the line otherwise."""
    depth = 0
    for m in _TOKEN.finditer(text):
        c = m.group()
        if c in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                raise ResultFileError(f"line {line_at(text, m.start()) + offset_line - 1}: {what} nests deeper than "
                                      f"{MAX_DEPTH} levels: not a tool's report, not read",
                                      line_at(text, m.start()) + offset_line - 1)
        elif c in "}]":
            depth = max(0, depth - 1)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno + offset_line - 1
        raise ResultFileError(f"line {line}: {what} cannot be read ({exc.msg})", line) from None
    except (ValueError, RecursionError) as exc:
        raise ResultFileError(f"{what} cannot be read ({exc})", offset_line) from None


_LITERAL = re.compile(r"'([^']{1,200})'")
_LONG_DIGITS = re.compile(r"\d{4000,}")


def _line_of_failure(text: str, exc: BaseException) -> int | None:
    """Where in `text` the value a parser tripped over stands, as far as can be told."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.lineno
    if isinstance(exc, ET.ParseError):
        return exc.position[0]
    if isinstance(exc, ResultFileError):
        return exc.line
    message = str(exc)
    if "integer string conversion" in message or "digits" in message:
        m = _LONG_DIGITS.search(text)
        if m:
            return line_at(text, m.start())
    m = _LITERAL.search(message)
    if m:
        at = text.find(m.group(1))
        if at >= 0:
            return line_at(text, at)
    return None


def guarded(parser: Callable[[str], ParsedResult], text: str, tool: str) -> ParsedResult:
    """The parser's figures, or a ResultFileError that says what could not be read and where.
    Figures that are not finite are left out (refuse_non_finite)."""
    try:
        result = parser(text)
    except ResultFileError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, ArithmeticError, RecursionError,
            ET.ParseError, UnicodeError) as exc:
        line = _line_of_failure(text, exc)
        where = f"line {line}: " if line else ""
        why = str(exc) if not isinstance(exc, RecursionError) else "it nests too deep"
        if len(why) > 200:
            why = why[:200] + " …"
        raise ResultFileError(f"{where}not a {tool} report this program can read: a value it cannot take "
                              f"({type(exc).__name__}: {why})" + ("" if line else " (no line can be named)"),
                              line) from None
    return refuse_non_finite(result)
