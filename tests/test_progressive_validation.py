"""A big bed's validation takes seconds: after an open, the findings of the rules already done are
listed while the rest run, the panel says how far the rules are, and the last list is the complete
one, byte for byte what `validate` gives.  The panel never says the bed passes while rules remain."""
from __future__ import annotations

from pathlib import Path

from app.document import Document
from app.selection import Selection
from topology import synthetic
from topology.edits import SetField
from topology.fileformat import load
from topology.validation import validate
from topology.validation.progress import Partial, validate_in_stages
from widgets.validation_panel import ValidationPanel

ROOT = Path(__file__).resolve().parent.parent
WITH_EXCEPTIONS = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"


def _always_due(bed):
    published: list[Partial] = []
    final = validate_in_stages(bed, published.append, first_after_s=0, every_s=0)
    return published, final


def test_the_stages_publish_the_rules_done_so_far_and_end_with_the_complete_list():
    bed = load(WITH_EXCEPTIONS)
    assert bed.exceptions, "the example must document an exception: partial lists apply them too"
    published, final = _always_due(bed)
    assert repr(final) == repr(validate(bed))       # byte for byte, and the staging changed no case
    assert published, "no findings were published while the rules ran"
    done = [p.done for p in published]
    assert done == sorted(set(done)) and all(p.done < p.total for p in published)
    assert len({p.total for p in published}) == 1
    codes_final = {f.code for f in final}
    for p in published:
        assert p.findings, "an empty list says nothing yet: it is not published"
        assert {f.code for f in p.findings} <= codes_final
        shown = {(f.code, f.subjects, f.message, f.accepted) for f in p.findings}
        complete = {(f.code, f.subjects, f.message, f.accepted) for f in final if f.scenario is None}
        # a partial list of a code whose rule is done is the final list of it (the reference's)
        for code in {f.code for f in p.findings}:
            assert {s for s in shown if s[0] == code} == {c for c in complete if c[0] == code}
    assert any(f.accepted for p in published for f in p.findings)


def test_the_stages_leave_the_examples_and_a_synthetic_bed_byte_identical():
    beds = [load(f) for f in sorted((ROOT / "resources" / "examples").glob("*.yaml"))]
    big = synthetic.generate(hosts=40, vms=80, arrays=2, disks=40)
    for vm in big.vms[:5]:
        vm.memory_gb = 0        # findings, so that the stages have something to publish
    beds.append(big)
    assert any(b.scenarios for b in beds) and any(b.configurations for b in beds)
    for bed in beds:
        published, final = _always_due(bed)
        assert repr(final) == repr(validate(bed)), bed.bed.name
    assert published        # the synthetic bed's findings came rule by rule


def test_an_open_lists_findings_while_rules_remain_and_the_panel_never_shows_green(qtbot, monkeypatch):
    from app.live_validation import LiveValidator
    monkeypatch.setattr(LiveValidator, "FIRST_FINDINGS_S", 0.0)
    monkeypatch.setattr(LiveValidator, "MORE_FINDINGS_S", 0.0)
    doc = Document()
    panel = ValidationPanel(doc, Selection())
    qtbot.addWidget(panel)
    seen: list[tuple[str, int, str, str, str]] = []
    doc.validation.findings_changed.connect(lambda findings: seen.append(
        (doc.validation.progress, len(findings), panel.state.text(), panel.model.message, panel.summary())))
    bed = load(WITH_EXCEPTIONS)
    doc.replace(bed, WITH_EXCEPTIONS)
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=30_000)
    partial = [s for s in seen if s[0]]
    assert len(partial) >= 2, seen
    for progress, count, state, message, summary in partial:
        assert progress.endswith(" rules") and state == f"checking… {progress}"
        assert count and "passes every rule" not in message and f"so far, checking {progress}" in summary
    assert seen[-1][0] == "" and seen[-1][2] == "" and doc.validation.findings == validate(bed)

    # an edit keeps the complete list shown until the next complete one: no partial lists then
    seen.clear()
    doc.apply(SetField(bed.servers[0], "memory_gb", 1))
    doc.validation.wait()
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=30_000)
    assert seen and all(progress == "" for progress, *_ in seen)
    doc.validation.shutdown()


def test_another_bed_shows_neither_the_last_beds_findings_nor_green_until_its_own_are_in(qtbot):
    """Between an open and the new bed's first findings (half a second and more on a big bed) the
    list showed the last bed's findings, or, after an empty one, 'the bed passes every rule'."""
    doc = Document()
    panel = ValidationPanel(doc, Selection())
    qtbot.addWidget(panel)
    assert "passes every rule" not in panel.model.message, "nothing checked yet"
    first = load(WITH_EXCEPTIONS)
    doc.replace(first, WITH_EXCEPTIONS)
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=30_000)
    assert panel.findings and panel.state.text() == ""
    other = ROOT / "resources" / "examples" / "rhel-kvm-sriov-iscsi.yaml"
    doc.replace(load(other), other)
    assert panel.findings == [] and panel.state.text() == "checking…"
    assert panel.model.message == "Checking the bed against the rules…"
    qtbot.waitUntil(lambda: doc.validation.revision_shown == doc.revision, timeout=30_000)
    assert panel.state.text() == "" and panel.findings == doc.validation.findings
    doc.validation.shutdown()
