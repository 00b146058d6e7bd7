"""Generation: which template step applies to which bed object, in which section order, and the numbering.

Sections follow the order a lab builds a bed in (`SECTIONS`).  For each template step, its domain
yields one item per bed object; the most specific template (platform, then `match:`) renders it.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from topology.abandon import check as check_abandoned
from topology.gc_pause import collector_paused
from topology.letting_go import let_go
from topology.methodology.ansible_block import render_ansible_block
from topology.methodology.context import BedContext
from topology.methodology.domains import DOMAINS, Item
from topology.methodology.domains.bed_wide import bed_values, run_values
from topology.methodology.guards import assumed_reason, guard_library, selection_reason, stated_only
from topology.methodology.render import MISSING, apply_derives, matches, render, tidy
from topology.methodology.selection import HostProfile
from topology.methodology.step_notes import attach_notes
from topology.methodology.steps import SECTION_KEYS, SECTIONS, Command, Methodology, Section, Step
from topology.methodology.template_files import (
    Selector,
    StepTemplate,
    TemplateFile,
    load_families,
    load_templates,
)
from topology.methodology.template_syntax import STEP_NUMBER_MARK, template_error
from topology.methodology.values import Val, Values
from topology.model import Bed


def _specificity(tf: TemplateFile) -> tuple[int, int, int, int]:
    # a lab's directory beats the built-in files; among files of one directory a stated platform or transport
    # is more specific than none
    return (0 if tf.platform == "common" else 1, 1 if tf.match else 0, tf.rank, 1 if tf.selector else 0)


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
             extra_dirs: Sequence[str | os.PathLike] = (), findings: list | None = None,
             configuration: Any = None) -> Methodology:
    """The methodology of `bed`.  `findings`: validation findings already at hand (else validated
    here).  `configuration`: the `ConfigurationRun` this procedure is for, when the bed has several.
    Raises TemplateError when a template is broken; never fails on a bed's missing values."""
    # tens of thousands of small, long-lived objects: the collector's rescans only cost time.  Paused before
    # the first allocation: one then would start a collection of everything made since the last one (the
    # previous procedure, a validation), which is not this generation's work
    with collector_paused():
        files = load_templates(templates_dir, extra_dirs)
        plans = _plans(files)
        families = load_families(templates_dir, extra_dirs)
        ctx = BedContext(bed, families, configuration)
        meth = _generate(ctx, plans, findings)
        scraps = [ctx]      # the bed's index and the values worked out (let_go says why)
        del ctx
        let_go(scraps)
        return meth


