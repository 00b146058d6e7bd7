"""A result the source gives as a bound ('< 10 %') or for the array as a whole, and a volume's own
settings on the array (segment size, cache policy): the bed holds them as the source states them,
the appendix prints them so, and a bound is judged against a criterion only where it can be."""
from __future__ import annotations

from pathlib import Path

from app.report.tables.results import results_tables
from topology.fileformat import dumps, loads

BED = Path(__file__).resolve().parent / "data" / "array_groups" / "three-member-group.yaml"


def _bed(extra: str):
    text = BED.read_text().replace("{name: log1, size_gb: 500, pool: logs, purpose: [log]}",
                                   "{name: log1, size_gb: 500, pool: logs, purpose: [log], "
                                   "settings: {segment_size_kb: 128, read_cache: true, write_cache: not stated}}")
    return loads(text + extra)


_WORK = """workloads:
  - id: oltp
    tool: sqlio
    targets: [R710]
    criteria:
      - {metric: cpu_util_pct, comparison: "<", threshold: 20, unit: "%"}
      - {metric: latency_ms, comparison: ">", threshold: 5, unit: ms}
results:
  - {workload: oltp, metric: cpu_util_pct, value: 10, bound: "<", unit: "%", subject: eqlgrp}
  - {workload: oltp, metric: latency_ms, value: 3, bound: "<", unit: ms, subject: eqlgrp}
  - {workload: oltp, metric: iops, value: 12000, unit: IOPS, subject: eqlgrp}
"""


def test_a_volume_keeps_its_settings_as_the_source_states_them():
    bed = _bed("")
    log1 = bed.array_groups[0].volumes[1]
    assert log1.settings["segment_size_kb"] == 128 and log1.settings["read_cache"] is True
    assert str(log1.settings["write_cache"]) == "not stated"
    assert loads(dumps(bed)) == bed and "segment_size_kb: 128" in dumps(bed)


def test_a_bound_prints_as_a_bound_and_is_judged_only_where_it_can_be():
    bed = _bed(_WORK)
    assert bed.results[0].bound == "<" and bed.results[0].subject == "eqlgrp"
    (table,) = results_tables(bed)
    rows = [[c.text for c in r.cells] for r in table.rows]
    cpu = next(r for r in rows if any("10 %" in c for c in r))
    assert "< 10 %" in cpu and any(c.startswith("pass:") for c in cpu)        # below 10 is below 20
    lat = next(r for r in rows if any("3 ms" in c for c in r))
    assert "< 3 ms" in lat and any(c.startswith("FAIL") for c in lat)        # below 3 cannot be above 5
    iops = next(r for r in rows if any("IOPS" in c for c in r))
    assert not any(c.startswith("<") for c in iops)
    # a bound on the side of the threshold that says nothing: not judged, and said why
    bed.results[0].value = 30
    (table,) = results_tables(bed)
    cpu = next([c.text for c in r.cells] for r in table.rows if any("30 %" in c.text for c in r.cells))
    assert any(c.startswith("not judged") and "the source gives < 30" in c for c in cpu)


def test_a_bound_is_not_compared_as_a_measured_figure():
    from app.metrics.comparison import bed_figures
    bed = _bed(_WORK.replace("subject: eqlgrp}", "subject: eqlgrp, configuration: ''}"))
    for r in bed.results:
        r.scenario = "run1"
    assert bed_figures(bed, "run1", "cpu_util_pct") == []
