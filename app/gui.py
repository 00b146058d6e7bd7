"""The GUI entry point: builds the QApplication and the main window.

This is the only module in app/ that imports QtWidgets (tests/test_layering.py checks it);
app/cli.py calls `main()` when `testbed-studio` runs with no sub-command.
"""
from __future__ import annotations

import signal
import sys


def main(path: str | None = None, *, smoke_ms: int | None = None) -> int:
    """Open the main window on `path` (default: the built-in example) and run the event loop.

    With `smoke_ms`, quit that many milliseconds after the window is shown and print
    `smoke ok: <window title>` (used by the bundle's smoke test: `testbed-studio --smoke`).
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    import resources
    from widgets.main_window import APP_NAME, MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName("Testbed Studio")
    app.setDesktopFileName("testbed-studio")
    if resources.APP_ICON.is_file():
        app.setWindowIcon(QIcon(str(resources.APP_ICON)))
    # Ctrl+C in the terminal that started the app quits it (Qt would swallow it).
    signal.signal(signal.SIGINT, signal.SIG_DFL)

    window = MainWindow()
    window.show()
    if smoke_ms is None:
        window.open_initial(path)
    else:  # open inside the event loop, so that even an error dialog cannot outlive the timer
        def finish() -> None:
            print(f"smoke ok: {window.windowTitle()}", flush=True)
            app.quit()
        QTimer.singleShot(0, lambda: window.open_initial(path))
        QTimer.singleShot(max(0, smoke_ms), finish)
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))
