"""The path view: why a host reaches a volume or not, on screen.

Pick a host and one of the volumes it uses (or come here from a finding, the component tree or
the canvas's menu) and the view lists each storage path hop by hop — host port, cable, switch
ports, switch links, array port, controller, LUN — while the diagram highlights them, each in
its own colour.  Where no path carries the volume, the view says the first hop that fails (no
cable, different subnet, no zone, not mapped; in a scenario also the parts the scenario takes
out that the reference configuration's paths crossed) and the diagram rings them in red.

It shows the document's current scenario (the reference configuration when "all scenarios"
is chosen).  The paths come from topology/path_explain.py, worked out on a worker thread from
a snapshot of the bed, again after every edit; nothing is worked out here.
"""
from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.background import BackgroundJob, DrawingFirst, Outcome, edited_meanwhile, unless_edited
from widgets.canvas.path_overlay import path_colour

STEP_WORDS = {"vnic": "virtual NIC", "vswitch": "virtual switch", "iface": "iSCSI interface", "port": "host port",
              "cable": "cable", "switch_port": "switch port", "switch": "switch", "isl": "switch link",
              "target": "array port", "controller": "controller", "lun": "volume"}
PATH_ROLE = Qt.ItemDataRole.UserRole


def _survey(bed: Any, host: str, volume: str, scenario: str | None) -> Any:
    from topology.path_explain import survey
    return survey(bed, host, volume, scenario)


def _swatch(index: int) -> QIcon:
    pix = QPixmap(12, 12)
    pix.fill(path_colour(index))
    return QIcon(pix)


