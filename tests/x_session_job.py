"""The whole job in a real X server (issue 32): from an empty bed to a finished local fio run with
the pointer and the keyboard only, no YAML written: two hosts, a switch and an array placed from
the palette, cabled by dragging, a disk group, a volume and its mappings in the Storage tab, the
host's OS typed into its form, its access entry added and tested from the form, a fio workload
added and filled in (parameters, I/O mix, criterion, duration), the bed saved with Ctrl+S, the
Run tab's New run, Pre-flight and Run step; the load runs for real (fio, 20 s) on this machine.

On the way it checks issue 32's items in the real window: a refused host name (2), the readiness
count before access and OS exist (3), eight finding rows (5), a Find bar that moves nothing and
leaves with the bed (6, 8), the window within the screen (8).

    python tests/x_session_job.py [1366x768 1920x1080]

Screenshots go to build/x-session-job/.  Needs Xvfb, xdotool and fio.  Exits non-zero when a step
did not have its effect; tests/test_x_session_job.py runs it (bounded to a few minutes).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "x-session-job"
RUN_SECONDS = 10


def into_view(widget):
    """Scroll the scroll areas around `widget` until it shows (a 1366x768 screen cuts pages short)."""
    from PySide6.QtWidgets import QScrollArea
    parent = widget.parent()
    while parent is not None:
        if isinstance(parent, QScrollArea):
            parent.ensureWidgetVisible(widget, 10, 10)
        parent = parent.parent()


def script(s, tag: str, result: dict, folder: Path):
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtWidgets import QApplication, QFileDialog, QMenu

    from app.run import journal as J
    from tests.x_session import later
    from widgets.forms.access_box import AccessBox
    from widgets.forms.record_table import RecordTable
    w = s.window
    doc = w.document
    shots: list[Path] = []
    yield lambda: w.isVisible() and w.canvas.viewport().isVisible()
    yield later(0.5)
    s.xdo("search", "--sync", "--name", "Testbed Studio", "windowfocus", "--sync")
    yield lambda: QApplication.activeWindow() is w
    area = w.screen().availableGeometry()
    result["window within the screen"] = w.frameGeometry().width() <= area.width() + 2 and \
        w.frameGeometry().height() <= area.height() + 2

    # hosts, switch, array from the palette; cables by dragging
    vp = w.canvas.viewport()
    cx, cy = vp.width() // 2, vp.height() // 2
    yield from s.place("server:hypervisor", QPoint(cx - 200, cy - 150))
    yield from s.place("server:hypervisor", QPoint(cx + 100, cy - 150))
    yield from s.place("switch:ethernet", QPoint(cx - 50, cy + 20))
    yield from s.place("array", QPoint(cx - 50, cy + 180))
    yield from s.key("Escape")
    canvas = w.canvas
    for host in ("host-1", "host-2"):
        item = canvas.devices[host]
        yield from s.cable(canvas, canvas.mapFromScene(item.mapToScene(item.marks["SAN1"].rect.center())), "sw-1")
    for port in ("A0", "B0"):
        array = canvas.devices["array-1"]
        yield from s.cable(canvas, canvas.mapFromScene(array.mapToScene(array.marks[port].rect.center())), "sw-1")
    yield lambda: len(doc.bed.links) == 4

    # item 3: the procedure is not ready, and the header says so
    yield lambda: bool(w.readiness.gaps)
    result["readiness before"] = w.findings.readiness.text().replace("<", "‹")[:90]

    # storage: four disks dragged into a RAID 10 group, a volume, mapped to both hosts
    bar = w.tabs.tabBar()
    yield from s.click(bar, bar.tabRect(w.tabs.indexOf(w.storage)).center())
    yield lambda: w.tabs.currentWidget() is w.storage and w.storage.slot_map.isVisible()
    smap = w.storage.slot_map
    yield from s.press_at(smap, smap.slot_rect(("E0", 0)).center())
    yield from s.move_to(smap, smap.slot_rect(("E0", 3)).center())
    yield from s.release()
    yield lambda: len(smap.selected_slots()) == 4
    groups = w.storage.groups_tab
    into_view(groups.group_name)
    yield later(0.1)
    yield from s.click(groups.group_name, groups.group_name.rect().center())
    yield from s.type("data")
    button = w.storage.findChild(type(w.run.new_button), "createGroup")
    into_view(button)
    yield later(0.1)
    yield from s.click(button, button.rect().center())
    yield lambda: any(g.name == "data" for g in doc.bed.arrays[0].disk_groups)
    tabs = w.storage.tabs.tabBar()
    yield from s.click(tabs, tabs.tabRect(1).center())
    volumes = w.storage.volumes_tab
    into_view(volumes.volume_name)
    yield later(0.1)
    yield from s.click(volumes.volume_name, volumes.volume_name.rect().center())
    yield from s.type("vmstore")
    yield from s.click(volumes.volume_size, volumes.volume_size.rect().center())
    yield from s.key("ctrl+a")
    yield from s.type("100")
    button = w.storage.findChild(type(w.run.new_button), "createVolume")
    into_view(button)
    yield later(0.1)
    yield from s.click(button, button.rect().center())
    yield lambda: any(v.name == "vmstore" for v in doc.bed.arrays[0].volumes)
    yield from s.click(tabs, tabs.tabRect(2).center())
    mappings = w.storage.mappings_tab
    combo = mappings.map_to_combo
    for host in ("host-1", "host-2"):
        into_view(combo)
        yield later(0.1)
        yield from s.click(combo, combo.rect().center())
        yield lambda: combo.view().isVisible()
        view = combo.view()
        row = combo.findData(host)
        yield from s.click(view.viewport(), view.visualRect(view.model().index(row, 0)).center())
        yield lambda h=host: combo.currentData() == h
        button = w.storage.findChild(type(w.run.new_button), "mapVolume")
        into_view(button)
        yield later(0.1)
        yield from s.click(button, button.rect().center())
        yield lambda h=host: any(m.to == h for m in doc.bed.arrays[0].mappings)
    yield from s.shoot(tag, "storage", shots)
    yield from s.click(bar, bar.tabRect(w.tabs.indexOf(w.canvas)).center())

    # host-2's form: a name the loader would refuse is refused as it is typed (item 2)
    item = canvas.devices["host-2"]
    yield from s.click(vp, canvas.mapFromScene(item.mapToScene(QPointF(item.w / 2, 12))))
    yield lambda: w.properties.shown_subject == "host-2"
    name = w.properties.editor("id")
    yield from s.click(name, name.rect().center())
    yield from s.key("ctrl+a")
    yield from s.type("rack1/R710")
    yield from s.key("Return")
    yield lambda: "cannot be an id" in w.properties.message("id")
    result["refused name"] = w.properties.message("id")[:60]
    yield from s.key("Escape")

    # host-1's form: its OS, its access entry (local: this workstation), tested
    item = canvas.devices["host-1"]
    yield from s.click(vp, canvas.mapFromScene(item.mapToScene(QPointF(item.w / 2, 12))))
    yield lambda: w.properties.shown_subject == "host-1"
    os_field = w.properties.editor("os")
    into_view(os_field)
    yield later(0.1)
    yield from s.click(os_field, os_field.rect().center())
    yield from s.type("Debian 12")
    yield from s.key("Return")
    yield lambda: doc.bed.servers[0].os == "Debian 12"
    box = w.properties.findChild(AccessBox)
    into_view(box.add)
    yield later(0.1)
    yield from s.click(box.add, box.add.rect().center())
    yield lambda: doc.bed.access and w.properties.findChild(AccessBox) is not None \
        and w.properties.findChild(AccessBox).test_button.isVisible()
    box = w.properties.findChild(AccessBox)
    transport = w.properties.editor("access.transport")
    into_view(transport)
    yield later(0.1)
    yield from s.click(transport, transport.rect().center())
    yield lambda: transport.view().isVisible()
    view = transport.view()
    yield from s.click(view.viewport(), view.visualRect(view.model().index(transport.findData("local"), 0)).center())
    yield lambda: doc.bed.access[0].transport == "local"
    box = w.properties.findChild(AccessBox)
    into_view(box.test_button)
    yield later(0.1)
    yield from s.click(box.test_button, box.test_button.rect().center())
    # a real check of this machine: OK, or the programs its steps call that are not installed here
    yield lambda: "OK:" in w.properties.findChild(AccessBox).last_result or \
        "Failed:" in w.properties.findChild(AccessBox).last_result
    result["test connection"] = w.properties.findChild(AccessBox).result.text()
    yield from s.shoot(tag, "access-form", shots)

    # a fio workload on host-1, from Edit › Add Workload, filled in on its form
    menubar = w.menuBar()
    edit = next(a for a in menubar.actions() if a.text() == "&Edit")
    yield from s.click(menubar, menubar.actionGeometry(edit).center())
    yield lambda: isinstance(QApplication.activePopupWidget(), QMenu)
    menu = QApplication.activePopupWidget()
    action = w.actions_by_name["add_workload"]
    yield from s.click(menu, menu.actionGeometry(action).center())
    yield lambda: doc.bed.workloads and w.properties.shown_subject == doc.bed.workloads[0].id
    workload = doc.bed.workloads[0]
    params = w.properties.editor("parameters")
    rows = [params.table.item(r, 0).text() for r in range(params.table.rowCount())]
    for key, value in (("filename", str(folder / "fio.dat")), ("size", "16m")):
        into_view(params)
        yield later(0.1)
        cell = params.table.visualItemRect(params.table.item(rows.index(key), 1)).center()
        yield from s.click(params.table.viewport(), cell)
        yield from s.click(params.table.viewport(), cell)        # a second click edits the cell
        yield from s.type(value)
        yield from s.key("Return")
        yield lambda k=key: k in workload.parameters
    for attr, cells in (("access", {1: "4", 2: "70"}), ("criteria", {0: "read_latency_avg_ms", 1: "<", 2: "20"})):
        for column, value in cells.items():
            table = {t.fp.attr: t for t in w.properties.findChildren(RecordTable)}[attr]
            into_view(table)
            yield later(0.1)
            last = table.table.rowCount() - 1
            table.table.scrollToItem(table.table.item(last, column))
            yield later(0.1)
            cell = table.table.visualItemRect(table.table.item(last, column)).center()
            yield from s.click(table.table.viewport(), cell)
            yield from s.click(table.table.viewport(), cell)
            yield from s.type(value)
            yield from s.key("Return")
            yield later(0.1)
    yield lambda: len(workload.access) == 1 and len(workload.criteria) == 1
    duration = w.properties.editor("duration_minutes")
    into_view(duration)
    yield later(0.1)
    yield from s.click(duration, duration.rect().center())
    yield from s.type(f"{RUN_SECONDS / 60:.4g}")
    yield from s.key("Return")
    yield lambda: workload.duration_minutes is not None
    yield from s.shoot(tag, "workload-form", shots)
    result["workload"] = (f"{workload.id}: {workload.tool} on {workload.driver}, {workload.parameters}, "
                          f"{len(workload.access)} mix row, {len(workload.criteria)} criterion, "
                          f"{workload.duration_minutes} min")

    # items 5 and 8: eight finding rows; Find floats over the pages and moves nothing
    tree = w.findings.tree
    result["finding rows visible"] = tree.viewport().height() // max(1, tree.sizeHintForRow(0) or 18)
    top = w.tabs.mapToGlobal(QPoint(0, 0)).y()
    yield from s.key("ctrl+f")
    yield lambda: w.find_bar.isVisible()
    yield from s.type("host-1:SAN1")
    yield from s.key("Return")
    yield lambda: w.selection.ids == {"host-1:SAN1"}
    result["find moved the pages by px"] = w.tabs.mapToGlobal(QPoint(0, 0)).y() - top
    yield from s.shoot(tag, "find", shots)
    yield from s.key("Escape")

    # save with Ctrl+S: a new bed asks where
    path = folder / "two-hosts.yaml"
    yield from s.click(vp, QPoint(20, vp.height() - 20))
    yield from s.key("ctrl+s")
    yield lambda: isinstance(QApplication.activeModalWidget(), QFileDialog)
    yield later(0.3)
    yield from s.type(str(path))
    yield from s.key("Return")
    yield lambda: doc.path is not None and Path(doc.path) == path and not doc.dirty

    # the Run tab: New run, Pre-flight, the fio step
    wizard = w.run
    yield from s.click(bar, bar.tabRect(w.tabs.indexOf(wizard)).center())
    yield lambda: w.tabs.currentWidget() is wizard
    yield from s.click(wizard.new_button, wizard.new_button.rect().center())
    yield lambda: (wizard.session is not None and wizard.steps) or QApplication.activeModalWidget() is not None
    question = QApplication.activeModalWidget()
    if question is not None:          # one switch: PATH-002, as a bed of one switch should say; run anyway
        result["asked before the run"] = question.text().splitlines()[0]
        anyway = next(b for b in question.buttons() if "Anyway" in b.text().replace("&", ""))
        yield from s.click(anyway, anyway.rect().center())
    yield lambda: wizard.session is not None and wizard.steps
    yield from s.click(wizard.preflight_button, wizard.preflight_button.rect().center())
    yield lambda: "Pre-flight check:" in wizard.output.toPlainText() and wizard.preflight_button.isEnabled()
    result["preflight"] = wizard.message.text()
    load = next(step for step in wizard.steps if step.template.endswith("run.yaml#load"))
    item = wizard._items[load.number]
    wizard.tree.scrollToItem(item)
    yield later(0.1)
    yield from s.click(wizard.tree.viewport(), wizard.tree.visualItemRect(item).center())
    yield lambda: wizard.current_step() is load and wizard.run_step_button.isEnabled()
    yield from s.click(wizard.run_step_button, wizard.run_step_button.rect().center())
    yield lambda: wizard.step_status(load.number) == J.RUNNING
    # the step's end is waited for, not a whole number of 5 s slices (each one under the driver's limit on
    # one condition): the script goes on the moment the load ends
    ended = lambda: wizard.step_status(load.number) not in (J.PENDING, J.RUNNING)     # noqa: E731
    for _ in range(RUN_SECONDS // 5 + 8):
        if ended():
            break
        until = time.monotonic() + 5
        yield lambda until=until: ended() or time.monotonic() >= until
    yield lambda: ended() and not wizard.controller.busy
    result["load step"] = wizard.step_status(load.number)
    yield from s.shoot(tag, "run-done", shots)
    # item 6: another bed closes the find bar and empties the filters
    yield from s.click(bar, bar.tabRect(w.tabs.indexOf(w.canvas)).center())
    result["shots"] = [str(p.relative_to(ROOT)) for p in shots]
    del Qt


def run(tag: str, width: int, height: int) -> dict:
    from PySide6.QtWidgets import QApplication

    import tests.x_session as xs
    from tests.x_session import Session, play
    xs.OUT = OUT                               # the screenshots of this session go beside its failure shot
    app = QApplication.instance() or QApplication([])
    from app.gc_owner import GuiCollector
    GuiCollector.install(app)
    from widgets.main_window import MainWindow
    folder = Path(tempfile.mkdtemp(prefix="testbed-xjob-"))
    window = MainWindow()
    window.move(0, 0)
    window.show()
    result: dict = {"size": tag}
    failure = play(app, script(Session(app, window), tag, result, folder), 15.0,
                   lambda _text: window.screen().grabWindow(0).save(str(OUT / f"{tag}-failure.png")))
    window.document.undo_stack.clear()
    window.document.undo_stack.setClean()
    window.close()
    if failure:
        raise SystemExit(f"x-session-job {tag}: {failure}")
    return result


def main(sizes: list[str]) -> int:
    if not shutil.which("Xvfb") or not shutil.which("xdotool") or not shutil.which("fio"):
        print("x-session-job: needs Xvfb, xdotool and fio", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    if os.environ.get("X_SESSION_CHILD"):
        width, height = map(int, sizes[0].split("x"))
        result = run(sizes[0], width, height)
        for key, value in result.items():
            print(f"{sizes[0]} {key}: {value}")
        return 0
    status = 0
    for size in sizes:
        read_fd, write_fd = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", f"{size}x24",
                                 "-nolisten", "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                pass_fds=(write_fd,))
        os.close(write_fd)
        try:
            with os.fdopen(read_fd) as numbers:
                display = f":{numbers.readline().strip()}"
            env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "X_SESSION_CHILD": "1",
                   "TESTBED_STUDIO_STATE_DIR": tempfile.mkdtemp(prefix="testbed-xjob-state-")}
            status |= subprocess.run([sys.executable, __file__, size], env=env, timeout=300).returncode
        finally:
            xvfb.terminate()
            xvfb.wait(timeout=10)
    return status


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:] or ["1366x768"]))
