"""A configuration's view of a bed: the same hardware with the software settings one
configuration gives it (`configurations:` in the project file, `topology.configuration_spec`).

The view is a new `Bed`, built the way `topology.scenario_view` builds a scenario's: the
components a configuration leaves alone are the bed's own objects; a component it changes is
a copy (and so is each part on the way down to a changed port, volume or group).  The
configuration's excluded parts are taken out by the scenario view's own machinery, and its
access entries replace the bed's for their hosts.  Validation, the methodology and runs are
handed the view and need to know nothing else.

`check` is what the loader says about the section, each message on the line of the value it
is about: an entry that names no component, a field the component does not have, a value of
the wrong kind, a scenario or result naming a configuration that does not exist.
"""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from topology.configuration_spec import Configuration
from topology.field_plan import FieldPlan, plan
from topology.ids import COMPONENT_COLLECTIONS, parse_array_part
from topology.index import BedIndex
from topology.model import Bed, Scenario, StorageArray
from topology.unknown import NOT_STATED, accepts_not_stated

Found = list[tuple[tuple, str, str]]

# collections whose members a configuration may change (a scenario is not part of the bed's hardware)
_SETTABLE = tuple(attr for attr, _ in COMPONENT_COLLECTIONS if attr != "scenarios")
_REBUILT = (*_SETTABLE, "array_groups")     # and the parts of an array group (its volumes, access records)
# fields that say which thing a component is: they stay as drawn in every configuration
_IDENTITY = frozenset({"id", "name"})
# a matrix entry whose variable is this has configurations for levels
MATRIX_VARIABLE = "configuration"


class ConfigurationError(ValueError):
    """A configuration that cannot be applied (the loader reports these with their line)."""


@dataclass
class Target:
    """What one `set:` key names: the object, the component that holds it, its array (for
    references local to an array), and the words a message uses for it."""
    obj: Any
    owner: Any
    array: StorageArray | None
    what: str


def names(bed: Bed) -> list[str]:
    return [c.id for c in bed.configurations]


def find(bed: Bed, name: str) -> Configuration:
    """The configuration called `name`; KeyError naming the ones there are."""
    for c in bed.configurations:
        if c.id == name:
            return c
    raise KeyError(f"no configuration {name!r} in this bed (configurations: {', '.join(names(bed)) or 'none'})")


# ====================================================================== the view

def configured(bed: Bed, name: str, idx: BedIndex | None = None) -> Bed:
    """The bed as it stands in configuration `name` (see the module's docstring).  The view
    holds no configurations and keeps the scenarios that run in this configuration."""
    cfg = find(bed, name)
    idx = idx or BedIndex(bed)
    changes: dict[int, dict[str, Any]] = {}
    owners: set[int] = set()
    for ref, fields in cfg.overrides.items():
        target = resolve(bed, idx, ref)
        if target is None:
            raise ConfigurationError(f"configuration {name!r}: {ref!r} names nothing in the bed")
        changes[id(target.obj)] = typed_values(target.obj, fields, f"configuration {name!r}, {ref}")
        owners.add(id(target.owner))
    lists: dict[str, Any] = {attr: [_rebuilt(c, changes) if id(c) in owners else c for c in getattr(bed, attr)]
             for attr in _REBUILT}
    access = bed.access
    if cfg.access:
        own = {a.host for a in cfg.access}
        access = [a for a in bed.access if a.host not in own] + list(cfg.access)
    scenarios = [s for s in bed.scenarios if s.configuration in ("", name)]
    view = dataclasses.replace(bed, **lists, access=access, scenarios=scenarios, configurations=[])
    if cfg.excluded:
        from topology.scenario_view import scenario_view
        cut = scenario_view(view, Scenario(id=f"configuration {name}", excluded=list(cfg.excluded)))
        view = dataclasses.replace(cut, scenarios=scenarios)
    return view


def views(bed: Bed, wanted: Iterable[str] | None = None) -> Iterator[tuple[str, Bed]]:
    """(name, view) for each configuration of the bed (or the wanted ones), in file order."""
    idx = BedIndex(bed)
    keep = set(wanted) if wanted is not None else None
    for c in bed.configurations:
        if keep is None or c.id in keep:
            yield c.id, configured(bed, c.id, idx)


