"""Storage paths highlighted on the diagram, hop by hop: each path in its own colour along its
cables and switch links, a ring on every port it crosses (host port, switch ports, array port),
its number above its array port; and the trouble — the ports or parts where a path is missing —
ringed in red.  The path view (widgets/path_view.py) says what to show; nothing here works a
path out.  The overlay reads the cables' and ports' drawn geometry when it paints, so it follows
devices as they move.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem

from app import diagram

PATH_COLOURS = ("#ff6f00", "#d500f9", "#00a88f", "#2962ff", "#c51162", "#5b8f00", "#b08800", "#6d4c41")
TROUBLE = QColor("#d32f2f")
PORT_STEPS = ("port", "switch_port", "target")


def path_colour(index: int) -> QColor:
    return QColor(PATH_COLOURS[index % len(PATH_COLOURS)])


class PathOverlay(QGraphicsItem):
    """Drawn above everything, hit by nothing."""

    def __init__(self, canvas: Any):
        super().__init__()
        self.canvas = canvas
        self.paths: list[Sequence[Any]] = []      # each a list of path_explain.Step
        self.trouble: list[str] = []
        self.numbers: list[int] = []
        self._rect = QRectF()
        self.setZValue(40)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)

    def set(self, paths: Sequence[Sequence[Any]], trouble: Sequence[str], numbers: Sequence[int] = ()) -> None:
        """`numbers`: each path's number in the path view's list (its colour follows it)."""
        self.paths, self.trouble = [list(p) for p in paths], list(trouble)
        self.numbers = list(numbers) if len(numbers) == len(self.paths) else list(range(len(self.paths)))
        self.follow()

    def follow(self) -> None:
        """The devices or cables moved: take the new geometry."""
        self.prepareGeometryChange()
        rect = QRectF()
        for ref in self.refs():
            item = self._device(ref)
            if item is not None:
                rect = rect.united(item.sceneBoundingRect())
        self._rect = rect.adjusted(-30, -30, 30, 30) if not rect.isNull() else QRectF()
        self.update()

    def refs(self) -> set[str]:
        return {s.ref for p in self.paths for s in p if s.ref} | set(self.trouble)

    def boundingRect(self) -> QRectF:
        return self._rect

    # ------------------------------------------------------------------ what is where
    def _device(self, ref: str) -> Any:
        devices = self.canvas.devices
        if ref in devices:
            return devices[ref]
        return devices.get(ref.rpartition(":")[0])

    def _port_rect(self, ref: str) -> QRectF | None:
        dev, _, port = ref.rpartition(":")
        item = self.canvas.devices.get(dev)
        mark = item.marks.get(port) if item is not None else None
        if mark is None:
            return None
        return item.mapRectToScene(mark.rect)

    def _cable_line(self, ends: Sequence[str]) -> Any:
        item = self.canvas.link_item_between(*ends) if len(ends) == 2 else None
        return item.polyline if item is not None and item.isVisible() else None

    # ------------------------------------------------------------------ painting
    def paint(self, painter, option, widget=None) -> None:
        for i, steps in zip(self.numbers, self.paths):
            colour = path_colour(i)
            glow = QColor(colour)
            glow.setAlpha(120)
            line_pen = QPen(glow, 7.0)
            line_pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            line_pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            for step in steps:
                if step.kind in ("cable", "isl"):
                    line = self._cable_line(step.ends)
                    if line is not None:
                        painter.setPen(line_pen)
                        painter.setBrush(Qt.BrushStyle.NoBrush)
                        painter.drawPolyline(line)
            ring = QPen(colour, 2.2)
            painter.setPen(ring)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            target_port = None
            for step in steps:
                if step.kind in PORT_STEPS:
                    r = self._port_rect(step.ref)
                    if r is not None:
                        grow = 3.0 + 2.0 * (i % 3)
                        painter.drawRoundedRect(r.adjusted(-grow, -grow, grow, grow), 3, 3)
                        if step.kind == "target":
                            target_port = r
                elif step.kind == "switch":
                    item = self.canvas.devices.get(step.ref)
                    if item is not None:
                        body = item.body
                        dashed = QPen(colour, 1.6, Qt.PenStyle.DashLine)
                        painter.setPen(dashed)
                        painter.drawRoundedRect(body.adjusted(-3 - i, -3 - i, 3 + i, 3 + i), 8, 8)
                        painter.setPen(ring)
            if target_port is not None:       # paths share host ports; each has an array port of its own
                self._number(painter, target_port, i, colour)
        if self.trouble:
            pen = QPen(TROUBLE, 2.6, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for ref in self.trouble:
                r = self._port_rect(ref)
                if r is None:
                    item = self.canvas.devices.get(ref)
                    r = item.body.adjusted(-6, -6, 6, 6) if item is not None else None
                    if r is None:
                        continue
                else:
                    r = r.adjusted(-5, -5, 5, 5)
                path = QPainterPath()
                path.addRoundedRect(r, 4, 4)
                painter.drawPath(path)

    @staticmethod
    def _number(painter, port: QRectF, index: int, colour: QColor) -> None:
        centre = QPointF(port.center().x(), port.top() - 22)
        painter.setPen(QPen(QColor("#ffffff"), 1.2))
        painter.setBrush(colour)
        painter.drawEllipse(centre, 8, 8)
        painter.setFont(diagram.font(10, True))
        painter.setPen(QColor("#ffffff"))
        painter.drawText(QRectF(centre.x() - 8, centre.y() - 8, 16, 16), int(Qt.AlignmentFlag.AlignCenter),
                         str(index + 1))


class PathHighlight:
    """Canvas part: the path overlay, shown and cleared by the path view."""

    _path_overlay: PathOverlay | None = None

    def show_paths(self, paths: Sequence[Sequence[Any]], trouble: Sequence[str] = (),
                   numbers: Sequence[int] = ()) -> None:
        """Highlight these paths (lists of path_explain.Step, numbered as the path view lists them)
        and ring the trouble in red."""
        if not paths and not trouble:
            self.clear_paths()
            return
        overlay = self._path_overlay
        if overlay is None or overlay.scene() is None:
            overlay = self._path_overlay = PathOverlay(self)
            self.scene().addItem(overlay)
        overlay.set(paths, trouble, numbers)

    def reveal_paths(self) -> None:
        """Bring the highlighted paths into sight (zooming out only when they do not fit)."""
        overlay = self._path_overlay
        if overlay is None or overlay.boundingRect().isNull():
            return
        rect = overlay.boundingRect()
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        if rect.width() > visible.width() or rect.height() > visible.height():
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        self.centerOn(rect.center())

    def clear_paths(self) -> None:
        overlay = self._path_overlay
        if overlay is not None and overlay.scene() is not None:
            self.scene().removeItem(overlay)
        self._path_overlay = None

    @property
    def shown_paths(self) -> list[Sequence[Any]]:
        return list(self._path_overlay.paths) if self._path_overlay is not None else []

    @property
    def shown_trouble(self) -> list[str]:
        return list(self._path_overlay.trouble) if self._path_overlay is not None else []

    def link_item_between(self, a: str, b: str) -> Any:
        """The drawn cable with these two ends (either way round)."""
        for item in self.links.values():
            lk = item.model_obj
            if (lk.a, lk.b) in ((a, b), (b, a)):
                return item
        return None

    def _follow_paths(self) -> None:
        if self._path_overlay is not None:
            self._path_overlay.follow()
