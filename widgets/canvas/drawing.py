"""The scene drawn from the model: items for devices, chips and links, rebuilt on `document.reset`
and redrawn where `document.changed` says, plus the validation badges they carry.

Devices without a position in the model are placed by the automatic layout (computed on reset,
not written to the model: opening a file does not make it "modified"; the Automatic Layout
action writes it, as one step).
"""
from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from operator import attrgetter
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QTimer

from app import diagram
from topology import layout
from topology.layout import Box
from topology.model import ArrayGroup, Chassis, Server, StorageArray, Switch
from topology.unknown import NOT_STATED
from widgets.canvas.items import ChipItem, DeviceItem

# the fields `_shape` reads (an edit that sets other plain fields keeps the drawing's shape)
SHAPE_FIELDS = frozenset(("id", "host", "chassis", "a", "b", "initiator", "target", "name"))
STEP = 15       # devices or cables between two points where a sliced build may pause
_HOST, _CHASSIS, _NAME = attrgetter("host"), attrgetter("chassis"), attrgetter("name")
_ENDS, _PATH_ENDS = attrgetter("a", "b"), attrgetter("initiator", "target")


class ModelDrawing:
    """Canvas part: keeps the scene's items in step with the document's bed."""

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
        for group in layout.drawn_groups(bed):     # a card of the group's volumes, in the chips' strip
            objects[group.name] = group
        blades: dict[str, list] = {}
        for dev in (*bed.servers, *bed.switches):     # blades and I/O modules, drawn in the chassis' bays
            if dev.chassis:
                blades.setdefault(dev.chassis, []).append(dev)
        self.blades_of = blades
        self._follow_configuration_view()
        return objects, vms_of

    def _follow_configuration_view(self) -> None:
        """The chosen configuration's copies of the devices it changes (their OS, hypervisor and
        settings are drawn), and the parts it takes out of use (drawn faded)."""
        choice = getattr(self, "configuration", None)
        view = choice.view() if choice is not None else None
        self.configured_objects = {} if view is None else {
            c.id: c for coll in (view.servers, view.switches, view.arrays, view.chassis) for c in coll}
        if view is not None:        # a configuration may give a group other volumes or access records
            self.configured_objects.update({g.name: g for g in view.array_groups})
        self.excluded_ids = choice.excluded() if choice is not None else frozenset()

    def shown(self, ident: str, obj: Any) -> Any:
        """What is drawn for a device: the chosen configuration's copy, else the bed's object."""
        return self.configured_objects.get(ident, obj)

    def _configuration_chosen(self, _name: Any = None) -> None:
        self.finish_build()
        self._follow_configuration_view()
        for ident, item in self.devices.items():
            obj = self.objects.get(ident)
            if obj is not None:
                self._refresh_device(item, obj)
        self._place_chips(again=any(isinstance(o, ArrayGroup) for o in self.objects.values()))
        for item in self.chips.values():
            item.update()

    def _rebuild(self, at_once: bool = False) -> None:
        """A different bed: new items for everything (a big bed's a slice at a time unless `at_once`,
        widgets/canvas/building.py)."""
        self._stop_build(release=False)     # held workers wait for this bed's build, if it has one
        self._shape_seen = None             # known again once the build has ended
        self._cancel_link()
        self._path_overlay = None          # the scene's clear takes it; the path view shows it again
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
        self._strips_selected, self._strip_hovered = set(), None
        self.objects, self.vms_of = self._model_maps()
        self.badges = {}
        steps = self._build_scene()
        if not at_once and self.builds_in_slices(self.bed):
            self._start_build(steps)
        else:
            for _ in steps:
                pass
            self._release_workers()

    def _build_scene(self) -> Iterator[None]:
        """The items of the bed, in steps (each yield is a point where the build may pause)."""
        self._fallback = yield from layout.layout_steps(self.bed)
        yield
        self._set_free_spot()
        if self.building:       # the drawing's frame is known: zoomed out, the devices are made far-drawn
            # the slice ends here: fitting the view and the first frame's paint, which follows it
            # in the same turn of the event loop, are that turn's whole work
            self.end_slice()
            yield
            self._fit_layout()
            self._preview_ready()       # painted from the model until the items exist
            yield
        self.cabled = yield from self._cabled_ports_steps()
        yield
        self.badges = self._badges_for(getattr(getattr(self.document, "validation", None), "findings", []))
        for n, (ident, obj) in enumerate(self.objects.items()):
            if isinstance(obj, (Server, Switch, StorageArray, Chassis)):
                self._add_device(ident, obj)
            if n % STEP == STEP - 1:
                yield
        self._place_chips(again=True)
        yield
        self._dirty_links, self._moved = set(), set()   # new links are routed as they are made
        for n, link in enumerate(self.bed.links):
            if link.b is not NOT_STATED:    # a cable whose far end is not stated joins nothing drawn
                self._add_link(link)
            if n % STEP == STEP - 1:
                yield
        for path in diagram.uncabled_paths(self.bed, self._device_objects()):
            self._add_link(path, dashed=True)
        yield
        self._update_scene_rect()       # every item's bounds: a turn of its own on a big bed
        yield
        self._follow_hint()
        self._remember_shape(self._known_ids())
        self._follow_selection(self.selection.ids)
        QTimer.singleShot(0, self, self.fit)   # bound to the canvas: nothing runs once it is gone

    def _fit_layout(self) -> None:
        boxes = [self._position_box(i, o) for i, o in self.objects.items()
                 if isinstance(o, (Server, Switch, StorageArray, Chassis))] + [
            b for i, b in self._fallback.items() if i in self.objects and not isinstance(
                self.objects[i], (Server, Switch, StorageArray, Chassis))]
        if boxes:
            left, top = min(b.x for b in boxes), min(b.y for b in boxes)
            right, bottom = max(b.x + b.w for b in boxes), max(b.y + b.h for b in boxes)
            content = QRectF(left, top, right - left, bottom - top)
            self.scene().setSceneRect(content.adjusted(-600, -600, 600, 600))
            self.fit_rect(content)
            self.follow_far_zoom()

    def _position_box(self, ident: str, obj: Any) -> Box:
        box = self._fallback.get(ident)
        if obj.x is not None and obj.y is not None and box is not None:
            return Box(obj.x, obj.y, box.w, box.h)
        return box or Box(obj.x or 0.0, obj.y or 0.0, 0.0, 0.0)

    def _device_objects(self) -> dict[str, Any]:
        return {i: o for i, o in self.objects.items() if isinstance(o, (Server, Switch, StorageArray, Chassis))}

    def _add_device(self, ident: str, obj: Any) -> DeviceItem:
        item = DeviceItem(self, ident)
        self.devices[ident] = item
        self.mark_far(item)
        self._refresh_device(item, obj)
        self.scene().addItem(item)
        return item

    def _refresh_device(self, item: DeviceItem, obj: Any) -> None:
        contents = len(self.vms_of.get(item.ident, ())) if isinstance(obj, Server) else 0
        item.refresh(self.shown(item.ident, obj), contents)
        pos = self._position(item.ident, obj, item.w, item.h)
        if item.pos() != pos:
            was = item.sceneBoundingRect()
            item.setPos(pos)
            self.far_changed(was)       # after the move: see FarDrawing.far_changed
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
        groups = [self.shown(g.name, g) for g in layout.drawn_groups(self.bed)]
        boxes = layout.strip_boxes(self.bed, drawn, groups)
        for ident in wanted:
            item = self.chips.get(ident)
            if item is None:
                item = self.chips[ident] = ChipItem(self, ident)
                self.scene().addItem(item)
            b = boxes.get(ident)
            if b is not None:
                item.set_box(b.x, b.y, b.w, b.h)

    def _cabled_ports(self) -> dict[str, set[str]]:
        return layout.run_steps(self._cabled_ports_steps())

    def _cabled_ports_steps(self) -> Generator[None, None, dict[str, set[str]]]:
        # worked out again only when a cable's ends or the drawn ids changed: most edits (a move,
        # a property) change neither, and on 10,000 cables this took ~40 ms of every edit
        key = ([(link.a, link.b) for link in self.bed.links], set(self.objects))
        if key == getattr(self, "_cabled_for", None):
            return self.cabled
        out: dict[str, set[str]] = {}
        for n, (a, b) in enumerate(key[0]):
            if n % (STEP * 20) == STEP * 20 - 1:
                yield
            for ref in (a, b):
                dev, port = self._split(ref)
                if port:
                    out.setdefault(dev, set()).add(port)
        self._cabled_for = key
        return out

    def _split(self, ref: str) -> tuple[str, str | None]:
        if ref in self.objects:
            return ref, None
        dev, sep, port = ref.rpartition(":")
        return (dev, port) if sep else (ref, None)

    def _shape(self) -> tuple:
        """What the drawing's items are made of besides each component's own fields: which
        components there are (identity and id), which host each VM is on, which chassis each blade
        is in, where each cable and path ends.  Read at C speed (map, attrgetter): an edit that
        leaves it as it was redraws only what it touched, without walking the bed."""
        bed, ident = self.bed, attrgetter("id")
        out: list = []
        for coll in (bed.servers, bed.switches, bed.arrays, bed.chassis, bed.networks, bed.vms, bed.clusters,
                     bed.virtual_switches, bed.workloads, bed.scenarios):
            out += (tuple(map(id, coll)), tuple(map(ident, coll)))
        out += (tuple(map(_HOST, bed.vms)), tuple(map(_CHASSIS, bed.servers)), tuple(map(_CHASSIS, bed.switches)),
                tuple(map(id, bed.links)), tuple(map(_ENDS, bed.links)), tuple(map(id, bed.paths)),
                tuple(map(_PATH_ENDS, bed.paths)), tuple(map(id, bed.array_groups)),
                tuple(map(_NAME, bed.array_groups)))
        return tuple(out)

    def _remember_shape(self, known: set[str]) -> None:
        self._shape_seen, self._known = self._shape(), known
        self._group_ids = [i for i, o in self.objects.items() if isinstance(o, ArrayGroup)]

    def _known_ids(self) -> set[str]:
        bed = self.bed
        return set(self.objects) | {v.id for v in bed.vms} | {
            c.id for coll in (bed.clusters, bed.virtual_switches, bed.workloads, bed.scenarios) for c in coll}

    def _on_changed(self, touched: set[str]) -> None:
        self.finish_build()         # an edit while a big bed is still being built: its items first
        if touched and getattr(self, "_shape_seen", None) is not None:
            known = self._known
            mapped = {i if i in known else i.partition(":")[0] for i in touched}
            if mapped <= known and (self._keeps_shape() or self._shape() == self._shape_seen):
                self._redraw_touched(mapped)
                return
        self._redraw_changed(touched)

    def _keeps_shape(self) -> bool:
        """The edit set plain fields `_shape` does not read (a move, a property): the shape is as it
        was, known without `_shape`'s walk of the bed (30 ms of the GUI thread per edit on the
        5,000-device bed)."""
        fields = getattr(self.document, "changed_fields", None)
        return fields is not None and fields.isdisjoint(SHAPE_FIELDS)

    def _redraw_touched(self, refresh: set[str]) -> None:
        """An edit that changed fields of the components it touched and nothing else (a move, a
        property): their items redraw, as the whole comparison below would find, the rest stand."""
        self._follow_configuration_view()
        for ident in list(refresh):
            chassis = getattr(self.objects.get(ident), "chassis", None)
            if chassis and chassis in self.blades_of:
                refresh.add(chassis)
        for ident in refresh:
            item, obj = self.devices.get(ident), self.objects.get(ident)
            if item is not None and obj is not None:
                self._refresh_device(item, obj)
                self._dirty_links |= self._links_at.get(ident, set())
        groups = self._group_ids
        if groups and any(i in refresh for i in groups):
            self._place_chips(again=True)
        for ident in (refresh | set(groups)) & set(self.chips):
            self.chips[ident].update()
        self._flush_links()
        rect = self.scene().sceneRect()
        if not all(rect.contains(self.devices[i].sceneBoundingRect().adjusted(-600, -600, 600, 600))
                   for i in refresh if i in self.devices):
            self._update_scene_rect(keep_view=True)
        self._follow_hint()

    def _redraw_changed(self, touched: set[str]) -> None:
        """Components added, removed, re-hosted or re-cabled: the model compared with the items."""
        bed = self.bed
        old_objects, old_vms = self.objects, self.vms_of
        self.objects, self.vms_of = self._model_maps()
        known = set(old_objects) | self._known_ids()
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
        current = {id(lk): lk for lk in bed.links if lk.b is not NOT_STATED}
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
        # an array group's card grows with its volumes: the strip is laid out again when one changed
        groups = [i for i, o in self.objects.items() if isinstance(o, ArrayGroup)]
        self._place_chips(again=bool(groups) and (full or any(i in refresh for i in groups)))
        for ident in (refresh | set(groups)) & set(self.chips):
            self.chips[ident].update()
        self._flush_links()
        self._update_scene_rect(keep_view=True)
        self._follow_hint()
        self._remember_shape(self._known_ids())

    def _follow_hint(self) -> None:
        """The empty canvas's hint is drawn over the whole view: the first device placed (or the
        last deleted) repaints all of it, or pieces of the hint stay on screen."""
        empty = not self.devices
        if getattr(self, "_hint_drawn", None) != empty:
            self._hint_drawn = empty
            self.viewport().update()

    def forget_pictures(self) -> None:
        """Drop every device's cached picture (the next paint draws them afresh)."""
        for item in self.devices.values():
            item.setCacheMode(item.CacheMode.NoCache)
            item.setCacheMode(item.CacheMode.DeviceCoordinateCache)

    def _update_scene_rect(self, *, keep_view: bool = False) -> None:
        """Room around the drawing.  After an edit (keep_view) the room only grows and what the
        person sees stays put: placing a device must not slide the drawing under the mouse."""
        content = self.scene().itemsBoundingRect()
        if content.isNull():
            content = QRectF(0, 0, 800, 600)
        wanted = content.adjusted(-600, -600, 600, 600)
        if not keep_view:
            self.scene().setSceneRect(wanted)
            return
        old = self.scene().sceneRect()
        if old.contains(wanted):
            return
        corner = self.mapToScene(0, 0)
        self.scene().setSceneRect(old.united(wanted))
        moved = self.mapToScene(0, 0) - corner
        if moved.manhattanLength() > 0.5:
            zoom = self.transform().m11()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - round(moved.x() * zoom))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - round(moved.y() * zoom))

    def _badges_for(self, findings: Iterable[Any]) -> dict[str, diagram.Badge]:
        live = getattr(self.document, "validation", None)
        scenario = self.badge_scenario()
        if (live is not None and findings is live.findings and live.revision_listed == self.document.revision
                and getattr(live, "badges_scenario", None) == scenario):
            return live.badges      # the live validator sorted them on its worker, for this very bed and scenario
        vm_hosts = {vm.id: host for host, vms in self.vms_of.items() for vm in vms}
        return diagram.badges(findings, self.objects, vm_hosts, scenario=scenario)

    def badge_scenario(self) -> str | None:
        """Whose findings the badges count: the document's current scenario ("*" every scenario's,
        None the reference configuration's alone)."""
        choice = getattr(self.document, "scenario", None)
        value = choice.value if choice is not None else ""
        return value or None

    def _follow_scenario(self, _value: str = "") -> None:
        self._on_findings(getattr(getattr(self.document, "validation", None), "findings", []))

    def _on_findings(self, findings: list) -> None:
        new = self._badges_for(findings)
        old, self.badges = self.badges, new
        if new == old:
            return      # most edits change no badge: 5,000 devices' not looked up one by one
        for ident in set(old) | set(new):
            if old.get(ident) != new.get(ident):
                item = self.devices.get(ident) or self.chips.get(ident)
                if item is not None:
                    item.update()