def _rebuilt(obj: Any, changes: dict[int, dict[str, Any]]) -> Any:
    """`obj` with its changed parts (and itself, when changed) replaced by changed copies."""
    replaced: dict[str, Any] = {}
    for fp in plan(type(obj)):
        if fp.kind == "list" and fp.inner[0] == "dc":
            items = getattr(obj, fp.attr)
            new = [_rebuilt(x, changes) for x in items]
            if any(a is not b for a, b in zip(new, items, strict=True)):
                replaced[fp.attr] = new
    own = changes.get(id(obj))
    if own is not None:
        replaced.update(own)
    return dataclasses.replace(obj, **replaced) if replaced else obj


def typed_values(obj: Any, fields: dict[str, Any], where: str) -> dict[str, Any]:
    """The attribute values a `set:` entry gives `obj`, built as the loader builds fields:
    a mapping merged into the one drawn (null takes a key out), null for any other field its
    empty default.  ConfigurationError when a value cannot be used."""
    from topology.fileformat import _Builder  # the loader imports this module's checks
    by_key = {fp.key: fp for fp in plan(type(obj))}
    out: dict[str, Any] = {}
    for key, raw in fields.items():
        fp = by_key.get(key)
        if fp is None or key in _IDENTITY:
            raise ConfigurationError(f"{where}: {key!r} cannot be set")
        if raw is None:
            out[fp.attr] = _default(fp)
            continue
        builder = _Builder()
        meta = field_meta(type(obj), fp)
        if fp.kind == "dict" and isinstance(raw, dict):
            merged = dict(getattr(obj, fp.attr))
            for k, v in raw.items():
                if v is None:
                    merged.pop(str(k), None)
                else:
                    merged[str(k)] = v
            value: Any = builder.value(fp.kind, fp.inner, merged, meta, (key,))
        elif fp.kind == "dc":
            value = builder.build(fp.inner, raw, (key,))
        elif raw is NOT_STATED:
            value = builder.not_stated(fp.kind, meta, (key,))
        else:
            value = builder.value(fp.kind, fp.inner, raw, meta, (key,))
        if builder.problems:
            raise ConfigurationError(f"{where}: {key}: {builder.problems[0][1]}")
        out[fp.attr] = value
    return out


def field_meta(cls: type, fp: FieldPlan) -> dict:
    """A field's metadata as the loader reads it: with whether it may be "not stated"."""
    return {**fp.meta, "not_stated": accepts_not_stated(cls, fp)}


def _default(fp: FieldPlan) -> Any:
    return type(fp.default)() if isinstance(fp.default, (list, dict)) else fp.default


def _is_part_list(fp: FieldPlan) -> bool:
    return fp.kind == "list" and fp.inner[0] == "dc"


# ====================================================================== naming a target

def resolve(bed: Bed, idx: BedIndex, ref: str) -> Target | None:
    """What a `set:` key names: a component, a port (DEVICE:PORT, a VM's vNIC), a volume,
    controller or enclosure (ARRAY:NAME), a disk group or pool (ARRAY:group|pool:NAME)."""
    comp = idx.components.get(ref)
    if comp is not None:
        if ref in idx.scenarios:
            return None
        if ref in idx.group_views:      # an array group that holds storage: the group's own fields
            group = idx.array_groups[ref]
            return Target(group, group, comp, "array group")
        return Target(comp, comp, comp if isinstance(comp, StorageArray) else None, idx.kind_of[ref])
    pr = idx.port(ref)
    if pr is not None:
        if pr.implicit:
            return None
        array = pr.device if isinstance(pr.device, StorageArray) else None
        return Target(pr.port, pr.device, array, "port" if not hasattr(pr.port, "vswitch") else "virtual NIC")
    array_id, _, rest = ref.partition(":")
    scope = idx.scopes.get(array_id)
    if scope is None or not rest:
        return None
    part = parse_array_part(rest)
    tables: list[tuple[dict[str, Any], str, str]]
    if part.kind == "group":
        tables = [(scope.groups, "disk group", part.name)]
    elif part.kind == "pool":
        tables = [(scope.pools, "pool", part.name)]
    else:
        tables = [(scope.volumes, "volume", rest), (scope.controllers, "controller", rest),
                  (scope.enclosures, "enclosure", rest)]
    owner = scope.group if scope.group is not None else scope.array    # a group's parts are the group's
    for table, what, key in tables:
        if key in table:
            return Target(table[key], owner, scope.array, what)
    return None


def _candidates(bed: Bed, idx: BedIndex) -> list[str]:
    out = [c.id for attr in _SETTABLE for c in getattr(bed, attr)]
    out += [r for r, pr in idx.ports.items() if not pr.implicit]
    out += list(idx.volumes)
    return out


