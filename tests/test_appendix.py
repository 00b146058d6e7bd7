"""The printed appendices as a reader gets them: PDF read back with poppler, HTML parsed,
Markdown read as text.  Every example bed prints in all three formats; the pages carry the
report tables and the bed's values; no table row is cut at a page end and a continued
table repeats its header; a bed with errors and gaps still prints with the gaps marked."""
from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import resources
from app.report.assembly import build_appendix
from app.report.blocks import Heading, TableBlock
from app.report.export import methodology_html, to_html, to_markdown
from app.report.pdf import pdf_layout, write_pdf
from app.report.tables.model import MISSING_MARK
from app.report.tables.results import results_tables
from topology.fileformat import load, loads

ROOT = Path(__file__).resolve().parent.parent
SEED000 = "md3000i-hyperv-cluster"
SEED001 = "equallogic-ps6110-hyperv"
SEED002 = "ams2500-exchange-esrp"

# values each seed's published appendices print, which the generated ones must print too
EXPECTED = {
    SEED000: ["192.168.130.101", "192.168.131.211", "PowerEdge R710", "RAID 10", "RAID 1", "MD3000-Cluster",
              "PowerConnect 5448", "Xeon X5570", "07.35.22.61", "Appendix E: Storage layout", "EMPTY"],
    SEED001: ["PS6110XV", "S4810", "PowerEdge R720", "RAID 6", "E5-2665"],
    SEED002: ["RG53", "SUN168", "Brocade 5320", "RKA31", "Pool 0", "DPVOL159"],
}

BROKEN_BED = """\
format_version: 1
bed:
  name: half-drawn bed
servers:
  - id: h1
    role: hypervisor
    adapters:
      - name: nic
        ports:
          - {name: san1, roles: [iscsi]}
          - {name: san2, roles: [iscsi], address: 10.1.0.11/24}
  - id: h2
    role: hypervisor
    cpu: {sockets: 2}
    adapters:
      - name: nic
        ports:
          - {name: san1, roles: [iscsi], address: 10.1.0.11/24}
arrays:
  - id: arr
    controllers:
      - name: c0
        ports:
          - {name: p0, roles: [iscsi]}
    enclosures:
      - name: e0
        slots: 6
        disks:
          - {slots: 0-3, size_gb: 600}
    disk_groups:
      - {name: g1, raid: raid5, members: [e0:0-1]}
    volumes:
      - {name: v2, group: g1, size_gb: 5000}
workloads:
  - id: w1
    tool: fio
run_plan: {repetitions: 3, score: median}
results:
  - {workload: w1, metric: iops, value: 10}
  - {workload: w1, metric: iops, value: 30}
  - {workload: w1, metric: iops, value: 20}
"""


@pytest.fixture(autouse=True)
def _widgets_app(qapp):
    """The QApplication pytest-qt makes, so that later widget tests in this process find one
    (app.report would otherwise start a plain QGuiApplication)."""
    return qapp


def pdftext(path: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True, timeout=60).stdout


def pages_of(text: str) -> list[str]:
    return text.split("\f")


@pytest.fixture(scope="module")
def printed(tmp_path_factory, qapp):
    """Every example bed printed once in every format."""
    out = {}
    base = tmp_path_factory.mktemp("appendix")
    for name in resources.example_names():
        bed = load(resources.example_path(name))
        appendix = build_appendix(bed, source=f"{name}.yaml")
        pdf = base / f"{name}.pdf"
        layout = pdf_layout(appendix, pdf, paper="letter")     # the seeds were printed on Letter
        pages = len(layout.pages)
        html = to_html(appendix)
        md = to_markdown(appendix, image_ref=f"{name}-diagram.png")
        out[name] = {"bed": bed, "appendix": appendix, "layout": layout, "pdf": pdf, "pages": pages,
                     "text": pdftext(pdf),
                     "html": html, "md": md}
    return out


# ---------------------------------------------------------------------------- PDF

@pytest.mark.slow
@pytest.mark.parametrize("name", [SEED000, SEED001, SEED002])
def test_pdf_prints_the_report_values(printed, name):
    text = printed[name]["text"]
    missing = [v for v in EXPECTED[name] if v not in text]
    assert not missing, f"{name}: the PDF lacks {missing}"
    for letter in "ABCDEF":
        assert f"Appendix {letter}:" in text


