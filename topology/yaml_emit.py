"""Plain data to project-file text, fast, in exactly the layout libyaml's emitter writes.

Saving a 2,000-host bed through PyYAML's representer and serializer took over 5 s; this
writer produces the same text from the same data in a fraction of that by writing lines
directly.  Each distinct string's written form is worked out once (a cache): the common
case by a character test and the resolver, anything unusual by asking libyaml itself.
Where libyaml would fold a long value over several lines, or write a literal block, the
value is handed to libyaml in a stand-in document that puts it at the same column, so the
folding is libyaml's own.  Data this writer has no rule for (a complex key, a top-level
scalar) raises `Unsupported`; the caller then writes the whole document with libyaml.

`tests/test_roundtrip.py` checks the output against libyaml's for the examples, the
2,000-host layout and generated data.
"""
from __future__ import annotations

import datetime
import io
import re
from typing import Any

import yaml

from topology import yaml_bounded
from topology.unknown import MARKER

WIDTH = 100          # the line width libyaml folds long values at
_HUGE = 1 << 30      # a width at which libyaml folds nothing


class Unsupported(Exception):
    """Data outside what this writer lays out itself."""


class Flow(list):
    """A list written on one line: `[a, b]`."""


class FlowMap(dict):
    """A mapping written on one line: `{a: 1, b: 2}`."""


_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _flow_repr(dumper: Any, data: Flow) -> Any:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


def _flowmap_repr(dumper: Any, data: FlowMap) -> Any:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _str_repr(dumper: Any, data: str) -> Any:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    if not reads_back_as_text(data):
        # libyaml would write 0048 or 1e3 plain (text under YAML 1.1), and the loader, which
        # reads YAML 1.2, would take it for a number: quote it
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


class ProjectDumper(_Dumper):
    """libyaml's emitter with the project's styles: flow lists, literal multi-line text."""


ProjectDumper.add_representer(Flow, _flow_repr)
ProjectDumper.add_representer(FlowMap, _flowmap_repr)
ProjectDumper.add_representer(str, _str_repr)

def libyaml_dumps(data: Any, width: int = WIDTH) -> str:
    """The reference: the document as libyaml writes it."""
    buf = io.StringIO()
    yaml.dump(data, buf, Dumper=ProjectDumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
              indent=2, width=width)
    return buf.getvalue()


# ====================================================================== scalars

def reads_back_as_text(text: str) -> bool:
    """Whether the loader reads this text, written plain, as the same text (the not-stated
    marker is written plain on purpose: it reads back as the marker it stands for)."""
    if not text or text == MARKER:
        return True
    try:
        return yaml_bounded.plain_reading(text) == text
    except yaml_bounded.YamlProblem:
        return False


# Plain in block and flow context, as libyaml decides it, for the common characters.  A
# colon is safe in a block value unless a space follows it (or it ends the text).
_SAFE_FLOW = re.compile(r"[A-Za-z0-9_/(][A-Za-z0-9 _./()@+=~-]*")
_SAFE_BLOCK = re.compile(r"[A-Za-z0-9_/(][A-Za-z0-9 _./:()@+=~-]*")
_RESOLVERS = yaml.resolver.Resolver.yaml_implicit_resolvers


def _plain_is_text_11(text: str) -> bool:
    """libyaml's dumper writes text plain only if YAML 1.1 would read it back as text."""
    for _tag, regexp in _RESOLVERS.get(text[:1], ()):
        if regexp.match(text):
            return False
    return True


def _fast_plain(text: str, pattern: re.Pattern[str]) -> bool:
    return (pattern.fullmatch(text) is not None and not text.endswith((" ", ":")) and ": " not in text
            and _plain_is_text_11(text) and reads_back_as_text(text))


_BREAKS = re.compile("[\n\x85\u2028\u2029]")


def _one_line(out: str) -> bool:
    """libyaml's output is one line: one line break, at the end (YAML breaks lines at NEL,
    LS and PS too)."""
    return _BREAKS.search(out, 0, len(out) - 1) is None


