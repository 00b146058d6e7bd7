"""How much of its workload step a run's samples cover, and where they have gaps.

A figure taken from 9 s of a 30 s load is not the load's figure: `results` and `compare` say
how many seconds each run rests on, and treat a run whose samples cover less than
MIN_COVERAGE of its step as incomplete (not judged, not compared).  A host's step is the
load step that ran on it (its journal's start and end records, `stated_s` for the duration
it states); its span is the load's stated duration (fio runs exactly that long; starting the
job, the check and fetching the results are not load), else how long the step really ran
(the end record's seconds, which for an adopted step are the job's own time on its host).
An adopted or taken job's window is its own start and end on its host (the end record's
ran_from and ran_until), not the adopting driver's start record.

A gap is a stretch where a series has no sample for more than GAP_FACTOR intervals (the
driver was down, a collector stopped): drawn as a gap, named with its times.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from app.metrics.sample import IOPS, Sample
from app.metrics.series import find_gaps, gap_text, is_host_series

MIN_COVERAGE = 0.90


@dataclass(frozen=True)
class Coverage:
    host: str
    step: str                   # "" when no step of the journal matches the samples
    covered_s: int              # whole seconds with a sample
    span_s: float | None        # how long the step states it runs (else how long it ran)
    ended: bool                 # the step has its end record
    gaps: tuple[tuple[float, float], ...] = ()
    ran_s: float | None = None  # how long it ran (its end record's seconds)
    stated: bool = False        # span_s is what the step states

    @property
    def fraction(self) -> float | None:
        if not self.span_s:
            return None
        return min(1.0, self.covered_s / self.span_s)

    @property
    def enough(self) -> bool:
        return self.fraction is None or self.fraction >= MIN_COVERAGE

    def text(self) -> str:
        if self.fraction is None:
            return f"{self.host}: {self.covered_s} s of samples (no step of the journal to measure them against)"
        if self.stated:
            ran = (f"the {self.span_s:g} s step {self.step} states, "
                   + (f"ran {self.ran_s:.1f} s" if self.ran_s is not None else "did not end"))
        else:
            ran = f"the {self.span_s:.1f} s step {self.step} ran"
        line = f"{self.host}: {self.covered_s} s of samples over {ran} ({self.fraction:.0%})"
        if self.gaps:
            line += "; " + gap_text(self.gaps)
        return line


@dataclass
class _Task:
    step: str
    start: float
    stated: float | None
    end: float | None = None
    seconds: float | None = None


def _epoch(iso: str) -> float | None:
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return None


def _tasks(records: Sequence[dict]) -> dict[str, list[_Task]]:
    """Per host, every attempt of a step (adopted followers belong to the attempt they follow)."""
    open_: dict[tuple[str, str], _Task] = {}
    out: dict[str, list[_Task]] = {}
    for r in records:
        key = (str(r.get("step")), str(r.get("host")))
        if r.get("kind") == "start" and not (r.get("adopted") and key in open_):
            start = _epoch(r.get("time", ""))
            if start is None:
                continue
            stated = r.get("stated_s")
            task = _Task(key[0], start, float(stated) if isinstance(stated, (int, float)) else None)
            open_[key] = task
            out.setdefault(key[1], []).append(task)
        elif r.get("kind") == "end" and key in open_:
            task = open_.pop(key)
            task.end = _epoch(r.get("time", ""))
            # an adopted or taken job (an earlier driver's or attempt's): what ran on the host is its
            # own start and end, not this driver's start record (a resume's time, after a timeout)
            ran_from, ran_until = _epoch(r.get("ran_from", "")), _epoch(r.get("ran_until", ""))
            if ran_from is not None and ran_until is not None and ran_until >= ran_from:
                task.start, task.end = ran_from, ran_until
            seconds = r.get("seconds")
            task.seconds = float(seconds) if isinstance(seconds, (int, float)) else None
    return out


def coverage(records: Sequence[dict], samples: Sequence[Sample]) -> list[Coverage]:
    """Per host with samples, how much of its load step they cover."""
    per_host: dict[str, list[float]] = {}
    fallback: dict[str, list[float]] = {}
    for s in samples:
        if is_host_series(s.source) and not math.isnan(s.value):
            (per_host if s.metric == IOPS else fallback).setdefault(s.source, []).append(s.timestamp)
    for host, times in fallback.items():
        per_host.setdefault(host, times)
    tasks = _tasks(records)
    out = []
    for host, times in sorted(per_host.items()):
        t = np.sort(np.array(times))
        candidates = _loads(tasks.get(host, []))
        best, inside = None, t[:0]
        for task in candidates:
            until = task.end or task.start + (task.stated or 0) or (float(t[-1]) + 1)
            hit = t[(t >= task.start - 2) & (t <= until + 2)]
            if best is None or hit.size >= inside.size:
                best, inside = task, hit
        if best is None or not inside.size:
            inside = t          # no step of the journal, or clocks apart: the samples as they are
        covered = int(np.unique(np.round(inside - inside[0])).size) if inside.size else 0
        if best is None:
            out.append(Coverage(host, "", covered, None, False, tuple(find_gaps(inside))))
            continue
        span = best.stated or best.seconds
        out.append(Coverage(host, best.step, covered, span, best.seconds is not None, tuple(find_gaps(inside)),
                            best.seconds, bool(best.stated)))
    return out


def run_coverage(run_dir: Path, samples: Sequence[Sample] | None = None) -> list[Coverage]:
    from app.metrics.results import load_samples
    from app.run.journal import read_journal
    return coverage(read_journal(run_dir).records, load_samples(run_dir) if samples is None else samples)


def load_windows(records: Sequence[dict]) -> dict[str, list[tuple[float, float]]]:
    """Per host, when its load steps ran (start, end; a step with no end: its stated length, else
    open); the steps that state a length are its loads, else every step of the host counts."""
    out: dict[str, list[tuple[float, float]]] = {}
    for host, tasks in _tasks(records).items():
        out[host] = [(k.start, k.end if k.end is not None else k.start + k.stated if k.stated else math.inf)
                     for k in _loads(tasks)]
    return out


def _loads(tasks: list[_Task]) -> list[_Task]:
    """A host's load steps: those that state how long they run, else all of its steps."""
    return [k for k in tasks if k.stated] or tasks


def incomplete(covers: Sequence[Coverage]) -> list[Coverage]:
    return [c for c in covers if not c.enough]


def rests_on(run_dir: Path, run_id: str) -> tuple[str, str | None]:
    """What a run's figures rest on ("30 s of 30 s, 100 %"), and why it must not be compared
    (a host's samples cover under MIN_COVERAGE of its step), or None."""
    covers = run_coverage(run_dir)
    if not covers:
        return "", None
    said = ", ".join(f"{c.host} {c.covered_s} s" + (f" of {c.span_s:.0f} s ({c.fraction:.0%})" if c.span_s else "")
                     for c in covers)
    short = incomplete(covers)
    if not short:
        return f"rests on {said}", None
    c = short[0]
    return f"rests on {said}", (f"run {run_id} rests on {c.covered_s} s of samples of the {c.span_s:.0f} s step "
                                f"{c.step} on {c.host} ({c.fraction:.0%}, under {MIN_COVERAGE:.0%}): its figures "
                                "are not the load's, so it is not compared. Resume the run (the step is adopted "
                                "and its samples collected from the host) or run the step again")
