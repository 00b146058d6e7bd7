"""The value axis of a plot that carries pass criteria: the data sets the scale, never a criterion.

A criterion near the data (within FAR times its peak) is in range and drawn as a line; one far
above is left off the scale and named in an annotation at the plot's top edge, so 0.3 ms of
latency is not drawn flat under a 20 ms line.  Used by the live page and the printed charts.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

FAR = 2.0           # a criterion above FAR x the data's peak is off the scale
HEADROOM = 1.15     # room above the highest thing drawn (and for a line's label)


@dataclass(frozen=True)
class Scale:
    top: float                          # the axis runs from 0 to top
    in_range: tuple[float, ...]         # criterion values drawn as lines
    off_scale: tuple[float, ...]        # criterion values named in the annotation instead


def criterion_scale(data_peak: float | None, criteria: Iterable[float]) -> Scale:
    """`data_peak`: the highest value drawn (None or 0 before any data)."""
    values = [v for v in criteria if math.isfinite(v)]
    peak = data_peak if data_peak is not None and math.isfinite(data_peak) and data_peak > 0 else 0.0
    if peak == 0.0:
        # nothing measured yet: show where the lines are
        return Scale((max(values, default=0.0) or 1.0) * HEADROOM, tuple(values), ())
    in_range = tuple(v for v in values if v <= peak * FAR)
    off = tuple(v for v in values if v > peak * FAR)
    return Scale(max(peak, *in_range) * HEADROOM if in_range else peak * HEADROOM, in_range, off)
