"""Issue 31: nothing prints a number for a value the source does not state, in the placement tab
and the appendix (threads with threads per core not stated, memory not stated, one controller's
cache read as the array's); and the placement tab counts the VMs a scenario leaves without storage."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.document import Document
from app.report.tables.configuration import server_tables
from app.report.tables.storage import storage_tables
from app.selection import Selection
from topology import placement_ops as ops
from topology.fileformat import load
from topology.model import Scenario
from topology.unknown import NOT_STATED

ROOT = Path(__file__).resolve().parent.parent
SEED_000 = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"
_DOCUMENTS: list = []


def _rows(tables) -> dict[str, list[str]]:
    return {r.cells[0].text: [c.text for c in r.cells[1:]] for t in tables for r in t.rows if r.cells}


@pytest.fixture
def bed():
    return load(SEED_000)


def test_threads_per_core_not_stated_gives_no_thread_count(bed):
    r710 = next(s for s in bed.servers if s.id == "R710-1")
    assert r710.cpu.threads_per_core == 2
    assert _rows(server_tables(bed))["Total cores / hardware threads"][0] == "8 / 16"
    for s in bed.servers:
        if s.cpu is not None:
            s.cpu.threads_per_core = None
    assert _rows(server_tables(bed))["Total cores / hardware threads"][0] == "8 / not stated"
    assert ops.host_loads(bed)["R710-1"]["threads"] is None


def test_a_cache_one_controller_states_is_not_the_arrays(bed):
    md = bed.arrays[0]
    assert _rows(storage_tables(bed))["Storage cache"][0] == "1 GB (2 x 512 MB)"
    md.controllers[1].cache_gb = NOT_STATED
    cache = _rows(storage_tables(bed))["Storage cache"][0]
    assert cache == "per controller: Controller 0: 512 MB; Controller 1: not stated (array total not known)"
    del md.controllers[1]
    assert _rows(storage_tables(bed))["Storage cache"][0] == "512 MB (Controller 0 only)"


def _view(qtbot, bed, scenario=None):
    from widgets.placement_view import PlacementView
    doc = Document(bed)
    _DOCUMENTS.append(doc)
    view = PlacementView(doc, Selection())
    qtbot.addWidget(view)
    view.resize(1000, 900)
    view.show()
    if scenario is not None:
        view.scenario_combo.setCurrentIndex(view.scenario_combo.findData(scenario))
    return view


def test_the_placement_tab_says_not_stated_for_memory_and_threads(qtbot, bed):
    sql = next(v for v in bed.vms if v.id == "SQL01") if any(v.id == "SQL01" for v in bed.vms) else bed.vms[0]
    sql.memory_gb = NOT_STATED
    for s in bed.servers:
        if s.cpu is not None:
            s.cpu.threads_per_core = None
    view = _view(qtbot, bed)
    chip = next(c for card in view.cards.values() for c in card.chips if c.vm_id == sql.id)
    assert chip.load_text.startswith("memory not stated · ") and " 0 GB" not in chip.load_text
    card = view.cards[sql.host]
    assert "threads not stated" in card.detail.text() and "16 threads" not in card.detail.text()
    assert "not stated" in card.ram_bar.text and "not stated" in card.cpu_bar.text
    assert ", 8 cores, threads not stated" in card.cpu_bar.text


def test_a_failed_array_leaves_its_vms_without_storage_and_the_tab_says_so(qtbot, bed):
    bed.scenarios.append(Scenario(id="array-down", failed=[bed.arrays[0].id]))
    lost = ops.lost_storage(bed, "array-down")
    assert len(lost) == len([v for v in bed.vms if v.host]) and all("MD3000i is failed" in w for w in lost.values())
    view = _view(qtbot, bed, "array-down")
    summary = view.summary.text()
    assert f"{len(lost)} VM(s) lost their storage" in summary
    assert "every VM has a host" not in summary and "of their VMs run elsewhere" not in summary
    chip = next(c for card in view.cards.values() for c in card.chips)
    assert "no storage: array MD3000i is failed" in chip.note
    assert ops.lost_storage(bed, None) == {}
