"""The Run tab asks before the first step that writes to disks, lists every disk by identity, and
asks once per run; a "no" runs nothing."""
from __future__ import annotations

from types import SimpleNamespace

from app.run import journal as J
from app.run.plan import RunStep, Task
from widgets.disk_write_confirm import confirm_disk_writes, message_box


def _steps():
    fmt = RunStep("5.3", "format", "connectivity", "Connecting", "db-1", [Task("5.3", "db-1", "bash", "mkfs")],
                  devices=["arr:data (WWN naa.60000000000000000e00000000010001, 64 GB)"])
    other = RunStep("5.1", "rescan", "connectivity", "Connecting", "db-1", [Task("5.1", "db-1", "bash", "true")])
    return [other, fmt]


def _session(run_id: str, status: str = J.PENDING):
    return SimpleNamespace(info=SimpleNamespace(id=run_id), task_state=lambda t: J.TaskState(t.step, t.host, status))


def test_asks_once_with_every_disk_and_a_no_stops(qtbot):
    asked: list[str] = []

    def no(parent, text):
        asked.append(text)
        return False
    assert confirm_disk_writes(None, _steps(), _session("r1"), ask=no) is False
    assert "naa.60000000000000000e00000000010001" in asked[0] and "5.3 on db-1" in asked[0]
    assert confirm_disk_writes(None, _steps(), _session("r1"), ask=lambda p, t: True) is True
    assert confirm_disk_writes(None, _steps(), _session("r1"), ask=no) is True     # asked once per run
    assert len(asked) == 1
    # a step that already ran, or steps that write to no disk, ask nothing
    assert confirm_disk_writes(None, _steps(), _session("r2", J.OK), ask=no) is True
    assert confirm_disk_writes(None, _steps()[:1], _session("r3"), ask=no) is True


def test_the_question_as_it_looks(qtbot, tmp_path):
    from app.run.destructive import pending_writes, writes_text
    steps = _steps()
    box = message_box(None, writes_text(pending_writes(steps, _session("r4").task_state)))
    qtbot.addWidget(box)
    box.show()
    qtbot.waitExposed(box)
    image = box.grab()
    out = tmp_path / "disk-write-confirm.png"
    assert image.save(str(out)) and image.width() > 200
    assert box.defaultButton().text() == "Cancel"
