"""EXC-001: a documented exception that matches nothing.

The runner judges it after every rule has run (it needs every case of every scenario and
configuration); the rule is registered here so the catalogue lists it.
"""
from __future__ import annotations

from collections.abc import Iterator

from topology.validation.context import Context
from topology.validation.registry import Hit, rule


@rule("EXC-001", "info", "a documented exception that matches no finding",
      reason="An exception records why a finding is expected here; one that matches nothing explains nothing, "
             "and once the bed changes it may silently accept a new finding that happens to match it.",
      source="documented exceptions (brief: 'the finding is then shown as accepted, not hidden')",
      hint="remove the exception, or correct its code or subject to the finding it was written for")
def exc_001(ctx: Context) -> Iterator[Hit]:
    return iter(())
