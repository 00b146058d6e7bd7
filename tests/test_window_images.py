"""The main window with each example bed, rendered offscreen to PNG at 1400x900.

The images are written under the test's tmp folder and copied to /tmp/window-<example>.png
for a person to look at; the test checks that they have the window's size and show
something (many colours, no single colour covering nearly everything).
"""
from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtGui import QImage

import resources
import widgets.file_controller as file_controller
from widgets.main_window import MainWindow

WIDTH, HEIGHT = 1400, 900
SHOWCASE_DIR = Path("/tmp")


@pytest.fixture(autouse=True)
def private_state(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTBED_STUDIO_STATE_DIR", str(tmp_path / "state"))
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    org = QCoreApplication.organizationName()
    QCoreApplication.setOrganizationName("Testbed Studio tests")
    yield
    QCoreApplication.setOrganizationName(org)


def colour_census(image: QImage, step: int = 7) -> Counter:
    return Counter(image.pixel(x, y) for y in range(0, image.height(), step) for x in range(0, image.width(), step))


@pytest.mark.parametrize("example", resources.example_names())
def test_main_window_renders_each_example(qtbot, tmp_path, monkeypatch, example):
    errors: list[str] = []
    monkeypatch.setattr(file_controller.QMessageBox, "critical", lambda parent, title, text, *a, **k:
                        errors.append(f"{title}: {text}"))
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(WIDTH, HEIGHT)
    window.show()
    qtbot.waitExposed(window)
    assert window.files.open_path(resources.example_path(example), remember=False), errors
    window.document.validation.wait()
    qtbot.waitUntil(lambda: window.document.validation.revision_shown == window.document.revision, timeout=10000)
    qtbot.wait(50)  # let the panels repaint with the findings

    image = window.grab().toImage()
    path = tmp_path / f"window-{example}.png"
    assert image.save(str(path)), path
    shutil.copyfile(path, SHOWCASE_DIR / path.name)

    assert (image.width(), image.height()) == (WIDTH, HEIGHT)
    census = colour_census(image)
    dominant_share = census.most_common(1)[0][1] / sum(census.values())
    assert len(census) >= 20, f"{path}: only {len(census)} colours — a blank window?"
    assert dominant_share < 0.95, f"{path}: one colour covers {dominant_share:.0%}"
    assert window.document.bed.bed.name in window.windowTitle()
    assert errors == []
