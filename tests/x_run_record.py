"""The run record in a real X server, driven as a lab engineer drives it: Xvfb, the window on the
xcb platform, real pointer and keyboard events through xdotool (tests/x_session.py's Session),
File › Open through the file dialog.  tests/test_run_record_x.py starts one scene per process
(a scene can be killed with -9 half-way, as the application is in the issue) and checks what
the scenes leave: the runs' journals, their metrics, what the screen showed.

    python tests/x_run_record.py SCENE OUT.json ARG...      (DISPLAY set; the test does that)

Scenes (each writes OUT.json as it goes, so a killed scene still says how far it came):
  start BED PATH          New run, skip the steps before the load, then the load by Run step (PATH
                          run_step/retry) or Run all (PATH run_all); says "running" once fio's figures show
  resume BED PATH         the banner's Resume, then the load by PATH (run_all, retry, run_step); answers
                          "Adopt" when asked about the step still running; waits for it to end
  other-bed BED_A BED_B   a run of A, its load running, then File › Open B: what the Run tab shows, and
                          Mark done tried on what it offers
  reopen BED RUN          File › Open, the run chosen in the list and opened: what the plots hold
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "x-run-record"
WAIT_S = 10.0            # the longest one condition is waited for (a scene waits longer in steps)


def fio_bed(path: Path, host: str, data: Path, seconds: float, *, workload: str = "oltp",
            read_ms: float = 20) -> Path:
    """One load client on this machine (local transport) with fio installed, one fio workload."""
    import yaml
    doc = {"format_version": 1, "bed": {"name": f"fio on {host}"},
           "servers": [{"id": host, "role": "load_client", "platform": "linux", "os": "Debian 12",
                        "software": ["fio"]}],
           "workloads": [{"id": workload, "tool": "fio", "driver": host, "targets": [host],
                          "parameters": {"filename": str(data), "size": "16m", "duration_minutes": seconds / 60},
                          "access": [{"block_kb": 4, "read_pct": 70, "random_pct": 100}],
                          "criteria": [{"metric": "read_latency_avg_ms", "comparison": "<", "threshold": read_ms,
                                        "unit": "ms"}]}],
           "run_plan": {"repetitions": 1, "score": "median", "sample_interval_s": 1},
           "access": [{"host": host, "transport": "local"}]}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


class Scene:
    def __init__(self, session, out: Path):
        self.s, self.out, self.result = session, out, {}
        self.window = session.window
        self.wizard = self.window.run

    def say(self, **values) -> None:
        self.result.update(values)
        tmp = self.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.result, indent=1, default=str))
        os.replace(tmp, self.out)

    # ------------------------------------------------------------------ moves a person makes

    def focus(self):
        from PySide6.QtWidgets import QApplication

        from tests.x_session import later
        yield lambda: self.window.isVisible()
        yield later(0.4)
        self.s.xdo("search", "--sync", "--name", "Testbed Studio", "windowfocus", "--sync")
        yield lambda: QApplication.activeWindow() is self.window

    def open_bed(self, path: Path):
        """File › Open (Ctrl+O), the path typed into the dialog, Enter."""
        from PySide6.QtWidgets import QApplication, QFileDialog

        from tests.x_session import later
        yield from self.s.key("ctrl+o")
        yield lambda: isinstance(QApplication.activeModalWidget(), QFileDialog)
        yield later(0.3)
        yield from self.s.key("ctrl+a")
        yield from self.s.type(str(path))
        yield from self.s.key("Return")
        yield lambda: self.window.document.path is not None and Path(self.window.document.path) == path
        yield later(0.3)

    def click(self, widget):
        yield from self.s.click(widget, widget.rect().center())

    def run_tab(self):
        bar = self.window.tabs.tabBar()
        yield from self.s.click(bar, bar.tabRect(self.window.tabs.indexOf(self.wizard)).center())
        yield lambda: self.window.tabs.currentWidget() is self.wizard

    def page(self, widget):
        bar = self.wizard.pages.tabBar()
        yield from self.s.click(bar, bar.tabRect(self.wizard.pages.indexOf(widget)).center())
        yield lambda: self.wizard.pages.currentWidget() is widget

    def select_step(self, number: str):
        w = self.wizard
        item = w._items[number]
        w.tree.scrollToItem(item)
        yield from self.s.click(w.tree.viewport(), w.tree.visualItemRect(item).center())
        yield lambda: w.current_step() is not None and w.current_step().number == number

    def answer(self, button_text: str):
        """The question the run asks (a step still running): the button a person clicks."""
        from PySide6.QtWidgets import QApplication, QMessageBox
        yield lambda: isinstance(QApplication.activeModalWidget(), QMessageBox)
        box = QApplication.activeModalWidget()
        self.say(asked=box.text())
        button = next(b for b in box.buttons() if b.text().replace("&", "") == button_text)
        yield from self.s.click(button, button.rect().center())
        yield lambda: QApplication.activeModalWidget() is not box

    def shoot(self, name: str) -> str:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.window.screen().grabWindow(0).save(str(path))
        return str(path)

    def load_step(self):
        return next(s for s in self.wizard.steps if s.template.endswith("run.yaml#load"))

    def wait_while(self, condition, seconds: float):
        from tests.x_session import later
        end = time.monotonic() + seconds
        while condition() and time.monotonic() < end:
            yield later(min(2.0, WAIT_S / 2))

    # ------------------------------------------------------------------ scenes

    def start(self, bed: Path, path: str):
        """A new run of BED up to its load step, which runs (the test kills this process then)."""
        from app.run import journal as J
        w = self.wizard
        yield from self.focus()
        yield from self.open_bed(bed)
        yield from self.run_tab()
        yield from self.click(w.new_button)
        yield lambda: w.session is not None and w.steps
        load = self.load_step()
        self.say(run_id=w.session.run_id, load=load.number)
        # the steps before the load are done already on this machine: skipped, as a person would
        while True:
            step = w.current_step()
            if step is None or step.number == load.number:
                break
            yield lambda: w.skip_button.isEnabled()
            yield from self.click(w.skip_button)
            yield lambda step=step: w.step_status(step.number) == J.SKIPPED
        self.say(estimate_before_load=w.progress_text.text())
        if path == "run_all":
            yield from self.click(w.run_all_button)
        else:
            yield from self.select_step(load.number)
            yield lambda: w.run_step_button.isEnabled()
            yield from self.click(w.run_step_button)
        yield lambda: w.step_status(load.number) == J.RUNNING
        yield lambda: "fio " in w.output.toPlainText()
        yield from self.wait_while(lambda: w.output.toPlainText().count("fio ") < 3, 20)
        self.say(estimate_while_loading=w.progress_text.text(), output=w.output.toPlainText()[-3000:],
                 running=time.time())
        raw = getattr(w.output, "raw", None)       # "Raw output": one click away
        if raw is not None:
            yield from self.click(raw)
            yield lambda: raw.isChecked()
            self.say(raw_output=w.output.toPlainText()[-3000:])
        yield from self.wait_while(lambda: True, 600)      # until the test kills this process

    def resume(self, bed: Path, path: str):
        """The killed run, opened again: its load step by PATH, adopted, followed to its end."""
        from app.run import journal as J
        w = self.wizard
        yield from self.focus()
        yield from self.open_bed(bed)
        yield from self.run_tab()
        yield lambda: w.banner.isVisible()
        self.say(banner=w.banner_text.text())
        yield from self.wait_while(lambda: not w.resume_button.isEnabled(), 5)
        yield from self.click(w.resume_button)
        yield lambda: w.session is not None and w.steps
        load = self.load_step()
        self.say(run_id=w.session.run_id, status_on_resume=w.step_status(load.number))
        if path == "run_all":
            yield from self.click(w.run_all_button)
        else:
            yield from self.select_step(load.number)
            button = w.retry_button if path == "retry" else w.run_step_button
            yield lambda: button.isEnabled()
            yield from self.click(button)
        yield from self.answer("Adopt")
        yield lambda: w.step_status(load.number) == J.RUNNING
        yield from self.wait_while(lambda: w.step_status(load.number) == J.RUNNING, 120)
        yield lambda: not w.controller.busy
        collect = next((s for s in w.steps if s.template.endswith("#collect-results")), None)
        self.say(load_status=w.step_status(load.number), output=w.output.toPlainText()[-4000:],
                 collect_status=w.step_status(collect.number) if collect else None)
        yield from self.page(w.metrics_page)
        self.say(shot=self.shoot(f"resumed-{path}"))
        # the Compare page lists the run that just finished, without the bed being opened again
        from PySide6.QtCore import Qt
        compare = self.window.compare
        self.window.tabs.setCurrentWidget(compare)      # the page reads the runs folder when shown, on a worker
        yield lambda: compare.isVisible() and not compare._following.busy
        listed = [compare.sides.item(i).data(Qt.ItemDataRole.UserRole) for i in range(compare.sides.count())]
        self.say(compare_lists=listed)

    def other_bed(self, bed_a: Path, bed_b: Path):
        """A's load running, then B opened: the Run tab must show B only and write nothing to A."""
        from app.run import journal as J
        w = self.wizard
        yield from self.focus()
        yield from self.open_bed(bed_a)
        yield from self.run_tab()
        yield from self.click(w.new_button)
        yield lambda: w.session is not None and w.steps
        run_a, load = w.session.run_id, self.load_step()
        self.say(run_a=run_a)
        yield from self.select_step(load.number)
        yield lambda: w.run_step_button.isEnabled()
        yield from self.click(w.run_step_button)
        yield lambda: w.step_status(load.number) == J.RUNNING
        yield lambda: self.wizard.dashboard is not None and self.wizard.dashboard.store.sources()
        yield from self.open_bed(bed_b)
        yield from self.run_tab()
        d = w.dashboard
        from tests.x_session import later
        yield later(2.5)
        self.say(after_open_b={
            "history": [w.history.itemText(i) for i in range(w.history.count())],
            "steps shown": [w.tree.topLevelItem(i).text(0) for i in range(w.tree.topLevelItemCount())],
            "progress": w.progress_text.text(), "criteria": [th.label for th in d.thresholds],
            "series": d.store.sources(), "message": w.message.text()})
        progress_then = w.progress_text.text()
        yield later(2.2)
        self.say(progress_ticking=w.progress_text.text() != progress_then, shot=self.shoot("other-bed-opened"))
        # A's load ends (in the background, or still shown); what a person would try with B open:
        # a manual step of what the Run tab shows, Mark done
        background = getattr(w.controller, "in_background", lambda: ())
        yield from self.wait_while(lambda: run_a in background() or w.step_status(load.number) == J.RUNNING, 60)
        yield lambda: not w.controller.busy
        manual = [n for n, item in w._items.items() if n != load.number and not item.childCount()]
        tried = ""
        if manual:
            tried = manual[-1]
            yield from self.select_step(tried)
            if w.done_button.isEnabled():
                yield from self.click(w.done_button)
                yield later(0.5)
        self.say(mark_tried=tried, message_after=w.message.text())
        yield from self.open_bed(bed_a)
        yield from self.run_tab()
        yield lambda: w.history.findData(run_a) >= 0
        w.history.setCurrentIndex(w.history.findData(run_a))
        yield from self.click(w.open_button)
        yield lambda: w.session is not None and w.session.run_id == run_a
        self.say(reopened_a={"load": w.step_status(load.number), "points": _points(w.dashboard)})

    def reopen(self, bed: Path, run_id: str):
        """A finished run opened again: its plots hold what it recorded."""
        w = self.wizard
        yield from self.focus()
        yield from self.open_bed(bed)
        yield from self.run_tab()
        yield lambda: w.history.findData(run_id) >= 0
        w.history.setCurrentIndex(w.history.findData(run_id))
        yield from self.click(w.open_button)
        yield lambda: w.session is not None and w.session.run_id == run_id
        yield from self.page(w.metrics_page)
        from tests.x_session import later
        yield later(1.0)
        d = w.dashboard
        (x0, x1), _ = d.plots["iops"].vb.viewRange()
        self.say(points=_points(d), axis=[x0, x1], problems=d.problems.toPlainText(),
                 shot=self.shoot("reopened-run"))


def _points(dashboard) -> dict:
    import numpy as np
    out = {}
    for (source, metric), _line in dashboard._curves.items():
        t, v = dashboard.store.series(source, metric)
        out[f"{source} {metric}"] = int(np.isfinite(v).sum())
    return out


def drive(scene_name: str, out: Path, args: list[str]) -> int:
    from PySide6.QtWidgets import QApplication

    from tests.x_session import Session, play
    app = QApplication.instance() or QApplication([])
    from widgets.main_window import MainWindow
    window = MainWindow()
    window.setGeometry(0, 0, 1600, 1000)
    window.show()
    scene = Scene(Session(app, window), out)
    method = {"start": scene.start, "resume": scene.resume, "other-bed": scene.other_bed,
              "reopen": scene.reopen}[scene_name]
    steps = method(*[Path(a) if a.startswith("/") else a for a in args])
    failure = play(app, steps, WAIT_S,
                   lambda text: scene.say(failure=text, failure_shot=scene.shoot(f"{scene_name}-failure")))
    if failure is None:
        scene.say(done=True)
    window.document.undo_stack.setClean()
    window.close()
    return 0 if failure is None else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(drive(sys.argv[1], Path(sys.argv[2]), sys.argv[3:]))
