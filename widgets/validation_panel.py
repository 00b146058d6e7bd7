"""The validation panel: the live validator's findings, grouped by severity, with counts,
filters, the reason and fix hint of the chosen finding, and documented exceptions.

The panel only shows results: validation runs debounced on a worker thread
(app/live_validation.py) and the panel redraws when `findings_changed` arrives.  Picking a
finding selects and centres its components in every view (`selection.focus`).  Accepting
a finding records a documented exception (code, subject, reason) in the bed as one
undoable edit; the finding stays listed, marked accepted with its reason, and the
acceptance can be withdrawn the same way.
"""
from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QIcon
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QLineEdit, QMenu,
                               QPushButton, QSplitter, QStyle, QTextBrowser, QToolButton, QTreeView, QVBoxLayout,
                               QWidget)

from topology.exception_ops import ExceptionError, accept_finding, exception_subject, unaccept_finding

SEVERITIES = ("error", "warning", "info")
GROUP_TITLES = {"error": "Errors", "warning": "Warnings", "info": "Notes", "accepted": "Accepted as documented"}
SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("note", "notes")}
SEVERITY_COLOURS = {"error": "#c62828", "warning": "#b26a00", "info": "#1565c0", "accepted": "#616161"}
FINDING_ROLE = Qt.ItemDataRole.UserRole          # index into `findings` (None on group rows)
SUBJECTS_ROLE = Qt.ItemDataRole.UserRole + 1
GROUP_ROLE = Qt.ItemDataRole.UserRole + 2         # "error", "warning", "info", "accepted" on group rows
GROUP_ORDER = ("error", "warning", "info", "accepted")
_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
          "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
          "info": QStyle.StandardPixmap.SP_MessageBoxInformation}


def severity_icon(widget: QWidget, severity: str) -> QIcon:
    return widget.style().standardIcon(_ICONS.get(severity, _ICONS["info"]))


def finding_key(f: Any) -> tuple:
    """What identifies a finding across re-validations (acceptance does not change it)."""
    return f.code, tuple(f.subjects), f.message


def count_words(findings: list[Any]) -> str:
    """'2 errors, 1 warning, 0 notes, 1 accepted' (accepted ones counted apart)."""
    open_ = [f for f in findings if not f.accepted]
    parts = []
    for s in SEVERITIES:
        n = sum(1 for f in open_ if f.severity == s)
        parts.append(f"{n} {SEVERITY_WORDS[s][n != 1]}")
    accepted = len(findings) - len(open_)
    return ", ".join(parts) + (f", {accepted} accepted" if accepted else "")


