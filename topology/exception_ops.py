"""Documented exceptions: accepting a finding with a reason, and taking the acceptance back.

A bed's `exceptions` list holds (code, subject, reason) records; the validator marks every
finding of that code that involves the subject as accepted (still listed, with the reason).
These functions build the reversible edits; the GUI applies each as one undoable step.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topology.edits import Compound, Edit, InsertItem, RemoveItem
from topology.ids import owner_of
from topology.model import Bed, ExceptionRecord


class ExceptionError(ValueError):
    """The exception cannot be recorded (no reason, nothing to accept); the message says why."""


def exception_subject(subjects: Iterable[str]) -> str:
    """The subject an acceptance is recorded against: the finding's first (main) component."""
    subjects = list(subjects)
    if not subjects:
        raise ExceptionError("the finding names no component to record the exception against")
    return subjects[0]


def matching_exceptions(bed: Bed, code: str, subjects: Iterable[str]) -> list[ExceptionRecord]:
    """The bed's records that make a finding (code, subjects) accepted."""
    subjects = set(subjects)
    return [e for e in bed.exceptions if e.code == code and (e.subject == "*" or e.subject in subjects)]


def accept(bed: Bed, code: str, subjects: Iterable[str], reason: str) -> Edit:
    """One edit recording that finding `code` on `subjects` is accepted for `reason`."""
    reason = " ".join(reason.split())
    if not reason:
        raise ExceptionError("a documented exception needs a reason")
    subjects = list(subjects)
    subject = exception_subject(subjects)
    if matching_exceptions(bed, code, subjects):
        raise ExceptionError(f"{code} on {subject} is already accepted")
    record = ExceptionRecord(code=code, subject=subject, reason=reason)
    return InsertItem(bed.exceptions, record, text=f"Accept {code} on {subject} as documented exception",
                      owner=owner_of(subject))


def unaccept(bed: Bed, code: str, subjects: Iterable[str]) -> Edit:
    """One edit removing the records that accept finding `code` on `subjects`."""
    subjects = list(subjects)
    records = matching_exceptions(bed, code, subjects)
    if not records:
        raise ExceptionError(f"{code} on {', '.join(subjects) or 'the bed'} is not accepted")
    subject = exception_subject(subjects)
    text = f"Withdraw the documented exception for {code} on {subject}"
    owner = owner_of(subject)
    return Compound([RemoveItem(bed.exceptions, r, text=text, owner=owner) for r in records], text)


def accept_finding(bed: Bed, finding: Any, reason: str) -> Edit:
    """Accept a finding: a fact that groups several cases is accepted for each of them (one record per
    case's main component), as one edit."""
    cases = list(getattr(finding, "members", ()) or ())
    if len(cases) < 2:
        return accept(bed, finding.code, finding.subjects, reason)
    edits, seen = [], set()
    for case in cases:
        subject = exception_subject(case.subjects)
        if subject in seen or matching_exceptions(bed, finding.code, case.subjects):
            continue
        seen.add(subject)
        edits.append(accept(bed, finding.code, case.subjects, reason))
    if not edits:
        raise ExceptionError(f"{finding.code} on {exception_subject(finding.subjects)} is already accepted")
    text = f"Accept {finding.code} on {len(cases)} cases as documented exception"
    return Compound(edits, text) if len(edits) > 1 else edits[0]


def unaccept_finding(bed: Bed, finding: Any) -> Edit:
    return unaccept(bed, finding.code, finding.subjects)
