"""Disk counters sampled on a host while its load runs: `iostat -o JSON` on Linux, typeperf
on Windows.  Each runs over a transport of its own from the run's transport factory (SSH,
WinRM or this machine), beside the load step, and stops with it.

A collector that dies (the tool is missing, the link drops) says so once and ends its
series with a gap; the load and the other series go on.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.metrics.sample import Sample
from app.metrics.streams import IostatJsonParser
from app.metrics.windows import TypeperfCsvParser, typeperf_command


@dataclass(frozen=True)
class CounterTool:
    name: str
    shell: str
    command: str
    parser: Callable[[str], object]      # host -> an object with feed(line) -> samples and problems


IOSTAT = CounterTool("iostat", "bash", "exec iostat -d -x -y -o JSON 1", IostatJsonParser)
TYPEPERF = CounterTool("typeperf", "powershell", typeperf_command(1), TypeperfCsvParser)


def tool_for(platform: str) -> CounterTool:
    return TYPEPERF if (platform or "").lower().startswith("windows") else IOSTAT


class HostCollector:
    def __init__(self, host: str, tool: CounterTool, transport_factory: Callable[[str], object],
                 on_samples: Callable[[list], None], on_problem: Callable[[str], None]):
        self.host = host
        self.tool = tool
        self._factory = transport_factory
        self._on_samples = on_samples
        self._on_problem = on_problem
        self._stop = threading.Event()
        self._series: dict[tuple[str, str], str] = {}       # (source, metric) -> unit, for the closing gap
        self._thread = threading.Thread(target=self._run, name=f"{tool.name}-{host}", daemon=True)

    def start(self) -> HostCollector:
        self._thread.start()
        return self

    def stop(self, wait_s: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(wait_s)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        parser = self.tool.parser(self.host)
        why = ""
        transport = None
        try:
            transport = self._factory(self.host)
            transport.open()

            def feed(stream: str, line: str) -> None:
                if stream == "stdout":
                    self._emit(parser.feed(line))
                while parser.problems:
                    self._on_problem(parser.problems.pop(0))

            result = transport.run(self.tool.command, shell=self.tool.shell, on_output=feed, cancel=self._stop)
            why = result.message or result.status
        except Exception as exc:
            why = str(exc) or type(exc).__name__
        finally:
            if transport is not None:
                try:
                    transport.close()
                except Exception:
                    pass
        if not self._stop.is_set():
            self._on_problem(f"{self.tool.name} on {self.host} stopped ({why}): its series show a gap from "
                             f"{time.strftime('%H:%M:%S')}; the load goes on")
            now = time.time()
            self._emit([Sample(now, src, metric, math.nan, unit) for (src, metric), unit in self._series.items()])

    def _emit(self, samples: list) -> None:
        if samples:
            for s in samples:
                self._series[(s.source, s.metric)] = s.unit
            self._on_samples(samples)
