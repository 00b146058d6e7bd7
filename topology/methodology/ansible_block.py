"""The optional `ansible:` block of an automation entry: the Ansible module that does the step.

Templates are data, so which module replaces a script is written beside the script:

    ansible:
      module: ansible.builtin.package      # a fully qualified module name
      args: {name: '{software.package}', state: present}
      become: true                         # optional: the module needs root
      creates: /etc/sssd/sssd.conf         # optional (command modules): what shows it is done
      results: ['{workload.report_file}']  # optional: files the step leaves, fetched to the controller

Without `module` (a block with only `results:`) the script runs and its files are fetched.

An argument is text with the bed's values (filled in as plain data, never quoted for a shell),
a list of such texts, a number, a boolean, or `{vault: NAME}`: a secret the Ansible user keeps
in a vault (`testbed_NAME`), never a value of the bed.  The export uses the module when the
block is there and every value it needs is known; otherwise it runs the script.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topology.methodology.located_yaml import LocatedDict
from topology.methodology.template_syntax import Template, parse_template, template_error

_MODULE = re.compile(r"^[a-z0-9_]+\.[a-z0-9_]+\.[a-z0-9_]+$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_COUNT = re.compile(r"^[1-9][0-9]*$")      # "0755" stays text: a file mode
_KEYS = {"module", "args", "become", "creates", "results"}


@dataclass(frozen=True)
class VaultRef:
    name: str


@dataclass
class AnsibleTemplate:
    module: str                   # "" = the script does the step
    args: dict[str, Any]          # Template | list[Template] | bool | int | VaultRef
    become: bool = False
    creates: Template | None = None
    results: list[Template] | None = None

    def templates(self) -> list[Template]:
        out = [self.creates] if self.creates is not None else []
        out += self.results or []
        for v in self.args.values():
            out.extend(t for t in (v if isinstance(v, list) else [v]) if isinstance(t, Template))
        return out


def parse_ansible_block(raw: Any, line: int, where: str, path: Path) -> AnsibleTemplate:
    if not isinstance(raw, LocatedDict):
        raise template_error(path, line, f"{where}: `ansible` must be a mapping with module and args")
    for key in raw:
        if key not in _KEYS:
            raise template_error(path, raw.key_line[key], f"{where}: unknown ansible key {key!r}",
                                 f"an ansible block has: {', '.join(sorted(_KEYS))}")
    module = raw.get("module")
    results = raw.get("results")
    if results is not None and (not isinstance(results, list) or not all(isinstance(r, str) for r in results)):
        raise template_error(path, raw.key_line["results"], f"{where}: `results` must be a list of file paths")
    if module is None and results:
        module = ""
    elif not isinstance(module, str) or not _MODULE.match(module):
        raise template_error(path, raw.key_line.get("module", line),
                             f"{where}: `module` must be a fully qualified module name",
                             "for example ansible.builtin.package or ansible.windows.win_feature")
    args_raw = raw.get("args") or {}
    if not isinstance(args_raw, dict):
        raise template_error(path, raw.key_line.get("args", line), f"{where}: `args` must be a mapping")
    args: dict[str, Any] = {}
    for name, value in args_raw.items():
        aline = getattr(args_raw, "key_line", {}).get(name, line)
        args[str(name)] = _argument(value, aline, f"{where}: argument {name!r}", path)
    creates = None
    if raw.get("creates"):
        creates = parse_template(str(raw["creates"]), raw.key_line["creates"], where, path, command=False)
    return AnsibleTemplate(module, args, bool(raw.get("become")), creates,
                           [parse_template(r, raw.key_line["results"], where, path, command=False)
                            for r in results or []] or None)


def _argument(value: Any, line: int, where: str, path: Path) -> Any:
    if isinstance(value, bool) or isinstance(value, int):
        return value
    # the template reader keeps scalars as text: a module's booleans and counts are read back here
    if value in ("true", "false"):
        return value == "true"
    if isinstance(value, str) and _COUNT.match(value):
        return int(value)
    if isinstance(value, str):
        return parse_template(value, line, where, path, command=False)
    if isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool) or _is_vault(v)
                                       for v in value):
        return [VaultRef(str(v["vault"])) if _is_vault(v) else parse_template(str(v), line, where, path, command=False)
                for v in value]
    if _is_vault(value):
        return VaultRef(str(value["vault"]))
    raise template_error(path, line, f"{where} must be text, a list of texts, a number, true/false or "
                                     "{vault: NAME} (NAME in lower case letters, digits and _)")


def _is_vault(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"vault"} and bool(_NAME.match(str(value["vault"])))


def render_ansible_block(block: AnsibleTemplate, fill: Callable[[Template, list[str]], str]) -> dict | None:
    """The module call with the item's values as plain data; None when a value is missing (the
    script, which shows what is missing, is then used)."""
    missing: list[str] = []

    def one(v: Any) -> Any:
        if isinstance(v, Template):
            return fill(v, missing)
        if isinstance(v, list):
            return [one(x) for x in v]
        if isinstance(v, VaultRef):
            return {"vault": v.name}
        return v

    args = {k: one(v) for k, v in block.args.items()}
    creates = fill(block.creates, missing) if block.creates is not None else None
    results = [fill(r, missing) for r in block.results or []]
    if missing:
        return None
    out: dict = {"module": block.module, "args": args, "become": block.become}
    if creates:
        out["creates"] = creates
    if results:
        out["results"] = results
    return out
