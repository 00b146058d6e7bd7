"""The validation panel: the live validator's findings, grouped by severity, with counts,
filters, the reason and fix hint of the chosen finding, and documented exceptions.

The panel only shows results: validation runs debounced on a worker thread
(app/live_validation.py) and the panel redraws when `findings_changed` arrives.  Picking a
finding selects and centres its components in every view (`selection.focus`).  Accepting
a finding records a documented exception (code, subject, reason) in the bed as one
undoable edit; the finding stays listed, marked accepted with its reason, and the
acceptance can be withdrawn the same way.

The validator judges the reference configuration and every scenario; each finding names
its scenario.  The scenario box narrows the list to one scenario (the reference findings
plus what that scenario adds) or to the reference configuration alone; the choice is the
document's current scenario (app/current_scenario.py), which the placement view, the canvas
badges and the path view follow too.
"""
from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.current_scenario import ALL as ALL_SCENARIOS
from app.current_scenario import REFERENCE
from app.live_validation import same_findings
from topology.exception_ops import ExceptionError, accept_finding, exception_subject, unaccept_finding
from widgets.finding_cases import cases_html
from widgets.findings_model import (
    _ICONS,
    GROUP_ORDER,
    GROUP_TITLES,
    SEVERITIES,
    SEVERITY_COLOURS,
    SEVERITY_WORDS,
    FindingsModel,
    count_words,
    finding_key,
    scenario_words,
    severity_icon,
)
from widgets.grouped_rows_view import GroupedRowsView
from widgets.lifetimes import exec_once