class PathView(QWidget):
    highlight = Signal(object)          # (paths: step lists, trouble: refs, numbers: the paths' numbers) or None
    reveal = Signal()                   # bring the highlighted paths into sight on the diagram

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.survey: Any = None
        self.explanation: Any = None
        self._want: tuple[str, str] = ("", "")
        self._filling = False
        self._hosts_listed: list[str] = []     # the hosts in host_box, in its order
        self._shown = False          # in front (a dock tab behind another is "visible" to Qt)

        self.host_box = QComboBox(self)
        self.host_box.setObjectName("pathHost")
        self.host_box.setToolTip("A server or VM that uses storage")
        self.host_box.setMinimumContentsLength(10)
        self.host_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.volume_box = QComboBox(self)
        self.volume_box.setObjectName("pathVolume")
        self.volume_box.setToolTip("A volume the host uses (mapped to it, its VMs' disks, its cluster's volumes)")
        self.volume_box.setMinimumContentsLength(14)
        self.volume_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.where = QLabel(self)
        self.where.setObjectName("pathScenario")
        self.show_button = QPushButton("Show on diagram", self)
        self.show_button.setToolTip("Bring the highlighted paths into sight on the diagram")
        self.show_button.clicked.connect(self.reveal.emit)
        # narrow enough for a 1366-px window with the validation panel beside it as a tab
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Host:"))
        top.addWidget(self.host_box, 1)
        top.addWidget(QLabel("Volume:"))
        top.addWidget(self.volume_box, 2)
        top.addWidget(self.show_button)

        self.status = QLabel(self)
        self.status.setObjectName("pathStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("pathTree")
        self.tree.setHeaderLabels(["Path", "Hop"])
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setUniformRowHeights(True)
        self.tree.currentItemChanged.connect(lambda *_: self._emit_highlight())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.where)
        layout.addWidget(self.status)
        layout.addWidget(self.tree, 1)

        self.host_box.currentIndexChanged.connect(lambda _i: self._chosen())
        self.volume_box.currentIndexChanged.connect(lambda _i: self._chosen())
        self._job = BackgroundJob(self, name="path-view", prepare=self._prepare, debounce_ms=300,
                                  current_revision=self._revision, waits_for=DrawingFirst.of(document), turn=2)
        self._job.result.connect(self._finished)
        document.changed.connect(lambda _ids: self._job.request())
        document.reset.connect(self._reset)
        choice = getattr(document, "scenario", None)
        if choice is not None:
            choice.changed.connect(lambda _v: self._job.run_now())
        self._show_nothing("Working out the paths…")

    # ------------------------------------------------------------------ public
    def show_for(self, host: str, volume: str = "") -> None:
        """Explain `host` (and `volume`, else its first volume) now."""
        self._want = (host, volume)
        self._job.run_now()

    def scenario(self) -> str | None:
        choice = getattr(self.document, "scenario", None)
        return choice.scenario_id() if choice is not None else None

    def wait(self, msecs: int = 10000) -> bool:
        """Tests: the worker is done (its result is handed on by the event loop)."""
        return self._job.wait(msecs)

    def shutdown(self) -> None:
        self._job.shutdown(30000)

    @property
    def shown_paths(self) -> list[Any]:
        return list(self.explanation.paths) if self.explanation is not None else []

    # ------------------------------------------------------------------ working it out
    def _revision(self) -> int:
        return hash((self.document.revision, self.scenario(), self._want))

    def _prepare(self):
        # the live model, no copy (see app.background.unless_edited): a pickled copy stalled the GUI
        doc, bed = self.document, self.document.bed
        host, volume = self._want
        scenario = self.scenario()
        return self._revision(), lambda: unless_edited(doc, lambda: _survey(bed, host, volume, scenario))

    def _reset(self) -> None:
        self._want = ("", "")
        self.survey = self.explanation = None
        self.highlight.emit(None)
        self._job.run_now()

    def _chosen(self) -> None:
        if self._filling:
            return
        self._want = (self.host_box.currentData() or "", self.volume_box.currentData() or "")
        self._job.run_now()

    def _finished(self, outcome: Outcome) -> None:
        if edited_meanwhile(outcome):
            return          # the edit that ran into it has asked for the next survey
        if outcome.error:
            self._show_nothing(f"The paths could not be worked out: {escape(outcome.error)}", error=True)
            return
        self.survey = outcome.value
        self._want = (self.survey.host, self.survey.volume)
        self._fill_boxes()
        self.explanation = self.survey.explanation
        scenario = self.scenario()
        self.where.setText(f"In scenario {scenario}" if scenario else "In the reference configuration")
        if self.explanation is None:
            text = ("No host uses a volume here yet: map a volume to a host in the Storage view."
                    if not self.survey.uses else f"{escape(self.survey.host)} uses no volume here.")
            self._show_nothing(text)
            return
        self._fill_tree()
        self._emit_highlight()

    def _fill_boxes(self) -> None:
        s = self.survey
        self._filling = True
        try:
            hosts = list(s.uses)
            if s.host and s.host not in hosts:
                hosts.insert(0, s.host)
            # the hosts listed are kept here: asking the box for each of 4,000 hosts after every edit took 0.1 s
            if self._hosts_listed != hosts or self.host_box.count() != len(hosts):
                self.host_box.clear()
                for h in hosts:
                    self.host_box.addItem(h, h)
                self._hosts_listed = hosts
            self.host_box.setCurrentIndex(max(0, self.host_box.findData(s.host)))
            volumes = sorted(s.uses.get(s.host, {}))
            self.volume_box.clear()
            for v in volumes:
                self.volume_box.addItem(f"{v} ({s.uses[s.host][v]})", v)
            self.volume_box.setCurrentIndex(max(0, self.volume_box.findData(s.volume)))
        finally:
            self._filling = False

    # ------------------------------------------------------------------ showing
    def _show_nothing(self, text: str, *, error: bool = False) -> None:
        self.explanation = None
        self.tree.clear()
        colour = "#c62828" if error else "palette(mid)"
        self.status.setText(f'<span style="color:{colour}">{text}</span>')
        self.highlight.emit(None)

    def _fill_tree(self) -> None:
        e = self.explanation
        self.tree.clear()
        for i, path in enumerate(e.paths):
            words = "" if path.working else " (not counted: its route is cut)"
            top = QTreeWidgetItem([f"{i + 1}. {path.text()}", ("pinned" if path.pinned else "derived") + words])
            top.setIcon(0, _swatch(i))
            top.setData(0, PATH_ROLE, i)
            for step in path.steps:
                child = QTreeWidgetItem([step.text if step.kind not in ("cable", "isl") else
                                         " — ".join(step.ends), STEP_WORDS.get(step.kind, step.kind)])
                child.setData(0, PATH_ROLE, i)
                top.addChild(child)
            self.tree.addTopLevelItem(top)
        self.status.setText(self._status_html())

    def _status_html(self) -> str:
        e = self.explanation
        used = f" ({escape(e.why_used)})" if e.why_used else ""
        head = f"<b>{escape(e.host)}</b> → <b>{escape(e.volume)}</b>{used}: "
        n = len(e.working)
        parts = []
        if n:
            colour = "#2e7d32" if n >= 2 else "#b26a00"
            parts.append(f'<span style="color:{colour}"><b>{n} path{"s" if n != 1 else ""}</b></span>'
                         + ("" if n >= 2 else " — one cable, port or controller away from losing it"))
        else:
            parts.append(f'<span style="color:#c62828"><b>no path</b>. First hop that fails: '
                         f'{escape(e.missing.rstrip("."))}.</span>')
        if e.reference_paths:
            gone = ", ".join(escape(t) for t in e.taken_out) or "parts on its paths"
            parts.append(f"In the reference configuration it has {e.reference_paths} paths; "
                         f"this scenario fails or leaves out {gone}.")
        if e.owner:
            parts.append(escape(e.owner))
        return head + " ".join(parts)

    def _emit_highlight(self) -> None:
        e = self.explanation
        if e is None or not self._shown:
            self.highlight.emit(None)
            return
        item = self.tree.currentItem()
        chosen = item.data(0, PATH_ROLE) if item is not None else None
        numbers = [i for i in range(len(e.paths)) if chosen is None or i == chosen]
        self.highlight.emit(([e.paths[i].steps for i in numbers], list(e.problem_refs), numbers))

    def set_shown(self, shown: bool) -> None:
        """The view came in front (or went behind another tab): the highlight belongs to it."""
        self._shown = shown
        self._emit_highlight()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.set_shown(True)

    def hideEvent(self, event) -> None:
        super().hideEvent(event)
        self.set_shown(False)
