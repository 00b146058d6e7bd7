"""Validation that shows what it has found before it is done: a big bed's rules take seconds, and
a user who opens it should see the first findings in well under that.

`validate_in_stages` runs the validator once, as `validate` does, and meanwhile hands `publish`
the findings of the rules done so far in the reference configuration (grouped and sorted as the
full list is, the bed's documented exceptions applied), with how many rules are done and how
many there are: first once `first_after_s` has gone by and some rule found something, then
every `every_s`.  What it returns
is `validate(bed)`, byte for byte; a small bed is done before the first publication is due and
publishes nothing.  A partial list is never the answer: the caller says the validation is still
checking for as long as it shows one.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from topology.model import Bed
from topology.validation.grouping import group
from topology.validation.registry import SEVERITY_ORDER, Finding
from topology.validation.runner import _apply_exceptions, validate


@dataclass(frozen=True)
class Partial:
    findings: list[Finding]     # the findings of the first `done` rules of the reference
    done: int
    total: int


def validate_in_stages(bed: Bed, publish: Callable[[Partial], None], *, first_after_s: float = 0.5,
                       every_s: float = 2.0, clock: Callable[[], float] = time.perf_counter) -> list[Finding]:
    """`validate(bed)`, publishing the findings found so far while it runs (see the module)."""
    due = clock() + first_after_s

    def progress(cases: list[Finding], done: int, total: int) -> None:
        nonlocal due
        if not cases or clock() < due:
            return          # (an empty list would say nothing a user can act on yet)
        publish(Partial(partial_findings(bed, cases), done, total))
        due = clock() + every_s
    return validate(bed, progress=progress)


def partial_findings(bed: Bed, cases: list[Finding]) -> list[Finding]:
    """The findings of `cases` (some rules' cases in the reference), as `validate` would list them.
    The runner's own cases are copied first: grouping writes the consequences of a root cause onto
    it, and the final grouping must start from the cases as the rules found them."""
    copies = [_copy(f) for f in cases]
    _apply_exceptions(bed, copies)
    copies.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects, f.scenario or ""))  # as validate_cases
    findings = group(copies, configured=bool(bed.configurations))
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.code, f.subjects, f.scenario or "",
                                 f.configuration or ""))
    return findings


def _copy(f: Finding) -> Finding:
    new = object.__new__(Finding)
    new.__dict__.update(f.__dict__)
    return new
