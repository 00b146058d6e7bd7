"""`appendix -o OUT.html`: the page is written all or nothing, never through a symlink at OUT,
and read back and parsed before the command says it wrote it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.report.html_file import html_problem, write_html
from resources import example_path

EXAMPLE = "r710-rhev-hyperv-equallogic"


def _appendix(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "appendix", *args], capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)


def test_the_html_appendix_is_written_whole_and_refuses_a_symlink(tmp_path):
    out = tmp_path / "appendix.html"
    r = _appendix(str(example_path(EXAMPLE)), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert html_problem(out.read_text(encoding="utf-8")) is None
    assert [p.name for p in tmp_path.iterdir()] == ["appendix.html"]        # no temporary file left

    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not to be overwritten\n")
    link = tmp_path / "link.html"
    link.symlink_to(elsewhere)
    r = _appendix(str(example_path(EXAMPLE)), "-o", str(link))
    assert r.returncode == 2 and "symbolic link" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert elsewhere.read_text() == "not to be overwritten\n" and link.is_symlink()


def test_a_page_that_is_not_whole_is_never_written_over_the_last_good_one(tmp_path):
    out = tmp_path / "appendix.html"
    good = ("<!DOCTYPE html>\n<html><head><title>t</title></head><body><table><tr><td>1</td></tr></table>"
            "</body></html>\n")
    write_html(out, good)
    assert out.read_text() == good
    for cut in (good[:60], good.replace("</table>", "</tabel>")):
        with pytest.raises(OSError) as caught:
            write_html(out, cut)
        assert "nothing was written" in str(caught.value) and "line 2" in str(caught.value)
        assert out.read_text() == good
    assert sorted(os.listdir(tmp_path)) == ["appendix.html"]


def test_a_cut_short_or_unbalanced_page_is_named_with_its_line():
    assert html_problem("<html><body><p>x</body></html>") is None         # an end tag HTML lets one leave out
    assert "before </html>" in html_problem("<html><body><table><tr><td>x")
    assert html_problem("<html>\n<body>\n<div></span></div></body></html>").startswith("line 3: </span>")
    assert html_problem(Path(__file__).read_text()) is not None
