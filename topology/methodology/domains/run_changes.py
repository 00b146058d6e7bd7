"""The run section's transitions: the configuration a procedure's runs are for, and what changes
from one phase of the test to the next (`topology.methodology.run_timeline`): the VMs under load
that stop and start, the parts the scenario takes out of service or gives back, and the checks
that the bed reached the phase.

A part's step is made for the machine that can act on it: a switch port (or the switch port an
array port is cabled to) on its switch, where a switch family's template has a command; the rest
is done by hand with every value named (which port, which controller, its WWPN, its cable)."""
from __future__ import annotations

import dataclasses
from typing import Any

from topology.ids import SEP
from topology.methodology.context import BedContext, platform_of
from topology.methodology.domains.hosts import HOST_NAMES, host_values
from topology.methodology.domains.registry import Item, domain
from topology.methodology.domains.run import (
    BLOCK_NAMES,
    block_values,
    blocks,
    loads_text,
    part_count,
    phase_values,
    runs_per_phase,
    timeline_item,
)
from topology.methodology.domains.switches import SWITCH_NAMES, _switch_values
from topology.methodology.run_timeline import Phase, component_kind
from topology.methodology.values import Values, as_number, as_text, as_token, field_names, put
from topology.placement import Placement
from topology.workload_time import spoken_duration

CONFIGURATION_NAMES = field_names("configuration", "name", "number", "count", "description", "previous", "changes")


@domain("run_configuration", CONFIGURATION_NAMES,
        "the configuration the runs are for, when the bed compares several (once, before the first phase)")
def _configuration(ctx: BedContext) -> list[Item]:
    cfg = ctx.configuration
    if cfg is None or not ctx.phases:
        return []
    vals: Values = {}
    put(vals, "configuration.name", as_text(cfg.name, f"configurations.{cfg.name}"))
    put(vals, "configuration.number", as_number(cfg.number))
    put(vals, "configuration.count", as_number(cfg.count))
    put(vals, "configuration.description", as_text(cfg.description, f"configurations.{cfg.name}.description"))
    put(vals, "configuration.previous", as_text(cfg.previous, "configurations"))
    put(vals, "configuration.changes", as_text("; ".join(cfg.changes), f"configurations.{cfg.name}.set"))
    first = ctx.phases[0]
    item = timeline_item(ctx, vals, "", "", first, len(ctx.phases), None, -1, 0)
    item.group = (-1, 0, 0)
    item.heading = f"Configuration {cfg.name} ({cfg.number} of {cfg.count})"
    return [item]


CHANGE_NAMES = HOST_NAMES | BLOCK_NAMES | field_names("vm", "id", "action", "host") | field_names(
    "part", "ref", "action", "kind", "what", "device", "name", "switch", "switch_port", "how", "minutes", "after",
    "loads", "disable_text", "enable_text")


def _placement(ctx: BedContext) -> Placement:
    hit = getattr(ctx, "_run_placement", None)
    if hit is None:
        hit = Placement(ctx.bed, ctx.idx)
        ctx._run_placement = hit      # type: ignore[attr-defined]
    return hit


@domain("vm_change", CHANGE_NAMES,
        "each VM under load that stops (vm.action stop) or starts (start) where a phase begins, on its host")
def _vm_changes(ctx: BedContext) -> list[Item]:
    out = []
    count = len(ctx.phases)
    for p in ctx.phases:
        place = _placement(ctx).of(p.scenario)
        for action, vms in (("stop", p.transition.stop_vms), ("start", p.transition.start_vms)):
            for k, vm in enumerate(vms):
                host = place.get(vm) or (ctx.idx.vms[vm].host if vm in ctx.idx.vms else "")
                comp = ctx.idx.servers.get(host)
                vals = host_values(ctx, comp) if comp is not None else {}
                vals.update(phase_values(ctx, p, count))
                put(vals, "vm.id", as_text(vm, f"{vm}.id"))
                put(vals, "vm.action", as_token(action))
                put(vals, "vm.host", as_text(host, f"{vm}.host"))
                out.append(timeline_item(ctx, vals, host, platform_of(comp), p, count, None, 0,
                                         (0 if action == "stop" else 500) + k))
    return out


def _facing_switch_port(ctx: BedContext, ref: str) -> tuple[Any, str] | None:
    """The switch and its port an array or server port is cabled to, when the drawing says."""
    for lk in ctx.bed.links:
        for mine, other in ((lk.a, lk.b), (lk.b, lk.a)):
            if mine == ref:
                device, _, port = other.partition(SEP)
                switch = next((s for s in ctx.bed.switches if s.id == device), None)
                if switch is not None and port:
                    return switch, port
    return None


