"""The canvas widget: a QGraphicsView that puts its parts together (see the package's docstring)
and owns what is the view's own: zoom, pan, fit, the grid, the keyboard, and which part a
mouse press goes to.

The scene has no BSP index (NoIndex): a cable across a big bed spans hundreds of BSP
leaves, and re-indexing the cables of 100 dragged hosts took ~0.4 s per mouse move, while
the linear scans NoIndex does instead cost ~2 ms per hit test on 15,000 items.  Devices
cache their pictures; on big beds cables are hair lines (the raster engine's fast path).
See bench/canvas.py for the figures.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QLineF, QObject, QPoint, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeySequence, QPainter, QPen, QPixmapCache, QTransform
from PySide6.QtWidgets import QApplication, QGraphicsLineItem, QGraphicsScene, QGraphicsView, QMainWindow

from app import diagram
from topology import operations
from topology.layout import Box
from widgets.canvas.building import SlicedBuild
from widgets.canvas.cabling import Cabling
from widgets.canvas.drawing import ModelDrawing
from widgets.canvas.editing import Editing
from widgets.canvas.export import DiagramExport
from widgets.canvas.far_drawing import FarDrawing
from widgets.canvas.items import ChipItem, DeviceItem, LinkItem
from widgets.canvas.legend import LegendOverlay
from widgets.canvas.links import LinkRouting
from widgets.canvas.notice import CanvasNotice
from widgets.canvas.path_overlay import PathHighlight
from widgets.canvas.placing import Placing
from widgets.canvas.port_strips import PortStrips
from widgets.canvas.selection_sync import SelectionSync
from widgets.canvas.tooltips import Tooltips
from widgets.lifetimes import exec_once

GRID = 20.0
ZOOM_STEP = 1.25
ZOOM_MIN, ZOOM_MAX = 0.02, 5.0
PIXMAP_CACHE_KB = 96 * 1024             # Qt's default (10 MB) holds about 60 device pictures
NUDGE = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0), Qt.Key.Key_Up: (0, -1), Qt.Key.Key_Down: (0, 1)}
NUDGE_BIG = 5                        # Shift+arrow moves this many grid steps


def application() -> QApplication:
    """The running QApplication, created when a script (a benchmark) has none yet."""
    return QApplication.instance() or QApplication([])


class Canvas(SlicedBuild, ModelDrawing, LinkRouting, Cabling, PortStrips, PathHighlight, SelectionSync, Editing,
             Placing, DiagramExport, Tooltips, FarDrawing, QGraphicsView):
    message = Signal(str)             # what the canvas told the user (also shown in the status bar)
    armed_changed = Signal(str)       # the palette kind the next click places ("" = none)
    built = Signal()                  # a bed built in slices has all its items (widgets/canvas/building.py)

    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.setScene(QGraphicsScene(self))
        self.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemBoundingRect)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        # one rectangle per repaint: the view looks up the items under a rectangle with a cheap test,
        # but under a region of several (SmartViewportUpdate's choice for a moved device and its
        # cables) it tests every item against a path; zoomed out on a 5,000-device bed that made one
        # edit's repaint as slow as repainting everything (~0.17 s, against ~0.03 s)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setBackgroundBrush(QColor("#ffffff"))
        # devices cache their pictures (DeviceCoordinateCache); a screenful of them must fit
        if QPixmapCache.cacheLimit() < PIXMAP_CACHE_KB:
            QPixmapCache.setCacheLimit(PIXMAP_CACHE_KB)

        # views of the model, rebuilt from it (never edited directly)
        self.objects: dict[str, Any] = {}          # drawn id -> model object
        self.vms_of: dict[str, list] = {}          # host id -> its VMs
        self.blades_of: dict[str, list] = {}       # chassis id -> its blades and I/O modules
        self.cabled: dict[str, set[str]] = {}      # device id -> port names with a cable
        self.badges: dict[str, diagram.Badge] = {}
        self.highlight: frozenset[str] = frozenset()   # selected ports and VMs (drawn inside devices)

        self.devices: dict[str, DeviceItem] = {}
        self.chips: dict[str, ChipItem] = {}
        self.links: dict[int, LinkItem] = {}       # id(Link) -> item
        self.paths: dict[int, LinkItem] = {}       # id(PathSpec) -> item (dashed)
        self._links_at: dict[str, set[int]] = {}   # device id -> keys of its link/path items
        self._fallback: dict[str, Box] = {}        # layout for devices the model does not place
        self._next_free = QPointF(0, 0)
        self._dirty_links: set[int] = set()
        self._moved: set[str] = set()
        self._obstacles: list[tuple[float, float, float, float]] | None = None
        self._strips_selected: set[str] = set()      # switches whose port strip is expanded for the selection
        self._strip_hovered: str | None = None       # ... and the one under a dragged cable

        self.grid_enabled = True
        self.dragging = False
        self.armed: str | None = None              # palette kind waiting for a click
        self.last_message = ""
        self._press_positions: dict[str, QPointF] = {}
        self._press_scene = QPointF()
        self._link_from: str | None = None
        self._link_line: QGraphicsLineItem | None = None
        self._pan_from: QPoint | None = None
        self._space = False
        self._syncing = False
        self._published: frozenset[str] | None = None
        self._paste_count = 0
        self._last_copy = ""

        self.configuration = None                  # the chosen configuration the drawing shows
        self.configured_objects: dict = {}
        self.excluded_ids: frozenset[str] = frozenset()
        if isinstance(document, QObject) and hasattr(document, "revision"):
            from app.configuration_choice import ConfigurationChoice
            self.configuration = ConfigurationChoice.of(document)
            self.configuration.changed.connect(self._configuration_chosen)
        self._publish_timer = QTimer(self, singleShot=True, interval=0, timeout=self._publish_selection)
        self._publish_after_menu = False     # a right press selected; the menu publishes it
        self.scene().selectionChanged.connect(self._scene_selection_changed)
        self.scene().selectionChanged.connect(self.far_changed)
        document.reset.connect(self._rebuild)
        document.changed.connect(self._on_changed)
        if hasattr(document, "about_to_edit"):      # a big bed's build ends on the bed as it was opened
            document.about_to_edit.connect(self.finish_build)
        selection.changed.connect(self._follow_selection)
        selection.centre_requested.connect(self.centre_on)
        validation = getattr(document, "validation", None)
        if validation is not None:
            validation.findings_changed.connect(self._on_findings)
        choice = getattr(document, "scenario", None)
        if choice is not None:
            choice.changed.connect(self._follow_scenario)
        self.legend = LegendOverlay(self)
        self.notice = CanvasNotice(self)
        document.reset.connect(self.clear_messages)
        self._rebuild(at_once=True)         # the document's bed as it is: the caller uses the items at once

    def place_overlays(self) -> None:
        vp = self.viewport().geometry()
        if not self.legend.touched:   # fold it where it would hide a good part of the drawing
            fold = self.legend.sizeHint().width() * 4 > vp.width() or self.legend.sizeHint().height() * 2 > vp.height()
            if fold != self.legend.folded:
                self.legend.folded = fold
                self.legend._resize()
        self.legend.move(vp.right() - self.legend.width() - 10, vp.bottom() - self.legend.height() - 10)
        self.legend.raise_()
        self.notice.place(vp)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.place_overlays()

    def say(self, text: str, *, refusal: bool = False, notice: bool = False) -> None:
        """Tell the user: the status bar, and for a refusal (or with `notice`) also a notice over
        the drawing (where the eyes are) that stays until the next action or a few seconds."""
        self.last_message = text
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, 15000 if refusal else 8000)
        if refusal or notice:
            self.notice.show_text(text, "refusal" if refusal else "info")
        self.message.emit(text)

    def clear_messages(self) -> None:
        """Another bed or scenario: what was said about the last one no longer applies."""
        self.last_message = ""
        self.notice.hide()
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().clearMessage()

    def nudge(self, dx: int, dy: int, *, big: bool = False) -> bool:
        """Move the selected devices by a grid step (five with Shift), as one undoable move."""
        step = GRID * (NUDGE_BIG if big else 1)
        moved = {i: (d.pos().x() + dx * step, d.pos().y() + dy * step)
                 for i, d in self.devices.items() if d.isSelected()}
        if not moved:
            return False
        self._apply(operations.move, moved)
        return True

    def _select_for_menu(self, scene_pos: QPointF) -> None:
        """A right press selects what is under it (unless it is part of the selection already).

        The other views hear of it when the menu has closed: the menu reads the canvas's own
        selection, and the property form rebuilt for the new device would hold the menu back
        (75–500 ms) for a panel the open menu covers the attention of anyway."""
        device = self._device_at(scene_pos)
        if device is not None:
            if not device.isSelected():
                self._clear_link_selection()
                self.scene().clearSelection()
                device.setSelected(True)
                self._publish_timer.stop()
                self._publish_after_menu = True
            return
        link = self._link_at(scene_pos)
        if link is not None:
            if not link.selected:
                self._clear_link_selection()
                self.scene().clearSelection()
                link.set_selected(True)
            return

    def zoom_in(self) -> None:
        self._zoom(ZOOM_STEP, anchor_mouse=False)

    def zoom_out(self) -> None:
        self._zoom(1 / ZOOM_STEP, anchor_mouse=False)

    def zoom(self) -> float:
        return self.transform().m11()

    def _zoom(self, factor: float, anchor_mouse: bool = True) -> None:
        now = self.zoom()
        factor = max(ZOOM_MIN / now, min(ZOOM_MAX / now, factor))
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse if anchor_mouse
                                     else QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.scale(factor, factor)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)

    def fit(self) -> None:
        self.fit_rect(self.scene().itemsBoundingRect())

    def fit_rect(self, content: QRectF) -> None:
        """`content` (the drawing's extent) in view."""
        if content.isNull():
            self.setTransform(QTransform())
            return
        self.fitInView(content.adjusted(-30, -30, 30, 30), Qt.AspectRatioMode.KeepAspectRatio)
        # the scroll bars follow the new zoom only on the next layout pass, and the viewport's size
        # with them: left to the first edit, that pass repaints the whole drawing in the edit's time
        QApplication.sendEvent(self, QEvent(QEvent.Type.LayoutRequest))
        self.fitInView(content.adjusted(-30, -30, 30, 30), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom() > 1.0:   # a small bed stays at 100 %, centred
            self.setTransform(QTransform())
            self.centerOn(content.center())

    def auto_layout(self) -> None:
        edit = self._apply(operations.apply_layout)
        if edit is not None:
            self._place_chips(again=True)
            self.fit()
            self.say("Arranged the devices in tiers")

    def toggle_grid(self) -> bool:
        self.grid_enabled = not self.grid_enabled
        self.resetCachedContent()
        self.viewport().update()
        self.say("Snap to grid on" if self.grid_enabled else "Snap to grid off")
        return self.grid_enabled

    def snap(self, pos: QPointF) -> QPointF:
        if not self.grid_enabled:
            return pos
        return QPointF(round(pos.x() / GRID) * GRID, round(pos.y() / GRID) * GRID)

    def _device_at(self, scene_pos: QPointF) -> DeviceItem | None:
        for item in self.scene().items(scene_pos):
            if isinstance(item, DeviceItem):
                return item
        return None

    def mousePressEvent(self, event) -> None:
        pos = event.position().toPoint()
        scene_pos = self.mapToScene(pos)
        if event.button() == Qt.MouseButton.MiddleButton or (
                event.button() == Qt.MouseButton.LeftButton and self._space):
            self._pan_from = pos
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and self.armed:
            self.place(self.armed, scene_pos)   # stays armed: Escape or the entry again disarms it
            event.accept()
            return
        if event.button() == Qt.MouseButton.RightButton:
            if self.armed:
                self.disarm()
            else:
                self._select_for_menu(scene_pos)
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton:
            device = self._device_at(scene_pos)
            if device is not None:
                local = device.mapFromScene(scene_pos)
                port = device.port_at(local)
                if port is not None:
                    self._start_link(device, port)
                    event.accept()
                    return
                vm = device.vm_at(local)
                if vm is not None:
                    self._clear_link_selection()
                    self._select_vm(vm)
                    event.accept()
                    return
                bay = device.bay_at(local)
                if bay is not None:         # a blade or I/O module in its chassis bay: select it
                    self._clear_link_selection()
                    self.selection.set({bay.occupants[0]})
                    event.accept()
                    return
            else:
                link = self._link_at(scene_pos)
                if link is not None:
                    additive = event.modifiers() & Qt.KeyboardModifier.ControlModifier
                    if not additive:
                        self._clear_link_selection()
                        self.scene().clearSelection()
                    link.set_selected(not link.selected if additive else True)
                    self.say(f"Cable {link.model_obj.a} — {link.model_obj.b} (Delete removes it)")
                    event.accept()
                    return
            if not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
                self._clear_link_selection()
        super().mousePressEvent(event)
        if event.button() == Qt.MouseButton.LeftButton and self._device_at(scene_pos) is not None:
            # the canvas moves the selection itself: one pass over the selected devices per event,
            # links updated once, and no Python call per item per change
            self._press_positions = {i.ident: i.pos() for i in self.scene().selectedItems()
                                     if isinstance(i, DeviceItem)}
            self._press_scene = scene_pos
            self.dragging = bool(self._press_positions)

    def mouseMoveEvent(self, event) -> None:
        pos = event.position().toPoint()
        if self._pan_from is not None:
            delta = pos - self._pan_from
            self._pan_from = pos
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            event.accept()
            return
        if self._link_from is not None and self._link_line is not None:
            line = self._link_line.line()
            scene_pos = self.mapToScene(pos)
            self._link_line.setLine(QLineF(line.p1(), scene_pos))
            self._hover_strip(self._device_at(scene_pos))     # a switch under the cable shows its ports
            event.accept()
            return
        if self.dragging and event.buttons() & Qt.MouseButton.LeftButton:
            self._drag_to(self.mapToScene(pos))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        pos = event.position().toPoint()
        if self._pan_from is not None and event.button() in (Qt.MouseButton.MiddleButton, Qt.MouseButton.LeftButton):
            self._pan_from = None
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor if self._space else Qt.CursorShape.ArrowCursor)
            if not self._space:
                self.viewport().unsetCursor()
            event.accept()
            return
        if self._link_from is not None and event.button() == Qt.MouseButton.LeftButton:
            self._finish_link(self.mapToScene(pos))
            event.accept()
            return
        super().mouseReleaseEvent(event)
        if self._publish_timer.isActive():   # a click or a rubber band: tell the other views now
            self._publish_selection()
        if event.button() == Qt.MouseButton.LeftButton and self.dragging:
            self.dragging = False
            self._commit_move()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape:
            if self.armed:
                self.disarm()
            self._cancel_link()
            event.accept()
            return
        step = NUDGE.get(event.key())
        if step is not None and self.nudge(*step, big=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)):
            event.accept()
            return
        for key, handler in ((QKeySequence.StandardKey.Delete, self.delete_selected),
                             (QKeySequence.StandardKey.SelectAll, self.select_all),
                             (QKeySequence.StandardKey.Copy, self.copy),
                             (QKeySequence.StandardKey.Cut, self.cut),
                             (QKeySequence.StandardKey.Paste, self.paste),
                             (QKeySequence.StandardKey.ZoomIn, self.zoom_in),
                             (QKeySequence.StandardKey.ZoomOut, self.zoom_out)):
            if event.matches(key):
                handler()
                event.accept()
                return
        if event.key() == Qt.Key.Key_Backspace:
            self.delete_selected()
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            if self._pan_from is None:
                self.viewport().unsetCursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def contextMenuEvent(self, event) -> None:
        from widgets.context_menus import canvas_menu
        try:
            menu = canvas_menu(self, event.pos())
            if menu is not None and not menu.isEmpty():
                exec_once(menu, event.globalPos())
            elif menu is not None:
                menu.deleteLater()
        finally:
            if self._publish_after_menu:
                self._publish_after_menu = False
                self._publish_selection()
        event.accept()

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._zoom(1.0015 ** event.angleDelta().y())
            event.accept()
            return
        super().wheelEvent(event)

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        self.follow_far_zoom()      # before the items: far away, the devices are drawn in one pass
        painter.fillRect(rect, QColor("#ffffff"))
        if not self.grid_enabled or self.zoom() < 0.5:
            return
        painter.setPen(QPen(QColor("#eef1f5"), 0))
        left = int(rect.left() // GRID) * GRID
        top = int(rect.top() // GRID) * GRID
        x = left
        lines = []
        while x < rect.right():
            lines.append(QLineF(x, rect.top(), x, rect.bottom()))
            x += GRID
        y = top
        while y < rect.bottom():
            lines.append(QLineF(rect.left(), y, rect.right(), y))
            y += GRID
        painter.drawLines(lines)

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        self.draw_far_layer(painter, rect)
        if not self.devices and not self.building:
            painter.save()
            painter.resetTransform()
            painter.setPen(diagram.SUBTLE)
            painter.setFont(diagram.font(14))
            painter.drawText(QRectF(self.viewport().rect()), int(Qt.AlignmentFlag.AlignCenter),
                             "Pick a component in the palette, then click here to place it.\n"
                             "Drag from a port marker to another port to cable them.")
            painter.restore()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        if not self.devices:   # the hint is drawn in view coordinates: repaint it whole
            self.viewport().update()

    def sizeHint(self) -> QSize:
        return QSize(900, 700)
