"""`reuse` in the property form: a person ticks it on a volume, the edit is one undoable step, the
saved file says it, and the procedure then keeps the volume's file system instead of formatting it."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from tests.test_property_editor import studio  # noqa: F401  (studio: the fixture)
from topology import methodology as M
from topology.fileformat import dumps
from topology.rename_ops import locate
from widgets.forms.fields import BoolField

VOLUME = "MD3000i:Logs"


def _steps_for(bed, ref: str) -> list:
    return [s for s in M.generate(bed).steps() if s.devices and s.devices[0].startswith(ref + " ")
            or f"the disk of {ref}" in s.text]


def test_ticking_reuse_keeps_the_volume_and_undo_formats_it_again(qtbot, studio):
    doc, selection, tree, editor, panel = studio
    selection.set([VOLUME])          # as the tree or the storage tab selects it
    qtbot.waitUntil(lambda: editor._subject == VOLUME, timeout=5000)
    volume = locate(doc.bed, VOLUME).obj
    before = [s.template for s in _steps_for(doc.bed, VOLUME)]
    assert any(t.endswith("#format") for t in before) and not any("kept" in t for t in before)
    reuse = editor.editor("reuse")
    assert isinstance(reuse, BoolField) and reuse.text() == "no"
    qtbot.mouseClick(reuse, Qt.MouseButton.LeftButton, pos=QPoint(8, reuse.height() // 2))
    assert volume.reuse is True and reuse.text() == "yes" and doc.undo_stack.count() == 1
    assert "reuse: true" in dumps(doc.bed)
    after = _steps_for(doc.bed, VOLUME)
    assert not any(s.template.endswith("#format") for s in after)
    kept = [s for s in after if s.template.endswith("#mount-kept")]
    assert kept and all("keep the" in s.text and "nothing" in s.text for s in kept)
    doc.undo_stack.undo()
    assert volume.reuse is False and reuse.text() == "no"
    assert [s.template for s in _steps_for(doc.bed, VOLUME)] == before
