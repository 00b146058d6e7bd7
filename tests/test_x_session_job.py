"""The whole job in a real X server, bounded: tests/x_session_job.py builds a two-host bed from an
empty one with the pointer and keyboard (no YAML), tests the host's connection from its form and
runs a real fio load from the Run tab to its end (issue 32's "Done when")."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.skipif(not all(shutil.which(t) for t in ("Xvfb", "xdotool", "fio")), reason="needs Xvfb, xdotool, fio")
def test_a_two_host_bed_from_nothing_to_a_finished_fio_run_in_a_real_x_server():
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "x_session_job.py"), "1366x768"],
                          capture_output=True, text=True, timeout=360)
    out = done.stdout
    assert done.returncode == 0, done.stderr[-3000:] + out
    assert "load step: ok" in out
    assert "window within the screen: True" in out
    assert "refused name: 'rack1/R710' cannot be an id" in out           # item 2
    assert "not ready:" in out                                          # item 3
    rows = int(out.split("finding rows visible: ")[1].split()[0])        # item 5
    assert rows >= 8
    assert "find moved the pages by px: 0" in out                      # item 8
    assert "1 mix row, 1 criterion" in out                              # item 1: the workload form
    assert "test connection: " in out and ("OK:" in out or "not installed" in out)
