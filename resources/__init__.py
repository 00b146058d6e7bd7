"""Data shipped with Testbed Studio: example beds, the project-file JSON Schema, icons."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
EXAMPLES_DIR = ROOT / "examples"
SCHEMA_FILE = ROOT / "schema" / "testbed.schema.json"
DEFAULT_EXAMPLE = "md3000i-hyperv-cluster"


def example_names() -> list[str]:
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.yaml"))


def example_path(name: str) -> Path:
    return EXAMPLES_DIR / f"{name}.yaml"
