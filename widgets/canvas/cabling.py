"""Cabling with the mouse: drag from a port marker to another port or a switch; the link is made by
`operations.connect`, and a refused link says why over the drawing and draws nothing.  A cable
dropped on a switch body takes the next free port that fits, and the notice says which.  A
click on a port (no drag) selects it, so the property editor shows it.
"""
from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QGraphicsLineItem

from app import diagram
from topology import operations
from widgets.canvas.items import DeviceItem


class Cabling:
    """Canvas part: the rubber line from a port and the cable it becomes."""

    def _start_link(self, device: DeviceItem, port: str) -> None:
        self._link_from = f"{device.ident}:{port}"
        mark = device.marks[port]
        start = device.mapToScene(mark.anchor)
        pen = QPen(diagram.colour(mark.role), 2.0, Qt.PenStyle.DashLine)
        self._link_line = QGraphicsLineItem(QLineF(start, start))
        self._link_line.setPen(pen)
        self._link_line.setZValue(50)
        self.scene().addItem(self._link_line)
        self.say(f"Drag to a port or a switch to cable {self._link_from}")

    def _cancel_link(self) -> None:
        if self._link_line is not None and self._link_line.scene() is not None:
            self.scene().removeItem(self._link_line)
        self._link_line = None
        self._link_from = None
        self._hover_strip(None)

    def _finish_link(self, scene_pos: QPointF) -> None:
        source = self._link_from
        target = self._device_at(scene_pos)
        # the port under the mouse on the strip as it is drawn now (expanded under the cable)
        port = target.port_at(target.mapFromScene(scene_pos)) if target is not None else None
        self._cancel_link()
        if target is None or source is None:
            self.say("Link not made: release the mouse over a port or a switch", refusal=True)
            return
        ref = f"{target.ident}:{port}" if port else target.ident
        if ref == source:       # pressed and released on one port: a click picks the port
            self.selection.set({ref})
            self.say(f"Port {ref} (drag from it to cable it)")
            return
        edit = self._apply(operations.connect, source, ref)
        if edit is not None:
            chosen = getattr(edit, "chosen", "")
            # the port a cable dropped on a switch took: said where the eyes are
            self.say(edit.message() if chosen else edit.text, notice=bool(chosen))
