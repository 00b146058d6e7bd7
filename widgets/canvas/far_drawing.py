"""Canvas part: devices seen from far away (a big bed fitted to the window) drawn in one pass.

Close up, each device item paints itself (and caches its picture).  Far away a device is its
shape, its colour, its badge and, where it is wide enough on screen, its name
(`diagram.paint_device` at a small level of detail), and 5,000 items each called from C++ into
Python cost far more than the drawing: every call takes the interpreter lock back from the
validation and methodology workers that start with the bed (about 1 ms each, 4-5 s for the
5,000-device bed's first frame).  So below FAR_ZOOM the items are marked as having no
contents (they stay for selection, hit tests and tool tips) and the view draws them all in
its foreground pass, in one Python call per frame, with the same painting code.

That pass is kept as a picture of the viewport: a repaint (a hover, a tool tip, the splash
closing over the window) blits it; another transform or viewport size draws it whole; a change
to what is drawn (far_changed: an edit, a move, the selection, the badges, the configuration)
draws again only the area the view repaints, which covers the changed devices as it does for
items.  Drawn afresh, the plain bodies and the badges go in one call per colour; only
the selected, the faded and the named devices are painted one by one.
"""
from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsItem

from app import diagram
from app.diagram.devices import FAR_NAME_MIN_SCREEN_W, far_badge_colour, far_badge_rect
from topology.model import Chassis, Server, StorageArray, Switch

FAR_ZOOM = 0.3          # app/diagram/devices.py draws a device as its shape and name below this
NO_CONTENTS = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
HALO = 6.0              # a selected device's halo reaches this far past its body (app/diagram/devices.py)
FEW_CHANGED = 64        # devices changed in place drawn again one area each; more: the picture whole
ALL: list[QRectF] = []  # ... too many to list: the picture is drawn whole
DRAWN = (Server, Switch, StorageArray, Chassis)


def _small_part(exposed: QRectF, scene: QRectF) -> bool:
    """`exposed` is a small part of the scene (a tenth of its area at most)."""
    return exposed.width() * exposed.height() * 10 <= scene.width() * scene.height()


