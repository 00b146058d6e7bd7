"""Right-click menus: the actions that apply to what is under the mouse, in every view.

The canvas (a device, a cable, the empty drawing), the component tree, the storage editor's
lists and the slot map each ask here for their menu.  Every action is one the window or
the view already has (an edit through `document.apply`, a selection, bringing a panel
forward): a menu is a shortcut to it, never a second implementation.  The menus are built
by functions that return the QMenu without showing it, so tests can trigger the actions.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from topology import clipboard, operations
from topology.ids import owner_of
from topology.operations import Refused
from widgets.lifetimes import exec_once

DUPLICATE_STEP = 40.0
INSIDE_A_DEVICE = ("vm", "enclosure", "disk")   # palette kinds that go into a host or an array


class ComponentActions:
    """What can be done to components wherever they are shown; `say` reports refusals."""

    def __init__(self, view: QWidget, say: Any = None):
        self.view = view
        self.window = view.window()
        self.document = view.document
        self.selection = view.selection
        self._say = say

    def say(self, text: str) -> None:
        canvas = getattr(self.window, "canvas", None)
        if self._say is not None:
            self._say(text)
        elif canvas is not None:
            canvas.say(text, refusal=True)

    def _dock(self, name: str) -> Any:
        return getattr(self.window, "docks", {}).get(name)

    def _raise(self, name: str) -> Any:
        dock = self._dock(name)
        if dock is not None:
            dock.show()
            dock.raise_()
        return getattr(self.window, name, None)

    def properties(self, ids: Iterable[str]) -> None:
        self.selection.set(list(ids))
        editor = self._raise("properties")
        if editor is not None:
            editor.setFocus(Qt.FocusReason.PopupFocusReason)

    def select_on_tree(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        self.selection.set(ids)
        tree = self._raise("tree")
        if tree is not None:
            tree.select_ids(set(ids))

    def select_on_canvas(self, ids: Iterable[str]) -> None:
        tabs, canvas = getattr(self.window, "tabs", None), getattr(self.window, "canvas", None)
        if tabs is not None and canvas is not None:
            tabs.setCurrentWidget(canvas)
        self.selection.focus(list(ids))

    def validate(self, ids: Iterable[str]) -> None:
        """The findings about these components: the validation panel filtered to them."""
        ids = list(ids)
        panel = self._raise("findings")
        if panel is not None:
            panel.show_about(ids[0] if len(ids) == 1 else "")

    def delete(self, ids: Iterable[str]) -> None:
        try:
            edit = operations.delete(self.document.bed, list(ids))
        except Refused as exc:
            self.say(str(exc))
            return
        self.document.apply(edit)
        self.selection.clear()

    def duplicate(self, ids: Iterable[str]) -> list[str]:
        """A copy of the components next to them (the system clipboard is left alone)."""
        ids = list(ids)
        bed = self.document.bed
        canvas = getattr(self.window, "canvas", None)
        positions = {i: (b.x, b.y) for i, b in canvas.current_boxes().items()} if canvas is not None else None
        try:
            text = clipboard.copy(bed, ids, positions)
            edit = clipboard.paste(bed, text, (DUPLICATE_STEP, DUPLICATE_STEP))
        except Refused as exc:
            self.say(str(exc))
            return []
        self.document.apply(edit)
        new = clipboard.pasted_ids(edit)
        self.selection.set(new)
        return new

    def connect_dialog(self, device: str) -> None:
        from widgets.connect_dialog import ConnectDialog
        exec_once(ConnectDialog(self.document, device, self.window))

    def show_paths(self, host: str, volume: str = "") -> None:
        """The path view of a host (or of the first host that uses a volume)."""
        open_paths = getattr(self.window, "open_paths", None)
        if open_paths is not None:
            open_paths(host, volume)

    def show_in_storage(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        self.selection.focus(ids)
        tabs, storage = getattr(self.window, "tabs", None), getattr(self.window, "storage", None)
        if tabs is not None and storage is not None:
            tabs.setCurrentWidget(storage)


def _component_entries(menu: QMenu, actions: ComponentActions, ids: list[str], *, on_canvas: bool,
                       show_storage: Any = None, storage_kind: bool = False) -> None:
    one = ids[0] if len(ids) == 1 else None
    name = one or f"{len(ids)} components"
    menu.addAction(f"Properties of {name}", lambda: actions.properties(ids))
    if one is not None and ":" not in one:
        menu.addAction("Connect…", lambda: actions.connect_dialog(one))
    menu.addAction("Duplicate", lambda: actions.duplicate(ids))
    menu.addAction(f"Delete {name}", lambda: actions.delete(ids))
    menu.addSeparator()
    if on_canvas:
        menu.addAction("Select in component tree", lambda: actions.select_on_tree(ids))
    else:
        menu.addAction("Select on canvas", lambda: actions.select_on_canvas(ids))
    menu.addAction("Validate this" if one else "Validate these", lambda: actions.validate(ids))
    bed = actions.document.bed
    if one is not None and hasattr(actions.window, "open_paths"):
        if any(one == m.id for m in (*bed.servers, *bed.vms)):
            menu.addAction("Storage paths…", lambda: actions.show_paths(one))
        elif any(one == f"{a.id}:{v.name}" for a in bed.arrays for v in a.volumes):
            menu.addAction("Storage paths to this volume…", lambda: actions.show_paths("", one))
    if storage_kind or any(a.id == owner_of(i) for i in ids for a in bed.arrays):
        menu.addAction("Show in storage view", lambda: (show_storage or actions.show_in_storage)(ids))
    menu.addAction("Copy id" if one else "Copy ids",
                   lambda: QGuiApplication.clipboard().setText("\n".join(ids)))


# ----------------------------------------------------------------------------- canvas
def canvas_menu(canvas: Any, view_pos: QPoint) -> QMenu:
    """The menu for a right-click at `view_pos` (viewport coordinates) on the canvas."""
    scene_pos = canvas.mapToScene(view_pos)
    actions = ComponentActions(canvas, say=lambda text: canvas.say(text, refusal=True))
    menu = QMenu(canvas)
    menu.setObjectName("canvasMenu")
    device = canvas._device_at(scene_pos)
    if device is not None:
        ids = canvas.selected_ids() or [device.ident]
        _component_entries(menu, actions, ids, on_canvas=True)
        kind = type(canvas.objects.get(device.ident)).__name__
        here = QPointF(scene_pos)
        for key, text, on in (("vm", "Add virtual machine on {}", "Server"), ("enclosure", "Add enclosure to {}",
                              "StorageArray"), ("disk", "Add disk to {}", "StorageArray")):
            if kind == on:         # what goes into a device is added from the device, where it lands
                menu.addAction(text.format(device.ident), lambda k=key: canvas.place(k, here))
        return menu
    links = [i for i in canvas.links.values() if i.selected]
    link = canvas._link_at(scene_pos)
    if link is not None and link.selected:
        cable = link.model_obj
        menu.addAction(f"Delete cable {cable.a} — {cable.b}", canvas.delete_selected)
        menu.addAction("Select both ends", lambda: canvas.selection.focus([cable.a, cable.b]))
        menu.addAction(f"Properties of {cable.a}", lambda: actions.properties([cable.a]))
        menu.addAction(f"Properties of {cable.b}", lambda: actions.properties([cable.b]))
        return menu
    del links
    add = menu.addMenu("Add here")
    add.setObjectName("addHereMenu")
    where = QPointF(scene_pos)
    for kind in operations.PALETTE:
        if kind.key in INSIDE_A_DEVICE:
            continue               # placed from its host's or array's menu, where it lands (not far from the click)
        label = kind.label + (" (in the row of networks above the drawing)" if kind.key == "network" else "")
        add.addAction(label, lambda k=kind.key: canvas.place(k, where))
    menu.addAction("Paste", canvas.paste).setEnabled(bool(QGuiApplication.clipboard().text().strip()))
    menu.addSeparator()
    menu.addAction("Select all", canvas.select_all)
    menu.addAction("Fit to window", canvas.fit)
    menu.addAction("Automatic layout", canvas.auto_layout)
    menu.addAction("Validate the bed", lambda: actions.validate([]))
    return menu


# ----------------------------------------------------------------------------- component tree
def tree_menu(tree: Any, ids: list[str], storage_kind: bool) -> QMenu:
    actions = ComponentActions(tree)
    menu = QMenu(tree)
    menu.setObjectName("treeMenu")
    _component_entries(menu, actions, ids, on_canvas=False, show_storage=tree._show_in_storage,
                       storage_kind=storage_kind)
    menu.addSeparator()
    menu.addAction("Expand all", tree.expandAll)
    menu.addAction("Collapse to sections", tree._collapse_to_sections)
    return menu


def exec_at(menu: QMenu, widget: QWidget, pos: QPoint) -> None:
    if not menu.isEmpty():
        exec_once(menu, widget.mapToGlobal(pos))
    else:
        menu.deleteLater()


# ----------------------------------------------------------------------------- storage editor
def install_storage_menus(editor: Any) -> None:
    """Right-click menus on the storage editor's lists and slot map (their buttons' actions)."""
    groups, volumes, mappings = editor.groups_tab, editor.volumes_tab, editor.mappings_tab
    _attach(groups.groups, lambda m: _group_entries(m, editor))
    _attach(volumes.volumes, lambda m: _volume_entries(m, editor))
    _attach(mappings.mappings, lambda m: m.addAction("Unmap", mappings.unmap))
    _attach(editor.slot_map, lambda m: _slot_entries(m, editor))


def _attach(widget: QWidget, fill: Any) -> None:
    widget.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def show(pos: QPoint) -> None:
        menu = storage_menu(widget, fill)
        target = widget.viewport() if hasattr(widget, "viewport") else widget
        exec_at(menu, target, pos)
    widget.customContextMenuRequested.connect(show)
    widget.setProperty("hasContextMenu", True)
    widget._context_fill = fill           # tests build the same menu without showing it


def storage_menu(widget: QWidget, fill: Any = None) -> QMenu:
    menu = QMenu(widget)
    (fill or widget._context_fill)(menu)
    return menu


def _group_entries(menu: QMenu, editor: Any) -> None:
    tab = editor.groups_tab
    picked = bool(tab.groups.selectedItems())
    levels = menu.addMenu("Set RAID level")
    for i in range(tab.level_combo.count()):
        def set_level(i: int = i) -> None:
            tab.level_combo.setCurrentIndex(i)
            tab.set_level()
        levels.addAction(tab.level_combo.itemText(i), set_level)
    levels.setEnabled(picked)
    menu.addAction("Create pool from selected groups", tab.create_pool).setEnabled(picked)
    menu.addAction("Delete group", tab.delete_group).setEnabled(picked)


def _volume_entries(menu: QMenu, editor: Any) -> None:
    tab = editor.volumes_tab
    items = tab.volumes.selectedItems()

    def map_it() -> None:
        editor.mappings_tab.choose_volume(items[0].text(0))
        editor.tabs.setCurrentIndex(2)
        editor.mappings_tab.map_to_combo.setFocus()
    menu.addAction("Map volume…", map_it).setEnabled(bool(items))
    menu.addAction("Delete volume", tab.delete_volume).setEnabled(bool(items))


def _slot_entries(menu: QMenu, editor: Any) -> None:
    tab = editor.groups_tab

    def new_group() -> None:
        editor.tabs.setCurrentIndex(0)
        tab.group_name.setFocus()
    menu.addAction("New disk group from these disks…", new_group)
    menu.addAction("Mark as hot spare", tab.mark_spare)
    menu.addAction("Release hot spare", tab.unmark_spare)
