"""A PDF's text as poppler's pdftotext reads it, with the typesetter's ligatures (ﬀ ﬁ ﬂ ﬃ ﬄ) written
out: a run id carries random hex digits, and one with "ff" in it printed as "ﬀ" (about one run in 80)."""
from __future__ import annotations

import subprocess
import unicodedata
from pathlib import Path


def pdf_text(path: Path) -> str:
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True, timeout=60).stdout
    return unicodedata.normalize("NFKC", text)
