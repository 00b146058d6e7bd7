"""The rule registry: a rule is a function decorated with `@rule(...)` that receives a
`Context` and yields `hit(subjects, message)` records.

The decorator carries the user-facing code, default severity, the reason with its source
and a fix hint, so adding a rule is one function in one module under
`topology/validation/rules/`.  The runner turns hits into `Finding`s.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from topology.unknown import NOT_STATED
from topology.vocabulary import words

if TYPE_CHECKING:
    from topology.validation.context import Context

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class RuleInfo:
    code: str
    severity: str
    title: str
    reason: str
    source: str
    hint: str


@dataclass
class Finding:
    code: str
    severity: str
    subjects: tuple[str, ...]
    message: str
    reason: str
    source: str
    hint: str
    accepted: bool = False
    exception_reason: str = ""
    scenario: str | None = None       # None: the reference configuration (the bed as drawn)
    configuration: str | None = None  # None: the bed as drawn, or every one of its configurations

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "scenario": self.scenario,
                "configuration": self.configuration,
                "subjects": list(self.subjects),
                "message": self.message, "hint": self.hint, "reason": self.reason,
                "source": self.source, "accepted": self.accepted,
                "exception_reason": self.exception_reason}


@dataclass
class Hit:
    subjects: tuple[str, ...]
    message: str
    severity: str | None = None
    hint: str | None = None


def hit(subjects: str | Iterable[str], message: str, *, severity: str | None = None,
        hint: str | None = None) -> Hit:
    subs = (subjects,) if isinstance(subjects, str) else tuple(dict.fromkeys(subjects))
    return Hit(subs, message, severity, hint)


RuleFunc = Callable[["Context"], Iterable[Hit]]
RULES: dict[str, tuple[RuleInfo, RuleFunc]] = {}
# codes judged on something other than the drawing alone (the as-built check holds the hosts' facts
# against it: topology/asbuilt/): listed in the catalogue, never run by the validator
FACT_RULES: dict[str, RuleInfo] = {}


def rule(code: str, severity: str, title: str, *, reason: str, source: str, hint: str):
    def register(fn: RuleFunc) -> RuleFunc:
        if code in RULES:
            raise ValueError(f"rule {code} registered twice")
        RULES[code] = (RuleInfo(code, severity, title, reason, source, hint), fn)
        return fn
    return register


def fact_rule(code: str, severity: str, title: str, *, reason: str, source: str, hint: str) -> RuleInfo:
    """Registers a code of the catalogue that facts read from the hosts raise (not the drawing)."""
    if code in RULES or code in FACT_RULES:
        raise ValueError(f"rule {code} registered twice")
    FACT_RULES[code] = info = RuleInfo(code, severity, title, reason, source, hint)
    return info


def could_not_judge(subjects: str | Iterable[str], what: str, unstated: Iterable[str], *,
                    hint: str | None = None) -> Hit:
    """An info hit: the rule needs values the source does not state (`topology.unknown`), so it
    says what it could not judge and which values are missing, instead of guessing."""
    names = list(dict.fromkeys(unstated))
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return hit(subjects, f"could not judge {what}: {shown} not stated", severity="info",
               hint=hint or "find the value in the source and write it; until then the rule cannot judge this")


def unstated(obj: Any, label: str, *fields: str) -> list[str]:
    """'LABEL FIELD' ('R710-1 memory', 'h1:san1 MTU') for each of `fields` of `obj` that is not stated
    (for `could_not_judge`)."""
    return [f"{label} {_field_words(name)}" for name in fields if getattr(obj, name, None) is NOT_STATED]


@lru_cache(maxsize=256)
def _field_words(name: str) -> str:
    return words(re.sub(r"_(gb|gbps|kb|pct)$", "", name))
