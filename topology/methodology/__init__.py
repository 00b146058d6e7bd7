"""Methodology generation: the numbered "how we tested" procedure, built from a bed.

The procedure follows the order a lab builds a bed in (`SECTIONS`).  What each step says and
which command automates it is data: YAML step templates under ``resources/templates/<platform>/``
(``common`` for every platform, ``windows``, ``linux``, ``esxi``, ``array``, ``switch``).  Code
only supplies the *values*: for each template step, a domain (``port``, ``path``, ``volume`` ...)
yields one item per bed object, each with named values (``{port.ip}``, ``{host.id}`` ...)
that remember which component field they came from.

Template text, in prose and in commands::

    {port.ip}             a value; in a command it is quoted for the command's shell
    {? , MTU {port.mtu} ?} optional: dropped when a value inside is missing
    {@reset}              the number of the first step made from template step `reset`
    {{  }}                literal braces

A required value the bed lacks is written ``«missing: port.ip»``, listed in `Step.unresolved`,
and such a step is never runnable.  A platform template replaces the ``common`` step with the
same id; a template with ``match:`` (a vendor/model) replaces both for the items it matches;
directories passed as `extra_dirs` override built-in files with the same relative path, or add
new ones.  A broken template raises `TemplateError` naming the file and line.

Where each part lives:

    steps            the result: Methodology, Section, Step, Command; the section order
    values           Val and its constructors; how a value is quoted for each shell
    context          BedContext: what the domains share (index, ranks, derived relations)
    domains/         one module per section: each domain's value names next to its builder
    template_syntax  the template language: {value}, {? optional ?}, {@step} as named nodes
    located_yaml     YAML that remembers the line of every key
    template_files   <platform>/<section>.yaml files: foreach, when, match, derive, automation
    render           filling a template with an item's values
    generation       choosing templates per item, section order, numbering
    markdown         the Markdown output
"""
from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains import DOMAINS, GLOBAL_NAMES, WILDCARDS, Domain, Item, domain_reference
from topology.methodology.generation import generate
from topology.methodology.markdown import to_markdown
from topology.methodology.render import MISSING
from topology.methodology.steps import SECTION_KEYS, SECTIONS, Command, Methodology, Section, Step
from topology.methodology.template_files import PLATFORMS, TEMPLATES_DIR, clear_template_cache, load_templates
from topology.methodology.template_syntax import TemplateError
from topology.methodology.values import Val, Values

__all__ = [
    "BedContext", "Command", "DOMAINS", "Domain", "GLOBAL_NAMES", "Item", "MISSING", "Methodology", "PLATFORMS",
    "SECTIONS", "SECTION_KEYS", "Section", "Step", "TEMPLATES_DIR", "TemplateError", "Val", "Values", "WILDCARDS",
    "clear_template_cache", "domain_reference", "generate", "load_templates", "platform_of", "to_markdown",
]