def _generate(ctx: BedContext, plans: dict[str, _Plan], findings: list | None) -> Methodology:
    bed = ctx.bed
    globals_ = bed_values(ctx)
    globals_.update(run_values(ctx))
    global_names = globals_.keys()
    domain_items: dict[str, list[tuple[Item, _Machine]]] = {}
    machines: dict[tuple, _Machine] = {}     # whom a step is for, once per target machine
    kinds: dict[tuple, int] = {}

    def items_of(name: str) -> list[tuple[Item, _Machine]]:
        """The domain's items, each with the machine its steps are for."""
        if name not in domain_items:
            items = DOMAINS[name].build(ctx)
            shared = ctx.shared_value_ids()
            out = []
            for it in items:
                # one flat lookup per item (its values win over the bed-wide ones): rendering then reads plain
                # dicts.  A dict the item alone holds takes the bed-wide values in place (a copy costs more)
                vals = it.values
                if id(vals) in shared:
                    it.values = {**globals_, **vals}
                elif vals.keys().isdisjoint(global_names):   # (two views: it walks the shorter)
                    vals.update(globals_)
                else:
                    for k, v in globals_.items():
                        vals.setdefault(k, v)
                machine_key = (it.target, it.platform, it.transports)
                machine = machines.get(machine_key)
                if machine is None:
                    machine = machines[machine_key] = _machine(ctx, it)
                    # machines alike get the same templates: one small number per kind, quick to hash
                    machine.kind = kinds.setdefault((it.platform, machine.kind), len(kinds))
                out.append((it, machine))
            domain_items[name] = out
        return domain_items[name]

    meth = Methodology(bed_name=(bed.bed.name if bed.bed is not None else "") or "untitled bed")
    # the template a step id takes on a kind of machine (item platform, release and transports), where it does
    # not depend on the item's own values
    choices: dict[tuple, dict[int, tuple[StepTemplate | None, list[tuple[StepTemplate, str, bool]], bool]]] = {}
    number = 0
    for key, default_title in SECTIONS:
        plan = plans[key]
        produced: list[tuple[tuple, Step, str]] = []
        tables: dict[tuple, _TableStep] = {}
        for order, sid in enumerate(plan.order):
            check_abandoned()
            defs = plan.defs[sid]
            domain = defs[0].domain
            sid_choices = choices.setdefault((key, sid), {})
            sequence = key in _SEQUENCE_SECTIONS
            for item, machine in items_of(domain):
                choice = sid_choices.get(machine.kind)
                if choice is None:
                    choice = _choose(defs, item, machine)
                    if choice[2]:
                        sid_choices[machine.kind] = choice
                st, misses, _ = choice
                if st is None:
                    continue
                vals = apply_derives(st.file, item.values) if st.file.derives else item.values
                if st.when and not matches(st.when, vals):
                    continue
                step = _make_step(st, vals, item, machine, misses)
                if item.position is not None:
                    step.position, step.heading = item.position, item.heading
                if st.table is not None:
                    table_key = (sid, item.group, item.target)
                    held = tables.get(table_key)
                    if held is not None:
                        held.add(step)
                        continue
                    tables[table_key] = _TableStep(step)
                if not sequence:
                    sort: tuple = (item.group, order, item.sub)
                elif item.position is not None:     # a step of the test's timeline: its place in the test first
                    sort = (1, item.group, order, item.sub)
                else:
                    sort = (0, (order,), item.group, item.sub)
                produced.append((sort, step, sid))
        for held in tables.values():
            held.finish()
        produced = _without_repeats(produced, {sid for sid, defs in plan.defs.items() if any(d.once for d in defs)})
        if produced:
            number += 1
            meth.sections.append(_numbered_section(number, key, plan.title or default_title, produced))
    attach_notes(meth.steps(), ctx.idx)
    _summarize(bed, findings, meth)
    # the items (a values dict each, 10^5 on a big bed) and the tables: freed all at once when the
    # generation returns, they held the interpreter lock for 0.7 s on the worker (topology.letting_go)
    # (moved into scraps whole, so that let_go holds the only reference; items_of still names the tables)
    working: list[dict] = [domain_items, machines, choices, globals_]
    scraps: list = [dict(t) for t in working]
    for t in working:
        t.clear()
    let_go(scraps)
    return meth


def _numbered_section(number: int, key: str, title: str, produced: list[tuple[tuple, Step, str]]) -> Section:
    """The section's steps in order, numbered, with the numbers put into the texts that refer to them."""
    produced.sort(key=lambda t: t[0])
    section = Section(str(number), title, key=key)
    # a reference to a step ({@load}) means the one nearest it: in the same part of the test (a run's
    # group of loads, then the run), else anywhere in the section
    first: dict[tuple, str] = {}
    last: dict[tuple, str] = {}
    heading = ""
    for k, (sort, step, sid) in enumerate(produced, 1):
        step.number = f"{number}.{k}"
        for scope in _scopes(sort):
            first.setdefault((scope, sid), step.number)
            last[(scope, sid)] = step.number
        if step.heading == heading:
            step.heading = ""               # printed once, where that part of the test begins
        elif step.heading:
            heading = step.heading
        section.steps.append(step)

    for (sort, step, _) in produced:
        if "\x00" not in step.text:
            continue
        scopes = _scopes(sort)

        def number_of(m: re.Match, scopes: tuple = scopes) -> str:
            table = last if m.group(2) else first
            for scope in scopes:
                for sid in m.group(1).split("|"):
                    if (scope, sid) in table:
                        return table[(scope, sid)]
            return MISSING.format("step " + m.group(1))
        step.text = STEP_NUMBER_MARK.sub(number_of, step.text)
    return section


