"""Hosts and groups from an Ansible inventory (INI or YAML) into servers and `access:` entries.

Each inventory host becomes a server (an existing one of that id is changed) with an access
entry built from its connection variables: `ansible_host` (address), `ansible_port`,
`ansible_user`, `ansible_connection` (ssh, paramiko, smart: SSH; winrm, psrp: WinRM, and the
server's platform is then windows; local), `ansible_ssh_private_key_file`,
`ansible_winrm_scheme`, `ansible_winrm_transport`, `ansible_winrm_server_cert_validation:
ignore` and a `ProxyJump` in `ansible_ssh_common_args`.  A user that comes from a group's
variables makes that group the hosts' shared credential name.  The groups a host is in are
kept in its `attributes` ("Ansible groups"); a group named after a server role
(`hypervisors`, `load_clients` ...) sets the role.  Passwords are never imported: the dry run
says which host had one and how to store it in the keyring.

Variables apply as Ansible applies them: `all`, then parent groups before their children,
then the host's own.  Host ranges (`web[01:03]`, `db-[a:c]`) and `host:port` are expanded.
"""
from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from topology import yaml_bounded
from topology.errors import Problem
from topology.importing.plan import Cell, HostRecord
from topology.model import SERVER_ROLES

_TRANSPORT = {"ssh": "ssh", "paramiko": "ssh", "smart": "ssh", "winrm": "winrm", "psrp": "winrm", "local": "local"}
_AUTH = {"ntlm": "ntlm", "kerberos": "kerberos", "basic": "basic", "credssp": "credssp", "plaintext": "basic"}
_SECRETS = ("ansible_password", "ansible_ssh_pass", "ansible_ssh_password", "ansible_become_password",
            "ansible_become_pass", "ansible_winrm_password")
_RANGE = re.compile(r"\[([0-9a-zA-Z]*):([0-9a-zA-Z]+)(?::([0-9]+))?\]")
MAX_HOSTS = 100_000
MAX_GROUP_DEPTH = 50
_KEPT_TAGS = frozenset({"!vault", "!vault-encrypted", "!unsafe"})
# the variables this reader takes a value from (a template or vault in any other is no concern of it)
_READ = frozenset({"ansible_connection", "ansible_host", "ansible_ssh_host", "ansible_port", "ansible_ssh_port",
                   "ansible_user", "ansible_ssh_user", "ansible_ssh_private_key_file", "ansible_private_key_file",
                   "ansible_winrm_scheme", "ansible_winrm_transport", "ansible_winrm_server_cert_validation",
                   "ansible_psrp_protocol", "ansible_psrp_auth", "ansible_psrp_cert_validation",
                   "ansible_ssh_common_args", "ansible_shell_type"})
_JINJA = re.compile(r"\{\{|\{%")


@dataclass
class _Group:
    name: str
    line: int
    hosts: dict[str, int] = field(default_factory=dict)          # host -> line
    vars: dict[str, Cell] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)


@dataclass
class _Inventory:
    groups: dict[str, _Group] = field(default_factory=dict)
    host_vars: dict[str, dict[str, Cell]] = field(default_factory=dict)
    host_line: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def group(self, name: str, line: int) -> _Group:
        if name not in self.groups:
            self.groups[name] = _Group(name, line)
        return self.groups[name]

    def add_host(self, group: str, host: str, line: int, variables: dict[str, Cell]) -> None:
        if len(self.host_line) >= MAX_HOSTS:
            raise _TooMany()
        self.group(group, line).hosts.setdefault(host, line)
        self.host_line.setdefault(host, line)
        self.host_vars.setdefault(host, {}).update(variables)


class _TooMany(Exception):
    pass


class _RangeTooLarge(ValueError):
    pass


class _TooDeep(Exception):
    """Groups nested deeper than MAX_GROUP_DEPTH (the group named is one of the chain)."""


