"""The designer soaked in a real X server (issue 24): nothing freezes, leaks or collects off the
GUI thread over minutes of work.

    python -m bench.gui_soak [--minutes 10] [--size 1600x1000]

A copy of the largest example (plus one local load client with a short fio load, and two
configurations of one of its servers) is opened in a real window on Xvfb; in a loop, with the
pointer and keyboard through xdotool: another scenario and configuration are chosen, a device is
dragged, Ctrl+Z undoes it, the canvas is right-clicked (Escape closes the menu), the methodology
is shown (it regenerates), a local fio run is started and stopped a few seconds later.  Prints,
at the end: actions done, the time from each action to the window's next repaint (median, worst,
and how many took over 1 s), RSS at 2 minutes and at the end, and the collections that started
off the GUI thread (a `gc.callbacks` hook).  Exits 1 when a target is missed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPAINT_LIMIT_S = 1.0
RSS_GROWTH_LIMIT_MB = 50
SETTLE_S = 120          # growth is counted from here (caches fill in the first minutes)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def soak_bed(folder: Path) -> Path:
    """The largest example with a local fio load client and two configurations of one server."""
    import yaml
    examples = sorted((ROOT / "resources" / "examples").glob("*.yaml"), key=lambda p: p.stat().st_size)
    data = yaml.safe_load(examples[-1].read_text(encoding="utf-8"))
    data.setdefault("servers", []).append({"id": "soak-lc", "role": "load_client", "platform": "linux",
                                           "os": "Debian 12", "x": 40.0, "y": 40.0})
    data.setdefault("workloads", []).append({
        "id": "soak-fio", "tool": "fio", "driver": "soak-lc", "targets": ["soak-lc"],
        "parameters": {"filename": str(folder / "soak.dat"), "size": "16m", "duration_minutes": 0.5},
        "access": [{"block_kb": 4, "read_pct": 70, "random_pct": 100}]})
    data.setdefault("access", []).append({"host": "soak-lc", "transport": "local"})
    for entry in data.get("test_matrix") or []:     # the run section runs the workloads its test names
        if isinstance(entry.get("workloads"), list):
            entry["workloads"].append("soak-fio")
    server = data["servers"][0]["id"]
    data.setdefault("configurations", [
        {"id": "as-drawn", "description": "the bed as drawn"},
        {"id": "renamed-os", "description": "another OS build", "set": {server: {"os": "soak build"}}}])
    path = folder / "soak.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def soak_load_step(run):
    """The Run tab's fio load step on the soak bed's load client (what its test matrix names)."""
    load = next((st for st in run.steps if st.template.endswith("run.yaml#load")
                 and any(t.host == "soak-lc" for t in st.tasks)), None)
    if load is None:
        raise LookupError("the soak bed's procedure has no fio load step on soak-lc")
    return load


def script(s, minutes: float, figures: dict):
    """A generator the x_session driver runs: yields conditions to wait for."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    from app.configuration_choice import ConfigurationChoice
    from tests.x_session import later, paint_watch
    window = s.window
    doc = window.document
    yield lambda: window.isVisible() and window.canvas.viewport().isVisible()
    yield later(1.0)
    s.xdo("search", "--sync", "--name", "Testbed Studio", "windowfocus", "--sync")
    yield lambda: QApplication.activeWindow() is window
    painted: list[float] = []
    pressed: list[float] = []
    watch = paint_watch(painted, pressed)
    QApplication.instance().installEventFilter(watch)

    def action(name: str, by_hand: bool = False):
        """Wait for the repaint that follows the action just done; record its delay, counted from
        the press that reached the window when the action was a person's (BY_HAND: a click, a
        key), else from the call.  The driver's own time before the press (xdotool moving the
        pointer first, about 200 ms on the GUI thread) is no part of what a person waits for; it
        is reported apart."""
        t0 = figures["_t0"]
        if by_hand:
            yield lambda: any(p > t0 for p in pressed)
        start = min((p for p in pressed if p > t0), default=t0)
        yield lambda: any(p > start for p in painted)
        repaint = min(p for p in painted if p > start)
        figures["repaints"].append((name, repaint - start))
        figures["driver"].append(start - t0)
        painted.clear()

    def mark():
        painted.clear()
        pressed.clear()
        figures["_t0"] = time.perf_counter()

    scenarios = [""] + [sc.id for sc in doc.bed.scenarios]
    configurations = ConfigurationChoice.of(doc).names
    run = window.run
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < minutes * 60:
        n += 1
        # another scenario, another configuration, seen on the diagram
        window.tabs.setCurrentWidget(window.canvas)
        yield later(0.2)
        mark()
        doc.scenario.set(scenarios[n % len(scenarios)] or None)
        yield from action("scenario")
        if configurations:
            mark()
            ConfigurationChoice.of(doc).choose(configurations[n % len(configurations)])
            yield from action("configuration")
        # the diagram: drag a device, undo it, right-click, Escape
        canvas = window.canvas
        item = canvas.devices.get("soak-lc")
        if item is not None:
            canvas.ensureVisible(item)
            yield later(0.1)
            centre = canvas.mapFromScene(item.sceneBoundingRect().center())
            mark()
            yield from s.drag(canvas.viewport(), centre, centre + QPoint(30, 20))
            yield from action("drag", by_hand=True)
            mark()
            yield from s.key("ctrl+z")
            yield from action("undo", by_hand=True)
        mark()
        vp = canvas.viewport()
        yield from s.click(vp, QPoint(vp.width() // 3, vp.height() // 3), button=3)
        yield lambda: QApplication.activePopupWidget() is not None
        yield from action("right-click", by_hand=True)
        yield from s.key("Escape")
        yield lambda: QApplication.activePopupWidget() is None
        # the methodology regenerates when shown
        mark()
        window.tabs.setCurrentWidget(window.methodology)
        yield from action("methodology")
        yield lambda: not window.methodology._job.busy
        # a local fio run, started and stopped
        if n % 3 == 1:
            window.tabs.setCurrentWidget(run)
            yield later(0.2)
            mark()
            run.new_run()
            run._run([soak_load_step(run)])
            yield from action("run start")
            yield later(4.0)
            mark()
            run.abort_button.click()
            yield from action("run stop")
            yield lambda: not run.controller.busy
        figures["rss"].append((time.monotonic() - start, rss_mb()))
    figures["loops"] = n
    QApplication.instance().removeEventFilter(watch)
    doc.undo_stack.setClean()


def child(minutes: float, size: str) -> int:
    from app.gc_owner import CollectionWatch, GuiCollector
    from app.gui import application
    from tests.x_session import Session, play
    from widgets.main_window import MainWindow
    app = application()
    width, height = map(int, size.split("x"))
    folder = Path(tempfile.mkdtemp(prefix="gui-soak-"))
    window = MainWindow()
    window.setGeometry(0, 0, width, height)
    window.show()
    window.document.open(soak_bed(folder))
    figures: dict = {"repaints": [], "rss": [], "driver": []}
    with CollectionWatch() as gc_watch:
        failure = play(app, script(Session(app, window), minutes, figures), 20.0)
    window.run.shutdown()
    window.document.undo_stack.setClean()
    window.close()
    delays = [d for _, d in figures["repaints"]]
    slow = [(name, round(d, 2)) for name, d in figures["repaints"] if d > REPAINT_LIMIT_S]
    worst_name = f" ({max(figures['repaints'], key=lambda nd: nd[1])[0]})" if delays else ""
    by_action: dict[str, list[float]] = {}
    for name, d in figures["repaints"]:
        by_action.setdefault(name, []).append(d)
    settled = [mb for t, mb in figures["rss"] if t >= SETTLE_S]
    growth = (settled[-1] - settled[0]) if len(settled) >= 2 else 0.0
    print(f"gui soak {minutes:g} min at {size}: {figures.get('loops', 0)} loops, {len(delays)} actions; "
          f"action to repaint median {statistics.median(delays) * 1000 if delays else 0:.0f} ms, "
          f"worst {max(delays, default=0) * 1000:.0f} ms{worst_name}, "
          f"over {REPAINT_LIMIT_S:g} s: {len(slow)} {slow[:5]}; "
          f"RSS {settled[0] if settled else 0:.0f} MB at {SETTLE_S} s -> {settled[-1] if settled else 0:.0f} MB "
          f"at the end (growth {growth:+.1f} MB, limit {RSS_GROWTH_LIMIT_MB}); collections off the GUI thread: "
          f"{len(gc_watch.off_thread)}, on it: {gc_watch.on_thread}; longest collection by generation: "
          + ", ".join(f"{g}: {t * 1000:.0f} ms" for g, t in sorted(gc_watch.longest.items())), flush=True)
    print("  by action, median / worst ms: " + ", ".join(f"{name} {statistics.median(ds) * 1000:.0f} / "
                                                        f"{max(ds) * 1000:.0f}" for name, ds in by_action.items()),
          flush=True)
    driver = [d for d in figures["driver"] if d > 0]
    collector = GuiCollector.installed()
    print(f"  the driver's own time before a person's press (xdotool; not counted above): median "
          f"{statistics.median(driver) * 1000 if driver else 0:.0f} ms, worst {max(driver, default=0) * 1000:.0f} ms; "
          f"full collections {collector.collections[2] if collector else '?'}, deferred as not worth a walk "
          f"{collector.full_deferred if collector else '?'}", flush=True)
    if failure:
        print(f"gui soak: {failure}", file=sys.stderr)
        return 1
    return int(bool(slow) or growth > RSS_GROWTH_LIMIT_MB or bool(gc_watch.off_thread))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--size", default="1600x1000")
    args = ap.parse_args(argv)
    if os.environ.get("GUI_SOAK_CHILD"):
        return child(args.minutes, args.size)
    if not shutil.which("Xvfb") or not shutil.which("xdotool"):
        print("gui soak: needs Xvfb and xdotool (.ci/setup.sh installs them)", file=sys.stderr)
        return 2
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{args.size}x24",
                             "-nolisten", "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            pass_fds=(write_fd,))
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as numbers:
            display = f":{numbers.readline().strip()}"
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "GUI_SOAK_CHILD": "1",
               "TESTBED_STUDIO_STATE_DIR": tempfile.mkdtemp(prefix="testbed-soak-")}
        return subprocess.run([sys.executable, "-m", "bench.gui_soak", "--minutes", str(args.minutes),
                               "--size", args.size], env=env, cwd=ROOT, timeout=args.minutes * 60 + 300).returncode
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
