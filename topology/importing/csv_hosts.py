"""Hosts, ports and addresses from a spreadsheet saved as CSV.

The layout (also in the README): a header row, then one row per port (a row with no `port`
only declares or changes the host).  Cells are separated by commas, or by semicolons or tabs
(told from the header row, or from Excel's `sep=;` first line: Excel writes `;` in many
locales).  Column names are
case-insensitive, and a space or hyphen in one reads as `_` (`Memory GB` is `memory_gb`);
only `host` is required; an empty cell changes nothing.

| column | what | e.g. |
|---|---|---|
| host | server id (a new one is added, an existing one changed) | R710-3 |
| role | hypervisor, infrastructure, load_client, test_controller, management, application | hypervisor |
| model, os, hypervisor, platform | the server's fields of that name | Dell PowerEdge R710 |
| memory_gb | RAM in GB | 96 |
| management_address | the server's management address | 10.0.0.13 |
| adapter | adapter the port is on (default `nic`) | NIC1 |
| port | port name, unique in the server | SAN1 |
| kind | ethernet, fc, sas, management, infiniband | ethernet |
| address | IP address with prefix | 192.168.130.203/24 |
| network | a network of the bed | iSCSI-A |
| roles | port roles, separated by spaces, commas or semicolons | iscsi |
| mtu, vlan, speed_gbps, team, label, wwpn, fabric | the port's fields of that name | 9000 |
"""
from __future__ import annotations

import csv
import io
import re

from topology.errors import Problem
from topology.importing.plan import Cell, HostRecord, PortRecord

SERVER_COLUMNS = ("role", "model", "os", "hypervisor", "platform", "memory_gb", "management_address")
PORT_COLUMNS = ("kind", "address", "network", "roles", "mtu", "vlan", "speed_gbps", "team", "label", "wwpn",
                "fabric")
COLUMNS = ("host", *SERVER_COLUMNS, "adapter", "port", *PORT_COLUMNS)
DEFAULT_ADAPTER = "nic"
MAX_ROWS = 100_000


def column_name(header_cell: str) -> str:
    """`Memory GB`, ` memory-gb ` -> memory_gb: header cells as people type them."""
    return re.sub(r"[\s-]+", "_", header_cell.strip().lower())


def separator(text: str) -> str:
    """The cell separator of a sheet: `,`, or `;` (Excel's CSV in many locales) or a tab
    when the header row splits into known columns on that and not on a comma."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    best, known = ",", 0
    for sep in (",", ";", "\t"):
        found = sum(column_name(cell.strip('"')) in COLUMNS for cell in first.split(sep))
        if found > known:
            best, known = sep, found
    return best


def read_csv(text: str) -> tuple[list[HostRecord], list[Problem]]:
    """The hosts a CSV text describes, or the problems with it (1-based line numbers)."""
    problems: list[Problem] = []
    text = text.lstrip("\ufeff")
    if not text.strip():
        return [], [Problem("the file is empty", f"start with a header row: {','.join(COLUMNS)}", 1)]
    # strict: an unclosed quote is an error, not the rest of the file read into one cell
    told = re.match(r"sep=(.)\r?\n", text)      # Excel's hint line naming the separator
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=told.group(1) if told else separator(text),
                        strict=True)
    try:
        if told:
            next(reader)
        header = next(reader)
    except StopIteration:
        return [], [Problem("the file is empty", f"start with a header row: {','.join(COLUMNS)}", 1)]
    except csv.Error as exc:
        return [], [Problem(f"not a CSV file: {exc}", "save the sheet as CSV (comma-separated)", 1)]
    at = reader.line_num
    names = [column_name(h) for h in header]
    unknown = [h for h in names if h and h not in COLUMNS]
    if unknown:
        problems.append(Problem(f"unknown column(s): {', '.join(unknown)}", f"columns: {', '.join(COLUMNS)}", at))
    if "host" not in names:
        problems.append(Problem("there is no `host` column", "name the column holding the server ids `host`", at))
    if problems:
        return [], problems
    hosts: dict[str, HostRecord] = {}
    line = reader.line_num
    while True:
        start = line + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(f"cannot read this row: {exc}", "check the quotes in the row", start))
            break
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(hosts) > MAX_ROWS:
            problems.append(Problem(f"more than {MAX_ROWS:,} hosts", "import the file in parts", start))
            break
        if any(cell.strip() for cell in row[len(names):]):     # empty cells past the last column are harmless
            problems.append(Problem(f"{len(row)} cells, the header has {len(names)}",
                                    "remove the extra cells or add a column name", start))
            continue
        stray = next((value for name, value in zip(names, row) if not name and value.strip()), None)
        if stray is not None:
            problems.append(Problem(f"a value ({stray!r}) in a column with no name",
                                    "name the column in the header row, or clear the cell", start))
            continue
        cells = {name: Cell(value, start, name) for name, value in zip(names, row) if name and value.strip()}
        host = cells.pop("host", None)
        if host is None:
            problems.append(Problem("the `host` cell is empty", "write the server id in every row", start))
            continue
        hid = host.text.strip()
        rec = hosts.get(hid)
        if rec is None:
            rec = hosts[hid] = HostRecord(hid, start)
        for col in SERVER_COLUMNS:
            cell = cells.get(col)
            if cell is None:
                continue
            earlier = rec.fields.get(col)
            if earlier is not None and earlier.text.strip() != cell.text.strip():
                problems.append(Problem(f"{col}: {cell.text!r} differs from {earlier.text!r} on line {earlier.line}",
                                        "give a host's own fields one value", start))
            rec.fields[col] = cell
        port = cells.get("port")
        given = {c: cells[c] for c in PORT_COLUMNS if c in cells}
        if port is None:
            if given or "adapter" in cells:
                problems.append(Problem(f"port fields ({', '.join(given) or 'adapter'}) with no `port` name",
                                        "name the port, or leave its cells empty", start))
            continue
        adapter = cells["adapter"].text.strip() if "adapter" in cells else DEFAULT_ADAPTER
        rec.ports.append(PortRecord(adapter, port.text.strip(), start, given))
    return list(hosts.values()), problems