def _what(ctx: BedContext, ref: str, kind: str) -> str:
    """A part as a person finds it: 'host port A3 of ds5020 controller A, WWPN 20:..."""
    device, _, rest = ref.partition(SEP)
    if kind == "array_port":
        array = next(a for a in ctx.bed.arrays if a.id == device)
        ctl, port = next((c, p) for c in array.controllers for p in c.ports if p.name == rest)
        extra = [f"WWPN {port.wwpn}" if port.wwpn else "", f"address {port.address}" if port.address else "",
                 port.label]
        detail = ", ".join(x for x in extra if x)
        return f"host port {rest} of {device} controller {ctl.name}" + (f" ({detail})" if detail else "")
    if kind == "port":
        pr = ctx.idx.port(ref)
        found: Any = pr.port if pr is not None else None
        extra = [getattr(found, "label", ""), f"WWPN {found.wwpn}" if found is not None and found.wwpn else "",
                 f"address {found.address}" if found is not None and found.address else ""]
        detail = ", ".join(x for x in extra if x)
        return f"port {rest} of {device}" + (f" ({detail})" if detail else "")
    if kind == "switch_port":
        return f"port {rest} of switch {device}"
    if kind == "controller":
        return f"controller {rest} of {device}"
    if kind == "drive":
        enclosure, _, slot = rest.partition(SEP)
        return f"the drive in slot {slot} of enclosure {enclosure} of {device}"
    return {"host": "host", "switch": "switch", "array": "array", "chassis": "chassis",
            "vm": "VM"}.get(kind, "component") + f" {ref}"


@domain("part_change", CHANGE_NAMES | SWITCH_NAMES,
        "each part a phase takes out of service (part.action disable) or gives back (enable): on the switch "
        "for a switch port or a cabled array port, else by hand; in a failover under load, in each run: "
        "fail_under_load and restore_under_load part.minutes after the loads start, or restore_after_load")
def _part_changes(ctx: BedContext) -> list[Item]:
    out = []
    count = len(ctx.phases)
    for p in ctx.phases:
        how = str(p.scenario.settings.get("how", "")) if p.scenario is not None else ""
        for action, parts, base in (("disable", p.transition.fail, 100), ("enable", p.transition.restore, 300)):
            for k, ref in enumerate(parts):
                out.append(_part_item(ctx, p, count, action, str(ref), how, base + k))
    for p, n, rep in blocks(ctx):
        if p.under_load is not None:
            out += _under_load_items(ctx, p, n, rep)
    last = ctx.phases[-1] if ctx.phases else None
    if last is not None and last.out_after_runs:
        # the test ends with every part back in service: the lab is left as the bed draws it
        for k, ref in enumerate(last.out_after_runs):
            out.append(_after_the_test(ctx, _part_item(ctx, last, count, "enable", str(ref), "", 300 + k), last))
    return out


def _under_load_items(ctx: BedContext, p: Phase, count: int, rep: int) -> list[Item]:
    """A run of a failover under load: the parts go out while its loads run and come back at the stated
    minute, else once the loads have ended (the next run starts as this one did)."""
    assert p.under_load is not None and p.scenario is not None
    fail, back = p.under_load
    how = str(p.scenario.settings.get("how", ""))
    src = f"scenarios.{p.scenario.id}"
    steps: list[tuple[str, float | None, str, int]] = [("fail_under_load", fail, f"{src}.fail_after_minutes", 0)]
    steps.append(("restore_under_load", back, f"{src}.restore_after_minutes", 0) if back is not None else
                 ("restore_after_load", None, "", part_count(p) - 1))
    out = []
    for action, minutes, msrc, part in steps:
        for k, ref in enumerate(p.failed):
            item = _part_item(ctx, p, count, action, str(ref), how if action == "fail_under_load" else "", k)
            if minutes is not None:
                put(item.values, "part.minutes", as_number(minutes, msrc))
                put(item.values, "part.after", as_text(spoken_duration(minutes), msrc))
            put(item.values, "part.loads", as_text(loads_text(ctx, p, p.groups[0].workloads) if p.groups else "",
                                                   "workloads"))
            item.values.update(block_values(ctx, p, count, rep))
            out.append(_in_run(ctx, item, p, count, rep, part))
    return out


def _in_run(ctx: BedContext, item: Item, p: Phase, count: int, rep: int, part: int) -> Item:
    """An item of a phase's set-up moved into one of its runs (its part: 0, the first group of loads)."""
    return timeline_item(ctx, item.values, item.target, item.platform, p, count, rep, part, item.sub)