def test_pdf_page_count_and_numbers(printed):
    for name, p in printed.items():
        pages = [pg for pg in pages_of(p["text"]) if pg.strip()]
        assert len(pages) == p["pages"], name
        assert f"Page 1 of {p['pages']}" in pages[0]
        assert f"Page {p['pages']} of {p['pages']}" in pages[-1]
    assert 8 <= printed[SEED000]["pages"] <= 90
    assert 30 <= printed[SEED002]["pages"] <= 250
    # the contents page gives the page an appendix really starts on
    pages = pages_of(printed[SEED000]["text"])
    start = int(re.search(r"Appendix D: Storage \S+\s+(\d+)", pages[0]).group(1))
    assert start == 1 + min(i for i, pg in enumerate(pages) if i > 0 and "Appendix D: Storage" in pg)


def test_pdf_pages_render(printed, tmp_path):
    p = printed[SEED000]
    last = p["pages"]
    for first, final in ((1, 4), (last - 1, last)):
        subprocess.run(["pdftoppm", "-r", "60", "-png", "-f", str(first), "-l", str(final), str(p["pdf"]),
                        str(tmp_path / "page")], check=True, timeout=120)
    pngs = sorted(tmp_path.glob("page-*.png"))
    assert len(pngs) == 6
    assert all(f.stat().st_size > 3000 for f in pngs)     # not blank


def test_configuration_tables_follow_the_report_rows(printed):
    text = printed[SEED000]["text"]
    for row in ("Number of processor packages", "Number of cores per processor package",
                "Number of hardware threads per core", "Total RAM in system (GB)", "BIOS settings",
                "Storage connectivity", "Number of storage controllers", "Total number of disks tested in solution",
                "Frame size (MTU)", "Flow control", "iSCSI optimization"):
        assert row in text.replace("ﬁ", "fi").replace("ﬂ", "fl"), row
    # the two R710s share one column, as Figure 10 prints them
    assert re.search(r"Servers\s+R710-1, R710-2", text)


def test_long_tables_repeat_their_header_on_every_page(printed):
    pages = pages_of(printed[SEED002]["text"])
    with_volumes = [pg for pg in pages if "Appendix D: Storage" in pg and re.search(r"^\s*DPVOL\d+", pg, re.M)]
    assert len(with_volumes) > 3
    for pg in with_volumes:
        assert re.search(r"Volume\s+In\s+Size \(GB\)", pg), pg[:400]


def _row_spans(doc):
    """(top, bottom) of every table row's content, in document coordinates."""
    from PySide6.QtGui import QTextCursor
    layout = doc.documentLayout()
    spans = {}
    block = doc.begin()
    while block.isValid():
        table = QTextCursor(block).currentTable()
        if table is not None:
            cell = table.cellAt(QTextCursor(block))
            rect = layout.blockBoundingRect(block)
            key = (table.firstPosition(), cell.row())
            top, bottom = spans.get(key, (rect.top(), rect.bottom()))
            spans[key] = (min(top, rect.top()), max(bottom, rect.bottom()))
        block = block.next()
    return list(spans.values())


def test_no_table_row_is_cut_at_a_page_end(printed):
    layout = printed[SEED002]["layout"]
    cuts = 0
    for page in layout.pages:
        for s in page.slices:
            if s.flow.doc is None or s.flow.image is not None:
                continue
            for top, bottom in _row_spans(s.flow.doc):
                for edge in (s.top, s.bottom):
                    assert not (top + 0.5 < edge < bottom - 0.5), \
                        f"a row ({top:.0f}-{bottom:.0f}) is cut at {edge:.0f} in {s.flow.block}"
            cuts += s.bottom < s.flow.height - 0.5
    assert cuts > 10      # the check did see tables continued over pages
    # a heading is never the last thing on a page
    for page in layout.pages:
        last = page.slices[-1].flow.block if page.slices else None
        assert not isinstance(last, Heading), last


def test_slot_map_colours_every_group_and_marks_empty_slots(printed):
    appendix = printed[SEED000]["appendix"]
    slot_tables = [b.table for b in appendix.blocks if isinstance(b, TableBlock) and b.table.kind == "slotmap"]
    assert len(slot_tables) == 1
    cells = slot_tables[0].rows[0].cells[1:]
    assert len(cells) == 15
    by_group = {}
    for c in cells:
        by_group.setdefault(c.text.split("\n")[1], set()).add(c.fill)
    assert set(by_group) == {"SQL", "Exchange", "Logs", "OS", "EMPTY"}
    assert all(len(f) == 1 for f in by_group.values())          # one colour per group
    assert len({next(iter(f)) for f in by_group.values()}) == 5  # and a different one each
    html = printed[SEED000]["html"]
    assert "background-color: #aec7e8" in html


