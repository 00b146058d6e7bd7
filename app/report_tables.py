"""The tables a published test report prints in its appendices, as plain data.

Every function takes a bed and returns `Table`s: system configuration per server model
(the rows of seed 000 Figure 10 and seed 001 Table 10), switches (Figure 11), networks,
cabling and addresses, storage configuration (Figure 13, seed 002 Tables 7-10), the
drive-slot layout coloured by disk group (Figure 14), workload definitions (Figure 15),
scenarios, the run plan and results.  The renderers in `app/appendix.py` turn them into
HTML, Markdown and PDF; the methodology view links cells to components through `Cell.ref`.

No Qt here: the tables are data, so they can be tested and reused without a display.
A value the bed does not give, where the report would print one, is a `Cell` with
`missing=True`; renderers mark it visibly instead of leaving a silent gap.
"""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from topology.capacity import LEVEL_NAMES
from topology.index import BedIndex, parse_member
from topology.model import Bed, Server, StorageArray

MISSING_TEXT = "not set"

# Disk-group colours for the slot map: light enough for black text, distinct side by side.
GROUP_COLOURS = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
                 "#f7b6d2", "#dbdb8d", "#9edae5", "#fdd0a2", "#b5cf6b", "#e7ba52")
SPARE_COLOUR = "#ffffff"
EMPTY_COLOUR = "#d0d0d0"
UNASSIGNED_COLOUR = "#f0f0f0"


@dataclass
class Cell:
    text: str = ""
    missing: bool = False
    ref: str = ""            # subject id the value belongs to (selection / anchors)
    fill: str = ""           # background colour
    mono: bool = False
    bold: bool = False

    def key(self) -> tuple[str, bool]:
        return (self.text, self.missing)


@dataclass
class Row:
    cells: list[Cell]
    group: str = ""          # a row-group heading spanning the table ("CPU", "Platform")


@dataclass
class Table:
    key: str                 # stable anchor, unique within an appendix
    title: str
    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    kind: str = "grid"       # grid | keyvalue | slotmap
    note: str = ""
    widths: list[int] = field(default_factory=list)    # percent per column; empty = automatic
    compact: bool = False    # small type (slot maps, wide tables)

    def add(self, *cells: Cell | str) -> None:
        self.rows.append(Row([c if isinstance(c, Cell) else Cell(str(c)) for c in cells]))

    def add_group(self, title: str) -> None:
        self.rows.append(Row([], group=title))

    def texts(self) -> list[str]:
        return [c.text for r in self.rows for c in r.cells] + [r.group for r in self.rows if r.group]


def missing(ref: str = "") -> Cell:
    return Cell(MISSING_TEXT, missing=True, ref=ref)


# ------------------------------------------------------------------ value formatting

_ACRONYMS = {
    "iscsi": "iSCSI", "lldp": "LLDP", "ip": "IP", "mtu": "MTU", "sriov": "SR-IOV", "numa": "NUMA",
    "os": "OS", "vm": "VM", "vms": "VMs", "lun": "LUN", "dns": "DNS", "hba": "HBA", "cpu": "CPU",
    "iops": "IOPS", "gb": "GB", "mb": "MB", "kb": "KB", "tb": "TB", "id": "ID", "db": "DB", "dag": "DAG",
    "bdm": "BDM", "opm": "OPM", "ssd": "SSD", "ds2": "DS2", "lso": "LSO", "vmq": "VMQ", "rss": "RSS",
    "csv": "CSV", "lan": "LAN", "san": "SAN", "fc": "FC", "rstp": "RSTP", "stp": "STP", "vhd": "VHD",
    "vhdx": "VHDX", "ese": "ESE", "url": "URL", "bios": "BIOS", "ms": "ms", "lacp": "LACP", "lag": "LAG",
    "odx": "ODX", "mpio": "MPIO", "dsm": "DSM", "wwpn": "WWPN", "ha": "HA", "vlan": "VLAN", "nic": "NIC",
    "nics": "NICs", "raid": "RAID", "hyperv": "Hyper-V", "pct": "(%)", "io": "I/O", "sql": "SQL", "iis": "IIS", "fsct": "FSCT", "dc": "DC", "ad": "AD",
}
_ROLE_NAMES = {"iscsi": "iSCSI", "lan": "LAN", "heartbeat": "heartbeat", "live_migration": "live migration",
               "management": "management", "vm": "VM traffic", "fc": "FC", "replication": "replication",
               "unused": "unused"}
_SERVER_ROLES = {"hypervisor": "Hypervisor host", "infrastructure": "Infrastructure server",
                 "load_client": "Load client", "test_controller": "Test controller",
                 "management": "Management server", "application": "Application server"}
_CONNECTIVITY = {"iscsi": "iSCSI", "fc": "Fibre Channel", "sas": "SAS", "nfs": "NFS", "smb": "SMB"}


def humanize(key: Any) -> str:
    """'iscsi_optimization' -> 'iSCSI optimization'; a report's own label is kept as written."""
    text = str(key)
    if " " in text or any(ch.isupper() for ch in text):
        return text
    words = [w for w in re.split(r"[_\-]+", text) if w]
    out = [_ACRONYMS.get(w.lower(), w) for w in words]
    if out and out[0] == out[0].lower():
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


def number(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float):
        if value.is_integer():
            value = int(value)
        else:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 1000 else str(value)
    return str(value)


def gb(value: float | None) -> str:
    if value is None:
        return ""
    if value and value < 1:
        return f"{number(value * 1024)} MB"
    return f"{number(float(value))} GB"


def rpm(value: int | None) -> str:
    return f"{value:,} RPM" if value else ""


def setting(value: Any) -> str:
    """Settings read as a report prints them: booleans become Enabled / Disabled."""
    if isinstance(value, bool):
        return "Enabled" if value else "Disabled"
    return flat(value)


