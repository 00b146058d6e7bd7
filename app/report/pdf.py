"""The appendix painted on a QPdfWriter or a QPrinter: page setup and the writers."""
from __future__ import annotations

import html as _html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMarginsF
from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter, QTextDocument

from app.report.blocks import Appendix
from app.report.pagination import Layout
from app.report.qt_app import ensure_gui_app


def _pdf_writer(path: str | Path, title: str) -> QPdfWriter:
    writer = QPdfWriter(str(path))
    writer.setResolution(300)
    writer.setTitle(title)
    writer.setCreator("Testbed Studio")
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.Letter), QPageLayout.Portrait,
                                     QMarginsF(0.75, 0.6, 0.75, 0.6), QPageLayout.Inch))
    return writer


def _write(path: Path, title: str, lay_out: Callable[[QPdfWriter], Layout]) -> Layout:
    """Lay out on a new PDF writer at `path` and paint every page."""
    writer = _pdf_writer(path, title)
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


def pdf_layout(appendix: Appendix, path: str | Path, *, title: str = "") -> Layout:
    """Write the appendix as a PDF and return its layout (pages, flows, cuts)."""
    ensure_gui_app()
    path = Path(path)
    if not path.parent.is_dir():
        raise OSError(f"folder {path.parent} does not exist")
    return _write(path, title or appendix.running_head, lambda writer: Layout(appendix, writer))


def write_pdf(content: Any, path: str | Path, *, title: str = "") -> int:
    """Write a PDF from an Appendix, an HTML string or a QTextDocument.  Returns pages."""
    ensure_gui_app()
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise OSError(f"folder {path.parent} does not exist")
    if isinstance(content, Appendix):
        return len(pdf_layout(content, path, title=title).pages)
    html = content.toHtml() if isinstance(content, QTextDocument) else str(content)
    m = re.search(r"<title>(.*?)</title>", html, re.S | re.I)
    head = title or (_html.unescape(m.group(1)) if m else "")
    return len(_write(path, head, lambda writer: Layout(None, writer, flows_html=[html], running_head=head)).pages)
