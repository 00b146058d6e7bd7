"""Saving over project files as people really write them by hand (document start, CRLF, no
final newline, a byte-order mark, flow collections with comments around, unicode): one field
edited the way the designer edits it (an undoable SetField, then the document's save) changes
that line only, and load → save → load gives the same bed and the same bytes."""
from __future__ import annotations

import difflib

import pytest

from topology import edits, roundtrip
from topology.fileformat import loads

HAND_WRITTEN = """format_version: 1
bed:
  name: lab  # lab note: keep in sync with rack 4
networks:
  - {id: iSCSI-A, cidr: 192.168.130.0/24}   # a flow item
servers:
  # the first host
  - id: h1   # R710 in rack 4
    model: Dell R710
    adapters: [   # flow, over lines
      {name: nic, ports: [{name: p1}]}  # one port
    ]  # end of the adapters

  # between items
  - id: h2
    model: "Dell R720 — café ü 💾"
    memory_gb: 32
    attributes: {room: B, "note": x}  # a flow map
"""

VARIANTS = {
    "as written": HAND_WRITTEN,
    "document start": "---\n" + HAND_WRITTEN,
    "comment then document start": "# header\n--- # the bed\n" + HAND_WRITTEN,
    "document end": HAND_WRITTEN + "...\n",
    "Windows line ends": HAND_WRITTEN.replace("\n", "\r\n"),
    "no final newline": HAND_WRITTEN.rstrip("\n"),
    "no final newline, Windows": HAND_WRITTEN.replace("\n", "\r\n").rstrip("\r\n"),
    "byte-order mark (Notepad)": "\ufeff" + HAND_WRITTEN,
    "byte-order mark, Windows line ends": "\ufeff" + HAND_WRITTEN.replace("\n", "\r\n"),
}


def changed(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@pytest.mark.parametrize("name", VARIANTS)
def test_one_edit_of_a_hand_written_file_changes_only_its_line(tmp_path, name):
    original = VARIANTS[name].encode("utf-8")
    path = tmp_path / "bed.yaml"
    path.write_bytes(original)
    bed, source = roundtrip.load(path)
    # load → save with no edit: the very bytes
    roundtrip.save(bed, path, source)
    assert path.read_bytes() == original
    bed, source = roundtrip.load(path)
    h2 = next(s for s in bed.servers if s.id == "h2")
    edits.SetField(h2, "memory_gb", 48).apply()
    saved = roundtrip.save(bed, path, source)
    after = path.read_bytes().decode("utf-8")
    assert saved.how == "patched"
    eol = "\r\n" if "\r\n" in VARIANTS[name] else "\n"
    assert changed(VARIANTS[name], after) == [f"-    memory_gb: 32{eol}", f"+    memory_gb: 48{eol}"]
    # load → save → load: the same bed, the same bytes
    again, again_source = roundtrip.load(path)
    assert again == bed
    roundtrip.save(again, path, again_source)
    assert path.read_bytes().decode("utf-8") == after
    assert loads(after) == bed


def _edit_network(bed):
    edits.SetField(bed.networks[0], "cidr", "192.168.140.0/24").apply()


def _rename_port(bed):
    edits.SetField(bed.servers[0].adapters[0].ports[0], "name", "p9").apply()


def _change_attribute(bed):
    edits.SetField(bed.servers[1], "attributes", {"room": "C", "note": "x"}).apply()


def _add_attribute(bed):
    edits.SetField(bed.servers[1], "attributes", {"room": "B", "note": "x", "rack": "4"}).apply()


@pytest.mark.parametrize("edit,before,after", [
    (_edit_network, "  - {id: iSCSI-A, cidr: 192.168.130.0/24}   # a flow item",
     "  - {id: iSCSI-A, cidr: 192.168.140.0/24}   # a flow item"),
    (_rename_port, "      {name: nic, ports: [{name: p1}]}  # one port",
     "      {name: nic, ports: [{name: p9}]}  # one port"),
    (_change_attribute, '    attributes: {room: B, "note": x}  # a flow map',
     '    attributes: {room: C, "note": x}  # a flow map'),
    (_add_attribute, '    attributes: {room: B, "note": x}  # a flow map',
     "    attributes: {room: B, note: x, rack: '4'}  # a flow map"),
])
@pytest.mark.parametrize("name", ["as written", "Windows line ends", "byte-order mark (Notepad)"])
def test_an_edit_inside_a_flow_collection_keeps_it_on_its_line_with_its_comment(tmp_path, name, edit, before, after):
    path = tmp_path / "bed.yaml"
    path.write_bytes(VARIANTS[name].encode("utf-8"))
    bed, source = roundtrip.load(path)
    edit(bed)
    assert roundtrip.save(bed, path, source).how == "patched"
    text = path.read_bytes().decode("utf-8")
    eol = "\r\n" if "\r\n" in VARIANTS[name] else "\n"
    assert changed(VARIANTS[name], text) == [f"-{before}{eol}", f"+{after}{eol}"]
    assert loads(text) == bed


@pytest.mark.parametrize("name", ["byte-order mark, Windows line ends", "no final newline", "document start"])
def test_the_designer_saves_one_edit_of_a_hand_written_file_as_one_changed_line(qapp, tmp_path, name):
    from app.document import Document
    path = tmp_path / "bed.yaml"
    original = VARIANTS[name].encode("utf-8")
    path.write_bytes(original)
    doc = Document()
    doc.open(path)
    doc.apply(edits.SetField(doc.bed.networks[0], "cidr", "192.168.140.0/24"))
    doc.save()
    text = path.read_bytes().decode("utf-8")
    eol = "\r\n" if "\r\n" in VARIANTS[name] else "\n"
    assert changed(VARIANTS[name], text) == [f"-  - {{id: iSCSI-A, cidr: 192.168.130.0/24}}   # a flow item{eol}",
                                             f"+  - {{id: iSCSI-A, cidr: 192.168.140.0/24}}   # a flow item{eol}"]
    doc.undo_stack.undo()
    doc.save()
    assert path.read_bytes() == original
