"""An array group's storage where people read it (issue 30): its volumes on the diagram (canvas,
draw.io, GraphML) as a card of the group, not on one member; and in the printed appendix D, the
group, its pools with the members each spans, its volumes with pool, members, size and settings
('not stated' where the source leaves one open) and its access records.  Read back as a reader
gets them: the PDF with poppler, the GraphML with networkx, the draw.io file as XML."""
from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest
from PySide6.QtCore import Qt
from test_canvas import Studio
from test_diagram_exchange import cells

from app.diagram.export import export_diagram
from app.document import Document
from app.report.tables.storage import storage_tables
from resources import example_path
from topology.edits import InsertItem
from topology.fileformat import load, loads
from topology.layout import layout, overlapping
from topology.model import Volume

R710 = "r710-rhev-hyperv-equallogic"
DS5020 = "bladecenter-hs22-ds5020-fc"
THREE = Path(__file__).resolve().parent / "data" / "array_groups" / "three-member-group.yaml"
GROUP_VOLUMES = ("guest1-data", "guest2-data", "hyperv-vhds")


def _three_with_settings():
    text = THREE.read_text(encoding="utf-8").replace(
        "{name: vol1, size_gb: 2000, pool: data, purpose: [database]}",
        "{name: vol1, size_gb: 2000, pool: data, purpose: [database], reserve_gb: 200,"
        " settings: {write_cache: not stated, read_ahead: true}}")
    assert "reserve_gb: 200" in text
    return loads(text)


def _table(tables, key):
    (t,) = [t for t in tables if t.key == key]
    return t


def _rows(t):
    return {r.cells[0].text: {c: cell.text for c, cell in zip(t.columns, r.cells, strict=True)}
            for r in t.rows if not r.group}


# ---------------------------------------------------------------------------- the appendix's tables

def test_the_group_volumes_table_gives_pool_members_size_and_settings():
    tables = storage_tables(_three_with_settings())
    rows = _rows(_table(tables, "group-eqlgrp-volumes"))
    assert rows["vol1"]["Pool"] == "data" and rows["vol1"]["Members"] == "m1, m2"
    assert rows["vol1"]["Size (GB)"] == "2,000" or rows["vol1"]["Size (GB)"] == "2000"
    assert rows["vol1"]["Settings"] == "write cache not stated; read-ahead Enabled; snapshot reserve 200 GB (10 %)"
    assert rows["vol1"]["Access records"] == "R710"
    assert rows["log1"]["Members"] == "m3" and rows["log1"]["Settings"] == "not stated"
    pools = _rows(_table(tables, "group-eqlgrp-pools"))
    assert pools["data"]["Members it spans"] == "m1, m2" and pools["data"]["RAID policy"] == "RAID 10"
    summary = _rows(_table(tables, "group-eqlgrp"))
    assert summary["Group (discovery) address"]["eqlgrp"] == "10.10.5.1/24"
    assert summary["Members"]["eqlgrp"] == "3: m1, m2, m3"
    access = _rows(_table(tables, "group-eqlgrp-hosts"))
    assert access["R710"]["Volumes"] == "vol1, log1"


def test_what_the_source_leaves_open_prints_not_stated():
    tables = storage_tables(load(example_path(R710)))
    rows = _rows(_table(tables, "group-eql-group-volumes"))
    assert set(rows) == set(GROUP_VOLUMES)
    for name in GROUP_VOLUMES:      # pool members, size and settings are not in the report
        assert rows[name]["Pool"] == "default"
        assert rows[name]["Members"] == rows[name]["Size (GB)"] == rows[name]["Settings"] == "not stated"
    summary = _rows(_table(tables, "group-eql-group"))
    assert summary["Group (discovery) address"]["eql-group"] == "not stated"
    assert summary["Members"]["eql-group"].startswith("6: PS5000XV-1")


def test_an_array_volume_prints_its_settings_each_unstated_one_said_so():
    text = example_path(DS5020).read_text(encoding="utf-8")
    text = text.replace("segment_size_kb: not stated", "segment_size_kb: 128", 1)
    rows = _rows(_table(storage_tables(loads(text)), "storage-ds5020-volumes"))
    assert rows["exchange-cell1"]["Settings"] == "segment size 128 KB; read cache not stated; write cache not stated"
    assert rows["sql-cell1"]["Settings"] == "segment size not stated; read cache not stated; write cache not stated"
    assert rows["access (Access (UTM) LUN)"]["Settings"] == "not stated"     # it gives no settings at all


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    from app.report.export import write
    out = tmp_path_factory.mktemp("print") / "r710.pdf"
    figures = write(load(example_path(R710)), out, "pdf")
    text = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True, check=True,
                          timeout=120).stdout
    return out, text, figures["pages"]


