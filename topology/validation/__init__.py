"""The validator: registered rules, findings, documented exceptions.

`registry` holds the `@rule` decorator and the Finding type, `context` what the rules
share, `rules/` the rules themselves (they import the registry and the context, never the
runner), and `runner` runs them over a bed.
"""
from topology.validation.context import Context
from topology.validation.registry import SEVERITY_ORDER, Finding, RuleInfo
from topology.validation.runner import has_errors, rule_catalogue, validate

__all__ = ["SEVERITY_ORDER", "Context", "Finding", "RuleInfo", "has_errors", "rule_catalogue", "validate"]
