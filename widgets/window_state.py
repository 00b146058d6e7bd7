"""Where the main window was: its geometry and dock layout, kept between sessions.

Stored in `window.ini` under the user state directory (app.autosave.state_dir: the
platform's, or TESTBED_STUDIO_STATE_DIR), so that tests and a second profile keep their own.
The first start opens maximised.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from app.autosave import state_dir

LAYOUT_VERSION = 1


def settings() -> QSettings:
    return QSettings(str(state_dir() / "window.ini"), QSettings.Format.IniFormat)


def show_restored(window: Any) -> None:
    """Show the window where it was last closed, or maximised the first time."""
    stored = settings()
    geometry = stored.value("geometry")
    if isinstance(geometry, QByteArray) and window.restoreGeometry(geometry):
        state = stored.value("state")
        if isinstance(state, QByteArray):
            window.restoreState(state, LAYOUT_VERSION)
        window.show()
    else:
        window.showMaximized()


def remember(window: Any) -> None:
    stored = settings()
    stored.setValue("geometry", window.saveGeometry())
    stored.setValue("state", window.saveState(LAYOUT_VERSION))
    stored.sync()
