"""The diagram written to a file: PNG, SVG, PDF, draw.io or GraphML.

One code path for the canvas's File › Export and `testbed-studio export`: the canvas passes
the positions it shows (so a file matches the screen), the command line the layout the
canvas opens a bed with.  Every file is written beside its target and renamed over it, so
a failed export never leaves half a file.  QtGui only (PNG, SVG and PDF need a
QGuiApplication for fonts: `app.report.qt_app.ensure_gui_app`).
"""
from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topology.layout import Box, layout
from topology.project_save import write_atomic

FORMATS = ("png", "svg", "pdf", "drawio", "graphml")
SUFFIXES = {"png": ".png", "svg": ".svg", "pdf": ".pdf", "drawio": ".drawio", "graphml": ".graphml"}
FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)", "pdf": "PDF document (*.pdf)",
           "drawio": "draw.io diagram (*.drawio)", "graphml": "GraphML graph (*.graphml)"}
EXPORT_MAX_PIXELS = 120_000_000      # a PNG larger than this is scaled down (memory)


@dataclass
class Exported:
    path: Path
    format: str
    summary: str       # what was written, for a status bar or a terminal


def format_of(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The format asked for, else the one the file name's extension names (else PNG)."""
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"unknown diagram format {fmt!r}: use one of {', '.join(FORMATS)}")
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"xml": "drawio", "yed": "graphml"}.get(suffix, suffix if suffix in FORMATS else "png")


def export_diagram(bed: Any, path: str | os.PathLike, fmt: str | None = None, *,
                   positions: dict[str, Box] | None = None, findings: Iterable[Any] = (),
                   scale: float = 2.0) -> Exported:
    """Write the bed's diagram to `path`.  Raises OSError when it cannot be written."""
    fmt = format_of(path, fmt)
    target = Path(path)
    boxes = positions if positions is not None else layout(bed)
    found = list(findings)
    if fmt == "drawio":
        from app.diagram.drawio import drawio_document
        text, counts = drawio_document(bed, boxes, found)
        well_formed(text.encode("utf-8"), "draw.io")
        write_atomic(target, text.encode("utf-8"), through_symlink=False)
        skipped = f"; {len(counts.skipped)} link(s) with an end not drawn left out" if counts.skipped else ""
        return Exported(target, fmt, f"{counts.devices} devices, {counts.ports} ports, {counts.cables} cables, "
                                     f"{counts.paths} paths without cabling{skipped}")
    if fmt == "graphml":
        from app.diagram.graphml import graphml_document
        text, nodes, edges = graphml_document(bed, boxes)
        well_formed(text.encode("utf-8"), "GraphML")
        write_atomic(target, text.encode("utf-8"), through_symlink=False)
        return Exported(target, fmt, f"{nodes} nodes, {edges} edges")
    from app.report.qt_app import ensure_gui_app
    ensure_gui_app()
    painter_target = {"png": _png, "svg": _svg, "pdf": _pdf}[fmt]
    check = (lambda data: well_formed(data, "SVG")) if fmt == "svg" else None
    summary = _atomically(target, lambda tmp: painter_target(bed, tmp, boxes, found, scale), check)
    return Exported(target, fmt, summary)


def image_size(boxes: dict[str, Box], scale: float) -> tuple[int, int, float]:
    """Pixel width and height of an image of the whole diagram, and the scale it is drawn at."""
    from app.diagram.geometry import content_rect
    from app.diagram.scene import legend_size
    content = content_rect(boxes)
    lw, lh = legend_size()
    w = content.width() + 90 + lw
    h = max(content.height(), lh) + 94
    if w * h * scale * scale > EXPORT_MAX_PIXELS:
        scale = (EXPORT_MAX_PIXELS / (w * h)) ** 0.5
    return max(1, int(w * scale)), max(1, int(h * scale)), scale


def well_formed(data: bytes, what: str) -> None:
    """Parse an XML file back before it is kept: OSError (nothing written) when no program could
    open it, with the line and what is wrong."""
    import xml.etree.ElementTree as ET
    try:
        ET.fromstring(data)
    except ET.ParseError as exc:
        line, column = exc.position
        shown = data.splitlines()[line - 1][max(0, column - 30):column + 30].decode("utf-8", "replace") \
            if 0 < line <= data.count(b"\n") + 1 else ""
        raise OSError(errno.EINVAL, f"the {what} file would not be well-formed XML (line {line}, column "
                                    f"{column + 1}: {str(exc).split(': line')[0]}; near {shown!r}); "
                                    "nothing was written. A text of the bed holds a character XML cannot carry "
                                    "(a control character): remove it") from None


def _atomically(target: Path, write: Callable[[Path], str], check: Callable[[bytes], None] | None = None) -> str:
    if os.path.islink(target):
        raise OSError(errno.ELOOP, f"{target} is a symbolic link: an export is not written through one "
                                   "(remove it or choose another name)")
    real = Path(os.path.realpath(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=real.suffix, dir=real.parent)
    os.close(fd)
    try:
        summary = write(Path(tmp))
        if check is not None:
            check(Path(tmp).read_bytes())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return summary


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _png(bed: Any, path: Path, boxes: dict[str, Box], findings: list, scale: float) -> str:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    from app.diagram.scene import render_bed
    w, h, scale = image_size(boxes, scale)
    image = QImage(w, h, QImage.Format.Format_ARGB32)
    image.setDotsPerMeterX(int(3780 * scale))
    image.setDotsPerMeterY(int(3780 * scale))
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    try:
        render_bed(bed, painter, QRectF(0, 0, w, h), findings, positions=boxes)
    finally:
        painter.end()
    if not image.save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    return f"{w} × {h} px"


def _svg(bed: Any, path: Path, boxes: dict[str, Box], findings: list, scale: float) -> str:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    from app.diagram.scene import render_bed
    w, h, _ = image_size(boxes, 1.0)
    gen = QSvgGenerator()
    gen.setFileName(str(path))
    gen.setSize(QSize(w, h))
    gen.setViewBox(QRectF(0, 0, w, h))
    gen.setTitle(bed.bed.name)
    gen.setDescription("Test-bed diagram exported by Testbed Studio")
    painter = QPainter()
    if not painter.begin(gen):
        raise OSError(f"cannot write {path}")
    try:
        render_bed(bed, painter, QRectF(0, 0, w, h), findings, positions=boxes)
    finally:
        painter.end()
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"cannot write {path}")
    return f"{w} × {h}"


def _pdf(bed: Any, path: Path, boxes: dict[str, Box], findings: list, scale: float) -> str:
    from PySide6.QtCore import QMarginsF, QRectF, QSizeF
    from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter

    from app.diagram.scene import render_bed
    w, h, _ = image_size(boxes, 1.0)
    writer = QPdfWriter(str(path))
    writer.setTitle(bed.bed.name)
    writer.setCreator("Testbed Studio")
    writer.setResolution(144)
    # one page the drawing's shape (points), so it is never squeezed onto a paper size
    size = QPageSize(QSizeF(max(w, 200) * 0.75, max(h, 200) * 0.75), QPageSize.Unit.Point, "diagram")
    writer.setPageLayout(QPageLayout(size, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write {path}")
    try:
        page = writer.pageLayout().paintRectPixels(writer.resolution())
        render_bed(bed, painter, QRectF(0, 0, page.width(), page.height()), findings, positions=boxes)
    finally:
        painter.end()
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"cannot write {path}")
    return "1 page"