def _after_the_test(ctx: BedContext, item: Item, last: Phase) -> Item:
    """An item moved after the last phase's score: the parts its scenario took out, given back."""
    item.group = (last.index, runs_per_phase(ctx), part_count(last) + 2)
    item.heading = "After the last phase: every part back in service"
    return item


def _part_item(ctx: BedContext, p: Phase, count: int, action: str, ref: str, how: str, sub: int) -> Item:
    kind = component_kind(ctx.idx, ref)
    device, _, name = ref.partition(SEP)
    vals: Values = phase_values(ctx, p, count)
    put(vals, "part.ref", as_text(ref, f"scenarios.{p.scenario.id}.failed" if p.scenario else ""))
    put(vals, "part.action", as_token(action))
    put(vals, "part.kind", as_token(kind or "component"))
    put(vals, "part.what", as_text(_what(ctx, ref, kind)))
    put(vals, "part.device", as_text(device))
    put(vals, "part.name", as_text(name or device))
    put(vals, "part.how", as_text(how))
    target, platform = "", ""
    facing = (_facing_switch_port(ctx, ref) if kind in ("array_port", "port") else
              (next(s for s in ctx.bed.switches if s.id == device), name) if kind == "switch_port" else None)
    if facing is not None:
        switch, port = facing
        vals.update(_switch_values(ctx, switch))
        put(vals, "part.switch", as_text(switch.id, f"{switch.id}.id"))
        put(vals, "part.switch_port", as_token(port, "links"))
        # a host or array port goes out through the switch port it is cabled to; a switch port is the part
        for verb in ("disable", "enable"):
            put(vals, f"part.{verb}_text", as_text(f"{verb} it on {switch.id}" if kind == "switch_port" else
                                                   f"{verb} port {port} of {switch.id}, which it is cabled to",
                                                   "links"))
        target, platform = switch.id, "switch"
    elif kind == "host":
        vals.update(host_values(ctx, ctx.idx.servers[ref]))
    return timeline_item(ctx, vals, target, platform, p, count, None, 0, sub)


CHECK_NAMES = BLOCK_NAMES | field_names("check", "text", "host", "paths", "paths_before", "array", "setup",
                                        "restored_host", "restored_paths", "under_load", "under_load_host",
                                        "back_under_load_host", "back_after_load_host", "made_under_load")


@domain("transition_check", CHECK_NAMES,
        "each check that a phase's set-up took effect: the scenario's own checks, then the storage paths "
        "each host keeps to each array where the phase takes parts out of service")
def _checks(ctx: BedContext) -> list[Item]:
    out = []
    count = len(ctx.phases)
    for p in ctx.phases:
        t = p.transition
        if t.setup:
            vals = phase_values(ctx, p, count)
            put(vals, "check.setup", as_text(t.setup.rstrip("."), f"scenarios.{p.scenario.id}.description"
                                             if p.scenario else ""))
            out.append(timeline_item(ctx, vals, "", "", p, count, None, 0, -1))
        k = 0
        for k, text in enumerate(t.checks):
            vals = phase_values(ctx, p, count)
            put(vals, "check.text", as_text(text.strip().rstrip("."), f"scenarios.{p.scenario.id}.checks[{k}]"
                                            if p.scenario else ""))
            out.append(timeline_item(ctx, vals, "", "", p, count, None, 0, 700 + k))
        if t.fail or t.restore:
            for j, (host, array, now, before) in enumerate(_path_counts(ctx, p)):
                out.append(_path_check(ctx, p, count, host, array, now, before, 800 + j))
        if t.fail and t.restore:
            # between giving parts back and taking others out: the paths the given-back parts carry are up again
            # (multipath reinstates a path at its next check), else the next step takes the last path away
            kept = [c for c in p.failed if c not in t.fail]
            for j, (host, array, now, _before) in enumerate(_path_counts(ctx, p, kept)):
                vals = phase_values(ctx, p, count)
                put(vals, "check.restored_host", as_text(host))
                put(vals, "check.array", as_text(array))
                put(vals, "check.restored_paths", as_number(now))
                comp = ctx.idx.servers.get(host)
                vals.update(host_values(ctx, comp) if comp is not None else {})
                out.append(timeline_item(ctx, vals, host, platform_of(comp), p, count, None, 0, 600 + j))
    for p, n, rep in blocks(ctx):
        if p.under_load is not None:
            out += _under_load_checks(ctx, p, n, rep)
    last = ctx.phases[-1] if ctx.phases else None
    if last is not None and last.out_after_runs:
        for j, (host, array, _now, before) in enumerate(_path_counts(ctx, last)):
            out.append(_after_the_test(ctx, _path_check(ctx, last, count, host, array, before, before, 800 + j), last))
    return out


