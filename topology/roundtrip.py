"""Saving over a file people edit by hand: only the parts an edit changed are rewritten.

A bed read from a file keeps a `ProjectSource`: the text and the bed's plain data at that
moment.  Saving compares the bed's plain data now with that data.  Unchanged: the text is
written back byte for byte.  Changed: the text's nodes are located (libyaml's composer gives
every node its place) and only the changed values, entries and list items are rewritten,
so comments, blank lines, key order, quoting and layout stay everywhere else.  A field
changed inside a line changes that line only; a trailing comment on it stays.

A text exactly as the writer lays it out (anything the app saved and nobody touched) needs
no patching: the changed bed is simply written again, at the writer's speed.  A patch is
checked by reading it back; if it does not give the bed (or cannot be made, e.g. an edit
reaches into a value other places refer to with YAML aliases), the bed is written afresh.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from topology import yaml_emit
from topology.errors import BedFileError
from topology.field_plan import plan
from topology.fileformat import loads, loads_keeping_broken_references, read_text
from topology.gc_pause import collector_paused
from topology.model import FORMAT_VERSION
from topology.project_save import to_data, write_atomic

_Composer: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MISSING: Any = object()


def plain(bed: Any) -> dict:
    """A bed's plain data as the file holds it: format_version first."""
    data = to_data(bed)
    return {"format_version": FORMAT_VERSION, **{k: v for k, v in data.items() if k != "format_version"}}


@dataclass
class ProjectSource:
    """The text of a project file and the plain data of the bed it describes."""
    text: str
    data: dict
    canonical: bool | None = None     # the text is exactly what the writer writes for data

    @classmethod
    def of(cls, text: str, bed: Any) -> ProjectSource | None:
        """The source of a bed just read from `text`; None when the file was migrated from an
        older format (its text no longer says what the bed is)."""
        # a byte-order mark (Windows Notepad's UTF-8) may come before the first key
        found = re.search(r"^\ufeff?format_version:[ \t]*(\d+)[ \t]*(#[^\n]*)?\r?$", text, re.M)
        if found is None or int(found.group(1)) != FORMAT_VERSION:
            return None
        return cls(text, plain(bed))


@dataclass
class Rendered:
    text: str
    source: ProjectSource
    how: str          # "unchanged", "written", "patched" or "rewritten" (a patch was not possible)


def render(bed: Any, source: ProjectSource | None) -> Rendered:
    """The text to save for `bed`, keeping what it can of `source`'s text."""
    with collector_paused():
        return _render(bed, source)


def _render(bed: Any, source: ProjectSource | None) -> Rendered:
    new = plain(bed)
    if source is None:
        return Rendered(yaml_emit.dumps(new), ProjectSource(yaml_emit.dumps(new), new, True), "written")
    if new == source.data:
        return Rendered(source.text, source, "unchanged")
    if source.canonical is None:
        text = _written_if_canonical(source, new)
        if text is not None:
            return Rendered(text, ProjectSource(text, new, True), "written")
    if source.canonical:
        text = yaml_emit.dumps(new)
        return Rendered(text, ProjectSource(text, new, True), "written")
    patched: str | None
    # libyaml's marks do not count a byte-order mark: patch the text after it, then put it back
    bom = "\ufeff" if source.text.startswith("\ufeff") else ""
    try:
        patched = bom + patch(source.text[len(bom):], source.data, new, bed if dataclasses.is_dataclass(bed) else None)
    except Exception:  # Unpatchable, or anything unforeseen: a save must still write the bed
        patched = None
    if patched is not None and _reads_as(patched, new):
        return Rendered(patched, ProjectSource(patched, new, False), "patched")
    text = yaml_emit.dumps(new)
    return Rendered(text, ProjectSource(text, new, True), "rewritten")


