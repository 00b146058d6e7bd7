"""A scripted session in a real X server: Xvfb, real pointer and keyboard events through xdotool
(XTEST), the window on the xcb platform.  It builds a small bed from an empty one with the
palette and the mouse, cables it, uses the canvas context menu, Find, and File › New from
Example, cables a host to one switch port by mouse (the switch's ports expand under the cable),
opens the path view from a host's menu, and saves screenshots of the X screen under
build/x-session/.

    python tests/x_session.py [1920x1080 1366x768 ...]

Prints the figures the issue asks for: clicks (and key presses) to build the small bed, and
the time from a click to the canvas repainting it (median and worst over the placements).
Needs Xvfb and xdotool (.ci/setup.sh installs them).  Exits non-zero when a step did not
have its effect.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "x-session"


def later(seconds: float):
    """A condition that holds once `seconds` have passed (the driver waits on it)."""
    end = time.monotonic() + seconds
    return lambda: time.monotonic() >= end


def paint_watch(times: list[float], presses: list[float] | None = None):
    """An event filter that notes in TIMES when each paint event it sees arrives (install it on a
    widget, or on the application for every widget), and in PRESSES when each mouse button or key
    press reaches the application (the moment a person acted, not when the driver began)."""
    from PySide6.QtCore import QEvent, QObject
    pressed = (QEvent.Type.MouseButtonPress, QEvent.Type.KeyPress)

    class PaintWatch(QObject):
        def eventFilter(self, obj, event):
            kind = event.type()
            if kind == QEvent.Type.Paint:
                times.append(time.perf_counter())
            elif presses is not None and kind in pressed:
                presses.append(time.perf_counter())
            return False
    return PaintWatch()


def play(app, steps, wait_s: float, on_failure=None) -> str | None:
    """Run a scripted session: each item STEPS yields is a condition the event loop waits for (at
    most WAIT_S s), so the script goes on while a menu or a dialog runs its own loop.  Returns what
    went wrong (None when the script ran to its end); ON_FAILURE(text) runs at the moment it does,
    while the screen still shows it.  Menus and dialogs left open are closed afterwards."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    waiting: list = [None, 0.0]
    failure: list[str] = []

    def fail(text: str) -> None:
        failure.append(f"{text} at line {steps.gi_frame.f_lineno if steps.gi_frame else '?'}")
        if on_failure is not None:
            on_failure(failure[0])
        app.exit(1)

    def tick() -> None:
        condition, deadline = waiting
        if failure:
            return
        if condition is not None:
            if condition():
                waiting[0] = None
            elif time.monotonic() > deadline:
                fail(f"waited {wait_s:g} s")
            return
        try:
            waiting[:] = [next(steps), time.monotonic() + wait_s]
            if os.environ.get("X_SESSION_TRACE"):
                print("x-session at line", steps.gi_frame.f_lineno if steps.gi_frame else "?", file=sys.stderr)
        except StopIteration:
            app.exit(0)
        except Exception as exc:
            fail(repr(exc))

    timer = QTimer(interval=10, timeout=tick)
    timer.start()
    app.exec()
    timer.stop()
    for widget in (QApplication.activeModalWidget(), QApplication.activePopupWidget()):
        if widget is not None:
            widget.close()
    return failure[0] if failure else None


