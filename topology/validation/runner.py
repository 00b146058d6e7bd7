"""Running the validator: every registered rule (or the chosen codes) over a bed, then the
bed's documented exceptions, which turn matching findings into accepted ones (still
listed, marked accepted, with the bed's reason).

The rule modules are loaded here, on first use; they import the registry and the context,
never this module.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from topology.abandon import check as check_abandoned
from topology.gc_pause import collector_paused
from topology.index import BedIndex
from topology.letting_go import let_go
from topology.model import Bed, Scenario
from topology.placement import Placement
from topology.scenario_scope import Scope, ScopeFinder
from topology.scenario_view import scenario_view
from topology.unknown import NOT_STATED
from topology.validation.context import Context
from topology.validation.failure_scenarios import DEGRADED_BY_DESIGN, note_designed_losses, only_fails_parts
from topology.validation.grouping import group
from topology.validation.registry import RULES, SEVERITY_ORDER, Finding, RuleInfo, could_not_judge

# told the cases found so far, how many rules are done and how many there are
Progress = Callable[[list[Finding], int, int], None]


def _load_rule_modules() -> None:
    from topology.validation.rules import (  # noqa: F401
        access,
        capacity,
        cluster,
        connected,
        exceptions,
        guests,
        host_entries,
        limits,
        masking,
        network,
        paths,
        port_kinds,
        sriov,
        storage,
        vlans,
        workload,
        wwpn,
    )


def validate(bed: Bed, codes: Iterable[str] | None = None, idx: BedIndex | None = None, *,
             scenario: str | None = None, reference_only: bool = False,
             configuration: str | None = None, progress: Progress | None = None) -> list[Finding]:
    """The findings of `bed`, one per fact (`topology.validation.grouping`): every case the rules
    find (`validate_cases`), a root cause with the findings it explains listed under it, the cases
    of one fact together, each saying where it holds.  Judged in full (every rule, scenario and
    configuration), a documented exception that matches no case is a finding too (EXC-001)."""
    codes = list(codes) if codes is not None else None
    with collector_paused():    # as the rules run: the grouping makes small objects next to a large model
        cases = validate_cases(bed, codes, idx, scenario=scenario, reference_only=reference_only,
                               configuration=configuration, progress=progress)
        findings = group(cases, configured=bool(bed.configurations))
        if scenario is None and configuration is None and not reference_only and \
                (codes is None or "EXC-001" in codes):
            findings += _unmatched_exceptions(bed, cases)
        findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects, f.scenario or "",
                                     f.configuration or ""))
    return findings


def validate_cases(bed: Bed, codes: Iterable[str] | None = None, idx: BedIndex | None = None, *,
                   scenario: str | None = None, reference_only: bool = False,
                   configuration: str | None = None, progress: Progress | None = None) -> list[Finding]:
    """Every case each registered rule (or the given codes) finds, with the bed's documented exceptions
    applied: one finding per case, as the rules yield them.

    By default the reference configuration and then every scenario that fails, excludes, narrows
    or moves something are judged; a scenario adds the findings the reference does not have, each
    naming its scenario.  The reference configuration is the scenario marked `reference: true`
    when it changes something (the VMs it runs, what it leaves out), else the bed as drawn.
    `scenario=NAME` judges that scenario alone (all its findings); `reference_only` skips the
    scenarios.

    A bed with `configurations:` is judged in each of them (`topology.configurations`): a
    finding of every configuration is listed once, one of some configurations once for each,
    naming it.  `configuration=NAME` judges that configuration alone.

    `progress(cases, done, total)`: told the reference's cases after each of its rules, when the
    reference is the bed as drawn (`topology.validation.progress` publishes them while the rest runs).
    """
    if configuration is not None or bed.configurations:
        return _configured(bed, codes, scenario, reference_only, configuration)
    _load_rule_modules()
    codes = list(codes) if codes is not None else None    # read once per scenario, not once in all
    with collector_paused():  # rules build many short-lived objects next to a large model: skip the rescans
        idx = idx or BedIndex(bed)
        ref_ctx = None
        if scenario is not None:
            sc = idx.scenarios.get(scenario)
            if sc is None:
                raise KeyError(f"no scenario {scenario!r} in this bed "
                               f"(scenarios: {', '.join(idx.scenarios) or 'none'})")
            findings = _judge_scenario(bed, idx, sc, codes)
            reference = _reference_scenario(bed)
            if only_fails_parts(sc, reference):     # judged alone: its additions to the reference, as below
                degraded = sorted(DEGRADED_BY_DESIGN.intersection(codes if codes is not None else RULES))
                before = (_judge_scenario(bed, idx, reference, degraded) if reference is not None
                          else _run(Context(bed, idx), degraded, None))
                note_designed_losses(sc, _additions(findings, _by_code(before)), reference)
        else:
            ref_ctx = Context(bed, idx)
            reference = _reference_scenario(bed)
            if reference is None:
                findings = _run(ref_ctx, codes, None, progress)
            else:
                findings = _judge_reference(bed, idx, reference, codes, ref_ctx)
            if not reference_only:
                findings += _scenario_findings(bed, idx, codes, findings, ref_ctx, scoped=reference is None,
                                               besides=reference)
        _apply_exceptions(bed, findings)
        findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects, f.scenario or ""))
        # the index and the rules' caches: freed at the return in one go, they held the interpreter
        # lock for 60-80 ms on the 5,000-device bed (the window could not repaint meanwhile)
        scraps = [idx, ref_ctx]
        del idx, ref_ctx
        let_go(scraps)
        return findings


def _configured(bed: Bed, codes: Iterable[str] | None, scenario: str | None, reference_only: bool,
                configuration: str | None) -> list[Finding]:
    from topology.configurations import find, views
    codes = list(codes) if codes is not None else None
    if configuration is not None:
        find(bed, configuration)        # KeyError naming the configurations there are
    per: dict[str, list[Finding]] = {}
    for name, view in views(bed, [configuration] if configuration is not None else None):
        if scenario is not None and scenario not in {s.id for s in view.scenarios}:
            continue                    # the scenario runs in another configuration
        per[name] = validate_cases(view, codes, scenario=scenario, reference_only=reference_only)
    if scenario is not None and not per:
        raise KeyError(f"no scenario {scenario!r} in this bed (scenarios: "
                       f"{', '.join(s.id for s in bed.scenarios) or 'none'})")
    keyed = {name: {(f.code, f.subjects, f.message, f.scenario): f for f in found} for name, found in per.items()}
    shared_possible = configuration is None and len(keyed) > 1
    first = next(iter(keyed), None)
    out: list[Finding] = []
    for name, found in keyed.items():
        for key, f in found.items():
            if shared_possible and all(key in other for other in keyed.values()):
                if name == first:          # the same in every configuration: said once, naming none
                    out.append(f)
                continue
            f.configuration = name
            out.append(f)
    out.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects, f.scenario or "", f.configuration or ""))
    return out


def scenarios_judged(bed: Bed) -> list[Scenario]:
    """The scenarios that change something; the others are the reference configuration as drawn."""
    return [s for s in bed.scenarios if s.failed or s.excluded or s.vms or s.placement or s.vms is NOT_STATED]


# Rules that read only what a scenario never changes (access entries, what is drawn and cabled, hardware
# limits, volumes without a mapping): the reference says it all.  A failed host takes its cables out
# of the scenario's view; the port is still cabled, and CON-003 must not say otherwise.  CAP-011 reads every
# scenario's placement from the bed as drawn.
_SCENARIO_BLIND = ("ACC-", "CON-", "LIM-", "MAP-003", "CAP-011")


def _reference_scenario(bed: Bed) -> Scenario | None:
    """The scenario marked as the bed's reference configuration, when it changes something."""
    return next((s for s in scenarios_judged(bed) if s.reference), None)


