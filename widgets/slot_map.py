"""The drive-slot map of one storage array: each enclosure a row of slots, each disk filled
with the colour of its disk group, hot spares and free disks marked, empty slots left
visibly empty, and a legend underneath — the storage-layout figures of the seed reports
(seed 000 Figure 14, seed 002 Table 1), live.

The map draws from the document's bed on every repaint (it keeps only the array id and the
selected slots).  Click selects a slot, Ctrl+click toggles one, Shift+click selects a run,
and dragging a rectangle selects every slot it touches; `slots_selected` reports the user's
choice.
"""
from __future__ import annotations

import colorsys
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeySequence, QPainter, QPen
from PySide6.QtWidgets import QApplication, QRubberBand, QToolTip, QWidget

from topology import capacity as cap
from topology.index import shown_slots
from topology.storage_ops import Slot, expand
from topology.unknown import NOT_STATED, stated

# Light, clearly different fills that keep dark text readable; more groups than this get
# golden-ratio hues, so neighbouring groups (created one after the other) never look alike.
_BASE_COLOURS = ("#8ab6e6", "#f4b183", "#9dd59a", "#ef9a9a", "#c5a8e0", "#e6cf7a",
                 "#f3a6cf", "#86d0d6", "#c9b29b", "#b9d27c", "#a9a9e8", "#f0c2a0")
EMPTY_FILL = QColor("#f4f4f4")
FREE_FILL = QColor("#ffffff")
SPARE_FILL = QColor("#e8f6e8")
SPARE_EDGE = QColor("#2e7d32")
SELECT_EDGE = QColor("#0b57d0")
TEXT = QColor("#1b1b1b")
MUTED = QColor("#6b6b6b")

MARGIN = 10
CELL_GAP = 4
ROW_GAP = 6
CELL_H = 54
MIN_CELL_W = 46
MAX_CELL_W = 88
WRAP_AT_LEAST = 8      # never fewer slots than this on one line


