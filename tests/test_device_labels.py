"""Device labels are not cut (issue 15 leftover): a box grows to fit the labels under its name
(up to a limit), a label longer than that ends in a deliberate "…", the canvas tooltip gives
the whole text, and the exported SVG shows the same."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import unescape

import pytest
from PySide6.QtCore import QPointF

import resources
from app.document import Document
from app.selection import Selection
from topology.device_face import LABEL_MAX_W, array_line, server_lines
from topology.fileformat import load
from widgets.canvas.view import Canvas

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def canvas(qtbot):
    doc = Document()
    c = Canvas(doc, Selection())
    qtbot.addWidget(c)
    c.resize(1400, 900)
    c.show()
    return c


def svg_texts(path) -> list[str]:
    return [(t.text or "").strip() for t in ET.parse(path).getroot().iter(f"{SVG}text") if (t.text or "").strip()]


def tooltip(canvas: Canvas, ident: str) -> str:
    item = canvas.devices[ident]
    html = canvas._tooltip(item.mapToScene(QPointF(item.w / 2, 14)))
    return unescape(re.sub(r"<[^>]+>", "\n", html))


def test_the_windows_server_label_is_whole_on_the_canvas_and_in_the_svg(canvas, tmp_path):
    bed = load(resources.example_path("ams2500-exchange-esrp"))
    canvas.document.replace(bed, None)
    server = next(s for s in bed.servers if "Enterprise" in s.os)
    item = canvas.devices[server.id]
    assert item.w > 140, "the box grew to fit its labels"
    path = tmp_path / "ams.svg"
    canvas.export_svg(path)
    texts = svg_texts(path)
    assert texts.count("Microsoft Windows Server 2008 R2 Enterprise") == sum(
        1 for s in bed.servers if s.os == "Microsoft Windows Server 2008 R2 Enterprise")
    # nothing cut mid-word without saying so: every shortened label ends in "…" and starts a real one
    labels = {t for s in bed.servers for t in (*server_lines(s), s.id)} | {array_line(a) for a in bed.arrays}
    for text in texts:
        if text.endswith("…"):
            assert any(label.startswith(text[:-1]) for label in labels if label), text
    assert "Microsoft Windows Server 2008 R2 Enterprise" in tooltip(canvas, server.id)


def test_a_label_longer_than_any_box_ends_in_a_deliberate_ellipsis(canvas, tmp_path):
    bed = load(resources.example_path("md3000i-hyperv-cluster"))
    long_os = "Windows Server 2008 R2 Datacenter with Service Pack 1 and the Hyper-V role, as the report " \
              "states it in its configuration table"
    host = bed.servers[0]
    host.os = long_os
    canvas.document.replace(bed, None)
    assert canvas.devices[host.id].w == LABEL_MAX_W
    path = tmp_path / "long.svg"
    canvas.export_svg(path)
    shortened = [t for t in svg_texts(path) if t.endswith("…") and long_os.startswith(t[:-1])]
    assert len(shortened) == 1 and len(shortened[0]) < len(long_os)
    assert long_os in tooltip(canvas, host.id).replace("\n", "")
