"""The pieces of the VM placement view: a host card with its load bars, and a VM chip that can
be dragged to another host's card."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from topology import placement_ops as ops
from topology.placement import memory_not_stated
from topology.unknown import NOT_STATED

if TYPE_CHECKING:
    from widgets.placement_view import PlacementView

GREEN = QColor("#81c784")
AMBER = QColor("#ffb74d")
RED = QColor("#ef7070")
GREY = QColor("#9e9e9e")
CARD_WIDTH = 290

# One style sheet for the whole board: per-widget style sheets made a 100-host board
# take half a second to build.  Widgets pick their look through a dynamic property.
BOARD_STYLE = """
#hostCard { background: #fafafa; border: 1px solid #b0bec5; border-radius: 8px; }
#hostCard[state="failed"] { background: #ffebee; border: 2px solid #c62828; }
#hostCard[state="drop"] { background: #e8f5e9; border: 2px solid #2e7d32; }
#hostCard[state="refuse"] { background: #eeeeee; border: 2px dashed #9e9e9e; }
#hostDetail { color: #555555; }
#stoppedCard { background: #fff8f7; border: 2px dashed #c62828; border-radius: 8px; }
"""


def load_colour(fraction: float | None) -> QColor:
    """Green below 75 % of the limit, amber up to it, red beyond."""
    if fraction is None:
        return GREY
    if fraction > 1.0 + 1e-9:
        return RED
    if fraction >= 0.75:
        return AMBER
    return GREEN


class LoadBar(QWidget):
    """A labelled bar: used against a limit, coloured by how close it is."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.fraction: float | None = None
        self.text = ""
        self.colour = GREY
        self.setMinimumHeight(22)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_load(self, fraction: float | None, text: str, tip: str = "") -> None:
        self.fraction = fraction
        self.text = text
        self.colour = load_colour(fraction)
        self.setToolTip(tip)
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(200, 22)

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        r = self.rect().adjusted(0, 0, -1, -1)
        p.fillRect(r, QColor("#eceff1"))
        if self.fraction:
            w = int(r.width() * min(self.fraction, 1.0))
            p.fillRect(QRect(r.left(), r.top(), w, r.height()), self.colour)
        p.setPen(QPen(QColor("#78909c"), 1))
        p.drawRect(r)
        p.setPen(QColor("#111111"))
        p.drawText(r.adjusted(6, 0, -4, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, self.text)


CHIP_LOOK = {   # kind: fill, edge, dashed edge
    "background": ("#f5f5f5", "#90a4ae", False),
    "load": ("#e3f2fd", "#1565c0", False),
    "moved": ("#fff4e0", "#ef6c00", True),
    "stopped": ("#fdecea", "#c62828", False),
}


class VmChip(QWidget):
    """One VM on a host card, painted in one piece (a board holds hundreds).  Holds only the
    VM id and the text it shows; dragging it asks the view to move the VM."""

    def __init__(self, view: PlacementView, vm, note: str = "", stopped: bool = False, parent=None):
        super().__init__(parent)
        self.view = view
        self.vm_id = vm.id
        self.note = note
        memory = "memory not stated" if memory_not_stated([vm]) else f"{ops.vm_memory_gb(vm):g} GB"
        vcpu = "vCPU not stated" if vm.vcpu is NOT_STATED else f"{vm.vcpu} vCPU"
        self.load_text = f"{memory} · {vcpu}"
        self.kind = "stopped" if stopped else "moved" if note else "load" if vm.under_load else "background"
        self.draggable = not stopped
        self.selected = False
        self._press: QPoint | None = None
        self._dragging = False
        self.setObjectName("vmChip")
        self.setCursor(Qt.CursorShape.OpenHandCursor if self.draggable else Qt.CursorShape.ArrowCursor)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._bold = QFont(self.font())
        self._bold.setBold(True)
        line = self.fontMetrics().height()
        self._note_lines = self._wrap(note, CARD_WIDTH - 40) if note else []
        self.setFixedHeight(8 + line * (1 + len(self._note_lines)) + 2)
        tips = [vm.role or vm.id, f"{vm.guest_os}" if vm.guest_os else "",
                "highly available" if vm.highly_available else "not highly available (stays down if its host fails)",
                "under load" if vm.under_load else "background VM"]
        hint = "\nDrag onto another host to move it." if self.draggable else ""
        self.setToolTip("\n".join(t for t in tips if t) + hint)

    def _wrap(self, text: str, width: int) -> list[str]:
        fm = self.fontMetrics()
        lines, current = [], ""
        for word in text.split():
            trial = f"{current} {word}".strip()
            if current and fm.horizontalAdvance(trial) > width:
                lines.append(current)
                current = word
            else:
                current = trial
        return lines + [current] if current else lines

    def paintEvent(self, _event) -> None:
        fill, edge, dashed = CHIP_LOOK[self.kind]
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setBrush(QColor(fill))
        if self.selected:
            p.setPen(QPen(QColor("#0b57d0"), 3))
            p.drawRoundedRect(self.rect().adjusted(1, 1, -2, -2), 5, 5)
        else:
            p.setPen(QPen(QColor(edge), 1, Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine))
            p.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 5, 5)
        line = self.fontMetrics().height()
        inner = self.rect().adjusted(8, 4, -8, -4)
        top = QRect(inner.left(), inner.top(), inner.width(), line)
        p.setPen(QColor("#111111"))
        p.drawText(top, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, self.load_text)
        p.setFont(self._bold)
        room = inner.width() - self.fontMetrics().horizontalAdvance(self.load_text) - 8
        p.drawText(top, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   p.fontMetrics().elidedText(self.vm_id, Qt.TextElideMode.ElideRight, room))
        p.setFont(self.font())
        p.setPen(QColor("#6d4c41"))
        for i, text in enumerate(self._note_lines):
            p.drawText(QRect(inner.left(), inner.top() + line * (i + 1), inner.width(), line),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.draggable:
            self._press = event.position().toPoint()
            self._dragging = False
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
        else:
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._press is None:
            return super().mouseMoveEvent(event)
        pos = event.position().toPoint()
        if not self._dragging and (pos - self._press).manhattanLength() >= QApplication.startDragDistance():
            self._dragging = True
            self.view.drag_started(self)
        if self._dragging:
            self.view.drag_moved(self.mapToGlobal(pos))

    def mouseReleaseEvent(self, event) -> None:
        if self._press is None:
            return super().mouseReleaseEvent(event)
        self._press = None
        self.setCursor(Qt.CursorShape.OpenHandCursor)
        if self._dragging:
            self._dragging = False
            self.view.drag_finished(self.vm_id, self.mapToGlobal(event.position().toPoint()))
        else:
            self.view.selection.set([self.vm_id])     # a click (no drag) selects the VM everywhere


class HostCard(QFrame):
    """A host column: name, failed toggle, load bars and its VMs."""

    def __init__(self, view: PlacementView, host_id: str, parent=None):
        super().__init__(parent)
        self.host_id = host_id
        self.setObjectName("hostCard")
        self.setFixedWidth(CARD_WIDTH)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(10, 8, 10, 10)
        self.layout_.setSpacing(6)
        self.title = QLabel(host_id)
        f = QFont(self.title.font())
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() + 2)
        self.title.setFont(f)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setObjectName("hostDetail")
        self.fail_button = QPushButton()
        self.fail_button.setObjectName(f"fail:{host_id}")
        self.fail_button.setCheckable(True)
        self.fail_button.clicked.connect(lambda checked: view.toggle_failed(host_id, checked))
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.fail_button)
        self.layout_.addLayout(head)
        self.layout_.addWidget(self.detail)
        self.ram_bar = LoadBar()
        self.cpu_bar = LoadBar()
        self.layout_.addWidget(self.ram_bar)
        self.layout_.addWidget(self.cpu_bar)
        self.chips: list[VmChip] = []
        self.set_drop_target(False)

    def set_failed(self, failed: bool) -> None:
        self.fail_button.blockSignals(True)
        self.fail_button.setChecked(failed)
        self.fail_button.blockSignals(False)
        self.fail_button.setText("Bring back" if failed else "Mark failed")
        self.fail_button.setToolTip("Bring the host back in this scenario" if failed else
                                    "Fail this host and see where its VMs go")
        self.failed = failed
        self.set_drop_target(False)

    def set_drop_target(self, on: bool, refusal: str | None = None) -> None:
        """Green while a VM is dragged over a host that takes it, grey and dashed over one that
        would refuse it (the reason is the ghost's to show); a failed host stays red."""
        self.refusal = refusal if on else None
        state = ("failed" if getattr(self, "failed", False) else
                 ("refuse" if refusal else "drop") if on else "")
        if self.property("state") != state:
            self.setProperty("state", state)
            self.style().unpolish(self)
            self.style().polish(self)
            self.update()