# ====================================================================== the loader's checks

def check(bed: Bed) -> Found:
    """(path, message, hint) for everything wrong with the bed's configurations and the
    references to them; empty for a bed that uses none (and then nothing is built)."""
    named = {s.configuration for s in bed.scenarios} | {r.configuration for r in bed.results}
    if not bed.configurations and not (named - {""}) and \
            not any(m.variable == MATRIX_VARIABLE for m in bed.test_matrix):
        return []
    found: Found = []
    idx = BedIndex(bed)
    seen: dict[str, int] = {}
    for i, cfg in enumerate(bed.configurations):
        base = ("configurations", i)
        if cfg.id in seen:
            found.append((base + ("id",), f"a second configuration called {cfg.id!r}",
                          "give each configuration a name of its own"))
        seen.setdefault(cfg.id, i)
        entry_problems: Found = []
        for ref, fields in cfg.overrides.items():
            entry_problems += _check_entry(bed, idx, cfg, ref, fields, base + ("set", ref))
        found += entry_problems or _check_lists(bed, idx, cfg, base)
    known = list(seen)
    referring: tuple[tuple[str, list[Any]], ...] = (("scenarios", bed.scenarios), ("results", bed.results))
    for attr, items in referring:
        for i, item in enumerate(items):
            if item.configuration and item.configuration not in seen:
                found.append(((attr, i, "configuration"), _unknown(item.configuration, known),
                              _hint(item.configuration, known)))
    for i, entry in enumerate(bed.test_matrix):
        if entry.variable != MATRIX_VARIABLE:
            continue
        for j, level in enumerate(entry.levels):
            if str(level) not in seen:
                found.append((("test_matrix", i, "levels", j), _unknown(str(level), known),
                              "a matrix whose variable is 'configuration' has configurations for levels; "
                              + _hint(str(level), known)))
    return found


def _unknown(name: str, known: list[str]) -> str:
    return f"{name!r} is not a configuration of this bed"


def _hint(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, 1)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"configurations: {', '.join(known)}" if known else "add it under configurations:"


def _listed_part(idx: BedIndex, ref: str) -> str:
    """For COMPONENT:NAME where NAME is a part in one of the component's lists (a VM's disk): how to
    change it, which is to give that list in full; else ''."""
    owner_id, _, name = ref.partition(":")
    owner = idx.components.get(owner_id)
    if owner is None or not name:
        return ""
    for fp in plan(type(owner)):
        if _is_part_list(fp) and any(getattr(x, "name", None) == name for x in getattr(owner, fp.attr)):
            return (f"{name!r} is one of the {fp.key} of {owner_id}: give the {fp.key} in full under it "
                    f"({owner_id}: {{{fp.key}: [...]}})")
    return ""


def _check_entry(bed: Bed, idx: BedIndex, cfg: Configuration, ref: str, fields: Any, path: tuple) -> Found:
    target = resolve(bed, idx, ref)
    if target is None:
        close = difflib.get_close_matches(ref, _candidates(bed, idx), 1)
        in_list = _listed_part(idx, ref)
        return [(path, f"configuration {cfg.id!r} sets {ref!r}, which names no component, port, volume, "
                       "disk group or pool of the bed",
                 in_list or f"did you mean {close[0]!r}?" if in_list or close else
                 "name a component (SERVER, VM ...), DEVICE:PORT, ARRAY:VOLUME, ARRAY:group:NAME or ARRAY:pool:NAME")]
    if not isinstance(fields, dict):
        return [(path, f"the fields {ref!r} has in configuration {cfg.id!r} are not written as a mapping",
                 "write them as field: value under it")]
    from topology.fileformat import _Builder, resolves
    by_key = {fp.key: fp for fp in plan(type(target.obj))}
    found: Found = []
    for key, raw in fields.items():
        at = path + (key,)
        fp = by_key.get(str(key))
        if fp is None:
            close = difflib.get_close_matches(str(key), [k for k in by_key if k not in _IDENTITY], 1)
            found.append((at, f"a {target.what} has no field {key!r}",
                          f"did you mean {close[0]!r}?" if close else
                          f"its fields: {', '.join(k for k in by_key if k not in _IDENTITY)}"))
            continue
        if key in _IDENTITY:
            found.append((at, f"a configuration cannot change the {key} of {ref!r}: it names the same "
                              "hardware in every configuration", "leave the name as drawn"))
            continue
        if raw is None:
            continue
        builder = _Builder()
        if _is_part_list(fp):   # the list given in full replaces the drawn one (its references: _check_lists)
            items = builder.value(fp.kind, fp.inner, raw, field_meta(type(target.obj), fp), at)
            found += builder.problems
            found += _duplicates(items, at, str(key))
            continue
        if fp.kind == "dc":
            builder.build(fp.inner, raw, at)
            found += builder.problems
            continue
        if fp.kind == "dict" and isinstance(raw, dict):
            raw = {k: v for k, v in raw.items() if v is not None}
        meta = field_meta(type(target.obj), fp)
        value = builder.not_stated(fp.kind, meta, at) if raw is NOT_STATED else \
            builder.value(fp.kind, fp.inner, raw, meta, at)
        found += builder.problems
        ref_kind = fp.meta.get("ref")
        if ref_kind and not builder.problems and value is not NOT_STATED:
            for j, item in enumerate(value if isinstance(value, list) else [value]):
                if item and not resolves(idx, ref_kind, item, target.array):
                    found.append((at + ((j,) if isinstance(value, list) else ()),
                                  f"{item!r} does not name a {ref_kind.replace('_', ' ')} of the bed",
                                  "name one the bed has"))
    return found


