"""The appendix painted on a QPdfWriter or a QPrinter: page setup and the writers."""
from __future__ import annotations

import html as _html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMarginsF
from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument

from app.preferences import A4, LETTER, paper_size
from app.report.blocks import Appendix
from app.report.pagination import Layout
from app.report.qt_app import ensure_gui_app

# one resolution for the PDF and the printer: the text is laid out in device pixels, so the
# preview, the print and the exported PDF break their pages at the same lines
LAYOUT_DPI = 300
_PAGE_SIZES = {A4: QPageSize.PageSizeId.A4, LETTER: QPageSize.PageSizeId.Letter}


def page_layout(paper: str | None = None, orientation: QPageLayout.Orientation = QPageLayout.Orientation.Portrait
                ) -> QPageLayout:
    """The page every print and PDF uses: the paper setting (app.preferences) and the margins."""
    return QPageLayout(QPageSize(_PAGE_SIZES[paper_size(paper)]), orientation,
                       QMarginsF(0.75, 0.6, 0.75, 0.6), QPageLayout.Unit.Inch)


def set_up_printer(printer: Any, paper: str | None = None,
                   orientation: QPageLayout.Orientation = QPageLayout.Orientation.Portrait) -> None:
    """A QPrinter on the same page and resolution as the exported PDF (the print dialog may
    still change them: then the printout follows the dialog)."""
    printer.setResolution(LAYOUT_DPI)
    printer.setPageLayout(page_layout(paper, orientation))


def _pdf_writer(path: str | Path, title: str, paper: str | None = None) -> QPdfWriter:
    writer = QPdfWriter(str(path))
    writer.setResolution(LAYOUT_DPI)
    writer.setTitle(title)
    writer.setCreator("Testbed Studio")
    writer.setPageLayout(page_layout(paper))
    return writer


def _write(path: Path, title: str, lay_out: Callable[[QPdfWriter], Layout], paper: str | None = None) -> Layout:
    """Lay out on a new PDF writer at `path` and paint every page."""
    writer = _pdf_writer(path, title, paper)
    layout = lay_out(writer)
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write {path}")
    try:
        layout.paint(painter, writer.newPage)
    finally:
        painter.end()
    del writer     # QPdfWriter finishes the file when it goes away
    if not path.exists():
        raise OSError(f"cannot write {path}")
    return layout


def paint(appendix: Appendix, device: Any) -> int:
    """Lay out and paint the appendix on a QPdfWriter or QPrinter.  Returns the page count."""
    ensure_gui_app()
    layout = Layout(appendix, device)
    painter = QPainter()
    if not painter.begin(device):
        raise OSError("cannot start painting (is the output writable?)")
    try:
        return layout.paint(painter, device.newPage)
    finally:
        painter.end()


def pdf_layout(appendix: Appendix, path: str | Path, *, title: str = "", paper: str | None = None) -> Layout:
    """Write the appendix as a PDF and return its layout (pages, flows, cuts)."""
    ensure_gui_app()
    path = Path(path)
    if not path.parent.is_dir():
        raise OSError(f"folder {path.parent} does not exist")
    return _write(path, title or appendix.running_head, lambda writer: Layout(appendix, writer), paper)


def write_pdf(content: Any, path: str | Path, *, title: str = "", paper: str | None = None) -> int:
    """Write a PDF from an Appendix, an HTML string or a QTextDocument.  Returns pages."""
    ensure_gui_app()
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise OSError(f"folder {path.parent} does not exist")
    if isinstance(content, Appendix):
        return len(pdf_layout(content, path, title=title, paper=paper).pages)
    html = content.toHtml() if isinstance(content, QTextDocument) else str(content)
    m = re.search(r"<title>(.*?)</title>", html, re.S | re.I)
    head = title or (_html.unescape(m.group(1)) if m else "")
    return len(_write(path, head, lambda writer: Layout(None, writer, flows_html=[html], running_head=head),
                      paper).pages)
