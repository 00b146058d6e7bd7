"""The window's start (issue 33, cold start < 1.2 s): the window is built and the default example
opened before any view's background work starts, numpy is imported or the Run page is built; that work then runs once,
on the opened bed, as soon as the event loop turns, and the Compare page lists the bed's
configurations and scenarios when it is shown.  `python -m bench.canvas --cold-start-only` times it.

A fresh interpreter is the only place where "not imported yet" means anything, so the start
runs in a child process, as the benchmark's does."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

START = r"""
import json, sys, threading
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
import app.background as background
launched = []
launch = background.BackgroundJob._launch
def counted(self, revision, work):
    window = globals().get("window")      # None while the window is being built
    launched.append((self.name, len(window.document.bed.servers) if window is not None else -1))
    launch(self, revision, work)
background.BackgroundJob._launch = counted
from widgets.main_window import MainWindow
window = MainWindow()
window.show()
window.open_initial()
built = {"numpy": "numpy" in sys.modules, "run_page": "widgets.run_wizard" in sys.modules,
         "planner": "app.run.plan" in sys.modules, "launched": list(launched),
         "workers": sorted(t.name for t in threading.enumerate() if t is not threading.main_thread()),
         "servers": len(window.document.bed.servers)}
def done():
    window.document.validation.wait(60000)
    app.processEvents()
    window.tabs.setCurrentWidget(window.compare.parentWidget().parentWidget())
    app.processEvents()
    sides = [window.compare.sides.item(i).text() for i in range(window.compare.sides.count())]
    bed = window.document.bed
    configurations = [c.id for c in bed.configurations] + [r.scenario for r in bed.results if r.scenario]
    from PySide6.QtTest import QTest
    QTest.qWait(1500)           # the Run page is built a second after the window shows
    run_built = "widgets.run_wizard" in sys.modules
    print(json.dumps({**built, "run_built": run_built, "run_page_shown": window.tabs.indexOf(window.run) >= 0,
                      "after": sorted(launched), "findings": len(window.document.validation.findings),
                      "validated": window.document.validation.revision_shown == window.document.revision,
                      "sides": sides, "configurations": configurations}), flush=True)
    app.quit()
QTimer.singleShot(0, done)
app.exec()
"""


def test_the_window_is_up_before_background_work_and_numpy_and_that_work_runs_once_on_the_opened_bed(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", TESTBED_STUDIO_STATE_DIR=str(tmp_path / "state"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", START], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    said = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert said, proc.stderr[-3000:]
    start = json.loads(said[-1])
    # built and opened: nothing has run in the background yet, and the Compare page's numpy is not loaded
    assert start["servers"] > 0
    assert start["launched"] == [] and start["workers"] == [], start
    assert not start["numpy"]
    # the Run page and the run planner (with it the procedure generator) wait until the window is up,
    # then the page is built by itself, in its tab
    assert not start["run_page"] and not start["planner"], start
    assert start["run_built"] and start["run_page_shown"], start
    # the first turn of the event loop: each view's work once, on the opened bed (never on the empty one)
    names = [name for name, _servers in start["after"]]
    assert sorted(set(names)) == names, start["after"]
    assert {"live-validation", "methodology-preview"} <= set(names)
    assert all(servers == start["servers"] for _name, servers in start["after"]), start["after"]
    assert start["validated"] and start["findings"] > 0
    # the Compare page, shown: the bed's configurations and recorded scenarios side by side
    assert start["configurations"] and all(any(c in side for side in start["sides"])
                                           for c in start["configurations"]), start
