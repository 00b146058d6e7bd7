"""One paper size for every print and PDF (issue 15 item 12): from the locale, changeable in the
preferences and with `--paper`; the print preview shows as many pages as the exported PDF has.
Checked on real PDFs with poppler (pdfinfo, pdftotext)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtPrintSupport import QPrinter, QPrintPreviewWidget
from PySide6.QtWidgets import QFileDialog

import resources
from app import preferences
from tests.test_methodology_view import view  # noqa: F401 - the fixture: seed 000's methodology view

pytestmark = pytest.mark.skipif(not shutil.which("pdfinfo"), reason="poppler-utils not installed")
A4_PTS, LETTER_PTS = (595, 842), (612, 792)      # whole points, as pdfinfo rounds them


@pytest.fixture(autouse=True)
def own_state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(preferences.STATE_DIR_ENV, str(tmp_path / "state"))
    monkeypatch.setenv("LC_ALL", "")
    monkeypatch.setenv("LC_PAPER", "")
    monkeypatch.setenv("LANG", "de_DE.UTF-8")


def pdf_pages(path: Path) -> tuple[int, tuple[float, float]]:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    w, h = re.search(r"^Page size:\s+([\d.]+) x ([\d.]+) pts", info, re.M).groups()
    return pages, (round(float(w)), round(float(h)))


def page_footers(path: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout
    return re.findall(r"Page \d+ of \d+", text)


@pytest.mark.parametrize("environ, paper", [
    ({"LANG": "en_US.UTF-8"}, "letter"), ({"LANG": "en_CA.UTF-8"}, "letter"), ({"LANG": "es_MX.UTF-8"}, "letter"),
    ({"LANG": "de_DE.UTF-8"}, "a4"), ({"LANG": "en_GB.UTF-8"}, "a4"), ({"LANG": "C.UTF-8"}, "a4"), ({}, "a4"),
    ({"LANG": "en_US.UTF-8", "LC_PAPER": "fr_FR.UTF-8"}, "a4"), ({"LC_ALL": "en_US", "LC_PAPER": "de_DE"}, "letter"),
])
def test_the_default_paper_follows_the_locale(environ, paper):
    assert preferences.paper_from_locale(environ) == paper


def test_the_chosen_paper_is_kept_in_this_state_directory_only(tmp_path, monkeypatch):
    assert preferences.paper_size() == "a4"               # de_DE
    preferences.set_paper("letter")
    assert preferences.paper_size() == "letter" and preferences.paper_size("A4") == "a4"
    monkeypatch.setenv(preferences.STATE_DIR_ENV, str(tmp_path / "another"))
    assert preferences.paper_size() == "a4"
    (tmp_path / "another").mkdir()
    (tmp_path / "another" / "preferences.json").write_text("{not json", encoding="utf-8")
    assert preferences.paper_size() == "a4"               # a damaged file reads as no choice
    with pytest.raises(ValueError, match="unknown paper size 'tabloid'"):
        preferences.paper_size("tabloid")


@pytest.mark.parametrize("paper, size", [("a4", A4_PTS), ("letter", LETTER_PTS)])
def test_the_print_preview_has_the_pages_of_the_exported_pdf(qtbot, view, tmp_path, monkeypatch, paper, size):
    preferences.set_paper(paper)
    exported = tmp_path / "appendix.pdf"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(exported), "")))
    qtbot.mouseClick(view.export_buttons["pdf"], Qt.MouseButton.LeftButton)
    pages, page_size = pdf_pages(exported)
    assert page_size == size
    assert view.status.text() == f"Wrote {exported} ({pages} pages on {paper.capitalize()})."

    qtbot.mouseClick(view.preview_button, Qt.MouseButton.LeftButton)
    dialog = view._preview
    preview = dialog.findChild(QPrintPreviewWidget)
    qtbot.waitUntil(lambda: preview.pageCount() > 0, timeout=30000)
    assert preview.pageCount() == pages
    # what the preview's Print button sends: the same printer, printed here to a file
    printer = dialog.printer()
    printed = tmp_path / "printed.pdf"
    printer.setOutputFormat(QPrinter.OutputFormat.PdfFormat)
    printer.setOutputFileName(str(printed))
    view._paint(view._appendix(), printer)
    dialog.reject()
    assert pdf_pages(printed) == (pages, size)
    assert page_footers(printed) == page_footers(exported) == [f"Page {n} of {pages}" for n in range(1, pages + 1)]


@pytest.mark.slow
def test_the_command_line_prints_on_the_chosen_paper(tmp_path):
    env = os.environ | {preferences.STATE_DIR_ENV: str(tmp_path / "state"), "LANG": "en_US.UTF-8", "LC_ALL": ""}
    bed = resources.example_path("md3000i-hyperv-cluster")

    def appendix(*extra: str) -> tuple[str, tuple[int, tuple[float, float]]]:
        out = tmp_path / f"out{len(extra)}.pdf"
        r = subprocess.run([sys.executable, "-m", "app.cli", "appendix", str(bed), "-o", str(out), *extra],
                           capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
        return r.stdout, pdf_pages(out)

    said, (_, size) = appendix()
    assert size == LETTER_PTS and "pages on Letter" in said        # en_US
    said, (_, size) = appendix("--paper", "a4")
    assert size == A4_PTS and "pages on A4" in said
    # the paper chosen in the application's preferences, on a Letter locale
    (tmp_path / "state").mkdir(exist_ok=True)
    (tmp_path / "state" / "preferences.json").write_text('{"paper": "a4"}', encoding="utf-8")
    said, (_, size) = appendix("--runs-dir", str(tmp_path / "runs"))
    assert size == A4_PTS and "pages on A4" in said


def test_the_preferences_set_the_paper_of_the_diagram_print_too(qtbot):
    from PySide6.QtGui import QPageLayout, QPageSize
    from PySide6.QtPrintSupport import QPrintDialog

    from tests.dialogs import answer_modal, forget_changes
    from widgets.main_window import MainWindow
    from widgets.preferences_dialog import PreferencesDialog
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.open_path(resources.example_path("md3000i-hyperv-cluster"))

    def choose_letter(dialog):
        assert isinstance(dialog, PreferencesDialog)
        assert dialog.paper.currentText() == "As the locale says (A4 (210 × 297 mm))"     # de_DE
        dialog.paper.setCurrentIndex(dialog.paper.findData("letter"))
        dialog.accept()
    answer_modal(choose_letter)
    window.actions_by_name["preferences"].trigger()
    assert preferences.paper_size() == "letter"

    seen = {}

    def look_and_cancel(dialog):
        assert isinstance(dialog, QPrintDialog)
        layout = dialog.printer().pageLayout()
        seen["paper"], seen["landscape"] = layout.pageSize().id(), layout.orientation()
        dialog.reject()
    answer_modal(look_and_cancel)
    window.actions_by_name["print"].trigger()
    assert seen == {"paper": QPageSize.PageSizeId.Letter, "landscape": QPageLayout.Orientation.Landscape}
    forget_changes(window)
