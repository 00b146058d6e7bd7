"""Generation: which template step applies to which bed object, in which section order, and the numbering.

Sections follow the order a lab builds a bed in (`SECTIONS`).  For each template step, its domain
yields one item per bed object; the most specific template (platform, then `match:`) renders it.
"""
from __future__ import annotations

import gc
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from topology.methodology.ansible_block import render_ansible_block
from topology.methodology.context import BedContext
from topology.methodology.domains import DOMAINS, Item
from topology.methodology.domains.bed_wide import bed_values, run_values
from topology.methodology.render import MISSING, apply_derives, matches, render, tidy
from topology.methodology.step_notes import attach_notes
from topology.methodology.steps import SECTION_KEYS, SECTIONS, Command, Methodology, Section, Step
from topology.methodology.template_files import StepTemplate, TemplateFile, load_templates
from topology.methodology.template_syntax import STEP_NUMBER_MARK, template_error
from topology.methodology.values import Val, Values
from topology.model import Bed


def _specificity(tf: TemplateFile) -> tuple[int, int, int]:
    return (0 if tf.platform == "common" else 1, 1 if tf.match else 0, tf.rank)


@dataclass
class _Plan:
    """The step ids of one section in order, and each id's candidate definitions."""
    order: list[str] = field(default_factory=list)
    defs: dict[str, list[StepTemplate]] = field(default_factory=dict)
    title: str = ""


def _plans(files: list[TemplateFile]) -> dict[str, _Plan]:
    plans: dict[str, _Plan] = {k: _Plan() for k in SECTION_KEYS}
    for tf in sorted(files, key=lambda f: (_specificity(f), f.rel)):
        plan = plans[tf.section]
        if tf.title:
            plan.title = tf.title
        for st in tf.steps:
            if st.id not in plan.defs:
                plan.order.append(st.id)
                plan.defs[st.id] = []
            plan.defs[st.id].append(st)
    for plan in plans.values():
        for defs in plan.defs.values():
            defs.sort(key=lambda s: _specificity(s.file), reverse=True)
            for st in defs:
                for ref in st.text.step_refs():
                    unknown = [r for r in ref.step_ids if r not in plan.defs]
                    if unknown:
                        raise template_error(st.file.path, st.text.line,
                                             f"step {st.id!r}: {{@{'|'.join(ref.step_ids)}}} names no step "
                                             f"of section {st.file.section!r} ({', '.join(unknown)})",
                                             f"steps there: {', '.join(plan.order)}")
    return plans


_SEQUENCE_SECTIONS = {"run"}   # steps in template order across all items (a timeline), not grouped per object


def generate(bed: Bed, templates_dir: str | os.PathLike | None = None,
             extra_dirs: Sequence[str | os.PathLike] = (), findings: list | None = None) -> Methodology:
    """The methodology of `bed`.  `findings`: validation findings already at hand (else validated
    here).  Raises TemplateError when a template is broken; never fails on a bed's missing values."""
    files = load_templates(templates_dir, extra_dirs)
    plans = _plans(files)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # tens of thousands of small, long-lived objects: the collector's rescans only cost time
    try:
        return _generate(bed, plans, findings)
    finally:
        if gc_was_enabled:
            gc.enable()


def _generate(bed: Bed, plans: dict[str, _Plan], findings: list | None) -> Methodology:
    ctx = BedContext(bed)
    globals_ = bed_values(ctx)
    globals_.update(run_values(ctx))
    domain_items: dict[str, list[Item]] = {}

    def items_of(name: str) -> list[Item]:
        if name not in domain_items:
            items = DOMAINS[name].build(ctx)
            for it in items:  # one flat lookup per item: rendering then reads plain dicts
                it.values = {**globals_, **it.values}
            domain_items[name] = items
        return domain_items[name]

    meth = Methodology(bed_name=(bed.bed.name if bed.bed is not None else "") or "untitled bed")
    number = 0
    for key, default_title in SECTIONS:
        plan = plans[key]
        produced: list[tuple[tuple, Step, str]] = []
        for order, sid in enumerate(plan.order):
            defs = plan.defs[sid]
            domain = defs[0].domain
            for item in items_of(domain):
                st = _choose(defs, item, globals_)
                if st is None:
                    continue
                vals = apply_derives(st.file, item.values)
                if not matches(st.when, vals):
                    continue
                step = _make_step(st, vals, item)
                sort = (order, item.group, item.sub) if key in _SEQUENCE_SECTIONS else (item.group, order, item.sub)
                produced.append((sort, step, sid))
        if produced:
            number += 1
            meth.sections.append(_numbered_section(number, key, plan.title or default_title, produced))
    attach_notes(meth.steps(), ctx.idx)
    meth.findings_summary = _summary(bed, findings, meth)
    return meth


