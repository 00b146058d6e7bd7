"""The appendix on pages: flows cut between rows and lines, a continued table's header
repeated, headings kept with what follows, running head and "Page N of M" on each page.

Done here rather than by QTextDocument's own paged layout, because that one cuts table
rows in half at page ends.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.report.blocks import Appendix, Block, Heading, ImageBlock, TableBlock, TocBlock
from app.report.diagram_image import diagram_image
from app.report.flows import Flow, TableSpan, cut_positions, keep_caption_with_table, new_document
from app.report.style import BODY_FONT


@dataclass
class _Slice:
    flow: Flow
    top: float
    bottom: float
    y: float
    header: TableSpan | None = None


@dataclass
class _Page:
    slices: list[_Slice] = field(default_factory=list)
    section: str = ""


class Layout:
    """The appendix laid out for one paint device: flows, pages, running heads."""

    def __init__(self, appendix: Appendix | None, device: Any, flows_html: list[str] | None = None,
                 running_head: str = ""):
        self.appendix = appendix
        self.device = device
        self.dpi = device.logicalDpiY()
        page_layout = device.pageLayout() if hasattr(device, "pageLayout") else None
        res = device.resolution() if hasattr(device, "resolution") else self.dpi
        if page_layout is not None:
            # painting coordinates start at the corner of the paint rect (inside the margins)
            paint = page_layout.paintRectPixels(res)
            self.paint_w, self.paint_h = paint.width(), paint.height()
        else:
            self.paint_w, self.paint_h = device.width(), device.height()
        self.px_per_pt = self.dpi / 72.0
        self.head_h = 24 * self.px_per_pt
        self.foot_h = 22 * self.px_per_pt
        self.body_x = 0.0
        self.body_y = self.head_h
        self.body_w = float(self.paint_w)
        self.body_h = float(self.paint_h) - self.head_h - self.foot_h
        self.running_head = running_head or (appendix.running_head if appendix else "")
        self.flows: list[Flow] = []
        self.toc_flow: Flow | None = None
        if appendix is not None:
            for block in appendix.blocks:
                self.flows.append(self._flow(block))
        else:
            for h in flows_html or []:
                self.flows.append(self._html_flow(h, None))
        self.pages = self._paginate()
        self._fill_toc()

    # ---------------------------------------------------------------- flows
    def _html_flow(self, html: str, block: Any) -> Flow:
        doc = new_document(html, self.body_w, self.device)
        breaks, fallback, tables = cut_positions(doc, keep_px=8 * self.px_per_pt)
        flow = Flow(block=block, height=doc.size().height(), doc=doc, breaks=breaks, fallback=fallback, tables=tables)
        if isinstance(block, TableBlock):
            keep_caption_with_table(flow)
        return flow

    def _flow(self, block: Block) -> Flow:
        if isinstance(block, ImageBlock):
            # pixels at no more than 300 dpi: a 1200-dpi printer would otherwise get a 300 MB image
            shrink = min(1.0, 300.0 / self.dpi)
            if block.chart is not None:
                from app.metrics.chart import chart_image
                image = chart_image(block.chart, int(self.body_w * shrink), int(self.body_w * 0.36 * shrink))
            else:
                image = diagram_image(self.appendix.bed, int(self.body_w * shrink), int(self.body_h * 0.85 * shrink),
                                      self.appendix.findings)
            w, h = image.width() / shrink, image.height() / shrink
            caption = new_document(block.html(), self.body_w, self.device)
            height = h + 6 * self.px_per_pt + caption.size().height()
            flow = Flow(block=block, height=height, image=image, doc=caption, breaks=[0.0, height])
            flow.image_size = (w, h)
            return flow
        flow = self._html_flow(block.html(), block)
        if isinstance(block, TocBlock):
            self.toc_flow = flow
        return flow

    # ---------------------------------------------------------------- pagination
    def _paginate(self) -> list[_Page]:
        pages = [_Page()]
        y = 0.0
        section = ""
        flows = self.flows
        for i, flow in enumerate(flows):
            block = flow.block
            if isinstance(block, Heading) and block.level == 1:
                section = block.text
            if block is not None and block.page_break and y > 0:
                pages.append(_Page(section=section))
                y = 0.0
            if not pages[-1].section:
                pages[-1].section = section
            gap = (block.space_before_pt if block is not None else 0) * self.px_per_pt if y > 0 else 0.0
            if block is not None and block.keep_with_next and i + 1 < len(flows) and y > 0:
                nxt = flows[i + 1]
                first = next((b for b in nxt.breaks if b > 0), nxt.height)
                need = gap + flow.height + nxt.block.space_before_pt * self.px_per_pt + first
                if y + need > self.body_h and need <= self.body_h:
                    pages.append(_Page(section=section))
                    y, gap = 0.0, 0.0
            pos = 0.0
            while pos < flow.height - 0.5:
                header = flow.header_for(pos) if pos > 0 else None
                header_h = (header.header_bottom - header.header_top) if header else 0.0
                if header_h > self.body_h / 2:      # a header that fills the page is not repeated
                    header, header_h = None, 0.0
                avail = self.body_h - y - gap - header_h
                if flow.height - pos <= avail:
                    cut = flow.height
                else:
                    fits = [b for b in flow.breaks if pos < b <= pos + avail]
                    cut = fits[-1] if fits else None
                    if cut is None:
                        if y > 0:
                            pages.append(_Page(section=section))
                            y, gap = 0.0, 0.0
                            continue
                        # nothing fits on an empty page: cut at a line, as a last resort anywhere
                        lines = [b for b in flow.fallback if pos < b <= pos + avail]
                        cut = lines[-1] if lines else pos + max(avail, 1.0)
                pages[-1].slices.append(_Slice(flow, pos, cut, y + gap, header))
                y += gap + header_h + (cut - pos)
                gap = 0.0
                pos = cut
                if pos < flow.height - 0.5:
                    pages.append(_Page(section=section))
                    y = 0.0
        if not pages[-1].slices and len(pages) > 1:
            pages.pop()
        return pages

    def _fill_toc(self) -> None:
        if self.toc_flow is None:
            return
        block = self.toc_flow.block
        anchors = {a for _, a in block.entries}
        for n, page in enumerate(self.pages, 1):
            for s in page.slices:
                b = s.flow.block
                if isinstance(b, Heading) and b.anchor in anchors and b.anchor not in block.pages:
                    block.pages[b.anchor] = n
        self.toc_flow.doc = new_document(block.html(), self.body_w, self.device)

    # ---------------------------------------------------------------- painting
    def paint(self, painter: Any, new_page) -> int:
        from PySide6.QtCore import QRectF, Qt
        from PySide6.QtGui import QColor, QFont, QPen
        total = len(self.pages)
        small = QFont(BODY_FONT)
        small.setPointSizeF(7.5)
        for n, page in enumerate(self.pages, 1):
            if n > 1:
                new_page()
            painter.save()
            painter.setFont(small)
            painter.setPen(QColor("#555555"))
            if n > 1:
                head = QRectF(self.body_x, 0, self.body_w, self.head_h - 8 * self.px_per_pt)
                painter.drawText(head, Qt.AlignLeft | Qt.AlignBottom, _elide(self.running_head, 80))
                painter.drawText(head, Qt.AlignRight | Qt.AlignBottom, page.section)
                painter.setPen(QPen(QColor("#9aa4b1"), max(1.0, 0.5 * self.px_per_pt)))
                line_y = self.head_h - 5 * self.px_per_pt
                painter.drawLine(int(self.body_x), int(line_y), int(self.body_x + self.body_w), int(line_y))
                painter.setPen(QColor("#555555"))
            foot = QRectF(self.body_x, self.body_y + self.body_h + 6 * self.px_per_pt, self.body_w,
                          self.foot_h - 6 * self.px_per_pt)
            painter.drawText(foot, Qt.AlignRight | Qt.AlignVCenter, f"Page {n} of {total}")
            painter.drawText(foot, Qt.AlignLeft | Qt.AlignVCenter, "Testbed Studio")
            painter.restore()
            for s in page.slices:
                y = self.body_y + s.y
                if s.header is not None:
                    self._draw_region(painter, s.flow, s.header.header_top, s.header.header_bottom, y)
                    y += s.header.header_bottom - s.header.header_top
                if s.flow.image is not None:
                    self._draw_image(painter, s.flow, y)
                else:
                    self._draw_region(painter, s.flow, s.top, s.bottom, y)
        return total

    def _draw_region(self, painter: Any, flow: Flow, top: float, bottom: float, y: float) -> None:
        from PySide6.QtCore import QRectF
        painter.save()
        painter.translate(self.body_x, y - top)
        # a hair more than the slice so a row's bottom rule is not clipped
        extra = 0.6 * self.px_per_pt if any(t.top < bottom <= t.bottom + 1 for t in flow.tables) else 0.0
        flow.doc.drawContents(painter, QRectF(0, top, self.body_w, bottom - top + extra))
        painter.restore()

    def _draw_image(self, painter: Any, flow: Flow, y: float) -> None:
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QColor, QPen
        img = flow.image
        w, h = flow.image_size
        x = self.body_x + (self.body_w - w) / 2
        target = QRectF(x, y, w, h)
        painter.drawImage(target, img)
        painter.save()
        painter.setPen(QPen(QColor("#9aa4b1"), max(1.0, 0.5 * self.px_per_pt)))
        painter.drawRect(target)
        painter.restore()
        self._draw_region(painter, flow, 0, flow.doc.size().height(), y + h + 6 * self.px_per_pt)


def _elide(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