_block_forms: dict[str, str | None] = {}   # text -> one-line form, None: several lines
_flow_forms: dict[str, str | None] = {}
_key_forms: dict[str, str] = {}


def _block_form(text: str) -> str | None:
    form = _block_forms.get(text, "")
    if form != "":
        return form
    if _fast_plain(text, _SAFE_BLOCK):
        form = text
    else:
        out = libyaml_dumps({"k": text}, _HUGE)
        form = out[3:-1] if _one_line(out) else None
    _block_forms[text] = form
    return form


def _flow_form(text: str) -> str | None:
    form = _flow_forms.get(text, "")
    if form != "":
        return form
    if _fast_plain(text, _SAFE_FLOW):
        form = text
    else:
        out = libyaml_dumps(Flow([text]), _HUGE)
        form = out[1:-2] if _one_line(out) else None
    _flow_forms[text] = form
    return form


def _key_form(key: Any) -> str:
    if type(key) is not str:
        raise Unsupported("a key that is not text")
    form = _key_forms.get(key)
    if form is None:
        if _fast_plain(key, _SAFE_BLOCK) and len(key) < 128:
            form = key
        else:
            out = libyaml_dumps({key: None}, _HUGE)
            if out.startswith("?") or not out.endswith(": null\n") or not _one_line(out):
                raise Unsupported(f"the key {key!r} needs libyaml's complex-key form")
            form = out[:-len(": null\n")]
        _key_forms[key] = form
    return form


def _float_form(value: float) -> str:
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