def _judge_reference(bed: Bed, idx: BedIndex, reference: Scenario, codes: Iterable[str] | None,
                     drawn: Context) -> list[Finding]:
    """The reference configuration as its scenario runs it (a lab's standalone reference leaves the
    second node and the scenario-only VMs out), named as the reference.  What a scenario never
    changes is judged on the bed as drawn (an excluded switch does not make a port uncabled)."""
    chosen = list(codes) if codes is not None else list(RULES)
    blind = [c for c in chosen if c.startswith(_SCENARIO_BLIND)]
    rest = [c for c in chosen if not c.startswith(_SCENARIO_BLIND)]
    findings = _run(drawn, blind, None) if blind else []
    if rest:
        for f in _judge_scenario(bed, idx, reference, rest, placement=drawn.placement):
            f.scenario = None
            findings.append(f)
    return findings


def _judge_scenario(bed: Bed, idx: BedIndex, sc: Scenario, codes: Iterable[str] | None,
                    keep: Scope | None = None, placement: Placement | None = None) -> list[Finding]:
    """`placement`: the drawn bed's placement over `idx` (the reference's), shared by the view and CAP-003."""
    placement = placement or Placement(bed, idx)
    if sc not in scenarios_judged(bed):
        return _run(Context(bed, idx, scenario=sc, drawn_placement=placement), codes, sc.id)
    view = scenario_view(bed, sc, idx, keep, placement)
    return _run(Context(view, scenario=sc, drawn=bed, drawn_placement=placement), codes, sc.id)


def _scenario_findings(bed: Bed, idx: BedIndex, codes: Iterable[str] | None, reference: list[Finding],
                       ref_ctx: Context | None = None, *, scoped: bool = True,
                       besides: Scenario | None = None) -> list[Finding]:
    """The findings each scenario (but `besides`, the reference's own) adds to the reference's.
    `scoped`: judge each scenario on the part of the bed it can change (`topology.scenario_scope`),
    the same findings for far less work when the reference is the bed as drawn."""
    wanted = [c for c in (codes if codes is not None else RULES) if not c.startswith(_SCENARIO_BLIND)]
    if not wanted:
        return []
    known = _by_code(reference)
    finder = None
    ref_ctx = ref_ctx or Context(bed, idx)
    if scoped and scenarios_judged(bed):
        finder = ScopeFinder(bed, idx, ref_ctx.derived, ref_ctx.placement)
    out: list[Finding] = []
    for sc in scenarios_judged(bed):
        if sc is besides:
            continue
        keep = finder.scope(sc) if finder is not None else None
        added = _additions(_judge_scenario(bed, idx, sc, wanted, keep, ref_ctx.placement), known)
        note_designed_losses(sc, added, besides)
        out += added
    return out


