"""A step that writes to a disk runs its guard library (about 100 to 200 lines) in front of its own
lines.  A document a person reads prints each library once, under "Disk guards", and each step
shows its own lines after one line naming the guard; the run, the JSON export and the command a
person copies keep the script whole."""
from __future__ import annotations

import html
import json
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

import resources
from app.document import Document
from app.report.assembly import build_appendix
from app.report.export import methodology_html
from app.report.export import to_markdown as appendix_markdown
from app.selection import Selection
from tests.storage_identity import with_identities
from topology import methodology as M
from topology.fileformat import load
from topology.methodology.guards import folded, guard_library, guards_in
from topology.methodology.json_export import to_data
from widgets.methodology_view import MethodologyView

END = "# --- end of guard"


@pytest.fixture(scope="module")
def bed():
    # a Windows Hyper-V cluster and a Linux KVM pair, each LUN given the identity an array reports
    return [with_identities(load(resources.example_path(n))) for n in ("md3000i-hyperv-cluster",
                                                                       "rhel-kvm-sriov-iscsi")]


def _guarded(meth):
    return [(s, c) for s in meth.steps() for c in s.automation if END in c.script]


@pytest.mark.parametrize("which", [0, 1])
def test_each_document_prints_each_guard_once_and_every_steps_own_lines(bed, which):
    meth = M.generate(bed[which])
    guarded = _guarded(meth)
    names = guards_in(meth.steps())
    assert len(guarded) >= 3 and names
    appendix = build_appendix(bed[which], methodology=meth)
    documents = {"methodology md": M.to_markdown(meth), "methodology html": methodology_html(meth),
                 "appendix md": appendix_markdown(appendix),
                 "appendix html": "".join(b.html() for b in appendix.blocks)}
    for kind, text in documents.items():
        plain = html.unescape(re.sub(r"<[^>]*>", "", text)) if "html" in kind else text
        for name in names:
            assert plain.count(guard_library(name)) == 1, (kind, name)
        assert plain.count(END) == len(names), kind
        assert plain.count("goes here") >= len(guarded), kind
        for step, cmd in guarded:        # the step's own lines, whole, after the line naming its guard
            assert cmd.script.split(END + "\n", 1)[1] in plain, (kind, step.number)
    # what runs, and what is exported for a machine, is the whole script
    exported = [c["script"] for s in to_data(meth)["sections"] for st in s["steps"] for c in st["commands"]]
    assert sum(1 for s in exported if END in s) == len(guarded)
    assert all(json.dumps(s) for s in exported)


def test_a_guard_that_is_not_word_for_word_the_library_is_never_folded():
    lib = guard_library("linux-block")
    script = lib + "\ntb_select\n"
    assert folded(script)[0].startswith("# --- Testbed Studio guard (linux-block) goes here")
    changed = lib.replace("tb_select()", "tb_select_changed()", 1)
    assert changed != lib
    assert folded(changed + "\ntb_select_changed\n") == (changed + "\ntb_select_changed\n", [])


def test_the_step_view_shows_the_steps_own_lines_and_copies_the_whole_script(qtbot, bed):
    document = Document(bed[1])
    view = MethodologyView(document, Selection())
    qtbot.addWidget(view)
    view.resize(1300, 800)
    view.show()
    qtbot.waitUntil(lambda: view.methodology is not None, timeout=15000)
    step, cmd = _guarded(view.methodology)[0]
    item = view.item_for(step.number)
    view.tree.scrollTo(item)
    qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=view.tree.visualRect(item).center())
    n = step.automation.index(cmd)
    box = view.findChild(type(view.findChild(object, "script_0")), f"script_{n}")
    shown = box.toPlainText()
    assert shown.startswith("# --- Testbed Studio guard (linux-block) goes here")
    assert "Copy command" in shown.split("\n", 1)[0]
    assert END not in shown and shown.split("\n", 1)[1] == cmd.script.split(END + "\n", 1)[1]
    QGuiApplication.clipboard().setText("something else")
    qtbot.mouseClick(view.findChild(type(view.copy_buttons[0]), f"copy_command_{n}"), Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == cmd.script
    view.wait()
    document.undo_stack.cleanChanged.disconnect()
