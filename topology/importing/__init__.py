"""Bringing hosts into a bed from the files labs already keep: a CSV sheet of hosts, ports and
addresses (`csv_hosts`), an Ansible inventory (`ansible_inventory`).  Each reader gives host
records with the line each value came from; `plan` turns them into one reversible edit (one
undo step in the GUI), a dry-run list of changes, or file:line problems, and nothing is
half-imported.  The GUI's File › Import and `testbed-studio import` both call `plan_file`."""
from __future__ import annotations

import codecs
import os
from pathlib import Path

from topology.errors import Problem
from topology.importing.plan import ImportPlan, plan_records
from topology.model import Bed

MAX_BYTES = 50 * 1024 * 1024


def format_of(path: str | os.PathLike, fmt: str | None = None, text: str = "") -> str:
    """csv or ansible: as asked, else `.csv` and `.tsv` files are CSV; any other file is CSV when
    its first line is a sheet's header (`host` and another documented column: Excel's Unicode
    Text is `.txt`), else an inventory."""
    if fmt:
        return fmt
    if Path(path).suffix.lower() in (".csv", ".tsv"):
        return "csv"
    from topology.importing.csv_hosts import COLUMNS, column_name, separator
    first = next((line for line in text.lstrip("\ufeff").splitlines() if line.strip()), "")
    if "=" not in first and not first.lstrip().startswith(("[", "#", ";", "---")):
        names = {column_name(cell.strip('"')) for cell in first.split(separator(first))}
        if "host" in names and len(names & set(COLUMNS)) >= 2:
            return "csv"
    return "ansible"


def plan_file(bed: Bed, path: str | os.PathLike, fmt: str | None = None) -> ImportPlan:
    """What importing the file would change in `bed` (nothing is changed here)."""
    records, problems = read_records(path, fmt)
    name = str(path)
    if problems:
        return ImportPlan(name, problems=problems)
    if not records:
        return ImportPlan(name, problems=[Problem("the file names no host", "add at least one host")])
    return plan_records(bed, records, Path(path).name)


def read_records(path: str | os.PathLike, fmt: str | None = None) -> tuple[list, list[Problem]]:
    """The file's host records, or the problems that stop it (each with its line)."""
    from topology.importing.ansible_inventory import read_inventory
    from topology.importing.csv_hosts import read_csv
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            return [], [Problem(f"the file is larger than {MAX_BYTES // 2**20} MB", "import it in parts")]
        raw = p.read_bytes()
        # Excel's "Unicode Text" is UTF-16 with its byte-order mark
        text = raw.decode("utf-16") if raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else \
            raw.decode("utf-8-sig")
    except OSError as exc:
        return [], [Problem(f"cannot read the file: {exc.strerror or exc}", "check the path and its permissions")]
    except UnicodeDecodeError as exc:
        # Excel's plain "CSV" is in the Windows code page: say where, and which save gives UTF-8
        line = raw[:exc.start].count(b"\n") + 1
        shown = raw[raw.rfind(b"\n", 0, exc.start) + 1:exc.end + 20].split(b"\n")[0].decode("utf-8", "replace")
        return [], [Problem(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} in {shown.strip()!r}",
                            "save the file as UTF-8 (in Excel: Save As › CSV UTF-8)", line)]
    reader = read_csv if format_of(p, fmt, text) == "csv" else read_inventory
    return reader(text)


__all__ = ["ImportPlan", "format_of", "plan_file", "read_records"]
