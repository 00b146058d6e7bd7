"""The appendix as a file: a standalone HTML page, Markdown beside its images, or a PDF."""
from __future__ import annotations

import base64
import errno
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from app.metrics.chart import chart_png
from app.report.assembly import build_appendix, methodology_blocks
from app.report.blocks import Appendix, Heading, ImageBlock, guard_blocks
from app.report.diagram_image import diagram_png
from app.report.html import esc, page_html
from app.report.pdf import write_pdf
from app.report.qt_app import ensure_gui_app


def to_html(appendix: Appendix) -> str:
    """A standalone HTML page; the diagram is embedded as a PNG data URI."""
    parts = []
    for block in appendix.blocks:
        if isinstance(block, ImageBlock) and block.chart is not None:
            ensure_gui_app()
            data = base64.b64encode(chart_png(block.chart)).decode("ascii")
            parts.append(f'<p><img class="chart" alt="{esc(block.caption)}" src="data:image/png;base64,{data}"/></p>')
        elif isinstance(block, ImageBlock):
            png = diagram_png(appendix.bed, findings=appendix.findings)
            if png:
                data = base64.b64encode(png).decode("ascii")
                parts.append(f'<p><img class="diagram" alt="{esc(block.caption)}" '
                             f'src="data:image/png;base64,{data}"/></p>')
        parts.append(block.html())
    return page_html(appendix.title + " - " + appendix.running_head, "\n".join(parts))


def to_markdown(appendix: Appendix, *, image_ref: str | None = None, chart_refs: dict | None = None) -> str:
    """`image_ref`: the diagram's file; `chart_refs`: chart block key -> its file."""
    out = []
    for block in appendix.blocks:
        if isinstance(block, ImageBlock) and block.chart is not None:
            ref = (chart_refs or {}).get(block.key)
            if ref:
                out.append(f"![{block.caption}]({ref})")
            out.append(block.markdown())
        elif isinstance(block, ImageBlock):
            if image_ref:
                out.append(f"![{block.caption}]({image_ref})")
            out.append(block.markdown())
        elif isinstance(block, Heading) and block.level == 1:
            out.append(f'<a id="{block.anchor}"></a>\n\n' + block.markdown())
        else:
            out.append(block.markdown())
    return "\n\n".join(out) + "\n"


def methodology_html(methodology: Any) -> str:
    """The procedure alone as a standalone HTML page (for `testbed-studio methodology`); a list
    of procedures (one per configuration) prints each after the other."""
    procedures = methodology if isinstance(methodology, list) else [methodology]
    parts: list[str] = []
    for meth in procedures:
        parts.append(f'<p class="doctitle">Test methodology</p><p class="docsub">{esc(meth.bed_name)}</p>')
        summary = list(getattr(meth, "findings_summary", None) or [])
        incomplete = getattr(meth, "incomplete_note", "")
        banner = meth.banner() if hasattr(meth, "banner") else ""
        if banner or summary or incomplete:
            items = "".join(f"<li>{esc(s)}</li>" for s in summary + ([incomplete] if incomplete else []))
            colour = "#c94c4c" if getattr(meth, "errors", 0) or getattr(meth, "validation_failed", "") \
                else "#c3c8cf"
            parts.append(f'<table class="alert" width="100%" cellspacing="1" cellpadding="6" bgcolor="{colour}"><tr>'
                         f'<td class="alertbox"><p class="alerthead">'
                         f'{esc(banner or "Values the bed does not give are marked «missing»")}</p>'
                         f'<ul>{items}</ul></td></tr></table>')
        parts += [b.html() for b in methodology_blocks(meth)]
    parts += [b.html() for b in guard_blocks([st for meth in procedures for st in meth.steps()], 2, "guards")]
    return page_html(f"Test methodology - {procedures[0].bed_name}", "\n".join(parts))


def write(bed: Any, out: str | Path, fmt: str = "pdf", *, source: str = "", findings: list | None = None,
          methodology: Any = None, runs: Iterable[Any] = (), comparisons: Iterable[Any] = (),
          paper: str | None = None) -> dict:
    """The `appendix` command's work: build and write one format.  Returns figures for the caller."""
    out = Path(out)
    if fmt not in ("pdf", "html", "md"):
        raise ValueError(f"unknown format {fmt!r}: use pdf, html or md")
    if not out.parent.is_dir():
        raise OSError(f"folder {out.parent} does not exist")
    if fmt != "pdf" and os.path.islink(out):
        raise OSError(errno.ELOOP, f"{out} is a symbolic link: an export is not written through one "
                                   "(remove it or choose another name)")
    appendix = build_appendix(bed, findings=findings, methodology=methodology, source=source, runs=runs,
                              comparisons=comparisons)
    result: dict[str, Any] = {"path": str(out), "format": fmt}
    if fmt == "pdf":
        from app.preferences import paper_size
        result["pages"] = write_pdf(appendix, out, paper=paper)
        result["paper"] = paper_size(paper).capitalize()
    elif fmt == "html":
        from app.report.html_file import write_html
        write_html(out, to_html(appendix))
    else:
        image = out.with_name(out.stem + "-diagram.png")
        image.write_bytes(diagram_png(bed, findings=appendix.findings))
        result["image"] = str(image)
        chart_refs = {}
        for block in appendix.blocks:
            if isinstance(block, ImageBlock) and block.chart is not None:
                chart_file = out.with_name(f"{out.stem}-{block.key}.png")
                chart_file.write_bytes(chart_png(block.chart))
                chart_refs[block.key] = chart_file.name
        if chart_refs:
            result["charts"] = len(chart_refs)
        out.write_text(to_markdown(appendix, image_ref=image.name, chart_refs=chart_refs), encoding="utf-8")
    return result
