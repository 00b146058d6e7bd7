"""Where the main window was: its geometry and dock layout, kept between sessions.

Stored in `window.ini` under the user state directory (app.autosave.state_dir: the
platform's, or TESTBED_STUDIO_STATE_DIR), so that tests and a second profile keep their own.
The first start opens maximised.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QRect, QSettings
from PySide6.QtGui import QGuiApplication

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
        if not window.isMaximized():
            keep_on_screen(window)    # closed on a larger screen than this one
        window.show()
    else:
        window.showMaximized()


def _available(window: Any) -> QRect | None:
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def resize_within_screen(window: Any, width: int, height: int) -> None:
    """The size asked for, or the screen's available size when that is smaller (1366x768 laptops)."""
    area = _available(window)
    if area is not None:
        width, height = min(width, area.width()), min(height, area.height())
    window.resize(width, height)


def keep_on_screen(window: Any) -> None:
    """No larger than the screen's available area, and wholly on it."""
    area = _available(window)
    if area is None:
        return
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    width = min(window.width(), area.width() - extra_w)
    height = min(window.height(), area.height() - extra_h)
    window.resize(width, height)
    x = min(max(window.x(), area.left()), area.right() + 1 - width - extra_w)
    y = min(max(window.y(), area.top()), area.bottom() + 1 - height - extra_h)
    window.move(x, y)


def remember(window: Any) -> None:
    stored = settings()
    stored.setValue("geometry", window.saveGeometry())
    stored.setValue("state", window.saveState(LAYOUT_VERSION))
    stored.sync()
