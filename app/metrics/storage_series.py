"""The disks a run measured, seen as the bed's storage: each `HOST/DEVICE` series mapped to the
volume it is (topology.prediction.volume_of_device: the volume's `drive` names the device or its
drive letter), then to the disk group or pool the volume lives on; and each VM's own series.
Derived series are named by kind so they stay out of the all-hosts line:

    volume/ARRAY:VOLUME      group/ARRAY:group:NAME      pool/ARRAY:pool:NAME      vm/VM

Per second, IOPS and throughput add up over the devices of a volume (and the volumes of a
group); a latency is the mean weighted by the operations it is about.  `predicted_vs_measured`
puts each group's or pool's measured IOPS beside what the model predicts at the measured mix.
"""
from __future__ import annotations

import math
import statistics
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from app.metrics import sample as M
from app.metrics.sample import Sample

KINDS = ("host", "volume", "group", "pool", "vm")
KIND_TITLES = {"host": "Hosts", "volume": "Volumes", "group": "Disk groups", "pool": "Pools", "vm": "VMs"}
_ADDED = {M.IOPS, M.READ_IOPS, M.WRITE_IOPS, M.THROUGHPUT_MBPS, M.QUEUE_LENGTH, M.AVG_QUEUE_LENGTH}
_WEIGHT = {M.READ_LATENCY_MS: M.READ_IOPS, M.WRITE_LATENCY_MS: M.WRITE_IOPS, M.LATENCY_MS: M.IOPS}


def kind_of(source: str) -> str:
    """host, volume, group, pool, vm - or device/job for a host's own sub-series."""
    head, sep, _ = source.partition("/")
    if not sep:
        return "host"
    return head if head in ("volume", "group", "pool", "vm") else "device"


def of_kind(sources: Iterable[str], kind: str) -> list[str]:
    return [s for s in sources if kind_of(s) == kind]


