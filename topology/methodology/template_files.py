"""Template files: `<platform>/<section>.yaml` read into step templates, checked against the domains.

A file says which section it fills, optionally a `match:` (the items it is for), `derive:` maps
(new values from existing ones) and its steps, each with a `foreach` domain, a `when:`, its text and
its automation.  Every problem is a `TemplateError` naming the file and line.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from topology import quoting
from topology.methodology.ansible_block import AnsibleTemplate, parse_ansible_block
from topology.methodology.domains import DOMAINS, WILDCARDS, Domain
from topology.methodology.guards import check_guard, destructive_keys
from topology.methodology.located_yaml import LocatedDict, LocatedList, read_located_yaml
from topology.methodology.selection import Families, PlatformCondition, families_file, parse_platform, parse_transport
from topology.methodology.steps import SECTION_KEYS
from topology.methodology.template_syntax import Template, parse_template, template_error

PLATFORMS = ("common", "windows", "linux", "esxi", "array", "switch")
TEMPLATES_DIR = Path(__file__).resolve().parent.parent.parent / "resources" / "templates"

@dataclass
class Derive:
    name: str
    source: str
    rules: list[tuple[re.Pattern, str]]
    default: str | None
    # source text -> the output of the first rule that matches it (else the default): few texts repeat
    outputs: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)

    def output(self, text: str) -> str | None:
        if text in self.outputs:
            return self.outputs[text]
        hit = next((out for pat, out in self.rules if pat.search(text)), None)
        if hit is None:
            hit = self.default
        if len(self.outputs) >= 4096:   # templates live as long as the application
            self.outputs.clear()
        self.outputs[text] = hit
        return hit


@dataclass(frozen=True)
class Selector:
    """Whom a file, step or command is for: a platform condition and the transports it needs."""
    platform: PlatformCondition | None = None
    transports: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return self.platform is not None or bool(self.transports)


@dataclass
class TableTemplate:
    """A step with a table: the items of one object become one step, each item a row."""
    header: list[str]
    row: list[Template]


@dataclass
class CommandTemplate:
    shell: str
    script: Template
    verify: Template | None
    platform: str
    note: str
    when: list[tuple[str, re.Pattern]]
    invoke: Template | None = None
    ansible: AnsibleTemplate | None = None    # the Ansible module that does the same (the export)
    selector: Selector = Selector()
    guard: str = ""              # the guard library run before the script (`topology.methodology.guards`)


@dataclass
class StepTemplate:
    id: str
    domain: str
    text: Template
    when: list[tuple[str, re.Pattern]]
    commands: list[CommandTemplate]
    file: TemplateFile
    order: int = 0
    selector: Selector = Selector()
    table: TableTemplate | None = None
    once: bool = False           # a repeat of the same step on the same machine is left out
    destructive: bool = False    # writes to a block device: guarded, confirmed, never from an assumed value
    device: Template | None = None   # destructive steps: the words that name the disk (run --dry-run lists them)
    # a step that writes only for some items (a load with writes in its mix): destructive where these match
    writes_when: list[tuple[str, re.Pattern]] = field(default_factory=list)


@dataclass
class TemplateFile:
    path: Path
    rel: str                     # "windows/network.yaml"
    platform: str
    section: str
    title: str
    match: list[tuple[str, re.Pattern]]
    derives: dict[str, Derive]
    steps: list[StepTemplate]
    rank: int = 0                # later directories win
    selector: Selector = Selector()


_STEP_KEYS = {"id", "foreach", "when", "text", "automation", "note", "platform", "transport", "table", "once",
              "destructive", "device", "writes_when"}
_COMMAND_KEYS = {"shell", "script", "verify", "platform", "note", "when", "invoke", "ansible", "transport", "guard"}
_FILE_KEYS = {"section", "title", "match", "derive", "steps", "description", "platform", "transport"}


def _selector(path: Path, d: LocatedDict, where: str, directory: str, label_ok: bool = False) -> Selector:
    """The `platform:` and `transport:` of a file, step or command (a command's `platform:` may
    instead be a plain word: the label its command is shown with, as before)."""
    platform = None
    raw = d.get("platform")
    if raw is not None and not (label_ok and isinstance(raw, str)):
        platform = parse_platform(path, raw, d.key_line.get("platform", d.line), where, directory)
    transports = parse_transport(path, d.get("transport"), d.key_line.get("transport", d.line), where)
    return Selector(platform, transports)


def _table(path: Path, d: LocatedDict, where: str, check: Callable[[Template], None]) -> TableTemplate | None:
    raw = d.get("table")
    if raw is None:
        return None
    line = d.key_line.get("table", d.line)
    if not isinstance(raw, dict) or not isinstance(raw.get("row"), list) or not raw["row"]:
        raise template_error(path, line, f"{where}: `table` needs `row:` (a list of cells) and may have `header:`",
                             "e.g. table: {header: [Setting, Value], row: ['{bios.label}', '{bios.value_text}']}")
    header = [str(h) for h in raw.get("header") or []]
    if header and len(header) != len(raw["row"]):
        raise template_error(path, line, f"{where}: the table has {len(header)} headers and {len(raw['row'])} cells")
    cells = []
    for cell in raw["row"]:
        tpl = parse_template(str(cell), line, where, path, command=False)
        check(tpl)
        cells.append(tpl)
    return TableTemplate(header, cells)


def _conditions(path: Path, d: LocatedDict, key: str, known: Callable[[str], bool], where: str
                ) -> list[tuple[str, re.Pattern]]:
    raw = d.get(key)
    if raw is None:
        return []
    line = d.key_line.get(key, d.line)
    if not isinstance(raw, dict):
        raise template_error(path, line, f"{where}: `{key}` must map value names to patterns",
                              "e.g. when: {port.roles: iscsi}")
    out = []
    for name, pattern in raw.items():
        ln = raw.key_line.get(name, line) if isinstance(raw, LocatedDict) else line
        if not known(name):
            raise template_error(path, ln, f"{where}: `{key}` uses unknown value {name!r}")
        try:
            out.append((name, re.compile(str(pattern), re.I)))
        except re.error as exc:
            raise template_error(path, ln, f"{where}: pattern {pattern!r} for {name} is not a valid "
                                            f"regular expression ({exc})") from None
    return out


def _known(domain: Domain, derived: set[str]) -> Callable[[str], bool]:
    heads = {n.split(".", 1)[0] + "." for n in domain.names}

    def check(name: str) -> bool:
        if name in domain.names or name in derived:
            return True
        return any(name.startswith(w) and len(name) > len(w) and w.split(".", 1)[0] + "." in heads
                   for w in WILDCARDS)
    return check


def _load_file(path: Path, rel: str, platform: str) -> TemplateFile:
    data = read_located_yaml(path)
    if not isinstance(data, LocatedDict):
        raise template_error(path, getattr(data, "line", 1), "a template is a mapping with `section:` and `steps:`")
    for key in data:
        if key not in _FILE_KEYS:
            raise template_error(path, data.key_line[key], f"unknown key {key!r}",
                                  f"a template file has: {', '.join(sorted(_FILE_KEYS))}")
    section = data.get("section")
    if section not in SECTION_KEYS:
        raise template_error(path, data.key_line.get("section", data.line),
                              f"`section` must be one of {', '.join(SECTION_KEYS)}"
                              + (f" (found {section!r})" if section is not None else " (it is missing)"))
    steps_raw = data.get("steps")
    if not isinstance(steps_raw, list):
        raise template_error(path, data.key_line.get("steps", data.line), "`steps` must be a list of steps")
    derives: dict[str, Derive] = {}
    raw_derive = data.get("derive") or {}
    if not isinstance(raw_derive, dict):
        raise template_error(path, data.key_line.get("derive", data.line), "`derive` must be a mapping")
    for name, spec in raw_derive.items():
        ln = raw_derive.key_line.get(name, data.line) if isinstance(raw_derive, LocatedDict) else data.line
        if not isinstance(spec, dict) or "from" not in spec or not isinstance(spec.get("map"), dict):
            raise template_error(path, ln, f"derive {name!r} needs `from:` and `map:`",
                                  "e.g. derive: {group.smcli_raid: {from: group.raid, map: {raid10: '1'}}}")
        if "." not in name or any(name in d.names for d in DOMAINS.values()):
            raise template_error(path, ln, f"derive {name!r} must be a new dotted name",
                                  "pick a name the generator does not already give, e.g. group.smcli_raid")
        rules = []
        for pat, value in spec["map"].items():
            try:
                rules.append((re.compile(str(pat), re.I), str(value)))
            except re.error as exc:
                raise template_error(path, ln, f"derive {name!r}: pattern {pat!r} is not valid ({exc})") from None
        default = spec.get("default")
        derives[name] = Derive(name, str(spec["from"]), rules, None if default is None else str(default))
    match: list[tuple[str, re.Pattern]] = []
    tf = TemplateFile(path, rel, platform, section, str(data.get("title") or ""), match, derives, [],
                      selector=_selector(path, data, "the file", platform))
    seen: set = set()
    for k, raw in enumerate(steps_raw):
        line = getattr(raw, "line", steps_raw.line if isinstance(steps_raw, LocatedList) else data.line)
        if not isinstance(raw, LocatedDict):
            raise template_error(path, line, f"step {k + 1} must be a mapping with id, foreach and text")
        for key in raw:
            if key not in _STEP_KEYS:
                raise template_error(path, raw.key_line[key], f"step {raw.get('id', k + 1)!r}: unknown key {key!r}",
                                      f"a step has: {', '.join(sorted(_STEP_KEYS))}")
        for key in ("id", "foreach", "text"):
            if not raw.get(key) or not isinstance(raw.get(key), str):
                raise template_error(path, raw.key_line.get(key, raw.line),
                                      f"step {raw.get('id', k + 1)!r}: `{key}` is missing or not text",
                                      "every step needs id, foreach and text")
        sid = raw["id"]
        where = f"step {sid!r}"
        if sid in seen:
            raise template_error(path, raw.key_line["id"], f"{where}: the id is used twice in this file")
        seen.add(sid)
        domain = DOMAINS.get(raw["foreach"])
        if domain is None:
            raise template_error(path, raw.key_line["foreach"], f"{where}: unknown foreach {raw['foreach']!r}",
                                  f"one of: {', '.join(sorted(DOMAINS))}")
        derived = {n for n, d in derives.items()}
        known = _known(domain, derived)
        text = parse_template(raw["text"], raw.key_line["text"], where, path, command=False)
        _check_names(path, text, known, where, domain, derives)
        when = _conditions(path, raw, "when", known, where)
        step_selector = _selector(path, raw, where, platform)
        def check_cell(tpl: Template, known: Callable[[str], bool] = known, where: str = where,
                       domain: Domain = domain) -> None:
            _check_names(path, tpl, known, where, domain, derives)
        table = _table(path, raw, where, check_cell)
        destructive, device = destructive_keys(path, raw, where)
        if device is not None:
            check_cell(device)
        writes_when = _conditions(path, raw, "writes_when", known, where)
        if writes_when and not destructive:
            raise template_error(path, raw.key_line["writes_when"], f"{where}: `writes_when` says when a "
                                 "destructive step writes", "add destructive: true and device:")
        commands = []
        autos = raw.get("automation") or []
        if not isinstance(autos, list):
            raise template_error(path, raw.key_line.get("automation", raw.line),
                                 f"{where}: `automation` must be a list")
        for c in autos:
            cl = getattr(c, "line", raw.line)
            if not isinstance(c, LocatedDict):
                raise template_error(path, cl, f"{where}: each automation entry is a mapping with shell and script")
            for key in c:
                if key not in _COMMAND_KEYS:
                    raise template_error(path, c.key_line[key], f"{where}: unknown automation key {key!r}",
                                          f"an automation entry has: {', '.join(sorted(_COMMAND_KEYS))}")
            shell = c.get("shell")
            if shell not in quoting.SHELLS:
                raise template_error(path, c.key_line.get("shell", cl),
                                      f"{where}: shell must be one of {', '.join(quoting.SHELLS)}")
            if not isinstance(c.get("script"), str) or not c["script"].strip():
                raise template_error(path, c.key_line.get("script", cl), f"{where}: automation needs a `script`")
            script = parse_template(c["script"].rstrip("\n"), c.key_line["script"], where, path, command=True)
            _check_names(path, script, known, where, domain, derives)
            verify = None
            if c.get("verify"):
                verify = parse_template(str(c["verify"]).rstrip("\n"), c.key_line["verify"], where, path, command=True)
                _check_names(path, verify, known, where, domain, derives)
            cwhen = _conditions(path, c, "when", known, where)
            invoke = None
            if c.get("invoke"):
                if shell != "vendor-cli":
                    raise template_error(path, c.key_line["invoke"],
                                         f"{where}: `invoke` is for vendor-cli commands only")
                # a bash command line: its values are quoted for bash, the statements stay in their file
                invoke = parse_template(str(c["invoke"]).strip(), c.key_line["invoke"], where, path, command=True)
                _check_names(path, invoke, known, where, domain, derives)
            ansible = None
            if c.get("ansible") is not None:
                ansible = parse_ansible_block(c["ansible"], c.key_line["ansible"], where, path)
                for tpl in ansible.templates():
                    _check_names(path, tpl, known, where, domain, derives)
            label = c.get("platform") if isinstance(c.get("platform"), str) else ""
            # a step that writes only where `writes_when` matches may have commands for the other items without a
            # guard: such a command is never built where the step writes (generation._make_step)
            guard = check_guard(path, c.key_line.get("guard", cl), where, shell, c.get("guard"),
                                destructive and not writes_when)
            if guard and ansible is not None and ansible.module:
                # the export and the Ansible engine run the module instead of the script: no guard in front
                raise template_error(path, c.key_line["ansible"], f"{where}: a command with a guard runs its script; "
                                     "an `ansible: module:` would write to the disk without the guard",
                                     "leave the module out (an `ansible:` block with only `results:` may stay)")
            commands.append(CommandTemplate(shell, script, verify, str(label or
                                                                   ("array" if shell == "vendor-cli" else platform)),
                                            str(c.get("note") or "").strip(), cwhen, invoke, ansible,
                                            _selector(path, c, where, platform, label_ok=True), guard))
        tf.steps.append(StepTemplate(sid, domain.name, text, when, commands, tf, k, step_selector, table,
                                     str(raw.get("once")).lower() == "true", destructive, device, writes_when))
    # `match:` is checked against the names of the file's first domain (all steps of a vendor file share one)
    if "match" in data:
        if not tf.steps:
            raise template_error(path, data.key_line["match"], "`match` needs at least one step")
        dom = DOMAINS[tf.steps[0].domain]
        tf.match.extend(_conditions(path, data, "match", _known(dom, set(derives)), "match"))
    for d in derives.values():
        doms = {DOMAINS[s.domain] for s in tf.steps}
        if doms and not any(_known(dm, set(derives))(d.source) for dm in doms):
            raise template_error(path, data.key_line.get("derive", data.line),
                                  f"derive {d.name!r}: unknown source value {d.source!r}")
    return tf


def _check_names(path: Path, tpl: Template, known: Callable[[str], bool], where: str, domain: Domain,
                 derives: dict[str, Derive]) -> None:
    for name in tpl.names():
        if not known(name):
            close = sorted(n for n in domain.names if n.split(".")[0] == name.split(".")[0])[:12]
            raise template_error(
                path, tpl.line, f"{where}: unknown value {{{name}}} for foreach {domain.name!r}",
                f"known here: {', '.join(close) if close else ', '.join(sorted(domain.names)[:12])}")


_CACHE: dict[tuple[str, int, int], TemplateFile] = {}


def _cached_load(path: Path, rel: str, platform: str) -> TemplateFile:
    try:
        st = path.stat()
    except OSError as exc:
        raise template_error(path, None, f"cannot read the template: {exc}") from None
    key = (str(path), st.st_mtime_ns, st.st_size)
    tf = _CACHE.get(key)
    if tf is None:
        tf = _load_file(path, rel, platform)
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[key] = tf
    return tf


def clear_template_cache() -> None:
    """Forget every parsed file: the next load parses again, as a cold start does."""
    _CACHE.clear()
    _FAMILIES_CACHE.clear()


def load_templates(templates_dir: str | os.PathLike | None = None,
                   extra_dirs: Sequence[str | os.PathLike] = ()) -> list[TemplateFile]:
    """Every template file, built-in first; a file in a later directory with the same relative
    path replaces the earlier one.  Raises TemplateError for the first broken file."""
    dirs = [Path(templates_dir) if templates_dir is not None else TEMPLATES_DIR] + [Path(d) for d in extra_dirs]
    chosen: dict[str, tuple[int, Path]] = {}
    for rank, base in enumerate(dirs):
        if not base.is_dir():
            if rank == 0 and templates_dir is None:
                raise template_error(base, None, "the built-in template directory is missing")
            raise template_error(base, None, "template directory not found",
                                  "pass a directory holding <platform>/<section>.yaml files")
        for path in sorted(base.rglob("*.yaml")) + sorted(base.rglob("*.yml")):
            rel = path.relative_to(base).as_posix()
            if rel == "families.yaml":
                continue   # vendor families, read by load_families
            parts = rel.split("/")
            if len(parts) != 2 or parts[0] not in PLATFORMS:
                raise template_error(path, None, f"template {rel!r} is not under a platform directory",
                                      f"put it in one of: {', '.join(PLATFORMS)} (e.g. windows/network.yaml)")
            chosen[rel] = (rank, path)
    out = []
    for rel, (rank, path) in sorted(chosen.items()):
        tf = _cached_load(path, rel, rel.split("/")[0])
        tf.rank = rank
        out.append(tf)
    return out



_FAMILIES_CACHE: dict[tuple, Families] = {}


def load_families(templates_dir: str | os.PathLike | None = None,
                  extra_dirs: Sequence[str | os.PathLike] = ()) -> Families:
    """The vendor families of `families.yaml` in each template directory (a later directory's
    entries are tried first and replace the ones with the same id)."""
    dirs = [Path(templates_dir) if templates_dir is not None else TEMPLATES_DIR] + [Path(d) for d in extra_dirs]
    files = [f for f in (families_file(d) for d in dirs) if f is not None]
    key = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    hit = _FAMILIES_CACHE.get(key)
    if hit is None:
        hit = Families()
        for f in files:
            hit.add_file(f)
        _FAMILIES_CACHE.clear()
        _FAMILIES_CACHE[key] = hit
    return hit
