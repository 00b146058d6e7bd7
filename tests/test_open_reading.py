"""File › Open reads a big bed's file on a worker (issue 32, "first frame"): the GUI thread keeps
turning its event loop meanwhile (the splash paints, the menus answer), a second open while one is
read wins and the older read is dropped, closing the window drops the read, and a bad file's
message is the loader's (file, line, what is wrong, how to fix), as before.

A "big" file here is any file: the threshold is lowered instead of writing a megabyte.  The read
is made to wait for a turn of the GUI thread's event loop: it can only finish when the GUI thread
turns its loop while it reads (bounded, so the code before the change fails rather than hangs)."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

import topology.fileformat as fileformat

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml"
OTHER = ROOT / "resources" / "examples" / "esxi-equallogic-port-binding.yaml"
TURN_WAIT_S = 30.0      # reached only when the loop does not turn (the old code)


@pytest.fixture
def big_reads(monkeypatch):
    """Every file counts as big; each parse on a worker waits (at most TURN_WAIT_S) for a GUI-thread timer
    started with it, and says which thread it ran on and whether the timer came.  The hooks run at
    that turn, on the GUI thread: what the user does while the file is read."""
    try:
        import app.bed_reading as bed_reading
        monkeypatch.setattr(bed_reading, "READ_ON_WORKER_BYTES", 0)
    except ImportError:         # the code before the change: reads on the GUI thread
        pass
    parse = fileformat._loads
    reads: list[dict] = []

    def waiting(text, filename, *args, **kwargs):
        read = {"file": Path(filename).name, "gui": threading.current_thread() is threading.main_thread()}
        turned = threading.Event()
        read["turned"] = turned
        reads.append(read)
        # a read on the GUI thread can see no turn; one on a worker waits for the next turn, which
        # a full collection of a long test session's heap can hold back over a second
        read["loop_turned"] = False if read["gui"] else turned.wait(TURN_WAIT_S)
        return parse(text, filename, *args, **kwargs)
    read_hooks: list = []
    monkeypatch.setattr(fileformat, "_loads", waiting)

    def ticking() -> None:     # the GUI thread's turns: each sets every read's flag
        for read in reads:
            if not read["turned"].is_set():
                read["turned"].set()
                for hook in read_hooks:     # what the user does while the file is read (a turn of its own)
                    QTimer.singleShot(0, lambda hook=hook, read=read: hook(read))
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(ticking)
    timer.start()
    yield reads, read_hooks
    timer.stop()


def test_a_big_file_is_read_on_a_worker_while_the_gui_thread_turns_its_event_loop(qtbot, big_reads):
    from app.document import Document
    reads, _ = big_reads
    doc = Document()
    stages: list[str] = []
    doc.open(SMALL, stages.append)
    assert doc.path == SMALL and doc.bed.servers
    assert [r["file"] for r in reads] == [SMALL.name]
    assert not reads[0]["gui"], "the file was parsed on the GUI thread"
    assert reads[0]["loop_turned"], "the GUI thread's event loop did not turn while the file was read"
    assert stages == ["reading", "model", "validation"]
    doc.validation.wait()


def test_a_second_open_while_one_is_read_wins_and_the_first_read_is_dropped(qtbot, big_reads):
    from app.document import Document
    reads, hooks = big_reads
    doc = Document()
    opened: dict[str, object] = {}

    def second(read: dict) -> None:    # while the first file is read, the user opens another
        if read["file"] == SMALL.name:
            opened["second"] = doc.open(OTHER)
    hooks.append(second)
    opened["first"] = doc.open(SMALL)
    assert opened == {"second": True, "first": False}, "the first open was not overtaken by the second"
    assert doc.path == OTHER
    assert doc.bed.bed.name == fileformat.load(OTHER).bed.name
    assert not doc.undo_stack.count() and not doc.dirty
    doc.validation.wait()


def test_closing_the_window_while_a_big_bed_is_read_opens_nothing(qtbot, big_reads, laptop_window, dialogs):
    reads, hooks = big_reads
    window = laptop_window
    before = window.document.bed
    hooks.append(lambda read: window.files.shutdown())
    assert window.files.open_path(SMALL) is False
    assert window.document.bed is before and window.document.path is None
    assert dialogs == []
    assert reads and not reads[0]["gui"]


def test_a_bad_big_file_says_file_line_what_and_how_to_fix_after_a_read_on_a_worker(
        qtbot, big_reads, laptop_window, dialogs, tmp_path):
    reads, _ = big_reads
    bad = tmp_path / "bad.yaml"
    bad.write_text("format_version: 1\nbed: {name: x}\nservers:\n  - {id: 'a/b', role: nas}\n", encoding="utf-8")
    before = laptop_window.document.bed
    assert laptop_window.open_path(bad) is False
    assert laptop_window.document.bed is before
    assert len(dialogs) == 1
    title, text = dialogs[0]
    assert title == "Cannot open test bed"
    assert f"{bad}:4:" in text and "'a/b' cannot be an id" in text      # file, line, what is wrong
    assert "how to fix:" in text
    assert reads and not reads[0]["gui"] and reads[0]["loop_turned"]


def test_an_edit_made_while_a_big_file_is_read_is_kept_unless_the_user_lets_it_go(qtbot, big_reads):
    from app.document import Document
    from topology.operations import move
    reads, hooks = big_reads
    doc = Document()
    doc.open(OTHER)
    edited = doc.bed
    server = edited.servers[0]
    hooks.append(lambda read: doc.apply(move(doc.bed, {server.id: ((server.x or 0) + 20, server.y or 0)})))
    asked: list[str] = []
    assert doc.open(SMALL, confirm=lambda: asked.append("keep?") or False) is False
    assert asked == ["keep?"] and doc.bed is edited and doc.dirty and doc.path == OTHER
    assert doc.open(SMALL, confirm=lambda: True) is True     # edited again meanwhile, and let go this time
    assert doc.path == SMALL and not doc.dirty
    doc.validation.wait()


def test_the_recent_files_list_is_written_after_a_big_beds_first_frame_not_before(
        qtbot, laptop_window, monkeypatch):
    """Writing it (fsync'd: 2-70 ms, over a second on a busy disk) held that frame back."""
    from tests.frame_watch import FrameWatch
    from widgets.canvas import building
    monkeypatch.setattr(building, "SLICED_FROM", 5)      # the example is built in slices, as a big bed is
    window = laptop_window
    canvas = window.canvas
    seen: list[str] = []
    paints = FrameWatch(canvas, lambda: seen.append("frame"))
    monkeypatch.setattr(window.files, "_keep_recent", lambda entries: seen.append("recent"))
    assert window.files.open_path(SMALL)
    qtbot.waitUntil(lambda: "recent" in seen, timeout=30000)
    canvas.viewport().removeEventFilter(paints)
    assert seen == ["frame", "recent"]
