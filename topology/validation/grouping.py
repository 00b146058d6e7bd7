"""One finding per fact: the cases the rules found, grouped.

A rule yields one hit per case (a path, a disk, a port).  Cases of one code with the same cause
(the rule says what it is; by default the message itself) and the same severity are one
finding: its message says the fact once and names each case, its subjects are every case's,
and `members` keeps each case with its own message, so nothing is lost (the JSON lists them).
The same case found in several scenarios or configurations is one case that holds in each.

A root cause explains other findings: a host left out of its host group (MAP-002) is why it
has no path to the volumes (PATH-001) and why its VMs' disks are out of reach (CAP-005).  The
rule marks its hit with the ids it is about (`hit(root=...)`) and names the codes it explains
(`@rule(explains=...)`): those findings, in the same configuration and scenario (or any scenario,
for a root of the reference configuration), move under it as its `consequences`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from topology.validation.registry import RULES, UNKNOWN_CAUSE, Case, Finding, shown_names

_ITEMS_SHOWN = 8
Where = tuple[str | None, str | None]


def group(raw: list[Finding], *, configured: bool = False) -> list[Finding]:
    """The facts behind `raw` (cases as the rules found them, labelled with their configuration
    and scenario): root causes take their consequences, then cases of one fact are one finding."""
    return _group(_explain(raw), configured)


def _explain(raw: list[Finding]) -> list[Finding]:
    roots = [f for f in raw if f.root is not None and RULES[f.code][0].explains]
    if not roots:
        return raw
    taken: dict[int, list[Finding]] = {}
    by_place: dict[tuple, list[Finding]] = {}
    for r in roots:
        by_place.setdefault((r.configuration, r.scenario), []).append(r)
    keep: list[Finding] = []
    for f in raw:
        owner = None
        # a root cause of the reference holds in every scenario too (the runner does not repeat it there)
        candidates = [*by_place.get((f.configuration, f.scenario), ()),
                      *(by_place.get((f.configuration, None), ()) if f.scenario is not None else ())]
        for r in candidates:
            assert r.root is not None
            if f is not r and f.code in RULES[r.code][0].explains and \
                    not r.root[0].isdisjoint(f.subjects) and not r.root[1].isdisjoint(f.subjects):
                owner = r
                break
        if owner is None:
            keep.append(f)
        else:
            taken.setdefault(id(owner), []).append(f)
    for r in roots:
        if id(r) in taken:
            r.consequences = tuple(taken[id(r)])
    return keep


def _group(raw: list[Finding], configured: bool) -> list[Finding]:
    facts: dict[tuple, dict[tuple, list]] = {}      # fact key -> case key -> [first finding, where...]
    for f in raw:
        cause = f.cause or f.message
        fact = facts.setdefault((f.code, f.severity, cause, f.hint, f.accepted, f.exception_reason), {})
        case = fact.get((f.subjects, f.message))
        place = (f.configuration, f.scenario)
        if case is None:
            fact[(f.subjects, f.message)] = [f, place]
        elif place not in case[1:]:
            case.append(place)
            case[0].consequences += tuple(c for c in f.consequences if c not in case[0].consequences)
    out = []
    for (_code, _sev, cause, *_rest), cases in facts.items():
        out.append(_finding(cause, [c[0] for c in cases.values()], [tuple(c[1:]) for c in cases.values()],
                            configured))
    return out


def _finding(cause: str, firsts: list[Finding], places: list[tuple[Where, ...]], configured: bool) -> Finding:
    first = firsts[0]
    where = tuple(dict.fromkeys(p for ps in places for p in ps))
    consequences = _group([c for f in firsts for c in f.consequences], configured) \
        if any(f.consequences for f in firsts) else ()
    common = _common(where)
    if len(firsts) == 1:
        return _replace(first, where=where, holds_in=holds_in(where, configured), consequences=tuple(consequences),
                       configuration=common[0], scenario=common[1])
    cases = tuple(Case(f.subjects, f.message, p) for f, p in zip(firsts, places, strict=True))
    subjects = tuple(dict.fromkeys(s for f in firsts for s in f.subjects))
    return _replace(first, subjects=subjects, message=_message(cause, firsts), members=cases, where=where,
                   holds_in=holds_in(where, configured), consequences=tuple(consequences),
                   configuration=common[0], scenario=common[1])


def _replace(first: Finding, **changes: object) -> Finding:
    """`dataclasses.replace` without its field-by-field call of __init__ (a finding has no
    __post_init__): a tenth of the grouping's time over the 24,585 findings of a 5,000-device bed."""
    new = object.__new__(Finding)
    new.__dict__.update(first.__dict__)
    new.__dict__.update(changes)
    return new


def _common(where: Sequence[Where]) -> Where:
    """The finding's own configuration and scenario: the first place it holds in (as before grouping,
    when it holds in one), the configuration None when the places differ in it."""
    configs = {c for c, _ in where}
    return (where[0][0] if len(configs) == 1 else None), where[0][1]


def _message(cause: str, cases: list[Finding]) -> str:
    n = len(cases)
    info = RULES[cases[0].code][0]
    if cause == UNKNOWN_CAUSE:
        about = (info.unknown or f"{{n}} cases of «{info.title}»").replace("{n}", str(n))
        names = list(dict.fromkeys(u for f in cases for u in f.unstated))
        return f"could not judge {about}: {shown_names(names)} not stated"
    items = list(dict.fromkeys(f.item or f.subjects[0] for f in cases))
    head = cause.replace("{n}", str(n)) if "{n}" in cause else f"{cause} ({n} cases)"
    return f"{head}: {shown_names(items, _ITEMS_SHOWN)}"


def holds_in(where: Iterable[Where], configured: bool) -> str:
    """Where a finding holds, in words: 'reference configuration', 'scenarios a, b', 'every
    configuration', 'configurations x, y; scenario a'."""
    where = list(where)
    scenarios = list(dict.fromkeys(s for _, s in where))
    named = [s for s in scenarios if s is not None]
    if not named:
        in_scenarios = "the reference configuration" if not configured else ""
    else:
        in_scenarios = ("the reference configuration and " if None in scenarios else "") + \
            (f"scenario {named[0]}" if len(named) == 1 else f"scenarios {', '.join(named)}")
    if not configured:
        return in_scenarios
    configs = [c for c in dict.fromkeys(c for c, _ in where) if c is not None]
    if any(c is None for c, _ in where):
        in_configs = "every configuration"
    else:
        in_configs = f"configuration {configs[0]}" if len(configs) == 1 else f"configurations {', '.join(configs)}"
    return f"{in_configs}; {in_scenarios}" if in_scenarios else in_configs