def _scopes(sort: tuple) -> tuple:
    """The parts of the test a step belongs to, nearest first: its group of loads, its run, the section."""
    if len(sort) == 4 and sort[0] == 1 and len(sort[1]) >= 2:
        return (sort[1], sort[1][:2], ())
    return ((),)


_MACHINE_PLATFORMS = ("windows", "linux", "esxi", "")


@dataclass
class _Machine:
    """Whom an item's step is for: the profile of the machine it runs on and the transports it is about."""
    profile: HostProfile | None           # None: an array, a switch, or no machine at all
    transports: tuple[str, ...]
    verdicts: dict[int, tuple[str, bool]] = field(default_factory=dict)   # selector id -> _selector_miss
    _about: tuple[str, dict | None] | None = None
    reasons: dict[tuple[str, bool], str] = field(default_factory=dict)   # _no_template_reason, said once
    # what the choice of a template depends on: machines alike in it get the same templates
    kind: Any = field(init=False)

    def __post_init__(self) -> None:
        self.kind = (self.profile.release if self.profile is not None else None, self.transports)

    def about(self, item_platform: str) -> tuple[str, dict | None]:
        """How a step names the machine's platform, and its details (shared by the machine's steps)."""
        if self.profile is None:
            return item_platform, None
        if self._about is None:
            rel = self.profile.release
            self._about = (rel.describe(), {"family": rel.family, "distro": rel.distro, "version": rel.version_text,
                                            "hypervisor": rel.hypervisor, "transports": list(self.transports),
                                            "multipath": self.profile.multipath_family})
        return self._about


def _machine(ctx: BedContext, item: Item) -> _Machine:
    if item.platform in _MACHINE_PLATFORMS and item.target and ctx.server_or_vm(item.target) is not None:
        profile = ctx.profile(item.target)
        return _Machine(profile, item.transports or profile.transports)
    return _Machine(None, item.transports)


_FITS = ("", False)


def _selector_miss(sel: Selector, machine: _Machine) -> tuple[str, bool]:
    """('', False) when the selector fits; else (why not, whether it was the transport)."""
    if sel.platform is None and not sel.transports:
        return _FITS
    hit = machine.verdicts.get(id(sel))
    if hit is None:
        hit = machine.verdicts[id(sel)] = _selector_verdict(sel, machine)
    return hit


def _selector_verdict(sel: Selector, machine: _Machine) -> tuple[str, bool]:
    if sel.platform is not None:
        if machine.profile is None:
            return "not a machine", False
        why = sel.platform.miss(machine.profile.release)
        if why:
            return why, False
    if sel.transports and not set(sel.transports) & set(machine.transports):
        return f"no {'/'.join(sorted(sel.transports))} path", True
    return _FITS


def _choose(defs: list[StepTemplate], item: Item, machine: _Machine
            ) -> tuple[StepTemplate | None, list[tuple[StepTemplate, str, bool]], bool]:
    """The most specific definition whose platform, transport and `match:` fit the item, the
    more specific ones that did not fit (each with why: what makes a step manual, said in its text),
    and whether the answer holds for every item of the same platform on a machine of the same kind
    (no `match:` on the item's values was looked at)."""
    misses: list[tuple[StepTemplate, str, bool]] = []
    alike = True
    for st in defs:
        tf = st.file
        if tf.platform != "common" and tf.platform != item.platform:
            if item.platform == "" and machine.profile is not None and tf.platform in _MACHINE_PLATFORMS:
                misses.append((st, "the operating system is not stated", False))
            continue
        why, by_transport = _selector_miss(tf.selector, machine)
        if not why:
            why, by_transport = _selector_miss(st.selector, machine)
        if why:
            misses.append((st, why, by_transport))
            continue
        if tf.match:
            alike = False
            vals = apply_derives(tf, item.values)
            if not matches(tf.match, vals):
                if tf.platform != "common":
                    misses.append((st, "its model has no template", False))
                continue
        return st, misses, alike
    return None, misses, alike


