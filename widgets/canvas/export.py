"""The diagram written out (PNG, SVG, PDF, draw.io, GraphML through app/diagram/export.py, the
command line's code path too) and printed, with the devices where the canvas shows them.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QFileDialog

from app import diagram
from app.diagram.export import FILTERS, SUFFIXES, Exported, export_diagram, image_size
from widgets.lifetimes import exec_once


class DiagramExport:
    """Canvas part: export and print."""

    def export_to(self, path: str | Path, fmt: str | None = None) -> Exported:
        """Write the diagram as the canvas shows it (positions, findings badges)."""
        return export_diagram(self.bed, path, fmt, positions=self.current_boxes(), findings=self._findings())

    def export_png(self, path: str | Path, scale: float = 2.0) -> QSize:
        """Write the diagram as a PNG at `scale` pixels per scene unit; returns the image size."""
        export_diagram(self.bed, path, "png", positions=self.current_boxes(), findings=self._findings(), scale=scale)
        w, h, _ = image_size(self.current_boxes(), scale)
        return QSize(w, h)

    def export_svg(self, path: str | Path) -> None:
        self.export_to(path, "svg")

    def _findings(self) -> list:
        return list(getattr(getattr(self.document, "validation", None), "findings", []) or [])

    def _default_name(self, suffix: str) -> str:
        doc_path = getattr(self.document, "path", None)
        stem = Path(doc_path).stem if doc_path else (self.bed.bed.name or "test bed")
        folder = Path(doc_path).parent if doc_path else Path.home()
        return str(folder / f"{stem} diagram.{suffix}")

    def export_dialog(self, fmt: str) -> None:
        """Ask for a file name, then write the diagram in `fmt` (png, svg, pdf, drawio, graphml)."""
        suffix = SUFFIXES[fmt]
        title = {"drawio": "draw.io", "graphml": "GraphML"}.get(fmt, fmt.upper())
        path, _ = QFileDialog.getSaveFileName(self, f"Export diagram as {title}", self._default_name(suffix[1:]),
                                              FILTERS[fmt])
        if not path:
            return
        if not path.lower().endswith(suffix):
            path += suffix
        try:
            done = self.export_to(path, fmt)
        except OSError as exc:
            self.say(f"Export failed: {exc.strerror or exc}")
            return
        self.say(f"Exported {path} ({done.summary})")

    def export_png_dialog(self) -> None:
        self.export_dialog("png")

    def export_svg_dialog(self) -> None:
        self.export_dialog("svg")

    def export_pdf_dialog(self) -> None:
        self.export_dialog("pdf")

    def export_drawio_dialog(self) -> None:
        self.export_dialog("drawio")

    def export_graphml_dialog(self) -> None:
        self.export_dialog("graphml")

    def print_dialog(self) -> None:
        from PySide6.QtGui import QPageLayout
        from PySide6.QtPrintSupport import QPrintDialog, QPrinter

        from app.report.pdf import set_up_printer
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        set_up_printer(printer, orientation=QPageLayout.Orientation.Landscape)    # the paper every print uses
        printer.setDocName(self.bed.bed.name or "test bed")
        dialog = QPrintDialog(printer, self)
        if exec_once(dialog) != QPrintDialog.DialogCode.Accepted:
            return
        self.print_to(printer)
        self.say("Sent the diagram to the printer")

    def print_to(self, printer) -> None:
        painter = QPainter()
        if not painter.begin(printer):
            self.say("The printer could not start")
            return
        try:
            page = printer.pageLayout().paintRectPixels(printer.resolution())
            diagram.render_bed(self.bed, painter, QRectF(0, 0, page.width(), page.height()),
                               self._findings(), positions=self.current_boxes())
        finally:
            painter.end()
