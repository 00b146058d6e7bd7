"""Canvas benchmark: a bed of 5,000 devices and 10,000 links against issue 3's targets.

    python -m bench.canvas            # offscreen; prints figures and ratios to target
    python -m bench.canvas --json     # the same figures as JSON
    python -m bench.canvas --bare-switches   # switches without described ports (the bed before issue 12)
    python -m bench.canvas --live-only       # only live validation: open to the first findings, GUI stalls

Each measurement runs in a fresh process (peak memory is then the canvas's own):
* open + layout: load the project file, lay it out, build every scene item (target 3 s);
* full redraw at 100 %: render the whole viewport (1400 x 900) into a QImage (target 16 ms);
* drag 100 selected devices: mouse-move events sent to the view, each followed by a
  synchronous repaint of the viewport (target 50 ms per event, event and frame);
* memory: resident set size with the bed open on the canvas (target 400 MB);
* live validation (the same bed, the document's live validator on, the GUI thread owning garbage
  collection as in the application): from the loaded model handed to the document to the first
  findings shown (target 2 s: after an open, the findings of the rules done so far come while the
  rest run, app/live_validation.py), and the GUI thread's longest stall meanwhile, by a 10 ms
  heartbeat timer that runs through the canvas's build (target: none over 100 ms); then the same
  to the complete list;
* cold start: `python -c` that builds the main window on the default example and quits
  as soon as the event loop runs (target 1.2 s, wall clock from spawn to the event loop's
  first turn; the exit, which waits for the views' background work, is shown beside it).
  The application runs from bytecode, as an installed one does: the children compile into a
  private cache (PYTHONPYCACHEPREFIX) in one untimed start first, whatever
  PYTHONDONTWRITEBYTECODE says (`--compile-each-start` times the compiling too).

This script drives widgets, so it gets its QApplication from widgets.canvas.view.application()
(app/ itself imports no QtWidgets).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DEVICES, LINKS = 5000, 10000
ARRAYS, RACK = 40, 20
TARGETS = {"open_layout_s": 3.0, "redraw_ms": 16.0, "drag_ms_per_event": 50.0, "rss_mb": 400.0,
           "cold_start_s": 1.2}

COLD_START = """
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from widgets.main_window import MainWindow
window = MainWindow()
window.show()
window.open_initial()
def ready():
    print("interactive", time.time(), flush=True)
    app.quit()