class Session:
    """The script is a generator run by a timer, so that it goes on while a menu or a dialog runs
    its own event loop: it yields conditions to wait for (10 s each at most)."""

    def __init__(self, app, window):
        self.app, self.window = app, window
        self.clicks = 0
        self.keys = 0
        self.paint_times: list[float] = []

    def xdo(self, *args) -> None:
        subprocess.run(["xdotool", *map(str, args)], check=True, timeout=20)

    def point(self, widget, local) -> tuple[int, int]:
        p = widget.mapToGlobal(local)
        return p.x(), p.y()

    def click(self, widget, local, button: int = 1):
        x, y = self.point(widget, local)
        self.xdo("mousemove", x, y)
        yield later(0.05)
        self.xdo("click", button)
        self.clicks += 1
        yield later(0.05)

    def drag(self, widget, start, end):
        (x0, y0), (x1, y1) = self.point(widget, start), self.point(widget, end)
        self.xdo("mousemove", x0, y0)
        yield later(0.03)
        self.xdo("mousedown", 1)
        yield later(0.03)
        for i in range(1, 7):
            self.xdo("mousemove", x0 + (x1 - x0) * i // 6, y0 + (y1 - y0) * i // 6)
            yield later(0.02)
        self.xdo("mouseup", 1)
        self.clicks += 1
        yield later(0.05)

    def press_at(self, widget, local):
        x, y = self.point(widget, local)
        self.xdo("mousemove", x, y)
        yield later(0.03)
        self.xdo("mousedown", 1)
        self._at = (x, y)
        yield later(0.03)

    def move_to(self, widget, local, steps: int = 6):
        (x0, y0), (x1, y1) = self._at, self.point(widget, local)
        for i in range(1, steps + 1):
            self.xdo("mousemove", x0 + (x1 - x0) * i // steps, y0 + (y1 - y0) * i // steps)
            yield later(0.02)
        self._at = (x1, y1)

    def release(self):
        self.xdo("mouseup", 1)
        self.clicks += 1
        yield later(0.05)

    def cable(self, canvas, start, switch: str, port: str = "", shots=None):
        """Drag a cable from `start` (viewport point) onto a switch: its ports expand under the cable,
        then the mouse goes to `port` on the strip, or to the switch's name (its body) and lets go."""
        from PySide6.QtCore import QPointF
        vp = canvas.viewport()
        sw = canvas.devices[switch]
        yield from self.press_at(vp, start)
        yield from self.move_to(vp, canvas.mapFromScene(sw.mapToScene(QPointF(sw.w / 2, sw.h / 2))))
        yield lambda: sw.expanded
        if shots is not None:
            yield from self.shoot(shots[0], "switch-ports-expanded", shots[1])
        spot = sw.marks[port].rect.center() if port else QPointF(sw.w / 2, sw.h - 14)
        yield from self.move_to(vp, canvas.mapFromScene(sw.mapToScene(spot)), steps=2)
        yield from self.release()

    def key(self, *keys: str):
        self.xdo("key", "--clearmodifiers", *keys)
        self.keys += len(keys)
        yield later(0.05)

    def type(self, text: str):
        self.xdo("type", "--delay", "20", text)
        self.keys += len(text)
        yield later(0.05)

    def shoot(self, tag: str, name: str, shots: list):
        yield later(0.15)
        path = OUT / f"{tag}-{name}.png"
        self.window.screen().grabWindow(0).save(str(path))
        shots.append(path)

    def place(self, key: str, at):
        """Pick `key` in the palette (unless armed), click the canvas at `at`; times click to repaint."""
        w = self.window
        palette = w.palette
        if w.canvas.armed != key:
            rect = palette.list.visualItemRect(palette.item_for(key))
            yield from self.click(palette.list.viewport(), rect.center())
            yield lambda: w.canvas.armed == key
        bed = w.document.bed
        count = len(bed.servers) + len(bed.switches) + len(bed.arrays)
        painted: list[float] = []
        watch = paint_watch(painted)
        x, y = self.point(w.canvas.viewport(), at)
        self.xdo("mousemove", x, y)
        yield later(0.1)
        w.canvas.viewport().installEventFilter(watch)
        start = time.perf_counter()
        self.xdo("click", 1)
        self.clicks += 1
        yield lambda: len(bed.servers) + len(bed.switches) + len(bed.arrays) == count + 1 and bool(painted)
        w.canvas.viewport().removeEventFilter(watch)
        self.paint_times.append(painted[-1] - start)


def script(s: Session, tag: str, result: dict):
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication, QMenu
    window = s.window
    doc = window.document
    shots: list[Path] = []
    yield lambda: window.isVisible() and window.canvas.viewport().isVisible()
    yield later(0.5)
    # no window manager gives the window the keyboard: focus it the way one would
    s.xdo("search", "--sync", "--name", "Testbed Studio", "windowfocus", "--sync")
    yield lambda: QApplication.activeWindow() is window
    yield from s.shoot(tag, "empty", shots)

    # a small bed: two hosts, a switch, an array; two cables
    vp = window.canvas.viewport()
    cx, cy = vp.width() // 2, vp.height() // 2
    yield from s.place("server:hypervisor", QPoint(cx - 200, cy - 150))
    yield from s.place("server:hypervisor", QPoint(cx + 100, cy - 150))
    yield from s.place("switch:ethernet", QPoint(cx - 50, cy + 20))
    yield from s.place("array", QPoint(cx - 50, cy + 180))
    yield from s.key("Escape")
    canvas = window.canvas
    if os.environ.get("X_SESSION_TRACE"):
        from PySide6.QtCore import QEvent, QObject

        class Presses(QObject):
            def eventFilter(self, obj, event):
                if event.type() in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
                    print("  ", event.type(), event.position().toPoint(), file=sys.stderr)
                return False
        s.presses = Presses()
        vp.installEventFilter(s.presses)
    for host in ("host-1", "host-2"):
        item = canvas.devices[host]
        port = canvas.mapFromScene(item.mapToScene(item.marks["SAN1"].rect.center()))
        if os.environ.get("X_SESSION_TRACE"):
            print("before", host, item.pos(), item.marks["SAN1"].rect, canvas._device_at(canvas.mapToScene(port)),
                  file=sys.stderr)
        yield from s.cable(canvas, port, "sw-1")
        if os.environ.get("X_SESSION_TRACE"):
            print("after drag", host, port, repr(canvas.last_message), canvas.armed, len(doc.bed.arrays),
                  [(d.id, d.x, d.y) for d in doc.bed.servers], file=sys.stderr)
    yield lambda: len(doc.bed.links) == 2
    result.update(clicks=s.clicks, keys=s.keys)
    yield from s.shoot(tag, "small-bed", shots)

    # a cable to one switch port: over the switch its ports expand, the cable drops on port 7
    item = canvas.devices["host-2"]
    port = canvas.mapFromScene(item.mapToScene(item.marks["SAN2"].rect.center()))
    yield from s.cable(canvas, port, "sw-1", "7", shots=(tag, shots))
    yield lambda: ("host-2:SAN2", "sw-1:7") in {(lk.a, lk.b) for lk in doc.bed.links}
    result["switch_port_cable"] = "host-2:SAN2 -> sw-1:7"

    # a volume mapped to both hosts (the storage view has sessions of its own: set up through the model)
    from topology import storage_ops
    for edit in (lambda b: storage_ops.create_disk_group(b, "array-1", [("E0", n) for n in range(4)], "raid10",
                                                         name="data"),
                 lambda b: storage_ops.create_volume(b, "array-1", "VMStore", group="data", remainder=True),
                 lambda b: storage_ops.map_volume(b, "array-1", "VMStore", "host-1"),
                 lambda b: storage_ops.map_volume(b, "array-1", "VMStore", "host-2")):
        doc.apply(edit(doc.bed))
    # the array cabled by mouse: dropped on the switch, each cable takes the next free port
    for port in ("A0", "B0"):
        array = canvas.devices["array-1"]
        yield from s.cable(canvas, canvas.mapFromScene(array.mapToScene(array.marks[port].rect.center())), "sw-1")
    yield lambda: len(doc.bed.links) == 5
    # the path view from the host's context menu
    host = canvas.devices["host-1"]
    yield from s.click(vp, canvas.mapFromScene(host.mapToScene(host.w / 2, 14)), button=3)
    yield lambda: isinstance(QApplication.activePopupWidget(), QMenu)
    menu = QApplication.activePopupWidget()
    action = next(a for a in menu.actions() if a.text() == "Storage paths…")
    yield from s.click(menu, menu.actionGeometry(action).center())
    yield lambda: window.paths.explanation is not None and window.paths.tree.topLevelItemCount() == 2
    yield lambda: len(window.canvas.shown_paths) == 2
    result["paths_shown"] = [window.paths.tree.topLevelItem(i).text(0)
                             for i in range(window.paths.tree.topLevelItemCount())]
    yield from s.shoot(tag, "path-view", shots)
    window.docks["findings"].raise_()

    # the context menu of a device: Duplicate
    host = canvas.devices["host-1"]
    centre = canvas.mapFromScene(host.mapToScene(host.w / 2, 14))
    yield from s.click(vp, centre, button=3)
    yield lambda: isinstance(QApplication.activePopupWidget(), QMenu)
    menu = QApplication.activePopupWidget()
    yield from s.shoot(tag, "context-menu", shots)
    action = next(a for a in menu.actions() if a.text() == "Duplicate")
    yield from s.click(menu, menu.actionGeometry(action).center())
    yield lambda: len(doc.bed.servers) == 3

    # Find: Ctrl+F, type, Enter
    yield from s.key("ctrl+f")
    yield lambda: window.find_bar.isVisible() and window.find_bar.field.hasFocus()
    yield from s.type("host-2")
    yield from s.key("Return")
    yield lambda: window.selection.ids == {"host-2"}
    yield from s.shoot(tag, "find", shots)
    yield from s.key("Escape")

    # File > New from Example: the gallery, the second example, discard the unsaved bed
    yield from s.key("ctrl+shift+n")
    yield lambda: QApplication.activeModalWidget() is not None
    gallery = QApplication.activeModalWidget()
    yield from s.shoot(tag, "example-gallery", shots)
    yield from s.click(gallery.list.viewport(), gallery.list.visualItemRect(gallery.list.item(1)).center())
    name = gallery.beds[gallery.chosen()].bed.name
    yield from s.click(gallery.create, gallery.create.rect().center())
    yield lambda: QApplication.activeModalWidget() not in (None, gallery)
    question = QApplication.activeModalWidget()
    discard = next(b for b in question.buttons() if "Discard" in b.text().replace("&", ""))
    yield from s.click(discard, discard.rect().center())
    yield lambda: doc.path is None and doc.bed.bed.name == name
    yield later(0.3)
    yield from s.shoot(tag, "from-example", shots)

    # the Run tab with real fio running, and its live metrics page (tests/x_session_run.py)
    from tests.x_session_run import run_tab_script
    yield from run_tab_script(s, tag, result, shots)
    result.update(repaint_ms=[round(t * 1000, 1) for t in s.paint_times],
                  shots=[str(p.relative_to(ROOT)) for p in shots])


def run(tag: str, width: int, height: int) -> dict:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.gc_owner import GuiCollector
    GuiCollector.install(app)
    from widgets.main_window import MainWindow
    window = MainWindow()
    window.setGeometry(0, 0, width, height)
    window.show()
    result: dict = {"size": tag}

    def shot(failure: str) -> None:
        print(f"x-session {tag}: {failure}", file=sys.stderr, flush=True)
        window.screen().grabWindow(0).save(str(OUT / f"{tag}-failure.png"))
    failure = play(app, script(Session(app, window), tag, result), 10.0, shot)
    window.document.undo_stack.clear()
    window.document.undo_stack.setClean()
    window.close()                        # shuts the workers down before the widgets go
    if failure:
        raise SystemExit(f"x-session {tag}: {failure}")
    return result


def main(sizes: list[str]) -> int:
    if not shutil.which("Xvfb") or not shutil.which("xdotool"):
        print("x-session: needs Xvfb and xdotool (apt-get install xvfb xdotool)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    if os.environ.get("X_SESSION_CHILD"):
        width, height = map(int, sizes[0].split("x"))
        result = run(sizes[0], width, height)
        times = result["repaint_ms"]
        print(f"{result['size']}: small bed (2 hosts, switch, array, 2 cables) in {result['clicks']} clicks "
              f"and {result['keys']} key presses; click to repaint median {statistics.median(times):.0f} ms, "
              f"worst {max(times):.0f} ms over {len(times)} placements; cable to one switch port by mouse: "
              f"{result['switch_port_cable']}; path view from the host's menu: "
              f"{'; '.join(result['paths_shown'])}; screenshots: {', '.join(result['shots'])}")
        print(f"{result['size']} run tab: {result['preflight']} | while fio ran the run list said "
              f"“{result['run list while running']}”, after: “{result['run list after']}” (load step "
              f"{result['load step']}); plots {result['plots']}; the finished run fills {result['plot filled']}")
        return 0
    status = 0
    for size in sizes:
        # Xvfb picks a free display and writes its number: sessions run side by side never share one
        read_fd, write_fd = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{size}x24",
                                 "-nolisten", "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                pass_fds=(write_fd,))
        os.close(write_fd)
        try:
            with os.fdopen(read_fd) as numbers:
                display = f":{numbers.readline().strip()}"
            env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "X_SESSION_CHILD": "1",
                   "TESTBED_STUDIO_STATE_DIR": tempfile.mkdtemp(prefix="testbed-xsession-")}
            status |= subprocess.run([sys.executable, __file__, size], env=env, timeout=400).returncode
        finally:
            xvfb.terminate()
            xvfb.wait(timeout=10)
    return status


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:] or ["1920x1080", "1366x768"]))