def test_the_printed_appendix_lists_the_groups_volumes(printed, tmp_path):
    pdf, text, pages = printed
    page_texts = text.split("\f")
    (page,) = [i for i, pg in enumerate(page_texts) if "Volumes: array group eql-group" in pg][:1]
    pg = page_texts[page]
    for name in GROUP_VOLUMES:
        assert re.search(rf"{name}\s+default\s+not stated\s+not stated", pg), name
    assert "Access records: array group eql-group" in text and "Pools: array group eql-group" in text
    # the page as a reader sees it: rendered, not blank (looked at by eye when the test was written)
    subprocess.run(["pdftoppm", "-r", "70", "-png", "-f", str(page + 1), "-l", str(page + 1), str(pdf),
                    str(tmp_path / "page")], check=True, timeout=120)
    (png,) = tmp_path.glob("page-*.png")
    assert png.stat().st_size > 10000


# ---------------------------------------------------------------------------- the diagram and its exports

def test_drawio_draws_the_group_card_with_a_traceable_row_per_volume(tmp_path):
    bed = load(example_path(R710))
    done = export_diagram(bed, tmp_path / "bed.drawio")
    everything = cells(done.path)
    (card,) = [c for c in everything.values() if c.get("testbed_kind") == "array_group"]
    assert card["testbed_id"] == "eql-group" and card["members"].startswith("PS5000XV-1, PS5000XV-2")
    assert "group address not stated" in card["label"]
    rows = {c["testbed_id"]: c for c in everything.values() if c.get("testbed_kind") == "volume"}
    assert set(rows) == {f"eql-group:{v}" for v in GROUP_VOLUMES}
    for ident, row in rows.items():
        assert row["parent"] == card["id"] and row["pool"] == "default"
        assert row["label"].startswith(ident.partition(":")[2]) and "size not stated" in row["label"]
    # where the canvas draws it: in the strip above the devices, clear of them
    box = layout(bed)["eql-group"]
    assert card["geo"] == (box.x, box.y, box.w, box.h)
    assert not [pair for pair in overlapping(layout(bed)) if "eql-group" in pair]


def test_graphml_holds_the_group_its_members_and_its_volumes(tmp_path):
    done = export_diagram(_three_with_settings(), tmp_path / "bed.graphml")
    g = nx.read_graphml(done.path)
    assert g.nodes["eqlgrp"]["component"] == "array_group" and g.nodes["eqlgrp"]["address"] == "10.10.5.1/24"
    members = {a for a, b, d in g.edges(data=True) if b == "eqlgrp" and d["relation"] == "group_member"}
    assert members == {"m1", "m2", "m3"}
    vol = g.nodes["eqlgrp:vol1"]
    assert vol["component"] == "volume" and vol["pool"] == "data" and vol["pool_members"] == "m1, m2"
    assert g.nodes["eqlgrp:log1"]["pool_members"] == "m3"
    assert g.edges["eqlgrp", "eqlgrp:vol1"]["relation"] == "holds"
    assert "x" in g.nodes["eqlgrp"]          # yEd's geometry: where the canvas draws the card
    keys = ET.parse(done.path).getroot()
    assert keys.tag.endswith("graphml")


def test_the_canvas_draws_the_card_and_it_grows_with_a_new_volume(qtbot):
    doc = Document()
    studio = Studio(qtbot, doc)
    doc.open(example_path(R710))
    canvas = studio.canvas
    chip = canvas.chips["eql-group"]
    before = chip.h
    assert before == layout(doc.bed)["eql-group"].h
    tip = canvas._tooltip(chip.mapToScene(chip.w / 2, 10))
    assert all(v in tip for v in GROUP_VOLUMES) and "6 members" in tip
    group = doc.bed.array_groups[0]
    doc.apply(InsertItem(group.volumes, Volume(name="scratch", size_gb=100, pool="default"), owner="eql-group"))
    qtbot.waitUntil(lambda: canvas.chips["eql-group"].h > before, timeout=5000)
    image = canvas.grab().toImage()
    assert not image.isNull()
    doc.undo_stack.undo()
    qtbot.waitUntil(lambda: canvas.chips["eql-group"].h == before, timeout=5000)