def group_colours(names: list[str]) -> dict[str, QColor]:
    """A distinct fill per disk group, stable for a given group order."""
    out: dict[str, QColor] = {}
    seen: set[int] = set()
    for i, name in enumerate(names):
        if i < len(_BASE_COLOURS):
            c = QColor(_BASE_COLOURS[i])
        else:
            k = i - len(_BASE_COLOURS)
            hue = (0.07 + k * 0.618034) % 1.0
            sat = (0.30, 0.42, 0.54)[k % 3]
            val = (0.96, 0.88)[(k // 3) % 2]
            r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
            c = QColor.fromRgbF(r, g, b)
        while c.rgb() in seen:   # equal colours would make two groups one on the map
            c = QColor(c.red(), c.green(), (c.blue() + 7) % 256)
        seen.add(c.rgb())
        out[name] = c
    return out


@dataclass
class Cell:
    slot: Slot
    rect: QRect
    state: str            # "group", "spare", "free" or "empty"
    group: str = ""
    disk: object = None   # DiskSet


def _rpm_text(rpm: int | None) -> str:
    if not rpm:
        return ""
    return f"{rpm / 1000:g}K"


def _size_text(gb: float) -> str:
    if gb is NOT_STATED:
        return "size not stated"
    return f"{gb / 1000:g} TB" if gb >= 1000 else f"{gb:g} GB"


class SlotMap(QWidget):
    slots_selected = Signal(list)      # list[Slot], after every change the user makes
    height_changed = Signal(int)       # the drawing needs this many pixels (rows wrap with the width)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self.array_id: str | None = None
        self.selected: set[Slot] = set()
        self._cells: list[Cell] = []
        self._by_slot: dict[Slot, Cell] = {}
        self._legend: list[tuple[QRect, QColor, str, str]] = []   # rect, fill, text, style
        self._labels: list[tuple[QRect, str, str]] = []           # enclosure name, detail
        self.colours: dict[str, QColor] = {}
        self._height = 100
        self._min_width = 320
        self._press: QPoint | None = None
        self._press_base: set[Slot] = set()
        self._anchor: Slot | None = None
        self._band = QRubberBand(QRubberBand.Shape.Rectangle, self)
        self.setMouseTracking(False)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self._font = QFont(self.font())
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(self.font().pointSizeF() - 1.5, 7.0))
        self._bold = QFont(self.font())
        self._bold.setBold(True)

    # ------------------------------------------------------------------ model
    @property
    def array(self):
        if self.array_id is None:
            return None
        return next((a for a in self.document.bed.arrays if a.id == self.array_id), None)

    def show_array(self, array_id: str | None) -> None:
        if array_id != self.array_id:
            self.selected = set()
            self._anchor = None
        self.array_id = array_id
        self.refresh()

    def refresh(self) -> None:
        """Recompute the drawing from the model (after any change)."""
        self._layout(self.width())
        if self.minimumHeight() != self._height or self.minimumWidth() != self._min_width:
            self.setMinimumSize(self._min_width, self._height)
            self.height_changed.emit(self._height)
        self.updateGeometry()
        self.update()

    def set_selected(self, slots, emit: bool = False) -> None:
        self.selected = set(slots) & set(self._by_slot)
        self.update()
        if emit:
            self.slots_selected.emit(self.selected_slots())

    def selected_slots(self) -> list[Slot]:
        return [c.slot for c in self._cells if c.slot in self.selected]

    # ------------------------------------------------------------------ queries (also for tests)
    def slot_rect(self, slot: Slot) -> QRect:
        return QRect(self._by_slot[slot].rect)

    def cell(self, slot: Slot) -> Cell | None:
        return self._by_slot.get(slot)

    def fill_of(self, slot: Slot) -> QColor:
        c = self._by_slot[slot]
        return self._fill(c)

    def cell_at(self, pos: QPoint) -> Cell | None:
        for c in self._cells:
            if c.rect.contains(pos):
                return c
        return None

    def legend_texts(self) -> list[str]:
        return [t for _, _, t, _ in self._legend]

    # ------------------------------------------------------------------ layout
    def _fill(self, c: Cell) -> QColor:
        if c.state == "group":
            return self.colours.get(c.group, FREE_FILL)
        return {"spare": SPARE_FILL, "free": FREE_FILL}.get(c.state, EMPTY_FILL)

    def _layout(self, width: int) -> None:
        self._cells, self._by_slot, self._legend, self._labels = [], {}, [], []
        a = self.array
        if a is None:
            self.colours = {}
            self._height, self._min_width = 60, 320
            return
        self.colours = group_colours([g.name for g in a.disk_groups])
        fm = QFontMetrics(self._bold)
        label_w = max([fm.horizontalAdvance(e.name) for e in a.enclosures] + [40]) + 16
        count = {e.name: shown_slots(e) for e in a.enclosures}    # a count not stated: up to the last disk
        most = max([*count.values(), 1])
        self._min_width = 2 * MARGIN + label_w + min(most, WRAP_AT_LEAST) * (MIN_CELL_W + CELL_GAP)
        avail = max(width - 2 * MARGIN - label_w, 1)
        fits = max(int((avail + CELL_GAP) // (MIN_CELL_W + CELL_GAP)), WRAP_AT_LEAST)
        # an enclosure wider than the view wraps into balanced rows (a 24-bay shelf: 2 x 12),
        # the way the report figures draw a shelf in two rows
        lines = -(-most // fits)
        per_line = -(-most // lines)
        cell_w = int(min(max(avail / per_line - CELL_GAP, MIN_CELL_W), MAX_CELL_W))
        disks = {}
        for e in a.enclosures:
            for ds in e.disks:
                for s in expand([f"{e.name}:{ds.slots}"]):
                    disks[s] = ds
        owner: dict[Slot, str] = {}
        for g in a.disk_groups:
            for s in expand(g.members):
                owner.setdefault(s, g.name)
        spares = set(expand(a.spares))
        y = MARGIN
        for e in a.enclosures:
            rows = max(-(-count[e.name] // per_line), 1)
            self._labels.append((QRect(MARGIN, y, label_w - 8, CELL_H), e.name,
                                 f"{e.slots} slots"))
            for s in range(count[e.name]):
                slot = (e.name, s)
                line, col = divmod(s, per_line)
                rect = QRect(MARGIN + label_w + col * (cell_w + CELL_GAP), y + line * (CELL_H + CELL_GAP),
                             cell_w, CELL_H)
                disk = disks.get(slot)
                if disk is None:
                    state = "empty"
                elif slot in owner:
                    state = "group"
                elif slot in spares:
                    state = "spare"
                else:
                    state = "free"
                cell = Cell(slot, rect, state, owner.get(slot, ""), disk)
                self._cells.append(cell)
                self._by_slot[slot] = cell
            y += rows * CELL_H + (rows - 1) * CELL_GAP + ROW_GAP
        self.selected &= set(self._by_slot)
        y += 6
        self._legend_layout(a, y, width)

    def _legend_layout(self, a, y: int, width: int) -> None:
        fm = QFontMetrics(self._font)
        entries: list[tuple[QColor, str, str]] = []
        sizes: dict[str, list] = {}
        for e in a.enclosures:
            for ds in e.disks:
                for s in expand([f"{e.name}:{ds.slots}"]):
                    sizes[s] = ds
        for g in a.disk_groups:
            members = expand(g.members)
            ds = [sizes[s] for s in members if s in sizes]
            kinds = sorted({(d.size_gb, d.rpm, d.interface) for d in ds}, key=lambda k: -(stated(k[0]) or 0))
            disk_text = " + ".join(
                f"{sum(1 for d in ds if (d.size_gb, d.rpm, d.interface) == k)} × {_size_text(k[0])}"
                + (f" {_rpm_text(k[1])}" if k[1] else "") + (f" {k[2].upper()}" if k[2] else "")
                for k in kinds) or f"{len(members)} slots"
            parts = [f"{g.name}: {cap.LEVEL_NAMES.get(g.raid, g.raid)}", disk_text]
            if g.owner:
                parts.append(g.owner)
            if g.pool:
                parts.append(f"pool {g.pool}")
            entries.append((self.colours[g.name], " · ".join(parts), "group"))
        if any(c.state == "spare" for c in self._cells):
            entries.append((SPARE_FILL, "hot spare", "spare"))
        if any(c.state == "free" for c in self._cells):
            entries.append((FREE_FILL, "free disk", "free"))
        if any(c.state == "empty" for c in self._cells):
            entries.append((EMPTY_FILL, "empty slot", "empty"))
        x = MARGIN
        row_h = fm.height() + 8
        right = max(width - MARGIN, MARGIN + 200)
        for fill, text, style in entries:
            w = 18 + 6 + fm.horizontalAdvance(text) + 18
            if x > MARGIN and x + w > right:
                x = MARGIN
                y += row_h
            self._legend.append((QRect(x, y, w, row_h), fill, text, style))
            x += w
        self._height = y + row_h + MARGIN if entries else y + MARGIN

    # ------------------------------------------------------------------ painting
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._layout(event.size().width())
        if self.minimumHeight() != self._height or self.minimumWidth() != self._min_width:
            self.setMinimumSize(self._min_width, self._height)
            self.height_changed.emit(self._height)

    def sizeHint(self) -> QSize:
        return QSize(max(self._min_width, 760), self._height)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        if self.array is None:
            p.setPen(MUTED)
            p.drawText(self.rect().adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                       "This bed has no storage array. Add one on the Diagram tab.")
            return
        for rect, name, detail in self._labels:
            p.setFont(self._bold)
            p.setPen(TEXT)
            p.drawText(rect.adjusted(0, 6, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, name)
            p.setFont(self._small)
            p.setPen(MUTED)
            p.drawText(rect.adjusted(0, 0, 0, -6), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom, detail)
        visible = event.rect()
        for c in self._cells:
            if c.rect.intersects(visible):
                self._paint_cell(p, c)
        self._paint_legend(p)

    def _fitted(self, text: str, width: int) -> tuple[QFont, str]:
        """The bold name font, shrunk (not below 7 pt) until the text fits, then elided."""
        font = QFont(self._bold)
        size = font.pointSizeF()
        while size > 7.0 and QFontMetrics(font).horizontalAdvance(text) > width:
            size -= 0.5
            font.setPointSizeF(size)
        return font, QFontMetrics(font).elidedText(text, Qt.TextElideMode.ElideRight, width)

    def _paint_cell(self, p: QPainter, c: Cell) -> None:
        r = c.rect
        p.fillRect(r, self._fill(c))
        if c.state == "empty":
            p.setPen(QPen(QColor("#9e9e9e"), 1, Qt.PenStyle.DashLine))
        elif c.state == "spare":
            p.setPen(QPen(SPARE_EDGE, 2))
        else:
            p.setPen(QPen(QColor("#5f6368"), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(r.adjusted(0, 0, -1, -1))
        inner = r.adjusted(4, 2, -4, -3)
        top_left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        p.setFont(self._small)
        p.setPen(MUTED if c.state == "empty" else TEXT)
        p.drawText(inner, top_left, str(c.slot[1]))
        if c.disk is not None:
            speed = c.disk.media.upper() if c.disk.media != "hdd" else _rpm_text(c.disk.rpm)
            p.drawText(inner, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop, speed)
            p.drawText(inner, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom,
                       _size_text(c.disk.size_gb))
        if c.state == "group":
            font, title = self._fitted(c.group, inner.width())
            p.setPen(TEXT)
        else:
            font = self._font
            title = {"spare": "SPARE", "free": "free", "empty": "empty"}[c.state]
            p.setPen(SPARE_EDGE if c.state == "spare" else MUTED)
        p.setFont(font)
        p.drawText(r, Qt.AlignmentFlag.AlignCenter, title)
        if c.slot in self.selected:
            p.setPen(QPen(SELECT_EDGE, 3))
            p.drawRect(r.adjusted(1, 1, -2, -2))

    def _paint_legend(self, p: QPainter) -> None:
        p.setFont(self._font)
        for rect, fill, text, style in self._legend:
            sw = QRect(rect.left(), rect.center().y() - 8, 18, 16)
            p.fillRect(sw, fill)
            if style == "empty":
                p.setPen(QPen(QColor("#9e9e9e"), 1, Qt.PenStyle.DashLine))
            elif style == "spare":
                p.setPen(QPen(SPARE_EDGE, 2))
            else:
                p.setPen(QPen(QColor("#5f6368"), 1))
            p.drawRect(sw.adjusted(0, 0, -1, -1))
            p.setPen(TEXT)
            p.drawText(QRect(sw.right() + 7, rect.top(), rect.width() - 24, rect.height()),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    # ------------------------------------------------------------------ tooltips
    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            c = self.cell_at(event.pos())
            if c is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.describe(c.slot), self)
            return True
        return super().event(event)

    def describe(self, slot: Slot) -> str:
        c = self._by_slot[slot]
        head = f"{slot[0]}:{slot[1]}"
        if c.disk is None:
            return f"{head} — empty slot"
        d = c.disk
        lines = [f"{head} — {d.model or 'disk'}",
                 " · ".join(x for x in (_size_text(d.size_gb), f"{d.rpm:,} RPM" if d.rpm else "",
                                        d.media.upper(), d.interface.upper()) if x)]
        a = self.array
        if c.state == "group" and a is not None:
            g = next((g for g in a.disk_groups if g.name == c.group), None)
            if g is not None:
                extra = f", owner {g.owner}" if g.owner else ""
                extra += f", pool {g.pool}" if g.pool else ""
                lines.append(f"disk group {g.name} ({cap.LEVEL_NAMES.get(g.raid, g.raid)}{extra})")
        elif c.state == "spare":
            lines.append("hot spare")
        else:
            lines.append("free: not in a disk group")
        return "\n".join(lines)

    # ------------------------------------------------------------------ selecting
    def _ordered(self) -> list[Slot]:
        return [c.slot for c in self._cells]

    def mousePressEvent(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        pos = event.position().toPoint()
        mods = event.modifiers()
        c = self.cell_at(pos)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        if c is not None and shift and self._anchor in self._by_slot:
            order = self._ordered()
            i, j = sorted((order.index(self._anchor), order.index(c.slot)))
            run = set(order[i:j + 1])
            self.selected = (self.selected | run) if ctrl else run
        elif c is not None and ctrl:
            self.selected ^= {c.slot}
            self._anchor = c.slot
        elif c is not None:
            self.selected = {c.slot}
            self._anchor = c.slot
        elif not ctrl:
            self.selected = set()
        self._press = pos
        self._press_base = set(self.selected) if ctrl else set()
        self.update()

    def mouseMoveEvent(self, event) -> None:
        if self._press is None or not (event.buttons() & Qt.MouseButton.LeftButton):
            return super().mouseMoveEvent(event)
        pos = event.position().toPoint()
        if (pos - self._press).manhattanLength() < QApplication.startDragDistance() and not self._band.isVisible():
            return
        band = QRect(self._press, pos).normalized()
        self._band.setGeometry(band)
        self._band.show()
        self.selected = self._press_base | {c.slot for c in self._cells if c.rect.intersects(band)}
        self.update()

    def mouseReleaseEvent(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return super().mouseReleaseEvent(event)
        self._press = None
        self._band.hide()
        self.slots_selected.emit(self.selected_slots())

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Escape and self.selected:
            self.set_selected((), emit=True)
            return
        if event.matches(QKeySequence.StandardKey.SelectAll):
            self.set_selected(self._ordered(), emit=True)
            return
        super().keyPressEvent(event)
