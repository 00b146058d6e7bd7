"""Cabling with the mouse: drag from a port marker to another port or a switch; the link is made by
`operations.connect`, and a refused link says why in the status bar and draws nothing.
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

    def _finish_link(self, scene_pos: QPointF) -> None:
        source = self._link_from
        self._cancel_link()
        target = self._device_at(scene_pos)
        if target is None or source is None:
            self.say("Link not made: release the mouse over a port or a switch", refusal=True)
            return
        port = target.port_at(target.mapFromScene(scene_pos))
        ref = f"{target.ident}:{port}" if port else target.ident
        edit = self._apply(operations.connect, source, ref)
        if edit is not None:
            self.say(edit.text)
