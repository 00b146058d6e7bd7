"""Autosave and crash recovery, as a user meets them.

The crash test runs the real application (`app.cli gui FILE`, offscreen) in a child
process with a short autosave interval, edits the bed in it, waits for the autosave and
kills the process with SIGKILL.  A window started afterwards in this process must offer
the work, restore exactly the edited bed with the dirty marker, save it to the original
file and clean up.  The other tests cover the quieter paths: no autosave while nothing
changed, none left after a save or a normal close, Later/Discard, unreadable autosaves,
and autosaves of instances that are still running.
"""
from __future__ import annotations

import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from dialogs import Answer, answer_modal, click, forget_changes, shown_title
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtTest import QTest

import resources
from app.autosave import process_start_token
from topology.edits import SetField
from topology.fileformat import dumps, load, save
from widgets.main_window import MainWindow

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = resources.example_path(resources.DEFAULT_EXAMPLE)
INTERVAL_S = 0.1

# Runs in the child: the real entry point, plus a timer that edits the bed the way the
# window would (document.apply), waits for this process's autosave, then crashes hard.
CRASH_AFTER_EDIT = textwrap.dedent('''\
    import json, os, signal, sys, time
    from pathlib import Path
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    bed_file, new_name, new_memory = sys.argv[1], sys.argv[2], int(sys.argv[3])
    autosaves = Path(os.environ["TESTBED_STUDIO_STATE_DIR"]) / "autosave"
    app = QApplication(sys.argv[:1])
    deadline = time.monotonic() + 30

    def autosaved() -> bool:
        for meta in autosaves.glob("*.json"):
            data = json.loads(meta.read_text())
            text = meta.with_suffix(".yaml")
            if data["pid"] == os.getpid() and text.exists() and new_name in text.read_text():
                return True
        return False

    def wait_then_crash() -> None:
        if autosaved():
            print("autosaved; crashing", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        if time.monotonic() > deadline:
            print("no autosave was written", flush=True)
            os._exit(3)
        QTimer.singleShot(50, wait_then_crash)

    def edit() -> None:
        from topology.edits import SetField
        from widgets.main_window import MainWindow
        window = next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)
        doc = window.document if window is not None else None
        if doc is None or str(doc.path) != bed_file:    # the start-up splash turns the loop while it opens
            if time.monotonic() > deadline:
                print(f"the window shows {doc.path if doc else None}, not {bed_file}", flush=True)
                os._exit(4)
            QTimer.singleShot(50, edit)
            return
        doc.apply(SetField(doc.bed.bed, "name", new_name))
        doc.apply(SetField(doc.bed.servers[0], "memory_gb", new_memory))
        print(f"edited; title {window.windowTitle()!r}", flush=True)
        wait_then_crash()

    QTimer.singleShot(0, edit)
    from app.cli import main
    sys.exit(main(["gui", bed_file]))
''')


# ---------------------------------------------------------------------- answering dialogs

# ---------------------------------------------------------------------- fixtures

@pytest.fixture(autouse=True)
def private_state(tmp_path, monkeypatch) -> Path:
    state = tmp_path / "state"
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(state))
    monkeypatch.setenv("TESTBED_STUDIO_AUTOSAVE_SECONDS", str(INTERVAL_S))
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    org = QCoreApplication.organizationName()
    QCoreApplication.setOrganizationName("Testbed Studio tests")
    yield state
    QCoreApplication.setOrganizationName(org)
    for answer in Answer.live:
        answer.cancel()
    Answer.live.clear()


@pytest.fixture
def autosaves(private_state) -> Path:
    return private_state / "autosave"


@pytest.fixture
def make_window(qtbot, dialogs) -> Callable[[], MainWindow]:
    def make() -> MainWindow:
        w = MainWindow()
        qtbot.addWidget(w, before_close_func=forget_changes)
        w.show()
        qtbot.waitExposed(w)
        return w
    return make


@pytest.fixture
def bed_file(tmp_path) -> Path:
    path = tmp_path / "beds" / "crashy.yaml"
    path.parent.mkdir()
    save(load(DEFAULT), path)
    return path.resolve()


def files_in(folder: Path) -> list[str]:
    """The autosave files proper: write_atomic's temporaries (.NAME.xxx.tmp) come and go."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def autosaved(folder: Path) -> bool:
    names = files_in(folder)
    return any(n.endswith(".yaml") for n in names) and any(n.endswith(".json") for n in names)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def plant_autosave(folder: Path, text: str, *, pid: int, bed: str, original: Path | None,
                   stem: str = "", process_start: str | None = None) -> tuple[Path, Path]:
    """An autosave as a session that has since died would have left it."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = stem or f"{pid}-planted"
    text_path, meta_path = folder / f"{stem}.yaml", folder / f"{stem}.json"
    text_path.write_text(text, encoding="utf-8")
    meta_path.write_text(json.dumps({
        "format": 1, "bed": bed, "original_path": str(original) if original else None,
        "saved_at": datetime.datetime(2024, 5, 1, 14, 3).astimezone().isoformat(),
        "pid": pid, "process_start": process_start, "host": socket.gethostname()}), encoding="utf-8")
    return text_path, meta_path