class StorageMap:
    """Which volume, group or pool and VM a series belongs to, for one bed (worked out once per series)."""

    def __init__(self, bed):
        from topology.validation.context import Context
        self.bed = bed
        self.ctx = Context(bed)
        self._volume: dict[str, str | None] = {}
        self.unmapped: set[str] = set()
        self._lock = threading.Lock()         # collectors derive from their own threads

    def volume(self, source: str) -> str | None:
        if source not in self._volume:
            host, sep, device = source.partition("/")
            ref = None
            if sep and kind_of(source) == "device":
                from topology.prediction import volume_of_device
                ref = volume_of_device(self.ctx, host, device)
                if ref is None:
                    self.unmapped.add(source)
            self._volume[source] = ref
        return self._volume[source]

    def container(self, volume: str) -> str | None:
        from topology.ids import container_ref
        from topology.prediction import container_of
        array, vol = self.ctx.idx.volumes[volume]
        home = container_of(self.ctx.idx.scopes[array.id], vol)
        return f"{home[0]}/{container_ref(array.id, *home)}" if home else None

    def targets(self, source: str) -> list[str]:
        """The derived series a sample of `source` goes into."""
        if kind_of(source) == "host":
            host = source
            return [f"vm/{host}"] if host in self.ctx.idx.vms else []
        volume = self.volume(source)
        if volume is None:
            return []
        out = [f"volume/{volume}"]
        container = self.container(volume)
        if container:
            out.append(container)
        return out

    def derive(self, samples: Sequence[Sample]) -> list[Sample]:
        """Derived samples for a batch (a collector's one interval: every device at one time)."""
        with self._lock:
            return self._derive(samples)

    def _derive(self, samples: Sequence[Sample]) -> list[Sample]:
        groups: dict[tuple[float, str], dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
        units: dict[str, str] = {}
        by_source_time: dict[tuple[str, float], dict[str, float]] = defaultdict(dict)
        for s in samples:
            by_source_time[(s.source, s.timestamp)][s.metric] = s.value
        for s in samples:
            targets = self.targets(s.source)
            if not targets:
                continue
            weight_metric = _WEIGHT.get(s.metric)
            own = by_source_time[(s.source, s.timestamp)]
            weight = own.get(weight_metric, own.get(M.IOPS, 1.0)) if weight_metric else 1.0
            for t in targets:
                groups[(round(s.timestamp, 3), t)][s.metric].append((s.value, weight if math.isfinite(weight) else 0.0))
                units[s.metric] = s.unit
        out = []
        for (t, target), metrics in sorted(groups.items()):
            for metric, values in metrics.items():
                out.append(Sample(t, target, metric, _combine(metric, values), units[metric]))
        return out


def _combine(metric: str, values: list[tuple[float, float]]) -> float:
    known = [(v, w) for v, w in values if math.isfinite(v)]
    if not known:
        return math.nan
    if metric in _ADDED or metric not in _WEIGHT:
        return sum(v for v, _ in known) if metric in _ADDED else statistics.fmean(v for v, _ in known)
    weight = sum(w for _, w in known)
    return sum(v * w for v, w in known) / weight if weight > 0 else statistics.fmean(v for v, _ in known)


def with_storage_series(samples: Sequence[Sample], bed) -> tuple[list[Sample], StorageMap]:
    """A recorded run's samples with its volume, group, pool and VM series added."""
    storage = StorageMap(bed)
    batches: dict[float, list[Sample]] = defaultdict(list)
    for s in samples:
        batches[round(s.timestamp, 3)].append(s)
    derived = [d for t in sorted(batches) for d in storage.derive(batches[t])]
    return list(samples) + derived, storage


# ====================================================================== predicted vs measured

def _logs_only(storage: StorageMap, array_id: str, kind: str, name: str) -> bool:
    from topology.prediction import LOG_PURPOSE, container_of
    scope = storage.ctx.idx.scopes[array_id]
    held = [v for v in scope.array.volumes if container_of(scope, v) == (kind, name)]
    return bool(held) and all(LOG_PURPOSE in v.purpose for v in held)


@dataclass
class StorageRow:
    ref: str                       # ARRAY:group:NAME or ARRAY:pool:NAME
    kind: str
    disks: int
    levels: str
    measured_iops: float
    read_fraction: float | None    # measured; None when the series give no read/write split
    mix_text: str
    predicted_iops: float
    demand_iops: float
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.measured_iops / self.predicted_iops if self.predicted_iops else math.nan


def predicted_vs_measured(samples: Sequence[Sample], storage: StorageMap) -> list[StorageRow]:
    """For each group or pool the run measured: its IOPS, the read share it measured, and what
    the model predicts at that mix (the workloads' mix, said so, where the series give no split)."""
    from topology.prediction import demands, mix_of, predict
    wanted = {s.source for s in samples if kind_of(s.source) in ("group", "pool")}
    want_demand = demands(storage.ctx)
    rows = []
    for source in sorted(wanted):
        kind, _, ref = source.partition("/")
        array_id, _, rest = ref.partition(":")
        name = rest.partition(":")[2]
        series = defaultdict(list)
        for s in samples:
            if s.source == source and math.isfinite(s.value):
                series[s.metric].append(s.value)
        if not series.get(M.IOPS):
            continue
        reads, writes = sum(series.get(M.READ_IOPS, [])), sum(series.get(M.WRITE_IOPS, []))
        demand = want_demand.get((array_id, kind, name))
        notes = list(demand.notes) if demand else []
        logs_only = _logs_only(storage, array_id, kind, name)
        if reads + writes > 0:
            read_fraction: float | None = reads / (reads + writes)
            mix = mix_of(read_fraction, 1.0 if logs_only else 0.0)
            mix_text = f"{read_fraction:.0%} reads measured " + \
                ("(sequential: it holds only log volumes)" if logs_only else "(random assumed)")
        elif demand is not None and demand.iops:
            read_fraction, mix = None, demand.mix
            mix_text = f"{mix.text()}: the workloads' (no read/write split measured)"
            if demand.assumed:
                mix_text = f"{mix.text()}: assumed (no split measured, the workloads state none)"
        else:
            read_fraction, mix = None, mix_of(0.7)
            mix_text = f"{mix.text()}: assumed (no split measured, no workload on it)"
        predicted = predict(storage.ctx.idx.scopes[array_id], kind, name, mix)
        if predicted is None:
            continue
        rows.append(StorageRow(ref, kind, predicted.disks, predicted.levels, statistics.fmean(series[M.IOPS]),
                               read_fraction, mix_text, predicted.iops, demand.iops if demand else 0.0,
                               predicted.assumptions, notes))
    return rows