class FindingsModel(QAbstractItemModel):
    """Findings grouped by severity (accepted ones apart), filtered; rows are made on demand,
    so thousands of findings cost the panel next to nothing."""

    COLUMNS = ("Code", "Finding", "Components")

    def __init__(self, panel: QWidget):
        super().__init__(panel)
        self.panel = panel
        self.findings: list[Any] = []
        self.groups: list[tuple[str, list[int], int]] = []      # (key, finding indices shown, total)
        self.message = ""                                          # a single text row instead of groups
        self._icons = {k: severity_icon(panel, k) for k in _ICONS}
        self._grey = QBrush(QColor(SEVERITY_COLOURS["accepted"]))
        self._group_brushes = {k: QBrush(QColor(c)) for k, c in SEVERITY_COLOURS.items()}

    def show(self, findings: list[Any], groups: list[tuple[str, list[int], int]], message: str) -> None:
        self.beginResetModel()
        self.findings, self.groups, self.message = findings, groups, message
        self.endResetModel()

    # structure: top-level rows are groups (internal id 0); a finding row's internal id is its group + 1
    # index(), rowCount() and flags() run once per row when a big group opens: kept to plain comparisons
    def index(self, row: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
        if row < 0 or not 0 <= column < 3:
            return QModelIndex()
        if not parent.isValid():
            if row < (1 if self.message else len(self.groups)):
                return self.createIndex(row, column, 0)
            return QModelIndex()
        if parent.internalId() == 0 and not self.message and row < len(self.groups[parent.row()][1]):
            return self.createIndex(row, column, parent.row() + 1)
        return QModelIndex()

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return 1 if self.message else len(self.groups)
        if parent.internalId() == 0 and parent.column() == 0 and not self.message:
            return len(self.groups[parent.row()][1])
        return 0

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    _GROUP_FLAGS = Qt.ItemFlag.ItemIsEnabled
    _ROW_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return self._GROUP_FLAGS if index.internalId() == 0 else self._ROW_FLAGS

    def finding_index(self, index: QModelIndex) -> int | None:
        if not index.isValid() or index.internalId() == 0:
            return None
        return self.groups[index.internalId() - 1][1][index.row()]

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        col = index.column()
        if index.internalId() == 0:
            if self.message:
                return self.message if role == Qt.ItemDataRole.DisplayRole and col == 0 else None
            key, shown, total = self.groups[index.row()]
            if col != 0:
                return None
            if role == Qt.ItemDataRole.DisplayRole:
                n = len(shown)
                return f"{GROUP_TITLES[key]} ({n}{f' of {total}' if n != total else ''})"
            if role == Qt.ItemDataRole.DecorationRole:
                return self._icons.get(key)
            if role == Qt.ItemDataRole.ForegroundRole:
                return self._group_brushes[key]
            if role == Qt.ItemDataRole.FontRole:
                font = QFont(self.panel.font())
                font.setBold(True)
                return font
            if role == GROUP_ROLE:
                return key
            return None
        i = self.finding_index(index)
        f = self.findings[i]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return f.code
            if col == 1:
                return f.message + (f" — accepted: {f.exception_reason}" if f.accepted else "")
            return ", ".join(f.subjects)
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            return self._icons.get(f.severity)
        if role == Qt.ItemDataRole.ForegroundRole and f.accepted:
            return self._grey
        if role == Qt.ItemDataRole.FontRole and f.accepted and col == 1:
            font = QFont(self.panel.font())
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{f.message}\n\nHow to fix: {f.hint}" if f.hint else f.message
            if f.accepted:
                tip += f"\n\nAccepted as documented exception: {f.exception_reason}"
            return tip
        if role == FINDING_ROLE:
            return i
        if role == SUBJECTS_ROLE:
            return list(f.subjects)
        return None


class ValidationPanel(QWidget):
    """Findings of the live validator; emits `summary_changed` with the counts in words."""

    subjects_selected = Signal(list)
    summary_changed = Signal(str)

    def __init__(self, document: Any, selection: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.selection = selection
        self.findings: list[Any] = []
        self._current_key: tuple | None = None
        self._collapsed: set[str] = set()
        self._rebuilding = False
        self._focused_by_current: QPersistentModelIndex | None = None
        self._failed = ""

        # header: counts, state, filters, search
        self.counts = QLabel(self)
        self.counts.setTextFormat(Qt.TextFormat.RichText)
        self.state = QLabel(self)
        self.state.setStyleSheet("color: palette(mid);")
        self.filter_buttons: dict[str, QToolButton] = {}
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.counts)
        header.addWidget(self.state)
        header.addStretch(1)
        for key, text in (("error", "Errors"), ("warning", "Warnings"), ("info", "Notes"), ("accepted", "Accepted")):
            button = QToolButton(self, text=text, checkable=True, checked=True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            if key in _ICONS:
                button.setIcon(severity_icon(self, key))
            button.setToolTip(f"Show or hide {GROUP_TITLES[key].lower()}")
            button.toggled.connect(self._refilter)
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
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.clicked.connect(self._clicked)
        self.tree.expanded.connect(lambda i: self._rebuilding or self._collapsed.discard(i.data(GROUP_ROLE)))
        self.tree.collapsed.connect(lambda i: self._rebuilding or self._collapsed.add(i.data(GROUP_ROLE)))
        width = self.fontMetrics().horizontalAdvance
        columns = self.tree.header()
        columns.setStretchLastSection(True)
        columns.resizeSection(0, width("RAID-003") + 70)        # a code, its icon and the indentation
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
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(lower)
        self.splitter.setStretchFactor(0, 4)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        lines = self.fontMetrics().lineSpacing()
        self.detail.setMinimumHeight(lines * 4)
        self.splitter.setSizes([lines * 14, lines * 7])    # the list first; the detail needs a few lines

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addWidget(self.splitter, 1)

        validation = document.validation
        validation.findings_changed.connect(self.show_findings)
        validation.failed.connect(self.show_message)
        document.changed.connect(lambda _ids: self._set_checking(True))
        document.reset.connect(lambda: self._set_checking(True))
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
        return count_words(self.findings)

    def current_finding(self) -> Any:
        i = self.model.finding_index(self.tree.currentIndex())
        return self.findings[i] if i is not None else None

    def visible_findings(self) -> list[Any]:
        """The findings listed now, in the order shown."""
        return [self.findings[i] for _key, shown, _total in self.model.groups for i in shown]

    def group_titles(self) -> list[str]:
        root = QModelIndex()
        return [self.model.index(r, 0, root).data() for r in range(self.model.rowCount(root))]

    def index_for(self, finding: Any) -> QModelIndex:
        """The row of a finding in the list (invalid when it is filtered out)."""
        key = finding_key(finding)
        for g, (_k, shown, _t) in enumerate(self.model.groups):
            for r, i in enumerate(shown):
                if finding_key(self.findings[i]) == key:
                    return self.model.index(r, 0, self.model.index(g, 0))
        return QModelIndex()

    # ------------------------------------------------------------------ showing
    def show_findings(self, findings: list[Any]) -> None:
        self._failed = ""
        self.findings = list(findings)
        self._set_checking(False)
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

    def _set_checking(self, checking: bool) -> None:
        self.state.setText("checking…" if checking else "")

    def _matches(self, f: Any, needle: str) -> bool:
        group = "accepted" if f.accepted else f.severity
        if not self.filter_buttons[group].isChecked():
            return False
        if not needle:
            return True
        hay = " ".join((f.code, f.message, " ".join(f.subjects), f.hint, f.exception_reason)).lower()
        return all(word in hay for word in needle.lower().split())

    def _refilter(self, *_: Any) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        self._rebuilding = True
        tree = self.tree
        scroll = tree.verticalScrollBar().value()
        try:
            self._show_counts()
            needle = self.search.text().strip()
            if self._failed:
                self.model.show([], [], self._failed)
                self._show_detail(None)
                return
            buckets: dict[str, list[int]] = {k: [] for k in GROUP_ORDER}
            total = dict.fromkeys(GROUP_ORDER, 0)
            current = None
            for index, f in enumerate(self.findings):
                key = "accepted" if f.accepted else f.severity
                total[key] += 1
                if self._matches(f, needle):
                    buckets[key].append(index)
            groups = [(k, buckets[k], total[k]) for k in GROUP_ORDER if buckets[k]]
            message = ("" if groups else
                       "No findings: the bed passes every rule." if not self.findings else
                       "No finding matches the filter.")
            self.model.show(self.findings, groups, message)
            root = QModelIndex()
            for g, (key, shown, _t) in enumerate(groups):
                group = self.model.index(g, 0, root)
                tree.setFirstColumnSpanned(g, root, True)
                tree.setExpanded(group, key not in self._collapsed)
                if current is None and self._current_key is not None:
                    for r, i in enumerate(shown):
                        if finding_key(self.findings[i]) == self._current_key:
                            current = self.model.index(r, 0, group)
                            break
            if message:
                tree.setFirstColumnSpanned(0, root, True)
            if current is not None:
                tree.setCurrentIndex(current)
            self._show_detail(self.current_finding())
            tree.verticalScrollBar().setValue(scroll)
        finally:
            self._rebuilding = False

    def _show_counts(self) -> None:
        if self._failed:
            self.counts.setText(f'<span style="color:{SEVERITY_COLOURS["error"]}">{escape(self._failed)}</span>')
            return
        open_ = [f for f in self.findings if not f.accepted]
        parts = []
        for s in SEVERITIES:
            n = sum(1 for f in open_ if f.severity == s)
            colour = SEVERITY_COLOURS[s] if n else "palette(mid)"
            parts.append(f'<b style="color:{colour}">{n}</b> {SEVERITY_WORDS[s][n != 1]}')
        accepted = len(self.findings) - len(open_)
        parts.append(f"<b>{accepted}</b> accepted")
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
                f"<p><b>Components:</b> {links or '—'}</p>"]
        if f.accepted:
            html.append(f"<p><b>Accepted as a documented exception:</b> {escape(f.exception_reason)}</p>")
        if f.hint:
            html.append(f"<p><b>How to fix:</b> {escape(f.hint)}</p>")
        if f.reason:
            source = f' <i>(Source: {escape(f.source)})</i>' if f.source else ""
            html.append(f"<p><b>Why it matters:</b> {escape(f.reason)}{source}</p>")
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
        i = self.model.finding_index(index)
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

    def _context_menu(self, pos: Any) -> None:
        index = self.tree.indexAt(pos)
        if self.model.finding_index(index) is None:
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
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    # ------------------------------------------------------------------ documented exceptions
    def accept_current(self) -> bool:
        """Ask for the reason and record the current finding as a documented exception."""
        f = self.current_finding()
        if f is None or f.accepted:
            return False
        subject = exception_subject(f.subjects)
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Accept as documented exception")
        dialog.setLabelText(f"Why is {f.code} on {subject} expected in this bed?\n"
                            "The reason is saved in the bed and printed with the findings.")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setOkButtonText("Accept")
        if not dialog.exec():
            return False
        try:
            edit = accept_finding(self.document.bed, f, dialog.textValue())
        except ExceptionError as exc:
            self._tell(f"Nothing recorded: {exc}.", error=True)
            return False
        self.document.apply(edit)
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


def add_finding_entries(panel: ValidationPanel, menu: QMenu, f: Any) -> None:
    """The rest of a finding's menu: its components' properties, and the list narrowed to its rule
    or to its first component."""
    subjects = list(f.subjects)
    if subjects:
        menu.addAction(f"Properties of {subjects[0]}", lambda: panel.selection.set(subjects[:1]))
    menu.addSeparator()
    menu.addAction(f"Show only {f.code}", lambda: panel.search.setText(f.code))
    if subjects:
        menu.addAction(f"Show only findings about {subjects[0]}", lambda: panel.search.setText(subjects[0]))
