"""The GUI entry point: builds the QApplication and the main window.

This is the only module in app/ that imports QtWidgets (tests/test_layering.py checks it);
app/cli.py calls `main()` when `testbed-studio` runs with no sub-command.
"""
from __future__ import annotations

import signal
import sys

SMOKE_MS = 1000


SWITCH_INTERVAL_S = 0.001


def application():
    """The QApplication, built once, with the GUI thread owning garbage collection (app/gc_owner.py)."""
    from PySide6.QtWidgets import QApplication

    from app.gc_owner import GuiCollector
    app = QApplication.instance() or QApplication(sys.argv[:1])
    GuiCollector.install(app)       # Qt objects in cycles end on this thread, never on a worker
    # the GUI thread gets the interpreter lock back from busy workers within 1 ms, not CPython's 5 ms:
    # each Qt call it makes lets the lock go, and with the validation, methodology and path workers
    # all waiting for it too, a view's few dozen calls cost hundreds of ms on a 5,000-device bed
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return app


def main(path: str | None = None, *, smoke: bool = False) -> int:
    """Open the main window on `path` (default: the built-in example) and run the event loop.

    With `smoke`, quit about a second after the window is shown and print
    `smoke ok: <window title>` (the bundle's smoke test runs `testbed-studio --smoke`).
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon

    app = application()
    progress = None
    if path and not smoke:
        # a bed named on the command line: its progress from the first moment, before the window's
        # modules are imported
        from widgets.open_progress import OpenProgress
        progress = OpenProgress.start(path, "start")

    import resources
    from widgets.main_window import APP_NAME, MainWindow
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("Testbed Studio")
    app.setDesktopFileName("testbed-studio")
    icon = resources.ROOT / "icons" / "testbed-studio.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    # Ctrl+C in the terminal that started the app quits it (Qt would swallow it).
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    window = MainWindow()
    window.show_restored()
    if not smoke:
        window.open_initial(path, progress)
    else:  # open inside the event loop, so that even an error dialog cannot outlive the timer
        def finish() -> None:
            print(f"smoke ok: {window.windowTitle()}", flush=True)
            app.quit()
        QTimer.singleShot(0, lambda: window.open_initial(path))
        QTimer.singleShot(SMOKE_MS, finish)
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