# ---------------------------------------------------------------------- the crash

def test_a_killed_session_is_offered_restored_and_saved_to_its_file(make_window, tmp_path, bed_file,
                                                                    autosaves, dialogs):
    helper = tmp_path / "crash_after_edit.py"
    helper.write_text(CRASH_AFTER_EDIT, encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT),
           "XDG_CONFIG_HOME": str(tmp_path / "child-config")}
    started = time.perf_counter()
    child = subprocess.run([sys.executable, str(helper), str(bed_file), "edited before the crash", "96"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
    print(f"child ran {time.perf_counter() - started:.1f} s")
    assert child.returncode == -signal.SIGKILL, \
        f"the app exited with {child.returncode}\nstdout:\n{child.stdout}\nstderr:\n{child.stderr[-4000:]}"
    assert "autosaved; crashing" in child.stdout
    left = files_in(autosaves)
    assert len(left) == 2 and {Path(n).suffix for n in left} == {".yaml", ".json"}, left

    expected = load(bed_file)
    assert expected.bed.name != "edited before the crash"  # the edit never reached the file
    expected.bed.name = "edited before the crash"
    expected.servers[0].memory_gb = 96
    expected_text = dumps(expected)

    window = make_window()
    asked = answer_modal(click("Recover"))
    assert window.open_initial() is True
    assert len(asked) == 1 and asked[0].title == "Recover unsaved work"
    assert asked[0].text.startswith("Recover unsaved work from ")
    assert "for “edited before the crash”?" in asked[0].text
    assert str(bed_file) in asked[0].informative
    assert dialogs == []

    doc = window.document
    assert doc.snapshot_text() == expected_text
    assert doc.path == bed_file and doc.dirty
    assert shown_title(window).startswith("edited before the crash — crashy.yaml*")
    # the crashed session's files are replaced by this session's own autosave
    mine = [json.loads(p.read_text()) for p in autosaves.glob("*.json")]
    assert [m["pid"] for m in mine] == [os.getpid()]

    assert window.files.save() is True  # to the original file: no dialog
    assert dumps(load(bed_file)) == expected_text
    assert files_in(autosaves) == []
    assert "*" not in shown_title(window) and dialogs == []


# ---------------------------------------------------------------------- the normal life of an autosave

def test_autosave_follows_the_edits_and_goes_with_save_undo_and_close(qtbot, make_window, bed_file, autosaves):
    window = make_window()
    assert window.open_initial(str(bed_file))
    assert window.files.autosave.interval_s == pytest.approx(INTERVAL_S)
    QTest.qWait(int(INTERVAL_S * 3000))
    assert files_in(autosaves) == [], "a bed without changes was autosaved"

    doc = window.document
    doc.apply(SetField(doc.bed.bed, "name", "first edit"))
    qtbot.waitUntil(lambda: autosaved(autosaves), timeout=5000)
    text = next(autosaves.glob("*.yaml"))
    meta = json.loads(next(autosaves.glob("*.json")).read_text())
    assert text.read_text() == doc.snapshot_text()  # exactly what Save would write
    assert meta["original_path"] == str(bed_file) and meta["bed"] == "first edit"
    assert meta["pid"] == os.getpid()
    assert abs(datetime.datetime.fromisoformat(meta["saved_at"]) - datetime.datetime.now().astimezone()) \
        < datetime.timedelta(minutes=1)

    doc.apply(SetField(doc.bed.servers[0], "memory_gb", 77))
    qtbot.waitUntil(lambda: text.exists() and "memory_gb: 77" in text.read_text(), timeout=5000)

    assert window.files.save()
    assert files_in(autosaves) == []
    QTest.qWait(int(INTERVAL_S * 3000))
    assert files_in(autosaves) == [], "a saved bed was autosaved again"

    doc.apply(SetField(doc.bed.bed, "name", "after the save"))
    qtbot.waitUntil(lambda: autosaved(autosaves), timeout=5000)
    doc.undo_stack.undo()  # back to what is on disk: nothing to recover
    assert files_in(autosaves) == []

    doc.apply(SetField(doc.bed.bed, "name", "saved, then closed"))
    qtbot.waitUntil(lambda: autosaved(autosaves), timeout=5000)
    assert window.files.save()
    window.close()
    assert not window.isVisible()
    assert files_in(autosaves) == []


def test_quitting_without_saving_leaves_no_autosave(qtbot, make_window, bed_file, autosaves):
    window = make_window()
    assert window.open_initial(str(bed_file))
    window.document.apply(SetField(window.document.bed.bed, "name", "thrown away"))
    qtbot.waitUntil(lambda: autosaved(autosaves), timeout=5000)
    answer_modal(click("Discard"))
    window.actions_by_name["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible())
    assert files_in(autosaves) == []
    assert load(bed_file).bed.name != "thrown away"


# ---------------------------------------------------------------------- the choices at start

def test_later_keeps_the_work_for_the_next_start_and_discard_deletes_it(make_window, bed_file, autosaves,
                                                                        dialogs):
    bed = load(bed_file)
    bed.bed.name = "left by a crash"
    planted = plant_autosave(autosaves, dumps(bed), pid=dead_pid(), bed="left by a crash", original=bed_file)

    first = make_window()
    asked = answer_modal(click("Later"))
    assert first.open_initial() is True
    assert len(asked) == 1 and "2024-05-01 14:03" in asked[0].text
    assert first.document.path == DEFAULT and not first.document.dirty
    assert all(p.exists() for p in planted)

    second = make_window()
    asked = answer_modal(click("Discard"))
    assert second.open_initial() is True
    assert len(asked) == 1 and second.document.path == DEFAULT
    assert files_in(autosaves) == []

    third = make_window()
    asked = answer_modal(click("Recover"), timeout_s=1)
    assert third.open_initial() is True
    assert asked == [] and third.document.path == DEFAULT
    assert dialogs == []


def test_recovered_work_wins_over_a_file_named_on_the_command_line(make_window, bed_file, tmp_path,
                                                                    autosaves):
    bed = load(bed_file)
    bed.bed.name = "never saved"
    plant_autosave(autosaves, dumps(bed), pid=dead_pid(), bed="never saved", original=None)
    window = make_window()
    asked = answer_modal(click("Recover"))
    assert window.open_initial(str(bed_file)) is True
    assert asked and "a bed that was never saved" in asked[0].informative
    assert window.document.path is None and window.document.dirty
    assert window.document.snapshot_text() == dumps(bed)
    assert shown_title(window).startswith("never saved — unsaved*")
    assert str(bed_file) in window.statusBar().currentMessage()


def test_unreadable_autosaves_are_reported_and_kept_aside(make_window, autosaves, dialogs, bed_file):
    garbled = plant_autosave(autosaves, "format_version: 1\nbed: {name: half written\nservers: [\n",
                             pid=dead_pid(), bed="half written", original=bed_file, stem="1-garbled")
    autosaves.joinpath("2-torn.json").write_text('{"pid": 12', encoding="utf-8")
    autosaves.joinpath("2-torn.yaml").write_text(bed_file.read_text(), encoding="utf-8")

    window = make_window()
    asked = answer_modal(click("Recover"), timeout_s=1)
    assert window.open_initial() is True          # the start goes on to the default example
    assert asked == [] and window.document.path == DEFAULT

    assert [t for t, _ in dialogs] == ["Cannot recover unsaved work"] * 2
    messages = "\n".join(m for _, m in dialogs)
    assert f"{garbled[0].name}:3" in messages     # the loader's line number for the garbled text
    assert "2-torn.json" in messages
    kept = autosaves / "unreadable"
    assert sorted(files_in(kept)) == ["1-garbled.json", "1-garbled.yaml", "2-torn.json", "2-torn.yaml"]
    assert str(kept / "1-garbled.yaml") in messages
    assert files_in(autosaves) == []


@pytest.mark.parametrize("case", ["this process", "a reused pid"])
def test_only_autosaves_of_finished_sessions_are_offered(make_window, autosaves, bed_file, case):
    token = process_start_token()
    if case == "a reused pid" and token is None:
        pytest.skip("process start times are not readable here")
    bed = load(bed_file)
    bed.bed.name = "autosaved elsewhere"
    planted = plant_autosave(autosaves, dumps(bed), pid=os.getpid(), bed="autosaved elsewhere",
                             original=bed_file,
                             process_start=token if case == "this process" else "another-boot:1")
    window = make_window()
    asked = answer_modal(click("Later"), timeout_s=2)
    assert window.open_initial() is True
    if case == "this process":  # a running session's autosave is not a crash
        assert asked == []
    else:  # same pid, different process: the writer is gone
        assert len(asked) == 1 and "autosaved elsewhere" in asked[0].text
    assert all(p.exists() for p in planted)