def test_results_take_the_median_of_the_runs(printed):
    bed = loads(BROKEN_BED)
    [table] = results_tables(bed)
    assert table.columns == ["Metric", "Value", "Runs"]      # no scenarios, levels or subjects: no such columns
    assert [c.text for c in table.rows[0].cells] == ["IOPS", "20", "median of 3"]   # of 10, 30 and 20
    text = printed[SEED000]["text"]
    assert re.search(r"optimized\s+200 users\s+SQL2008\s+OPM\s+760 OPM", text)
    assert re.search(r"500 users\s+SQL2008\s+OPM\s+1,878 OPM", text)


# ---------------------------------------------------------------------------- HTML and Markdown

class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.depth = 0
        self.tables = 0
        self.cells = []
        self.images = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.depth += 1
            self.tables += 1
        elif tag in ("td", "th"):
            self._in_cell = True
            self.cells.append("")
        elif tag == "img":
            self.images.append(dict(attrs).get("src", ""))

    def handle_endtag(self, tag):
        if tag == "table":
            self.depth -= 1
        elif tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data):
        if self._in_cell:
            self.cells[-1] += data


@pytest.mark.parametrize("name", [SEED000, SEED002])
def test_html_parses_and_holds_the_tables(printed, name):
    html = printed[name]["html"]
    parser = _Tables()
    parser.feed(html)
    parser.close()
    assert parser.depth == 0
    assert parser.tables > 10
    joined = "\n".join(parser.cells)
    for value in EXPECTED[name]:
        if not value.startswith("Appendix"):
            assert value in joined or value in html, value
    assert parser.images and parser.images[0].startswith("data:image/png;base64,")
    assert html.lstrip().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("name", [SEED000, SEED002])
def test_markdown_has_the_tables(printed, name):
    md = printed[name]["md"]
    assert md.count("\n|---|") > 10
    for value in EXPECTED[name]:
        assert value in md, value
    assert "![Figure C.1" in md and f"({name}-diagram.png)" in md
    # every table row has as many cells as its header
    for block in re.findall(r"(\| .*\|\n\|(?:---\|)+\n(?:\|.*\|\n?)*)", md):
        lines = [ln for ln in block.strip().split("\n")]
        width = lines[1].count("---|")
        for ln in lines[2:]:
            assert len(re.split(r"(?<!\\)\|", ln)) - 2 == width, ln


# ---------------------------------------------------------------------------- errors and gaps

def test_a_bed_with_errors_prints_with_findings_on_top_and_gaps_marked(tmp_path):
    bed = loads(BROKEN_BED)
    appendix = build_appendix(bed)
    pdf = tmp_path / "broken.pdf"
    write_pdf(appendix, pdf)
    text = pdftext(pdf)
    first = pages_of(text)[0]
    assert "Design review: this test bed has 4 error(s)" in first
    for code in ("NET-007", "RAID-001", "RAID-007", "WL-002"):
        assert code in first
    assert text.count(MISSING_MARK) >= 5          # cpu, memory, OS, model, address of h1:san1
    assert re.search(r"san1\s+\[not set\]", text)     # the port without its address
    html = to_html(appendix)
    assert 'class="missing"' in html and "Design review" in html
    md = to_markdown(appendix)
    assert f"**{MISSING_MARK}**" in md and "NET-007" in md


def test_dangling_references_do_not_stop_printing(tmp_path):
    """A bed being edited can point at things that are gone; it still prints."""
    bed = copy.deepcopy(load(resources.example_path(SEED000)))
    array = bed.arrays[0]
    array.volumes[0].group = "no-such-group"
    array.disk_groups[0].members.append("E9:0-3")
    array.disk_groups[1].members.append("not a range")
    array.mappings[0].to = "nobody"
    array.spares.append("E0:99")
    bed.workloads[0].targets.append("ghost")
    bed.clusters[0].nodes.append("R710-9")
    bed.links[0].b = "missing-switch"
    bed.servers[0].cpu = None
    bed.servers[0].adapters[0].ports[0].network = "gone"
    bed.results[0].workload = "nosuch"
    appendix = build_appendix(bed)
    assert write_pdf(appendix, tmp_path / "dangling.pdf") > 5
    assert "no-such-group" in to_html(appendix)
    assert "|" in to_markdown(appendix)


