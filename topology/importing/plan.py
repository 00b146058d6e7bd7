"""What an import changes in a bed: records read from a file (hosts with their fields, ports,
access) turned into one reversible edit, a list of the changes in words (the dry run), or
the problems that stop it, each with the line of the file it came from.

Values are checked exactly as the loader checks a project file (the same field builders:
kinds, ranges, choices, ids that become file names), plus addresses and network names.  A
file with any problem changes nothing.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from topology import yaml_bounded
from topology.edits import Compound, Edit, InsertItem, SetField
from topology.errors import Problem
from topology.field_plan import plan
from topology.fileformat import _Builder, check_references  # the loader's own field checks
from topology.model import Adapter, Bed, HostAccess, Port, Server

_CONTROL = re.compile(r"[\x00-\x1f\x7f\x80-\x9f\u2028\u2029]")


@dataclass
class Cell:
    """A value as the file wrote it, and where."""
    text: str
    line: int
    column: str = ""      # the CSV column or inventory variable it came from
    unreadable: str = ""  # why the text is not the value (vault-encrypted): such a cell is never imported


@dataclass
class PortRecord:
    adapter: str
    name: str
    line: int
    fields: dict[str, Cell] = field(default_factory=dict)


@dataclass
class HostRecord:
    host: str
    line: int
    fields: dict[str, Cell] = field(default_factory=dict)          # Server fields
    ports: list[PortRecord] = field(default_factory=list)
    access: dict[str, Cell] = field(default_factory=dict)          # HostAccess fields
    attributes: dict[str, str] = field(default_factory=dict)       # e.g. the Ansible groups
    notes: list[str] = field(default_factory=list)                 # said in the dry run (a password left out)


@dataclass
class ImportPlan:
    source: str
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)       # said with the changes: a password left out
    problems: list[Problem] = field(default_factory=list)
    edit: Edit | None = None

    def summary(self) -> str:
        if self.problems:
            return f"{self.source}: {len(self.problems)} problem(s); nothing imported"
        if not self.changes:
            return f"{self.source}: nothing to change"
        return f"{self.source}: {len(self.changes)} change(s)"


class _Problems:
    def __init__(self) -> None:
        self.found: list[Problem] = []

    def add(self, line: int | None, message: str, hint: str = "") -> None:
        self.found.append(Problem(message, hint, line))


def _typed(kind: str, inner: Any, cell: Cell) -> Any:
    """A cell's text as the value a project file would hold for a field of this kind."""
    text = cell.text.strip()
    if kind == "int" and re.fullmatch(r"[-+]?[0-9]+\.0+", text):
        text = text.split(".")[0]      # 9000.0: a sheet's number column formatted with decimals
    if kind in ("int", "float", "bool"):
        try:
            return yaml_bounded.plain_reading(text)
        except yaml_bounded.YamlProblem as exc:
            return exc    # reported as a problem of this cell
    if kind == "list":
        return [part for part in re.split(r"[;,\s]+", text) if part]
    return text


def _fields_data(cls: type, cells: dict[str, Cell], problems: _Problems) -> dict[str, Any]:
    by_key = {fp.key: fp for fp in plan(cls)}
    data: dict[str, Any] = {}
    for key, cell in cells.items():
        fp = by_key.get(key)
        if fp is None:   # the readers only pass known fields; this guards the planner's own use
            problems.add(cell.line, f"{cell.column or key}: not a field of a {cls.__name__.lower()}")
            continue
        if _CONTROL.search(cell.text):
            problems.add(cell.line, f"{cell.column or key}: control characters are not allowed ({cell.text!r})",
                         "remove the character")
            continue
        value = _typed(fp.kind, fp.inner, cell)
        if isinstance(value, yaml_bounded.YamlProblem):
            problems.add(cell.line, f"{cell.column or key}: {value.message}", value.hint)
            continue
        data[key] = _choice_case(value, fp.meta.get("choices"))
    return data


def _choice_case(value: Any, choices: tuple[str, ...] | None) -> Any:
    """`Hypervisor`, `iSCSI` -> hypervisor, iscsi: a sheet's capitals on a word the format spells in
    lower case (anything else is left for the field check to name)."""
    if not choices:
        return value
    if isinstance(value, list):
        return [_choice_case(v, choices) for v in value]
    if isinstance(value, str) and value not in choices and value.lower() in choices:
        return value.lower()
    return value


def _build(cls: type, data: dict[str, Any], cells: dict[str, Cell], line: int, problems: _Problems) -> Any:
    """The object the loader would build from `data`; its problems go to the cells they came from."""
    builder = _Builder()
    obj = builder.build(cls, data, ())
    for path, message, hint in builder.problems:
        key = path[0] if path else ""
        cell = cells.get(key) if isinstance(key, str) else None
        where = cell.column if cell and cell.column else str(key)
        problems.add(cell.line if cell else line, f"{where}: {message}" if where else message, hint)
    return obj