QTimer.singleShot(0, ready)
app.exec()
"""


# ====================================================================== the bed

def big_bed(devices: int = DEVICES, links: int = LINKS, described_ports: bool = True):
    """A synthetic bed with exactly `devices` servers + switches + arrays and `links` cables.

    `described_ports`: every switch describes its ports one by one and each cable lands on one
    of them, so the canvas draws a port strip on every switch (issue 12: "port strips on 5,000
    devices"); without it the cables name only the switches, as the bed was before."""
    from topology.ids import leaf_name
    from topology.model import Link
    from topology.synthetic import generate
    # hosts + 3 switches per rack of RACK hosts + ARRAYS = devices
    hosts = devices - ARRAYS
    while hosts + 3 * math.ceil(hosts / RACK) + ARRAYS > devices:
        hosts -= 1
    bed = generate(hosts=hosts, vms=hosts, arrays=ARRAYS, disks=ARRAYS * 24, rack_size=RACK)
    spare = devices - (len(bed.servers) + len(bed.switches) + len(bed.arrays))
    if spare > 0:   # round up with plain servers so the count is exact
        from topology.model import Server
        bed.servers += [Server(id=f"spare{i}", role="infrastructure") for i in range(spare)]
    fixed = [lk for lk in bed.links if not lk.a.startswith("host")]
    by_port: dict[str, list] = {}
    for lk in bed.links:
        if lk.a.startswith("host"):
            by_port.setdefault(leaf_name(lk.a), []).append(lk)
    chosen = list(fixed)
    for port in ("san1", "san2", "lan", "hb", "lm"):   # SAN first: every host keeps its storage
        room = links - len(chosen)
        chosen += by_port.get(port, [])[:max(room, 0)]
    switches = [s.id for s in bed.switches]
    i = 0
    while len(chosen) < links:   # add inter-switch links as needed
        chosen.append(Link(a=switches[i % len(switches)], b=switches[(i + 1) % len(switches)], kind="isl"))
        i += 1
    bed.links = chosen[:links]
    if described_ports:
        _describe_switch_ports(bed)
    cabled = {end for lk in bed.links for end in (lk.a, lk.b)}
    # a host's port without its cable would otherwise be drawn as a dashed path: keep paths honest
    bed.paths = [p for p in bed.paths if p.initiator in cabled]
    return bed


def _describe_switch_ports(bed) -> None:
    """Each switch's ports one by one (its port count, more if its cables need them); each cable
    that names only a switch takes the switch's next free port."""
    from topology.model import Port
    switches = {sw.id: sw for sw in bed.switches}
    used = dict.fromkeys(switches, 0)
    for lk in bed.links:
        for attr in ("a", "b"):
            end = getattr(lk, attr)
            sw = switches.get(end)
            if sw is not None:
                used[end] += 1
                setattr(lk, attr, f"{end}:{used[end]}")
    for ident, sw in switches.items():
        count = max(sw.port_count or 0, used[ident])
        sw.port_count = count
        sw.ports = [Port(name=str(n), kind=sw.kind) for n in range(1, count + 1)]


# ====================================================================== child measurements

def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _until_built(app, canvas, limit_s: float = 600) -> None:
    """A big bed's canvas builds its items over several turns of the event loop: turn it until done."""
    t = time.perf_counter()
    while getattr(canvas, "building", False) and time.perf_counter() - t < limit_s:
        app.processEvents()
        time.sleep(0.001)


def _live_validation(app, doc, canvas, bed, path: Path) -> dict:
    """The loaded bed handed to the document inside the event loop, as the application opens it, and
    a 10 ms heartbeat timer on the GUI thread from just before that until the first findings are
    shown (the canvas's build included: a build that holds the GUI thread shows as one long gap),
    then until the canvas is built."""
    from PySide6.QtCore import QEventLoop, QTimer

    from bench.big_bed_gui import queued_s
    beats: list[float] = []
    busy: dict[float, tuple[float, float]] = {}     # at each beat: the GUI thread's CPU and wait for a core
    marks: dict[str, float] = {}
    heartbeat = QTimer()
    heartbeat.setInterval(10)

    def beat() -> None:
        beats.append(time.perf_counter())
        busy[beats[-1]] = (time.thread_time(), queued_s())
    heartbeat.timeout.connect(beat)
    loop = QEventLoop()

    def shown(_findings) -> None:
        if "findings" not in marks:
            marks["findings"] = time.perf_counter()
            busy[marks["findings"]] = (time.thread_time(), queued_s())
        if not getattr(doc.validation, "progress", ""):     # the complete list (not the rules done so far)
            marks.setdefault("complete", time.perf_counter())
            loop.quit()

    def open_bed() -> None:
        marks["open"] = time.perf_counter()
        beats.append(marks["open"])
        busy[marks["open"]] = (time.thread_time(), queued_s())
        doc.replace(bed, path)
        marks["replaced"] = time.perf_counter()
    doc.validation.findings_changed.connect(shown)
    # the validation's own CPU on its worker (what the findings cannot come sooner than, whatever
    # else runs): on a loaded machine the wall clock says more about the neighbours
    import app.live_validation as live
    validate, worker_cpu, first_cpu = live.validate_unless_edited, [], []

    def timed(*args, **kwargs):
        started = time.thread_time()
        if len(args) > 3 and args[3] is not None:       # the findings so far, published while rules run
            publish = args[3]

            def noted(*what):
                first_cpu.append(time.thread_time() - started)
                return publish(*what)
            args = (*args[:3], noted, *args[4:])
        try:
            return validate(*args, **kwargs)
        finally:
            worker_cpu.append(time.thread_time() - started)
    live.validate_unless_edited = timed
    QTimer.singleShot(0, open_bed)
    QTimer.singleShot(600000, loop.quit)
    heartbeat.start()
    loop.exec()
    live.validate_unless_edited = validate
    found = marks.get("findings", time.perf_counter())
    complete = marks.get("complete", time.perf_counter())
    until_findings = [t for t in beats if t <= found] + [found]
    gaps = [b - a for a, b in zip(until_findings, until_findings[1:])]
    # the GUI thread's own CPU in each gap, and the gap less its wait for a core (on a loaded machine
    # most of a stall's wall time): what the code costs it, its work and its waits for the interpreter
    spans = [(busy.get(a), busy.get(b)) for a, b in zip(until_findings, until_findings[1:])]
    gui_cpu = max((b[0] - a[0] for a, b in spans if a and b), default=float("nan"))
    less_wait = max((g - (b[1] - a[1]) for g, (a, b) in zip(gaps, spans) if a and b), default=float("nan"))
    until_complete = [t for t in beats if t <= complete] + [complete]
    complete_gaps = [b - a for a, b in zip(until_complete, until_complete[1:])]
    _until_built(app, canvas)
    built = time.perf_counter()
    heartbeat.stop()
    after = [t for t in beats if t > complete] + [built]
    later = [b - a for a, b in zip([complete] + after, after)]
    return {"validation_s": found - marks["open"], "replace_s": marks["replaced"] - marks["open"],
            "validation_stall_s": max(gaps), "validation_stalls_over_100ms": sum(g > 0.1 for g in gaps),
            "validation_stall_gui_cpu_s": gui_cpu, "validation_stall_less_core_wait_s": less_wait,
            "complete_s": complete - marks["open"], "complete_stall_s": max(complete_gaps),
            "complete_stalls_over_100ms": sum(g > 0.1 for g in complete_gaps),
            "canvas_built_s": built - marks["open"], "build_stall_s": max(later, default=0.0),
            "findings": len(doc.validation.findings), "validation_cpu_s": time.process_time(),
            "validation_worker_cpu_s": worker_cpu[0] if worker_cpu else float("nan"),
            "first_findings_worker_cpu_s": first_cpu[0] if first_cpu else worker_cpu[0] if worker_cpu else float("nan")}


def _child(path: str, repeat: int, mode: str) -> dict:
    """mode "canvas": the canvas's own figures (live validation detached from this document);
    mode "app": the same document with live validation, as the application runs it."""
    import resource

    from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
    from PySide6.QtGui import QImage, QMouseEvent, QPainter, QTransform

    if mode == "app":   # as the application's: the GUI thread owns garbage collection (app/gc_owner.py)
        from app.gui import application
    else:
        from widgets.canvas.view import application
    app = application()
    from app.document import Document
    from app.selection import Selection
    from topology.fileformat import load
    from widgets.canvas.view import Canvas

    doc = Document()
    if mode == "canvas":   # the canvas alone: nothing else listens to this document
        doc.reset.disconnect()
        doc.changed.disconnect()
    selection = Selection()
    canvas = Canvas(doc, selection)
    canvas.resize(1400, 900)
    canvas.show()
    app.processEvents()
    base_rss = _rss_mb()

    t0 = time.perf_counter()
    bed = load(path)
    t_load = time.perf_counter() - t0
    if mode == "app":
        out = {"mode": mode, "devices": len(bed.servers) + len(bed.switches) + len(bed.arrays) + len(bed.chassis),
               "links": len(bed.links), "vms": len(bed.vms), "load_s": t_load, "qt_baseline_rss_mb": base_rss}
        out.update(_live_validation(app, doc, canvas, bed, Path(path)))
        out["open_layout_s"] = t_load + out["canvas_built_s"]
        out["rss_open_mb"] = _rss_mb()
        # the view was fitted to the bed in the event loop's turns above: it paints the fitted drawing
        # for the first time in the next one, which is the opening's cost, not the edit's
        t = time.perf_counter()
        app.processEvents()
        out["first_paint_s"] = time.perf_counter() - t
        # one edit: the longest the GUI thread is blocked until the findings are back
        item = next(iter(canvas.devices.values()))
        from topology.operations import move
        doc.apply(move(doc.bed, {item.ident: (item.pos().x() + 20, item.pos().y())}))
        stall, t_edit = 0.0, time.perf_counter()
        revision = doc.revision
        while doc.validation.revision_shown != revision and time.perf_counter() - t_edit < 600:
            t = time.perf_counter()
            app.processEvents()
            stall = max(stall, time.perf_counter() - t)
            time.sleep(0.005)
        out["edit_stall_s"] = stall
        out["rss_mb"] = _rss_mb()
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return out


    t1 = time.perf_counter()
    doc.replace(bed, Path(path))   # reset: the canvas lays out and builds its items
    t_reset = time.perf_counter() - t1
    _until_built(app, canvas)
    t_open = time.perf_counter() - t0
    out = {"mode": mode, "devices": len(canvas.devices), "links": len(canvas.links), "vms": len(bed.vms),
           "load_s": t_load, "reset_s": t_reset, "open_layout_s": t_open, "qt_baseline_rss_mb": base_rss,
           "rss_open_mb": _rss_mb()}
    # ---------------------------------------------------------------- full redraw at 100 %
    canvas.setTransform(QTransform())
    hosts = [d for d in canvas.devices.values() if d.ident.startswith("host")]
    middle = hosts[len(hosts) // 2]
    canvas.centerOn(middle.sceneBoundingRect().center())
    app.processEvents()
    viewport = canvas.viewport()
    image = QImage(viewport.size(), QImage.Format.Format_ARGB32_Premultiplied)   # as a screen's backing store

    def render() -> float:
        canvas.resetCachedContent()
        t = time.perf_counter()
        painter = QPainter(image)
        canvas.render(painter, QRectF(image.rect()), viewport.rect())
        painter.end()
        return (time.perf_counter() - t) * 1000

    cold = []
    for _ in range(max(repeat, 5)):
        canvas.forget_pictures()   # the devices' cached pictures go: this is the first paint
        cold.append(render())
    warm = [render() for _ in range(max(repeat, 10))]
    visible = canvas.mapToScene(viewport.rect()).boundingRect()
    in_view = canvas.scene().items(visible)
    devices_in_view = sum(1 for i in in_view if getattr(i, "ident", None) in canvas.devices)

    # ---------------------------------------------------------------- drag 100 selected devices
    near = sorted(hosts, key=lambda d: (d.pos() - middle.pos()).manhattanLength())[:100]
    canvas.scene().clearSelection()
    for d in near:
        d.setSelected(True)
    app.processEvents()
    grab = canvas.mapFromScene(middle.pos() + QPointF(middle.w / 2, 12))   # on the name, not a port

    def mouse(kind, pos, buttons):
        return QMouseEvent(kind, QPointF(pos), QPointF(viewport.mapToGlobal(pos)), Qt.MouseButton.LeftButton,
                           buttons, Qt.KeyboardModifier.NoModifier)

    # a press on an item that is already selected keeps the whole selection, as in any editor
    app.sendEvent(viewport, mouse(QEvent.Type.MouseButtonPress, grab, Qt.MouseButton.LeftButton))
    handle, frame = [], []
    pos = grab
    start = {d.ident: d.pos() for d in near}
    for _step in range(30):
        pos = pos + type(pos)(7, 3)
        t = time.perf_counter()
        app.sendEvent(viewport, mouse(QEvent.Type.MouseMove, pos, Qt.MouseButton.LeftButton))
        handled = time.perf_counter()
        viewport.repaint()             # and the frame that shows it, painted now
        handle.append((handled - t) * 1000)
        frame.append((time.perf_counter() - t) * 1000)
    dragged = sum(1 for d in near if d.pos() != start[d.ident])
    t = time.perf_counter()
    app.sendEvent(viewport, mouse(QEvent.Type.MouseButtonRelease, pos, Qt.MouseButton.NoButton))
    app.processEvents()
    t_commit = (time.perf_counter() - t) * 1000
    steps = doc.undo_stack.count()
    t = time.perf_counter()
    doc.undo_stack.undo()
    app.processEvents()
    t_undo = (time.perf_counter() - t) * 1000
    back = sum(1 for d in near if d.pos() == start[d.ident])
    out.update({
        "redraw_ms": statistics.median(warm), "redraw_cold_ms": statistics.median(cold),
        "redraw_ms_worst": max(warm + cold), "items_in_view": len(in_view), "devices_in_view": devices_in_view,
        "drag_ms_per_event": statistics.median(frame), "drag_handling_ms": statistics.median(handle),
        "drag_ms_worst": max(frame), "dragged": dragged, "move_commit_ms": t_commit,
        "undo_steps_after_drag": steps, "undo_move_ms": t_undo, "undone": back,
        "rss_mb": _rss_mb(), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    })
    return out


def _cold_start(repeat: int, compile_each_start: bool = False) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(prefix="bench-pyc-") as cache:
        # its own state folder: work another start left for recovery would be offered in a dialog
        # that nobody answers here, and the person's recent files and window stay theirs
        env["TESTBED_STUDIO_STATE_DIR"] = str(Path(cache) / "state")
        if not compile_each_start:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = cache
        times, exits, unclean = [], [], 0
        for attempt in range(repeat + (not compile_each_start)):
            t = time.time()
            proc = subprocess.run([sys.executable, "-c", COLD_START], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=120)
            ended = time.time()
            said = [line.split() for line in proc.stdout.splitlines() if line.startswith("interactive")]
            if not said:
                raise RuntimeError(f"cold start failed: {proc.stderr[-2000:]}")
            if attempt == 0 and not compile_each_start:
                continue        # the start that wrote the bytecode
            times.append(float(said[0][1]) - t)
            exits.append(ended - t)
            unclean += proc.returncode != 0   # the window was up; the exit itself went wrong
    return {"cold_start_s": min(times), "cold_start_median_s": statistics.median(times),
            "cold_start_exit_s": min(exits), "cold_start_unclean_exits": unclean,
            "cold_start_compiled": compile_each_start}


# ====================================================================== report

def _line(name: str, value: float, target: float, unit: str) -> str:
    ratio = value / target
    verdict = "ok" if ratio <= 1 else "OVER"
    return f"  {name:<34} {value:10.1f} {unit:<3} target {target:g} {unit:<3} ratio {ratio:5.2f}  {verdict}"


def _cold_start_lines(f: dict, repeat: int) -> str:
    return (_line("cold start to an interactive window", f["cold_start_s"], TARGETS["cold_start_s"], "s") + "\n"
            + f"      median {f['cold_start_median_s']:.2f} s · to the exit (after the views' background work) "
            f"{f['cold_start_exit_s']:.2f} s · "
            + ("compiling every module at each start" if f["cold_start_compiled"] else "from bytecode")
            + (f" · {f['cold_start_unclean_exits']} of {repeat} runs crashed while exiting (after the window "
               "was up)" if f["cold_start_unclean_exits"] else ""))


def _live_lines(f: dict) -> str:
    return (f"  live validation of this bed: {f['app_validation_s']:.2f} s from open (the model loaded) to the first "
            f"findings (target < 2 s), the GUI thread's longest stall meanwhile "
            f"{f['app_validation_stall_s'] * 1000:.0f} ms ({f['app_validation_stalls_over_100ms']} over 100 ms; "
            "target: none; a 10 ms heartbeat timer)\n"
            f"      in that time the GUI thread's own CPU in its busiest turn "
            f"{f['app_validation_stall_gui_cpu_s'] * 1000:.0f} ms; the longest stall less its wait for a core "
            f"{f['app_validation_stall_less_core_wait_s'] * 1000:.0f} ms\n"
            f"      the complete findings {f['app_complete_s']:.2f} s from open (longest stall until then "
            f"{f['app_complete_stall_s'] * 1000:.0f} ms, {f['app_complete_stalls_over_100ms']} over 100 ms)\n"
            f"      the validation's own CPU on its worker {f['app_validation_worker_cpu_s']:.2f} s "
            f"({f['app_first_findings_worker_cpu_s']:.2f} s to the first findings)\n"
            f"      the canvas built {f['app_canvas_built_s']:.2f} s after the open (longest stall after the "
            f"complete findings {f['app_build_stall_s'] * 1000:.0f} ms; the document's replace held the GUI thread "
            f"{f['app_replace_s']:.2f} s)\n"
            f"  live validation, continued: {f['app_findings']} findings; longest GUI stall after one edit "
            f"{f['app_edit_stall_s']:.2f} s (the fitted drawing's first paint before it: "
            f"{f['app_first_paint_s']:.2f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.canvas", description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=DEVICES)
    parser.add_argument("--links", type=int, default=LINKS)
    parser.add_argument("--repeat", type=int, default=3, help="cold starts and redraws to take the best of")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--cold-start-only", action="store_true", help="only the cold start row")
    parser.add_argument("--live-only", action="store_true",
                        help="only the live-validation rows (the bed opened with live validation, "
                        "as the application runs it)")
    parser.add_argument("--compile-each-start", action="store_true",
                        help="cold starts compile every module (no bytecode kept), as PYTHONDONTWRITEBYTECODE does")
    parser.add_argument("--bare-switches", action="store_true",
                        help="switches describe no ports and cables name only the switch (the bed before issue 12)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="canvas", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.child:
        print(json.dumps(_child(args.child, args.repeat, args.mode)))
        return 0
    if args.cold_start_only:
        f = _cold_start(args.repeat, args.compile_each_start)
        print(json.dumps(f, indent=2) if args.json else _cold_start_lines(f, args.repeat))
        return 0

    from topology.fileformat import save
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.yaml"
        t = time.perf_counter()
        bed = big_bed(args.devices, args.links, described_ports=not args.bare_switches)
        save(bed, path)
        made = time.perf_counter() - t
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        runs = {}
        for mode in ("app",) if args.live_only else ("canvas", "app"):
            proc = subprocess.run([sys.executable, "-m", "bench.canvas", "--child", str(path), "--mode", mode,
                                   "--repeat", str(args.repeat)], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=1800)
            if "{" not in proc.stdout:
                print(proc.stderr, file=sys.stderr)
                return 1
            runs[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        figures = dict(runs.get("canvas", {}))
        figures.update({f"app_{k}": v for k, v in runs["app"].items()})
        figures["file_mb"] = path.stat().st_size / 1e6
        figures["switch_ports"] = sum(len(sw.ports) for sw in bed.switches)
        figures["generate_s"] = made
    if args.live_only:
        if args.json:
            print(json.dumps(figures, indent=2))
        else:
            print(f"Live validation: {figures['app_devices']} devices, {figures['app_links']} links, "
                  f"{figures['app_vms']} VMs, offscreen, load average {os.getloadavg()[0]:.1f}")
            print(_live_lines(figures))
        return 0
    figures.update(_cold_start(args.repeat, args.compile_each_start))
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    f = figures
    load = os.getloadavg()[0]
    print(f"Canvas benchmark: {f['devices']} devices, {f['links']} links, {f['vms']} VMs "
          f"(project file {f['file_mb']:.1f} MB), offscreen, {os.cpu_count()} CPUs, load average {load:.1f}; "
          + ("switches describe no ports" if args.bare_switches else
             f"every switch draws its {f['switch_ports']} ports in strips"))
    print(_line("open + layout (load, lay out, items)", f["open_layout_s"], TARGETS["open_layout_s"], "s"))
    print(f"      load {f['load_s']:.2f} s · canvas layout + items {f['reset_s']:.2f} s · "
          f"with live validation's snapshot: {f['app_open_layout_s']:.2f} s")
    print(_line("full redraw at 100 % (1400x900)", f["redraw_ms"], TARGETS["redraw_ms"], "ms"))
    print(f"      first paint (no cached device pictures) {f['redraw_cold_ms']:.1f} ms · worst "
          f"{f['redraw_ms_worst']:.1f} ms · {f['items_in_view']} items in view ({f['devices_in_view']} devices)")
    print(_line(f"drag {f['dragged']} selected devices, per event", f["drag_ms_per_event"],
                TARGETS["drag_ms_per_event"], "ms"))
    print(f"      event handling {f['drag_handling_ms']:.1f} ms + the repaint · worst {f['drag_ms_worst']:.1f} ms · "
          f"release (one move step) {f['move_commit_ms']:.0f} ms · undo {f['undo_move_ms']:.0f} ms "
          f"({f['undone']} back in place, {f['undo_steps_after_drag']} undo step)")
    print(_line("memory (RSS, bed on the canvas)", f["rss_mb"], TARGETS["rss_mb"], "MB"))
    print(f"      Qt alone {f['qt_baseline_rss_mb']:.0f} MB · with live validation: {f['app_rss_mb']:.0f} MB, "
          f"peak {f['app_peak_rss_mb']:.0f} MB")
    print(_live_lines(f))
    print(_cold_start_lines(f, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