def _duplicates(items: list[Any], at: tuple, key: str) -> Found:
    """A replaced list whose parts share a name (the index refuses the same in the drawn bed)."""
    found: Found = []
    seen: set[str] = set()
    for j, item in enumerate(items):
        name = getattr(item, "name", None)
        if isinstance(name, str) and name:
            if name in seen:
                found.append((at + (j, "name"), f"a second part called {name!r} in the {key} of this configuration",
                              "give each part a name of its own"))
            seen.add(name)
    return found


def _part_lists(bed: Bed, idx: BedIndex, cfg: Configuration) -> list[tuple[str, str]]:
    """(component, list key) of every list of parts a configuration gives in full."""
    out = []
    for ref, fields in cfg.overrides.items():
        target = resolve(bed, idx, ref) if isinstance(fields, dict) else None
        if target is None:
            continue
        lists = {fp.key for fp in plan(type(target.obj)) if _is_part_list(fp)}
        out += [(ref, str(key)) for key, raw in fields.items() if key in lists and raw is not None]
    return out


def _check_lists(bed: Bed, idx: BedIndex, cfg: Configuration, base: tuple) -> Found:
    """What the lists a configuration gives in full name, checked in the bed as it stands in that
    configuration (a mapping may name a volume the same configuration adds); and an entry that
    changes a part of a list another entry replaces (the replaced part would silently lose it)."""
    replaced = _part_lists(bed, idx, cfg)
    if not replaced:
        return []
    found: Found = []
    for ref, key in replaced:
        drawn = resolve(bed, idx, ref)
        assert drawn is not None
        inside = _parts_under(getattr(drawn.obj, next(fp.attr for fp in plan(type(drawn.obj)) if fp.key == key)))
        for other in cfg.overrides:
            hit = resolve(bed, idx, other) if other != ref else None
            if hit is not None and id(hit.obj) in inside:
                found.append((base + ("set", other), f"configuration {cfg.id!r} replaces the {key} of {ref!r} and "
                                                     f"also changes {other!r}, a part of the list it replaces",
                              f"write the part's fields in the {key} list under {ref}"))
    if found:
        return found
    from topology.fileformat import _REF_WORD
    from topology.references import _checker
    try:
        view = configured(bed, cfg.id, idx)
    except ConfigurationError:
        return []       # the entries' own checks have said what is wrong
    view_idx = BedIndex(view)
    for ref, key in replaced:
        target = resolve(view, view_idx, ref)
        if target is None:
            continue
        out: list = []
        attr = next(fp.attr for fp in plan(type(target.obj)) if fp.key == key)
        for j, item in enumerate(getattr(target.obj, attr)):
            _checker(type(item))(view_idx, item, base + ("set", ref, key, j), target.array, out)
        for path, value, kind, _array in out:
            found.append((path, f"{value!r} does not name a {_REF_WORD.get(kind, kind)} in configuration {cfg.id!r}",
                          "name one the bed has in this configuration"))
    return found


def _parts_under(items: list[Any]) -> set[int]:
    """The ids of the parts in a list and of every part inside them (a server's adapters and ports)."""
    out: set[int] = set()
    stack = list(items)
    while stack:
        obj = stack.pop()
        out.add(id(obj))
        for fp in plan(type(obj)):
            if _is_part_list(fp):
                stack.extend(getattr(obj, fp.attr))
    return out


