"""Run start and stop on the GUI thread (issue 24), with the soak's bed: the largest example plus a
local fio load client (bench/gui_soak.py's `soak_bed`, 1,500 steps).

    python -m bench.run_tab [--quick]

In an offscreen window: the Run tab starts a run (New run, the fio load step run) and, a few
seconds later, stops it (Abort), as the soak does.  A 5 ms timer on the GUI thread beats
meanwhile; the longest gap between two beats is the longest the window could not answer (wall
time, and the GUI thread's own CPU time in it, which a loaded machine does not inflate).  Also
the time from the action to the window's next repaint (what the soak's "every action repaints
within 1 s" counts).  Target: each under 1 s; printed with the ratio.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 1.0


def measure(repeats: int, warm_s: float) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("TESTBED_STUDIO_STATE_DIR", tempfile.mkdtemp(prefix="bench-run-tab-"))
    from PySide6.QtCore import QTimer

    from app.gui import application
    from bench.gui_soak import soak_bed, soak_load_step
    from tests.x_session import paint_watch
    from widgets.main_window import MainWindow
    app = application()
    window = MainWindow()
    window.setGeometry(0, 0, 1600, 1000)
    window.show()
    window.document.open(soak_bed(Path(tempfile.mkdtemp(prefix="bench-run-tab-bed-"))))
    beats: list[tuple[float, float]] = []
    heartbeat = QTimer(interval=5, timeout=lambda: beats.append((time.perf_counter(), time.thread_time())))
    heartbeat.start()
    painted: list[float] = []
    watch = paint_watch(painted)
    app.installEventFilter(watch)

    def spin(seconds: float, until=None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until()):
            app.processEvents()
            time.sleep(0.002)

    def longest_block(t0: float, c0: float) -> tuple[float, float]:
        marks = [(t0, c0)] + [b for b in beats if b[0] > t0]
        gaps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(marks, marks[1:])]
        return max(gaps, default=(0.0, 0.0))

    run = window.run
    spin(warm_s)        # the window is up; the Run tab makes its dashboard at idle meanwhile
    figures: dict[str, list] = {"start_block": [], "start_cpu": [], "start_paint": [],
                                "stop_block": [], "stop_cpu": [], "stop_paint": []}
    for _ in range(repeats):
        window.tabs.setCurrentWidget(run)
        spin(0.3)
        painted.clear()
        t0, c0 = time.perf_counter(), time.thread_time()
        run.new_run()
        run._run([soak_load_step(run)])
        spin(5.0, lambda t0=t0: any(p > t0 for p in painted))
        figures["start_paint"].append(min((p for p in painted if p > t0), default=t0 + 5.0) - t0)
        spin(1.0)
        block, cpu = longest_block(t0, c0)
        figures["start_block"].append(block)
        figures["start_cpu"].append(cpu)
        spin(3.0)
        painted.clear()
        t0, c0 = time.perf_counter(), time.thread_time()
        run.abort_button.click()
        spin(5.0, lambda t0=t0: any(p > t0 for p in painted))
        figures["stop_paint"].append(min((p for p in painted if p > t0), default=t0 + 5.0) - t0)
        spin(20.0, lambda: not run.controller.busy)
        spin(0.5)
        block, cpu = longest_block(t0, c0)
        figures["stop_block"].append(block)
        figures["stop_cpu"].append(cpu)
        window.tabs.setCurrentWidget(window.canvas)
        spin(0.3)
    heartbeat.stop()
    app.removeEventFilter(watch)
    figures["steps"] = len(run.steps)
    run.shutdown()
    window.document.undo_stack.setClean()
    window.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run_tab", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 starts and stops instead of 5")
    ns = ap.parse_args(argv)
    f = measure(2 if ns.quick else 5, 4.0)
    print(f"run start/stop on the GUI thread: the soak's bed ({f['steps']} steps), "
          f"{len(f['start_block'])} starts and stops, worst of each:")
    ok = True
    for what in ("start", "stop"):
        block, cpu, paint = max(f[f"{what}_block"]), max(f[f"{what}_cpu"]), max(f[f"{what}_paint"])
        ok = ok and block < TARGET_S and paint < TARGET_S
        print(f"  run {what:<5}  longest GUI-thread block {block * 1000:6.0f} ms ({cpu * 1000:.0f} ms of its CPU; "
              f"median {statistics.median(f[f'{what}_block']) * 1000:.0f} ms) · to the next repaint "
              f"{paint * 1000:.0f} ms · target < {TARGET_S:g} s: {max(block, paint) / TARGET_S:.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
