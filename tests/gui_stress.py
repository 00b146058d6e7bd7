"""The stress that made the application deadlock (issue 24), as a process of its own.

    python -m tests.gui_stress SECONDS

Main windows are opened and dropped, pyqtgraph items are made and dropped, and the bed is
edited while the methodology preview and live validation regenerate on their worker threads,
in a loop.  Every tick prints `tick N` (the parent's watchdog reads them: a deadlock shows as
ticks that stop, and the parent then sends SIGABRT, which faulthandler turns into a dump of every
thread).  At the end one line of JSON says how many collections started off the GUI thread and
on which threads dropped Qt objects were finalised.

The application is built the way the GUI entry point builds it (`app.gui.application`); code
that has no such function (before issue 24) gets a plain QApplication, so the same stress shows
the fault there.
"""
from __future__ import annotations

import faulthandler
import gc
import json
import os
import sys
import threading
import time
import weakref

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
faulthandler.enable()           # SIGABRT from the watchdog: every thread's stack, then the end

TICK_MS = 120


def main(seconds: float) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    try:
        from app.gui import application
        app = application()
    except ImportError:
        app = QApplication.instance() or QApplication([])
    import pyqtgraph as pg

    from resources import ROOT
    from topology import operations
    from widgets.dashboard import MetricsDashboard, Threshold
    from widgets.main_window import MainWindow

    gui = threading.get_ident()
    off_thread: list[str] = []
    finalised: dict[str, int] = {}

    def watch(phase: str, info: dict) -> None:
        if phase == "start" and threading.get_ident() != gui:
            off_thread.append(threading.current_thread().name)
    gc.callbacks.append(watch)

    def finalised_on() -> None:
        name = "gui" if threading.get_ident() == gui else threading.current_thread().name
        finalised[name] = finalised.get(name, 0) + 1

    window = MainWindow()
    window.resize(1200, 800)
    window.show()
    window.document.open(ROOT / "examples" / "md3000i-hyperv-cluster.yaml")
    window.tabs.setCurrentWidget(window.methodology)        # the preview regenerates while shown
    dashboard = MetricsDashboard()
    dashboard.show()
    device = window.document.bed.servers[0].id
    spare: list = []
    state = {"tick": 0}
    end = time.monotonic() + seconds

    def tick() -> None:
        n = state["tick"] = state["tick"] + 1
        doc = window.document
        doc.apply(operations.move(doc.bed, {device: (100.0 + n % 7 * 40, 200.0)}))
        doc.validation.run_now()
        window.methodology.regenerate()
        # a window of its own with its menus and actions, dropped a tick later
        if spare:
            old = spare.pop()
            old.close()
        else:
            extra = MainWindow()
            extra.show()
            spare.append(extra)
        # pyqtgraph items in reference cycles, dropped
        for _ in range(3):
            line = pg.InfiniteLine(pos=float(n), angle=0, label=f"{n}")
            line.cycle = line
            weakref.finalize(line, finalised_on)
            del line
        dashboard.set_thresholds([Threshold("read", "<", 10.0 + n % 5, f"limit {n % 5}")])
        print(f"tick {n}", flush=True)
        if time.monotonic() > end:
            timer.stop()
            for job in (window.methodology, doc.validation):
                job.wait(30000)
            app.processEvents()
            gc.collect()            # on the GUI thread: whatever is left ends here
            print(json.dumps({"ticks": n, "off_thread_collections": len(off_thread),
                              "off_thread_names": sorted(set(off_thread)), "finalised_on": finalised}),
                  flush=True)
            doc.undo_stack.setClean()        # the moves were the stress's: no "save changes?" at the end
            app.quit()

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    timer.start()
    app.exec()
    return 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 30.0))
