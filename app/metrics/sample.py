"""One measurement, as every collector produces it and every consumer reads it."""
from __future__ import annotations

from dataclasses import dataclass

# metric names shared by collectors, the dashboard and the results
IOPS = "iops"
READ_IOPS = "read_iops"
WRITE_IOPS = "write_iops"
READ_LATENCY_MS = "read_latency_ms"
WRITE_LATENCY_MS = "write_latency_ms"
LATENCY_MS = "latency_ms"
THROUGHPUT_MBPS = "throughput_mbps"
QUEUE_LENGTH = "queue_length"                # instantaneous (Current Disk Queue Length, iostat aqu-sz)
AVG_QUEUE_LENGTH = "avg_queue_length"        # averaged over the interval (Avg. Disk Queue Length)


@dataclass(frozen=True, slots=True)
class Sample:
    timestamp: float       # seconds since the epoch, when the value was measured on the host
    source: str            # "HOST" or "HOST/device" or "HOST/job" - the series it belongs to
    metric: str            # one of the names above
    value: float           # NaN marks a gap (collector died, counter disappeared)
    unit: str              # "IO/s", "ms", "MB/s", ""

    @property
    def series_key(self) -> tuple[str, str]:
        return self.source, self.metric