def expand(pattern: str) -> list[str]:
    """`web[01:03].lab` -> web01.lab, web02.lab, web03.lab; `mail[:2]` -> mail0 .. mail2 (as Ansible expands
    host ranges)."""
    found = _RANGE.search(pattern)
    if found is None:
        return [pattern]
    # an empty start is 0, as Ansible reads `mail[:5]`
    start, end, step = found.group(1) or "0", found.group(2), int(found.group(3) or 1)
    head, tail = pattern[:found.start()], pattern[found.end():]
    if start.isdigit() and end.isdigit():
        if len(start) > 30 or len(end) > 30:
            raise _RangeTooLarge(f"{pattern!r}: a range bound of more than 30 digits is no host number")
        width = len(start) if start.startswith("0") else 0
        first, last = int(start), int(end)
    elif len(start) == len(end) == 1 and start.isalpha() and end.isalpha():
        width, first, last = -1, ord(start), ord(end)
    else:
        raise ValueError(f"cannot expand the range [{start}:{end}]")
    # counted, never measured with len(range(...)): a range past sys.maxsize is an error to say
    step = max(step, 1)
    count = max(0, (last - first) // step + 1)
    numbers = range(first, last + 1, step) if count <= MAX_HOSTS else range(0)
    values = [chr(c) for c in numbers] if width < 0 else [str(i).zfill(width) for i in numbers]
    # the count is known before any name is made: ranges multiply (h[1:50000]-[1:50000])
    rest = expand(tail) if count <= MAX_HOSTS else []
    if count * max(len(rest), 1) > MAX_HOSTS:
        raise _RangeTooLarge(f"{pattern!r} stands for more than {MAX_HOSTS:,} hosts")
    return [head + v + r for v in values for r in rest]


# ---------------------------------------------------------------------- INI

def _ini(text: str) -> _Inventory:
    inv = _Inventory()
    section, kind = "ungrouped", "hosts"
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            found = re.fullmatch(r"\[([^\]:\s]+)(?::(vars|children))?\]", line)
            if found is None:
                inv.problems.append(Problem(f"{line!r} is not a section header", "write [group], [group:vars] or "
                                            "[group:children]", number))
                section, kind = "", "skip"
                continue
            section, kind = found.group(1), found.group(2) or "hosts"
            inv.group(section, number)
            continue
        if kind == "skip":
            continue
        try:
            words = shlex.split(raw, comments=True, posix=True)
        except ValueError as exc:
            inv.problems.append(Problem(f"cannot read this line: {exc}", "check the quotes", number))
            continue
        if not words:
            continue
        if kind == "vars":
            key, sep, value = raw.strip().partition("=")
            if not sep:
                inv.problems.append(Problem(f"{raw.strip()!r} is not key=value", "write name=value", number))
                continue
            inv.groups[section].vars[key.strip()] = Cell(_unquote(value.strip()), number, key.strip())
        elif kind == "children":
            inv.groups[section].children.append(words[0])
            inv.group(words[0], number)
        else:
            variables: dict[str, Cell] = {}
            for word in words[1:]:
                key, sep, value = word.partition("=")
                if not sep:
                    inv.problems.append(Problem(f"{word!r} is not key=value", "write name=value after the host",
                                                number))
                    continue
                variables[key] = Cell(value, number, key)
            _hosts(inv, section, words[0], number, variables)
    return inv


def _unquote(value: str) -> str:
    try:
        words = shlex.split(value, comments=True)
    except ValueError:
        return value
    return words[0] if len(words) == 1 else value


def host_and_port(pattern: str) -> tuple[str, str | None]:
    """`web01:2222` -> (web01, 2222), `[2001:db8::1]:2222` -> (2001:db8::1, 2222); a bare IPv6
    address (`2001:db8::10`, `fe80::1%eth0`) is a host with no port, as Ansible reads it."""
    try:
        ipaddress.IPv6Address(pattern.split("%", 1)[0])
        return pattern, None
    except ValueError:
        pass
    found = re.fullmatch(r"\[([0-9a-fA-F:.]+(?:%[^\]]+)?)\]:([0-9]+)", pattern)
    if found and ":" in found.group(1):
        return found.group(1), found.group(2)
    found = re.fullmatch(r"((?:[^:\[]|\[[^\]]*\])+):([0-9]+)", pattern)     # a colon inside [01:09] is a range's
    if found:
        return found.group(1), found.group(2)
    return pattern, None


def _hosts(inv: _Inventory, group: str, pattern: str, line: int, variables: dict[str, Cell]) -> None:
    host, port = host_and_port(pattern)
    if port is not None:
        variables = {"ansible_port": Cell(port, line, "host:port"), **variables}
    try:
        names = expand(host)
    except ValueError as exc:
        hint = "import the inventory in parts" if isinstance(exc, _RangeTooLarge) else \
            "write the range as [01:10] or [a:f]"
        inv.problems.append(Problem(str(exc), hint, line))
        return
    for name in names:
        inv.add_host(group, name, line, dict(variables))


# ---------------------------------------------------------------------- YAML

def _yaml(text: str) -> _Inventory:
    inv = _Inventory()
    try:
        data = yaml_bounded.parse(text, _KEPT_TAGS)
    except yaml_bounded.YamlProblem as exc:
        inv.problems.append(Problem(exc.message, exc.hint, exc.line, exc.column))
        return inv
    if data is None:
        return inv
    if not isinstance(data, dict):
        inv.problems.append(Problem("an inventory is a mapping of groups at the top", "start with `all:`", 1))
        return inv
    root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

    def line_of(path: tuple) -> int:
        node = root
        best = 1
        for step in path:
            nxt = None
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode) and k.value == step:
                        nxt, best = v, k.start_mark.line + 1
                        break
            if nxt is None:
                break
            node = nxt
        return best

    def group(name: str, body: Any, path: tuple, depth: int) -> None:
        if depth > MAX_GROUP_DEPTH:
            inv.problems.append(Problem("groups nested too deeply", "flatten the inventory", line_of(path)))
            return
        g = inv.group(name, line_of(path))
        if body is None:
            return
        if not isinstance(body, dict):
            inv.problems.append(Problem(f"group {name!r} is not a mapping", "write hosts:, vars: and children: "
                                        "under it", line_of(path)))
            return
        for key in ("hosts", "vars", "children"):
            if isinstance(body.get(key), str):    # `hosts: web1`: one name, as Ansible allows
                body = {**body, key: {body[key]: None}}
        for key in body:
            if key not in ("hosts", "vars", "children"):
                inv.problems.append(Problem(f"{key!r} in group {name!r}", "a group holds hosts:, vars: and children:",
                                            line_of((*path, key))))
        sections = {}
        for key, hint in (("vars", "write name: value under it"), ("hosts", "write each host as a key"),
                          ("children", "write each child group as a key")):
            sections[key] = body.get(key) or {}
            if not isinstance(sections[key], dict):
                inv.problems.append(Problem(f"{key} of {name!r} are not a mapping", hint, line_of((*path, key))))
                sections[key] = {}
        for key, value in sections["vars"].items():
            g.vars[str(key)] = _cell(value, line_of((*path, "vars", key)), str(key))
        hosts = sections["hosts"]
        for host, variables in hosts.items():
            where = (*path, "hosts", host)
            cells = {str(k): _cell(v, line_of((*where, k)), str(k)) for k, v in (variables or {}).items()} \
                if isinstance(variables, dict) else {}
            _hosts(inv, name, str(host), line_of(where), cells)
        for child, child_body in sections["children"].items():
            g.children.append(str(child))
            group(str(child), child_body, (*path, "children", child), depth + 1)

    for name, body in data.items():
        group(str(name), body, (name,), 0)
    return inv


