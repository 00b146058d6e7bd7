"""Edits made on the canvas: copy, cut and paste (project-file text on the clipboard), delete, and
moving the selected devices (snapped to the grid) as one step.  Each is one `document.apply`.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QMimeData, QPointF
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from topology import clipboard, operations
from topology.layout import Box
from topology.operations import Refused

PASTE_STEP = 40.0


class Editing:
    """Canvas part: clipboard, delete and move."""

    def _apply(self, build, *args, **kw) -> Any:
        """Build an edit and apply it; a refusal becomes a status-bar message.  Returns the edit."""
        try:
            edit = build(self.bed, *args, **kw)
        except Refused as exc:
            self.say(str(exc), refusal=True)
            return None
        self.document.apply(edit)
        return edit

    def current_boxes(self) -> dict[str, Box]:
        """Where everything is drawn right now (for exports that match the screen)."""
        self.finish_build()
        out = {i: Box(d.pos().x(), d.pos().y(), d.w, d.h) for i, d in self.devices.items()}
        out.update({i: Box(c.pos().x(), c.pos().y(), c.w, c.h) for i, c in self.chips.items()})
        return out

    def copy(self) -> bool:
        ids = self.selected_ids()
        positions = {i: (b.x, b.y) for i, b in self.current_boxes().items()}
        try:
            text = clipboard.copy(self.bed, ids, positions)
        except Refused as exc:
            self.say(str(exc), refusal=True)
            return False
        mime = QMimeData()
        mime.setText(text)
        QGuiApplication.clipboard().setMimeData(mime)
        self._last_copy, self._paste_count = text, 0
        self.say(f"Copied {len(ids)} component{'s' if len(ids) != 1 else ''}")
        return True

    def cut(self) -> None:
        if self.copy():
            self.delete_selected()

    def paste(self) -> None:
        text = QGuiApplication.clipboard().text()
        if not text.strip():
            self.say("The clipboard is empty")
            return
        if text != self._last_copy:
            self._last_copy, self._paste_count = text, 0
        self._paste_count += 1
        step = PASTE_STEP * self._paste_count
        edit = self._apply(clipboard.paste, text, (step, step))
        if edit is not None:
            ids = clipboard.pasted_ids(edit)
            self.selection.set(ids)
            self.say(edit.text)

    def duplicate_selected(self) -> list[str]:
        """The selected components again, next to themselves (one step; the clipboard is left alone)."""
        ids = self.selected_ids()
        if not ids:
            self.say("Nothing to duplicate: select devices first", refusal=True)
            return []
        positions = {i: (b.x, b.y) for i, b in self.current_boxes().items()}
        try:
            edit = clipboard.paste(self.bed, clipboard.copy(self.bed, ids, positions), (PASTE_STEP, PASTE_STEP))
        except Refused as exc:
            self.say(str(exc), refusal=True)
            return []
        self.document.apply(edit)
        new = clipboard.pasted_ids(edit)
        self.selection.set(new)
        self.say(edit.text)
        return new

    def delete_selected(self) -> None:
        ids = self.selected_ids()
        links = [i.model_obj for i in self.links.values() if i.selected]
        if not ids and not links:
            self.say("Nothing to delete: select devices or links first", refusal=True)
            return
        edit = self._apply(operations.delete, ids, links)
        if edit is not None:
            self.selection.clear()
            self.say(edit.text)

    def _drag_to(self, scene_pos: QPointF) -> None:
        delta = scene_pos - self._press_scene
        if delta.manhattanLength() * self.zoom() < QApplication.startDragDistance() and \
                all(self.devices[i].pos() == p for i, p in self._press_positions.items() if i in self.devices):
            return
        for ident, start in self._press_positions.items():
            item = self.devices.get(ident)
            if item is not None:
                target = self.snap(start + delta)
                if item.pos() != target:
                    was = item.sceneBoundingRect()
                    item.setPos(target)
                    self.far_changed(was)       # after the move: see FarDrawing.far_changed
                    self.device_moved(ident)
        if self._dirty_links:
            self._flush_links()

    def _commit_move(self) -> None:
        moved = {}
        for ident, start in self._press_positions.items():
            item = self.devices.get(ident)
            if item is not None and item.pos() != start:
                moved[ident] = (item.pos().x(), item.pos().y())
        self._press_positions = {}
        if moved:
            self.document.apply(operations.move(self.bed, moved))
