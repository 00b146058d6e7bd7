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
