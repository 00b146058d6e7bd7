"""The diagram: the bed's devices and cables on a QGraphicsScene, edited with the mouse.

What a person does here and what it becomes:
* pick a kind in the palette, click (or drop) on the canvas: `operations.add_device`;
* drag from a port marker to another port or a switch: `operations.connect` (refused
  links say why in the status bar and draw nothing);
* drag devices (all selected ones move together, snapped to the grid): one `move` step;
* rubber band, Ctrl+A, copy/cut/paste (project-file text on the clipboard), Delete;
* zoom (Ctrl+wheel, actions), pan (middle button or Space+drag), fit, automatic layout.

The canvas never keeps its own copy of the model: items hold ids, paint from the
document's bed, and every change goes through `document.apply(edit)`.  On
`document.changed(ids)` only the touched devices and their links are redrawn; on
`document.reset` the scene is rebuilt.  Devices without a position in the model are
placed by the automatic layout (computed on reset, not written to the model: opening a
file does not make it "modified"; the Automatic Layout action writes it, as one step).

The scene has no BSP index (NoIndex): a cable across a big bed spans hundreds of BSP
leaves, and re-indexing the cables of 100 dragged hosts took ~0.4 s per mouse move, while
the linear scans NoIndex does instead cost ~2 ms per hit test on 15,000 items.  Devices
cache their pictures; on big beds cables are hair lines (the raster engine's fast path).
See app/bench_canvas.py for the figures.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from PySide6.QtCore import QEvent, QLineF, QMimeData, QPoint, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (QColor, QGuiApplication, QImage, QKeySequence, QPainter, QPainterPath, QPen,
                           QPixmapCache, QTransform)
from PySide6.QtWidgets import (QApplication, QFileDialog, QGraphicsLineItem, QGraphicsScene,
                               QGraphicsView, QMainWindow, QToolTip, QWidget)

from app import diagram
from topology import clipboard, layout, operations
from topology.model import Chassis, Network, Server, StorageArray, Switch
from topology.layout import Box
from topology.operations import Refused
from widgets.canvas_items import ChipItem, DeviceItem, LinkItem

KIND_MIME = "application/x-testbed-kind"
GRID = 20.0
ZOOM_STEP = 1.25
ZOOM_MIN, ZOOM_MAX = 0.02, 5.0
EXPORT_MAX_PIXELS = 120_000_000      # an export larger than this is scaled down (memory)
PASTE_STEP = 40.0
PIXMAP_CACHE_KB = 96 * 1024          # Qt's default (10 MB) holds about 60 device pictures


def application() -> QApplication:
    """The running QApplication, created when a script (a benchmark) has none yet."""
    return QApplication.instance() or QApplication([])


class LegendOverlay(QWidget):
    """The colour legend over the canvas's lower right corner; a click folds it away.
    A child of the view (not of its viewport), so scrolling the drawing does not drag it along."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.folded = False
        self.touched = False          # the user folded or unfolded it: leave it so
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._resize()

    def _resize(self) -> None:
        w, h = diagram.legend_size()
        self.setFixedSize(QSize(86, 26) if self.folded else QSize(int(w) + 2, int(h) + 2))
        self.setToolTip("Show the legend" if self.folded else "Hide the legend")

    def sizeHint(self) -> QSize:  # noqa: D102 - Qt override
        w, h = diagram.legend_size()
        return QSize(int(w) + 2, int(h) + 2)

    def mousePressEvent(self, event) -> None:  # noqa: D102 - Qt override
        self.folded = not self.folded
        self.touched = True
        self._resize()
        self.parent().place_overlays()
        event.accept()

    def paintEvent(self, event) -> None:  # noqa: D102 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.folded:
            painter.setPen(QPen(QColor("#b0b7c0"), 1.0))
            painter.setBrush(QColor(255, 255, 255, 235))
            painter.drawRoundedRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1), 6, 6)
            painter.setPen(diagram.TEXT)
            painter.setFont(diagram.font(11, True))
            painter.drawText(QRectF(self.rect()), int(Qt.AlignmentFlag.AlignCenter), "Legend ▴")
        else:
            diagram.paint_legend(painter, QPointF(1, 1))
        painter.end()