def _cell(value: Any, line: int, key: str) -> Cell:
    if isinstance(value, yaml_bounded.Tagged):
        if value.tag == "!unsafe":      # Ansible's mark for text it must not template: the text itself
            return Cell(value.text, line, key)
        return Cell("", line, key, unreadable="vault-encrypted")
    return Cell(_text(value), line, key)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return str(value)
    return "" if value is None else str(value)


# ---------------------------------------------------------------------- records

def read_inventory(text: str) -> tuple[list[HostRecord], list[Problem]]:
    """The hosts an inventory describes (INI or YAML, told apart by its first significant line)."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("#", ";"))),
                 "")
    # a document start (`---`) or a directive (`%YAML`) only begins YAML
    is_ini = not first.startswith(("---", "%")) and (first.startswith("[") or (bool(first) and ":" not in first)
                                                     or ("=" in first and ":" not in first.split("=")[0]))
    try:
        inv = _ini(text) if is_ini else _yaml(text)
    except _TooMany:
        return [], [Problem(f"more than {MAX_HOSTS:,} hosts", "import the inventory in parts")]
    if inv.problems:
        return [], inv.problems
    try:
        return _records(inv), inv.problems
    except _TooDeep as exc:
        group = inv.groups.get(str(exc.args[0]))
        return [], [Problem(f"groups nested more than {MAX_GROUP_DEPTH} deep (through {exc.args[0]!r})",
                            "flatten the inventory", group.line if group else None)]


def _depths(inv: _Inventory) -> tuple[dict[str, int], dict[str, set[str]]]:
    """How deep each group sits under `all`, and each group's parents."""
    parents: dict[str, set[str]] = {name: set() for name in inv.groups}
    for g in inv.groups.values():
        for child in g.children:
            if child != g.name:
                parents.setdefault(child, set()).add(g.name)
    depth: dict[str, int] = {}

    def level(name: str, seen: frozenset[str]) -> int:
        if len(seen) > MAX_GROUP_DEPTH:
            raise _TooDeep(name)
        if name not in depth:
            ups = [level(p, seen | {name}) for p in parents.get(name, ()) if p not in seen]
            depth[name] = 0 if name == "all" else 1 + max(ups, default=0)
        return depth[name]

    for name in inv.groups:
        level(name, frozenset())
    return depth, parents


