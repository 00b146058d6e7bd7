"""Placing components: a kind picked in the palette is armed and placed by the next click, or
dropped on the canvas from the palette; either becomes `operations.add_device`.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt

from topology import operations
from topology.model import Server
from topology.operations import Refused

KIND_MIME = "application/x-testbed-kind"


class Placing:
    """Canvas part: palette kinds become devices."""

    def arm(self, kind: str) -> None:
        """The palette picked a kind: the next click on the canvas places one."""
        try:
            operations.parse_kind(kind)
        except Refused as exc:
            self.say(str(exc), refusal=True)
            return
        self.armed = kind
        self.viewport().setCursor(Qt.CursorShape.CrossCursor)
        label = operations.KINDS[kind].label if kind in operations.KINDS else kind
        where = {"vm": " (on a host to place it there)", "enclosure": " on a storage array",
                 "disk": " on a storage array"}.get(kind, "")
        text = f"Adding {label.lower()}s: click on the diagram{where} — Esc or the palette entry again stops"
        self.notice.show_armed(text)
        self.say(text)
        self.armed_changed.emit(kind)

    def disarm(self) -> None:
        was = self.armed
        self.armed = None
        self.viewport().unsetCursor()
        self.notice.hide_armed()
        if was:
            self.say("")
            self.armed_changed.emit("")

    def place(self, kind: str, scene_pos: QPointF) -> str | None:
        """Add a component of `kind` centred on scene_pos; returns its id."""
        base, role = operations.parse_kind(kind)
        target = None
        under = self._device_at(scene_pos)
        if base == "vm" and under is not None and isinstance(self.objects.get(under.ident), Server):
            target = under.ident
        if base in ("enclosure", "disk"):
            target = under.ident if under is not None else None
        proto_w, proto_h = 160.0, 64.0
        top_left = self.snap(QPointF(scene_pos.x() - proto_w / 2, scene_pos.y() - proto_h / 2))
        before = operations.taken_ids(self.bed)
        edit = self._apply(operations.add_device, kind, role, top_left.x(), top_left.y(), target=target)
        if edit is None:
            return None
        new = sorted(operations.taken_ids(self.bed) - before)
        self.say(edit.text)
        if new:
            if base in ("server", "switch", "array", "chassis", "network") or not target:
                self.selection.set(new)
            return new[0]
        return target

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasFormat(KIND_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasFormat(KIND_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        if not event.mimeData().hasFormat(KIND_MIME):
            event.ignore()
            return
        kind = bytes(event.mimeData().data(KIND_MIME)).decode("utf-8")
        try:
            operations.parse_kind(kind)
        except Refused as exc:
            self.say(str(exc), refusal=True)
            event.ignore()
            return
        self.disarm()
        self.place(kind, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()