def test_picking_the_card_opens_the_groups_form_not_that_it_names_nothing(qtbot, dialogs, tmp_path, monkeypatch):
    from tests.dialogs import forget_changes
    from widgets.main_window import MainWindow
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    w = MainWindow()
    qtbot.addWidget(w, before_close_func=forget_changes)
    w.show()
    qtbot.waitExposed(w)
    assert w.open_path(example_path(R710))
    chip = w.canvas.chips["eql-group"]
    w.canvas.centerOn(chip)
    qtbot.mouseClick(w.canvas.viewport(), Qt.MouseButton.LeftButton,
                     pos=w.canvas.mapFromScene(chip.mapToScene(chip.w / 2, chip.h / 2)))
    qtbot.waitUntil(lambda: w.selection.ids == {"eql-group"}, timeout=5000)
    assert w.properties.title.text() == "Array group eql-group"
    assert "names nothing" not in w.properties.subtitle.text()
    w.properties.editor("address")                  # its form (tests/test_array_group_form.py edits it)
    w.selection.set(["eql-group:guest2-data"])
    assert w.properties.title.text() == "Volume eql-group:guest2-data"
    assert w.properties.editor("pool").currentText() == "default"
    w.document.validation.wait()
    w.methodology.wait()


def test_the_card_shows_the_chosen_configurations_volumes(qtbot, tmp_path):
    from app.configuration_choice import ConfigurationChoice
    path = tmp_path / "bed.yaml"
    path.write_text(THREE.read_text(encoding="utf-8") + """configurations:
  - id: small
    description: as drawn
  - id: more
    description: two more volumes in the data pool
    set:
      eqlgrp:
        volumes:
          - {name: vol1, size_gb: 2000, pool: data, purpose: [database]}
          - {name: log1, size_gb: 500, pool: logs, purpose: [log]}
          - {name: vol2, size_gb: 100, pool: data}
          - {name: vol3, size_gb: 100, pool: data}
""", encoding="utf-8")
    doc = Document()
    studio = Studio(qtbot, doc)
    doc.open(path)
    canvas = studio.canvas
    choice = ConfigurationChoice.of(doc)
    choice.choose("small")
    qtbot.waitUntil(lambda: choice.name == "small", timeout=5000)
    small = canvas.chips["eqlgrp"].h
    choice.choose("more")
    qtbot.waitUntil(lambda: canvas.chips["eqlgrp"].h > small, timeout=5000)
    tip = canvas._tooltip(canvas.chips["eqlgrp"].mapToScene(20, 10))
    assert "vol3 · pool data · 100 GB" in tip
    choice.choose("small")
    qtbot.waitUntil(lambda: canvas.chips["eqlgrp"].h == small, timeout=5000)


def test_a_group_known_only_from_discovery_gets_a_card_saying_what_is_known(tmp_path):
    """The PS6110XV bed models its group by name and network only (volumes on the members): the diagram
    draws the group's card with what is known and 'not stated' for the rest, not nothing."""
    bed = load(example_path("equallogic-ps6110-hyperv"))
    (group,) = bed.array_groups
    assert not group.holds_storage
    box = layout(bed)[group.name]
    assert not [pair for pair in overlapping(layout(bed)) if group.name in pair]
    everything = cells(export_diagram(bed, tmp_path / "bed.drawio").path)
    (card,) = [c for c in everything.values() if c.get("testbed_kind") == "array_group"]
    assert card["geo"] == (box.x, box.y, box.w, box.h) and card["members"] == "PS6110XV-1, PS6110XV-2"
    assert "group address not stated · 2 members: PS6110XV-1 … PS6110XV-2" in card["label"]
    rows = [c["label"] for c in everything.values() if c.get("parent") == card["id"]]
    assert rows == ["discovery network san-iscsi", "model not stated · firmware not stated",
                    "known from discovery only:", "pools, volumes, access records not stated"]
    # no member names the group: its members are not stated, not "0"
    lone = loads(example_path("equallogic-ps6110-hyperv").read_text(encoding="utf-8")
                 .replace("    group: PS-Series-group\n", ""), "lone.yaml")
    everything = cells(export_diagram(lone, tmp_path / "lone.drawio").path)
    (card,) = [c for c in everything.values() if c.get("testbed_kind") == "array_group"]
    assert "group address not stated · members not stated" in card["label"]