class FarDrawing:
    """Mixed into Canvas (devices, objects, shown, badges, excluded_ids, vms_of, blades_of)."""

    far_drawn = False       # the device items are drawn here, not by themselves
    far_pictures_drawn = 0  # how often the far devices were drawn whole (the rest: blits, a piece drawn again)
    _far_changes = 0
    _far_dirty: list[QRectF] | None = None     # scene areas of devices changed in place since the last frame
    _far_picture: QPixmap | None = None
    _far_frame: tuple | None = None         # the transform and size it was drawn for
    _far_contents: tuple | None = None      # ... and what it shows

    def far_changed(self, area: QRectF | None = None) -> None:
        """Something the far drawing shows changed: in `area` of the scene (a device's badge, look,
        size or place, before and after: drawn again there, and repainted, which the view does not
        do for an item without contents), or anywhere (the selection: drawn again whole)."""
        if area is None:
            self._far_changes += 1
        elif self.far_drawn and not self.building and self._far_dirty is not ALL:
            if self._far_dirty is None:
                self._far_dirty = []
            if len(self._far_dirty) >= FEW_CHANGED:     # many devices (a bed's findings): one whole repaint
                self._far_dirty = ALL
                self._far_changes += 1
                self.viewport().update()
                return
            self._far_dirty.append(area)
            # through the scene, after the item's own change (a move, a new size, an update): the
            # view then joins the area to its cables' and items' in one repaint rectangle
            # (BoundingRectViewportUpdate) in one repaint.  A viewport update of its own made the
            # repaint a region of several rectangles, which clips every span the raster engine
            # paints there one by one (+40 ms per edit on the 5,000-device bed); one before the
            # item's change made a repaint of its own
            reach = 2 / max(self.transform().m11(), 1e-6)
            self.scene().update(area.adjusted(-reach, -reach, reach, reach))

    def draw_far_layer(self, painter: QPainter, exposed: QRectF) -> None:
        """The foreground's devices far away (and a big bed's preview while it is built), from the
        viewport's picture when nothing it shows has changed."""
        if not (self.far_drawn or (self.building and self.previewing)):
            return
        viewport = self.viewport()
        if painter.device() is not viewport or painter.worldTransform() != self.viewportTransform():
            self.draw_far_devices(painter, exposed)     # an export or a print: drawn as asked
            self.draw_preview(painter, exposed)
            return
        picture = self._far_picture_now(exposed)
        painter.save()
        painter.resetTransform()
        painter.drawPixmap(0, 0, picture)
        painter.restore()

    def _far_picture_now(self, exposed: QRectF) -> QPixmap:
        """The picture, drawn afresh where it is out of date: whole for another transform or size,
        else only where the view repaints (a changed device asks for its own area, as items do)."""
        viewport = self.viewport()
        ratio = viewport.devicePixelRatioF()
        t = self.viewportTransform()
        frame = (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(), viewport.width(), viewport.height(), ratio,
                 self.far_drawn, self.building, self.previewing, id(self.objects))
        # an edit that adds, removes or re-cables devices gives the canvas new `objects` (the frame);
        # one that moves or changes devices in place reports their areas (far_changed)
        # (every edit makes the configuration's maps anew: an empty one is no change)
        configured = id(self.configured_objects) if self.configured_objects else None
        contents = (self._far_changes, self.excluded_ids, configured)
        picture, dirty, self._far_dirty = self._far_picture, self._far_dirty, None
        dirty = [] if dirty is None or dirty is ALL else dirty
        if picture is not None and frame == self._far_frame and contents == self._far_contents and not dirty:
            return picture
        if picture is None or frame != self._far_frame:
            picture = QPixmap(max(1, round(viewport.width() * ratio)), max(1, round(viewport.height() * ratio)))
            picture.setDevicePixelRatio(ratio)
            picture.fill(Qt.GlobalColor.transparent)
            on_screen = QRectF(viewport.rect())
            self.far_pictures_drawn += 1
        elif contents != self._far_contents:
            on_screen = QRectF(viewport.rect())
        else:       # devices changed in place: where they are, and where the view repaints anyway
            for area in dirty:
                exposed = exposed.united(area)
            on_screen = QRectF(self.mapFromScene(exposed).boundingRect().adjusted(-2, -2, 2, 2))
        painter = QPainter(picture)
        try:
            painter.setRenderHints(self.renderHints())
            painter.setClipRect(on_screen)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            painter.fillRect(on_screen, Qt.GlobalColor.transparent)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            # every device that paints into the cleared area: its edge's antialiasing and a selected
            # one's halo reach past its body
            reach = HALO + 3 / max(t.m11(), 1e-6)
            area = self.mapToScene(on_screen.toAlignedRect()).boundingRect().adjusted(-reach, -reach, reach, reach)
            painter.setTransform(t)
            self.draw_far_devices(painter, area)
            self.draw_preview(painter, area)
        finally:
            painter.end()
        self._far_picture, self._far_frame, self._far_contents = picture, frame, contents
        return picture

    def follow_far_zoom(self) -> None:
        """Before the items are drawn: hand the devices to the one-pass drawing below FAR_ZOOM,
        back to their own painting above it."""
        far = self.transform().m11() < FAR_ZOOM
        if far != self.far_drawn:
            self.far_drawn = far
            self._far_picture = None    # the items paint themselves close up: no picture kept for nothing
            for item in self.devices.values():
                item.setFlag(NO_CONTENTS, far)

    def mark_far(self, item: QGraphicsItem) -> None:
        """A device item made while the view is far away starts drawn by the view."""
        if self.far_drawn:
            item.setFlag(NO_CONTENTS, True)

    def draw_far_devices(self, painter: QPainter, exposed: QRectF) -> None:
        """Every device in `exposed` (scene coordinates), as its item would paint it this far away:
        the plain bodies in one drawRects per colour, then the bodies with a badge and the badges;
        a device selected, out of use or wide enough on screen for its name one by one, as its item
        paints it."""
        if not self.far_drawn:
            return
        devices = self.devices
        if len(devices) > FEW_CHANGED and _small_part(exposed, self.sceneRect()):
            # a device changed in place (an edit, a move): only the items there, asked of the scene
            # (a scan in C++), in the order the whole drawing paints them; reading every item's
            # place from Python was 7-10 ms of each such repaint on the 5,000-device bed
            there = {getattr(item, "ident", None) for item in self.scene().items(exposed)}
            items = [(ident, item) for ident, item in devices.items() if ident in there]
        else:
            items = devices.items()
        self._draw_devices(painter, exposed, ((ident, item.x(), item.y(), item.w, item.h, item.marks, item.expanded)
                                              for ident, item in items))

    def draw_preview(self, painter: QPainter, exposed: QRectF) -> None:
        """While a big bed is built (widgets/canvas/building.py): the devices that have no item yet,
        from the model and the layout, as their items will paint them (names where wide enough)."""
        if not (self.building and self.previewing):
            return
        made, boxes = self.devices, []
        for ident, obj in self.objects.items():
            if ident not in made and isinstance(obj, DRAWN):
                box = self._position_box(ident, obj)
                boxes.append((ident, box.x, box.y, box.w, box.h, {}, False))
        self._draw_devices(painter, exposed, boxes)

    def _draw_devices(self, painter: QPainter, exposed: QRectF, devices: Iterable[tuple]) -> None:
        lod = painter.worldTransform().m11()
        left, top, right, bottom = exposed.left(), exposed.top(), exposed.right(), exposed.bottom()
        objects, shown, excluded, badges = self.objects, self.shown, self.excluded_ids, self.badges
        selected = {getattr(i, "ident", None) for i in self.scene().selectedItems()}
        named_from = FAR_NAME_MIN_SCREEN_W / lod if lod > 0 else float("inf")
        plain: dict[tuple, list[QRectF]] = {}
        badged: dict[tuple, list[QRectF]] = {}      # the bodies of devices with a badge
        styles: dict[tuple, tuple] = {}
        flagged: dict[str, list[QRectF]] = {}       # the badges, by colour, drawn over the bodies
        colours = {}
        one_by_one = []
        for ident, x, y, w, h, marks, expanded in devices:
            if x > right or y > bottom or x + w < left or y + h < top:
                continue
            dev = objects.get(ident)
            if dev is None:
                continue
            dev = shown(ident, dev)
            if ident in selected or ident in excluded or w >= named_from:
                one_by_one.append((ident, dev, x, y, w, h, marks, expanded))
                continue
            key = (type(dev), getattr(dev, "role", None), getattr(dev, "kind", None))
            if key not in styles:
                styles[key] = diagram.body_style(dev)
            badge = badges.get(ident)
            if badge is None:
                plain.setdefault(key, []).append(QRectF(x, y, w, h))
            else:       # over the plain bodies, as when a badged device was painted one by one
                badged.setdefault(key, []).append(QRectF(x, y, w, h))
                colour = far_badge_colour(badge)
                colours[colour.name()] = colour
                flagged.setdefault(colour.name(), []).append(far_badge_rect(x, y, w))
        for bodies in (plain, badged):
            for key, rects in bodies.items():
                fill, border = styles[key]
                painter.setBrush(fill)
                painter.setPen(QPen(border, 1.2))
                painter.drawRects(rects)
        painter.setPen(Qt.PenStyle.NoPen)
        for name, rects in flagged.items():
            painter.setBrush(colours[name])
            painter.drawRects(rects)
        for ident, dev, x, y, w, h, marks, expanded in one_by_one:
            painter.save()
            painter.translate(x, y)
            if ident in excluded:
                painter.setOpacity(0.35)
            contents = self.blades_of.get(ident, ()) if isinstance(dev, Chassis) else self.vms_of.get(ident, ())
            diagram.paint_device(painter, dev, w, h, vms=contents, selected=ident in selected,
                                 badge=badges.get(ident), lod=lod, marks=marks, expanded=expanded)
            painter.restore()