def _check_address(cells: dict[str, Cell], problems: _Problems) -> None:
    cell = cells.get("address")
    if cell is None or not cell.text.strip():
        return
    try:
        iface = ipaddress.ip_interface(cell.text.strip())
    except ValueError:
        problems.add(cell.line, f"{cell.column or 'address'}: {cell.text!r} is not an IP address with a prefix",
                     "write it as 192.168.130.201/24")
        return
    if "/" not in cell.text:
        problems.add(cell.line, f"{cell.column or 'address'}: {cell.text!r} has no prefix length",
                     f"write it as {iface.ip}/24 (the subnet's prefix length)")


_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/:?#]*)")


def _check_host_address(cell: Cell | None, problems: _Problems, prefix: bool = False) -> None:
    """What a connection goes to is a host name or an IP address (with a prefix length where
    `prefix` allows one, as a management address has), nothing else."""
    if cell is None or not cell.text.strip():
        return
    text = cell.text.strip()
    try:
        if prefix and "/" in text:
            ipaddress.ip_interface(text)
        else:
            ipaddress.ip_address(text.split("%", 1)[0] if ":" in text else text)
        return
    except ValueError:
        pass
    if _HOST_NAME.fullmatch(text):
        return
    url = _URL.match(text)
    if url:
        problems.add(cell.line, f"{cell.column or 'address'}: {text!r} is a URL, not a host to connect to",
                     f"write only the host name ({url.group(1) or 'the host'}), and its port as the port")
    else:
        problems.add(cell.line, f"{cell.column or 'address'}: {text!r} is not a host name or IP address",
                     "write a name such as array-a.lab or an address such as 192.168.1.20")


def plan_records(bed: Bed, records: list[HostRecord], source: str) -> ImportPlan:
    """One edit that brings the records into the bed, or the problems that prevent it."""
    out = ImportPlan(source)
    problems = _Problems()
    networks = {n.id for n in bed.networks}
    servers = {s.id: s for s in bed.servers}
    others: set[str] = {*(c.id for c in bed.switches), *(c.id for c in bed.arrays), *(c.id for c in bed.chassis),
                        *(c.id for c in bed.vms)}
    access = {a.host: a for a in bed.access}
    edits: list[Edit] = []
    seen: dict[str, int] = {}
    for rec in records:
        if rec.host in seen:
            problems.add(rec.line, f"host {rec.host!r} appears twice (first on line {seen[rec.host]})",
                         "give each host one entry")
            continue
        seen[rec.host] = rec.line
        if rec.host in others:
            problems.add(rec.line, f"{rec.host!r} is already the id of a switch, array, chassis or VM in the bed",
                         "import it under another name")
            continue
        _check_host_address(rec.fields.get("management_address"), problems, prefix=True)
        server_data = _fields_data(Server, rec.fields, problems)
        server_data["id"] = rec.host
        if _CONTROL.search(rec.host):
            problems.add(rec.line, f"the host name {rec.host!r} holds control characters", "remove them")
            continue
        built: Server = _build(Server, server_data, {**rec.fields, "id": Cell(rec.host, rec.line, "host")},
                               rec.line, problems)
        ports: list[tuple[PortRecord, Port]] = []
        names: dict[tuple[str, str], int] = {}
        for prec in rec.ports:
            if (prec.adapter, prec.name) in names or any(n == prec.name for _a, n in names):
                problems.add(prec.line, f"port {rec.host}:{prec.name} appears twice (first on line "
                             f"{next(v for (a, n), v in names.items() if n == prec.name)})",
                             "give each port one row")
                continue
            names[(prec.adapter, prec.name)] = prec.line
            if _CONTROL.search(prec.name + prec.adapter):
                problems.add(prec.line, f"the port {prec.name!r} on {prec.adapter!r} holds control characters "
                             "(a line break in the cell?)", "remove them")
                continue
            _check_address(prec.fields, problems)
            net = prec.fields.get("network")
            if net is not None and net.text.strip() and net.text.strip() not in networks:
                problems.add(net.line, f"{net.column or 'network'}: {net.text!r} is not a network of the bed",
                             f"networks: {', '.join(sorted(networks)) or 'none yet'}; add it first or leave the "
                             "cell empty")
            pdata = _fields_data(Port, prec.fields, problems)
            pdata["name"] = prec.name
            ports.append((prec, _build(Port, pdata, {**prec.fields, "name": Cell(prec.name, prec.line, "port")},
                                       prec.line, problems)))
        host_access = None
        if rec.access:
            _check_host_address(rec.access.get("address"), problems)
            adata = _fields_data(HostAccess, rec.access, problems)
            adata["host"] = rec.host
            host_access = _build(HostAccess, adata, rec.access, rec.line, problems)
        if problems.found:
            continue
        existing = servers.get(rec.host)
        if existing is None:
            _add_server(out, edits, bed, built, ports, rec)
        else:
            _change_server(out, edits, existing, built, server_data, ports, rec)
        if host_access is not None:
            _merge_access(out, edits, bed, access.get(rec.host), host_access, rec)
        out.notes.extend(rec.notes)
    out.problems = problems.found
    if out.problems or not edits:
        return out
    edit = Compound(edits, text=f"Import {_count(records)} from {source}")
    out.problems = _references_after(bed, edit)
    if not out.problems:
        out.edit = edit
    return out