def _under_load_checks(ctx: BedContext, p: Phase, count: int, rep: int) -> list[Item]:
    """While the parts are out under load: the scenario's own checks, and the paths each host keeps."""
    assert p.scenario is not None
    out = []
    for k, text in enumerate(str(c) for c in p.scenario.checks):
        vals = phase_values(ctx, p, count)
        put(vals, "check.under_load", as_text(text.strip().rstrip("."), f"scenarios.{p.scenario.id}.checks[{k}]"))
        vals.update(block_values(ctx, p, count, rep))
        out.append(timeline_item(ctx, vals, "", "", p, count, rep, 0, 700 + k))
    degraded = _path_counts(ctx, p)
    for j, (host, array, now, before) in enumerate(degraded):
        item = _path_check(ctx, p, count, host, array, now, before, 800 + j, "check.under_load_host")
        item.values.update(block_values(ctx, p, count, rep))
        out.append(_in_run(ctx, item, p, count, rep, 0))
    # the parts back: their paths up again (under load, or before the next run starts)
    key, part = (("check.back_under_load_host", 0) if p.under_load is not None and p.under_load[1] is not None
                 else ("check.back_after_load_host", part_count(p) - 1))
    for j, (host, array, _now, before) in enumerate(degraded):
        item = _path_check(ctx, p, count, host, array, before, before, 900 + j, key)
        item.values.update(block_values(ctx, p, count, rep))
        out.append(_in_run(ctx, item, p, count, rep, part))
    # the checks above are made while the loads run, and a run step waits for its loads to end: what they
    # showed is confirmed once the loads have ended, so the run's record says it when it was known (ticked
    # off before the loads started, it recorded checks of paths no failure had touched yet)
    made = [str(c).strip().rstrip(".") for c in p.scenario.checks]
    hosts = list(dict.fromkeys(host for host, *_ in degraded))
    if hosts:
        made.append(f"the paths {_names(hosts)} kept with the parts out of service"
                    + (" and had again once they were back" if key == "check.back_under_load_host" else ""))
    if made:
        vals = phase_values(ctx, p, count)
        put(vals, "check.made_under_load", as_text("; ".join(made), f"scenarios.{p.scenario.id}.checks"))
        vals.update(block_values(ctx, p, count, rep))
        out.append(timeline_item(ctx, vals, "", "", p, count, rep, part_count(p) - 1, 990))
    return out


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _path_check(ctx: BedContext, p: Phase, count: int, host: str, array: str, now: int, before: int,
                sub: int, host_key: str = "check.host") -> Item:
    vals = phase_values(ctx, p, count)
    put(vals, host_key, as_text(host))
    put(vals, "check.array", as_text(array))
    put(vals, "check.paths", as_number(now))
    put(vals, "check.paths_before", as_number(before))
    comp = ctx.idx.servers.get(host)
    vals.update(host_values(ctx, comp) if comp is not None else {})
    return timeline_item(ctx, vals, host, platform_of(comp), p, count, None, 0, sub)


def _path_counts(ctx: BedContext, p: Phase, failed: list[str] | None = None) -> list[tuple[str, str, int, int]]:
    """(host, array, paths in this phase, paths with every part in service) where they differ; with `failed`,
    the paths while only those parts are out of service (every host and array, equal or not)."""
    from topology.derived_paths import PathDerivation
    from topology.index import BedIndex
    from topology.scenario_view import scenario_view
    if p.scenario is None:
        return []
    try:
        before = PathDerivation(ctx.idx).paths
        scenario = p.scenario if failed is None else dataclasses.replace(p.scenario, failed=list(failed))
        view = scenario_view(ctx.bed, scenario, ctx.idx)
        now = PathDerivation(BedIndex(view), drawn=ctx.bed).paths
    except Exception:       # a bed the derivation cannot read: the validator says why; no check is made up
        return []

    def counts(paths) -> dict[tuple[str, str], int]:
        out: dict[tuple[str, str], int] = {}
        for sp in paths:
            key = (sp.host, sp.spec.target.partition(SEP)[0])
            out[key] = out.get(key, 0) + 1
        return out
    a, b = counts(before), counts(now)
    down = p.failed if failed is None else failed
    return [(host, array, b.get((host, array), 0), n) for (host, array), n in a.items()
            if (failed is not None or b.get((host, array), 0) != n) and host not in down]
