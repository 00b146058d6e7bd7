"""Smoke test of the PyInstaller one-folder bundle (not in the default run):

    make bundle && .venv/bin/python -m pytest -m bundle

Uses dist/testbed-studio/ when it is newer than every source file; otherwise builds it
with packaging/testbed-studio.spec first (about a minute or two).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = [pytest.mark.bundle, pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DIST = ROOT / "dist" / PROJECT["name"]
EXE = DIST / PROJECT["name"]
SOURCES = ("app", "widgets", "topology", "resources", "packaging", "pyproject.toml")


def _newest_source() -> float:
    newest = 0.0
    for name in SOURCES:
        top = ROOT / name
        files = [top] if top.is_file() else [p for p in top.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
        newest = max([newest] + [p.stat().st_mtime for p in files])
    return newest


@pytest.fixture(scope="module")
def bundle() -> Path:
    if EXE.is_file() and EXE.stat().st_mtime >= _newest_source():
        return EXE
    pyinstaller = shutil.which("pyinstaller", path=str(Path(sys.executable).parent))
    if pyinstaller is None:
        pytest.fail("PyInstaller is not installed in this environment: run `make bundle` first")
    proc = subprocess.run([pyinstaller, "--noconfirm", "--clean", "--log-level", "WARN",
                           "--distpath", str(ROOT / "dist"), "--workpath", str(ROOT / "build" / "pyinstaller"),
                           str(ROOT / "packaging" / "testbed-studio.spec")],
                          cwd=ROOT, capture_output=True, text=True, timeout=1100)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert EXE.is_file()
    return EXE


def _run(exe: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run([str(exe), *args], cwd=exe.parent.parent, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def test_bundle_prints_its_version(bundle):
    proc = _run(bundle, "--version")
    assert proc.returncode == 0, proc.stderr
    assert PROJECT["version"] in proc.stdout


def test_bundle_opens_the_window_offscreen(bundle):
    proc = _run(bundle, "--smoke")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "smoke ok:" in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_bundle_carries_the_resources(bundle):
    internal = bundle.parent / "_internal"
    for sub in ("examples", "schema", "icons"):
        source = sorted(p.name for p in (ROOT / "resources" / sub).glob("*") if p.is_file())
        bundled = sorted(p.name for p in (internal / "resources" / sub).glob("*") if p.is_file())
        assert bundled == source, sub
    assert (internal / "share" / "applications" / "testbed-studio.desktop").is_file()
