"""The person's settings, kept in the state directory: the paper every print and PDF uses, and
the recently opened beds.

One file, `preferences.json`, under the state directory (the platform's, or the folder
TESTBED_STUDIO_STATE_DIR names: tests and a second profile keep their own, and never see
another's recent files).  Read by the window and the command line alike, so `appendix` and
File › Export Appendix print on the same paper.  Qt-free.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

STATE_DIR_ENV = "TESTBED_STUDIO_STATE_DIR"          # overrides the platform's state directory
APP_DIR_NAME = "testbed-studio"
FILE_NAME = "preferences.json"
MAX_BYTES = 256 * 1024                              # a settings file, not a data store

A4, LETTER = "a4", "letter"
PAPER_SIZES = {A4: "A4 (210 × 297 mm)", LETTER: "Letter (8.5 × 11 in)"}
# The territories whose C library locale (glibc localedata, LC_PAPER) prints on Letter: en_US
# and the locales that copy its LC_PAPER (en_CA, es_MX, es_CL, es_CO, tl_PH ...).  Everywhere
# else, and in the C locale, ISO A4.
LETTER_TERRITORIES = frozenset({"US", "CA", "MX", "BO", "CL", "CO", "CR", "GT", "NI", "PA", "PR", "SV", "VE", "PH"})
MAX_RECENT = 8


def state_dir() -> Path:
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_state_dir(APP_DIR_NAME))


def paper_from_locale(environ: Mapping[str, str] | None = None) -> str:
    """The paper the person's locale prints on (LC_ALL, then LC_PAPER, then LANG, as the C library
    reads them): 'letter' for en_US and the territories that copy it, else 'a4'."""
    env = os.environ if environ is None else environ
    name = next((env[v] for v in ("LC_ALL", "LC_PAPER", "LANG") if env.get(v)), "")
    territory = name.split(".")[0].split("@")[0].partition("_")[2].upper()
    return LETTER if territory in LETTER_TERRITORIES else A4


def _path() -> Path:
    return state_dir() / FILE_NAME


def _read() -> dict[str, Any]:
    """The stored settings; a missing, oversized or damaged file reads as none (the defaults)."""
    try:
        path = _path()
        if path.stat().st_size > MAX_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(changes: dict[str, Any]) -> None:
    from topology.project_save import write_atomic
    data = _read() | changes
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def paper_size(explicit: str | None = None) -> str:
    """The paper to print on: the one asked for (`--paper`), else the stored setting, else the locale's."""
    if explicit:
        if explicit.lower() not in PAPER_SIZES:
            raise ValueError(f"unknown paper size {explicit!r}: use {' or '.join(PAPER_SIZES)}")
        return explicit.lower()
    stored = _read().get("paper")
    return stored if stored in PAPER_SIZES else paper_from_locale()


def stored_paper() -> str | None:
    """The paper the person chose in the settings; None while the locale decides."""
    stored = _read().get("paper")
    return stored if stored in PAPER_SIZES else None


def set_paper(paper: str | None) -> None:
    """Keep a paper size; None goes back to the locale's."""
    if paper is not None and paper not in PAPER_SIZES:
        raise ValueError(f"unknown paper size {paper!r}")
    _write({"paper": paper})


def recent_files() -> list[str]:
    value = _read().get("recent_files")
    return [v for v in value if isinstance(v, str)][:MAX_RECENT] if isinstance(value, list) else []


def set_recent_files(paths: list[str]) -> None:
    _write({"recent_files": list(paths)[:MAX_RECENT]})


FINDING_GROUPS = ("error", "warning", "info", "accepted")


def findings_shown() -> dict[str, bool]:
    """Which kinds of finding the validation panel lists (its severity filter), as last left."""
    value = _read().get("findings_shown")
    stored = value if isinstance(value, dict) else {}
    return {k: stored.get(k) is not False for k in FINDING_GROUPS}


def set_findings_shown(shown: dict[str, bool]) -> None:
    _write({"findings_shown": {k: bool(shown.get(k, True)) for k in FINDING_GROUPS}})