class Canvas(QGraphicsView):
    message = Signal(str)             # what the canvas told the user (also shown in the status bar)

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
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
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
        self.blades_of: dict[str, list] = {}       # chassis id -> its servers
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

        self._publish_timer = QTimer(self, singleShot=True, interval=0, timeout=self._publish_selection)
        self.scene().selectionChanged.connect(self._scene_selection_changed)
        document.reset.connect(self._rebuild)
        document.changed.connect(self._on_changed)
        selection.changed.connect(self._follow_selection)
        selection.centre_requested.connect(self.centre_on)
        validation = getattr(document, "validation", None)
        if validation is not None:
            validation.findings_changed.connect(self._on_findings)
        self.legend = LegendOverlay(self)
        self._rebuild()

    def place_overlays(self) -> None:
        vp = self.viewport().geometry()
        if not self.legend.touched:   # fold it where it would hide a good part of the drawing
            fold = self.legend.sizeHint().width() * 4 > vp.width() or self.legend.sizeHint().height() * 2 > vp.height()
            if fold != self.legend.folded:
                self.legend.folded = fold
                self.legend._resize()
        self.legend.move(vp.right() - self.legend.width() - 10, vp.bottom() - self.legend.height() - 10)
        self.legend.raise_()

    def resizeEvent(self, event) -> None:  # noqa: D102 - Qt override
        super().resizeEvent(event)
        self.place_overlays()

    # ================================================================== model -> scene
    @property
    def bed(self):
        return self.document.bed

    def _model_maps(self) -> tuple[dict[str, Any], dict[str, list]]:
        """Drawn id -> model object, and host -> its VMs (also fills blades_of)."""
        bed = self.bed
        objects: dict[str, Any] = {}
        for coll in (bed.servers, bed.switches, bed.arrays, bed.chassis, bed.networks):
            for c in coll:
                objects[c.id] = c
        servers = {s.id for s in bed.servers}
        vms_of: dict[str, list] = {}
        for vm in bed.vms:
            if vm.host in servers:
                vms_of.setdefault(vm.host, []).append(vm)
            else:
                objects[vm.id] = vm
        blades: dict[str, list] = {}
        for s in bed.servers:
            if s.chassis:
                blades.setdefault(s.chassis, []).append(s)
        self.blades_of = blades
        return objects, vms_of

    def _rebuild(self) -> None:
        """A different bed: new items for everything."""
        self._cancel_link()
        self._syncing = True
        try:
            self.scene().clear()
        finally:
            self._syncing = False
        self.devices.clear()
        self.chips.clear()
        self.links.clear()
        self.paths.clear()
        self._links_at.clear()
        self._obstacles = None
        self.objects, self.vms_of = self._model_maps()
        self._fallback = layout.layout(self.bed)
        self._set_free_spot()
        self.cabled = self._cabled_ports()
        self.badges = self._badges_for(getattr(getattr(self.document, "validation", None), "findings", []))
        for ident, obj in self.objects.items():
            if isinstance(obj, (Server, Switch, StorageArray, Chassis)):
                self._add_device(ident, obj)
        self._place_chips(again=True)
        self._dirty_links, self._moved = set(), set()   # new links are routed as they are made
        for link in self.bed.links:
            self._add_link(link)
        for path in diagram.uncabled_paths(self.bed, self._device_objects()):
            self._add_link(path, dashed=True)
        self._update_scene_rect()
        self._follow_selection(self.selection.ids)
        QTimer.singleShot(0, self, self.fit)   # bound to the canvas: nothing runs once it is gone

    def _device_objects(self) -> dict[str, Any]:
        return {i: o for i, o in self.objects.items() if isinstance(o, (Server, Switch, StorageArray, Chassis))}

    def _add_device(self, ident: str, obj: Any) -> DeviceItem:
        item = DeviceItem(self, ident)
        self.devices[ident] = item
        self._refresh_device(item, obj)
        self.scene().addItem(item)
        return item

    def _refresh_device(self, item: DeviceItem, obj: Any) -> None:
        contents = len(self.vms_of.get(item.ident, ())) if isinstance(obj, Server) else 0
        item.refresh(obj, contents)
        pos = self._position(item.ident, obj, item.w, item.h)
        if item.pos() != pos:
            item.setPos(pos)
            self.device_moved(item.ident)

    def _position(self, ident: str, obj: Any, w: float, h: float) -> QPointF:
        if obj.x is not None and obj.y is not None:
            return QPointF(obj.x, obj.y)
        box = self._fallback.get(ident)
        if box is None:  # a device added without a position (by another view): next free spot
            box = Box(self._next_free.x(), self._next_free.y(), w, h)
            self._fallback[ident] = box
            self._next_free += QPointF(w + 40, 0)
        return QPointF(box.x, box.y)

    def _set_free_spot(self) -> None:
        boxes = [b for b in self._fallback.values()]
        right = max((b.x + b.w for b in boxes), default=0.0)
        top = min((b.y for b in boxes), default=0.0)
        self._next_free = QPointF(right + 80, top)

    def _place_chips(self, again: bool = False) -> None:
        """Networks and unplaced VMs in their strip above the drawing (laid out again only when
        the set of chips changes or `again`, so they do not wander while devices move)."""
        wanted = {i for i, o in self.objects.items() if not isinstance(o, (Server, Switch, StorageArray, Chassis))}
        if wanted == set(self.chips) and not again:
            return
        for ident in list(self.chips):
            if ident not in wanted:
                self.scene().removeItem(self.chips.pop(ident))
        if not wanted:
            return
        drawn = {i: Box(it.pos().x(), it.pos().y(), it.w, it.h) for i, it in self.devices.items()}
        boxes = layout.strip_boxes(self.bed, drawn)
        for ident in wanted:
            item = self.chips.get(ident)
            if item is None:
                item = self.chips[ident] = ChipItem(self, ident)
                self.scene().addItem(item)
            b = boxes.get(ident)
            if b is not None:
                item.set_box(b.x, b.y, b.w, b.h)

    def _cabled_ports(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for link in self.bed.links:
            for ref in (link.a, link.b):
                dev, port = self._split(ref)
                if port:
                    out.setdefault(dev, set()).add(port)
        return out

    def _split(self, ref: str) -> tuple[str, str | None]:
        if ref in self.objects:
            return ref, None
        dev, sep, port = ref.rpartition(":")
        return (dev, port) if sep else (ref, None)

    # ------------------------------------------------------------------ links
    def _add_link(self, obj: Any, dashed: bool = False) -> LinkItem:
        item = LinkItem(obj, dashed, thin=len(self.devices) > diagram.ROUTED_MAX)
        (self.paths if dashed else self.links)[id(obj)] = item
        self._route(item)       # also files the item under its two devices
        self.scene().addItem(item)
        return item

    def _remove_link(self, key: int, dashed: bool = False) -> None:
        item = (self.paths if dashed else self.links).pop(key)
        for dev in item.ends:
            keys = self._links_at.get(dev)
            if keys is not None:
                keys.discard(key)
        self.scene().removeItem(item)

    def _link_item(self, key: int) -> LinkItem | None:
        return self.links.get(key) or self.paths.get(key)

    def _route(self, item: LinkItem) -> None:
        obj = item.model_obj
        a, b = (obj.initiator, obj.target) if item.dashed else (obj.a, obj.b)
        ends = (self._split(a)[0], self._split(b)[0])
        if ends != item.ends:   # an end was re-pointed (a rename, the property editor)
            key = id(obj)
            for dev in item.ends:
                self._links_at.get(dev, set()).discard(key)
            for dev in ends:
                self._links_at.setdefault(dev, set()).add(key)
            item.ends = ends
        rects, marks = {}, {}
        for ref in (a, b):
            dev = self._split(ref)[0]
            d = self.devices.get(dev)
            if d is None:
                item.hide()
                return
            pos = d.pos()
            rects[dev], marks[dev] = (pos.x(), pos.y(), d.w, d.h), d.marks
        obstacles = () if item.dashed else self._obstacle_rects()
        geometry = diagram.link_geometry(a, b, self.objects, rects, marks, obstacles)
        if geometry is None:
            item.hide()
            return
        item.set_geometry(*geometry)
        item.show()

    def _obstacle_rects(self) -> list[tuple[float, float, float, float]]:
        """Device bodies links route around (small beds only: the detour search is per link)."""
        if self._obstacles is None:
            self._obstacles = ([(d.pos().x(), d.pos().y(), d.w, d.h) for d in self.devices.values()]
                               if len(self.devices) <= diagram.ROUTED_MAX else [])
        return self._obstacles

    def device_moved(self, ident: str) -> None:
        """A device item moved (drag, undo, refresh): its links follow when the event is done."""
        self._obstacles = None
        self._moved.add(ident)
        self._dirty_links |= self._links_at.get(ident, set())

    def _flush_links(self) -> None:
        dirty, self._dirty_links = self._dirty_links, set()
        moved, self._moved = self._moved, set()
        if moved and len(self.devices) <= diagram.ROUTED_MAX:
            # links that pass under a device's new place, or detoured around its old one, reroute
            for ident in moved:
                item = self.devices.get(ident)
                if item is not None:
                    for other in self.scene().items(item.body):
                        if isinstance(other, LinkItem) and not other.dashed:
                            dirty.add(id(other.model_obj))
            dirty |= {k for k, it in self.links.items() if it.polyline.count() > 4}
        for key in dirty:
            item = self._link_item(key)
            if item is not None:
                self._route(item)

    # ------------------------------------------------------------------ changes
    def _on_changed(self, touched: set[str]) -> None:
        bed = self.bed
        old_objects, old_vms = self.objects, self.vms_of
        self.objects, self.vms_of = self._model_maps()
        known = set(old_objects) | set(self.objects) | {v.id for v in bed.vms} | {
            c.id for coll in (bed.clusters, bed.virtual_switches, bed.workloads, bed.scenarios) for c in coll}
        # a port, volume or disk group ("MD3000i:Logs") stands for its device
        mapped = {i if i in known else i.partition(":")[0] for i in touched}
        full = not touched or not mapped <= known
        refresh: set[str] = set(self._device_objects()) if full else mapped

        # devices that appeared or went away
        for ident in list(self.devices):
            obj = self.objects.get(ident)
            if obj is None or not isinstance(obj, (Server, Switch, StorageArray, Chassis)):
                self.scene().removeItem(self.devices.pop(ident))
                self._obstacles = None
        for ident, obj in self.objects.items():
            if isinstance(obj, (Server, Switch, StorageArray, Chassis)) and ident not in self.devices:
                self._add_device(ident, obj)
                self._obstacles = None
                refresh.add(ident)
        # hosts whose VMs changed redraw (and may change size)
        for host in set(old_vms) | set(self.vms_of):
            if [v.id for v in old_vms.get(host, ())] != [v.id for v in self.vms_of.get(host, ())]:
                refresh.add(host)
        for chassis, blades in self.blades_of.items():
            if refresh & {s.id for s in blades}:
                refresh.add(chassis)

        # cables and paths: identity diff (links have no id)
        current = {id(lk): lk for lk in bed.links}
        for key in [k for k in self.links if k not in current]:
            refresh.update(self.links[key].ends)
            self._remove_link(key)
        for key, link in current.items():
            if key not in self.links:
                item = self._add_link(link)
                refresh.update(item.ends)
        paths = {id(p): p for p in diagram.uncabled_paths(bed, self._device_objects())}
        for key in [k for k in self.paths if k not in paths]:
            self._remove_link(key, dashed=True)
        for key, path in paths.items():
            if key not in self.paths:
                self._add_link(path, dashed=True)
        self.cabled = self._cabled_ports()

        for ident in refresh:
            item, obj = self.devices.get(ident), self.objects.get(ident)
            if item is not None and obj is not None:
                self._refresh_device(item, obj)
                self._dirty_links |= self._links_at.get(ident, set())
        if full:
            self._dirty_links |= set(self.links) | set(self.paths)
        self._place_chips()
        for ident in refresh & set(self.chips):
            self.chips[ident].update()
        self._flush_links()
        self._update_scene_rect()

    def forget_pictures(self) -> None:
        """Drop every device's cached picture (the next paint draws them afresh)."""
        for item in self.devices.values():
            item.setCacheMode(item.CacheMode.NoCache)
            item.setCacheMode(item.CacheMode.DeviceCoordinateCache)

    def _update_scene_rect(self) -> None:
        content = self.scene().itemsBoundingRect()
        if content.isNull():
            content = QRectF(0, 0, 800, 600)
        self.scene().setSceneRect(content.adjusted(-600, -600, 600, 600))

    # ------------------------------------------------------------------ findings
    def _badges_for(self, findings: Iterable[Any]) -> dict[str, diagram.Badge]:
        vm_hosts = {vm.id: host for host, vms in self.vms_of.items() for vm in vms}
        return diagram.badges(findings, self.objects, vm_hosts)

    def _on_findings(self, findings: list) -> None:
        new = self._badges_for(findings)
        old, self.badges = self.badges, new
        for ident in set(old) | set(new):
            if old.get(ident) != new.get(ident):
                item = self.devices.get(ident) or self.chips.get(ident)
                if item is not None:
                    item.update()

    # ================================================================== selection
    def selected_ids(self) -> list[str]:
        out = [i.ident for i in self.scene().selectedItems() if isinstance(i, (DeviceItem, ChipItem))]
        out += [i for i in self.highlight if i in {v.id for vms in self.vms_of.values() for v in vms}]
        return out

    def _scene_selection_changed(self) -> None:
        # the scene reports every single change (5,000 of them for Select All): publish once
        if not self._syncing:
            self._publish_timer.start()

    def _publish_selection(self) -> None:
        self._publish_timer.stop()
        ids = frozenset(i.ident for i in self.scene().selectedItems() if isinstance(i, (DeviceItem, ChipItem)))
        self._published = ids
        self._set_highlight(frozenset())
        self.selection.set(ids)

    def _follow_selection(self, ids: Iterable[str]) -> None:
        ids = frozenset(ids)
        if ids == self._published and not self._syncing:
            return
        self._published = None
        wanted = {i for i in ids if i in self.devices or i in self.chips}
        self._syncing = True
        try:
            for item in self.scene().selectedItems():
                if getattr(item, "ident", None) not in wanted:
                    item.setSelected(False)
            for ident in wanted:
                item = self.devices.get(ident) or self.chips.get(ident)
                if not item.isSelected():
                    item.setSelected(True)
        finally:
            self._syncing = False
        self._set_highlight(frozenset(i for i in ids if i not in wanted))

    def _set_highlight(self, ids: frozenset[str]) -> None:
        """Ports and VMs drawn as selected inside their device."""
        if ids == self.highlight:
            return
        changed = ids ^ self.highlight
        self.highlight = ids
        vm_hosts = {vm.id: host for host, vms in self.vms_of.items() for vm in vms}
        for ident in changed:
            dev = diagram.device_of_subject(ident, self.devices, vm_hosts)
            if dev is not None:
                self.devices[dev].update()

    def _select_vm(self, vm_id: str) -> None:
        self._syncing = True
        try:
            self.scene().clearSelection()
        finally:
            self._syncing = False
        self._published = frozenset({vm_id})
        self._set_highlight(frozenset({vm_id}))
        self.selection.set({vm_id})

    def centre_on(self, ids: Iterable[str]) -> None:
        """Bring these components into sight (a finding was clicked, say) and select them."""
        vm_hosts = {vm.id: host for host, vms in self.vms_of.items() for vm in vms}
        rect = QRectF()
        for ident in ids:
            dev = diagram.device_of_subject(ident, {**self.devices, **self.chips}, vm_hosts)
            item = self.devices.get(dev) or self.chips.get(dev) if dev else None
            if item is not None:
                rect = rect.united(item.sceneBoundingRect())
        if rect.isNull():
            return
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        if rect.width() > visible.width() or rect.height() > visible.height():
            self.fitInView(rect.adjusted(-60, -60, 60, 60), Qt.AspectRatioMode.KeepAspectRatio)
        self.centerOn(rect.center())
        if set(ids) != set(self.selection.ids):
            self._follow_selection(ids)

    # ================================================================== actions
    def say(self, text: str) -> None:
        self.last_message = text
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, 8000)
        self.message.emit(text)

    def _apply(self, build, *args, **kw) -> Any:
        """Build an edit and apply it; a refusal becomes a status-bar message.  Returns the edit."""
        try:
            edit = build(self.bed, *args, **kw)
        except Refused as exc:
            self.say(str(exc))
            return None
        self.document.apply(edit)
        return edit

    def current_boxes(self) -> dict[str, Box]:
        """Where everything is drawn right now (for exports that match the screen)."""
        out = {i: Box(d.pos().x(), d.pos().y(), d.w, d.h) for i, d in self.devices.items()}
        out.update({i: Box(c.pos().x(), c.pos().y(), c.w, c.h) for i, c in self.chips.items()})
        return out

    def copy(self) -> bool:
        ids = self.selected_ids()
        positions = {i: (b.x, b.y) for i, b in self.current_boxes().items()}
        try:
            text = clipboard.copy(self.bed, ids, positions)
        except Refused as exc:
            self.say(str(exc))
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

    def delete_selected(self) -> None:
        ids = self.selected_ids()
        links = [i.model_obj for i in self.links.values() if i.selected]
        if not ids and not links:
            self.say("Nothing to delete: select devices or links first")
            return
        edit = self._apply(operations.delete, ids, links)
        if edit is not None:
            self.selection.clear()
            self.say(edit.text)

    def select_all(self) -> None:
        area = QPainterPath()
        area.addRect(self.scene().sceneRect())
        self._syncing = True
        try:
            self.scene().setSelectionArea(area, Qt.ItemSelectionOperation.ReplaceSelection,
                                          Qt.ItemSelectionMode.IntersectsItemBoundingRect)
        finally:
            self._syncing = False
        self._publish_selection()

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
        content = self.scene().itemsBoundingRect()
        if content.isNull():
            self.setTransform(QTransform())
            return
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

    # ------------------------------------------------------------------ placing
    def arm(self, kind: str) -> None:
        """The palette picked a kind: the next click on the canvas places one."""
        try:
            operations.parse_kind(kind)
        except Refused as exc:
            self.say(str(exc))
            return
        self.armed = kind
        self.viewport().setCursor(Qt.CursorShape.CrossCursor)
        label = operations.KINDS[kind].label if kind in operations.KINDS else kind
        where = {"vm": " (on a host to place it there)", "enclosure": " on a storage array",
                 "disk": " on a storage array"}.get(kind, "")
        self.say(f"Click on the diagram{where} to add a {label.lower()} — Esc cancels")

    def disarm(self) -> None:
        self.armed = None
        self.viewport().unsetCursor()

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

    # ------------------------------------------------------------------ export
    def _export_rect_size(self, scale: float) -> tuple[QSize, float]:
        boxes = self.current_boxes()
        content = diagram.content_rect(boxes)
        lw, lh = diagram.legend_size()
        w = content.width() + 90 + lw
        h = max(content.height(), lh) + 94
        if w * h * scale * scale > EXPORT_MAX_PIXELS:
            scale = (EXPORT_MAX_PIXELS / (w * h)) ** 0.5
        return QSize(max(1, int(w * scale)), max(1, int(h * scale))), scale

    def export_png(self, path: str | Path, scale: float = 2.0) -> QSize:
        """Write the diagram as a PNG at `scale` pixels per scene unit; returns the image size."""
        size, scale = self._export_rect_size(scale)
        image = QImage(size, QImage.Format.Format_ARGB32)
        image.setDotsPerMeterX(int(3780 * scale))
        image.setDotsPerMeterY(int(3780 * scale))
        image.fill(QColor("#ffffff"))
        painter = QPainter(image)
        try:
            diagram.render_bed(self.bed, painter, QRectF(0, 0, size.width(), size.height()),
                               self._findings(), positions=self.current_boxes())
        finally:
            painter.end()
        if not image.save(str(path), "PNG"):
            raise OSError(f"cannot write {path}")
        return size

    def export_svg(self, path: str | Path) -> None:
        from PySide6.QtSvg import QSvgGenerator
        size, _ = self._export_rect_size(1.0)
        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(size)
        gen.setViewBox(QRectF(0, 0, size.width(), size.height()))
        gen.setTitle(self.bed.bed.name)
        gen.setDescription("Test-bed diagram exported by Testbed Studio")
        painter = QPainter()
        if not painter.begin(gen):
            raise OSError(f"cannot write {path}")
        try:
            diagram.render_bed(self.bed, painter, QRectF(0, 0, size.width(), size.height()),
                               self._findings(), positions=self.current_boxes())
        finally:
            painter.end()
        if not Path(path).is_file():
            raise OSError(f"cannot write {path}")

    def _findings(self) -> list:
        return list(getattr(getattr(self.document, "validation", None), "findings", []) or [])

    def _default_name(self, suffix: str) -> str:
        doc_path = getattr(self.document, "path", None)
        stem = Path(doc_path).stem if doc_path else (self.bed.bed.name or "test bed")
        folder = Path(doc_path).parent if doc_path else Path.home()
        return str(folder / f"{stem} diagram.{suffix}")

    def export_png_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export diagram as PNG", self._default_name("png"),
                                              "PNG image (*.png)")
        if not path:
            return
        if not path.lower().endswith(".png"):
            path += ".png"
        try:
            size = self.export_png(path)
        except OSError as exc:
            self.say(f"Export failed: {exc}")
            return
        self.say(f"Exported {path} ({size.width()} × {size.height()} px)")

    def export_svg_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export diagram as SVG", self._default_name("svg"),
                                              "SVG drawing (*.svg)")
        if not path:
            return
        if not path.lower().endswith(".svg"):
            path += ".svg"
        try:
            self.export_svg(path)
        except OSError as exc:
            self.say(f"Export failed: {exc}")
            return
        self.say(f"Exported {path}")

    def print_dialog(self) -> None:
        from PySide6.QtGui import QPageLayout
        from PySide6.QtPrintSupport import QPrintDialog, QPrinter
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        printer.setPageOrientation(QPageLayout.Orientation.Landscape)
        printer.setDocName(self.bed.bed.name or "test bed")
        dialog = QPrintDialog(printer, self)
        if dialog.exec() != QPrintDialog.DialogCode.Accepted:
            return
        self.print_to(printer)
        self.say("Sent the diagram to the printer")

    def print_to(self, printer) -> None:
        from PySide6.QtGui import QPageLayout  # noqa: F401 - printer API lives in QtGui/QtPrintSupport
        painter = QPainter()
        if not painter.begin(printer):
            self.say("The printer could not start")
            return
        try:
            page = printer.pageLayout().paintRectPixels(printer.resolution())
            diagram.render_bed(self.bed, painter, QRectF(0, 0, page.width(), page.height()),
                               self._findings(), positions=self.current_boxes())
        finally:
            painter.end()

    # ================================================================== events
    def _device_at(self, scene_pos: QPointF) -> DeviceItem | None:
        for item in self.scene().items(scene_pos):
            if isinstance(item, DeviceItem):
                return item
        return None

    def _link_at(self, scene_pos: QPointF) -> LinkItem | None:
        tolerance = 5.0 / max(self.zoom(), 0.05)
        probe = QRectF(scene_pos.x() - tolerance, scene_pos.y() - tolerance, 2 * tolerance, 2 * tolerance)
        best, best_d = None, tolerance
        for item in self.scene().items(probe):
            if isinstance(item, LinkItem) and not item.dashed and item.isVisible():
                d = item.distance_to(scene_pos)
                if d <= best_d:
                    best, best_d = item, d
        return best

    def _clear_link_selection(self) -> None:
        for item in self.links.values():
            item.set_selected(False)

    def mousePressEvent(self, event) -> None:  # noqa: D102 - Qt override
        pos = event.position().toPoint()
        scene_pos = self.mapToScene(pos)
        if event.button() == Qt.MouseButton.MiddleButton or (
                event.button() == Qt.MouseButton.LeftButton and self._space):
            self._pan_from = pos
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and self.armed:
            kind = self.armed
            if not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.disarm()   # Shift keeps the kind for several placements
            self.place(kind, scene_pos)
            event.accept()
            return
        if event.button() == Qt.MouseButton.RightButton and self.armed:
            self.disarm()
            self.say("")
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

    def mouseMoveEvent(self, event) -> None:  # noqa: D102 - Qt override
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
            self._link_line.setLine(QLineF(line.p1(), self.mapToScene(pos)))
            event.accept()
            return
        if self.dragging and event.buttons() & Qt.MouseButton.LeftButton:
            self._drag_to(self.mapToScene(pos))
            event.accept()
            return
        super().mouseMoveEvent(event)

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
                    item.setPos(target)
                    self.device_moved(ident)
        if self._dirty_links:
            self._flush_links()

    def mouseReleaseEvent(self, event) -> None:  # noqa: D102 - Qt override
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

    def _commit_move(self) -> None:
        moved = {}
        for ident, start in self._press_positions.items():
            item = self.devices.get(ident)
            if item is not None and item.pos() != start:
                moved[ident] = (item.pos().x(), item.pos().y())
        self._press_positions = {}
        if moved:
            self.document.apply(operations.move(self.bed, moved))

    # ------------------------------------------------------------------ link drawing
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
            self.say("Link not made: release the mouse over a port or a switch")
            return
        port = target.port_at(target.mapFromScene(scene_pos))
        ref = f"{target.ident}:{port}" if port else target.ident
        edit = self._apply(operations.connect, source, ref)
        if edit is not None:
            self.say(edit.text)

    # ------------------------------------------------------------------ keys, wheel, drops
    def keyPressEvent(self, event) -> None:  # noqa: D102 - Qt override
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            event.accept()
            return
        if event.key() == Qt.Key.Key_Escape:
            if self.armed:
                self.disarm()
                self.say("")
            self._cancel_link()
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

    def keyReleaseEvent(self, event) -> None:  # noqa: D102 - Qt override
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            if self._pan_from is None:
                self.viewport().unsetCursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def wheelEvent(self, event) -> None:  # noqa: D102 - Qt override
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._zoom(1.0015 ** event.angleDelta().y())
            event.accept()
            return
        super().wheelEvent(event)

    def dragEnterEvent(self, event) -> None:  # noqa: D102 - Qt override
        if event.mimeData().hasFormat(KIND_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: D102 - Qt override
        if event.mimeData().hasFormat(KIND_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:  # noqa: D102 - Qt override
        if not event.mimeData().hasFormat(KIND_MIME):
            event.ignore()
            return
        kind = bytes(event.mimeData().data(KIND_MIME)).decode("utf-8")
        try:
            operations.parse_kind(kind)
        except Refused as exc:
            self.say(str(exc))
            event.ignore()
            return
        self.disarm()
        self.place(kind, self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()

    def viewportEvent(self, event) -> bool:  # noqa: D102 - Qt override
        if event.type() == QEvent.Type.ToolTip:
            text = self._tooltip(self.mapToScene(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def _tooltip(self, scene_pos: QPointF) -> str:
        item = self._device_at(scene_pos)
        if item is None:
            chip = next((i for i in self.scene().items(scene_pos) if isinstance(i, ChipItem)), None)
            if chip is not None:
                obj = self.objects.get(chip.ident)
                lines = [f"<b>{chip.ident}</b>"]
                if isinstance(obj, Network):
                    lines.append(f"{diagram.ROLE_LABELS.get(obj.role, obj.role)} network {obj.cidr}")
                else:
                    lines.append("VM with no host: drop it on a host in the VM placement view")
                return self._with_findings(chip.ident, lines)
            link = self._link_at(scene_pos)
            if link is not None:
                lk = link.model_obj
                return f"{lk.a} — {lk.b}<br>{diagram.ROLE_LABELS.get(link.role, link.role)} ({lk.kind})"
            return ""
        obj = self.objects.get(item.ident)
        local = item.mapFromScene(scene_pos)
        port = item.port_at(local)
        if port is not None:
            m = item.marks[port]
            p = m.port
            bits = [f"<b>{item.ident}:{port}</b>", f"{p.kind}, {', '.join(p.roles) or 'no role'}"]
            if p.address:
                bits.append(p.address)
            if p.mtu:
                bits.append(f"MTU {p.mtu}")
            other = [lk.b if lk.a == f"{item.ident}:{port}" else lk.a for lk in self.bed.links
                     if f"{item.ident}:{port}" in (lk.a, lk.b)]
            bits.append(f"cabled to {other[0]}" if other else "not cabled: drag from here to cable it")
            return "<br>".join(bits)
        vm = item.vm_at(local)
        if vm is not None:
            v = next((x for x in self.vms_of.get(item.ident, ()) if x.id == vm), None)
            if v is not None:
                return f"<b>{v.id}</b> on {item.ident}<br>{v.vcpu} vCPU, {v.memory_gb:g} GB {v.guest_os}"
        lines = [f"<b>{item.ident}</b>", getattr(obj, "model", "")]
        vms = self.vms_of.get(item.ident, ())
        if vms:
            lines.append(f"{len(vms)} VMs: " + ", ".join(v.id for v in vms[:12]) + (" …" if len(vms) > 12 else ""))
        return self._with_findings(item.ident, [x for x in lines if x])

    def _with_findings(self, ident: str, lines: list[str]) -> str:
        badge = self.badges.get(ident)
        if badge is not None:
            lines += [""] + [m for m in badge.messages[:8]]
            if len(badge.messages) > 8:
                lines.append(f"… and {len(badge.messages) - 8} more (see the Validation panel)")
        return "<br>".join(lines)

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: D102 - Qt override
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

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: D102 - Qt override
        if not self.devices:
            painter.save()
            painter.resetTransform()
            painter.setPen(diagram.SUBTLE)
            painter.setFont(diagram.font(14))
            painter.drawText(QRectF(self.viewport().rect()), int(Qt.AlignmentFlag.AlignCenter),
                             "Pick a component in the palette, then click here to place it.\n"
                             "Drag from a port marker to another port to cable them.")
            painter.restore()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: D102 - Qt override
        super().scrollContentsBy(dx, dy)
        if not self.devices:   # the hint is drawn in view coordinates: repaint it whole
            self.viewport().update()

    def sizeHint(self) -> QSize:  # noqa: D102 - Qt override
        return QSize(900, 700)
