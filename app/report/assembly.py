"""Which appendices a bed gets, in what order, with which tables: `build_appendix`."""
from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from typing import Any

from app.report.blocks import (
    Appendix,
    Block,
    FindingsBlock,
    Heading,
    ImageBlock,
    Para,
    TableBlock,
    TitleBlock,
    TocBlock,
    guard_blocks,
    steps_blocks,
)
from app.report.tables.comparison import comparison_table, formulas
from app.report.tables.configuration import cluster_table, server_tables, vm_table
from app.report.tables.configurations import configuration_table
from app.report.tables.model import Table
from app.report.tables.network import address_table, connection_table, network_table, switch_tables
from app.report.tables.procedure import scenario_tables, workload_tables
from app.report.tables.results import (
    results_tables,
    run_record_tables,
    run_storage_tables,
    run_summary_table,
    run_verdict_table,
)
from app.report.tables.storage import storage_tables
from app.report.tables.storage_layout import slot_map_tables
from app.report.tables.values import flat, slug
from topology.configurations import procedures


def _generate_methodology(bed: Any) -> tuple[list[tuple[str | None, Any]], str]:
    """The bed's procedure, or one per configuration of a bed that has configurations."""
    try:
        return procedures(bed), ""
    except Exception as exc:
        return [], f"The methodology could not be generated: {exc}"


def _validate(bed: Any) -> list:
    try:
        from topology.validation import validate
        return validate(bed)
    except Exception:
        return []


