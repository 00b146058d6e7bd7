"""Data shipped with Testbed Studio: example beds, the project-file JSON Schema, icons.

Paths are resolved from this file, so they hold in a source checkout, an installed
wheel and the PyInstaller bundle (which keeps resources/ beside the code).
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent
EXAMPLES = ROOT / "examples"
SCHEMA = ROOT / "schema"
ICONS = ROOT / "icons"
DEFAULT_EXAMPLE = EXAMPLES / "md3000i-hyperv-cluster.yaml"
APP_ICON = ICONS / "testbed-studio.svg"
