"""The diagram written out: PNG, SVG and the printer, drawn by app/diagram.py from the bed with
the devices where the canvas shows them.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QFileDialog

from app import diagram

EXPORT_MAX_PIXELS = 120_000_000      # an export larger than this is scaled down (memory)


class DiagramExport:
    """Canvas part: export and print."""

    def _export_rect_size(self, scale: float) -> tuple[QSize, float]:
        boxes = self.current_boxes()
        content = diagram.content_rect(boxes)
        lw, lh = diagram.legend_size()
        w = content.width() + 90 + lw
        h = max(content.height(), lh) + 94
        if w * h * scale * scale > EXPORT_MAX_PIXELS:
            scale = (EXPORT_MAX_PIXELS / (w * h)) ** 0.5
        return QSize(max(1, int(w * scale)), max(1, int(h * scale))), scale

    def export_png(self, path: str | Path, scale: float = 2.0) -> QSize:
        """Write the diagram as a PNG at `scale` pixels per scene unit; returns the image size."""
        size, scale = self._export_rect_size(scale)
        image = QImage(size, QImage.Format.Format_ARGB32)
        image.setDotsPerMeterX(int(3780 * scale))
        image.setDotsPerMeterY(int(3780 * scale))
        image.fill(QColor("#ffffff"))
        painter = QPainter(image)
        try:
            diagram.render_bed(self.bed, painter, QRectF(0, 0, size.width(), size.height()),
                               self._findings(), positions=self.current_boxes())
        finally:
            painter.end()
        if not image.save(str(path), "PNG"):
            raise OSError(f"cannot write {path}")
        return size

    def export_svg(self, path: str | Path) -> None:
        from PySide6.QtSvg import QSvgGenerator
        size, _ = self._export_rect_size(1.0)
        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(size)
        gen.setViewBox(QRectF(0, 0, size.width(), size.height()))
        gen.setTitle(self.bed.bed.name)
        gen.setDescription("Test-bed diagram exported by Testbed Studio")
        painter = QPainter()
        if not painter.begin(gen):
            raise OSError(f"cannot write {path}")
        try:
            diagram.render_bed(self.bed, painter, QRectF(0, 0, size.width(), size.height()),
                               self._findings(), positions=self.current_boxes())
        finally:
            painter.end()
        if not Path(path).is_file():
            raise OSError(f"cannot write {path}")

    def _findings(self) -> list:
        return list(getattr(getattr(self.document, "validation", None), "findings", []) or [])

    def _default_name(self, suffix: str) -> str:
        doc_path = getattr(self.document, "path", None)
        stem = Path(doc_path).stem if doc_path else (self.bed.bed.name or "test bed")
        folder = Path(doc_path).parent if doc_path else Path.home()
        return str(folder / f"{stem} diagram.{suffix}")

    def export_png_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export diagram as PNG", self._default_name("png"),
                                              "PNG image (*.png)")
        if not path:
            return
        if not path.lower().endswith(".png"):
            path += ".png"
        try:
            size = self.export_png(path)
        except OSError as exc:
            self.say(f"Export failed: {exc}")
            return
        self.say(f"Exported {path} ({size.width()} × {size.height()} px)")

    def export_svg_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export diagram as SVG", self._default_name("svg"),
                                              "SVG drawing (*.svg)")
        if not path:
            return
        if not path.lower().endswith(".svg"):
            path += ".svg"
        try:
            self.export_svg(path)
        except OSError as exc:
            self.say(f"Export failed: {exc}")
            return
        self.say(f"Exported {path}")

    def print_dialog(self) -> None:
        from PySide6.QtGui import QPageLayout
        from PySide6.QtPrintSupport import QPrintDialog, QPrinter

        from app.report.pdf import set_up_printer
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        set_up_printer(printer, orientation=QPageLayout.Orientation.Landscape)    # the paper every print uses
        printer.setDocName(self.bed.bed.name or "test bed")
        dialog = QPrintDialog(printer, self)
        if dialog.exec() != QPrintDialog.DialogCode.Accepted:
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
