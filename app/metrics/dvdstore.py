"""DVD Store 2's driver output (ds2*driver.exe / ds2webdriver): every few seconds a line
`et= 10.0 n_overall=... opm=... rt_tot_lastn_max=... rt_tot_avg=...`, and at the end the
same fields after `Final:`.  opm (orders per minute) is the figure reports quote; rt_* are
response times in milliseconds."""
from __future__ import annotations

import re

from app.metrics.parsed import NAN, ParsedResult

_PAIR = re.compile(r"([a-z_]+)=\s*(-?[\d.]+)")


def parse_dvdstore(text: str) -> ParsedResult:
    out = ParsedResult("DVD Store 2")
    final = None
    progress = []
    for line in text.splitlines():
        fields = {k: float(v) for k, v in _PAIR.findall(line)}
        if "opm" not in fields or "et" not in fields:
            continue
        if line.lstrip().startswith("Final"):
            final = fields
        else:
            progress.append(fields)
    if final is None and not progress:
        out.problems.append("no line with et= and opm=: is this DVD Store 2 driver output?")
        return out
    if final is None:
        final = progress[-1]
        out.problems.append("no 'Final:' line (the driver was stopped?): the figures are from the last "
                            f"progress line, at et={final['et']:g} s")
    out.duration_s = final["et"]
    out.extra["orders per minute"] = final["opm"]
    out.extra["orders"] = final.get("n_overall", NAN)
    out.extra["average response time ms"] = final.get("rt_tot_avg", NAN)
    out.extra["rollbacks"] = final.get("n_rollbacks_overall", NAN)
    out.extra["progress lines"] = float(len(progress))
    out.notes.append("DVD Store measures orders, not I/O: IOPS, latency and MB/s come from the disk "
                     "counters of the same run")
    return out