class ValidationPanel(QWidget):
    """Findings of the live validator; emits `summary_changed` with the counts in words."""

    subjects_selected = Signal(list)
    summary_changed = Signal(str)
    paths_requested = Signal(str, str)   # a host and a volume: the path view explains them
    scenario_chosen = Signal(object)     # a scenario id, "" for the reference alone, "*" for all
    readiness_requested = Signal()       # the header's readiness count was clicked: show the Readiness panel

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.findings: list[Any] = []
        self._current_key: tuple | None = None
        self._rebuilding = False
        self._focused_by_current: QPersistentModelIndex | None = None
        self._failed = ""
        self._filling = False
        self._readiness = ""             # app.readiness.counts of the procedure shown ('' = ready)
        self._counted: tuple[Any, str] = (None, "")       # the findings list and count_words of it
        self._menu_filter = ""           # a component 'Validate this' narrowed the list to

        # header: counts, state, filters, search
        self.counts = QLabel(self)
        self.counts.setTextFormat(Qt.TextFormat.RichText)
        self.state = QLabel(self)
        self.state.setStyleSheet("color: palette(mid);")
        self.filter_buttons: dict[str, QToolButton] = {}
        self.scenario_box = QComboBox(self)
        self.scenario_box.setObjectName("validationScenario")
        self.scenario_box.setToolTip("Show the findings of one scenario (with the reference configuration's), "
                                     "of the reference configuration alone, or of every scenario")
        self.scenario_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.scenario_box.currentIndexChanged.connect(self._scenario_box_changed)
        choice = getattr(document, "scenario", None)
        self._scenario = choice.value if choice is not None else ALL_SCENARIOS
        if choice is not None:
            choice.changed.connect(self._follow_scenario)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.counts)
        # the procedure's readiness, counted here too: the panel is never green while the procedure is red
        self.readiness = QLabel(self)
        self.readiness.setObjectName("readinessCount")
        self.readiness.setTextFormat(Qt.TextFormat.RichText)
        self.readiness.linkActivated.connect(lambda _l: self.readiness_requested.emit())
        header.addWidget(self.readiness)
        header.addWidget(self.state)
        header.addStretch(1)
        header.addWidget(self.scenario_box)
        from app.preferences import findings_shown
        shown = findings_shown()        # the filter as it was last left
        for key, text in (("error", "Errors"), ("warning", "Warnings"), ("info", "Notes"), ("accepted", "Accepted")):
            button = QToolButton(self, text=text, checkable=True, checked=shown[key])
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            if key in _ICONS:
                button.setIcon(severity_icon(self, key))
            button.setToolTip(f"Show or hide {GROUP_TITLES[key].lower()}")
            button.toggled.connect(self._filter_toggled)
            header.addWidget(button)
            self.filter_buttons[key] = button
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Filter: code, component or text")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(220)
        header.addWidget(self.search)
        self._search_timer = QTimer(self, singleShot=True, interval=150, timeout=self._refilter)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())

        # the list
        self.model = FindingsModel(self)
        self.tree = GroupedRowsView(self.model, self)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.clicked.connect(self._clicked)
        width = self.fontMetrics().horizontalAdvance
        columns = self.tree.header()
        columns.setStretchLastSection(True)
        columns.resizeSection(0, width("SRIOV-001") + 76)       # the longest code, its icon and the indentation
        columns.resizeSection(1, width("x") * 90)
        columns.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)

        # the chosen finding: what, why (with source), how to fix, and the exception buttons
        self.detail = QTextBrowser(self)
        self.detail.setOpenLinks(False)
        self.detail.anchorClicked.connect(self._detail_link)
        self.show_button = QPushButton("Show components", self)
        self.show_button.setToolTip("Select the finding's components and centre them in every view")
        self.accept_button = QPushButton("Accept as documented exception…", self)
        self.accept_button.setToolTip("Record in the bed that this finding is expected here, with the reason")
        self.unaccept_button = QPushButton("Withdraw exception", self)
        self.unaccept_button.setToolTip("Remove the documented exception: the finding counts again")
        self.show_button.clicked.connect(lambda: self._focus_current())
        self.accept_button.clicked.connect(lambda: self.accept_current())
        self.unaccept_button.clicked.connect(lambda: self.unaccept_current())
        self.notice = QLabel(self)
        self.notice.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for b in (self.show_button, self.accept_button, self.unaccept_button):
            buttons.addWidget(b)
        buttons.addWidget(self.notice, 1)
        lower = QWidget(self)
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.detail, 1)
        lower_layout.addLayout(buttons)
        # the detail beside the list: the list keeps the dock's height (8 rows and more at 1366x768)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(lower)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self.tree.setMinimumHeight(self.rows_height(MIN_ROWS))
        self.detail.setMinimumWidth(width("x") * 30)
        self.splitter.setSizes([width("x") * 110, width("x") * 60])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addWidget(self.splitter, 1)

        validation = document.validation
        validation.findings_changed.connect(self.show_findings)
        validation.failed.connect(self.show_message)
        document.changed.connect(lambda _ids: self._set_checking(True))
        document.reset.connect(self._new_bed)
        # a message about the last action goes with the next one; another bed starts unfiltered
        document.changed.connect(lambda _ids: self._tell(""))
        selection.changed.connect(self._selection_moved)
        document.reset.connect(self._reset_filters)
        from app.configuration_choice import ConfigurationChoice
        self.configuration = ConfigurationChoice.of(document) if hasattr(document, "revision") else None
        if self.configuration is not None:
            self.configuration.changed.connect(lambda _name: self._rebuild())
        self.subjects_selected.connect(lambda ids: selection.focus(ids))
        self._show_detail(None)
        if validation.revision_shown == document.revision:
            self.show_findings(validation.findings)
        else:
            self.show_findings([])
            self._set_checking(True)
            validation.run_now()

    # ------------------------------------------------------------------ public
    def summary(self) -> str:
        if self._counted[0] is not self.findings:
            self._counted = (self.findings, count_words(self.findings))
        text = self._counted[1] + (f" so far, checking {p}" if (p := self.document.validation.progress) else "")
        return f"{text} · not ready: {self._readiness}" if self._readiness else text

    def rows_height(self, rows: int) -> int:
        """The list's height for this many rows and its header."""
        row = max(self.tree.sizeHintForRow(0), self.fontMetrics().height() + 6)
        return self.tree.header().sizeHint().height() + rows * row + 2 * self.tree.frameWidth()

    def show_readiness(self, text: str) -> None:
        """The readiness count of the procedure shown (app.readiness.counts; '' = ready)."""
        self._readiness = text
        colour = SEVERITY_COLOURS["error"]
        self.readiness.setText(f' · <a href="readiness" style="color:{colour}">not ready: {escape(text)}</a>'
                               if text else "")
        self.readiness.setToolTip("What keeps the procedure from being carried out: the Readiness panel")
        if not self.findings or self._failed:
            self._rebuild()     # the readiness is only in the list's message row, shown when nothing is listed
        self.summary_changed.emit(self.summary())

    def show_about(self, subject: str) -> None:
        """'Validate this': the list narrowed to one component, until the selection moves on."""
        self.search.setText(subject)
        self._menu_filter = subject
        self._refilter()

    def _selection_moved(self, ids: Any) -> None:
        picked = self.current_finding()
        ours = picked is not None and set(ids) == set(picked.subjects)   # a finding picked in the narrowed list
        if self._menu_filter and set(ids) != {self._menu_filter} and not ours:
            if self.search.text() == self._menu_filter:
                self.search.clear()
            self._menu_filter = ""
        self._tell("")

    def _reset_filters(self) -> None:
        self._menu_filter = ""
        self.search.clear()
        for button in self.filter_buttons.values():
            button.setChecked(True)
        self._tell("")

    @property
    def scenario(self) -> str:
        """The scenario the list follows: an id, REFERENCE or ALL_SCENARIOS."""
        return self._scenario

    def set_scenario(self, scenario: str | None) -> None:
        """Show a scenario (None or "" = the reference configuration alone) here and in every view
        that follows the document's current scenario."""
        wanted = REFERENCE if scenario is None else scenario
        choice = getattr(self.document, "scenario", None)
        if choice is not None:
            choice.set(wanted)           # comes back through _follow_scenario
        else:
            self._follow_scenario(wanted)

    def _follow_scenario(self, wanted: str) -> None:
        if wanted == self._scenario:
            return
        self._scenario = wanted
        self._fill_scenario_box()
        self._rebuild()
        self.scenario_chosen.emit(wanted)

    def _scenario_box_changed(self, index: int) -> None:
        if index >= 0 and not self._filling:
            self.set_scenario(self.scenario_box.itemData(index))

    def _fill_scenario_box(self) -> None:
        ids = [s.id for s in getattr(self.document.bed, "scenarios", [])]
        if self._scenario not in (ALL_SCENARIOS, REFERENCE, *ids):
            self._scenario = ALL_SCENARIOS
        entries = [("All scenarios", ALL_SCENARIOS), ("Reference configuration", REFERENCE)]
        entries += [(f"Scenario: {i}", i) for i in ids]
        box = self.scenario_box
        self._filling = True
        try:
            if [box.itemData(i) for i in range(box.count())] != [d for _, d in entries]:
                box.clear()
                for text, data in entries:
                    box.addItem(text, data)
            box.setCurrentIndex([d for _, d in entries].index(self._scenario))
        finally:
            self._filling = False

    def current_finding(self) -> Any:
        i = self.model.item_index(self.tree.currentIndex())
        return self.findings[i] if i is not None else None

    def visible_findings(self) -> list[Any]:
        """The findings listed now, in the order shown."""
        return [self.findings[i] for _key, shown, _total in self.model.groups for i in shown]

    def group_titles(self) -> list[str]:
        return [self.model.index(r, 0).data() for r in self.model.group_rows()] if self.model.rowCount() else []

    def group_title_of(self, index: QModelIndex) -> str:
        """The title of the group a row is listed under ('' for none)."""
        if not index.isValid() or self.model.message:
            return ""
        g, _position = self.model.locate(index.row())
        return self.model.index(self.model.group_rows()[g], 0).data()

    def index_for(self, finding: Any) -> QModelIndex:
        """The row of a finding in the list (invalid when it is filtered out or its group is closed)."""
        key = finding_key(finding)
        for g, (_k, shown, _t) in enumerate(self.model.groups):
            for r, i in enumerate(shown):
                if finding_key(self.findings[i]) == key:
                    row = self.model.item_row(g, r)
                    return self.model.index(row, 0) if row is not None else QModelIndex()
        return QModelIndex()

    # ------------------------------------------------------------------ showing
    def show_findings(self, findings: list[Any]) -> None:
        findings = list(findings)
        # most edits (a move, a rename of a note) change no finding: the list as shown stands, with its
        # scroll, current row, open groups and counts (tens of thousands of rows, seconds on a big bed)
        same = not self._failed and same_findings(self.findings, findings)
        self._counted = (findings, self._counted[1]) if same and self._counted[0] is self.findings else self._counted
        self._failed = ""
        self.findings = findings
        self._fill_scenario_box()
        self._set_checking(self.document.validation.progress)    # "7 of 66 rules": the list is not complete
        if same:
            self.model.findings = findings      # equal findings, this revision's objects
        else:
            self._rebuild()
        text = self.summary()
        self.summary_changed.emit(text)

    def show_message(self, text: str) -> None:
        """Validation could not run: say so instead of listing findings for a bed that is gone."""
        self._failed = text
        self.findings = []
        self._set_checking(False)
        self._rebuild()
        self.summary_changed.emit(text)

    def _unlisted(self) -> bool:
        """No list of the bed as it is now has come from the validator yet."""
        return self.document.validation.revision_listed != self.document.revision

    def _new_bed(self) -> None:
        """Another bed: the findings shown were the last bed's, and its own are not in yet."""
        self._failed, self.findings = "", []
        self._set_checking(True)
        self._rebuild()

    def _set_checking(self, checking: bool | str) -> None:
        self.state.setText(("checking… " + checking if isinstance(checking, str) else "checking…") if checking else "")

    def in_scenario(self, f: Any) -> bool:
        """Whether a finding belongs to the scenario the list follows (it holds in the reference or in it)
        and to the configuration the chooser shows."""
        chosen = self.configuration.name if self.configuration is not None else None
        if chosen is not None and getattr(f, "configuration", None) not in (None, chosen):
            return False                 # another configuration's: the chooser shows this one
        if self._scenario == ALL_SCENARIOS:
            return True
        places = getattr(f, "where", ()) or ((None, getattr(f, "scenario", None)),)
        return any(scenario is None or scenario == self._scenario for _, scenario in places)

    @staticmethod
    def _matches_text(f: Any, words: list[str]) -> bool:
        hay = " ".join((f.code, f.message, " ".join(f.subjects), f.hint, f.exception_reason,
                        getattr(f, "holds_in", "") or getattr(f, "scenario", None) or "")).lower()
        return all(word in hay for word in words)

    def _refilter(self, *_: Any) -> None:
        self._rebuild()

    def _filter_toggled(self, *_: Any) -> None:
        from app.preferences import set_findings_shown
        try:
            set_findings_shown({k: b.isChecked() for k, b in self.filter_buttons.items()})
        except OSError:
            pass        # a read-only state directory: the filter still applies, it is just not kept
        self._rebuild()

    def _rebuild(self) -> None:
        self._rebuilding = True
        tree = self.tree
        scroll = tree.verticalScrollBar().value()
        try:
            if self._failed:
                self._show_counts(None)
                self.model.show([], [], self._failed)
                self._show_detail(None)
                return
            # one pass over the findings (25,000 on a big bed), the filters read once
            words = self.search.text().strip().lower().split()
            checked = {k: b.isChecked() for k, b in self.filter_buttons.items()}
            chosen = self.configuration.name if self.configuration is not None else None
            keep = None if chosen is None and self._scenario == ALL_SCENARIOS else self.in_scenario
            buckets: dict[str, list[int]] = {k: [] for k in GROUP_ORDER}
            total = dict.fromkeys(GROUP_ORDER, 0)
            current = None
            for index, f in enumerate(self.findings):
                if keep is not None and not keep(f):
                    continue
                key = "accepted" if f.accepted else f.severity
                total[key] += 1
                if checked[key] and (not words or self._matches_text(f, words)):
                    buckets[key].append(index)
            self._show_counts(total)
            groups = [(k, buckets[k], total[k]) for k in GROUP_ORDER if buckets[k]]
            message = ("" if groups else
                       "Checking the bed against the rules…" if not self.findings and self._unlisted() else
                       f"No rule findings — but the procedure is not ready ({self._readiness}): see Readiness."
                       if self._readiness and not self.findings else
                       "No findings: the bed passes every rule." if not self.findings else
                       "No finding matches the filter.")
            self.model.show(self.findings, groups, message)
            if self._current_key is not None:
                for g, (_key, shown, _t) in enumerate(groups):
                    r = next((r for r, i in enumerate(shown) if finding_key(self.findings[i]) == self._current_key),
                             None)
                    row = self.model.item_row(g, r) if r is not None else None
                    if row is not None:
                        current = self.model.index(row, 0)
                        break
            if current is not None:
                tree.setCurrentIndex(current)
            self._show_detail(self.current_finding())
            tree.verticalScrollBar().setValue(scroll)
        finally:
            self._rebuilding = False

    def _show_counts(self, total: dict[str, int] | None) -> None:
        """The header's counts of the findings in the scenario and configuration shown (`total`: per
        group, accepted apart); None: validation failed, its message instead."""
        if total is None:
            self.counts.setText(f'<span style="color:{SEVERITY_COLOURS["error"]}">{escape(self._failed)}</span>')
            return
        parts = []
        for s in SEVERITIES:
            n = total[s]
            colour = SEVERITY_COLOURS[s] if n else "palette(mid)"
            parts.append(f'<b style="color:{colour}">{n}</b> {SEVERITY_WORDS[s][n != 1]}')
        parts.append(f"<b>{total['accepted']}</b> accepted")
        self.counts.setText(" · ".join(parts))

    def _show_detail(self, f: Any) -> None:
        self.show_button.setEnabled(f is not None)
        self.accept_button.setEnabled(f is not None and not f.accepted)
        self.unaccept_button.setEnabled(f is not None and f.accepted)
        if f is None:
            self.detail.setHtml('<p style="color:gray">Pick a finding to see why it matters, its source and '
                                'how to fix it.</p>')
            return
        colour = SEVERITY_COLOURS[f.severity]
        links = ", ".join(f'<a href="subject:{escape(s)}">{escape(s)}</a>' for s in f.subjects)
        html = [f'<p><b>{escape(f.code)}</b> <span style="color:{colour}">{escape(f.severity)}</span>'
                + (' · <b>accepted</b>' if f.accepted else "") + f" — {escape(f.message)}</p>",
                f"<p><b>Holds in</b> {escape(scenario_words(f))}</p>",
                f"<p><b>Components ({len(f.subjects)}):</b> {links or '—'}</p>"]
        html += cases_html(f)
        if f.accepted:
            html.append(f"<p><b>Accepted as a documented exception:</b> {escape(f.exception_reason)}</p>")
        if f.hint:
            html.append(f"<p><b>How to fix:</b> {escape(f.hint)}</p>")
        if f.reason:
            source = f' <i>(Source: {escape(f.source)})</i>' if f.source else ""
            html.append(f"<p><b>Why it matters:</b> {escape(f.reason)}{source}</p>")
        pair = host_and_volume(self.document.bed, f)
        if pair is not None:
            html.append(f'<p><a href="paths:{escape(pair[0])}|{escape(pair[1])}">Show the paths of '
                        f"{escape(pair[0])} to {escape(pair[1])} hop by hop</a></p>")
        self.detail.setHtml("".join(html))

    # ------------------------------------------------------------------ picking
    def _current_changed(self, index: QModelIndex, _previous: QModelIndex) -> None:
        f = self.current_finding()
        self._show_detail(f)
        if self._rebuilding:
            return
        self._current_key = finding_key(f) if f is not None else None
        if f is not None:
            # a mouse press makes the row current and its release then "clicks" it: focus once
            pressed = QGuiApplication.mouseButtons() != Qt.MouseButton.NoButton
            self._focused_by_current = QPersistentModelIndex(index) if pressed else None
            self.subjects_selected.emit(list(f.subjects))

    def _clicked(self, index: QModelIndex) -> None:
        already = self._focused_by_current is not None and self._focused_by_current == index
        self._focused_by_current = None
        if already:
            return
        i = self.model.item_index(index)
        if i is not None:
            self.subjects_selected.emit(list(self.findings[i].subjects))

    def _focus_current(self) -> None:
        f = self.current_finding()
        if f is not None:
            self.subjects_selected.emit(list(f.subjects))

    def _detail_link(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("subject:"):
            self.selection.focus([text[len("subject:"):]])
        elif text.startswith("paths:"):
            host, _, volume = text[len("paths:"):].partition("|")
            self.paths_requested.emit(host, volume)

    def _context_menu(self, pos: Any) -> None:
        index = self.tree.indexAt(pos)
        if self.model.item_index(index) is None:
            return
        self.tree.setCurrentIndex(index)
        f = self.current_finding()
        menu = QMenu(self)
        menu.addAction("Show components", self._focus_current)
        if f.accepted:
            menu.addAction("Withdraw exception", self.unaccept_current)
        else:
            menu.addAction("Accept as documented exception…", self.accept_current)
        menu.addSeparator()
        menu.addAction("Copy", lambda: QGuiApplication.clipboard().setText(
            f"{f.code} ({f.severity}): {f.message} [{', '.join(f.subjects)}]"))
        add_finding_entries(self, menu, f)
        exec_once(menu, self.tree.viewport().mapToGlobal(pos))

    # ------------------------------------------------------------------ documented exceptions
    def accept_current(self) -> bool:
        """Ask for the reason and record the current finding as a documented exception."""
        f = self.current_finding()
        if f is None or f.accepted:
            return False
        from widgets.exception_dialog import ExceptionReasonDialog
        names = list(dict.fromkeys(exception_subject(c.subjects) for c in f.cases()))
        subject = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        dialog = ExceptionReasonDialog(f"Why is {f.code} on {subject} expected in this bed?",
                                       lambda reason: accept_finding(self.document.bed, f, reason), self)
        if not exec_once(dialog) or dialog.edit is None:
            return False
        self.document.apply(dialog.edit)
        self._tell(f"{f.code} on {subject} accepted (Undo takes it back).")
        return True

    def unaccept_current(self) -> bool:
        f = self.current_finding()
        if f is None or not f.accepted:
            return False
        try:
            edit = unaccept_finding(self.document.bed, f)
        except ExceptionError as exc:
            self._tell(f"Nothing changed: {exc}.", error=True)
            return False
        self.document.apply(edit)
        self._tell(f"The exception for {f.code} is withdrawn: the finding counts again.")
        return True

    def _tell(self, text: str, *, error: bool = False) -> None:
        self.notice.setStyleSheet(f"color: {SEVERITY_COLOURS['error']};" if error else "")
        self.notice.setText(text)


MIN_ROWS = 8


def add_finding_entries(panel: ValidationPanel, menu: QMenu, f: Any) -> None:
    """The rest of a finding's menu: its components' properties, and the list narrowed to its rule
    or to its first component."""
    subjects = list(f.subjects)
    if subjects:
        menu.addAction(f"Properties of {subjects[0]}", lambda: panel.selection.set(subjects[:1]))
    pair = host_and_volume(panel.document.bed, f)
    if pair is not None:
        menu.addAction(f"Paths of {pair[0]} to {pair[1]}…", lambda: panel.paths_requested.emit(*pair))
    menu.addSeparator()
    menu.addAction(f"Show only {f.code}", lambda: panel.search.setText(f.code))
    if subjects:
        menu.addAction(f"Show only findings about {subjects[0]}", lambda: panel.search.setText(subjects[0]))


def host_and_volume(bed: Any, f: Any) -> tuple[str, str] | None:
    """The host (server or VM) and the volume a finding is about, when it names both."""
    machines = {s.id for s in bed.servers} | {v.id for v in bed.vms}
    volumes = {f"{a.id}:{v.name}" for a in bed.arrays for v in a.volumes}
    host = next((s for s in f.subjects if s in machines), None)
    volume = next((s for s in f.subjects if s in volumes), None)
    return (host, volume) if host is not None and volume is not None else None