def _records(inv: _Inventory) -> list[HostRecord]:
    depth, parents = _depths(inv)
    member: dict[str, list[str]] = {}
    for g in inv.groups.values():
        for host in g.hosts:
            member.setdefault(host, []).append(g.name)
    out = []
    for host, line in inv.host_line.items():
        direct = member.get(host, [])
        every, todo = {"all"}, list(direct)
        while todo:
            name = todo.pop()
            if name not in every:
                every.add(name)
                todo.extend(parents.get(name, ()))
        # as Ansible applies them: all, then parents before their children, then the host's own
        merged: dict[str, tuple[Cell, str]] = {}
        for name in sorted(every, key=lambda n: (depth.get(n, 0), n)):
            for key, cell in (inv.groups[name].vars if name in inv.groups else {}).items():
                merged[key] = (cell, name)
        for key, cell in inv.host_vars.get(host, {}).items():
            merged[key] = (cell, "")
        out.append(_host_record(host, line, merged, [g for g in direct if g not in ("all", "ungrouped")]))
    return out


def _host_record(host: str, line: int, merged: dict[str, tuple[Cell, str]], groups: list[str]) -> HostRecord:
    rec = HostRecord(host, line)
    for key, (cell, _group) in list(merged.items()):
        why = cell.unreadable or ("a Jinja template" if _JINJA.search(cell.text) else "")
        if why and key in _READ:
            # Ansible works such a value out when it runs; the importer never evaluates it
            rec.notes.append(f"{host}: {key} (line {cell.line}) is {why}; it was not imported: set it in the "
                             "bed's access entry")
            del merged[key]
    value = {k: c for k, (c, _g) in merged.items()}
    conn = value.get("ansible_connection")
    transport = "ssh"
    if conn is not None:
        transport = _TRANSPORT.get(conn.text.strip(), "")
        if not transport:
            rec.access["transport"] = Cell(conn.text, conn.line, "ansible_connection")   # refused by the choices
        else:
            rec.access["transport"] = Cell(transport, conn.line, "ansible_connection")
    else:
        rec.access["transport"] = Cell("ssh", line, "ansible_connection")
    # PSRP has variables of its own; a psrp host reads them and not the winrm ones
    winrm = "psrp" if conn is not None and conn.text.strip() == "psrp" else "winrm"
    scheme, auth_var, cert_var = (("ansible_psrp_protocol", "ansible_psrp_auth", "ansible_psrp_cert_validation")
                                  if winrm == "psrp" else ("ansible_winrm_scheme", "ansible_winrm_transport",
                                                           "ansible_winrm_server_cert_validation"))
    for var, key in (("ansible_host", "address"), ("ansible_ssh_host", "address"), ("ansible_port", "port"),
                     ("ansible_ssh_port", "port"), ("ansible_user", "user"), ("ansible_ssh_user", "user"),
                     ("ansible_ssh_private_key_file", "key_file"), ("ansible_private_key_file", "key_file"),
                     (scheme, "winrm_scheme")):
        if var in value and key not in rec.access:
            rec.access[key] = Cell(value[var].text, value[var].line, var)
    auth = value.get(auth_var)
    if auth is not None:
        first = auth.text.split(",")[0].strip()
        rec.access["winrm_auth"] = Cell(_AUTH.get(first, first), auth.line, auth_var)
    cert = value.get(cert_var)
    if cert is not None and cert.text.strip() == "ignore":
        rec.access["verify_tls"] = Cell("false", cert.line, cert_var)
    common = value.get("ansible_ssh_common_args")
    if common is not None:
        jump = re.search(r"ProxyJump[= ]+(\S+)|-J\s*(\S+)", common.text)
        if jump:
            rec.access["jump"] = Cell((jump.group(1) or jump.group(2)).strip("'\""), common.line,
                                      "ansible_ssh_common_args")
        elif "proxycommand" in common.text.lower():
            rec.notes.append(f"{host}: its SSH goes through a ProxyCommand (ansible_ssh_common_args, line "
                             f"{common.line}), which was not imported: set the bastion as the access entry's jump")
    user = merged.get("ansible_user") or merged.get("ansible_ssh_user")
    if user is not None and user[1] not in ("", "all", "ungrouped"):
        # the group's account: its hosts share one keyring entry
        rec.access["credential"] = Cell(user[1], user[0].line, "group")
    shell = value.get("ansible_shell_type")
    if transport == "winrm":
        rec.fields["platform"] = Cell("windows", conn.line if conn else line, "ansible_connection")
    elif shell is not None and shell.text.strip() in ("powershell", "cmd"):   # Windows over OpenSSH
        rec.fields["platform"] = Cell("windows", shell.line, "ansible_shell_type")
    roles = {_role_of(g) for g in groups} - {None}
    if len(roles) == 1:
        rec.fields["role"] = Cell(roles.pop() or "", line, "group")
    elif len(roles) > 1:
        rec.notes.append(f"{host}: its groups name several roles ({', '.join(sorted(r or '' for r in roles))}); "
                         "the role is left as it is")
    if groups:
        rec.attributes["Ansible groups"] = ", ".join(sorted(groups))
    for secret in _SECRETS:
        if secret in value:
            rec.notes.append(f"{host}: {secret} was not imported (no password is kept in a bed); store it with "
                             f"`testbed-studio credentials set {rec.access.get('credential', Cell(host, 0)).text}`")
    return rec


def _role_of(group: str) -> str | None:
    word = group.lower().replace("-", "_")
    for candidate in (word, word[:-1] if word.endswith("s") else word):
        if candidate in SERVER_ROLES:
            return candidate
    return None