def _no_template_reason(item: Item, machine: _Machine, misses: list[tuple[StepTemplate, str, bool]],
                        what: str = "template") -> str:
    """'no template for Windows Server 2008 R2 over FC: done by hand' (or why the bed leaves it open)."""
    if not misses:
        return ""
    if machine.profile is not None:
        release = machine.profile.release
        if not release.family:
            return "the bed does not name the machine's operating system: done by hand"
        by_transport = any(t for _, _, t in misses)
        said = machine.reasons.get((what, by_transport))
        if said is None:
            said = machine.reasons[(what, by_transport)] = \
                f"no {what} for {machine.profile.describe(machine.transports if by_transport else ())}: done by hand"
        return said
    model = next((v.text for k in ("array.model", "switch.model") if (v := item.values.get(k)) is not None), "")
    return f"no {what} for {model or item.target or 'this step'}: done by hand"


def _make_step(st: StepTemplate, vals: Values, item: Item, machine: _Machine,
               misses: list[tuple[StepTemplate, str, bool]]) -> Step:
    used: dict[str, Val] = {}
    missing: list[str] = []
    not_stated: list[str] = []    # values a command needs that the source does not state
    get = vals.get

    text = render(st.text, get, None, used, missing)
    commands = []
    # a vendor's own template (one with `match:`) that gives no command is work done in that vendor's tool,
    # not a missing template
    tf = st.file
    reason = _no_template_reason(item, machine, misses) if misses and not tf.match and (
        tf.platform == "common" or not st.commands) else ""
    command_misses: list[tuple[StepTemplate, str, bool]] = []
    unfit: list[str] = []
    why_destructive = ""      # why a step that writes to a disk has no command here
    why_unguarded = ""        # ... because its only command would write without selecting the disk by identity
    destructive = st.destructive and (not st.writes_when or matches(st.writes_when, vals))
    for ct in st.commands:
        assumed: list[str] = []
        cget = stated_only(get, assumed) if destructive else get
        if ct.when and not matches(ct.when, vals):
            failed = [(name, v) for name, pat in ct.when
                      if not pat.search(v.match_text() if (v := vals.get(name)) is not None else "")]
            if all(v is not None and v.kind == "not_stated" for _, v in failed):
                # the command fits but for values the source leaves open: it is they that make the step manual
                # (a value that stands for several open fields names them in its items)
                open_names = [x for name, v in failed for x in ((v.items if v is not None else ()) or (name,))]
                not_stated += [n for n in open_names if n not in not_stated]
            else:
                unfit += [f"{v.text} ({name})" for name, v in failed if v is not None and v.kind != "not_stated"]
            if destructive and (absent := [name for name, _ in ct.when if vals.get(name) is None]):
                why_destructive = why_destructive or f"the bed gives no {', '.join(absent)}: done by hand"
            if st.destructive and (v := vals.get("volume.select_by")) is not None and \
                    any(name == "volume.select_by" and not pat.search(v.match_text()) for name, pat in ct.when):
                why_destructive = why_destructive or selection_reason(v.text, machine.about(item.platform)[0])
            continue
        if destructive and not ct.guard:   # only a guarded command writes to a disk
            why_unguarded = ("it would write to a disk named without an identity the bed states (a WWN, serial, or "
                             "target and LUN): aim it at the volume and state the volume's identity; done by hand")
            continue
        sel = ct.selector
        if sel.platform is not None or sel.transports:
            why, by_transport = _selector_miss(sel, machine)
            if why:
                command_misses.append((st, why, by_transport))
                continue
        unstated: list[str] = []
        script = tidy(render(ct.script, cget, ct.shell, used, missing, unstated))
        if not script:
            continue  # every line was optional and the bed gives none of them
        verify = tidy(render(ct.verify, cget, ct.shell, used, missing, unstated)) if ct.verify is not None else None
        if assumed:
            why_destructive = why_destructive or assumed_reason(assumed)
            continue
        if unstated:  # no command is built on a value the source does not give: the step is done by hand
            not_stated += [n for n in unstated if n not in not_stated]
            continue
        if ct.guard:
            script = guard_library(ct.guard) + "\n" + script
        invoke = None
        if ct.invoke is not None:
            # without its values (the array's addresses) the CLI cannot be run; the statements still print
            invoke_missing: list[str] = []
            invoke = tidy(render(ct.invoke, get, "bash", used, invoke_missing)) or None
            invoke = None if invoke_missing else invoke
        ansible = None
        if ct.ansible is not None:
            def get_stated(name: str) -> Val | None:
                v = get(name)
                return None if v is not None and v.kind == "not_stated" else v
            ansible = render_ansible_block(ct.ansible, lambda tpl, miss: render(tpl, get_stated, None, used, miss))
        commands.append(Command(ct.shell, script, verify or None, ct.platform, ct.note, "", invoke, ansible))
    if st.commands and not commands and not reason and (why_unguarded or why_destructive):
        reason = why_unguarded or why_destructive
    if st.commands and not commands and not reason and not_stated:
        reason = f"the source does not state {', '.join(not_stated)}: done by hand"
    if st.commands and not commands and not reason:
        reason = _no_template_reason(item, machine, command_misses, "command")
        if not reason and unfit:
            reason = f"no command for {', '.join(dict.fromkeys(unfit))}: done by hand"
    table = None
    if st.table is not None:
        table = (list(st.table.header), [[" ".join(render(c, get, None, used, missing).split())
                                          for c in st.table.row]])
    sources: dict[str, str] = {}
    for v in used.values():
        if v.source and v.text and v.kind != "not_stated":
            sources.setdefault(v.text, v.source)
    platform, about = machine.about(item.platform)
    devices: list[str] = []
    if destructive and st.device is not None:
        device_missing: list[str] = []
        device = " ".join(render(st.device, get, None, {}, device_missing).split())
        devices = [] if device_missing else [device]
        if commands and not devices:   # a command that cannot say which disk it writes to is never run
            commands, reason = [], selection_reason("none", platform)
    # positional: a step is made some 20,000 times for a large bed, and keywords cost a third of it
    return Step("", _sentences(text), item.target, commands, not commands, sources, missing, f"{tf.rel}#{st.id}",
                not_stated, [], reason, platform, table, about, used, destructive, devices)