def _written_if_canonical(source: ProjectSource, new: dict) -> str | None:
    """The text for `new` when the source's text is exactly what the writer writes for its
    data (then `source.canonical` is set), else None.  The writer's text is its top-level
    entries' texts one after the other, so an entry the edit left alone is written once for
    both questions: after a one-field edit this costs about one write, not two."""
    old, text = source.data, source.text
    try:
        written = {key: yaml_emit.entry(key, value) for key, value in new.items()}
        # compared entry by entry against the text, not joined first: a second copy of a 28 MB
        # file's text is work and memory that grow with the bed
        at = 0
        for key, value in old.items():
            piece = written[key] if key in new and new[key] == value else yaml_emit.entry(key, value)
            if not text.startswith(piece, at):
                break
            at += len(piece)
        else:
            source.canonical = at == len(text)
            return "".join(written.values()) if source.canonical else None
    except yaml_emit.Unsupported:
        return None   # the writer hands such data to libyaml: decided the slow way
    source.canonical = False
    return None


def _reads_as(text: str, data: dict) -> bool:
    try:
        bed, _broken = loads_keeping_broken_references(text)
    except BedFileError:
        return False
    return plain(bed) == data


def load(path: str | os.PathLike) -> tuple[Any, ProjectSource | None]:
    """A bed and its source, for saving over the file later."""
    text = read_text(path)
    bed = loads(text, str(path))
    return bed, ProjectSource.of(text, bed)


def save(bed: Any, path: str | os.PathLike, source: ProjectSource | None) -> Rendered:
    """Save atomically, keeping what the edit did not touch of the text `source` holds."""
    rendered = render(bed, source)
    write_atomic(Path(path), rendered.text.encode("utf-8"))
    return rendered


class Unpatchable(Exception):
    """The change cannot be made in place; the caller writes the bed afresh."""


# ====================================================================== the patch

