"""The Run tab's output pane: what the steps print, as a person reads it.

A load step that streams fio's JSON status prints a 40-line report every second; read raw,
the pane scrolls JSON past faster than anyone can find a figure in it.  Here each report is
one line of the figures it gives (IOPS, read and write latency, MB/s: the dashboard's
figures, from the same parser), every other line as printed; "Raw output" shows the lines
exactly as the host printed them (and the step's output file keeps them all).
"""
from __future__ import annotations

import math
from collections import deque

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from app.metrics import sample as M
from app.metrics.streams import FioStatusParser

LINES_KEPT = 5000


class OutputPane(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(QLabel("Output:", self))
        top.addStretch(1)
        self.raw = QCheckBox("Raw output", self)
        self.raw.setToolTip("The lines exactly as the host printed them (fio's JSON reports in full); "
                            "off: one line of figures per report")
        self.raw.toggled.connect(self._redraw)
        top.addWidget(self.raw)
        layout.addLayout(top)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setMaximumBlockCount(LINES_KEPT)
        self.text.setPlaceholderText("The output of the steps appears here as they run.")
        layout.addWidget(self.text, 1)
        self._raw_lines: deque[str] = deque(maxlen=LINES_KEPT)
        self._read_lines: deque[str] = deque(maxlen=LINES_KEPT)
        self._parsers: dict[tuple[str, str], FioStatusParser] = {}

    # what the wizard and the tests read and write
    def toPlainText(self) -> str:
        return self.text.toPlainText()

    def appendPlainText(self, text: str) -> None:
        """A note of the wizard's own (pre-flight, a step left running): shown either way."""
        self._raw_lines.append(text)
        self._read_lines.append(text)
        self.text.appendPlainText(text)

    def clear(self) -> None:
        self._raw_lines.clear()
        self._read_lines.clear()
        self._parsers.clear()
        self.text.clear()

    def follow_fio(self, step: str, host: str) -> None:
        """The output of this task is fio's JSON status: read it as figures."""
        self._parsers[(step, host)] = FioStatusParser(host)

    def add(self, batch: list) -> None:
        """OutputLine events, oldest first."""
        raw, read = [], []
        for o in batch:
            line = f"[{o.step} {o.host}] ! {o.line}" if o.stream == "stderr" else f"[{o.step} {o.host}] {o.line}"
            raw.append(line)
            parser = self._parsers.get((o.step, o.host)) if o.stream == "stdout" else None
            if parser is not None and not parser.in_report and o.line.strip() != "{":
                parser = None       # a line of its own between fio's reports: shown as printed
            if parser is None:
                read.append(line)
                continue
            figures = figures_line(parser.feed(o.line), o.host)
            if figures:
                read.append(f"[{o.step} {o.host}] {figures}")
            while parser.problems:
                read.append(f"[{o.step} {o.host}] ! {parser.problems.pop(0)}")
        self._raw_lines.extend(raw)
        self._read_lines.extend(read)
        shown = raw if self.raw.isChecked() else read
        if shown:
            self.text.appendPlainText("\n".join(shown))

    def _redraw(self) -> None:
        self.text.setPlainText("\n".join(self._raw_lines if self.raw.isChecked() else self._read_lines))
        bar = self.text.verticalScrollBar()
        bar.setValue(bar.maximum())


def figures_line(samples: list, host: str) -> str:
    """One fio report's figures for the host, as a line: "fio 12:00:05  8,903 IOPS · read 0.072 ms ·
    write 0.092 ms · 36.5 MB/s" ("" when the report gave none)."""
    from datetime import datetime

    from app.metrics.results import format_value
    mine = {s.metric: s for s in samples if s.source == host}
    if M.IOPS not in mine:
        return ""
    def part(metric: str, unit: str, label: str = "") -> str:
        s = mine.get(metric)
        if s is None or math.isnan(s.value):
            return ""
        return f"{label}{format_value(s.value)} {unit}"
    when = datetime.fromtimestamp(mine[M.IOPS].timestamp).strftime("%H:%M:%S")
    parts = [part(M.IOPS, "IOPS"), part(M.READ_LATENCY_MS, "ms", "read "), part(M.WRITE_LATENCY_MS, "ms", "write "),
             part(M.THROUGHPUT_MBPS, "MB/s")]
    return f"fio {when}  " + " · ".join(p for p in parts if p)
