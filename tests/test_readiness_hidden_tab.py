"""Readiness beside validation stays current while the Methodology tab is out of sight (issue 32):
the hidden tab no longer refills its step tree after every edit (that cost the GUI thread on big
beds), but the procedure is still worked out on its worker, so the readiness the validation
header counts is the bed's as it is now; the tree is built when the tab is shown."""
from __future__ import annotations

import pytest

from topology import operations as ops

ONE_HOST = """format_version: 1
bed: {name: one host}
servers:
  - id: h1
    role: load_client
    os: Red Hat Enterprise Linux 7.9
    adapters: [{name: nic, ports: [{name: SAN1, roles: [iscsi]}]}]
"""


@pytest.fixture
def window(laptop_window):
    return laptop_window


def _tree_text(view) -> str:
    """The step rows the Methodology page shows (section titles left out)."""
    model = view.tree.model()
    rows = (model.index(i, 0).data() for i in range(model.rowCount()))
    return "\n".join(row.strip() for row in rows if row.startswith(" "))


def _gap_subjects(w) -> set[str]:
    return {g.subject for g in w.readiness.gaps}


def test_an_edit_with_the_methodology_hidden_updates_readiness_now_and_its_tree_when_shown(qtbot, window, tmp_path):
    w = window
    path = tmp_path / "bed.yaml"
    path.write_text(ONE_HOST, encoding="utf-8")
    assert w.open_path(path)
    w.tabs.setCurrentWidget(w.canvas)
    qtbot.waitUntil(lambda: w.methodology.methodology is not None and bool(w.readiness.gaps), timeout=60000)
    before = w.findings.readiness.text()
    title_before = w.docks["readiness"].windowTitle()
    assert "not ready" in before and "h2" not in _gap_subjects(w)
    assert not w.methodology.isVisible()

    # a second host, drawn with nothing stated: the procedure cannot resolve its OS
    w.document.apply(ops.add_device(w.document.bed, "server:load_client", x=400, y=0))
    added = w.document.bed.servers[-1].id
    qtbot.waitUntil(lambda: added in _gap_subjects(w), timeout=60000)
    after = w.findings.readiness.text()
    assert after != before and "not ready" in after
    assert w.docks["readiness"].windowTitle() != title_before
    # the hidden tab has not rebuilt its tree for the edit
    assert added not in _tree_text(w.methodology)

    w.tabs.setCurrentWidget(w.methodology)
    qtbot.waitUntil(lambda: added in _tree_text(w.methodology), timeout=10000)
    # what the tab shows and what the header counts are the same procedure's
    assert w.findings.readiness.text() == after
    assert {g.subject for g in w.methodology.methodology.readiness} == _gap_subjects(w)
