"""Checks for every script a methodology holds: PowerShell through a real PowerShell grammar
(tree-sitter-powershell: no PowerShell runs here), bash through `bash -n` and shellcheck, and
every PowerShell command against the Windows version table (resources/platforms/windows-commands.yaml)
for the version of the machine it runs on."""
from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import tree_sitter_powershell
import yaml
from tree_sitter import Language, Parser

from resources import ROOT as RESOURCES
from topology.methodology.context import BedContext
from topology.methodology.steps import Methodology
from topology.os_release import Version, parse_version

WINDOWS_COMMANDS = RESOURCES / "platforms" / "windows-commands.yaml"
OLDEST_WINDOWS: Version = (2008, 0)   # what a machine with no stated version may be: the oldest the templates serve


@dataclass(frozen=True)
class Script:
    step: str          # step number
    template: str
    host: str          # where it runs
    shell: str
    text: str
    part: str          # script | verify | invoke


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_powershell.language()))


@dataclass(frozen=True)
class CommandRange:
    min: Version | None    # None: a vendor tool, on any release
    max: Version | None
    note: str


@lru_cache(maxsize=1)
def windows_commands() -> dict[str, CommandRange]:
    data = yaml.safe_load(WINDOWS_COMMANDS.read_text(encoding="utf-8"))
    out = {}
    for name, spec in data["commands"].items():
        low = None if str(spec["min"]) == "any" else parse_version(str(spec["min"]))[0]
        high = parse_version(str(spec["max"]))[0] if spec.get("max") else None
        out[name.lower()] = CommandRange(low, high, str(spec.get("note") or ""))
    return out


def scripts_of(meth: Methodology) -> list[Script]:
    out = []
    for step in meth.steps():
        for c in step.automation:
            host = c.target or step.target
            out.append(Script(step.number, step.template, host, c.shell, c.script, "script"))
            if c.verify:
                out.append(Script(step.number, step.template, host, c.shell, c.verify, "verify"))
            if c.invoke:
                out.append(Script(step.number, step.template, host, "bash", c.invoke, "invoke"))
    return out


def powershell_problem(script: str) -> str:
    """'' when the grammar parses the script, else the first line it cannot."""
    tree = _parser().parse(script.encode("utf-8"))
    if not tree.root_node.has_error:
        return ""
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            line = script.splitlines()[node.start_point[0]] if script.splitlines() else script
            return f"line {node.start_point[0] + 1}: {line.strip()}"
        stack.extend(reversed(node.children))
    return "does not parse"


def powershell_commands(script: str) -> list[str]:
    """The names of the commands the script calls (cmdlets and programs), less the functions it
    defines itself (a guard library's)."""
    src = script.encode("utf-8")
    tree = _parser().parse(src)
    names, defined, stack = [], set(), [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "command_name":
            names.append(src[node.start_byte:node.end_byte].decode("utf-8"))
        elif node.type == "function_name":
            defined.add(src[node.start_byte:node.end_byte].decode("utf-8").lower())
        stack.extend(node.children)
    return [n for n in names if n.lower() not in defined]


def version_problems(ctx: BedContext, scripts: list[Script]) -> list[str]:
    """Commands missing from the table, or outside the version range of their machine."""
    table = windows_commands()
    out = []
    for s in scripts:
        if s.shell != "powershell":
            continue
        release = ctx.profile(s.host).release
        if release.family != "windows":
            out.append(f"{s.step} ({s.template}): a PowerShell script on {s.host}, which is not a Windows machine")
            continue
        version = release.version or OLDEST_WINDOWS
        for name in powershell_commands(s.text):
            entry = table.get(name.lower())
            if entry is None:
                out.append(f"{s.step} ({s.template}): {name} is not in {WINDOWS_COMMANDS.name}")
                continue
            if entry.min is not None and version < entry.min:
                out.append(f"{s.step} ({s.template}): {name} needs Windows Server {_v(entry.min)}, "
                           f"{s.host} runs {release.describe()}")
            if entry.max is not None and version > entry.max:
                out.append(f"{s.step} ({s.template}): {name} is gone after {_v(entry.max)}, "
                           f"{s.host} runs {release.describe()}")
    return out


def _v(v: Version) -> str:
    return f"{v[0]}" + (" R2" if len(v) > 1 and v[1] == 2 else "")


_SHELL_FINDINGS: dict[tuple[str, str], list[str]] = {}


def shell_problems(items: list[tuple[str, str]], dialect: str = "bash") -> list[str]:
    """`DIALECT -n` and shellcheck (everything but style) over every (label, script), each tool
    started once for all of them (a start per script is most of the time these checks take).
    A script text is checked once per process: procedures repeat the same script for many hosts
    and beds, and both tools answer the same for the same text."""
    fresh = list(dict.fromkeys(text for _label, text in items if (dialect, text) not in _SHELL_FINDINGS))
    for text, found in zip(fresh, _check_shell_texts(fresh, dialect)):
        _SHELL_FINDINGS[(dialect, text)] = found
    return [f"{label} {finding}" for label, text in items for finding in _SHELL_FINDINGS[(dialect, text)]]


def _check_shell_texts(texts: list[str], dialect: str) -> list[list[str]]:
    """What `DIALECT -n` and shellcheck say of each text, in the order given."""
    out: list[list[str]] = [[] for _ in texts]
    if not texts:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for k, text in enumerate(texts):
            p = Path(tmp) / f"s{k}.sh"
            p.write_text(f"#!/bin/{dialect}\n" + text + "\n", encoding="utf-8")
            files.append(p)
        loop = f'for f in "$@"; do {dialect} -n "$f" 2>&1 | sed "s|^|$(basename "$f"): |"; done'
        syntax = subprocess.run(["bash", "-c", loop, "bash", *map(str, files)], capture_output=True, text=True,
                                timeout=300)
        for line in syntax.stdout.splitlines():
            k = int(line.split(".sh", 1)[0][1:])
            out[k].append(f"{dialect} -n: {line}")
        check = subprocess.run(["shellcheck", "-s", dialect, "-S", "info", "-f", "json1", *map(str, files)],
                               capture_output=True, text=True, timeout=300)
        for c in json.loads(check.stdout or '{"comments": []}')["comments"]:
            k = int(Path(c["file"]).stem[1:])
            lines = texts[k].splitlines() or [""]
            where = lines[min(max(0, c["line"] - 2), len(lines) - 1)]   # line 1 of the file is the shebang
            out[k].append(f"shellcheck -s {dialect} SC{c['code']}: {c['message']} in: {where}")
    return out


def bash_problems(scripts: list[Script]) -> list[str]:
    """`bash -n` and shellcheck over every bash script of a procedure."""
    return shell_problems([(f"{s.step} ({s.template})", s.text) for s in scripts if s.shell == "bash"])


def problems(bed, meth: Methodology) -> list[str]:
    """Every problem with the scripts of `meth` (generated from `bed`)."""
    scripts = scripts_of(meth)
    out = [f"{s.step} ({s.template}) PowerShell {s.part}: {why}" for s in scripts
           if s.shell == "powershell" and (why := powershell_problem(s.text))]
    out += version_problems(BedContext(bed), scripts)
    out += bash_problems(scripts)
    return out