_DOUBLED_STOP = re.compile(r"(?<![.…])\.\.(?!\.)|[;:,]\.(?!\.)")


def _sentences(text: str) -> str:
    """The text on one line, without the doubled full stop a value that ends a sentence leaves
    ("... workloads running.." becomes "... workloads running.")."""
    text = " ".join(text.split())
    return _DOUBLED_STOP.sub(".", text) if "." in text and (".." in text or ":." in text or ";." in text
                                                            or ",." in text) else text


class _TableStep:
    """The items of one object that a `table:` step gathers into one step: a row each, and each
    command's scripts joined (lines every item shares at the start or end are written once)."""

    def __init__(self, step: Step):
        self.step = step
        self.others: list[Step] = []

    def add(self, step: Step) -> None:
        self.others.append(step)

    def finish(self) -> None:
        if not self.others:
            return
        step, every = self.step, [self.step, *self.others]
        if step.table is not None:
            for other in self.others:
                step.table[1].extend(other.table[1] if other.table is not None else [])
        for other in self.others:
            for mine, theirs in ((step.unresolved, other.unresolved), (step.not_stated, other.not_stated)):
                mine += [name for name in theirs if name not in mine]
            for text, src in other.sources.items():
                step.sources.setdefault(text, src)
            for name, v in other.values.items():
                step.values.setdefault(name, v)
        by_kind: dict[tuple, list[Command]] = {}
        for s in every:
            for c in s.automation:
                by_kind.setdefault((c.shell, c.platform, c.target, c.note, c.invoke), []).append(c)
        step.automation = [
            Command(first.shell, _join_scripts([c.script for c in cmds]),
                    _join_scripts([c.verify for c in cmds if c.verify]) or None, first.platform, first.note,
                    first.target, first.invoke, None if len(cmds) > 1 else first.ansible)
            for cmds in by_kind.values() for first in [cmds[0]]]
        step.manual = not step.automation
        if step.automation:
            step.manual_reason = ""


