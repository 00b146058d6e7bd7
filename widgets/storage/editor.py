"""The storage editor's frame: the array chooser and its summary, the drive-slot map, the tabs
(one widget each) and the message line.  It keeps the tabs in step with the model and the
shared selection; the tabs build the edits."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from topology import storage_ops as ops
from topology.index import shown_slots
from widgets.slot_map import SlotMap
from widgets.storage.controllers_tab import ControllersTab
from widgets.storage.disk_groups_tab import DiskGroupsTab
from widgets.storage.mappings_tab import MappingsTab
from widgets.storage.page_parts import ERROR_STYLE, OK_STYLE, named
from widgets.storage.volumes_tab import VolumesTab


class StorageEditor(QWidget):
    def __init__(self, document, selection, parent=None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self._stale = True
        self._publishing = False
        self._filling = False

        self.array_combo = named(QComboBox(), "arrayCombo")
        self.array_combo.setMinimumContentsLength(16)
        self.array_combo.currentIndexChanged.connect(self._array_chosen)
        self.summary = QLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(QLabel("Array:"))
        top.addWidget(self.array_combo)
        top.addWidget(self.summary, 1)

        self.controllers = ControllersTab()
        self.slot_map = named(SlotMap(document), "slotMap")
        self.slot_map.slots_selected.connect(self._slots_picked)
        self.slot_map.height_changed.connect(lambda _h: self._fit_split())
        self.map_scroll = QScrollArea()
        self.map_scroll.setWidgetResizable(True)
        self.map_scroll.setWidget(self.slot_map)

        self.tabs = QTabWidget()
        self.groups_tab = DiskGroupsTab(self)
        self.volumes_tab = VolumesTab(self)
        self.mappings_tab = MappingsTab(self)
        self.volumes_tab.volume_created.connect(self.mappings_tab.choose_volume)
        self.tabs.addTab(self._scrolling(self.groups_tab), "Disk groups")
        self.tabs.addTab(self._scrolling(self.volumes_tab), "Volumes && pools")
        self.tabs.addTab(self._scrolling(self.mappings_tab), "Hosts && mappings")
        self.tabs.addTab(self.controllers, "Controllers && ports")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self._boxed("Drive slots — click, Ctrl+click, Shift+click or drag a rectangle to "
                                    "select disks", self.map_scroll))
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        self.tabs.setMinimumHeight(230)
        self.map_scroll.setMinimumHeight(150)
        split.splitterMoved.connect(lambda *_: setattr(self, "_split_by_user", True))
        self.split = split
        self._split_by_user = False

        self.message = named(QLabel(), "storageMessage")
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.message)

        document.changed.connect(lambda _ids: self._model_changed())
        document.reset.connect(self._model_changed)
        selection.changed.connect(self._follow_selection)
        # drawn when first shown: a hidden tab costs nothing at start-up

    @staticmethod
    def _boxed(title: str, widget: QWidget) -> QGroupBox:
        box = QGroupBox(title)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(widget)
        return box

    @staticmethod
    def _scrolling(page: QWidget) -> QScrollArea:
        """A tab page that scrolls in a short window instead of squeezing the slot map."""
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setFrameShape(QScrollArea.Shape.NoFrame)
        area.setWidget(page)
        return area

    # ================================================================= model -> view
    @property
    def array_id(self) -> str | None:
        return self.array_combo.currentData()

    @property
    def array(self):
        return next((a for a in self.document.bed.arrays if a.id == self.array_id), None)

    def _model_changed(self) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True    # hidden tab: redraw when it is shown

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        self._stale = False
        self._filling = True
        try:
            current = self.array_id
            self.array_combo.blockSignals(True)
            self.array_combo.clear()
            for a in self.document.bed.arrays:
                label = a.id + (" (simulated)" if a.simulated else "")
                self.array_combo.addItem(label, a.id)
            ids = [a.id for a in self.document.bed.arrays]
            chosen = self._array_in_selection() or current
            self.array_combo.setCurrentIndex(ids.index(chosen) if chosen in ids else (0 if ids else -1))
            self.array_combo.blockSignals(False)
            self._fill_all()
        finally:
            self._filling = False

    def _array_in_selection(self) -> str | None:
        for ident in self.selection.ids:
            subject = ops.parse_subject(self.document.bed, ident)
            if subject is not None:
                return subject.array
        return None

    def _array_chosen(self, _index: int) -> None:
        if self._filling:
            return
        self._filling = True
        try:
            self.slot_map.set_selected(())
            self._fill_all()
        finally:
            self._filling = False

    def _fit_split(self) -> None:
        """Give the slot map the room it needs, up to 60 % of the height, until the user drags the splitter."""
        total = sum(self.split.sizes())
        if self._split_by_user or total <= 0:
            return
        want = min(max(self.slot_map.minimumHeight() + 48, 150), int(total * 0.6))
        self.split.setSizes([want, total - want])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_split()

    def _fill_all(self) -> None:
        array = self.array
        self.slot_map.show_array(array.id if array else None)
        self._fit_split()
        self._fill_summary(array)
        self.controllers.fill(array)
        if array is None:
            for tab in (self.groups_tab, self.volumes_tab, self.mappings_tab):
                tab.clear()
            self.groups_tab.update_pick_info()
            return
        self.groups_tab.fill_owners(array)
        scope = ops.array_scope(self.document.bed, array.id)
        use = ops.usage(self.document.bed, array.id, scope)
        self.groups_tab.fill(array, use)
        self.volumes_tab.fill(array, use)
        self.mappings_tab.fill(array)
        self.groups_tab.update_pick_info()
        self.show_selection(self.selection.ids)

    def _fill_summary(self, array) -> None:
        if array is None:
            self.summary.setText("No storage array in this bed.")
            return
        disks = sum(len(ops.expand([f"{e.name}:{ds.slots}"])) for e in array.enclosures for ds in e.disks)
        slots = sum(shown_slots(e) for e in array.enclosures)
        parts = [array.model or "array", f"firmware {array.firmware}" if array.firmware else "",
                 array.connectivity.upper() if array.connectivity else "",
                 f"{disks} disks in {slots} slots", f"{len(array.disk_groups)} disk groups",
                 f"{len(ops.expand(array.spares))} hot spares",
                 "simulated: exists only as a setting" if array.simulated else ""]
        self.summary.setText(" · ".join(p for p in parts if p))

    # ================================================================= selection
    def busy(self) -> bool:
        """The editor is filling its lists or publishing: a list's selection signal means nothing."""
        return self._filling or self._publishing

    def publish(self, ids) -> None:
        self._publishing = True
        try:
            self.selection.set(ids)
        finally:
            self._publishing = False

    def rows_picked(self, ids: list[str]) -> None:
        """Rows picked in a tab's list: show their slots, and tell the other views."""
        if ids:
            self._highlight(ids)
            self.publish(ids)

    def _slots_picked(self, slots: list) -> None:
        self.groups_tab.update_pick_info()
        array = self.array
        if array is not None:
            self.publish([ops.slot_id(array.id, s) for s in slots])

    def _follow_selection(self, ids) -> None:
        if self._publishing or self._filling:
            return
        if not self.isVisible():
            self._stale = True     # shown later: refresh() picks the selection up
            return
        subjects = [s for s in (ops.parse_subject(self.document.bed, i) for i in ids) if s is not None]
        if not subjects:
            return
        array_id = subjects[0].array
        if array_id != self.array_id:
            index = self.array_combo.findData(array_id)
            if index >= 0:
                self.array_combo.setCurrentIndex(index)
        self.show_selection(ids)

    def show_selection(self, ids) -> None:
        """Highlight the slots behind the selected storage subjects and their list rows."""
        self._highlight(ids)
        self._filling = True
        try:
            self.groups_tab.select_rows(ids)
            self.volumes_tab.select_rows(ids)
        finally:
            self._filling = False
        self.groups_tab.sync_level_combo()

    def _highlight(self, ids) -> None:
        array = self.array
        if array is None:
            return
        slots: list = []
        for ident in ids:
            s = ops.parse_subject(self.document.bed, ident)
            if s is None or s.array != array.id:
                continue
            if s.kind == "slot":
                slots.append(s.slot)
            elif s.kind == "group":
                slots += self._group_slots(array, s.name)
            elif s.kind == "pool":
                for g in array.disk_groups:
                    if g.pool == s.name:
                        slots += ops.expand(g.members)
            elif s.kind == "volume":
                v = next((v for v in array.volumes if v.name == s.name), None)
                if v is not None and v.group:
                    slots += self._group_slots(array, v.group)
                elif v is not None:
                    for g in array.disk_groups:
                        if g.pool == v.pool:
                            slots += ops.expand(g.members)
        if slots or any(ops.parse_subject(self.document.bed, i) for i in ids):
            self.slot_map.set_selected(slots)
            self.groups_tab.update_pick_info()
            if slots:
                first = self.slot_map.slot_rect(slots[0]) if self.slot_map.cell(slots[0]) else None
                if first is not None:
                    self.map_scroll.ensureVisible(first.center().x(), first.center().y(), 60, 60)

    @staticmethod
    def _group_slots(array, name: str) -> list:
        g = next((g for g in array.disk_groups if g.name == name), None)
        return ops.expand(g.members) if g else []

    # ================================================================= actions
    def say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(ERROR_STYLE if error else OK_STYLE)
        window = self.window()
        if isinstance(window, QMainWindow):
            window.statusBar().showMessage(text, 8000)

    def run(self, build: Callable[[], Any]) -> bool:
        if self.array is None:
            self.say("This bed has no storage array: add one on the Diagram tab first.", error=True)
            return False
        try:
            edit = build()
        except ops.StorageEditRefused as exc:
            self.say(f"Not done: {exc}.", error=True)
            return False
        self.document.apply(edit)
        self.say(f"Done: {edit.text}.")
        return True
