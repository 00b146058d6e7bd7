"""The component tree's finding markers: each row that holds a component with an open finding
shows the worst severity's icon and the findings in its tooltip (the component's own row, or the
nearest row that holds it, and the component rows above it).  A mixin of widgets/component_tree.py's
ComponentTree, whose `_rows` (id -> the component's own rows) it reads."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from app.finding_marks import RANK, subject_marks
from app.live_validation import same_findings
from topology.ids import parent_of

MARKER_ROLE = Qt.ItemDataRole.UserRole + 1       # the severity marked on a row ("" for none)


class FindingMarkers:
    _rows: dict[str, list[QTreeWidgetItem]]
    _by_subject: dict[str, tuple[str, list[str]]]
    _findings: list[Any]
    _marks: dict[int, tuple[QTreeWidgetItem, str, str]]
    _blank: Any
    _icons: dict[str, Any]
    document: Any

    def show_findings(self, findings: list[Any]) -> None:
        if same_findings(self._findings, findings):
            return          # an edit that changed no finding (the validator hands back the same list)
        self._findings = list(findings)
        live = getattr(self.document, "validation", None)
        # the live validator's list comes with its markers, sorted on its worker
        by_subject = live.marks if live is not None and findings is live.findings else subject_marks(findings)
        if by_subject == self._by_subject:
            return          # an edit that changed no finding (a move): the markers stand, thousands of rows unvisited
        self._by_subject = by_subject
        self._apply_markers()

    def _apply_markers(self) -> None:
        for _ in self._marking():
            pass

    def _marking(self, every: int = 0) -> Iterator[None]:
        """The markers the findings want, set; with `every`, a step per that many subjects and rows
        (the 5,000-device bed's 9,500 rows took 0.4 s in one go after the tree's listing).  Findings
        that come between two steps are applied whole by show_findings: the steps stop there."""
        by_subject = self._by_subject
        wanted: dict[int, list] = {}
        for n, (subject, (severity, lines)) in enumerate(by_subject.items(), 1):
            for item in self._marker_targets(subject):
                entry = wanted.get(id(item))
                if entry is None:
                    wanted[id(item)] = [item, severity, list(lines)]
                else:
                    if RANK[severity] < RANK[entry[1]]:
                        entry[1] = severity
                    entry[2] += [x for x in lines if x not in entry[2]]
            if every and n % every == 0:
                yield
                if self._by_subject is not by_subject:
                    return
        for key, (item, _sev, _tip) in list(self._marks.items()):
            if key not in wanted:
                item.setIcon(0, self._blank)
                item.setData(0, MARKER_ROLE, "")
                item.setToolTip(0, "")
                del self._marks[key]
        for n, (key, (item, severity, lines)) in enumerate(wanted.items(), 1):
            shown = lines[:8] + ([f"… and {len(lines) - 8} more"] if len(lines) > 8 else [])
            tip = "\n".join(shown)
            if self._marks.get(key, (None, "", ""))[1:] != (severity, tip):
                item.setIcon(0, self._icons[severity])
                item.setData(0, MARKER_ROLE, severity)
                item.setToolTip(0, tip)
                self._marks[key] = (item, severity, tip)
            if every and n % every == 0:
                yield
                if self._by_subject is not by_subject:
                    return

    def _marker_targets(self, subject: str) -> list[QTreeWidgetItem]:
        """The rows that show a finding on `subject`: its own row (or the nearest row that
        holds it, e.g. a slot's enclosure, or a port's device before it is opened) and the
        component row above it."""
        ident = subject
        while ident and ident not in self._rows:
            ident = parent_of(ident)
        rows = self._rows.get(ident, [])
        out = list(rows)
        for row in rows:
            parent = row.parent()
            while parent is not None and parent.parent() is not None:
                out.append(parent)
                parent = parent.parent()
        return out

    def marker(self, ident: str) -> str:
        """The severity marked on a component's row ('' for none)."""
        rows = self._rows.get(ident, [])
        return (rows[0].data(0, MARKER_ROLE) or "") if rows else ""
