"""Edit-time checks are the loader's checks (issue 32, item 2): what the property editor, rename
and import let into a bed always opens again, and what the loader refuses is refused while typing,
with the loader's own words."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QSplitter

from app.document import Document
from app.selection import Selection
from topology.fileformat import BedFileError, dumps, load, loads
from topology.model import HostAccess, Port, Server, Workload
from topology.names import field_problem, id_problem
from topology.rename_ops import RenameError, locate, rename
from widgets.property_editor import PropertyEditor

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"
AMS = ROOT / "resources" / "examples" / "ams2500-exchange-esrp.yaml"


@pytest.mark.parametrize("name", ["bad/name x", "rack1/R710", "a:b", " lead", "..", "x\ty", ""])
def test_a_name_the_loader_refuses_is_refused_by_rename_with_its_words(name):
    bed = load(SEED_000)
    loader_says = id_problem(name)
    assert loader_says is not None
    with pytest.raises(RenameError) as refused:
        rename(bed, "R710-1", name)
    if name and name.strip() == name and ":" not in name:   # rename words these its own way
        assert loader_says[0] in str(refused.value)
    text = dumps(load(SEED_000)).replace("id: R710-1\n", f"id: {name!r}\n", 1)
    with pytest.raises(BedFileError):
        loads(text)


@pytest.mark.parametrize("cls, attr, values", [
    (Server, "id", ["R710-1", "host 2", "bad/name", "a:b", "..", " x"]),
    (Port, "mtu", [9000, 576, 575, 65535, 70000]),
    (Port, "vlan", [0, 4095, 4096, -1]),
    (HostAccess, "port", [22, 0, 65535, 65536]),
    (HostAccess, "transport", ["ssh", "winrm", "local", "telnet"]),
    (Workload, "duration_minutes", [0, 1.5, 100_000, 100_001]),
    (Workload, "id", ["oltp", "a/b", "x:y"]),
])
def test_what_field_problem_lets_through_opens_and_what_it_refuses_the_loader_refuses(cls, attr, values):
    """The one function decides: for every value, the verdict equals the loader's on a real file."""
    for value in values:
        bed = loads("format_version: 1\nbed: {name: t}\nservers:\n  - {id: h1}\nworkloads:\n"
                    "  - {id: w1, tool: fio}\naccess:\n  - {host: h1}\n")
        target = {Server: bed.servers[0], Port: None, HostAccess: bed.access[0], Workload: bed.workloads[0]}[cls]
        if cls is Port:
            bed.servers[0].adapters = []
            from topology.model import Adapter
            target = Port(name="p1")
            bed.servers[0].adapters.append(Adapter(name="nic", ports=[target]))
        if attr == "id" and cls is Server:
            bed.access[0].host = value
        if attr == "id" and cls is Workload:
            pass
        setattr(target, attr, value)
        verdict = field_problem(cls, attr, value)
        try:
            loads(dumps(bed))
            opened = True
        except BedFileError:
            opened = False
        assert opened == (verdict is None), (cls.__name__, attr, value, verdict)


@pytest.fixture
def editor(qtbot):
    doc = Document()
    doc.open(SEED_000)
    selection = Selection()
    window = QSplitter()
    form = PropertyEditor(doc, selection, window)
    window.addWidget(form)
    qtbot.addWidget(window)
    window.resize(600, 900)
    window.show()
    yield doc, selection, form
    doc.validation.wait()
    doc.undo_stack.clear()


def _type(qtbot, widget, text):
    from PySide6.QtCore import Qt
    line = widget.lineEdit() if hasattr(widget, "lineEdit") and callable(widget.lineEdit) else widget
    line.setFocus()
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key.Key_Return)


def test_the_form_refuses_a_host_name_the_loader_would_refuse_and_the_bed_still_opens(editor, qtbot, tmp_path):
    doc, selection, form = editor
    selection.set(["R710-1"])
    for bad in ("bad/name x", "rack1/R710"):
        _type(qtbot, form.editor("id"), bad)
        assert "cannot be an id" in form.message("id")
        assert locate(doc.bed, "R710-1") is not None and locate(doc.bed, bad) is None
    path = tmp_path / "bed.yaml"
    doc.save(path)
    load(path)


def test_the_form_refuses_a_number_above_the_loaders_maximum(editor, qtbot):
    doc, selection, form = editor
    selection.set(["R710-1:SAN1"])
    before = locate(doc.bed, "R710-1:SAN1").obj.mtu
    _type(qtbot, form.editor("mtu"), "70000")
    assert "too large" in form.message("mtu") and "65535" in form.message("mtu")
    assert locate(doc.bed, "R710-1:SAN1").obj.mtu == before
    load_text = dumps(doc.bed)
    loads(load_text)


def test_selecting_an_array_whose_mappings_name_their_ports_shows_them(qtbot):
    """Item 4: the AMS 2500's mappings list port names; the form raised AttributeError."""
    doc = Document()
    doc.open(AMS)
    selection = Selection()
    form = PropertyEditor(doc, selection)
    qtbot.addWidget(form)
    for array in doc.bed.arrays:
        selection.set([array.id])
        assert form.shown_subject == array.id
        texts = [w.text() for _h, fp, w in form._summaries if fp is not None and fp.attr == "mappings"]
        assert texts and texts[0] and texts[0] != "<i>none</i>"
    doc.validation.wait()
    doc.undo_stack.clear()
