"""Menus and dialogs that end when they close.

A menu or dialog made with a parent lives as long as the parent does; shown once and then
forgotten, it piles up under the window, and its Python wrapper is left for the garbage
collector.  Everything shown modally here is deleted by the event loop (on the GUI thread) as
soon as control returns to it — after the caller has read what the person chose.
"""
from __future__ import annotations

from typing import Any


def exec_once(widget: Any, *args: Any) -> Any:
    """`widget.exec(*args)` (a QMenu, QDialog or QMessageBox), then schedule its deletion."""
    try:
        return widget.exec(*args)
    finally:
        widget.deleteLater()