class _Patch:
    def __init__(self, text: str):
        self.text = text
        self.edits: list[tuple[int, int, str]] = []
        self.seq_offset = _sequence_offset(text)
        self.tainted: list[tuple[int, int]] = []

    # -------------------------------------------------------------- positions
    def line_start(self, pos: int) -> int:
        return self.text.rfind("\n", 0, pos) + 1

    def line_after(self, pos: int) -> int:
        """The start of the line after the one `pos` ends on."""
        if pos > 0 and self.text[pos - 1] == "\n":
            return pos
        nl = self.text.find("\n", pos)
        return len(self.text) if nl < 0 else nl + 1

    def owned_start(self, pos: int, floor: int) -> int:
        """The start of the line at `pos`, moved up over the comment lines directly above it."""
        start = self.line_start(pos)
        while start > floor:
            prev = self.line_start(start - 1)
            if prev < floor or not self.text[prev:start].lstrip(" \t").startswith("#"):
                break
            start = prev
        return start

    def content_end(self, node: yaml.Node) -> int:
        if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
            return self.content_end(node.value[-1][1])
        if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
            return self.content_end(node.value[-1])
        end = node.end_mark.index
        while end > node.start_mark.index and self.text[end - 1] in " \t\r\n":
            end -= 1  # a block scalar's token takes in the blank lines after it
        return end

    def guard(self, start: int, end: int) -> None:
        """Refuse to rewrite text that holds an anchor, an alias or a merge."""
        for t_start, t_end in self.tainted:
            if t_start < end and start < t_end:
                raise Unpatchable("the change reaches a value shared through a YAML alias")

    def replace(self, start: int, end: int, new: str) -> None:
        self.guard(start, max(end, start + 1))
        self.edits.append((start, end, new))

    def result(self) -> str:
        out, pos = [], 0
        crlf = "\r\n" in self.text    # a file saved on Windows keeps its line ends
        for start, end, new in sorted(self.edits, key=lambda e: (e[0], e[1])):
            if start < pos:
                raise Unpatchable("two changes overlap")
            out.append(self.text[pos:start])
            out.append(new.replace("\n", "\r\n") if crlf else new)
            pos = end
        out.append(self.text[pos:])
        return "".join(out)

    # -------------------------------------------------------------- writing
    def lines(self, data: Any, indent: int, as_item: bool) -> str:
        try:
            return "".join(yaml_emit.fragment(data, indent, as_item=as_item, seq_offset=self.seq_offset))
        except yaml_emit.Unsupported as exc:
            raise Unpatchable(str(exc)) from None

    def value_form(self, value: Any, column: int, line_rest: int) -> str | None:
        """The one-line form of a new value, if it fits where the old one stood."""
        if isinstance(value, (dict, list)) and type(value) not in (yaml_emit.Flow, yaml_emit.FlowMap):
            if value:
                return None
            return "{}" if isinstance(value, dict) else "[]"
        try:
            if type(value) is yaml_emit.Flow:
                form = yaml_emit.flow_sequence(value)
            elif type(value) is yaml_emit.FlowMap:
                form = yaml_emit.flow_mapping(value)
            else:
                form = yaml_emit.scalar_form(value)
        except yaml_emit.Unsupported:
            return None
        if form is None or column + len(form) + line_rest > yaml_emit.WIDTH:
            return None
        return form

    # -------------------------------------------------------------- mappings
    def mapping(self, node: yaml.MappingNode, old: dict, new: dict, obj: Any = None) -> None:
        fields = _fields(obj)
        entries = node.value
        keys: dict[str, int] = {}
        for i, (key, _value) in enumerate(entries):
            if not isinstance(key, yaml.ScalarNode):
                raise Unpatchable("a key that is not a plain word")
            if key.tag == "tag:yaml.org,2002:merge":
                raise Unpatchable("a mapping with a merge key (<<)")
            keys[key.value] = i
        deleted: set[int] = set()
        inserts: dict[int, list[tuple[str, Any]]] = {}
        before_first: list[tuple[str, Any]] = []
        last_present = -1
        for k, value in new.items():
            if k in keys:
                last_present = keys[k]
            was = old.get(k, _MISSING)
            if was == value:
                continue
            if k in keys:
                self.entry(node, keys[k], was, value, _child(obj, fields, k))
            elif last_present >= 0:
                inserts.setdefault(last_present, []).append((k, value))
            else:
                before_first.append((k, value))
        for k in old:
            if k not in new and k in keys:
                if not self.back_to_default(entries[keys[k]][1], fields.get(k)):
                    deleted.add(keys[k])
            elif k not in new:
                raise Unpatchable(f"{k!r} is not in the text to remove")
        if len(deleted) == len(entries) and not inserts and not before_first:
            raise _Empty()
        column = entries[0][0].start_mark.column if entries else 0
        for i in sorted(deleted):
            self.delete_entry(node, i)
        for i, pairs in inserts.items():
            if i in deleted:
                pos = self.entry_end(node, i)
            else:
                pos = self.line_after(self.content_end(entries[i][1]))
            self.insert(pos, dict(pairs), column, False)
        if before_first:
            first = entries[0][0]
            if self.line_start(first.start_mark.index) + column == first.start_mark.index:
                self.insert(self.owned_start(first.start_mark.index, node.start_mark.index),
                            dict(before_first), column, False)
            else:  # the first key stands after `- `: new keys go after its entry
                self.insert(self.line_after(self.content_end(entries[0][1])), dict(before_first), column, False)

    def back_to_default(self, node: yaml.Node, field: Any) -> bool:
        """A number or switch set back to its default shows the default where it stood (a
        cleared text, list or choice goes with its line)."""
        if field is None or field.kind not in ("int", "float", "bool") or field.default is None:
            return False
        return self.in_place(node, field.default)

    def insert(self, pos: int, data: Any, column: int, as_item: bool) -> None:
        text = self.lines(data, column, as_item)
        if pos > 0 and self.text[pos - 1] != "\n":
            text = "\n" + text
        self.replace(pos, pos, text)

    def entry_end(self, node: yaml.MappingNode, i: int) -> int:
        entries = node.value
        if i + 1 < len(entries):
            return self.owned_start(entries[i + 1][0].start_mark.index, entries[i][0].start_mark.index)
        return self.line_after(self.content_end(entries[i][1]))

    def delete_entry(self, node: yaml.MappingNode, i: int) -> None:
        key = node.value[i][0]
        column = key.start_mark.column
        line = self.line_start(key.start_mark.index)
        if line + column == key.start_mark.index:
            start = self.owned_start(key.start_mark.index, node.start_mark.index)
            self.replace(start, self.entry_end(node, i), "")
        else:  # `- key: value`: the next key moves up behind the dash
            if i + 1 >= len(node.value):
                raise _Empty()
            self.replace(key.start_mark.index, node.value[i + 1][0].start_mark.index, "")

    def patched_within(self, value: yaml.Node, old: Any, new: Any, obj: Any) -> bool:
        """Whether the change was written inside `value`'s own text (its parts, or the scalar in
        place); a part that would be left empty takes back the edits made on the way."""
        mark = len(self.edits)
        try:
            if self.descend(value, old, new, obj):
                return True
        except _Empty:
            del self.edits[mark:]
            return False
        return self.in_place(value, new)

    def entry(self, node: yaml.MappingNode, i: int, old: Any, new: Any, obj: Any) -> None:
        key, value = node.value[i]
        if self.patched_within(value, old, new, obj):
            return
        # the whole entry again, with its key where it stood
        column = key.start_mark.column
        text = self.lines({key.value: new}, column, False)
        self.replace(key.start_mark.index, self.line_after(self.content_end(value)), text[column:])

    def descend(self, node: yaml.Node, old: Any, new: Any, obj: Any) -> bool:
        """Patch inside a block mapping or sequence the old and new values both are."""
        if getattr(node, "flow_style", False):
            return self.flow(node, old, new, obj)
        if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value \
                and type(old) in (dict, yaml_emit.FlowMap) and type(new) in (dict, yaml_emit.FlowMap) and new:
            self.mapping(node, old, new, obj)
            return True
        if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value \
                and isinstance(old, list) and isinstance(new, list) and new:
            self.sequence(node, old, new, obj if isinstance(obj, list) and len(obj) == len(new) else None)
            return True
        return False

    def flow(self, node: yaml.Node, old: Any, new: Any, obj: Any) -> bool:
        """Patch inside a flow collection (`{id: a, cidr: ...}`, `[x, y]`) that keeps its keys or
        length: only the changed values are rewritten, so the line and its comment stay."""
        mark = len(self.edits)
        if isinstance(node, yaml.MappingNode) and isinstance(old, dict) and isinstance(new, dict):
            if set(old) != set(new):
                return False
            where = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
            fields = _fields(obj)
            changed = [(k, where.get(k)) for k in new if old[k] != new[k]]
            parts = [(v, old[k], new[k], _child(obj, fields, k)) for k, v in changed]
        elif isinstance(node, yaml.SequenceNode) and isinstance(old, list) and isinstance(new, list):
            if not len(node.value) == len(old) == len(new):
                return False
            objs = obj if isinstance(obj, list) and len(obj) == len(new) else None
            parts = [(v, a, b, objs[i] if objs else None)
                     for i, (v, a, b) in enumerate(zip(node.value, old, new)) if a != b]
        else:
            return False
        for value, was, now, child in parts:
            if value is None or not self.patched_within(value, was, now, child):
                del self.edits[mark:]
                return False
        return True

    def in_place(self, node: yaml.Node, new: Any) -> bool:
        """Replace a scalar or a flow collection by the new value's one-line form."""
        if isinstance(node, yaml.ScalarNode) and (node.style in ("|", ">")
                                                   or node.start_mark.index == node.end_mark.index):
            return False
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style:
            return False
        start, end = node.start_mark.index, node.end_mark.index
        if "\n" in self.text[start:end]:
            return False
        eol = self.text.find("\n", end)
        rest = (len(self.text) if eol < 0 else eol) - end
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and type(new) in (dict, list):
            new = yaml_emit.FlowMap(new) if isinstance(new, dict) else yaml_emit.Flow(new)   # it stays flow
        form = self.value_form(new, node.start_mark.column, rest)
        if form is None:
            return False
        self.replace(start, end, form)
        return True

    # -------------------------------------------------------------- sequences
    def sequence(self, node: yaml.SequenceNode, old: list, new: list, objs: list | None) -> None:
        items = node.value
        if len(items) != len(old):
            raise Unpatchable("the list in the text is not the list the bed was read from")
        dash = items[0].start_mark.column - 2
        if dash < 0 or self.text[items[0].start_mark.index - 2] != "-":
            raise Unpatchable("a list item not written as `- item`")
        if len(old) == len(new):
            for i, (was, now) in enumerate(zip(old, new)):
                if was != now:
                    self.item(node, i, was, now, objs[i] if objs else None)
            return
        matcher = difflib.SequenceMatcher(None, [_fingerprint(x) for x in old], [_fingerprint(x) for x in new],
                                          autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
                for i, j in zip(range(i1, i2), range(j1, j2)):
                    if old[i] != new[j]:
                        self.item(node, i, old[i], new[j], objs[j] if objs else None)
                continue
            if i2 > i1:
                self.replace(self.item_start(node, i1), self.item_end(node, i2 - 1), "")
            if j2 > j1:
                pos = self.item_start(node, i1) if i1 < len(items) else self.line_after(self.content_end(items[-1]))
                self.insert(pos, new[j1:j2], dash, True)

    def item_start(self, node: yaml.SequenceNode, i: int) -> int:
        return self.owned_start(node.value[i].start_mark.index, node.start_mark.index)

    def item_end(self, node: yaml.SequenceNode, i: int) -> int:
        if i + 1 < len(node.value):
            return self.item_start(node, i + 1)
        return self.line_after(self.content_end(node.value[i]))

    def item(self, node: yaml.SequenceNode, i: int, old: Any, new: Any, obj: Any) -> None:
        value = node.value[i]
        if self.patched_within(value, old, new, obj):
            return
        dash = value.start_mark.column - 2
        text = self.lines([new], dash, True)
        self.replace(value.start_mark.index - 2, self.line_after(self.content_end(value)), text[dash:])


class _Empty(Exception):
    """Every entry of a mapping goes: the value is written again whole."""


def _fields(obj: Any) -> dict[str, Any]:
    """A model object's fields by their key in the file ({} for free-form data)."""
    if obj is None or not dataclasses.is_dataclass(obj):
        return {}
    return {fp.key: fp for fp in plan(type(obj))}


def _child(obj: Any, fields: dict[str, Any], key: str) -> Any:
    field = fields.get(key)
    return getattr(obj, field.attr) if field is not None else None


def _fingerprint(item: Any) -> Any:
    if isinstance(item, dict):
        for key in ("id", "name"):
            if isinstance(item.get(key), str):
                return (key, item[key])
    return repr(item)


def _sequence_offset(text: str) -> int:
    """2 when the file indents a list under its key (`key:\\n  - a`), else 0 (`key:\\n- a`)."""
    found = re.search(r"^( *)[^\s#-][^\n]*:[ \t]*\r?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)- ", text, re.M)
    if found is None:
        return 0
    return 2 if len(found.group(2)) > len(found.group(1)) else 0


def _taint(root: yaml.Node, text: str) -> list[tuple[int, int]]:
    """Spans of nodes reached more than once (anchors and their aliases) and of mappings with
    a merge key: a patch leaves them as they are."""
    seen: set[int] = set()
    spans: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            spans.append((node.start_mark.index, node.end_mark.index))
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.tag == "tag:yaml.org,2002:merge":
                    spans.append((node.start_mark.index, node.end_mark.index))
                stack.extend((key, value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    # the alias and anchor marks themselves
    for found in re.finditer(r"(?<![^\s\[\]{},])[&*][^\s\[\]{},]+", text):
        spans.append((found.start(), found.end()))
    spans.sort()
    return spans


def patch(text: str, old: dict, new: dict, bed: Any = None) -> str:
    """`text` (which reads as `old`) changed where `new` differs from `old` and nowhere else;
    `bed` (whose plain data `new` is) tells each field's default."""
    try:
        root = yaml.compose(text, Loader=_Composer)
    except yaml.YAMLError as exc:
        raise Unpatchable(f"the old text does not parse: {exc}") from None
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise Unpatchable("the document is not a block mapping")
    work = _Patch(text)
    if "&" in text or "<<" in text:
        work.tainted = _taint(root, text)
    try:
        work.mapping(root, old, new, bed)
    except _Empty:
        raise Unpatchable("the whole document changed") from None
    return work.result()
