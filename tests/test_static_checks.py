"""Lint and type checks as part of the suite: ruff over the whole repository, mypy over the
packages pyproject.toml names, both with the project's own configuration."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PYPROJECT = ROOT / "pyproject.toml"

RUFF_CLEAN = ["."]


def _run(tool: str, *args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    exe = BIN / tool
    assert exe.exists(), f"{exe} is missing: it comes with the `test` extra (make setup)"
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _report(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_ruff_passes_on_the_clean_parts():
    proc = _run("ruff", "check", "--no-fix", "--output-format", "concise", *RUFF_CLEAN)
    assert proc.returncode == 0, _report(proc)


def test_mypy_passes_on_the_configured_packages():
    proc = _run("mypy", timeout=600)
    assert proc.returncode == 0, _report(proc)
    assert "Success: no issues found" in proc.stdout, _report(proc)


_SLOPPY = textwrap.dedent("""\
    import os
    from typing import Optional


    def label(name: Optional[str]) -> str:
        return name or ""


    def width(text: str = None) -> int:
        return len(text)


    def untyped(rows):
        total: int = "none"
        return [r for r in rows], total
""")


def test_the_configuration_catches_what_it_is_meant_to(tmp_path):
    """The gates above are only as good as the configuration: an empty rule selection or a
    lax mypy setting would let them pass on anything.  A module with one mistake of each
    kind is checked with the project's configuration, and every mistake must be reported."""
    module = tmp_path / "sloppy.py"
    module.write_text(_SLOPPY, encoding="utf-8")

    ruff = _run("ruff", "check", "--no-fix", "--no-cache", "--output-format", "concise",
                "--config", str(PYPROJECT), str(module), cwd=tmp_path)
    assert ruff.returncode == 1, _report(ruff)
    for code in ("F401", "UP045"):      # an unused import; Optional[X] on Python 3.11
        assert code in ruff.stdout, _report(ruff)

    mypy = _run("mypy", "--config-file", str(PYPROJECT), "--cache-dir", str(tmp_path / "cache"),
                str(module), cwd=tmp_path, timeout=600)
    assert mypy.returncode == 1, _report(mypy)
    # no_implicit_optional: a None default is not an Optional annotation
    assert "sloppy.py:9: error" in mypy.stdout, _report(mypy)
    # check_untyped_defs: the body of an unannotated function is checked too
    assert "sloppy.py:14: error" in mypy.stdout, _report(mypy)