def _count(records: list[HostRecord]) -> str:
    return f"{len(records)} host{'s' if len(records) != 1 else ''}"


def _port_words(port: Port) -> str:
    parts = [port.address, f"network {port.network}" if port.network else "",
             ", ".join(port.roles), f"MTU {port.mtu}" if port.mtu else "", f"VLAN {port.vlan}" if port.vlan else ""]
    return "  ".join(p for p in parts if p)


def _add_server(out: ImportPlan, edits: list[Edit], bed: Bed, server: Server, ports: list[tuple[PortRecord, Port]],
                rec: HostRecord) -> None:
    adapters: dict[str, Adapter] = {}
    for prec, port in ports:
        adapters.setdefault(prec.adapter, Adapter(name=prec.adapter)).ports.append(port)
    server.adapters = list(adapters.values())
    if rec.attributes:
        server.attributes = dict(rec.attributes)
    edits.append(InsertItem(bed.servers, server))
    out.changes.append(f"+ server {server.id} ({server.role})")
    for prec, port in ports:
        out.changes.append(f"+ port {server.id}:{port.name} on {prec.adapter}  {_port_words(port)}".rstrip())


def _change_server(out: ImportPlan, edits: list[Edit], server: Server, built: Server, given: dict[str, Any],
                   ports: list[tuple[PortRecord, Port]], rec: HostRecord) -> None:
    for fp in plan(Server):
        if fp.key in given and fp.key != "id":
            new = getattr(built, fp.attr)
            if getattr(server, fp.attr) != new:
                edits.append(SetField(server, fp.attr, new, owner=server.id))
                out.changes.append(f"~ server {server.id}: {fp.key} {getattr(server, fp.attr)!r} -> {new!r}")
    if rec.attributes and any(server.attributes.get(k) != v for k, v in rec.attributes.items()):
        edits.append(SetField(server, "attributes", {**server.attributes, **rec.attributes}, owner=server.id))
        out.changes.append(f"~ server {server.id}: attributes {', '.join(rec.attributes)}")
    by_name = {p.name: (ad, p) for ad in server.adapters for p in ad.ports}
    new_adapters: dict[str, Adapter] = {}
    for prec, port in ports:
        found = by_name.get(port.name)
        if found is None:
            adapter = next((ad for ad in server.adapters if ad.name == prec.adapter), None)
            if adapter is None:
                adapter = new_adapters.get(prec.adapter)
                if adapter is None:
                    adapter = new_adapters[prec.adapter] = Adapter(name=prec.adapter)
                    edits.append(InsertItem(server.adapters, adapter, owner=server.id))
                adapter.ports.append(port)
            else:
                edits.append(InsertItem(adapter.ports, port, owner=server.id))
            out.changes.append(f"+ port {server.id}:{port.name} on {prec.adapter}  {_port_words(port)}".rstrip())
            continue
        _ad, old = found
        for fp in plan(Port):
            if fp.key in prec.fields:
                new = getattr(port, fp.attr)
                if getattr(old, fp.attr) != new:
                    edits.append(SetField(old, fp.attr, new, owner=server.id))
                    out.changes.append(f"~ port {server.id}:{old.name}: {fp.key} {getattr(old, fp.attr)!r} -> {new!r}")


def _merge_access(out: ImportPlan, edits: list[Edit], bed: Bed, old: HostAccess | None, new: HostAccess,
                  rec: HostRecord) -> None:
    if old is None:
        edits.append(InsertItem(bed.access, new, owner=new.host))
        words = ", ".join(f"{k} {rec.access[k].text}" for k in rec.access if k != "transport")
        out.changes.append(f"+ access {new.host}: {new.transport}" + (f" ({words})" if words else ""))
        return
    for fp in plan(HostAccess):
        if fp.key in rec.access and getattr(old, fp.attr) != getattr(new, fp.attr):
            edits.append(SetField(old, fp.attr, getattr(new, fp.attr), owner=new.host))
            out.changes.append(f"~ access {new.host}: {fp.key} {getattr(old, fp.attr)!r} -> {getattr(new, fp.attr)!r}")


def _references_after(bed: Bed, edit: Compound) -> list[Problem]:
    """Apply the edit to see that every name still resolves (then take it back)."""
    before = {m for _p, m, _h in check_references(bed)}
    edit.apply()
    try:
        after = check_references(bed)
    finally:
        edit.revert()
    return [Problem(message, hint) for _path, message, hint in after if message not in before]