def _join_scripts(scripts: list[str]) -> str:
    """One script from several: the lines all of them begin (or end) with once, the rest in order."""
    if not scripts:
        return ""
    split = [s.split("\n") for s in scripts]
    head = 0
    while all(len(lines) > head for lines in split) and len({lines[head] for lines in split}) == 1:
        head += 1
    tail = 0
    while all(len(lines) - head > tail for lines in split) and \
            len({lines[len(lines) - 1 - tail] for lines in split}) == 1:
        tail += 1
    middle = [line for lines in split for line in lines[head:len(lines) - tail]]
    out = split[0][:head] + middle + split[0][len(split[0]) - tail:]
    return "\n".join(out)


def _without_repeats(produced: list[tuple[tuple, Step, str]], once: set[str]) -> list[tuple[tuple, Step, str]]:
    """A step of a `once:` template that says and runs exactly what an earlier one does on the same
    machine is left out (two workloads of one tool on one VM install it once)."""
    if not once:
        return produced
    seen: set = set()
    out = []
    for entry in produced:
        step = entry[1]
        if step.target and entry[2] in once:
            key = (entry[2], step.target, step.text, tuple((c.shell, c.script, c.target) for c in step.automation))
            if key in seen:
                continue
            seen.add(key)
        out.append(entry)
    return out



def _summarize(bed: Bed, findings: list | None, meth: Methodology) -> None:
    """The validator's open errors and warnings, counted as the Validation panel counts them (accepted
    findings and notes left out), and apart from them the steps that lack values."""
    lines: list[str] = []
    validated = findings is None
    if findings is None:
        try:
            from topology.validation import validate
            findings = validate(bed)
        except Exception as exc:  # a bed the validator cannot check still gets its procedure
            meth.validation_failed = (f"The bed could not be validated ({type(exc).__name__}: {exc}); "
                                      "check it before use.")
            findings = []
    for f in findings:
        if getattr(f, "accepted", False) or f.severity not in ("error", "warning"):
            continue
        if f.severity == "error":
            meth.errors += 1
        else:
            meth.warnings += 1
        subjects = ", ".join(f.subjects)
        said = getattr(f, "holds_in", "") or (f"scenario {f.scenario}" if getattr(f, "scenario", None) else "")
        where = f"In {said}: " if said and said != "the reference configuration" else ""
        lines.append(f"{f.severity.upper()} {f.code}: {where}{f.message}" + (f" ({subjects})" if subjects else ""))
    meth.findings_summary = lines
    if validated:       # 25,000 findings on a big bed (topology.letting_go says why)
        scraps, f = [findings], None
        del findings
        let_go(scraps)
    incomplete = [s for s in meth.steps() if s.unresolved]
    if incomplete:
        names = sorted({n for s in incomplete for n in s.unresolved})
        meth.incomplete_note = (f"{len(incomplete)} step(s) need values the bed does not give ({', '.join(names[:8])}"
                                f"{', …' if len(names) > 8 else ''}); they are marked «missing: …» and are not run "
                                "automatically.")