# ====================================================================== differences

@dataclass
class Difference:
    """One setting that is not the same in every configuration: its value in each, in the
    order the file lists the configurations (None where the part is not in use)."""
    subject: str
    setting: str
    values: list[Any]


NOT_IN_USE = "not in use"


def _shown(value: Any) -> Any:
    """A list of parts as its parts' names ('data1, data2'; 'none' for an empty one); else the value."""
    if not isinstance(value, list) or not value or not dataclasses.is_dataclass(value[0]):
        return "none" if value == [] else value
    return ", ".join(_part_name(x) for x in value)


def _part_name(part: Any) -> str:
    name = getattr(part, "name", "")
    if name:
        return str(name)
    if hasattr(part, "volume") and hasattr(part, "to"):      # a mapping: the volume and whom it goes to
        lun = getattr(part, "lun", None)
        return f"{part.volume} to {part.to}" + (f" (LUN {lun})" if isinstance(lun, int) else "")
    return type(part).__name__.lower()


def differences(bed: Bed) -> list[Difference]:
    """What tells the bed's configurations apart, setting by setting: every field a
    configuration sets (a mapping field key by key), every part one of them takes out of use
    and every host one of them reaches another way; settings equal everywhere are left out."""
    if not bed.configurations:
        return []
    resolved = [(v, BedIndex(v)) for _, v in views(bed)]
    rows: dict[tuple[str, str, str], None] = {}
    for cfg in bed.configurations:
        for ref, fields in cfg.overrides.items():
            for key, raw in (fields.items() if isinstance(fields, dict) else ()):
                if isinstance(raw, dict):
                    rows.update(((ref, str(key), str(sub)), None) for sub in raw)
                else:
                    rows[(ref, str(key), "")] = None
    out: list[Difference] = []
    for ref, key, sub in rows:
        values = []
        for view, idx in resolved:
            target = resolve(view, idx, ref)
            fp = next((f for f in plan(type(target.obj)) if f.key == key), None) if target else None
            value = getattr(target.obj, fp.attr) if target is not None and fp is not None else NOT_IN_USE
            values.append(value.get(sub) if sub and isinstance(value, dict) else value)
        if any(v != values[0] for v in values):
            out.append(Difference(ref, f"{key}: {sub}" if sub else key, [_shown(v) for v in values]))
    excluded = dict.fromkeys(ref for cfg in bed.configurations for ref in cfg.excluded)
    for ref in excluded:
        out.append(Difference(ref, "in use", [ref not in cfg.excluded for cfg in bed.configurations]))
    hosts = dict.fromkeys(a.host for cfg in bed.configurations for a in cfg.access)
    for host in hosts:
        values = []
        for view, _ in resolved:
            entry = next((a for a in view.access if a.host == host), None)
            values.append(f"{entry.transport} {entry.user + '@' if entry.user else ''}{entry.address or host}"
                          if entry is not None else "")
        if any(v != values[0] for v in values):
            out.append(Difference(host, "reached over", values))
    return out


# ====================================================================== procedures

def procedures(bed: Bed, configuration: str | None = None, **generate_options: Any) -> list[tuple[str | None, Any]]:
    """(configuration, methodology) to print: the bed's own procedure when it has no
    configurations, else one per configuration (or the one asked for), each generated from
    that configuration's view and titled with its name.  KeyError for an unknown name."""
    from topology.methodology import generate
    if configuration is None and not bed.configurations:
        return [(None, generate(bed, **generate_options))]
    wanted = [configuration] if configuration is not None else None
    if configuration is not None:
        find(bed, configuration)
    from topology.methodology.run_timeline import ConfigurationRun
    out: list[tuple[str | None, Any]] = []
    order = names(bed)
    changed = differences(bed) if len(order) > 1 else []
    for name, view in views(bed, wanted):
        k = order.index(name)
        cfg = bed.configurations[k]
        previous = order[k - 1] if k else ""
        changes = [f"{d.subject} {d.setting}: {_said(d.values[k - 1])} -> {_said(d.values[k])}"
                   for d in changed if k and d.values[k] != d.values[k - 1]]
        run = ConfigurationRun(name, k + 1, len(order), cfg.description, previous, changes)
        meth = generate(view, configuration=run, **generate_options)
        meth.bed_name = f"{meth.bed_name} - configuration {name}"
        out.append((name, meth))
    return out


def _said(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    if value is True or value is False:
        return "in use" if value else "not in use"
    return str(value)