def _scalar_form(value: Any, flow: bool) -> str | None:
    """The one-line form of a scalar, or None when libyaml writes it over several lines."""
    kind = type(value)
    if kind is str:
        return _flow_form(value) if flow else _block_form(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return _float_form(value)
    if value is None:
        return "null"
    if kind is datetime.date:
        return value.isoformat()
    if isinstance(value, str):    # the not-stated marker, or another text type: as the text it shows
        return _flow_form(str(value)) if flow else _block_form(str(value))
    raise Unsupported(f"a {kind.__name__} value")


# ====================================================================== containers

def _flow_seq(items: list, column: int) -> str | None:
    parts = []
    for item in items:
        if isinstance(item, (list, dict)):
            return None
        form = _scalar_form(item, True)
        if form is None:
            return None
        parts.append(form)
    return "[" + ", ".join(parts) + "]"


def _flow_map(mapping: dict) -> str | None:
    parts = []
    for key, item in mapping.items():
        if isinstance(item, (list, dict)) or type(key) is not str:
            return None
        form = _scalar_form(item, True)
        key_form = _flow_form(key)
        if form is None or key_form is None:
            return None
        parts.append(f"{key_form}: {form}")
    return "{" + ", ".join(parts) + "}"


def _in_context(key: str, value: Any, indent: int) -> list[str]:
    """`key: value` with the key at column `indent`, as libyaml writes it (folding, literal
    blocks): a stand-in document nests the pair as deep as it stands here."""
    depth = indent // 2
    doc: Any = {key: value}
    for _ in range(depth):
        doc = {"a": doc}
    return _lines(libyaml_dumps(doc))[depth:]


def _item_in_context(value: Any, indent: int) -> list[str]:
    """`- value` with the dash at column `indent`, as libyaml writes it."""
    depth = indent // 2
    doc: Any = {"a": [value]}
    for _ in range(depth):
        doc = {"a": doc}
    return _lines(libyaml_dumps(doc))[depth + 1:]


def _lines(text: str) -> list[str]:
    if text.endswith("\n...\n"):
        # text kept with its trailing line breaks (`|+`) leaves the document open-ended: libyaml
        # then ends the whole document with `...`, which only libyaml places rightly
        raise Unsupported("a value that keeps its trailing line breaks")
    return text.splitlines(keepends=True)


def _mapping(data: dict, indent: int, out: list[str], seq: int = 0) -> None:
    pad = " " * indent
    append = out.append
    keys, blocks = _key_forms, _block_forms
    for key, value in data.items():
        key_text = keys.get(key) or _key_form(key)
        kind = type(value)
        if kind is str:
            form = blocks.get(value, "")
            if form == "":
                form = _block_form(value)
        elif kind is dict or kind is list:
            if value:
                append(f"{pad}{key_text}:\n")
                if kind is dict:
                    _mapping(value, indent + 2, out, seq)
                else:
                    _sequence(value, indent + seq, out, seq)
            else:
                append(f"{pad}{key_text}: {{}}\n" if kind is dict else f"{pad}{key_text}: []\n")
            continue
        elif kind is int:
            form = str(value)
        elif kind is Flow:
            form = _flow_seq(value, indent)
        elif kind is FlowMap:
            form = _flow_map(value)
        elif isinstance(value, (list, dict)):
            raise Unsupported(f"a {kind.__name__} container")
        else:
            form = _scalar_form(value, False)
        if form is not None and indent + len(key_text) + len(form) < WIDTH - 1:
            append(f"{pad}{key_text}: {form}\n")
        else:
            out.extend(_in_context(key, value, indent))


def _sequence(items: list, indent: int, out: list[str], seq: int = 0) -> None:
    pad = " " * indent
    for item in items:
        kind = type(item)
        if kind is dict or kind is list:
            if not item:
                out.append(f"{pad}- {{}}\n" if kind is dict else f"{pad}- []\n")
                continue
            start = len(out)
            if kind is dict:
                _mapping(item, indent + 2, out, seq)
            else:
                _sequence(item, indent + 2, out, seq)
            first = out[start]
            out[start] = pad + "- " + first[indent + 2:]
            continue
        if kind is Flow:
            form = _flow_seq(item, indent + 2)
        elif kind is FlowMap:
            form = _flow_map(item)
        elif isinstance(item, (list, dict)):
            raise Unsupported(f"a {kind.__name__} container")
        else:
            form = _scalar_form(item, False)
        if form is not None and indent + 2 + len(form) <= WIDTH:
            out.append(f"{pad}- {form}\n")
        else:
            out.extend(_item_in_context(item, indent))


def dumps(data: Any) -> str:
    """The document libyaml would write for `data` (a mapping or a list at the top)."""
    out: list[str] = []
    try:
        if type(data) is dict and data:
            _mapping(data, 0, out)
        elif type(data) is list and data:
            _sequence(data, 0, out)
        else:
            raise Unsupported("a top level that is not a non-empty mapping or list")
    except Unsupported:
        return libyaml_dumps(data)
    return "".join(out)


def entry(key: Any, value: Any) -> str:
    """The lines of one top-level entry as `dumps` writes them in a mapping: a document's
    text is its entries' texts, one after the other.  Raises Unsupported where `dumps`
    would hand the whole document to libyaml."""
    out: list[str] = []
    _mapping({key: value}, 0, out)
    return "".join(out)


def fragment(data: Any, indent: int, *, as_item: bool = False, seq_offset: int = 0) -> list[str]:
    """Lines for a mapping's entries (or a sequence's items) at column `indent`, to be spliced
    into a document; lists under a key are indented by `seq_offset` (0 as libyaml writes them,
    2 for files that indent them).  Raises Unsupported for what only libyaml lays out."""
    out: list[str] = []
    if as_item:
        _sequence(data, indent, out, seq_offset)
    else:
        _mapping(data, indent, out, seq_offset)
    return out


def flow_sequence(items: list) -> str | None:
    """`[a, b]`, or None when an item needs more than one line."""
    return _flow_seq(items, 0)


def flow_mapping(mapping: dict) -> str | None:
    """`{a: 1}`, or None when a value needs more than one line."""
    return _flow_map(mapping)


def scalar_form(value: Any, flow: bool = False) -> str | None:
    """A scalar's one-line form (None: libyaml writes it over several lines)."""
    return _scalar_form(value, flow)