def build_appendix(bed: Any, *, findings: list | None = None, methodology: Any = None,
                   source: str = "", runs: Iterable[Any] = (), comparisons: Iterable[Any] = ()) -> Appendix:
    """All appendices of a bed as blocks, in the order the seed reports print them.
    `comparisons`: app.metrics.comparison tables printed in Appendix G with their charts."""
    findings = _validate(bed) if findings is None else findings
    note = ""
    if methodology is None:
        procs, note = _generate_methodology(bed)
    else:       # one procedure, or (configuration, procedure) pairs
        procs = methodology if isinstance(methodology, list) else [(None, methodology)]
    methodology = procs[0][1] if len(procs) == 1 else [m for _, m in procs] or None
    info = bed.bed
    blocks: list[Block] = []
    errors = sum(1 for f in findings if f.severity == "error" and not f.accepted)
    warnings = sum(1 for f in findings if f.severity == "warning" and not f.accepted)
    accepted = sum(1 for f in findings if f.accepted)
    lines = [(k, v) for k, v in (("Description", flat(info.description)), ("Source report", flat(info.source)),
                                 ("Publisher", info.publisher), ("Date", info.date), ("Domain", info.domain),
                                 ("Note", flat(info.note)), ("Project file", source)) if v]
    codes = sorted({f.code for f in findings if not f.accepted and f.severity in ("error", "warning")})
    lines.append(("Validation", f"{errors} error(s), {warnings} warning(s)"
                  + (f" ({', '.join(codes[:12])}{' ...' if len(codes) > 12 else ''})" if codes else "")
                  + (f"; {accepted} accepted exception(s)" if accepted else "")))
    lines.append(("Generated", f"{_dt.date.today().isoformat()} by Testbed Studio"))
    blocks.append(TitleBlock(title="Test-bed appendices", subtitle=info.name or "untitled test bed", lines=lines))
    if errors:
        blocks.append(FindingsBlock(findings=findings, errors=errors, warnings=warnings, accepted=accepted))
    toc = TocBlock()
    blocks.append(toc)

    def appendix(letter: str, title: str) -> None:
        anchor = f"appendix-{letter.lower()}"
        blocks.append(Heading(text=f"Appendix {letter}: {title}", level=1, anchor=anchor))
        toc.entries.append((f"Appendix {letter}: {title}", anchor))

    counters: dict[str, int] = {}

    def tables(letter: str, items: Iterable[Table | None]) -> int:
        n = 0
        for t in items:
            if t is None:
                continue
            counters[letter] = counters.get(letter, 0) + 1
            blocks.append(TableBlock(table=t, label=f"Table {letter}.{counters[letter]}"))
            n += 1
        return n

    def sub(text: str, anchor: str) -> None:
        blocks.append(Heading(text=text, level=2, anchor=anchor))

    appendix("A", "System configuration")
    blocks.append(Para(text="Configuration of every server in the test bed, one table per server model. "
                            "Values shared by all servers of a model are printed once; values that differ are "
                            "listed per server.",
                       css="intro"))
    if not tables("A", server_tables(bed)):
        blocks.append(Para(text="The bed has no servers.", css="note"))
    if bed.vms or bed.clusters:
        sub("Virtual machines and clusters", "appendix-a-vms")
        tables("A", [vm_table(bed), cluster_table(bed)])
    if bed.configurations:
        sub("Configurations", "appendix-a-configurations")
        blocks.append(Para(text="The tables above show the bed as drawn. The study runs it in "
                                f"{len(bed.configurations)} software configurations of the same hardware; this "
                                "table lists every setting that differs between them.", css="intro"))
        tables("A", [configuration_table(bed)])

    appendix("B", "Switches and networks")
    if not tables("B", switch_tables(bed)):
        blocks.append(Para(text="The bed has no switches.", css="note"))
    tables("B", [network_table(bed), connection_table(bed)])
    sub("Address table", "appendix-b-addresses")
    addresses = address_table(bed)
    if addresses.rows:
        tables("B", [addresses])
    else:
        blocks.append(Para(text="No port in the bed carries an IP address or WWPN.", css="note"))

    appendix("C", "Test-bed diagram")
    blocks.append(ImageBlock(caption="Figure C.1: Connection diagram of all components, drawn from the bed",
                             keep_with_next=False))

    appendix("D", "Storage configuration")
    if not tables("D", storage_tables(bed)):
        blocks.append(Para(text="The bed has no storage arrays.", css="note"))

    appendix("E", "Storage layout")
    blocks.append(Para(text="Drive slots of every enclosure, coloured by disk group; the legend gives each "
                            "group's RAID level, drives, owning controller and contents.", css="intro"))
    if not tables("E", slot_map_tables(bed)):
        blocks.append(Para(text="No enclosures with drive slots are described.", css="note"))

    appendix("F", "Test methodology")
    workload = workload_tables(bed)
    if workload:
        sub("Workload definitions", "appendix-f-workloads")
        tables("F", workload)
    plan = scenario_tables(bed)
    if plan:
        sub("Scenarios and run plan", "appendix-f-plan")
        tables("F", plan)
    if not procs:
        blocks.append(Para(text=note or "No methodology.", css="note"))
    described = {c.id: c.description for c in bed.configurations}
    for name, meth in procs:
        prefix = f"{name}: " if name is not None else ""
        if name is not None:
            blocks.append(Heading(text=f"Procedure in configuration {name}", level=2,
                                  anchor=f"appendix-f-configuration-{slug(name)}"))
            if described.get(name):
                blocks.append(Para(text=described[name], css="intro"))
        for section in meth.sections:
            sub(f"{prefix}{section.number}. {section.title}",
                f"appendix-f-{slug(name) + '-' if name else ''}{slug(str(section.number))}")
            blocks.extend(section_blocks(section))
    blocks.extend(guard_blocks([st for _, meth in procs for st in meth.steps()], 2, "appendix-f-guards"))

    results = results_tables(bed)
    runs = list(runs)
    comparisons = list(comparisons)
    if results or runs or comparisons:
        appendix("G", "Results")
        rp = bed.run_plan
        if results and rp and rp.repetitions and rp.repetitions > 1:
            blocks.append(Para(text=f"Each test ran {rp.repetitions} times; "
                                    f"the {rp.score or 'median'} run is reported.",
                               css="intro"))
        tables("G", results)
        figures = 0
        for table in comparisons:
            sub(f"Compared: {' / '.join(table.names)}", f"appendix-g-compare-{slug('-'.join(table.names))}")
            tables("G", [comparison_table(table)])
            blocks.extend(Para(text=line, css="small") for line in formulas(table))
            figures += 1
            blocks.append(ImageBlock(caption=f"Figure G.{figures}: {table.title} per host/VM"
                                             f"{' and in total' if any(r.is_total for r in table.rows) else ''}, "
                                             f"{' / '.join(table.names)}",
                                     key=f"chart-g{figures}", chart=table, keep_with_next=False))
        for run in runs:
            sub(f"Measured in run {run.run_id}", f"appendix-g-run-{slug(run.run_id)}")
            blocks.append(Para(text=f"Recorded by Testbed Studio while the run's workload steps ran (started "
                                    f"{run.started}): one sample per host and metric per second. Averages and 95th "
                                    "percentiles are over the seconds measured; seconds without a value are gaps "
                                    "(a collector stopped or a counter disappeared) and are left out.", css="intro"))
            from app.report.tables.run_places import run_place_tables
            by_place = run_place_tables(run)        # a run of several phases or runs: a table for each
            tables("G", [*(by_place or [run_summary_table(run) if run.summaries else None, run_verdict_table(run)]),
                         *run_storage_tables(run), *run_record_tables(run)])
            for chart in run.charts(bed):
                figures += 1
                per = "" if " per " in chart.title else " per host"
                blocks.append(ImageBlock(caption=f"Figure G.{figures}: {chart.title}{per}, run {run.run_id}",
                                         key=f"chart-g{figures}", chart=chart, keep_with_next=False))
    return Appendix(bed=bed, title="Test-bed appendices", blocks=blocks, findings=findings, methodology=methodology,
                    running_head=info.name or "Test-bed appendices")


def methodology_blocks(methodology: Any) -> list[Block]:
    blocks: list[Block] = []
    for section in methodology.sections:
        blocks.append(Heading(text=f"{section.number}. {section.title}", level=2,
                              anchor=f"section-{slug(str(section.number))}"))
        blocks.extend(section_blocks(section))
    return blocks


def section_blocks(section: Any) -> list[Block]:
    """A section's steps; the run section with each phase's repeated runs printed once
    (app.report.run_print)."""
    if section.key == "run":
        from app.report.run_print import run_section_blocks
        return run_section_blocks(list(section.steps))
    return list(steps_blocks(list(section.steps)))