def _numbered_section(number: int, key: str, title: str, produced: list[tuple[tuple, Step, str]]) -> Section:
    """The section's steps in order, numbered, with the numbers put into the texts that refer to them."""
    produced.sort(key=lambda t: t[0])
    section = Section(str(number), title, key=key)
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    for k, (_, step, sid) in enumerate(produced, 1):
        step.number = f"{number}.{k}"
        first.setdefault(sid, step.number)
        last[sid] = step.number
        section.steps.append(step)

    def number_of(m: re.Match) -> str:
        table = last if m.group(2) else first
        for sid in m.group(1).split("|"):
            if sid in table:
                return table[sid]
        return MISSING.format("step " + m.group(1))
    for step in section.steps:
        if "\x00" in step.text:
            step.text = STEP_NUMBER_MARK.sub(number_of, step.text)
    return section


def _choose(defs: list[StepTemplate], item: Item, globals_: Values) -> StepTemplate | None:
    """The most specific definition whose platform and `match:` fit the item."""
    for st in defs:
        tf = st.file
        if tf.platform != "common" and tf.platform != item.platform:
            continue
        if tf.match:
            vals = apply_derives(tf, item.values)
            if not matches(tf.match, vals):
                continue
        return st
    return None


def _make_step(st: StepTemplate, vals: Values, item: Item) -> Step:
    used: dict[str, Val] = {}
    missing: list[str] = []
    not_stated: list[str] = []    # values a command needs that the source does not state
    get = vals.get

    def get_stated(name: str) -> Val | None:
        v = get(name)
        return None if v is not None and v.kind == "not_stated" else v

    text = render(st.text, get, None, used, missing)
    commands = []
    for ct in st.commands:
        if not matches(ct.when, vals):
            continue
        unstated: list[str] = []
        script = tidy(render(ct.script, get, ct.shell, used, missing, unstated))
        if not script:
            continue  # every line was optional and the bed gives none of them
        verify = tidy(render(ct.verify, get, ct.shell, used, missing, unstated)) if ct.verify is not None else None
        if unstated:  # no command is built on a value the source does not give: the step is done by hand
            not_stated += [n for n in unstated if n not in not_stated]
            continue
        invoke = None
        if ct.invoke is not None:
            # without its values (the array's addresses) the CLI cannot be run; the statements still print
            invoke_missing: list[str] = []
            invoke = tidy(render(ct.invoke, get, "bash", used, invoke_missing)) or None
            invoke = None if invoke_missing else invoke
        ansible = None
        if ct.ansible is not None:
            ansible = render_ansible_block(ct.ansible, lambda tpl, miss: render(tpl, get_stated, None, used, miss))
        commands.append(Command(ct.shell, script, verify or None, ct.platform, ct.note, invoke=invoke,
                                ansible=ansible))
    sources: dict[str, str] = {}
    for v in used.values():
        if v.source and v.text and v.kind != "not_stated":
            sources.setdefault(v.text, v.source)
    return Step("", " ".join(text.split()), item.target, commands,
                not commands, sources, missing, f"{st.file.rel}#{st.id}", not_stated)


def _summary(bed: Bed, findings: list | None, meth: Methodology) -> list[str]:
    out: list[str] = []
    if findings is None:
        try:
            from topology.validation import validate
            findings = validate(bed)
        except Exception as exc:  # a bed the validator cannot check still gets its procedure
            out.append(f"The bed could not be validated ({type(exc).__name__}: {exc}); check it before use.")
            findings = []
    for f in findings:
        if getattr(f, "accepted", False) or f.severity not in ("error", "warning"):
            continue
        subjects = ", ".join(f.subjects)
        out.append(f"{f.severity.upper()} {f.code}: {f.message}" + (f" ({subjects})" if subjects else ""))
    incomplete = [s for s in meth.steps() if s.unresolved]
    if incomplete:
        names = sorted({n for s in incomplete for n in s.unresolved})
        out.append(f"{len(incomplete)} step(s) need values the bed does not give ({', '.join(names[:8])}"
                   f"{', …' if len(names) > 8 else ''}); they are marked «missing: …» and are not run automatically.")
    return out

