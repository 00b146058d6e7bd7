"""A block laid out at the page width as a QTextDocument (a flow), with the places it may
be cut: between text lines and table rows, never inside a row or right after a header."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.report.style import BODY_FONT, QT_CSS


def new_document(html: str, width: float, device: Any):
    from PySide6.QtGui import QFont, QTextDocument, QTextOption
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(device)
    font = QFont(BODY_FONT)
    font.setPointSizeF(9.0)
    doc.setDefaultFont(font)
    doc.setDefaultStyleSheet(QT_CSS)
    doc.setDocumentMargin(0)
    option = doc.defaultTextOption()
    option.setWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    doc.setHtml(html)
    doc.setTextWidth(width)
    return doc


@dataclass
class TableSpan:
    top: float            # where the table (or its caption) begins: a cut here moves it whole
    header_top: float
    header_bottom: float
    bottom: float


@dataclass
class Flow:
    """One block laid out at the page width, with the places it may be cut."""
    block: Any
    height: float
    doc: Any = None
    image: Any = None
    breaks: list[float] = field(default_factory=list)      # good cuts, ascending
    fallback: list[float] = field(default_factory=list)    # any line bottom (a row taller than a page)
    tables: list[TableSpan] = field(default_factory=list)
    image_size: tuple[float, float] = (0.0, 0.0)     # on the page, device pixels

    def header_for(self, pos: float) -> TableSpan | None:
        for t in self.tables:
            if t.header_bottom <= pos < t.bottom and t.header_bottom > t.header_top:
                return t
        return None


def cut_positions(doc: Any, keep_px: float = 0.0) -> tuple[list[float], list[float], list[TableSpan]]:
    """Cut positions of a laid-out document: between text lines outside tables, between
    table rows (never inside one, never right after the header row)."""
    from PySide6.QtGui import QTextCursor
    layout = doc.documentLayout()
    good: set[float] = {0.0}
    fallback: set[float] = set()
    rows: dict[Any, dict[int, list[float]]] = {}
    tables: dict[Any, Any] = {}
    block = doc.begin()
    while block.isValid():
        rect = layout.blockBoundingRect(block)
        tl = block.layout()
        table = QTextCursor(block).currentTable()
        lines = [rect.top() + tl.lineAt(i).y() + tl.lineAt(i).height() for i in range(tl.lineCount())]
        fallback.update(lines)
        if table is None:
            if lines:
                good.update(lines[:-1])
                good.add(rect.bottom())
        else:
            outer = table
            while outer.parentFrame() is not None and outer.parentFrame() is not doc.rootFrame():
                parent = outer.parentFrame()
                if hasattr(parent, "cellAt"):
                    outer = parent
                else:
                    break
            key = outer.firstPosition()
            tables[key] = outer
            cell = outer.cellAt(QTextCursor(block))
            r = cell.row() if cell.isValid() else 0
            span = rows.setdefault(key, {}).setdefault(r, [rect.top(), rect.bottom()])
            span[0] = min(span[0], rect.top())
            span[1] = max(span[1], rect.bottom())
        block = block.next()
    spans = []
    for key, by_row in rows.items():
        table = tables[key]
        frame = layout.frameBoundingRect(table)
        order = sorted(by_row)
        header_rows = table.format().headerRowCount()
        cuts = []
        for a, b in zip(order, order[1:], strict=False):
            cuts.append((a, (by_row[a][1] + by_row[b][0]) / 2))
        first_body = header_rows if header_rows < len(order) else 0
        for row, cut in cuts:
            if row >= first_body:      # at least one body row stays with the header
                good.add(cut)
        good.add(frame.bottom())
        # the line just above a table (a caption, a step's text) stays with it
        good = {g for g in good if not (frame.top() - keep_px < g <= frame.top() + 0.5) or g <= 0}
        header_bottom = cuts[header_rows - 1][1] if 0 < header_rows <= len(cuts) else frame.top()
        spans.append(TableSpan(frame.top(), frame.top(), header_bottom, frame.bottom()))
    height = doc.size().height()
    good = {g for g in good if 0 <= g <= height}
    good.add(height)
    return sorted(good), sorted(fallback), spans


def keep_caption_with_table(flow: Flow) -> None:
    """A table block's caption never ends a page alone: no cut between it and the table."""
    if flow.tables:
        first = flow.tables[0].top
        flow.breaks = [b for b in flow.breaks if b <= 0 or b > first + 1]
