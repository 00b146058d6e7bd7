"""Shared test set-up.  Qt runs offscreen unless the caller chose a platform (xvfb-run
with QT_QPA_PLATFORM=xcb, say); this must happen before anything imports Qt."""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return ROOT / "resources" / "examples"
