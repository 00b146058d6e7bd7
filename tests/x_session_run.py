"""The Run tab in the real-X session (tests/x_session.py runs it after the designer part): a bed
with a fio workload on a load client reached through the local transport, driven with the
pointer: Run tab, New run, Pre-flight check, pick the fio step, Run step; the Live metrics page
while real fio runs (30 s, one report a second), then when it is done.  Screenshots of the X
screen go to build/x-session/ beside the designer's."""
from __future__ import annotations

import tempfile
from pathlib import Path

RUN_SECONDS = 30


def fio_bed(folder: Path) -> Path:
    from tests.run_beds import write_fio_bed
    return write_fio_bed(folder / "fio-bed.yaml", "load-client-1", folder / "fio.dat", {"transport": "local"},
                         minutes=RUN_SECONDS / 60)


def run_tab_script(s, tag: str, result: dict, shots: list):
    """A generator of conditions, as x_session's script is (see Session)."""
    from PySide6.QtCore import QPoint

    from app.run import journal as J
    window = s.window
    wizard = window.run
    folder = Path(tempfile.mkdtemp(prefix="testbed-xsession-fio-"))
    assert window.open_path(fio_bed(folder))        # File › Open (the designer part drove the menus)
    yield lambda: window.document.bed.workloads and window.document.path is not None

    bar = window.tabs.tabBar()
    yield from s.click(bar, bar.tabRect(window.tabs.indexOf(wizard)).center())
    yield lambda: window.tabs.currentWidget() is wizard and not window.docks["properties"].isVisible()
    yield from s.click(wizard.new_button, wizard.new_button.rect().center())
    yield lambda: wizard.session is not None and wizard.steps
    yield from s.click(wizard.preflight_button, wizard.preflight_button.rect().center())
    yield lambda: "Pre-flight check:" in wizard.output.toPlainText() and wizard.preflight_button.isEnabled()
    result["preflight"] = wizard.message.text()

    load = next(step for step in wizard.steps if step.template.endswith("run.yaml#load"))
    item = wizard._items[load.number]
    wizard.tree.scrollToItem(item)
    yield from s.click(wizard.tree.viewport(), wizard.tree.visualItemRect(item).center())
    yield lambda: wizard.current_step() is load and wizard.run_step_button.isEnabled()
    yield from s.click(wizard.run_step_button, wizard.run_step_button.rect().center())
    yield lambda: wizard.step_status(load.number) == J.RUNNING
    dash = wizard.dashboard
    yield lambda: ("load-client-1", "iops") in dash._curves and "[" in wizard.output.toPlainText()
    yield from s.shoot(tag, "run-tab-running", shots)
    result["run list while running"] = wizard.history.currentText()

    pages = wizard.pages.tabBar()
    yield from s.click(pages, pages.tabRect(wizard.pages.indexOf(wizard.metrics_page)).center())
    yield lambda: wizard.pages.currentWidget() is wizard.metrics_page
    yield from _wait(12)
    yield from s.shoot(tag, "metrics-live", shots)
    result["plots"] = {k: f"{p.vb.width():.0f}×{p.vb.height():.0f}" for k, p in dash.plots.items()}
    for _ in range(RUN_SECONDS // 5 + 6):            # the driver waits 10 s at most on one condition
        if wizard.step_status(load.number) not in (J.PENDING, J.RUNNING):
            break
        yield from _wait(5)
    yield lambda: wizard.step_status(load.number) not in (J.PENDING, J.RUNNING) and not wizard.controller.busy
    yield from _wait(1.0)
    yield from s.shoot(tag, "metrics-done", shots)
    result["load step"] = wizard.step_status(load.number)
    result["run list after"] = wizard.history.currentText()
    (x0, x1), _ = dash.plots["iops"].vb.viewRange()
    t, _v = dash._curves[("load-client-1", "iops")].getData()
    result["plot filled"] = f"{(t[-1] - t[0]) / (x1 - x0):.0%} of a {x1 - x0:.0f} s axis"
    bar_point = QPoint(bar.tabRect(0).center())
    yield from s.click(bar, bar_point)                   # back to the drawing: its docks come back
    yield lambda: window.docks["properties"].isVisible()


def _wait(seconds: float):
    from tests.x_session import later
    while seconds > 0:                  # in steps under the driver's 10 s limit on one condition
        yield later(min(seconds, 5.0))
        seconds -= 5.0