def flat(value: Any) -> str:
    """Any parameter value as one line of text (lists joined, small mappings inlined)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(flat(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{humanize(k)}: {flat(v)}" for k, v in value.items())
    return " ".join(str(value).split())


def roles(values: Iterable[str]) -> str:
    return ", ".join(_ROLE_NAMES.get(r, r) for r in values)


def raid_name(level: str) -> str:
    return LEVEL_NAMES.get(level, level.upper() if level else "")


def natural(text: str) -> list:
    """Sort key: host2 before host10."""
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", str(text))]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def value_cell(value: Any, ref: str = "", required: bool = False, fmt=None) -> Cell | None:
    """A cell for a value; None for an optional value the bed leaves out."""
    empty = value is None or value == "" or value == [] or value == {}
    if empty:
        return missing(ref) if required else None
    return Cell(fmt(value) if fmt else flat(value), ref=ref)


# ------------------------------------------------------------------ Appendix A: servers

GROUP_ORDER = ("System", "General dimension information", "Power supplies", "Cooling fans",
               "General processor setup", "CPU", "Platform", "Memory modules", "Hard disk",
               "Operating system", "Network card/subsystem", "Host bus adapters", "Software",
               "Optical drive", "USB ports")
OTHER_GROUP = "Additional information"


def _server_rows(s: Server) -> dict[str, dict[str, Cell]]:
    """group -> label -> cell for one server, modelled values first, then its `attributes`."""
    groups: dict[str, dict[str, Cell]] = defaultdict(dict)

    def put(group: str, label: str, cell: Cell | None) -> None:
        if cell is not None:
            groups[group][label] = cell

    put("System", "Role", Cell(_SERVER_ROLES.get(s.role, humanize(s.role)), ref=s.id))
    cpu = s.cpu
    put("General processor setup", "Number of processor packages",
        value_cell(cpu.sockets if cpu else None, s.id, True))
    put("General processor setup", "Number of cores per processor package",
        value_cell(cpu.cores_per_socket if cpu else None, s.id, True))
    put("General processor setup", "Number of hardware threads per core",
        value_cell(cpu.threads_per_core if cpu else None, s.id, True))
    if cpu and cpu.cores:
        put("General processor setup", "Total cores / hardware threads", Cell(f"{cpu.cores} / {cpu.threads}", ref=s.id))
    put("CPU", "Name", value_cell(cpu.model if cpu else None, s.id, True))
    put("CPU", "Core frequency (GHz)", value_cell(cpu.ghz if cpu else None, s.id))
    put("Platform", "Vendor and model number", value_cell(s.model, s.id, True))
    if s.chassis:
        put("Platform", "Blade chassis / bay", Cell(f"{s.chassis}" + (f", bay {s.bay}" if s.bay is not None else ""),
                                                    ref=s.chassis))
    if s.bios:
        put("Platform", "BIOS settings", Cell("; ".join(f"{humanize(k)}: {setting(v)}" for k, v in s.bios.items()),
                                              ref=s.id))
    put("Memory modules", "Total RAM in system (GB)", value_cell(s.memory_gb, s.id, True))
    put("Memory modules", "NUMA nodes", value_cell(s.numa_nodes, s.id))
    for i, d in enumerate(s.local_disks):
        pre = f"Disk set {i + 1}: " if len(s.local_disks) > 1 else ""
        put("Hard disk", pre + "Vendor and model number", value_cell(d.model, s.id, True))
        put("Hard disk", pre + "Number of disks in system", Cell(str(d.count), ref=s.id))
        put("Hard disk", pre + "Size (GB)", value_cell(d.size_gb, s.id, True))
        put("Hard disk", pre + "RPM", value_cell(d.rpm, s.id, d.media == "hdd", fmt=number))
        kind = " ".join(x for x in (d.interface.upper() if d.interface else "", d.media.upper()) if x)
        put("Hard disk", pre + "Type", Cell(kind, ref=s.id))
        put("Hard disk", pre + "RAID", value_cell(d.raid, s.id))
    put("Operating system", "Name", value_cell(s.os, s.id, True))
    put("Operating system", "Hypervisor", value_cell(s.hypervisor, s.id))
    put("Operating system", "Multipath software", value_cell(s.multipath, s.id))
    put("Operating system", "Domain", value_cell(s.domain, s.id))
    for ad in s.adapters:
        group = "Network card/subsystem" if ad.kind in ("ethernet", "management", "infiniband") else "Host bus adapters"
        desc = ", ".join(x for x in (ad.model, "integrated" if ad.integrated else "",
                                     f"firmware {ad.firmware}" if ad.firmware else "") if x)
        put(group, f"{ad.name}: vendor and model number", Cell(desc, ref=f"{s.id}:{ad.ports[0].name}" if ad.ports else s.id)
            if ad.model else missing(s.id))
        if ad.ports:
            parts = []
            for p in ad.ports:
                speed = f"{number(p.speed_gbps)} Gb " if p.speed_gbps else ""
                parts.append(f"{p.name} ({speed}{roles(p.roles) or p.kind})")
            put(group, f"{ad.name}: ports", Cell(f"{len(ad.ports)}: " + ", ".join(parts), ref=s.id))
    if s.software:
        put("Software", "Installed software", Cell("; ".join(s.software), ref=s.id))
    for k, v in s.settings.items():
        put("Software", humanize(k), Cell(setting(v), ref=s.id))
    for key, value in s.attributes.items():
        if isinstance(value, dict):
            target = groups[str(key)]
            for label, v in value.items():
                label = str(label)
                # the drawing's value wins over a copied report row with the same label
                if not _has_label(target, label) or target[_label_key(target, label)].missing:
                    target.pop(_label_key(target, label), None)
                    target[label] = Cell(flat(v), ref=s.id)
        else:
            groups[OTHER_GROUP].setdefault(str(key), Cell(flat(value), ref=s.id))
    return groups


def _label_key(group: dict[str, Cell], label: str) -> str:
    low = label.lower()
    return next((k for k in group if k.lower() == low), label)


def _has_label(group: dict[str, Cell], label: str) -> bool:
    low = label.lower()
    return any(k.lower() == low for k in group)


def _ordered_groups(names: Iterable[str]) -> list[str]:
    seen = list(dict.fromkeys(names))
    known = [g for g in GROUP_ORDER if g in seen]
    rest = [g for g in seen if g not in GROUP_ORDER and g != OTHER_GROUP]
    return known + rest + ([OTHER_GROUP] if OTHER_GROUP in seen else [])


def server_models(bed: Bed) -> list[tuple[str, list[Server]]]:
    """Servers grouped the way reports tabulate them: one table per model (simulated apart)."""
    by: dict[str, list[Server]] = defaultdict(list)
    for s in bed.servers:
        name = s.model or "Server model not set"
        by[name + (" (simulated)" if s.simulated else "")].append(s)
    return list(by.items())


MAX_SERVER_COLUMNS = 4


def server_tables(bed: Bed) -> list[Table]:
    tables = []
    for model, servers in server_models(bed):
        per = {s.id: _server_rows(s) for s in servers}
        order: list[tuple[str, str]] = []
        for g in _ordered_groups(g for rows in per.values() for g in rows):
            labels = list(dict.fromkeys(label for rows in per.values() for label in rows.get(g, {})))
            order += [(g, label) for label in labels]

        def cell(sid: str, g: str, label: str) -> Cell:
            return per[sid].get(g, {}).get(label) or Cell("")

        differing = [(g, label) for g, label in order
                     if len({cell(s.id, g, label).key() for s in servers}) > 1]
        ids = [s.id for s in servers]
        title = f"System configuration: {model}"
        if differing and len(servers) <= MAX_SERVER_COLUMNS:
            t = Table(f"servers-{slug(model)}", title, ["System"] + ids, kind="keyvalue")
            _fill_groups(t, order, lambda g, label: [cell(sid, g, label) for sid in ids])
            tables.append(t)
            continue
        t = Table(f"servers-{slug(model)}", title, ["System", model], kind="keyvalue", widths=[38, 62])
        t.add(Cell("Servers", bold=True), Cell(", ".join(ids) + (f" ({len(ids)})" if len(ids) > 2 else ""),
                                                ref=ids[0] if len(ids) == 1 else ""))
        common = [k for k in order if k not in differing]
        _fill_groups(t, common, lambda g, label: [cell(ids[0], g, label)])
        tables.append(t)
        if differing:
            labels = [label for _, label in differing]
            if len(labels) <= 5:
                d = Table(f"servers-{slug(model)}-each", f"Per-server values: {model}", ["Server"] + labels,
                          compact=len(labels) > 3)
                for s in servers:
                    d.add(Cell(s.id, ref=s.id, bold=True), *[cell(s.id, g, label) for g, label in differing])
            else:
                d = Table(f"servers-{slug(model)}-each", f"Per-server values: {model}", ["Server", "Item", "Value"],
                          widths=[18, 32, 50])
                for s in servers:
                    first = True
                    for g, label in differing:
                        c = cell(s.id, g, label)
                        if c.text or c.missing:
                            d.add(Cell(s.id if first else "", ref=s.id, bold=True), label, c)
                            first = False
            tables.append(d)
    return tables


def _fill_groups(t: Table, order: list[tuple[str, str]], values) -> None:
    current = None
    for g, label in order:
        if g != current:
            current = g
            if g != "System":
                t.add_group(g)
        t.rows.append(Row([Cell(label)] + values(g, label)))


def vm_table(bed: Bed) -> Table | None:
    if not bed.vms:
        return None
    t = Table("vms", "Virtual machines: guests to host placement",
              ["Host", "VM", "Purpose", "vCPU", "Memory", "Storage", "Network adapters"], compact=True,
              widths=[10, 14, 22, 6, 10, 24, 14])
    previous = None
    for vm in sorted(bed.vms, key=lambda v: (natural(v.host), natural(v.id))):
        mem = gb(vm.memory_gb)
        if vm.dynamic_memory:
            dm = vm.dynamic_memory
            mem += " dynamic" + (f" ({gb(dm.min_gb)}-{gb(dm.max_gb)})" if dm.min_gb and dm.max_gb else "")
        disks = "; ".join(
            " ".join(x for x in (d.name, gb(d.size_gb), d.type, d.format.upper() if d.format else "",
                                 f"on {d.volume}" if d.volume else ("local" if d.local else "")) if x)
            for d in vm.disks)
        nics = ", ".join(f"{n.name}" + (f" {n.address}" if n.address else "") for n in vm.nics)
        host = (Cell(vm.host if vm.host != previous else "", ref=vm.host) if vm.host else missing(vm.id))
        previous = vm.host
        t.add(host, Cell(vm.id, ref=vm.id, bold=True), vm.role, str(vm.vcpu), mem, disks, nics)
    return _without_empty_columns(t, keep=len(t.columns), first=2)


def cluster_table(bed: Bed) -> Table | None:
    if not bed.clusters:
        return None
    t = Table("clusters", "Failover clusters", ["Cluster", "Nodes", "Address", "Quorum", "Witness", "Shared volumes"],
              compact=True)
    for c in bed.clusters:
        t.add(Cell(c.id, ref=c.id, bold=True), ", ".join(c.nodes),
              Cell(c.address, ref=c.id) if c.address else missing(c.id), humanize(c.quorum) if c.quorum else "",
              c.witness, ", ".join(c.shared_volumes))
    return t


# ------------------------------------------------------------------ Appendix B: switches and networks

MAX_SWITCH_COLUMNS = 4


def switch_tables(bed: Bed) -> list[Table]:
    tables = []
    switches = list(bed.switches)
    for start in range(0, len(switches), MAX_SWITCH_COLUMNS):
        chunk = switches[start:start + MAX_SWITCH_COLUMNS]
        rows: dict[str, dict[str, Cell]] = defaultdict(dict)
        for sw in chunk:
            r = rows

            def put(label: str, cell: Cell | None, sw=sw, r=r) -> None:
                if cell is not None:
                    r[label][sw.id] = cell
            put("Vendor and model number", value_cell(sw.model, sw.id, True))
            put("Type", Cell("Fibre Channel" if sw.kind == "fc" else "Ethernet", ref=sw.id))
            put("Firmware", value_cell(sw.firmware, sw.id))
            put("Ports", value_cell(sw.port_count or (len(sw.ports) or None), sw.id))
            put("Frame size (MTU)", value_cell(sw.mtu, sw.id, sw.kind == "ethernet", fmt=str))
            put("Flow control", value_cell(sw.flow_control, sw.id, sw.kind == "ethernet", fmt=setting))
            put("Spanning tree", value_cell(sw.spanning_tree, sw.id))
            put("VLANs", value_cell(sw.vlans, sw.id, fmt=lambda v: ", ".join(map(str, v))))
            put("Fabric", value_cell(sw.fabric, sw.id))
            put("Networks carried", value_cell(sw.roles, sw.id, fmt=roles))
            put("Blade chassis", value_cell(sw.chassis, sw.chassis))
            for k, v in sw.settings.items():
                put(humanize(k), Cell(setting(v), ref=sw.id))
            if sw.simulated:
                put("Simulated", Cell("Yes (a setting of the test tool only)", ref=sw.id))
        ids = [sw.id for sw in chunk]
        t = Table(f"switches-{start // MAX_SWITCH_COLUMNS + 1}", "Switch configuration",
                  ["Switch"] + [sw.label or sw.id for sw in chunk], kind="keyvalue")
        for label, vals in rows.items():
            t.add(label, *[vals.get(i, Cell("")) for i in ids])
        tables.append(t)
    return tables


def network_table(bed: Bed) -> Table | None:
    if not bed.networks:
        return None
    t = Table("networks", "Networks", ["Network", "Subnet", "VLAN", "Purpose", "MTU", "Cluster use"])
    for n in bed.networks:
        t.add(Cell(n.id, ref=n.id, bold=True), Cell(n.cidr, mono=True) if n.cidr else missing(n.id),
              str(n.vlan) if n.vlan is not None else "", roles([n.role]), str(n.mtu) if n.mtu else "",
              humanize(n.cluster_use) if n.cluster_use else "")
    return t


def connection_table(bed: Bed) -> Table | None:
    if not bed.links:
        return None
    t = Table("connections", "Cabling: connections between devices", ["From", "To", "Kind", "Note"],
              widths=[28, 28, 10, 34], compact=True)
    for link in bed.links:
        t.add(Cell(link.a, ref=link.a, mono=True), Cell(link.b, ref=link.b, mono=True), link.kind, flat(link.note)[:160])
    return t


_ADDRESSED_ROLES = {"iscsi", "lan", "heartbeat", "live_migration", "management", "replication"}


def address_table(bed: Bed) -> Table:
    """Every address of the bed: device, port, address, network, MTU, VLAN, purpose.
    Ports whose role needs an address but have none are listed with the gap marked."""
    idx = BedIndex(bed)
    t = Table("addresses", "Address table", ["Device", "Port", "Address", "Network", "MTU", "VLAN", "Purpose"],
              widths=[15, 22, 19, 13, 7, 7, 17], compact=True)

    def port_row(device: str, p: Any, ref: str, mtu: int | None) -> None:
        net = idx.networks.get(p.network) if getattr(p, "network", "") else None
        vlan = p.vlan if getattr(p, "vlan", None) is not None else (net.vlan if net else None)
        addr = p.address or getattr(p, "wwpn", "")
        if not addr:
            kind = getattr(p, "kind", "ethernet")
            needs = kind in ("ethernet", "management") and (set(getattr(p, "roles", [])) & _ADDRESSED_ROLES
                                                            or getattr(p, "network", ""))
            if not needs:
                return
        name = p.name + (f" ({p.label})" if getattr(p, "label", "") else "")
        t.add(Cell(device, ref=device, bold=True), Cell(name, ref=ref),
              Cell(addr, ref=ref, mono=True) if addr else missing(ref),
              Cell(p.network, ref=p.network) if getattr(p, "network", "") else "",
              str(mtu) if mtu else "", str(vlan) if vlan is not None else "",
              roles(getattr(p, "roles", None) or [getattr(p, "role", "")]))

    for s in bed.servers:
        if s.management_address:
            t.add(Cell(s.id, ref=s.id, bold=True), Cell("management", ref=s.id),
                  Cell(s.management_address, ref=s.id, mono=True), "", "", "", "management")
        for ref, p in idx.server_ports(s):
            pr = idx.ports.get(ref)
            port_row(s.id, p, ref, idx.effective_mtu(pr) if pr else p.mtu)
    for a in bed.arrays:
        for ref, p, _c in idx.array_ports(a):
            pr = idx.ports.get(ref)
            port_row(a.id, p, ref, idx.effective_mtu(pr) if pr else p.mtu)
    for sw in bed.switches:
        for p in sw.ports:
            if p.address:
                port_row(sw.id, p, f"{sw.id}:{p.name}", p.mtu or sw.mtu)
    for vm in bed.vms:
        for n in vm.nics:
            if n.address:
                ref = f"{vm.id}:{n.name}"
                net = idx.networks.get(n.network)
                t.add(Cell(vm.id, ref=vm.id, bold=True), Cell(n.name, ref=ref), Cell(n.address, ref=ref, mono=True),
                      Cell(n.network, ref=n.network) if n.network else "",
                      str(n.mtu or (net.mtu if net else "")) if (n.mtu or (net and net.mtu)) else "",
                      str(net.vlan) if net and net.vlan is not None else "", roles([n.role]))
    for c in bed.clusters:
        t.add(Cell(c.id, ref=c.id, bold=True), Cell("cluster address", ref=c.id),
              Cell(c.address, ref=c.id, mono=True) if c.address else missing(c.id), "", "", "", "cluster name")
    return t


# ------------------------------------------------------------------ Appendix D: storage

def _disks_by_interface(scope) -> dict[str, list]:
    by: dict[str, list] = defaultdict(list)
    for d in scope.disks.values():
        by[(d.spec.interface or d.spec.media).upper()].append(d)
    return by


def _disk_kind(spec) -> str:
    parts = [gb(spec.size_gb), rpm(spec.rpm) if spec.media == "hdd" else "",
             (spec.interface or "").upper(), spec.media.upper() if spec.media != "hdd" else ""]
    return " ".join(p for p in parts if p)


def _short_disk(spec) -> str:
    """'300G 15K' / '800G SSD': what fits under a slot number."""
    size = spec.size_gb
    text = f"{number(size / 1000)}T" if size >= 1000 else f"{number(size)}G"
    if spec.media != "hdd":
        return f"{text} {spec.media.upper()}"
    return f"{text} {spec.rpm / 1000:g}K" if spec.rpm else text


def _spare_slots(a: StorageArray) -> set[tuple[str, int]]:
    out = set()
    for spec in a.spares:
        try:
            enc, slots = parse_member(spec)
        except ValueError:
            continue
        out.update((enc, s) for s in slots)
    return out


def storage_tables(bed: Bed) -> list[Table]:
    from topology.capacity import group_usable, pool_usable, volume_sizes
    idx = BedIndex(bed)
    try:
        sizes = volume_sizes(idx)
    except Exception:  # noqa: BLE001 - a bed with broken references still prints its tables
        sizes = {}
    link_ends: dict[str, set[str]] = defaultdict(set)
    for link in bed.links:
        for mine, other in ((link.a, link.b), (link.b, link.a)):
            dev = idx.endpoint_device(mine)
            peer = idx.endpoint_device(other)
            if dev is not None and peer is not None:
                link_ends[dev.id].add(peer.id)
    links_of = defaultdict(int)
    for link in bed.links:
        for end in (link.a, link.b):
            dev = idx.endpoint_device(end)
            if dev is not None:
                links_of[dev.id] += 1
    mapped_to: dict[tuple[str, str], list[str]] = defaultdict(list)
    for a in bed.arrays:
        for m in a.mappings:
            mapped_to[(a.id, m.volume)].append(m.to + (f" (LUN {m.lun})" if m.lun is not None else ""))

    tables: list[Table] = []
    for a in bed.arrays:
        scope = idx.scopes[a.id]
        ref = a.id
        t = Table(f"storage-{slug(a.id)}", f"Storage configuration: {a.id}", ["Storage", a.id], kind="keyvalue",
                  widths=[40, 60])
        rows: dict[str, Cell] = {}
        rows["Storage hardware"] = value_cell(a.model, ref, True)
        if a.simulated:
            rows["Simulated"] = Cell("Yes: exists only as a setting of the test tool", ref=ref)
        conn = a.connectivity or _guess_connectivity(a)
        rows["Storage connectivity"] = value_cell(_CONNECTIVITY.get(conn, conn), ref, True)
        rows["Storage model and OS/firmware revision"] = (
            Cell(", ".join(x for x in (a.model, f"firmware {a.firmware}" if a.firmware else "") if x), ref=ref)
            if a.firmware else missing(ref))
        caches = [c.cache_gb for c in a.controllers if c.cache_gb is not None]
        if caches:
            total = sum(caches)
            rows["Storage cache"] = Cell(f"{gb(total)} ({len(caches)} x {gb(caches[0])})"
                                         if len(set(caches)) == 1 and len(caches) > 1 else gb(total), ref=ref)
        sw = sorted(x for x in link_ends.get(a.id, ()) if x in idx.switches)
        if sw:
            models = sorted({f"{idx.switches[s].model or s}" for s in sw})
            rows["Network switch"] = Cell(", ".join(models) + f" ({', '.join(sw)})", ref=sw[0])
        if links_of.get(a.id):
            rows["Number of connections from storage"] = Cell(str(links_of[a.id]), ref=ref)
        rows["Number of storage controllers"] = Cell(str(len(a.controllers)), ref=ref) if a.controllers else missing(ref)
        host_ports = [(p, c) for c in a.controllers for p in c.ports if p.kind not in ("management", "sas")
                      or set(p.roles) & {"iscsi", "fc"}]
        if host_ports:
            speeds = sorted({number(p.speed_gbps) for p, _ in host_ports if p.speed_gbps})
            kinds = sorted({_CONNECTIVITY.get(r, r) for p, _ in host_ports for r in p.roles if r in ("iscsi", "fc")})
            rows["Number of storage ports"] = Cell(
                f"{len(host_ports)}" + (f" x {'/'.join(speeds)} Gb" if speeds else "")
                + (f" {', '.join(kinds)}" if kinds else "") + f" ({len(a.controllers)} controllers)", ref=ref)
        for iface, disks in sorted(_disks_by_interface(scope).items()):
            kinds = defaultdict(int)
            for d in disks:
                kinds[(_disk_kind(d.spec), d.spec.model)] += 1
            rows[f"{iface} drives"] = Cell("; ".join(f"{n} x {k}" + (f" ({m})" if m else "")
                                                     for (k, m), n in kinds.items()), ref=ref)
        rows["Total number of disks tested in solution"] = Cell(str(len(scope.disks)), ref=ref) if scope.disks \
            else (missing(ref) if not a.simulated else Cell("0 (simulated)", ref=ref))
        if a.max_disks:
            rows["Maximum number of spindles"] = Cell(str(a.max_disks), ref=ref)
        spares = _spare_slots(a)
        rows["Hot spares"] = Cell(f"{len(spares)} ({', '.join(a.spares)})" if spares else "None", ref=ref)
        levels = list(dict.fromkeys(raid_name(g.raid) for g in a.disk_groups))
        if levels:
            rows["RAID technology"] = Cell(", ".join(levels), ref=ref)
        usable = sum(group_usable(scope, g) for g in a.disk_groups if not g.pool)
        usable += sum(pool_usable(scope, p.name) for p in a.pools)
        if usable:
            rows["Usable capacity (GB)"] = Cell(number(round(usable, 1)), ref=ref)
        if a.group:
            rows["Array group"] = Cell(a.group, ref=ref)
        for label, cell in rows.items():
            if cell is not None:
                t.add(label, cell)
        _attribute_rows(t, a.attributes, ref, rows)
        tables.append(t)

        ports = [(c, p) for c in a.controllers for p in c.ports]
        if ports:
            pt = Table(f"storage-{slug(a.id)}-ports", f"Controllers and ports: {a.id}",
                       ["Controller", "Cache", "Mode", "Port", "Kind", "Speed", "Purpose", "Address"],
                       widths=[14, 8, 8, 16, 10, 8, 14, 22], compact=True)
            for c, p in ports:
                label = p.name + (f" ({p.label})" if p.label else "")
                pref = f"{a.id}:{p.name}"
                needs = p.kind == "ethernet" and set(p.roles) & _ADDRESSED_ROLES
                addr = p.address or p.wwpn
                pt.add(Cell(c.name, ref=a.id), gb(c.cache_gb), c.mode, Cell(label, ref=pref), p.kind,
                       f"{number(p.speed_gbps)} Gb" if p.speed_gbps else "", roles(p.roles),
                       Cell(addr, ref=pref, mono=True) if addr else (missing(pref) if needs else ""))
            tables.append(pt)

        if a.disk_groups:
            gt = Table(f"storage-{slug(a.id)}-groups", f"Disk groups: {a.id}",
                       ["Group", "RAID", "Disks", "Slots", "Owner", "Pool", "Usable (GB)", "Contents"],
                       widths=[14, 12, 20, 12, 10, 8, 8, 16], compact=True)
            for g in a.disk_groups:
                disks = scope.group_disks(g)
                kinds = defaultdict(int)
                for d in disks:
                    kinds[_disk_kind(d.spec)] += 1
                desc = "; ".join(f"{n} x {k}" for k, n in kinds.items()) or ""
                gref = f"{a.id}:group:{g.name}"
                level = raid_name(g.raid) + (f" ({g.geometry})" if g.geometry else "")
                contents = ", ".join(v.name for v in a.volumes if v.group == g.name)
                gt.add(Cell(g.name + (f" ({g.label})" if g.label else ""), ref=gref, bold=True),
                       Cell(level, ref=gref), Cell(desc, ref=gref) if desc else missing(gref),
                       ", ".join(g.members), g.owner, g.pool, number(round(group_usable(scope, g), 1)), contents)
            tables.append(gt)

        if a.pools:
            pl = Table(f"storage-{slug(a.id)}-pools", f"Pools: {a.id}",
                       ["Pool", "Provisioning", "Disk groups", "Purpose", "Capacity (GB)"], compact=True,
                       widths=[16, 12, 44, 14, 14])
            for p in a.pools:
                groups = [g.name for g in scope.pool_groups(p.name)]
                pl.add(Cell(p.name, ref=f"{a.id}:pool:{p.name}", bold=True), p.provisioning,
                       _compress_names(groups) or (raid_name(p.raid) + " policy" if p.raid else ""),
                       ", ".join(p.purpose), number(round(pool_usable(scope, p.name), 1)))
            tables.append(pl)

        if a.volumes:
            vt = Table(f"storage-{slug(a.id)}-volumes", f"Volumes (LUNs): {a.id}",
                       ["Volume", "In", "Size (GB)", "Purpose", "Owner", "Drive", "Presented to"],
                       widths=[17, 12, 10, 14, 10, 17, 20], compact=True)
            for v in a.volumes:
                vref = f"{a.id}:{v.name}"
                size = sizes.get(vref, v.size_gb)
                size_cell = Cell(number(round(size, 1)) + (" (rest)" if v.remainder and v.size_gb is None else "")
                                 + (" thin" if v.provisioning == "thin" else ""), ref=vref) \
                    if size is not None else missing(vref)
                vt.add(Cell(v.name + (f" ({v.label})" if v.label else ""), ref=vref, bold=True),
                       v.group or v.pool or "", size_cell, ", ".join(v.purpose), v.owner, Cell(v.drive, mono=True),
                       "; ".join(mapped_to.get((a.id, v.name), [])))
            tables.append(vt)

        if a.hosts or a.host_groups:
            ht = Table(f"storage-{slug(a.id)}-hosts", f"Host access: {a.id}",
                       ["Array host", "Server", "Host type", "Host group", "Initiators"], compact=True)
            for h in a.hosts:
                ht.add(Cell(h.name, bold=True), Cell(h.server, ref=h.server) if h.server else "", h.host_type,
                       h.host_group, Cell(", ".join(h.initiators), mono=True))
            for hg in a.host_groups:
                if not any(h.host_group == hg.name for h in a.hosts):
                    ht.add(Cell("(host group)", bold=True), "", "", hg.name, "")
            tables.append(ht)

    tables = [t if t.kind != "grid" else _without_empty_columns(t, keep=len(t.columns), first=1) for t in tables]
    if bed.replications:
        rt = Table("replication", "Replication", ["Source", "Target", "Kind", "Links"], compact=True)
        for r in bed.replications:
            rt.add(Cell(r.source, ref=r.source), Cell(r.target, ref=r.target), r.kind,
                   number(r.links) if r.links is not None else "")
        tables.append(rt)
    return tables


def _guess_connectivity(a: StorageArray) -> str:
    kinds = {r for c in a.controllers for p in c.ports for r in p.roles}
    if "iscsi" in kinds:
        return "iscsi"
    if "fc" in kinds:
        return "fc"
    return ""


def _compress_names(names: list[str]) -> str:
    """RG1, RG2, ..., RG48 -> 'RG1-RG48 (48)': long group lists stay readable."""
    if len(names) <= 6:
        return ", ".join(names)
    return f"{names[0]} ... {names[-1]} ({len(names)} groups)"


def _attribute_rows(t: Table, attributes: dict, ref: str, existing: dict[str, Cell | None]) -> None:
    have = {k.lower() for k, v in existing.items() if v is not None}
    flat_items = [(k, v) for k, v in attributes.items() if not isinstance(v, dict)]
    for k, v in flat_items:
        if str(k).lower() not in have:
            t.add(str(k), Cell(flat(v), ref=ref))
    for k, v in attributes.items():
        if isinstance(v, dict):
            t.add_group(str(k))
            for label, value in v.items():
                t.add(str(label), Cell(flat(value), ref=ref))


# ------------------------------------------------------------------ Appendix E: storage layout

def group_colours(a: StorageArray) -> dict[str, str]:
    return {g.name: GROUP_COLOURS[i % len(GROUP_COLOURS)] for i, g in enumerate(a.disk_groups)}


SLOTS_PER_ROW = 16


def slot_map_tables(bed: Bed) -> list[Table]:
    """Per array: the drive slots of every enclosure, coloured by disk group, and a legend."""
    idx = BedIndex(bed)
    tables = []
    for a in bed.arrays:
        scope = idx.scopes[a.id]
        if not a.enclosures:
            continue
        colours = group_colours(a)
        owner: dict[tuple[str, int], str] = {}
        for g in a.disk_groups:
            for key in scope.members(g.members):
                owner.setdefault(key, g.name)
        spares = _spare_slots(a)
        width = min(max((e.slots for e in a.enclosures), default=1), SLOTS_PER_ROW)
        if width > 12 and max(e.slots for e in a.enclosures) > SLOTS_PER_ROW:
            width = 12
        t = Table(f"slots-{slug(a.id)}", f"Drive-slot layout: {a.id}", ["Enclosure"] + [""] * width,
                  kind="slotmap", compact=True)
        for e in a.enclosures:
            for start in range(0, max(e.slots, 1), width):
                label = e.name if e.slots <= width else f"{e.name} {start}-{min(start + width, e.slots) - 1}"
                cells = [Cell(label, bold=True, ref=a.id)]
                for s in range(start, start + width):
                    if s >= e.slots:
                        cells.append(Cell(""))
                        continue
                    sref = f"{a.id}:{e.name}:{s}"
                    disk = scope.disks.get((e.name, s))
                    group = owner.get((e.name, s))
                    if disk is None:
                        cells.append(Cell(f"{s}\nEMPTY", fill=EMPTY_COLOUR, ref=sref))
                    elif (e.name, s) in spares:
                        cells.append(Cell(f"{s}\nspare\n{_short_disk(disk.spec)}", fill=SPARE_COLOUR, ref=sref,
                                          bold=True))
                    elif group:
                        cells.append(Cell(f"{s}\n{group}\n{_short_disk(disk.spec)}", fill=colours[group],
                                          ref=f"{a.id}:group:{group}"))
                    else:
                        cells.append(Cell(f"{s}\nfree\n{_short_disk(disk.spec)}", fill=UNASSIGNED_COLOUR, ref=sref))
                t.rows.append(Row(cells))
        tables.append(t)
        legend = Table(f"slots-{slug(a.id)}-legend", f"Disk groups of {a.id}: legend",
                       ["", "Group", "RAID", "Drives", "Slots", "Owner", "Contents"],
                       widths=[4, 14, 14, 22, 14, 12, 20], compact=True)
        for g in a.disk_groups:
            disks = scope.group_disks(g)
            kinds = defaultdict(int)
            for d in disks:
                kinds[_disk_kind(d.spec)] += 1
            contents = ", ".join(v.name + (f" ({', '.join(v.purpose)})" if v.purpose else "")
                                 for v in a.volumes if v.group == g.name) or (f"pool {g.pool}" if g.pool else "")
            gref = f"{a.id}:group:{g.name}"
            legend.add(Cell("", fill=colours[g.name]), Cell(g.name + (f" ({g.label})" if g.label else ""), ref=gref,
                                                             bold=True),
                       raid_name(g.raid) + (f" {g.geometry}" if g.geometry else ""),
                       "; ".join(f"{n} x {k}" for k, n in kinds.items()) or missing(gref),
                       ", ".join(g.members), g.owner, contents)
        if spares:
            legend.add(Cell("", fill=SPARE_COLOUR), Cell("Hot spare", bold=True), "", str(len(spares)),
                       ", ".join(a.spares), "", "")
        empty = sum(1 for e in a.enclosures for s in range(e.slots) if (e.name, s) not in scope.disks)
        if empty:
            legend.add(Cell("", fill=EMPTY_COLOUR), Cell("Empty slot", bold=True), "", str(empty), "", "", "")
        tables.append(legend)
    return tables


# ------------------------------------------------------------------ workloads, scenarios, run plan

def workload_tables(bed: Bed) -> list[Table]:
    tables = []
    for w in bed.workloads:
        t = Table(f"workload-{slug(w.id)}", f"Workload: {w.id}", ["Parameter", "Value"], kind="keyvalue",
                  widths=[32, 68], compact=True)
        t.add("Tool", Cell(w.tool, ref=w.id) if w.tool else missing(w.id))
        t.add("Targets", Cell(_compress_names(list(w.targets)) if len(w.targets) > 12 else ", ".join(w.targets),
                              ref=w.targets[0] if w.targets else "") if w.targets else missing(w.id))
        if w.driver:
            t.add("Driven from", Cell(w.driver, ref=w.driver))
        if w.demand_iops is not None:
            t.add("Demand (IOPS)", number(w.demand_iops))
        if w.read_pct is not None:
            t.add("Read share (%)", number(w.read_pct))
        for k, v in w.parameters.items():
            if isinstance(v, dict) and len(v) > 6 or isinstance(v, dict) and any(isinstance(x, dict) for x in v.values()):
                t.add_group(humanize(k))
                for k2, v2 in v.items():
                    t.add(humanize(k2), Cell(flat(v2), mono=isinstance(v2, str) and "\\" in v2))
            else:
                t.add(humanize(k), flat(v))
        if w.note:
            t.note = flat(w.note)
        tables.append(t)
        if w.access:
            at = Table(f"workload-{slug(w.id)}-access", f"Access specification: {w.id}",
                       ["Share of accesses (%)", "Transfer size", "Read (%)", "Random (%)"])
            for spec in w.access:
                size = f"{number(spec.block_kb)} KB" if spec.block_kb >= 1 else f"{number(spec.block_kb * 1024)} bytes"
                at.add(number(spec.share_pct), size, number(spec.read_pct), number(spec.random_pct))
            tables.append(at)
        if w.criteria:
            ct = Table(f"workload-{slug(w.id)}-criteria", f"Pass criteria: {w.id}",
                       ["Metric", "Pass when", "Source"], widths=[28, 22, 50], compact=True)
            for c in w.criteria:
                ct.add(Cell(c.metric, mono=True), criterion_text(c), flat(c.source))
            tables.append(ct)
    return tables


def criterion_text(c: Any) -> str:
    unit = f" {c.unit}" if c.unit else ""
    if c.comparison == "between":
        return f"between {number(c.threshold)} and {number(c.upper)}{unit}"
    return f"{c.comparison} {number(c.threshold)}{unit}"


def criterion_met(c: Any, value: float) -> bool:
    ops = {"<": value < c.threshold, "<=": value <= c.threshold, ">": value > c.threshold,
           ">=": value >= c.threshold, "==": value == c.threshold}
    if c.comparison == "between":
        return c.threshold <= value <= (c.upper if c.upper is not None else c.threshold)
    return ops.get(c.comparison, False)


def scenario_tables(bed: Bed) -> list[Table]:
    tables = []
    if bed.scenarios:
        t = Table("scenarios", "Scenarios", ["Scenario", "Description", "Components down", "Placement changes"],
                  widths=[14, 52, 14, 20], compact=True)
        for s in bed.scenarios:
            t.add(Cell(s.id + (" (reference)" if s.reference else ""), ref=s.id, bold=True), flat(s.description),
                  ", ".join(s.failed), "; ".join(f"{vm} on {h}" for vm, h in s.placement.items()))
        tables.append(t)
    if bed.test_matrix:
        t = Table("matrix", "Test matrix", ["Variable", "Levels", "Scenarios", "Workloads", "Held constant"],
                  compact=True)
        for m in bed.test_matrix:
            t.add(Cell(m.variable, bold=True), flat(m.levels), ", ".join(m.scenarios), ", ".join(m.workloads),
                  flat(m.constants))
        tables.append(t)
    rp = bed.run_plan
    if rp is not None:
        t = Table("runplan", "Run plan", ["Item", "Value"], kind="keyvalue", widths=[30, 70])
        t.add("Repetitions", number(rp.repetitions) if rp.repetitions else missing())
        t.add("Score reported", f"{rp.score} of the runs" if rp.score else missing())
        for i, step in enumerate(rp.reset_steps, 1):
            t.add(f"Reset step {i}", flat(step))
        if rp.reboot:
            t.add("Reboot before each run", "Yes")
        if rp.idle_minutes is not None:
            t.add("Idle before starting (minutes)", number(rp.idle_minutes))
        if rp.duration_minutes is not None:
            t.add("Run duration (minutes)", number(rp.duration_minutes))
        for i, step in enumerate(rp.procedure, 1):
            t.add(f"Run step {i}", flat(step))
        if rp.counters:
            t.add("Counters", "; ".join(rp.counters))
        if rp.counter_hosts:
            t.add("Counters collected on", _compress_names(rp.counter_hosts) if len(rp.counter_hosts) > 12
                  else ", ".join(rp.counter_hosts))
        if rp.sample_interval_s is not None:
            t.add("Sample interval (s)", number(rp.sample_interval_s))
        tables.append(t)
    return tables


# ------------------------------------------------------------------ results

_SCORERS = {"median": statistics.median, "mean": statistics.fmean, "max": max, "min": min,
            "last": lambda xs: xs[-1]}


def results_tables(bed: Bed) -> list[Table]:
    """One table per workload.  Repeated runs of one measurement are reduced to the run
    plan's score (the median of N by default), with the run count shown."""
    if not bed.results:
        return []
    score = (bed.run_plan.score if bed.run_plan and bed.run_plan.score else "median")
    scorer = _SCORERS.get(score, statistics.median)
    criteria = {(w.id, c.metric): c for w in bed.workloads for c in w.criteria}
    grouped: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))
    for r in bed.results:
        grouped[r.workload][(r.scenario, r.level, r.subject, r.metric, r.unit)].append(r)
    tables = []
    for workload, measurements in grouped.items():
        has_criteria = any((workload, key[3]) in criteria for key in measurements)
        has_runs = any(len(v) > 1 for v in measurements.values())
        cols = ["Scenario", "Level", "Subject", "Metric", "Value"]
        if has_runs:
            cols.append("Runs")
        if has_criteria:
            cols.append("Criterion")
        t = Table(f"results-{slug(workload)}", f"Results: {workload}", cols, compact=True)
        previous = ("", "", "")
        for (scenario, level, subject, metric, unit), rs in measurements.items():
            values = [r.value for r in rs]
            value = scorer(values) if len(values) > 1 else values[0]
            head = (scenario, level, subject)
            # repeated group values are printed once, as published result tables do
            shown, changed = [], False
            for x, p in zip(head, previous):
                changed = changed or x != p
                shown.append(x if changed else "")
            previous = head
            row = [Cell(shown[0], ref=scenario), shown[1], Cell(shown[2], ref=subject.split("/")[0]),
                   humanize_metric(metric), Cell(f"{number(value)} {unit}".strip(), bold=True)]
            if has_runs:
                row.append(f"{score} of {len(values)}" if len(values) > 1 else "1")
            if has_criteria:
                c = criteria.get((workload, metric))
                if c is None:
                    row.append("")
                else:
                    ok = criterion_met(c, value)
                    row.append(Cell(("pass: " if ok else "FAIL: ") + criterion_text(c), bold=not ok,
                                    fill="" if ok else "#f8d0d0"))
            t.add(*row)
        tables.append(_without_empty_columns(t, keep=4))
    return tables


def _without_empty_columns(t: Table, keep: int = 0, first: int = 0) -> Table:
    """Drop columns no row fills (a bed without scenarios has no Scenario column);
    columns before `first` and from `keep` on always stay."""
    empty = [i for i in range(first, min(keep, len(t.columns)))
             if all(not (r.cells[i].text or r.cells[i].missing) for r in t.rows if not r.group)]
    if not empty:
        return t
    t.columns = [c for i, c in enumerate(t.columns) if i not in empty]
    if t.widths:
        kept = [w for i, w in enumerate(t.widths) if i not in empty]
        t.widths = [round(w * 100 / sum(kept)) for w in kept]
    for r in t.rows:
        if not r.group:
            r.cells = [c for i, c in enumerate(r.cells) if i not in empty]
    return t


def humanize_metric(metric: str) -> str:
    text = metric
    for suffix, unit in (("_per_s", "/s"), ("_pct", " (%)"), ("_ms", " (ms)"), ("_mbytes", " (MB)"),
                         ("_bytes", " (bytes)"), ("_s", " (s)")):
        if text.endswith(suffix):
            return humanize(text[: -len(suffix)]) + unit
    return humanize(text)
