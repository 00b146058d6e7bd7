"""Shared test set-up.  Qt runs offscreen unless the caller chose a platform (xvfb-run
with QT_QPA_PLATFORM=xcb, say); this must happen before anything imports Qt."""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Settings, recent files and autosaves of the test run go to a private folder, never the
# user's own (and never from one test run into the next).
import tempfile

_PRIVATE = tempfile.mkdtemp(prefix="testbed-studio-tests-")
for _var, _sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data"),
                   ("TESTBED_STUDIO_STATE_DIR", "state/testbed-studio")):
    os.environ[_var] = os.path.join(_PRIVATE, _sub)

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# fixtures shared by several test modules
pytest_plugins = ["tests.keyring_stub"]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return ROOT / "resources" / "examples"


@pytest.fixture(scope="session", autouse=True)
def shipped_examples_stay_untouched():
    """No test may write over the built-in examples (a save to the wrong path once did)."""
    import hashlib
    folder = ROOT / "resources" / "examples"

    def digest() -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.yaml"))}

    before = digest()
    yield
    assert digest() == before, "a test modified resources/examples/ (save to a temporary copy instead)"


@pytest.fixture(scope="session", autouse=True)
def one_qapplication_for_the_session(qapp):
    """A QApplication exists before any test runs: code that would otherwise create a bare
    QGuiApplication (printing, diagrams) then reuses it, and widgets can still be built later."""
    from PySide6.QtCore import QSettings
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, os.path.join(_PRIVATE, "settings"))
    # as in the application: the GUI thread (this one) owns garbage collection
    from app.gc_owner import GuiCollector
    GuiCollector.install(qapp).freeze_small_beds = False     # see GuiCollector.freeze_small_beds
    return qapp


def pytest_configure(config):
    from tests import hang_watch
    hang_watch.start(Path(_PRIVATE))


def pytest_collection_modifyitems(session, config, items):
    """Files with a slow test run first, the many short files after them: with two workers taking
    one file at a time (`--dist loadfile --no-loadscope-reorder`), a minute-long file handed out last
    leaves the other worker idle for that minute, while short files at the end even the two out."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_files)     # stable: collection order within each group


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test that outlives its timeout by a minute is dumped (every thread, Python and native) and
    its process ended, even when a deadlock keeps pytest-timeout from speaking (tests/hang_watch.py)."""
    from tests import hang_watch
    marker = item.get_closest_marker("timeout")
    limit = float(marker.args[0]) if marker is not None and marker.args else float(item.config.getini("timeout") or 120)
    hang_watch.arm(item.nodeid, limit)
    try:
        yield
    finally:
        hang_watch.disarm()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    """Between tests the event loop may not have run: collect what is due here, on the GUI thread."""
    from app.gc_owner import GuiCollector
    collector = GuiCollector.installed()
    if collector is not None:
        collector.collect_due()


@pytest.fixture
def doc():
    """The seed 000 example as an open document (the panels' tests edit it)."""
    from app.document import Document
    document = Document()
    document.open(ROOT / "resources" / "examples" / "md3000i-hyperv-cluster.yaml")
    yield document
    document.validation.wait()
    document.undo_stack.clear()     # while the document is alive: its cleanChanged handler needs it


@pytest.fixture
def dialogs(monkeypatch) -> list[tuple[str, str]]:
    """Error dialogs of the file controller, read back instead of blocking on them."""
    import widgets.file_controller as file_controller
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(file_controller.QMessageBox, "critical",
                        lambda parent, title, text, *a, **k: shown.append((title, text)))

    def problems(parent, title, intro, items, choices):   # the list dialog: recorded, then closed
        shown.append((title, "\n".join([intro, *items])))
        return choices[-1][0]
    monkeypatch.setattr(file_controller, "show_problems", problems)
    return shown


@pytest.fixture
def laptop_window(qtbot, dialogs, tmp_path, monkeypatch):
    """The main window, empty, at a laptop's 1366x768, with its own state folder; its background
    work is waited for before it goes."""
    from tests.dialogs import forget_changes
    from widgets.main_window import MainWindow
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    w = MainWindow()
    qtbot.addWidget(w, before_close_func=forget_changes)
    w.setGeometry(0, 0, 1366, 768)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.document.validation.wait()
    w.methodology.wait()


@pytest.fixture(autouse=True)
def a_dialog_nobody_answers_fails_the_test():
    """A modal dialog no test answers would wait until the suite's timeout ends the whole run (a
    new validation rule once made a test bed ask 'run with errors?'): after a while it is closed
    and the test fails, naming the dialog."""
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from tests.dialogs import Answer
    Answer.live.clear()
    unanswered: list[str] = []
    shown_since: dict[int, float] = {}

    def look() -> None:
        box = QApplication.activeModalWidget()
        if box is None or not box.isVisible():
            shown_since.clear()
            return
        if any(not a and not a.cancelled for a in Answer.live):
            return      # the test is about to answer it
        if time.monotonic() - shown_since.setdefault(id(box), time.monotonic()) > UNANSWERED_DIALOG_S:
            text = box.text() if isinstance(box, QMessageBox) else ""
            unanswered.append(f"{type(box).__name__} {box.windowTitle()!r}: {text}")
            box.reject()

    watch = QTimer()
    watch.timeout.connect(look)
    watch.start(250)
    yield
    watch.stop()
    assert not unanswered, "a modal dialog waited for an answer nobody gave: " + "; ".join(unanswered)


UNANSWERED_DIALOG_S = 10.0
