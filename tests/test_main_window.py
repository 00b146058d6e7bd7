"""The main window's file flows, driven the way a person would: it opens the default example,
shows a dirty marker while there are unsaved changes, saves, undoes back to the saved
state, refuses broken files with the loader's message while keeping the open bed, asks
before unsaved work is thrown away, and remembers recent files.

Modal dialogs are answered by clicking them (`answer_modal`); only QMessageBox.critical
is replaced, so an error message can be read back without a person to close it.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from dialogs import Answer, answer_modal, cancel_dialog, click, forget_changes, shown_title, type_file_name
from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

import resources
from topology.edits import SetField
from topology.errors import BedFileError
from topology.fileformat import dumps, load, save
from widgets.main_window import MainWindow

BROKEN = {
    "malformed-yaml": "format_version: 1\nbed: {name: broken\nservers: [\n",
    "unknown-kind": "format_version: 1\nbed: {name: broken}\nservers:\n- id: h1\n  role: toaster\n",
    "dangling-reference": ("format_version: 1\nbed: {name: broken}\nservers:\n- id: h1\n"
                           "clusters:\n- id: c1\n  nodes: [h1, h2]\n"),
    "not-a-bed": "- just\n- a list\n",
}
DEFAULT = resources.example_path(resources.DEFAULT_EXAMPLE)


# ---------------------------------------------------------------------- helpers

def rename(window: MainWindow, name: str) -> None:
    window.document.apply(SetField(window.document.bed.bed, "name", name))


def press(window: MainWindow, key: Qt.Key, modifiers=Qt.KeyboardModifier.ControlModifier) -> None:
    window.activateWindow()
    QTest.qWaitForWindowActive(window)
    QTest.keyClick(window, key, modifiers)


# ---------------------------------------------------------------------- fixtures

@pytest.fixture(autouse=True)
def private_state(tmp_path, monkeypatch):
    """Autosaves and recent files go to this test's own folders, never the user's."""
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    org, app = QCoreApplication.organizationName(), QCoreApplication.applicationName()
    QCoreApplication.setOrganizationName("Testbed Studio tests")
    QCoreApplication.setApplicationName("test_main_window")
    yield
    QCoreApplication.setOrganizationName(org)
    QCoreApplication.setApplicationName(app)
    for answer in Answer.live:  # a failed test must not answer the next test's dialogs
        answer.cancel()
    Answer.live.clear()


@pytest.fixture
def window(qtbot, dialogs):
    w = MainWindow()
    qtbot.addWidget(w, before_close_func=forget_changes)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def bed_file(tmp_path) -> Path:
    """A copy of the default example the user owns (saving it does not ask for a new name)."""
    path = tmp_path / "beds" / "my-bed.yaml"
    path.parent.mkdir()
    save(load(DEFAULT), path)
    return path


# ---------------------------------------------------------------------- opening

def test_opens_the_default_example_with_its_name_in_the_title(window, dialogs):
    assert window.open_initial() is True
    assert dialogs == []
    assert window.document.path == DEFAULT
    name = load(DEFAULT).bed.name
    assert name and window.document.bed.bed.name == name
    assert shown_title(window).startswith(f"{name} — {DEFAULT.name}")
    assert "*" not in shown_title(window)
    assert not window.isWindowModified()


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_file_shows_the_loaders_message_and_keeps_the_bed(window, dialogs, bed_file, tmp_path, case):
    assert window.open_path(bed_file)
    rename(window, "work in progress")
    doc = window.document
    bed_before, text_before, title_before = doc.bed, doc.snapshot_text(), shown_title(window)
    steps_before = doc.undo_stack.count()

    broken = tmp_path / f"{case}.yaml"
    broken.write_text(BROKEN[case], encoding="utf-8")
    with pytest.raises(BedFileError) as expected:
        load(broken)

    assert window.open_path(broken) is False
    # the loader's message, except that a window user is sent to the menu, not the command line
    gui_text = str(expected.value).replace("start from `testbed-studio new --example NAME`",
                                           "start from File › New from Example…")
    if case == "dangling-reference":   # only references that name nothing: offered for repair (declined here)
        assert dialogs[0][0] == f"Broken references in {broken.name}" and str(expected.value) in dialogs[0][1]
    else:
        assert dialogs == [("Cannot open test bed", gui_text)]
    assert str(broken) in dialogs[0][1] and "Traceback" not in dialogs[0][1]
    assert "testbed-studio new" not in dialogs[0][1]
    assert doc.bed is bed_before and doc.snapshot_text() == text_before
    assert doc.path == bed_file and doc.dirty and doc.undo_stack.count() == steps_before
    assert shown_title(window) == title_before
    assert str(expected.value).splitlines()[0] in window.statusBar().currentMessage()


def test_missing_file_is_reported_and_the_bed_kept(window, dialogs, bed_file, tmp_path):
    assert window.open_path(bed_file)
    assert window.open_path(tmp_path / "nope.yaml") is False
    assert len(dialogs) == 1 and "nope.yaml" in dialogs[0][1] and "cannot read" in dialogs[0][1]
    assert window.document.path == bed_file


# ---------------------------------------------------------------------- dirty marker, save, undo

def test_dirty_marker_follows_edits_save_and_undo(window, bed_file):
    assert window.open_path(bed_file)
    assert "*" not in shown_title(window)

    rename(window, "renamed in the window")
    assert shown_title(window).startswith("renamed in the window — my-bed.yaml*")
    assert window.isWindowModified()

    press(window, Qt.Key.Key_S)                                  # Ctrl+S
    assert "*" not in shown_title(window)
    assert load(bed_file).bed.name == "renamed in the window"

    rename(window, "second thoughts")
    assert "*" in shown_title(window)
    press(window, Qt.Key.Key_Z)                                  # Ctrl+Z: back to what is on disk
    assert window.document.bed.bed.name == "renamed in the window"
    assert "*" not in shown_title(window) and not window.isWindowModified()
    press(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.document.bed.bed.name == "second thoughts"
    assert "*" in shown_title(window)

    press(window, Qt.Key.Key_Z)
    press(window, Qt.Key.Key_Z)                                  # before the save: dirty again
    assert window.document.bed.bed.name == load(DEFAULT).bed.name
    assert "*" in shown_title(window)


def test_save_on_a_builtin_example_asks_for_a_name_and_writes_an_equal_bed(window, dialogs, tmp_path):
    assert window.open_initial()
    example_bytes = DEFAULT.read_bytes()
    rename(window, "my own copy: v2/final")
    target = tmp_path / "copy.yaml"

    answered = answer_modal(type_file_name(target))
    assert window.files.save() is True                          # Save on an example = Save As
    assert answered and answered[0].title == "Save test bed"
    assert answered[0].text == str(Path.home() / "my own copy- v2-final.yaml")  # a name, not a path
    assert DEFAULT.read_bytes() == example_bytes
    assert window.document.path == target and not window.document.dirty
    assert load(target) == window.document.bed
    saved = target.read_text(encoding="utf-8")
    assert saved == window.document.snapshot_text()
    # the copy keeps the example's comments; only the renamed line differs
    example = DEFAULT.read_text(encoding="utf-8").splitlines()
    assert [line for line in saved.splitlines() if line not in example] == ["  name: 'my own copy: v2/final'"]
    assert load(target).bed.name == "my own copy: v2/final"
    assert shown_title(window).startswith("my own copy: v2/final — copy.yaml —")
    assert dialogs == []


def test_save_as_without_extension_adds_yaml_and_is_listed_in_recent_files(window, bed_file, tmp_path):
    assert window.open_path(bed_file)
    rename(window, "saved as")
    answer_modal(type_file_name(tmp_path / "other"))
    window.actions_by_name["save_as"].trigger()
    saved = tmp_path / "other.yaml"
    assert window.document.path == saved
    assert dumps(load(saved)) == window.document.snapshot_text()

    recent = window.findChild(type(window.menuBar().actions()[0].menu()), "recentMenu")
    entries = [a.text() for a in recent.actions()]
    assert entries[:2] == [str(saved.resolve()), str(bed_file.resolve())]
    assert recent.isEnabled()


def test_recent_files_survive_a_restart_and_open_when_picked(qtbot, window, bed_file, tmp_path):
    second = tmp_path / "second.yaml"
    save(load(bed_file), second)
    assert window.open_path(bed_file) and window.open_path(second)

    again = MainWindow()
    qtbot.addWidget(again, before_close_func=forget_changes)
    recent = again.findChild(type(again.menuBar().actions()[0].menu()), "recentMenu")
    entries = {a.text(): a for a in recent.actions()}
    assert list(entries)[:2] == [str(second.resolve()), str(bed_file.resolve())]
    entries[str(bed_file.resolve())].trigger()
    assert again.document.path == bed_file.resolve()


def test_a_recent_file_that_is_gone_is_reported_and_dropped(window, dialogs, bed_file, tmp_path):
    gone = tmp_path / "gone.yaml"
    save(load(bed_file), gone)
    assert window.open_path(gone) and window.open_path(bed_file)
    gone.unlink()
    recent = window.findChild(type(window.menuBar().actions()[0].menu()), "recentMenu")
    next(a for a in recent.actions() if a.text() == str(gone.resolve())).trigger()
    assert len(dialogs) == 1 and "gone.yaml" in dialogs[0][1]
    assert window.document.path == bed_file
    assert [a.text() for a in recent.actions()] == [str(bed_file.resolve())]


def test_save_failure_is_reported_and_keeps_the_changes(window, dialogs, bed_file, tmp_path):
    assert window.open_path(bed_file)
    rename(window, "cannot be written")
    answer_modal(type_file_name(tmp_path / "no-such-folder" / "bed.yaml"))
    assert window.files.save_as() is False
    assert dialogs and dialogs[0][0] == "Cannot save test bed" and "no-such-folder" in dialogs[0][1]
    assert window.document.dirty and window.document.path == bed_file


# ---------------------------------------------------------------------- unsaved changes

def test_new_asks_before_dropping_unsaved_changes(window, bed_file):
    assert window.open_path(bed_file)
    rename(window, "unsaved")

    asked = answer_modal(click("Cancel"))
    window.actions_by_name["new"].trigger()
    assert asked and "unsaved changes" in asked[0].text
    assert window.document.bed.bed.name == "unsaved" and window.document.path == bed_file

    answer_modal(click("Discard"))
    window.actions_by_name["new"].trigger()
    assert window.document.path is None and not window.document.dirty
    assert load(bed_file).bed.name != "unsaved"
    assert "unsaved[*]" in window.windowTitle()


def test_open_asks_first_and_save_in_the_question_saves(window, bed_file, tmp_path):
    assert window.open_path(bed_file)
    rename(window, "keep me")
    asked = answer_modal(click("Save"))
    file_dialog = answer_modal(cancel_dialog, timeout_s=20)     # then the open dialog: cancelled
    assert window.files.open_dialog() is False
    assert asked and file_dialog and file_dialog[0].kind is QFileDialog
    assert load(bed_file).bed.name == "keep me" and not window.document.dirty


def test_quit_asks_and_cancel_keeps_the_window(qtbot, window, bed_file):
    assert window.open_path(bed_file)
    rename(window, "still editing")
    answer_modal(click("Cancel"))
    window.actions_by_name["quit"].trigger()
    assert window.isVisible() and window.document.bed.bed.name == "still editing"

    answer_modal(click("Discard"))
    window.actions_by_name["quit"].trigger()
    qtbot.waitUntil(lambda: not window.isVisible())
    assert load(bed_file).bed.name != "still editing"


# ---------------------------------------------------------------------- menus and shortcuts

@pytest.mark.parametrize("action, keys", [
    ("new", ["Ctrl+N"]), ("open", ["Ctrl+O"]), ("save", ["Ctrl+S"]), ("save_as", ["Ctrl+Shift+S"]),
    ("undo", ["Ctrl+Z"]), ("redo", ["Ctrl+Shift+Z", "Ctrl+Y"]),
])
def test_file_and_edit_actions_have_their_shortcuts(window, action, keys):
    bound = {s.toString() for s in window.actions_by_name[action].shortcuts()}
    assert any(k in bound for k in keys), f"{action}: {sorted(bound)}"
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    where = "Edit" if action in ("undo", "redo") else "File"
    assert window.actions_by_name[action] in menus[where].actions()


def test_undo_is_disabled_until_there_is_something_to_undo(window, bed_file):
    assert window.open_path(bed_file)
    undo = window.actions_by_name["undo"]
    assert not undo.isEnabled()
    rename(window, "x")
    assert undo.isEnabled()
    undo.trigger()
    assert not undo.isEnabled() and window.document.bed.bed.name == load(bed_file).bed.name