def _by_code(findings: list[Finding]) -> dict[str, list[frozenset[str]]]:
    """Each code's findings by their subjects (what `_additions` compares with)."""
    known: dict[str, list[frozenset[str]]] = {}
    for f in findings:
        known.setdefault(f.code, []).append(frozenset(f.subjects))
    return known


def _additions(findings: list[Finding], known: dict[str, list[frozenset[str]]]) -> list[Finding]:
    """What a scenario's `findings` add to the reference's (`known`, by `_by_code`): a reference
    finding restated over the fewer components the scenario keeps is not news."""
    return [f for f in findings if not any(frozenset(f.subjects) <= ref for ref in known.get(f.code, ()))]


# Rules whose verdict depends on which VMs run: in a scenario whose VMs the source does not state
# (`vms: not stated`) they could not judge, whatever the placement of every VM would say.
_VM_SET_RULES = frozenset({"CAP-001", "CAP-002", "CAP-003", "CAP-006", "RAID-009"})


def _run(ctx: Context, codes: Iterable[str] | None, scenario: str | None,
         progress: Progress | None = None) -> list[Finding]:
    wanted = set(codes) if codes is not None else None
    findings: list[Finding] = []
    vms_unstated = ctx.scenario is not None and ctx.scenario.vms is NOT_STATED
    chosen = [code for code in sorted(RULES) if wanted is None or code in wanted]
    for done, code in enumerate(chosen, 1):
        check_abandoned()
        if progress is not None and done > 1:
            progress(findings, done - 1, len(chosen))
        info, fn = RULES[code]
        seen: set = set()
        for h in fn(ctx):
            if vms_unstated and code in _VM_SET_RULES and (h.severity or info.severity) != "info":
                assert ctx.scenario is not None
                h = could_not_judge(h.subjects, f"this with the VMs of every host running ({h.message})",
                                    [f"the VMs scenario {ctx.scenario.id} runs"])
            key = (h.subjects, h.message)
            if key in seen:
                continue
            seen.add(key)
            findings.append(Finding(code, h.severity or info.severity, h.subjects, h.message,
                                    info.reason, info.source, h.hint or info.hint, scenario=scenario,
                                    cause=h.cause or "", item=h.item or "", unstated=h.unstated, root=h.root))
    return findings


def _unmatched_exceptions(bed: Bed, cases: list[Finding]) -> list[Finding]:
    """EXC-001 for each documented exception that accepts no case: a rule changed, or the bed did, and
    the record now explains nothing (or would hide a new finding that happens to match it)."""
    info = RULES["EXC-001"][0]
    out = []
    for exc in bed.exceptions:
        if any(f.code == exc.code and (exc.subject == "*" or exc.subject in f.subjects) for f in cases):
            continue
        subject = "any component" if exc.subject == "*" else exc.subject
        known = exc.code in RULES
        what = f"no {exc.code} finding names {subject}" if known else f"there is no rule {exc.code}"
        # a finding about a part names the part, not its device ("tgt1#ctl0", "lnx1:san0"): say which
        parts = sorted({s for f in cases if f.code == exc.code for s in f.subjects
                        if s.startswith((exc.subject + "#", exc.subject + ":"))})
        if parts:
            more = ", …" if len(parts) > 4 else ""
            what += f"; its findings name {', '.join(parts[:4])}{more} (write one as the subject)"
        subjects = (exc.subject,) if exc.subject != "*" else ()
        out.append(Finding("EXC-001", info.severity, subjects or (f"exception:{exc.code}",),
                           f"the documented exception for {exc.code} on {subject} matches nothing: {what} "
                           f"(its reason: {exc.reason})", info.reason, info.source, info.hint,
                           holds_in="the bed's exceptions"))
    return out


def _apply_exceptions(bed: Bed, findings: list[Finding]) -> None:
    for exc in bed.exceptions:
        for f in findings:
            if f.code == exc.code and (exc.subject == "*" or exc.subject in f.subjects):
                f.accepted = True
                f.exception_reason = exc.reason


def rule_catalogue() -> list[RuleInfo]:
    """Every code: the drawing's rules and the as-built check's (topology/asbuilt/codes.py)."""
    _load_rule_modules()
    import topology.asbuilt.codes  # noqa: F401
    from topology.validation.registry import FACT_RULES
    every = {c: RULES[c][0] for c in RULES} | FACT_RULES
    return [every[c] for c in sorted(every)]


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" and not f.accepted for f in findings)

