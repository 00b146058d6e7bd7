"""Live validation reads the document's own bed on a worker thread (no copy): edits that land
while it validates must never leave findings of a bed that no longer exists on screen."""
from __future__ import annotations

import threading
import time

from app.background import EditedMeanwhile
from app.document import Document
from topology import synthetic
from topology.edits import RemoveItem, SetField
from topology.validation import validate


def _key(findings):
    return sorted((f.code, f.severity, f.scenario or "", tuple(f.subjects)) for f in findings)


def test_edits_during_validation_never_show_stale_findings(qtbot):
    bed = synthetic.generate(hosts=120, vms=600, arrays=4, disks=200)
    doc = Document(bed)
    live = doc.validation
    live.run_now()
    qtbot.waitUntil(lambda: live.revision_shown == doc.revision, timeout=60_000)
    shown_before = _key(live.findings)

    # Edit repeatedly while validations are under way: remove VMs and take the memory of others, each as an
    # undoable edit, with the worker running on the very objects being changed.
    started = threading.Event()
    for n in range(6):
        live.run_now()
        time.sleep(0.01)
        started.set()
        doc.apply(RemoveItem(bed.vms, bed.vms[0]))
        doc.apply(SetField(bed.vms[-1 - n], "memory_gb", 0))
        qtbot.wait(5)
    qtbot.waitUntil(lambda: live.revision_shown == doc.revision, timeout=60_000)
    assert started.is_set()
    assert _key(live.findings) == _key(validate(bed))
    no_memory = sum(vm.memory_gb == 0 for vm in bed.vms)
    assert no_memory >= 3
    assert sum(f.code == "CAP-008" for f in live.findings) == no_memory

    # Undo everything: the panel follows back to the findings of the original bed.
    while doc.undo_stack.canUndo():
        doc.undo_stack.undo()
    qtbot.waitUntil(lambda: live.revision_shown == doc.revision, timeout=60_000)
    assert _key(live.findings) == shown_before
    live.shutdown()
    live.wait()


def test_a_validation_an_edit_ran_into_is_dropped(qtbot):
    """The worker notes the document's edit sequence before and after; a result whose bed was
    changed meanwhile is thrown away instead of shown, and no error reaches the user."""
    from app import live_validation

    doc = Document(synthetic.generate(hosts=10, vms=20, arrays=1, disks=20))
    live = doc.validation
    live.run_now()
    qtbot.waitUntil(lambda: live.revision_shown == doc.revision, timeout=30_000)
    errors: list[str] = []
    live.failed.connect(errors.append)

    with doc.editing():         # as if the GUI thread were half-way through an edit
        try:
            live_validation.validate_unless_edited(doc, doc.bed)
        except EditedMeanwhile:
            dropped = True
        else:
            dropped = False
    assert dropped
    assert doc.edit_seq % 2 == 0
    # a complete pass with no edit in between gives the findings and the badges of the bed
    findings, badges = live_validation.validate_unless_edited(doc, doc.bed)
    assert _key(findings) == _key(validate(doc.bed))
    assert isinstance(badges, dict)
    assert errors == []
    live.shutdown()
    live.wait()


def test_the_canvas_shows_the_badges_the_worker_sorted_for_the_scenario_it_shows(qtbot, monkeypatch):
    """The worker sorts the findings into badges for the scenario the views show ("*" until someone
    picks one), so the canvas takes them as they are: the same badges it would work out itself,
    and no 28,000-finding pass on the GUI thread after each validation."""
    from app import diagram
    from app.selection import Selection
    from widgets.canvas.view import Canvas
    bed = synthetic.generate(hosts=24, vms=60, arrays=3, disks=60, rack_size=8, scenarios=True)
    bed.links = bed.links[::2]      # paths lost, in the reference and the scenarios: badges to count
    doc = Document(bed)
    canvas = Canvas(doc, Selection())
    qtbot.addWidget(canvas)
    live = doc.validation
    for scenario in ("*", bed.scenarios[0].id):
        doc.scenario.set(scenario)
        live.run_now()
        qtbot.waitUntil(lambda s=scenario: live.revision_shown == doc.revision and live.badges_scenario == s,
                        timeout=60_000)
        worked_out_here: list = []
        monkeypatch.setattr(diagram, "badges", lambda *a, _log=worked_out_here, **k: _log.append(a) or {})
        canvas._on_findings(live.findings)
        monkeypatch.undo()
        assert not worked_out_here and canvas.badges is live.badges
        vm_hosts = {vm.id: host for host, vms in canvas.vms_of.items() for vm in vms}
        assert canvas.badges == diagram.badges(live.findings, canvas.objects, vm_hosts, scenario=scenario)
        assert canvas.badges         # something to compare
    live.shutdown()
    live.wait()
