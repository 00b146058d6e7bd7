"""The component tree after a bed is opened: listed once the diagram is drawn, a slice at a time.

While a bed opens and a big bed's diagram is built (app/background.py DrawingFirst), the tree
waits: it says so in a single row.  Then it lists the bed's components CHUNK at a time between
the event loop's turns, instead of 9,500 rows (the 5,000-device bed) in one go, which held the
window for a second or more after its first frame.  Whatever redraws the tree meanwhile (an
edit, another bed, a configuration) stops the listing and redraws it whole, as before.
A mixin of widgets/component_tree.py's ComponentTree."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTreeWidgetItem

from app.background import DrawingFirst

CHUNK = 100         # component rows listed in one turn of the event loop
LIST_AT_ONCE = 500  # ... unless the bed has no more components than this
MARKS = 400         # findings' subjects, then marked rows, in one turn once the rows are listed


class TreeFilling:
    """Mixed into ComponentTree (document, SECTIONS, _sections, _section_ids, _create ...)."""

    _fill_steps: Iterator[None] | None = None
    _fill_timer: QTimer | None = None
    _after_drawing = False      # the rows wait for the diagram

    def _wait_for_drawing(self) -> bool:
        """True when the bed is opening or its diagram is being built: the tree is listed after."""
        self._stop_filling()
        hold = DrawingFirst.of(self.document)
        if not hold.holding:
            return False
        self.show_message("Listing the components once the diagram is drawn…")
        self._section_ids = {}
        if not self._after_drawing:
            self._after_drawing = True
            hold.released.connect(self._drawn)
        return True

    def _drawn(self) -> None:
        if not self._after_drawing:
            return
        self._after_drawing = False
        DrawingFirst.of(self.document).released.disconnect(self._drawn)
        bed = self.document.bed
        if sum(len(getattr(bed, attr)) for _title, attr, _build in self.SECTIONS) <= LIST_AT_ONCE:
            self._pending = None        # a few hundred rows: at once, as before
            self._redraw()
            return
        self._pending = set()
        self._fill_steps = self._listing(bed)
        if self._fill_timer is None:
            self._fill_timer = QTimer(self, singleShot=True, interval=0, timeout=self._fill_slice)
        self._fill_timer.start()

    @property
    def filling(self) -> bool:
        return self._fill_steps is not None

    def _stop_filling(self) -> None:
        self._fill_steps = None
        if self._fill_timer is not None:
            self._fill_timer.stop()

    def _fill_slice(self) -> None:
        steps = self._fill_steps
        if steps is None:
            return
        self._syncing = True
        try:
            next(steps)
        except StopIteration:
            self._fill_steps = None
            return
        finally:
            self._syncing = False
        assert self._fill_timer is not None
        self._fill_timer.start()

    def _listing(self, bed: Any) -> Iterator[None]:
        """The rows _reconcile makes for an empty tree, CHUNK components per step."""
        self.clear()
        self._sections, self._items, self._rows, self._marks, self._section_ids = {}, {}, {}, {}, {}
        for title, attr, build in self.SECTIONS:
            comps = list(getattr(bed, attr))
            if not comps:
                continue
            section = self._new_section(attr)
            section.setText(0, f"{title} ({len(comps)})")
            self.addTopLevelItem(section)
            section.setExpanded(True)
            for start in range(0, len(comps), CHUNK):
                section.addChildren([self._create(build(c), lazy=True) for c in comps[start:start + CHUNK]])
                yield
            ids = [c.id for c in comps]
            if len(set(ids)) == len(ids):
                self._section_ids[attr] = ids
        for col in (0, 1):
            self.resizeColumnToContents(col)
        self.setColumnWidth(0, self.columnWidth(0) + 24)   # room for the finding marker
        yield from self._marking(every=MARKS)
        self._show_configuration()
        self.select_ids(set(self.selection.ids), scroll=False)

    def _new_section(self, attr: str) -> QTreeWidgetItem:
        raise NotImplementedError
