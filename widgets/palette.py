"""The palette: the kinds of component a person can put on the canvas.

Each entry is drawn by app/diagram/ (a miniature of how the canvas will show it).  Drag
an entry onto the canvas (drag data: `application/x-testbed-kind`), or click it and then
click on the canvas.  The palette keeps no state about the bed; it only tells the
canvas which kind was picked.
"""
from __future__ import annotations

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QColor, QDrag, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app import diagram
from topology import operations
from topology.model import Network, Port

KIND_MIME = "application/x-testbed-kind"
KIND_ROLE = Qt.ItemDataRole.UserRole
ICON = QSize(38, 26)


def kind_icon(key: str, size: QSize = ICON) -> QIcon:
    """A small picture of a palette kind, painted the way the canvas paints it."""
    pixmap = QPixmap(size * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    w, h = float(size.width()), float(size.height())
    try:
        _paint_icon(painter, key, w, h)
    finally:
        painter.end()
    return QIcon(pixmap)


def _paint_icon(painter: QPainter, key: str, w: float, h: float) -> None:
    base, role = operations.parse_kind(key)
    if base == "network":
        painter.translate(1, h / 2 - 8)
        diagram.paint_chip(painter, Network(id="", role="lan"), w - 2, 16)
        return
    if base == "vm":
        painter.setPen(diagram.SUBTLE)
        painter.setBrush(QColor("#ffffff"))
        painter.drawRoundedRect(4, h / 2 - 8, w - 8, 16, 3, 3)
        painter.setFont(diagram.font(9, True))
        painter.drawText(4, int(h / 2 - 8), int(w - 8), 16, int(Qt.AlignmentFlag.AlignCenter), "VM")
        return
    if base in ("enclosure", "disk"):
        slots = 6 if base == "enclosure" else 1
        sw = (w - 8) / 6
        x0 = 4 if base == "enclosure" else w / 2 - sw / 2
        painter.setPen(QColor("#8d7b68"))
        for i in range(slots):
            painter.setBrush(QColor("#6d5c4b"))
            painter.drawRect(x0 + i * sw, h / 2 - 9, sw - 2, 18)
        return
    dev = _sample(base, role)
    body_fill, border = diagram.body_style(dev)
    painter.setBrush(body_fill)
    painter.setPen(border)
    top = 4.0
    painter.drawRoundedRect(2, top, w - 4, h - 2 * top, 4, 4)
    marks = diagram.device_ports(dev)
    n = len(marks)
    if n:
        pitch = (w - 10) / n
        y = h - top - 3 if base == "server" else top - 2
        for i, (port, _ctrl) in enumerate(marks):
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(diagram.colour(diagram.port_role(port, dev)))
            painter.drawRect(5 + i * pitch + pitch / 2 - 2.5, y, 5, 5)
    if base == "switch":
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(border)
        for i in range(8):
            painter.drawRect(6 + i * (w - 12) / 8, h / 2 - 2, 3, 4)


def _sample(base: str, role: str | None):
    from topology.model import Chassis
    if base == "server":
        return operations.new_server("x", role or "hypervisor")
    if base == "switch":
        from topology.model import Switch
        return Switch(id="x", kind="fc" if role == "fc" else "ethernet",
                      ports=[Port(name=str(i), kind="fc", roles=["fc"], fabric="A") for i in range(4)]
                      if role == "fc" else [])
    if base == "array":
        return operations.new_array("x")
    return Chassis(id="x")


class KindList(QListWidget):
    """The list itself: starts a drag with the kind in its mime data; Escape disarms."""

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.parent().disarm()
            event.accept()
            return
        super().keyPressEvent(event)

    def startDrag(self, actions) -> None:
        item = self.currentItem()
        if item is None:
            return
        mime = QMimeData()
        mime.setData(KIND_MIME, item.data(KIND_ROLE).encode("utf-8"))
        mime.setText(item.text())
        drag = QDrag(self)
        drag.setMimeData(mime)
        drag.setPixmap(item.icon().pixmap(ICON))
        drag.setHotSpot(drag.pixmap().rect().center() / drag.pixmap().devicePixelRatio())
        drag.exec(Qt.DropAction.CopyAction)


class Palette(QWidget):
    kind_chosen = Signal(str)

    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.armed: str | None = None
        self._followed: list = []
        self.list = KindList(self)
        self.list.setObjectName("paletteList")
        self.list.setIconSize(ICON)
        self.list.setSpacing(1)
        self.list.setDragEnabled(True)
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setUniformItemSizes(True)
        for kind in operations.PALETTE:
            item = QListWidgetItem(kind_icon(kind.key), kind.label)
            item.setData(KIND_ROLE, kind.key)
            item.setToolTip(f"{kind.label}: {kind.tip}\nClick, then click on the diagram (each click adds one; "
                            "Esc or a second click here stops); or drag it there.")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsDragEnabled)
            self.list.addItem(item)
        self.list.itemClicked.connect(self._clicked)
        hint = QLabel("Click a kind, then click on the diagram — or drag it there. "
                      "Drag from port to port to cable.", self)
        hint.setWordWrap(True)
        hint.setStyleSheet("color: #5b6573;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list)
        layout.addWidget(hint)

    def item_for(self, key: str) -> QListWidgetItem:
        for i in range(self.list.count()):
            if self.list.item(i).data(KIND_ROLE) == key:
                return self.list.item(i)
        raise KeyError(key)

    def _canvases(self) -> list:
        from widgets.canvas.view import Canvas
        canvases = self.window().findChildren(Canvas)
        for canvas in canvases:
            if canvas not in self._followed:   # the entry stays highlighted exactly while armed
                self._followed.append(canvas)
                canvas.armed_changed.connect(self._show_armed)
        return canvases

    def _clicked(self, item: QListWidgetItem) -> None:
        key = item.data(KIND_ROLE)
        canvases = self._canvases()
        if self.armed == key:                  # a second click on the armed entry puts it down
            for canvas in canvases:
                canvas.disarm()
            return
        self.kind_chosen.emit(key)
        # the canvases of this window place one on every click until Escape
        for canvas in canvases:
            canvas.arm(key)

    def disarm(self) -> None:
        for canvas in self._canvases():
            canvas.disarm()

    def _show_armed(self, key: str) -> None:
        self.armed = key or None
        self.list.blockSignals(True)
        try:
            if key:
                self.list.setCurrentItem(self.item_for(key))
            else:
                self.list.clearSelection()
                self.list.setCurrentItem(None)
        finally:
            self.list.blockSignals(False)

    def sizeHint(self) -> QSize:
        return QSize(200, 420)
