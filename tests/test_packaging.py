"""Cheap checks on the packaging metadata (the bundle itself: test_bundle.py, -m bundle)."""
from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_python_package_is_listed_in_pyproject():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for top in ("app", "widgets", "topology", "resources")
             for p in (ROOT / top).rglob("__init__.py") if "__pycache__" not in p.parts}
    assert found == listed


def test_pyside6_stays_pinned():
    deps = PYPROJECT["project"]["dependencies"]
    assert [d for d in deps if d.lower().startswith("pyside6")] == ["PySide6-Essentials==6.11.3"]


def test_entry_point_and_extras():
    project = PYPROJECT["project"]
    assert project["scripts"] == {"testbed-studio": "app.cli:main"}
    assert {"test", "package"} <= set(project["optional-dependencies"])


def test_desktop_entry_and_icon():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(ROOT / "packaging" / "testbed-studio.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application"
    assert section["Exec"].split()[0] == PYPROJECT["project"]["name"]
    assert section["Icon"] == "testbed-studio"
    # the window icon shipped in resources/ is the packaging icon
    assert (ROOT / "resources" / "icons" / "testbed-studio.svg").read_bytes() == \
        (ROOT / "packaging" / "icon.svg").read_bytes()


def test_icon_renders(qapp):
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(ROOT / "packaging" / "icon.svg"))
    assert renderer.isValid()
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    assert image.pixelColor(20, 30).alpha() == 255  # the rack is drawn
