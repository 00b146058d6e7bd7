"""A one-step bed whose step logs 'begin' and 'end' to a file on its host: two copies running at
once show as two 'begin' lines before an 'end'.  The step works until the test releases it
(`release`) or its `work_s` run out, so a test of what a driver does while a step runs holds
the step for as long as it needs, however busy the machine (a plain sleep ran out under load)."""
from __future__ import annotations

import os
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
          echo working; limit={server.settings.work_s}; stop_at=$((SECONDS + limit));
          while [ ! -e {server.settings.mark_dir}/{host.id}.release ] && [ "$SECONDS" -lt "$stop_at" ];
          do sleep 0.1; done;
          echo end >> {server.settings.mark_dir}/{host.id}.log; echo done
"""


HOLD_S = 120     # how long a held step works at most when no test releases it


def release(tmp_path: Path, host: str = "h1") -> None:
    """Let the held step of `host` end now."""
    marks = tmp_path / "marks"
    marks.mkdir(parents=True, exist_ok=True)
    (marks / f"{host}.release").touch()


def adopted(run_dir: Path) -> bool:
    """A resumed driver has taken over the step a dead one left running (journalled before it waits)."""
    from app.run import journal as J
    return any(r.get("adopted") for r in J.read_records(run_dir)[0])


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


def pid_alive(pid: int) -> bool:
    """A process that exists and has not ended (a zombie has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
