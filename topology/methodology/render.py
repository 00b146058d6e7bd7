"""Filling a parsed template with an item's values: prose as is, commands with every value quoted.

A required value the item lacks is written «missing: name» and listed, so the step is never run.
A value the source does not state reads "not stated" in prose; a command cannot be built from it,
so it is listed in `unstated` (the caller drops that command), and an optional part of a command
that holds one is left out, as it is for an absent value.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from topology import quoting
from topology.methodology.template_files import TemplateFile
from topology.methodology.template_syntax import Template, ValueRef
from topology.methodology.values import Val, ValueLayers, Values

MISSING = "«missing: {}»"
NOT_STATED_IN_COMMAND = "«not stated: {}»"


def render(template: Template, lookup: Callable[[str], Val | None], shell: str | None,
           used: dict[str, Val], missing: list[str], unstated: list[str] | None = None) -> str:
    """The template's text; `shell` None for prose, else the shell its values are quoted for.
    Every value shown goes into `used`, every missing one into `missing`, every value a command
    needs but the source does not state into `unstated` (into `missing` when that is None)."""
    plan = template.plan
    if len(plan) == 1 and plan[0].__class__ is str:
        return plan[0]   # nothing to fill in
    if shell is None:
        return _fill_prose(plan, lookup, used, missing)
    return _fill(plan, lookup, shell, used, missing, missing if unstated is None else unstated)


def _fill_prose(plan: tuple, lookup: Callable[[str], Val | None], used: dict[str, Val], missing: list[str]) -> str:
    """`_fill` for prose (half the renders): values as they read, nothing quoted."""
    out: list[str] = []
    append = out.append
    for node in plan:
        kind = node.__class__
        if kind is str:
            append(node)
        elif kind is ValueRef:
            name = node.name
            v = lookup(name)
            if v is None:
                if name not in missing:
                    missing.append(name)
                append(MISSING.format(name))
            else:
                used[name] = v
                append(v.text)
        else:
            for name in node.required:
                if lookup(name) is None:
                    break
            else:
                inner_missing: list[str] = []
                text = _fill_prose(node.plan, lookup, used, inner_missing)
                if not inner_missing:
                    append(text)
    return "".join(out)


def _fill(plan: tuple, lookup: Callable[[str], Val | None], shell: str, used: dict[str, Val],
          missing: list[str], unstated: list[str]) -> str:
    """A command's text: every value quoted for `shell` (prose goes to `_fill_prose`)."""
    out: list[str] = []
    append = out.append
    for node in plan:
        kind = node.__class__
        if kind is str:
            append(node)
        elif kind is ValueRef:
            name = node.name
            v = lookup(name)
            if v is None:
                if name not in missing:
                    missing.append(name)
                append(quoting.quote(shell, MISSING.format(name)))
                continue
            used[name] = v
            if v.kind == "not_stated":
                if name not in unstated:
                    unstated.append(name)
                append(quoting.quote(shell, NOT_STATED_IN_COMMAND.format(name)))
            else:
                quoted = v.quoted
                text = quoted.get(shell) if quoted is not None else None
                if text is None:
                    try:
                        text = v.shell_text(shell)
                    except ValueError:  # a NUL in a bed value: cannot be a command argument
                        if name not in missing:
                            missing.append(name)
                        text = quoting.quote(shell, MISSING.format(name))
                append(text)
        else:
            # an optional part is dropped as soon as one of its own values is missing
            for name in node.required:
                v = lookup(name)
                if v is None or v.kind == "not_stated":
                    break
            else:
                inner_missing: list[str] = []
                text = _fill(node.plan, lookup, shell, used, inner_missing, inner_missing)
                if not inner_missing:
                    append(text)
    return "".join(out)


def tidy(script: str) -> str:
    """Drop the lines an optional part emptied."""
    if "\n" not in script:
        return script.rstrip()   # blank: "" either way
    return "\n".join(line.rstrip() for line in script.split("\n") if line.strip())


def apply_derives(tf: TemplateFile, base: Any) -> Any:
    """The item's values with the file's `derive:` values added (for each, the first matching pattern wins)."""
    if not tf.derives:
        return base
    vals: Values = {}
    for d in tf.derives.values():
        src = base.get(d.source)
        value = d.default if src is None else d.output(src.match_text())
        if value is not None and value != "":
            # the output is the template's own literal, as trusted as its script: inserted bare
            vals[d.name] = Val(value, src.source if src is not None else "", "literal")
    if not vals:
        return base
    return {**base, **vals} if isinstance(base, dict) else ValueLayers(vals, base)


def matches(conds: list[tuple[str, re.Pattern]], vals: Any) -> bool:
    """Whether every pattern of a `when:` or `match:` finds its value (a missing value is empty text)."""
    for name, pat in conds:
        v = vals.get(name)
        if not pat.search(v.match_text() if v is not None else ""):
            return False
    return True

