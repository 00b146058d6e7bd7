"""A one-step bed whose step logs 'begin' and 'end' to a file on its host: two copies running at
once show as two 'begin' lines before an 'end'."""
from __future__ import annotations

from pathlib import Path

from tests.run_beds import write_bed

LONG_STEP = """section: hosts
steps:
  - id: long
    foreach: server
    text: Work a while on {host.id}.
    automation:
      - shell: bash
        script: >-
          mkdir -p {server.settings.mark_dir};
          echo begin >> {server.settings.mark_dir}/{host.id}.log;
          echo working; sleep {server.settings.work_s};
          echo end >> {server.settings.mark_dir}/{host.id}.log; echo done
"""


def long_step_templates(folder: Path) -> str:
    (folder / "linux").mkdir(parents=True, exist_ok=True)
    (folder / "common").mkdir(parents=True, exist_ok=True)
    (folder / "linux" / "hosts.yaml").write_text(LONG_STEP)
    (folder / "common" / "hosts.yaml").write_text("section: hosts\nsteps: []\n")
    return str(folder)


def long_step_bed(tmp_path: Path, access: dict, work_s: float) -> tuple[Path, str]:
    """(bed file, templates folder) for one host `h1` reached through `access`."""
    templates = long_step_templates(tmp_path / "templates")
    bed = write_bed(tmp_path / "bed.yaml", [{"id": "h1"} | access], mark_dir=tmp_path / "marks", work_s=work_s)
    return bed, templates
