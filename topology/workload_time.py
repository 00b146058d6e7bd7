"""How long a workload runs, as the bed states it: the methodology writes it into the load
step (fio's --runtime) and the live metrics page sizes its time axis to it."""
from __future__ import annotations

from typing import Any

from topology.unknown import NOT_STATED

# the parameter names the beds use for a workload's measured time, in minutes
DURATION_KEYS = ("run_time_minutes", "duration_minutes", "runtime_minutes")


def duration_minutes(bed: Any, workload: Any) -> tuple[float, str] | None:
    """(minutes, where the bed says so) for one workload; None when the bed does not say."""
    own = getattr(workload, "duration_minutes", None)
    if own is not None:
        return own, f"{workload.id}.duration_minutes"          # NOT_STATED: the step says so
    for key in DURATION_KEYS:
        value = workload.parameters.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value, f"{workload.id}.parameters.{key}"
    plan = bed.run_plan
    if plan is not None and (plan.duration_minutes or plan.duration_minutes is NOT_STATED):
        return plan.duration_minutes, "run_plan.duration_minutes"      # NOT_STATED: the step says so
    return None


def longest_load_seconds(bed: Any) -> float | None:
    """The longest stated workload duration in seconds; None when no workload states one."""
    stated = [found[0] * 60 for w in bed.workloads
              if (found := duration_minutes(bed, w)) is not None and found[0] is not NOT_STATED]
    return max(stated) if stated else None


def spoken_duration(minutes: float) -> str:
    """A load's duration as a person says it: '45 seconds' under a minute, '1 minute',
    '2.5 minutes' ('1 minutes' read wrong in the wait step of every one-minute run)."""
    if minutes < 1:
        seconds = round(minutes * 60, 1)
        shown = str(int(seconds)) if float(seconds).is_integer() else str(seconds)
        return f"{shown} second{'' if shown == '1' else 's'}"
    shown = str(int(minutes)) if float(minutes).is_integer() else f"{minutes:.3f}".rstrip("0").rstrip(".")
    return f"{shown} minute{'' if shown == '1' else 's'}"
