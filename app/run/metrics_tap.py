"""Turns the output of the workload steps of a run into metric samples, records them with
the run (metrics.jsonl) and hands them to a live view.

A step is a metrics source when its script streams fio's JSON status (`fio ...
--output-format=json --status-interval=N`): the run template's load step does.  Given a
transport factory, the tap also samples the disks of each host while its load step runs
(iostat or typeperf, app.metrics.collectors), over a connection of their own.  Every other
event passes through to the wrapped listener unchanged.
"""
from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from pathlib import Path

from app.metrics.results import MetricsRecorder
from app.metrics.streams import FioStatusParser
from app.run.engine import RunListener

_FIO_STREAM = re.compile(r"\bfio\b.*--output-format[= ]json.*--status-interval|"
                         r"\bfio\b.*--status-interval.*--output-format[= ]json")


def streams_fio(script: str) -> bool:
    return bool(_FIO_STREAM.search(script))


class MetricsTap(RunListener):
    def __init__(self, run_dir: Path, inner: RunListener | None = None,
                 on_samples: Callable[[list], None] | None = None,
                 on_problem: Callable[[str], None] | None = None,
                 counter_transports: Callable[[str], object] | None = None):
        self.inner = inner or RunListener()
        self.recorder = MetricsRecorder(run_dir)
        self.on_samples = on_samples
        self.on_problem = on_problem
        self.counter_transports = counter_transports
        self._parsers: dict[tuple[str, str], FioStatusParser] = {}
        self._collectors: dict[str, object] = {}          # host -> HostCollector
        self._loads: dict[str, int] = {}                  # host -> load tasks running on it
        self._lock = threading.Lock()

    def task_started(self, task) -> None:
        if streams_fio(task.script):
            with self._lock:
                self._parsers[task.key] = FioStatusParser(task.host)
                self._loads[task.host] = self._loads.get(task.host, 0) + 1
                start = self.counter_transports is not None and task.host not in self._collectors
                if start:
                    from app.metrics.collectors import HostCollector, tool_for
                    self._collectors[task.host] = HostCollector(
                        task.host, tool_for(task.platform), self.counter_transports,
                        self._record, self._problem).start()
        self.inner.task_started(task)

    def output(self, task, stream, line) -> None:
        parser = self._parsers.get(task.key)
        if parser is not None and stream == "stdout":
            self._emit(parser, parser.feed(line))
        self.inner.output(task, stream, line)

    def output_taken(self, task, lines) -> None:
        # the dead driver's last reports: a parser that continues them takes only what is new
        # (fio's figures are totals: the first report after them is a difference to them)
        parser = self._parsers.get(task.key)
        if parser is not None:
            taken = [s for line in lines for s in parser.feed(line)]
            parser.problems.clear()
            # a dead driver killed between logging a report and recording it lost those samples: they
            # are recorded now (the recorder keeps only what is newer than each series' last sample);
            # a gap is only where the taken lines begin, not one the load had
            self.recorder.append([s for s in taken if not math.isnan(s.value)])
        self.inner.output_taken(task, lines)

    def late_copy(self, task, what, number, detail) -> None:
        self.inner.late_copy(task, what, number, detail)

    def task_ending(self, task) -> None:
        self._settle(task)
        self.inner.task_ending(task)

    def task_finished(self, task, state) -> None:
        self._settle(task)      # an engine that did not say the task was ending: nothing is left when it did
        self.inner.task_finished(task, state)

    def _settle(self, task) -> None:
        """fio's last report, and every sample before it, on disk before the journal says the step ended."""
        with self._lock:
            parser = self._parsers.pop(task.key, None)
            if parser is None:
                return
            self._loads[task.host] -= 1
            collector = self._collectors.pop(task.host, None) if not self._loads[task.host] else None
        self._emit(parser, parser.close())
        if collector is not None:
            collector.stop()
        self.recorder.sync()

    def _emit(self, parser: FioStatusParser, samples: list) -> None:
        self._record(samples)
        while parser.problems:
            self._problem(parser.problems.pop(0))

    def _record(self, samples: list) -> None:
        if samples:
            self.recorder.append(samples)
            if self.on_samples is not None:
                self.on_samples(samples)

    def _problem(self, text: str) -> None:
        if self.on_problem is not None:
            self.on_problem(text)

    def close(self) -> None:
        with self._lock:
            collectors, self._collectors = list(self._collectors.values()), {}
        for c in collectors:
            c.stop()
        self.recorder.close()
