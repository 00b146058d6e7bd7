"""DVD Store 2's driver output (ds2webdriver, ds2sqlserverdriver, ...): every 10 s a line
`et= 10.1 n_overall=23 opm=136 rt_tot_lastn_max_msec=867 rt_tot_avg_msec=182 rollbacks: ...`,
"Stats reset" when the warm-up ends, and at the end a `Final:` (2.1: `Final (DATE):`) line
whose fields a narrow console wraps onto the next lines.  With several targets and
detailed_view, each interval and the end repeat the line once per server after
"Individual Stats for each DB / Web Server:".  opm (orders per minute) is the figure reports
quote; rt_* are response times in ms."""
from __future__ import annotations

import re

from app.metrics.parsed import NAN, JobRow, ParsedResult

# a number, whole: `target= 192.168.30.201` (the driver's header) is an address, not a figure
_PAIR = re.compile(r"\b([a-z_]+)=\s*(-?\d+(?:\.\d+)?)(?![\d.])")
_FINAL = re.compile(r"^\s*Final\b")


def parse_dvdstore(text: str) -> ParsedResult:
    out = ParsedResult("DVD Store 2")
    finals: list[dict[str, float]] = []
    progress: list[dict[str, float]] = []
    collecting: dict[str, float] | None = None
    header: dict[str, float] = {}
    reset = False
    for line in text.splitlines():
        fields = {k: float(v) for k, v in _PAIR.findall(line)}
        if _FINAL.match(line):
            collecting = dict(fields)
            finals.append(collecting)
            continue
        if collecting is not None and fields and "et" not in fields:
            collecting.update(fields)          # the Final line wrapped by the console
            continue
        collecting = None
        if line.strip() == "Stats reset":
            progress, reset = [], True
        elif "et" in fields and "opm" in fields:
            if not progress or progress[-1]["et"] != fields["et"]:      # per-server lines repeat et
                progress.append(fields)
        elif "n_threads" in fields and not header:
            header = fields
    if not finals and not progress:
        out.problems.append("no line with et= and opm=: is this DVD Store 2 driver output?")
        return out
    if finals:
        final = finals[0]                      # the aggregate; any further ones are per server
        for i, server in enumerate(finals[1:], 1):
            row = JobRow(f"server {i}", duration_s=server.get("et", NAN))
            row.extra = {"orders per minute": server.get("opm", NAN), "average response time ms":
                         server.get("rt_tot_avg", NAN)}
            out.jobs.append(row)
    else:
        final = progress[-1]
        out.problems.append("no 'Final:' line (the driver was stopped?): the figures are from the last "
                            f"progress line, at et={final['et']:g} s")
    out.duration_s = final["et"]
    out.extra["orders per minute"] = final.get("opm", NAN)
    out.extra["orders"] = final.get("n_overall", NAN)
    out.extra["average response time ms"] = final.get("rt_tot_avg", final.get("rt_tot_avg_msec", NAN))
    out.extra["max response time of the last 100 users ms"] = final.get("rt_tot_lastn_max",
                                                                   final.get("rt_tot_lastn_max_msec", NAN))
    out.extra["rollbacks"] = final.get("n_rollbacks_overall", NAN)
    out.extra["progress lines"] = float(len(progress))
    if "n_threads" in header:
        out.extra["threads"] = header["n_threads"]
    if reset:
        out.notes.append("figures count from 'Stats reset' (the end of the warm-up)")
    out.notes.append("DVD Store measures orders, not I/O: IOPS, latency and MB/s come from the disk "
                     "counters of the same run")
    return out
