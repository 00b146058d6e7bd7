"""Running the validator: every registered rule (or the chosen codes) over a bed, then the
bed's documented exceptions, which turn matching findings into accepted ones (still
listed, marked accepted, with the bed's reason).

The rule modules are loaded here, on first use; they import the registry and the context,
never this module.
"""
from __future__ import annotations

import gc
from collections.abc import Iterable

from topology.index import BedIndex
from topology.model import Bed
from topology.validation.context import Context
from topology.validation.registry import RULES, SEVERITY_ORDER, Finding, RuleInfo


def _load_rule_modules() -> None:
    from topology.validation.rules import access, capacity, cluster, network, paths, storage, workload  # noqa: F401


def validate(bed: Bed, codes: Iterable[str] | None = None, idx: BedIndex | None = None) -> list[Finding]:
    """Run every registered rule (or the given codes) and apply the bed's documented exceptions."""
    _load_rule_modules()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # rules build many short-lived objects next to a large model: skip the rescans
    try:
        return _run(bed, codes, idx)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run(bed: Bed, codes: Iterable[str] | None, idx: BedIndex | None) -> list[Finding]:
    ctx = Context(bed, idx)
    wanted = set(codes) if codes is not None else None
    findings: list[Finding] = []
    for code in sorted(RULES):
        if wanted is not None and code not in wanted:
            continue
        info, fn = RULES[code]
        seen: set = set()
        for h in fn(ctx):
            key = (h.subjects, h.message)
            if key in seen:
                continue
            seen.add(key)
            findings.append(Finding(code, h.severity or info.severity, h.subjects, h.message,
                                    info.reason, info.source, h.hint or info.hint))
    _apply_exceptions(bed, findings)
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects))
    return findings


def _apply_exceptions(bed: Bed, findings: list[Finding]) -> None:
    for exc in bed.exceptions:
        for f in findings:
            if f.code == exc.code and (exc.subject == "*" or exc.subject in f.subjects):
                f.accepted = True
                f.exception_reason = exc.reason


def rule_catalogue() -> list[RuleInfo]:
    _load_rule_modules()
    return [RULES[c][0] for c in sorted(RULES)]


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" and not f.accepted for f in findings)