def test_write_pdf_from_html_keeps_rows_whole_and_repeats_the_header(tmp_path):
    rows = "".join(f"<tr><td>row {i}</td><td>{'text ' * (i % 9 + 1)}<br/>second line</td></tr>" for i in range(300))
    html = (f"<html><head><title>Long table</title></head><body><h1>Long table</h1>"
            f"<table border='1'><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>"
            f"</body></html>")
    pdf = tmp_path / "html.pdf"
    pages = write_pdf(html, pdf)
    assert pages >= 5
    text_pages = [pg for pg in pages_of(pdftext(pdf)) if pg.strip()]
    assert len(text_pages) == pages
    for pg in text_pages:
        assert re.search(r"Name\s+Value", pg)
        # every row that starts on a page ends on it: its "second line" follows on the same page
        starts = len(re.findall(r"^\s*row \d+", pg, re.M))
        assert starts == pg.count("second line")


def test_methodology_html_is_a_page_of_its_own():
    from topology.methodology import Command, Methodology, Section, Step
    m = Methodology(bed_name="demo", sections=[Section(number="1", title="Network adapters", steps=[
        Step(number="1.1", text="Set SAN1 on «missing: h1 address» to MTU 9000", target="h1",
             automation=[Command(shell="powershell", script="Set-NetAdapterAdvancedProperty -Name 'SAN1'",
                                 verify="Get-NetAdapter 'SAN1'", platform="windows")],
             unresolved=["h1:SAN1 address"])])], findings_summary=["ERROR NET-007: duplicate address"])
    html = methodology_html(m)
    parser = _Tables()
    parser.feed(html)
    assert parser.depth == 0
    assert "Set-NetAdapterAdvancedProperty -Name &#x27;SAN1&#x27;" in html
    assert '<span class="miss">«missing: h1 address»</span>' in html
    assert "NET-007" in html and "Unresolved: h1:SAN1 address" in html


# ---------------------------------------------------------------------------- command line

def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=120)


def test_cli_writes_pdf_without_a_display(tmp_path):
    out = tmp_path / "seed000.pdf"
    res = _cli("appendix", str(resources.example_path(SEED000)), "-o", str(out), tmp_path=tmp_path)
    assert res.returncode == 0, res.stderr
    assert re.search(r"wrote .*seed000.pdf \(pdf, \d+ pages on (A4|Letter)\)", res.stdout)
    assert out.read_bytes().startswith(b"%PDF")
    assert "192.168.130.101" in pdftext(out)


def test_cli_markdown_and_html_formats(tmp_path):
    md = tmp_path / "out.md"
    res = _cli("appendix", str(resources.example_path(SEED000)), "-o", str(md), tmp_path=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "| **R710-1** |" in md.read_text()
    assert (tmp_path / "out-diagram.png").read_bytes().startswith(b"\x89PNG")
    other = tmp_path / "appendix.txt"
    res = _cli("appendix", str(resources.example_path(SEED000)), "-o", str(other), "--format", "html",
               tmp_path=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "<table" in other.read_text()


def test_cli_reports_bad_input_and_unwritable_output(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- not a bed\n")
    res = _cli("appendix", str(bad), "-o", str(tmp_path / "x.pdf"), tmp_path=tmp_path)
    assert res.returncode == 2 and "bad.yaml:1" in res.stderr and "Traceback" not in res.stderr
    res = _cli("appendix", str(resources.example_path(SEED000)), "-o", str(tmp_path / "no" / "dir" / "x.pdf"),
               tmp_path=tmp_path)
    assert res.returncode == 2 and "cannot write" in res.stderr and "Traceback" not in res.stderr


def test_rows_and_headers_taller_than_a_page_still_print(tmp_path):
    big = "<br/>".join(f"line {i}" for i in range(400))
    html = (f"<table border='1'><thead><tr><th>{big}</th></tr></thead>"
            f"<tbody><tr><td>{big}</td></tr><tr><td>last row</td></tr></tbody></table>")
    pdf = tmp_path / "huge.pdf"
    pages = write_pdf(html, pdf)
    text = pdftext(pdf)
    assert pages >= 8 and "last row" in text
    assert text.count("line 399") == 2       # each long row whole, cut only between its lines
