"""The rule registry: a rule is a function decorated with `@rule(...)` that receives a
`Context` and yields `hit(subjects, message)` records.

The decorator carries the user-facing code, default severity, the reason with its source
and a fix hint, so adding a rule is one function in one module under
`topology/validation/rules/`.  The runner turns hits into `Finding`s.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
    # what the rule could not judge, said once for all its "could not judge" notes ("{n}" is their count)
    unknown: str = ""
    # codes whose findings this rule's root causes explain (listed under the root, not beside it)
    explains: tuple[str, ...] = ()


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
    # one finding is one fact: the cases it groups (each its subjects, message and where it holds),
    # empty when it is a single case; `subjects` is every case's subjects together
    members: tuple[Case, ...] = ()
    # findings this one's cause explains (a host out of its host group: the paths and disks it lost)
    consequences: tuple[Finding, ...] = ()
    holds_in: str = ""                # where it holds, in words ("every configuration", "scenarios a, b")
    where: tuple[tuple[str | None, str | None], ...] = ()     # (configuration, scenario) pairs it holds in
    # how the runner groups cases (not shown): the fact a case is one of, its name in the list, ...
    cause: str = field(default="", repr=False, compare=False)
    item: str = field(default="", repr=False, compare=False)
    unstated: tuple[str, ...] = field(default=(), repr=False, compare=False)
    root: tuple[frozenset[str], frozenset[str]] | None = field(default=None, repr=False, compare=False)

    @property
    def count(self) -> int:
        """How many cases of the fact the finding stands for."""
        return len(self.members) or 1

    def cases(self) -> tuple[Case, ...]:
        return self.members or (Case(self.subjects, self.message, self.where),)

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "scenario": self.scenario,
                "configuration": self.configuration,
                "subjects": list(self.subjects),
                "message": self.message, "hint": self.hint, "reason": self.reason,
                "source": self.source, "accepted": self.accepted,
                "exception_reason": self.exception_reason,
                "holds_in": self.holds_in,
                "where": [{"configuration": c, "scenario": s} for c, s in self.where],
                "count": self.count,
                "cases": [c.as_dict() for c in self.cases()],
                "consequences": [c.as_dict() for c in self.consequences]}


@dataclass(frozen=True)
class Case:
    """One case of a finding's fact: its components, its own message, where it holds."""
    subjects: tuple[str, ...]
    message: str
    where: tuple[tuple[str | None, str | None], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"subjects": list(self.subjects), "message": self.message,
                "where": [{"configuration": c, "scenario": s} for c, s in self.where]}


@dataclass
class Hit:
    subjects: tuple[str, ...]
    message: str
    severity: str | None = None
    hint: str | None = None
    cause: str | None = None
    item: str | None = None
    unstated: tuple[str, ...] = ()
    root: tuple[frozenset[str], frozenset[str]] | None = None


def hit(subjects: str | Iterable[str], message: str, *, severity: str | None = None,
        hint: str | None = None, cause: str | None = None, item: str | None = None,
        root: tuple[Iterable[str], Iterable[str]] | None = None) -> Hit:
    """One case a rule found.  `cause`: the fact it is a case of, when other cases share it (hits of a
    rule with the same cause and severity are one finding, whose message is the cause, "{n}" its
    count, followed by each case's `item`, its first subject by default).  `root`: two sets of ids;
    a finding of a code the rule `explains`, in the same scenario, naming one id of each set is a
    consequence of this one and is listed under it."""
    subs = (subjects,) if isinstance(subjects, str) else tuple(dict.fromkeys(subjects))
    return Hit(subs, message, severity, hint, cause, item,
               root=(frozenset(root[0]), frozenset(root[1])) if root is not None else None)


RuleFunc = Callable[["Context"], Iterable[Hit]]
RULES: dict[str, tuple[RuleInfo, RuleFunc]] = {}
# codes judged on something other than the drawing alone (the as-built check holds the hosts' facts
# against it: topology/asbuilt/): listed in the catalogue, never run by the validator
FACT_RULES: dict[str, RuleInfo] = {}


def rule(code: str, severity: str, title: str, *, reason: str, source: str, hint: str, unknown: str = "",
         explains: tuple[str, ...] = ()):
    def register(fn: RuleFunc) -> RuleFunc:
        if code in RULES:
            raise ValueError(f"rule {code} registered twice")
        RULES[code] = (RuleInfo(code, severity, title, reason, source, hint, unknown, explains), fn)
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
    found = hit(subjects, f"could not judge {what}: {shown_names(names)} not stated", severity="info",
                hint=hint or "find the value in the source and write it; until then the rule cannot judge this",
                cause=UNKNOWN_CAUSE)
    found.unstated = tuple(names)
    return found


UNKNOWN_CAUSE = "\0could not judge"     # every "could not judge" note of a rule is one line


def shown_names(names: list[str], limit: int = 6) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def unstated(obj: Any, label: str, *fields: str) -> list[str]:
    """'LABEL FIELD' ('R710-1 memory', 'h1:san1 MTU') for each of `fields` of `obj` that is not stated
    (for `could_not_judge`)."""
    return [f"{label} {_field_words(name)}" for name in fields if getattr(obj, name, None) is NOT_STATED]


@lru_cache(maxsize=256)
def _field_words(name: str) -> str:
    return words(re.sub(r"_(gb|gbps|kb|pct)$", "", name))
