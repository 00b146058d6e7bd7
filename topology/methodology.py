"""Methodology generation: the numbered "how we tested" procedure, built from a bed.

The procedure follows the order a lab builds a bed in (`SECTIONS`).  What each step says and
which command automates it is data: YAML step templates under ``resources/templates/<platform>/``
(``common`` for every platform, ``windows``, ``linux``, ``esxi``, ``array``, ``switch``).  Code
only supplies the *values*: for each template step, a domain (``port``, ``path``, ``volume`` ...)
yields one item per bed object, each with named values (``{port.ip}``, ``{host.id}`` ...)
that remember which component field they came from.

Template text, in prose and in commands::

    {port.ip}             a value; in a command it is quoted for the command's shell
    {? , MTU {port.mtu} ?} optional: dropped when a value inside is missing
    {@reset}              the number of the first step made from template step `reset`
    {{  }}                literal braces

A required value the bed lacks is written ``«missing: port.ip»``, listed in `Step.unresolved`,
and such a step is never runnable.  A platform template replaces the ``common`` step with the
same id; a template with ``match:`` (a vendor/model) replaces both for the items it matches;
directories passed as `extra_dirs` override built-in files with the same relative path, or add
new ones.  A broken template raises `TemplateError` naming the file and line.
"""
from __future__ import annotations

import gc
import ipaddress
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import yaml

from topology import quoting
from topology.safe_paths import file_name_for
from topology.errors import BedFileError, Problem
from topology.index import BedIndex
from topology.model import VM, Bed, BedInfo, Server, StorageArray

# =========================================================================== the result


@dataclass
class Command:
    """One automation for a step.  `script` is ready to run: every bed value in it is quoted
    for `shell`.  `target` overrides the step's target when one step runs on several hosts."""
    shell: str                      # "powershell" | "bash" | "vendor-cli"
    script: str
    verify: str | None = None       # read-only check that the step took effect
    platform: str = ""              # "windows" | "linux" | "esxi" | "array"
    note: str = ""                  # e.g. how to run a vendor CLI script, syntax caveats
    target: str = ""                # "" = the step's target
    invoke: str | None = None       # vendor-cli: bash command running the statements file "$STATEMENTS"


@dataclass
class Step:
    number: str                     # "3.12"
    text: str                       # prose with the bed's values; missing ones as «missing: name»
    target: str = ""                # component id the step is done on ("" = not tied to one)
    automation: list[Command] = field(default_factory=list)
    manual: bool = True             # no automation: a person does it
    sources: dict[str, str] = field(default_factory=dict)   # shown value -> "COMPONENT.field"
    unresolved: list[str] = field(default_factory=list)     # value names the bed lacks
    template: str = ""              # "windows/network.yaml#port": where the step came from

    @property
    def runnable(self) -> bool:
        """Automated and complete: a step with missing values is never run."""
        return bool(self.automation) and not self.unresolved


@dataclass
class Section:
    number: str                     # "3"
    title: str
    steps: list[Step] = field(default_factory=list)
    key: str = ""                   # "network", "storage" ... (stable, for filters)


@dataclass
class Methodology:
    bed_name: str
    sections: list[Section] = field(default_factory=list)
    findings_summary: list[str] = field(default_factory=list)

    def steps(self) -> Iterator[Step]:
        for s in self.sections:
            yield from s.steps


# The order a lab builds a bed in; titles can be replaced by a template's `title:`.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("infrastructure", "Installing and configuring the infrastructure servers"),
    ("hosts", "Installing and configuring the servers"),
    ("network", "Setting up the network adapters"),
    ("switches", "Configuring the switches"),
    ("storage", "Configuring the storage"),
    ("connectivity", "Connecting the hosts to the storage (discovery, sessions, multipath)"),
    ("cluster", "Configuring the cluster"),
    ("vms", "Creating and configuring the virtual machines"),
    ("workloads", "Installing and configuring the workloads"),
    ("run", "Running the test"),
)
SECTION_KEYS = tuple(k for k, _ in SECTIONS)
PLATFORMS = ("common", "windows", "linux", "esxi", "array", "switch")
TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "resources" / "templates"
MISSING = "«missing: {}»"


# ============================================================================= values

_TOKEN_SAFE = re.compile(r"^[A-Za-z0-9 ,()./:_+=-]*$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


@dataclass(slots=True)
class Val:
    """A value a template can use: its prose form, where it came from, and how a shell takes it.

    kind: "text" (quoted in commands); "number" (bare); "token" (built by code from numbers, IP
    addresses and fixed words: bare in vendor statements, quoted for a shell); "literal" (a template's own `derive`
    output: bare); "bool" ($true / true); "list" (quoted item by item)."""
    text: str
    source: str = ""
    kind: str = "text"
    items: tuple[str, ...] = ()
    quoted: dict | None = None     # shell -> quoted form, filled on first use

    def match_text(self) -> str:
        if self.kind == "bool":
            return "true" if self.text == "yes" else "false"
        if self.kind == "list":
            return " ".join(self.items)
        return self.text

    def shell_text(self, shell: str) -> str:
        q = self.quoted
        if q is None:
            q = self.quoted = {}
        hit = q.get(shell)
        if hit is None:
            hit = q[shell] = self._shell_text(shell)
        return hit

    def _shell_text(self, shell: str) -> str:
        if self.kind == "number" or self.kind == "literal":
            return self.text
        if self.kind == "token":
            # bare only in vendor statements (`physicalDisks=(0,1 0,2)`); a shell always gets one word
            return self.text if shell == "vendor-cli" else quoting.quote(shell, self.text)
        if self.kind == "bool":
            yes = self.text == "yes"
            return {"powershell": "$true" if yes else "$false",
                    "vendor-cli": "TRUE" if yes else "FALSE"}.get(shell, "true" if yes else "false")
        if self.kind == "list":
            return quoting.quote_list(shell, self.items)
        return quoting.quote(shell, self.text)


Values = dict[str, Val]


class _Layers:
    """Value lookup through several dicts (derived, item, globals) without merging them per step."""
    __slots__ = ("layers",)

    def __init__(self, *layers: Any):
        self.layers = layers

    def get(self, name: str) -> Val | None:
        for layer in self.layers:
            v = layer.get(name)
            if v is not None:
                return v
        return None

    def __bool__(self) -> bool:
        return True


def _text(v: Any, source: str = "") -> Val | None:
    if v is None:
        return None
    s = str(v).strip() if not isinstance(v, str) else v.strip()
    return Val(s, source) if s else None


def _fmt_number(x: float) -> str:
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.3f}".rstrip("0").rstrip(".")


def _num(v: Any, source: str = "") -> Val | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    if x != x or x in (float("inf"), float("-inf")):
        return None
    return Val(_fmt_number(x), source, "number")


def _bool(v: Any, source: str = "") -> Val | None:
    if v is None:
        return None
    return Val("yes" if v else "no", source, "bool")


def _token(v: str, source: str = "") -> Val | None:
    if v is None or v == "":
        return None
    v = str(v)
    return Val(v, source, "token" if _TOKEN_SAFE.match(v) else "text")


def _list(items: Iterable[Any], source: str = "") -> Val | None:
    clean = tuple(str(i).strip() for i in items if i is not None and str(i).strip())
    if not clean:
        return None
    return Val(", ".join(clean), source, "list", clean)


def _put(vals: Values, name: str, val: Val | None) -> None:
    if val is not None:
        vals[name] = val


def _plain(v: Any) -> str:
    """A free-form setting or parameter as prose."""
    if isinstance(v, bool):
        return "enabled" if v else "disabled"
    if isinstance(v, float):
        return _fmt_number(v)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_plain(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ", ".join(_plain(x) for x in v)
    return "" if v is None else str(v)


def _any_val(v: Any, source: str) -> Val | None:
    if isinstance(v, bool):
        return _bool(v, source)
    if isinstance(v, (int, float)):
        return _num(v, source)
    if isinstance(v, (list, tuple)):
        return _list((_plain(x) for x in v), source)
    return _text(_plain(v), source)


_ACRONYMS = {"ip": "IP", "iscsi": "iSCSI", "lldp": "LLDP", "mtu": "MTU", "bios": "BIOS", "vlan": "VLAN",
             "stp": "STP", "rstp": "RSTP", "numa": "NUMA", "sriov": "SR-IOV", "vt": "VT", "lso": "LSO",
             "vmq": "VMQ", "rss": "RSS", "hba": "HBA", "fc": "FC", "dcb": "DCB", "odx": "ODX"}


def _humanize(key: str) -> str:
    words = [_ACRONYMS.get(w.lower(), w) for w in str(key).replace("_", " ").split()]
    if words and words[0] == words[0].lower():
        words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


# ---------------------------------------------------------------------------- helpers

_WINDOWS = re.compile(r"windows|hyper-v", re.I)
_LINUX = re.compile(r"linux|kvm|rhel|red hat|centos|rocky|alma|ubuntu|debian|suse|sles|fedora|oracle linux|proxmox", re.I)
_ESXI = re.compile(r"esx|vsphere|vmware", re.I)


def platform_of(component: Any) -> str:
    """How commands reach a server or VM: windows, linux, esxi, or "" when the bed does not say."""
    if isinstance(component, Server):
        if component.platform:
            return component.platform
        text = f"{component.hypervisor} {component.os}"
    elif isinstance(component, VM):
        text = component.guest_os or ""
    else:
        return ""
    return _platform_from_text(text)


@lru_cache(maxsize=4096)
def _platform_from_text(text: str) -> str:
    if _ESXI.search(text):
        return "esxi"
    if _WINDOWS.search(text):
        return "windows"
    if _LINUX.search(text):
        return "linux"
    return ""


@lru_cache(maxsize=65536)
def _iface(address: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    if not address:
        return None
    try:
        return ipaddress.ip_interface(address.strip())
    except ValueError:
        return None


def _network_of(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(cidr.strip(), strict=False) if cidr else None
    except ValueError:
        return None


_RAID_TEXT = {"raid0": "RAID 0", "raid1": "RAID 1", "raid10": "RAID 10", "raid5": "RAID 5",
              "raid6": "RAID 6", "raid50": "RAID 50", "raid60": "RAID 60"}
_QUORUM_TEXT = {"node_majority": "Node Majority", "node_and_disk_majority": "Node and Disk Majority",
                "node_and_file_share_majority": "Node and File Share Majority",
                "disk_only": "No Majority: Disk Only", "cloud_witness": "Cloud Witness"}
_ROLE_TEXT = {"iscsi": "iSCSI", "lan": "client/LAN", "heartbeat": "cluster heartbeat",
              "live_migration": "live migration", "management": "management", "vm": "virtual machine traffic",
              "fc": "Fibre Channel", "replication": "replication", "unused": "unused"}
_IP_ROLES = {"iscsi", "lan", "heartbeat", "live_migration", "management", "replication"}
_COMPARISON_TEXT = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "equal to",
                    "between": "between"}


def _size_text(gb: float | None) -> str:
    if gb is None:
        return ""
    if gb >= 1024 and float(gb / 1024).is_integer():
        return f"{_fmt_number(gb / 1024)} TB"
    return f"{_fmt_number(gb)} GB"


# ============================================================================ context

@dataclass(slots=True)
class Item:
    """One bed object a template step is applied to."""
    values: Values
    target: str
    platform: str
    group: tuple
    sub: int


class _Ctx:
    """What the domains share: the index, ranks for ordering, derived relations."""

    def __init__(self, bed: Bed):
        self.bed = bed
        self.idx = BedIndex(bed)
        self._host_cache: dict[tuple, Values] = {}
        self.bed_domain = bed.bed.domain if bed.bed is not None else ""
        self.server_rank = {s.id: i for i, s in enumerate(bed.servers)}
        self.vm_rank = {v.id: i for i, v in enumerate(bed.vms)}
        self.cluster_of: dict[str, Any] = {}
        for c in bed.clusters:
            for n in c.nodes:
                self.cluster_of.setdefault(n, c)
        self.vswitch_by_id = {vs.id: vs for vs in bed.virtual_switches}
        self.vswitch_of_port: dict[str, Any] = {}
        for vs in bed.virtual_switches:
            for up in vs.uplinks:
                self.vswitch_of_port.setdefault(up, vs)
        self.dc_servers = [s for s in bed.servers if self.is_dc(s)]
        self.csv_path: dict[str, tuple[str, int, Any]] = {}
        for c in bed.clusters:
            for i, v in enumerate(c.shared_volumes, 1):
                self.csv_path.setdefault(v, (f"C:\\ClusterStorage\\Volume{i}", i, c))
        # LUN of each mapped volume: the bed's, else the next free number for its host (group), the
        # way the array assigns them; `stated` tells prose (only the bed's) from commands (both)
        self.lun: dict[str, int] = {}
        self.lun_stated: set[str] = set()
        for a in bed.arrays:
            per_target: dict[str, int] = {}
            for m in a.mappings:
                n = per_target.get(m.to, 0)
                lun = m.lun if m.lun is not None else n
                per_target[m.to] = max(n, lun) + 1
                ref = f"{a.id}:{m.volume}"
                if ref not in self.lun:
                    self.lun[ref] = lun
                    if m.lun is not None:
                        self.lun_stated.add(ref)

    @staticmethod
    def is_dc(s: Server) -> bool:
        text = " ".join(str(x) for x in s.software) + " " + " ".join(str(k) for k in s.settings)
        return bool(re.search(r"active directory|domain controller|dcpromo|forest", text, re.I))

    def server_or_vm(self, cid: str) -> Any:
        return self.idx.servers.get(cid) or self.idx.vms.get(cid)

    def host_rank(self, cid: str) -> int:
        if cid in self.server_rank:
            return self.server_rank[cid]
        if cid in self.vm_rank:
            return len(self.server_rank) + self.vm_rank[cid]
        return len(self.server_rank) + len(self.vm_rank)

    # ------------------------------------------------------------ value builders
    def bed_vals(self) -> Values:
        b = self.bed.bed or BedInfo(name="")
        out: Values = {}
        _put(out, "bed.name", _text(b.name, "bed.name"))
        _put(out, "bed.domain", _text(b.domain, "bed.domain"))
        _put(out, "bed.publisher", _text(b.publisher, "bed.publisher"))
        dns = []
        src = ""
        for s in self.dc_servers:
            ip = self.primary_ip(s)
            if ip:
                dns.append(ip[0])
                src = src or ip[1]
        _put(out, "bed.dns", _list(dns, src))
        _put(out, "bed.dns_csv", _text(",".join(dns), src))
        return out

    def primary_ip(self, s: Server) -> tuple[str, str] | None:
        for role in ("lan", "management"):
            for ad in s.adapters:
                for p in ad.ports:
                    if role in p.roles and (i := _iface(p.address)):
                        return str(i.ip), f"{s.id}:{p.name}.address"
        if (i := _iface(s.management_address)):
            return str(i.ip), f"{s.id}.management_address"
        return None

    def cached(self, key: tuple, build: Callable[[], Values]) -> Values:
        """Values shared by several domains, built once per generation (read-only: callers copy)."""
        hit = self._host_cache.get(key)
        if hit is None:
            hit = self._host_cache[key] = build()
        return hit

    def host_vals(self, comp: Any, prefix: str = "host") -> Values:
        """The values of a server or VM as `prefix`.*: a fresh dict (callers add to it)."""
        if comp is None:
            return {}
        key = (id(comp), prefix)
        cached = self._host_cache.get(key)
        if cached is None:
            cached = self._host_cache[key] = self._host_vals(comp, prefix)
        return dict(cached)

    def _host_vals(self, comp: Any, prefix: str) -> Values:
        out: Values = {}
        cid = comp.id
        _put(out, f"{prefix}.id", _text(cid, f"{cid}.id"))
        _put(out, f"{prefix}.platform", _token(platform_of(comp)))
        if isinstance(comp, VM):
            _put(out, f"{prefix}.os", _text(comp.guest_os, f"{cid}.guest_os"))
            _put(out, f"{prefix}.role", _text(comp.role, f"{cid}.role"))
            _put(out, f"{prefix}.multipath", _text(comp.multipath, f"{cid}.multipath"))
            _put(out, f"{prefix}.kind", _token("vm"))
            _put(out, f"{prefix}.domain", _text(self.bed_domain, "bed.domain"))
            return out
        s: Server = comp
        _put(out, f"{prefix}.kind", _token("server"))
        _put(out, f"{prefix}.model", _text(s.model, f"{cid}.model"))
        _put(out, f"{prefix}.os", _text(s.os, f"{cid}.os"))
        _put(out, f"{prefix}.hypervisor", _text(s.hypervisor, f"{cid}.hypervisor"))
        _put(out, f"{prefix}.role", _token(s.role, f"{cid}.role"))
        _put(out, f"{prefix}.multipath", _text(s.multipath, f"{cid}.multipath"))
        _put(out, f"{prefix}.software", _list(s.software, f"{cid}.software"))
        _put(out, f"{prefix}.management_address", _text(s.management_address, f"{cid}.management_address"))
        if s.domain:
            _put(out, f"{prefix}.domain", _text(s.domain, f"{cid}.domain"))
        else:
            _put(out, f"{prefix}.domain", _text(self.bed_domain, "bed.domain"))
        _put(out, f"{prefix}.dns", _list(s.dns, f"{cid}.dns"))
        _put(out, f"{prefix}.port_names", _list([f"{p.name} ({p.label})" if p.label else p.name
                                                 for ad in s.adapters for p in ad.ports
                                                 if p.kind in ("ethernet", "management", "infiniband")],
                                                f"{cid}.adapters"))
        _put(out, f"{prefix}.dns_csv", _text(",".join(str(d) for d in s.dns), f"{cid}.dns"))
        _put(out, f"{prefix}.is_dc", _bool(self.is_dc(s), f"{cid}.software"))
        c = self.cluster_of.get(cid)
        _put(out, f"{prefix}.cluster", _text(c.id if c else "", f"{c.id}.nodes" if c else ""))
        ip = self.primary_ip(s)
        if ip:
            _put(out, f"{prefix}.ip", _text(ip[0], ip[1]))
        if s.memory_gb is not None:
            _put(out, f"{prefix}.memory_gb", _num(s.memory_gb, f"{cid}.memory_gb"))
        for k, v in s.settings.items():
            _put(out, f"{prefix}.settings.{k}", _any_val(v, f"{cid}.settings.{k}"))
        return out

    def port_vals(self, owner_id: str, p: Any, prefix: str = "port", network_mtu: bool = True) -> Values:
        out: Values = {}
        ref = f"{owner_id}:{p.name}"
        _put(out, f"{prefix}.name", _text(p.name, f"{ref}.name"))
        _put(out, f"{prefix}.ref", _text(ref, f"{ref}"))
        _put(out, f"{prefix}.label", _text(getattr(p, "label", ""), f"{ref}.label"))
        _put(out, f"{prefix}.display", _text(getattr(p, "label", "") or p.name,
                                             f"{ref}.label" if getattr(p, "label", "") else f"{ref}.name"))
        roles = list(getattr(p, "roles", []) or [])
        if not roles and getattr(p, "role", ""):
            roles = [p.role]
        _put(out, f"{prefix}.roles", _list(roles, f"{ref}.roles"))
        _put(out, f"{prefix}.role_text", _text(", ".join(_ROLE_TEXT.get(r, r) for r in roles), f"{ref}.roles"))
        _put(out, f"{prefix}.kind", _token(getattr(p, "kind", ""), f"{ref}.kind"))
        speed = getattr(p, "speed_gbps", None)
        if speed:
            _put(out, f"{prefix}.speed", _text(f"{_fmt_number(speed)} Gb/s", f"{ref}.speed_gbps"))
        addr = getattr(p, "address", "") or ""
        _put(out, f"{prefix}.address", _text(addr, f"{ref}.address"))
        net = self.idx.networks.get(getattr(p, "network", "") or "")
        if net is not None:
            _put(out, f"{prefix}.network", _text(net.id, f"{ref}.network"))
            _put(out, f"{prefix}.cidr", _text(net.cidr, f"{net.id}.cidr"))
        i = _iface(addr)
        if i is not None:
            _put(out, f"{prefix}.ip", _token(str(i.ip), f"{ref}.address"))
            prefixlen = i.network.prefixlen
            src = f"{ref}.address"
            if "/" not in addr:
                netobj = _network_of(net.cidr) if net is not None else None
                if netobj is not None:
                    prefixlen, src = netobj.prefixlen, f"{net.id}.cidr"
                else:
                    prefixlen = None
            if prefixlen is not None:
                _put(out, f"{prefix}.prefix", _num(prefixlen, src))
                if i.version == 4:
                    mask = str(ipaddress.IPv4Network(f"0.0.0.0/{prefixlen}").netmask)
                    _put(out, f"{prefix}.mask", _token(mask, src))
        mtu = getattr(p, "mtu", None)
        mtu_src = f"{ref}.mtu"
        if mtu is None and network_mtu and net is not None and net.mtu:
            mtu, mtu_src = net.mtu, f"{net.id}.mtu"
        if mtu:
            _put(out, f"{prefix}.mtu", _num(mtu, mtu_src))
            _put(out, f"{prefix}.mtu_text", _text(f"{mtu} (jumbo frames)" if mtu > 1500 else str(mtu), mtu_src))
            # Windows drivers take the frame size with the 14-byte Ethernet header (*JumboPacket 9014)
            _put(out, f"{prefix}.jumbo_packet", _num(mtu + 14 if mtu > 1500 else 1514, mtu_src))
        fc = getattr(p, "flow_control", None)
        if fc is not None:
            src = f"{ref}.flow_control"
            _put(out, f"{prefix}.flow_control", _bool(fc, src))
            _put(out, f"{prefix}.flow_control_text",
                 _text("Generate & Respond (Rx and Tx)" if fc else "disabled", src))
            _put(out, f"{prefix}.flow_control_value", _num(3 if fc else 0, src))
            _put(out, f"{prefix}.flow_onoff", _token("on" if fc else "off", src))
        _put(out, f"{prefix}.vlan", _num(getattr(p, "vlan", None), f"{ref}.vlan"))
        _put(out, f"{prefix}.team", _text(getattr(p, "team", ""), f"{ref}.team"))
        _put(out, f"{prefix}.wwpn", _text(getattr(p, "wwpn", ""), f"{ref}.wwpn"))
        _put(out, f"{prefix}.fabric", _text(getattr(p, "fabric", ""), f"{ref}.fabric"))
        vs = self.vswitch_of_port.get(ref)
        if vs is not None:
            _put(out, f"{prefix}.vswitch", _text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
        return out

    def array_vals(self, a: StorageArray) -> Values:
        out: Values = {}
        _put(out, "array.id", _text(a.id, f"{a.id}.id"))
        _put(out, "array.model", _text(a.model, f"{a.id}.model"))
        _put(out, "array.firmware", _text(a.firmware, f"{a.id}.firmware"))
        _put(out, "array.connectivity", _token(a.connectivity, f"{a.id}.connectivity"))
        mgmt = [(str(i.ip), f"{a.id}:{p.name}.address") for c in a.controllers for p in c.ports
                if ("management" in p.roles or p.kind == "management") and (i := _iface(p.address))]
        _put(out, "array.mgmt_addresses", _list([m[0] for m in mgmt], mgmt[0][1] if mgmt else ""))
        if mgmt:
            _put(out, "array.mgmt_address", _text(mgmt[0][0], mgmt[0][1]))
        _put(out, "array.controllers", _list([c.name for c in a.controllers], f"{a.id}.controllers"))
        _put(out, "array.controller_count", _num(len(a.controllers), f"{a.id}.controllers") if a.controllers else None)
        for k, v in a.attributes.items():
            _put(out, f"array.attributes.{k}", _any_val(v, f"{a.id}.attributes.{k}"))
        return out

    def group_vals(self, a: StorageArray, g: Any, index: int) -> Values:
        out: Values = {}
        ref = f"{a.id}:group:{g.name}"
        scope = self.idx.scopes.get(a.id)
        _put(out, "group.name", _text(g.name, f"{ref}.name"))
        _put(out, "group.label", _text(g.label, f"{ref}.label"))
        _put(out, "group.raid", _token(g.raid, f"{ref}.raid"))
        _put(out, "group.raid_text", _text(_RAID_TEXT.get(g.raid, g.raid), f"{ref}.raid"))
        _put(out, "group.geometry", _text(g.geometry, f"{ref}.geometry"))
        _put(out, "group.owner", _text(g.owner, f"{ref}.owner"))
        names = [c.name for c in a.controllers]
        if g.owner in names:
            k = names.index(g.owner)
            _put(out, "group.owner_index", _num(k, f"{ref}.owner"))
            _put(out, "group.owner_letter", _token("ab"[k] if k < 2 else str(k), f"{ref}.owner"))
        _put(out, "group.pool", _text(g.pool, f"{ref}.pool"))
        first = next((v for v in a.volumes if v.group == g.name), None)
        if first is not None:
            vref = f"{a.id}:{first.name}"
            _put(out, "group.first_volume", _text(first.name, f"{vref}.name"))
            _put(out, "group.first_volume_size_gb", _num(first.size_gb, f"{vref}.size_gb"))
            if first.size_gb is not None:
                _put(out, "group.first_volume_size_text", _text(_size_text(first.size_gb), f"{vref}.size_gb"))
            elif first.remainder:
                _put(out, "group.first_volume_size_text", _text("all the capacity of the group", f"{vref}.remainder"))
        _put(out, "group.index", _num(index, f"{ref}"))
        _put(out, "group.members", _list(g.members, f"{ref}.members"))
        slots = list(scope.members(g.members)) if scope else []
        if slots:
            _put(out, "group.disk_count", _num(len(slots), f"{ref}.members"))
        enc_index = {e.name: i for i, e in enumerate(a.enclosures)}
        pairs = [f"{enc_index[e]},{s}" for e, s in slots if e in enc_index]
        if pairs and len(pairs) == len(slots):
            _put(out, "group.slot_pairs", _token(" ".join(pairs), f"{ref}.members"))
        disks = scope.group_disks(g) if scope else []
        if disks and len(disks) == len(slots):
            kinds: dict[str, int] = {}
            for d in disks:
                sp = d.spec
                desc = " ".join(x for x in (_size_text(sp.size_gb), f"{sp.rpm / 1000:g}K" if sp.rpm else "",
                                            sp.interface.upper() if sp.interface else "",
                                            sp.media.upper() if sp.media != "hdd" else "") if x)
                kinds[desc] = kinds.get(desc, 0) + 1
            _put(out, "group.disk_desc", _text(", ".join(f"{n} × {d}" for d, n in kinds.items()), f"{ref}.members"))
            media = sorted({(d.spec.interface or d.spec.media).upper() for d in disks})
            _put(out, "group.media", _text("/".join(media), f"{ref}.members"))
            try:
                from topology.capacity import usable_gb
                usable = usable_gb(g.raid, [d.spec.size_gb for d in disks], g.geometry)
                if usable:
                    _put(out, "group.usable", _text(_size_text(round(usable, 1)), f"{ref}.members"))
            except Exception:  # noqa: BLE001 - capacity is a nicety here; a bad member list shows elsewhere
                pass
        return out

    def volume_vals(self, a: StorageArray, v: Any, first_in_group: bool, group_index: int | None) -> Values:
        out: Values = {}
        ref = f"{a.id}:{v.name}"
        _put(out, "volume.name", _text(v.name, f"{ref}.name"))
        _put(out, "volume.ref", _text(ref, ref))
        _put(out, "volume.label", _text(v.label, f"{ref}.label"))
        _put(out, "volume.group", _text(v.group, f"{ref}.group"))
        _put(out, "volume.pool", _text(v.pool, f"{ref}.pool"))
        container = f"disk group {v.group}" if v.group else (f"pool {v.pool}" if v.pool else "")
        _put(out, "volume.container", _text(container, f"{ref}.group" if v.group else f"{ref}.pool"))
        _put(out, "volume.size_gb", _num(v.size_gb, f"{ref}.size_gb"))
        if v.size_gb is not None:
            _put(out, "volume.size_text", _text(_size_text(v.size_gb), f"{ref}.size_gb"))
        elif v.remainder:
            _put(out, "volume.size_text", _text(f"all remaining capacity{' of the ' + container if container else ''}",
                                                f"{ref}.remainder"))
        _put(out, "volume.remainder", _bool(v.remainder, f"{ref}.remainder"))
        _put(out, "volume.purpose", _list(v.purpose, f"{ref}.purpose"))
        _put(out, "volume.owner", _text(v.owner, f"{ref}.owner"))
        _put(out, "volume.provisioning", _token(v.provisioning, f"{ref}.provisioning"))
        _put(out, "volume.drive", _text(v.drive, f"{ref}.drive"))
        # a drive letter ("E", "E:") and an NTFS mount point ("C:\\asgluns\\sg1") need different commands
        letter = v.drive.rstrip(":") if re.fullmatch(r"[A-Za-z]:?", v.drive or "") else ""
        _put(out, "volume.drive_letter", _text(letter, f"{ref}.drive"))
        _put(out, "volume.mount_path", _text(v.drive if v.drive and not letter else "", f"{ref}.drive"))
        _put(out, "volume.dataset", _text(v.dataset, f"{ref}.dataset"))
        _put(out, "volume.read_only", _bool(v.read_only, f"{ref}.read_only"))
        _put(out, "volume.first_in_group", _bool(first_in_group, f"{ref}.group"))
        _put(out, "volume.group_index", _num(group_index, f"{ref}.group"))
        lun = self.lun.get(ref)
        if lun is not None:
            if ref in self.lun_stated:
                _put(out, "volume.lun", _num(lun, f"{a.id}.mappings"))
            _put(out, "volume.lun_auto", _num(lun, f"{a.id}.mappings"))
            _put(out, "volume.lun_pattern", _text(f"LUN {lun}$", f"{a.id}.mappings"))
        return out


# ============================================================================ domains
#
# A domain turns the bed into items for one kind of template step.  NAMES lists the values
# each domain can give (templates are checked against it when they are loaded); a value may
# still be absent for a given item, which is what «missing: …» marks.

def _names(prefix: str, *fields: str) -> set[str]:
    return {f"{prefix}.{f}" for f in fields}


HOST_FIELDS = ("id", "platform", "os", "role", "multipath", "kind", "domain", "model", "hypervisor", "software",
               "management_address", "dns", "port_names", "dns_csv", "is_dc", "cluster", "ip", "memory_gb")
PORT_FIELDS = ("name", "ref", "label", "display", "roles", "role_text", "kind", "speed", "address", "network",
               "cidr", "ip", "prefix", "mask", "mtu", "mtu_text", "jumbo_packet", "flow_control", "flow_control_text",
               "flow_control_value", "flow_onoff", "vlan", "team", "wwpn", "fabric", "vswitch")
ARRAY_FIELDS = ("id", "model", "firmware", "connectivity", "mgmt_addresses", "mgmt_address", "controllers",
                "controller_count")
GROUP_FIELDS = ("name", "label", "raid", "raid_text", "geometry", "owner", "owner_index", "owner_letter", "pool",
                "first_volume", "first_volume_size_gb", "first_volume_size_text", "index", "members", "disk_count", "slot_pairs", "disk_desc", "media", "usable")
VOLUME_FIELDS = ("name", "ref", "label", "group", "pool", "container", "size_gb", "size_text", "remainder",
                 "purpose", "owner", "provisioning", "drive", "drive_letter", "mount_path", "dataset", "read_only",
                 "first_in_group",
                 "group_index", "lun", "lun_auto", "lun_pattern")
CLUSTER_FIELDS = ("id", "nodes", "node_count", "first_node", "address", "ip", "prefix", "mask", "ignore_networks",
                  "ignore_network_names", "quorum", "quorum_text", "witness", "witness_name", "shared_volumes",
                  "disks", "lm_networks", "lm_network_names")
VM_FIELDS = ("id", "host", "role", "vcpu", "memory_gb", "memory_mb", "dynamic_memory", "startup_mb", "min_mb",
             "max_mb", "guest_os", "guest_platform", "ha", "cluster", "vswitch", "path", "production",
             "under_load", "storage_access", "index")
VDISK_FIELDS = ("name", "size_gb", "size_text", "format", "format_text", "type", "type_text", "fixed", "dynamic",
                "volume",
                "volume_name", "folder", "file", "controller", "local", "index", "first")
VNIC_FIELDS = ("name", "vswitch", "role", "address", "ip", "prefix", "mask", "network", "mtu", "index", "first",
               "dns", "dns_csv")
WORKLOAD_FIELDS = ("id", "tool", "targets", "driver", "duration_minutes", "duration_s", "read_pct", "demand_iops",
                   "access_count", "fio_bssplit", "fio_rw", "rwmixread", "criteria_text", "note", "report_file")
RUN_FIELDS = ("present", "repetitions", "repeat_more", "score", "score_text", "reboot", "needs_reboot", "needs_idle",
              "idle_minutes", "idle_s", "duration_minutes", "duration_s", "counters", "counter_hosts",
              "sample_interval_s", "has_procedure", "loads", "note")

GLOBAL_NAMES = _names("bed", "name", "domain", "publisher", "dns", "dns_csv") | _names("run", *RUN_FIELDS)
# free-form mappings: any key below these prefixes is accepted
WILDCARDS = ("host.settings.", "server.settings.", "array.attributes.", "switch.settings.", "cluster.settings.",
             "workload.parameters.", "scenario.settings.")


@dataclass(frozen=True)
class Domain:
    name: str
    names: frozenset
    build: Callable[[_Ctx], list[Item]]
    doc: str


DOMAINS: dict[str, Domain] = {}


def _domain(name: str, names: set[str], doc: str):
    def register(fn: Callable[[_Ctx], list[Item]]):
        DOMAINS[name] = Domain(name, frozenset(names | GLOBAL_NAMES), fn, doc)
        return fn
    return register


_HOST = _names("host", *HOST_FIELDS)


# ----------------------------------------------------------------------- servers
@_domain("server", _HOST | _names("server", *HOST_FIELDS),
         "every physical server (values as host.* and server.*)")
def _servers(ctx: _Ctx) -> list[Item]:
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.simulated:
            continue
        vals = ctx.host_vals(s)
        vals.update({"server." + k[5:]: v for k, v in vals.items()})
        out.append(Item(vals, s.id, platform_of(s), (i,), 0))
    return out


@_domain("bios", _HOST | _names("bios", "name", "label", "value", "value_text"), "each BIOS setting of each server")
def _bios(ctx: _Ctx) -> list[Item]:
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.simulated:
            continue
        base = ctx.host_vals(s)
        for j, (k, v) in enumerate(s.bios.items()):
            vals = dict(base)
            src = f"{s.id}.bios.{k}"
            _put(vals, "bios.name", _text(k, src))
            _put(vals, "bios.label", _text(_humanize(k), src))
            _put(vals, "bios.value", _any_val(v, src))
            _put(vals, "bios.value_text", _text(_plain(v) if not isinstance(v, bool) else
                                                ("Enabled" if v else "Disabled"), src))
            out.append(Item(vals, s.id, platform_of(s), (i,), j))
    return out


@_domain("software", _HOST | _names("software", "name", "index"), "each software item listed on each server")
def _software(ctx: _Ctx) -> list[Item]:
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.simulated:
            continue
        base = ctx.host_vals(s)
        for j, name in enumerate(s.software):
            vals = dict(base)
            _put(vals, "software.name", _text(name, f"{s.id}.software[{j}]"))
            _put(vals, "software.index", _num(j + 1))
            out.append(Item(vals, s.id, platform_of(s), (i,), j))
    return out


@_domain("vswitch", _HOST | _names("vswitch", "id", "name", "role", "uplinks", "uplink_names", "uplink_labels",
                                   "sriov", "management_os"), "each virtual switch, on its host")
def _vswitches(ctx: _Ctx) -> list[Item]:
    out = []
    for j, vs in enumerate(ctx.bed.virtual_switches):
        host = ctx.idx.servers.get(vs.host)
        if host is not None and host.simulated:
            continue
        vals = ctx.host_vals(host) if host else {}
        if host is None:
            _put(vals, "host.id", _text(vs.host, f"{vs.id}.host"))
        _put(vals, "vswitch.id", _text(vs.id, f"{vs.id}.id"))
        _put(vals, "vswitch.name", _text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
        _put(vals, "vswitch.role", _text(_ROLE_TEXT.get(vs.role, vs.role), f"{vs.id}.role"))
        _put(vals, "vswitch.uplinks", _list(vs.uplinks, f"{vs.id}.uplinks"))
        names, labels = [], []
        for up in vs.uplinks:
            pr = ctx.idx.ports.get(up)
            if pr is not None:
                names.append(pr.port.name)
                labels.append(getattr(pr.port, "label", "") or pr.port.name)
        _put(vals, "vswitch.uplink_names", _list(names, f"{vs.id}.uplinks"))
        _put(vals, "vswitch.uplink_labels", _list(labels, f"{vs.id}.uplinks"))
        _put(vals, "vswitch.sriov", _bool(vs.sriov, f"{vs.id}.sriov"))
        _put(vals, "vswitch.management_os", _bool(vs.management_os, f"{vs.id}.management_os"))
        out.append(Item(vals, vs.host, platform_of(host) if host else "", (ctx.host_rank(vs.host),), 1000 + j))
    return out


@_domain("port", _HOST | _names("port", *PORT_FIELDS, "adapter", "adapter_model", "index", "dns", "dns_csv",
                                "needs_ip"),
         "each port of each physical server")
def _ports(ctx: _Ctx) -> list[Item]:
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.simulated:
            continue
        base = ctx.host_vals(s)
        k = 0
        for ad in s.adapters:
            for p in ad.ports:
                k += 1
                if p.kind not in ("ethernet", "management", "infiniband") or "unused" in p.roles:
                    continue
                vals = dict(base)
                vals.update(ctx.port_vals(s.id, p))
                _put(vals, "port.adapter", _text(ad.name, f"{s.id}.adapters"))
                _put(vals, "port.adapter_model", _text(ad.model, f"{s.id}.adapters"))
                _put(vals, "port.index", _num(k))
                # a virtual switch's uplink that the host OS does not share carries no host address
                vs = ctx.vswitch_of_port.get(f"{s.id}:{p.name}")
                uplink_only = vs is not None and not vs.management_os
                _put(vals, "port.needs_ip", _bool(bool(p.address) or (bool(set(p.roles) & _IP_ROLES)
                                                                     and not uplink_only)))
                if set(p.roles) & {"lan", "management"} and s.dns:
                    _put(vals, "port.dns", _list(s.dns, f"{s.id}.dns"))
                    _put(vals, "port.dns_csv", _text(",".join(s.dns), f"{s.id}.dns"))
                out.append(Item(vals, s.id, platform_of(s), (i,), k))
    return out


# ----------------------------------------------------------------------- switches and links
_SWITCH = _names("switch", "id", "model", "firmware", "kind", "mtu", "flow_control", "flow_control_text",
                 "spanning_tree", "vlans", "roles", "role_text", "fabric", "port_count", "label", "display")


def _switch_vals(sw: Any) -> Values:
    out: Values = {}
    r = sw.id
    _put(out, "switch.id", _text(sw.id, f"{r}.id"))
    _put(out, "switch.model", _text(sw.model, f"{r}.model"))
    _put(out, "switch.firmware", _text(sw.firmware, f"{r}.firmware"))
    _put(out, "switch.kind", _token(sw.kind, f"{r}.kind"))
    _put(out, "switch.mtu", _num(sw.mtu, f"{r}.mtu"))
    _put(out, "switch.flow_control", _bool(sw.flow_control, f"{r}.flow_control"))
    if sw.flow_control is not None:
        _put(out, "switch.flow_control_text", _text("enabled" if sw.flow_control else "disabled", f"{r}.flow_control"))
    _put(out, "switch.spanning_tree", _text(sw.spanning_tree, f"{r}.spanning_tree"))
    _put(out, "switch.vlans", _list(sw.vlans, f"{r}.vlans"))
    _put(out, "switch.roles", _list(sw.roles, f"{r}.roles"))
    _put(out, "switch.role_text", _text(", ".join(_ROLE_TEXT.get(x, x) for x in sw.roles), f"{r}.roles"))
    _put(out, "switch.fabric", _text(sw.fabric, f"{r}.fabric"))
    _put(out, "switch.port_count", _num(sw.port_count, f"{r}.port_count"))
    _put(out, "switch.label", _text(sw.label, f"{r}.label"))
    _put(out, "switch.display", _text(f"{sw.id} ({sw.model})" if sw.model else sw.id, f"{r}.model"))
    for k, v in sw.settings.items():
        _put(out, f"switch.settings.{k}", _any_val(v, f"{r}.settings.{k}"))
    return out


@_domain("switch", _SWITCH, "each switch")
def _switches(ctx: _Ctx) -> list[Item]:
    return [Item(_switch_vals(sw), sw.id, "switch", (i,), 0)
            for i, sw in enumerate(ctx.bed.switches) if not sw.simulated]


@_domain("switch_setting", _SWITCH | _names("setting", "name", "label", "value", "value_text"),
         "each entry of each switch's settings")
def _switch_settings(ctx: _Ctx) -> list[Item]:
    out = []
    for i, sw in enumerate(ctx.bed.switches):
        base = _switch_vals(sw)
        for j, (k, v) in enumerate(sw.settings.items()):
            vals = dict(base)
            src = f"{sw.id}.settings.{k}"
            _put(vals, "setting.name", _text(k, src))
            _put(vals, "setting.label", _text(_humanize(k), src))
            _put(vals, "setting.value", _any_val(v, src))
            _put(vals, "setting.value_text", _text(_plain(v), src))
            out.append(Item(vals, sw.id, "switch", (i,), 100 + j))
    return out


@_domain("switch_port", _SWITCH | _names("port", *PORT_FIELDS, "edge"), "each port a switch describes")
def _switch_ports(ctx: _Ctx) -> list[Item]:
    out = []
    for i, sw in enumerate(ctx.bed.switches):
        base = _switch_vals(sw)
        for j, p in enumerate(sw.ports):
            vals = dict(base)
            vals.update(ctx.port_vals(sw.id, p, network_mtu=False))
            _put(vals, "port.edge", _bool(p.edge, f"{sw.id}:{p.name}.edge"))
            out.append(Item(vals, sw.id, "switch", (i,), 200 + j))
    return out


@_domain("link", _names("link", "a", "b", "kind", "a_label", "b_label", "note", "switch"),
         "each cable / ISL / LAG, under the switch it plugs into")
def _links(ctx: _Ctx) -> list[Item]:
    out = []
    sw_rank = {sw.id: i for i, sw in enumerate(ctx.bed.switches)}
    for j, ln in enumerate(ctx.bed.links):
        vals: Values = {}
        src = f"links[{j}]"
        _put(vals, "link.a", _text(ln.a, f"{src}.a"))
        _put(vals, "link.b", _text(ln.b, f"{src}.b"))
        _put(vals, "link.kind", _token(ln.kind, f"{src}.kind"))
        for end, key in ((ln.a, "a_label"), (ln.b, "b_label")):
            pr = ctx.idx.ports.get(end)
            if pr is not None and getattr(pr.port, "label", ""):
                _put(vals, f"link.{key}", _text(pr.port.label, f"{end}.label"))
        sw = next((d for d in (ln.b.rpartition(":")[0] or ln.b, ln.a.rpartition(":")[0] or ln.a) if d in sw_rank), "")
        _put(vals, "link.switch", _text(sw, f"{src}"))
        group = (sw_rank[sw],) if sw else (len(sw_rank),)
        out.append(Item(vals, sw, "switch" if sw else "", group, 300 + j))
    return out


# ----------------------------------------------------------------------- storage
_ARRAY = _names("array", *ARRAY_FIELDS)


def _array_items(ctx: _Ctx, sub: int, per_array: Callable[[StorageArray, Values], Iterable[tuple[Values, str]]]
                 ) -> list[Item]:
    out = []
    for i, a in enumerate(ctx.bed.arrays):
        if a.simulated:
            continue
        base = ctx.array_vals(a)
        for j, (vals, target) in enumerate(per_array(a, base)):
            out.append(Item(vals, target or a.id, "array", (i,), sub + j))
    return out


@_domain("array", _ARRAY, "each storage array")
def _arrays(ctx: _Ctx) -> list[Item]:
    return _array_items(ctx, 0, lambda a, base: [(base, a.id)])


@_domain("disk_group", _ARRAY | _names("group", *GROUP_FIELDS), "each disk / RAID group of each array")
def _disk_groups(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for k, g in enumerate(a.disk_groups, 1):
            vals = dict(base)
            vals.update(ctx.group_vals(a, g, k))
            yield vals, a.id
    return _array_items(ctx, 1000, per)


@_domain("pool", _ARRAY | _names("pool", "name", "provisioning", "purpose", "raid", "raid_text", "groups",
                                 "formatted"),
         "each pool of each array")
def _pools(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for p in a.pools:
            vals = dict(base)
            ref = f"{a.id}:pool:{p.name}"
            _put(vals, "pool.name", _text(p.name, f"{ref}.name"))
            _put(vals, "pool.provisioning", _token(p.provisioning, f"{ref}.provisioning"))
            _put(vals, "pool.purpose", _list(p.purpose, f"{ref}.purpose"))
            _put(vals, "pool.raid", _token(p.raid, f"{ref}.raid"))
            _put(vals, "pool.raid_text", _text(_RAID_TEXT.get(p.raid, p.raid), f"{ref}.raid"))
            _put(vals, "pool.groups", _list([g.name for g in a.disk_groups if g.pool == p.name], f"{ref}"))
            if p.formatted_gb:
                _put(vals, "pool.formatted", _text(_size_text(p.formatted_gb), f"{ref}.formatted_gb"))
            yield vals, a.id
    return _array_items(ctx, 2000, per)


@_domain("volume", _ARRAY | _names("volume", *VOLUME_FIELDS) | _names("group", *GROUP_FIELDS),
         "each volume (LUN / virtual disk) of each array, with its disk group as group.*")
def _volumes(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        groups = {g.name: (k, g) for k, g in enumerate(a.disk_groups, 1)}
        seen_groups: set = set()
        # volumes are created group by group, in disk-group order (a vendor CLI numbers groups that way)
        order = sorted(range(len(a.volumes)),
                       key=lambda n: (groups[a.volumes[n].group][0] if a.volumes[n].group in groups else 10**6, n))
        for n in order:
            v = a.volumes[n]
            vals = dict(base)
            first = v.group not in seen_groups
            seen_groups.add(v.group)
            gi = groups.get(v.group)
            if gi is not None:
                vals.update(ctx.group_vals(a, gi[1], gi[0]))
            vals.update(ctx.volume_vals(a, v, first, gi[0] if gi else None))
            yield vals, a.id
    return _array_items(ctx, 3000, per)


@_domain("array_port", _ARRAY | _names("port", *PORT_FIELDS, "controller", "controller_index",
                                       "controller_letter", "port_index"),
         "each host (data) port of each array controller")
def _array_ports(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for ci, c in enumerate(a.controllers):
            k = 0
            for p in c.ports:
                if p.kind in ("management", "sas") or "management" in p.roles or "unused" in p.roles:
                    continue
                vals = dict(base)
                vals.update(ctx.port_vals(a.id, p))
                _put(vals, "port.controller", _text(c.name, f"{a.id}:{p.name}"))
                _put(vals, "port.controller_index", _num(ci))
                _put(vals, "port.controller_letter", _token("ab"[ci] if ci < 2 else str(ci)))
                _put(vals, "port.port_index", _num(k))
                k += 1
                yield vals, a.id
    return _array_items(ctx, 4000, per)


@_domain("host_group", _ARRAY | _names("host_group", "name", "members"), "each host group of each array")
def _host_groups(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for hg in a.host_groups:
            vals = dict(base)
            _put(vals, "host_group.name", _text(hg.name, f"{a.id}:{hg.name}.name"))
            _put(vals, "host_group.members", _list([h.name for h in a.hosts if h.host_group == hg.name],
                                                   f"{a.id}.hosts"))
            yield vals, a.id
    return _array_items(ctx, 5000, per)


@_domain("array_host", _ARRAY | _names("array_host", "name", "server", "host_type", "host_group", "initiators",
                                          "initiator"),
         "each host defined on each array")
def _array_hosts(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        for h in a.hosts:
            vals = dict(base)
            src = f"{a.id}:host:{h.name}"
            _put(vals, "array_host.name", _text(h.name, f"{src}.name"))
            _put(vals, "array_host.server", _text(h.server, f"{src}.server"))
            _put(vals, "array_host.host_type", _text(h.host_type, f"{src}.host_type"))
            _put(vals, "array_host.host_group", _text(h.host_group, f"{src}.host_group"))
            _put(vals, "array_host.initiators", _list(h.initiators, f"{src}.initiators"))
            if h.initiators:
                _put(vals, "array_host.initiator", _text(h.initiators[0], f"{src}.initiators"))
            yield vals, a.id
    return _array_items(ctx, 6000, per)


@_domain("mapping", _ARRAY | _names("mapping", "volume", "to", "to_kind", "lun", "lun_auto", "ports"),
         "each volume-to-host(-group) mapping of each array")
def _mappings(ctx: _Ctx) -> list[Item]:
    def per(a: StorageArray, base: Values):
        groups = {hg.name for hg in a.host_groups}
        for m in a.mappings:
            vals = dict(base)
            src = f"{a.id}.mappings"
            _put(vals, "mapping.volume", _text(m.volume, src))
            _put(vals, "mapping.to", _text(m.to, src))
            _put(vals, "mapping.to_kind", _token("hostGroup" if m.to in groups else "host", src))
            _put(vals, "mapping.lun", _num(m.lun, src))
            _put(vals, "mapping.lun_auto", _num(ctx.lun.get(f"{a.id}:{m.volume}"), src))
            _put(vals, "mapping.ports", _list(m.ports, src))
            yield vals, a.id
    return _array_items(ctx, 7000, per)


def _format_hosts(ctx: _Ctx, a: StorageArray) -> dict[str, list[Any]]:
    """Server id -> volumes of `a` it brings online and formats (a cluster's first node only)."""
    members: dict[str, list[str]] = {}
    for h in a.hosts:
        if h.server:
            members.setdefault(h.name, []).append(h.server)
            if h.host_group:
                members.setdefault(h.host_group, []).append(h.server)
    by_vol: dict[str, list[str]] = {}
    for m in a.mappings:
        for srv in members.get(m.to, []):
            if srv in ctx.idx.servers and srv not in by_vol.setdefault(m.volume, []):
                by_vol[m.volume].append(srv)
    out: dict[str, list[Any]] = {}
    vols = {v.name: v for v in a.volumes}
    for name, servers in by_vol.items():
        if name not in vols:
            continue
        chosen = sorted(servers, key=ctx.host_rank)[0]
        c = ctx.cluster_of.get(chosen)
        if c is not None and c.nodes and c.nodes[0] in servers:
            chosen = c.nodes[0]
        out.setdefault(chosen, []).append(vols[name])
    return out


@_domain("host_disks", _HOST | _ARRAY | _names("disks", "count", "volumes"),
         "each server that brings an array's new disks online (a cluster's first node), after its logons")
def _host_disks(ctx: _Ctx) -> list[Item]:
    out = []
    for i, a in enumerate(ctx.bed.arrays):
        if a.simulated:
            continue
        base = ctx.array_vals(a)
        for sid, vols in _format_hosts(ctx, a).items():
            s = ctx.idx.servers[sid]
            vals = dict(base)
            vals.update(ctx.host_vals(s))
            _put(vals, "disks.count", _num(len(vols), f"{a.id}.mappings"))
            _put(vals, "disks.volumes", _list([v.name for v in vols], f"{a.id}.mappings"))
            out.append(Item(vals, sid, platform_of(s), (ctx.host_rank(sid),), 5000 + i))
    return out


@_domain("host_volume", _HOST | _ARRAY | _names("volume", *VOLUME_FIELDS) | _names("group", *GROUP_FIELDS),
         "each volume a server formats (a cluster's first node), after its logons")
def _host_volumes(ctx: _Ctx) -> list[Item]:
    out = []
    for i, a in enumerate(ctx.bed.arrays):
        if a.simulated:
            continue
        base = ctx.array_vals(a)
        groups = {g.name: (k, g) for k, g in enumerate(a.disk_groups, 1)}
        for sid, vols in _format_hosts(ctx, a).items():
            s = ctx.idx.servers[sid]
            hv = ctx.host_vals(s)
            for j, v in enumerate(vols):
                vals = dict(base)
                vals.update(hv)
                gi = groups.get(v.group)
                if gi is not None:
                    vals.update(ctx.group_vals(a, gi[1], gi[0]))
                vals.update(ctx.volume_vals(a, v, False, gi[0] if gi else None))
                out.append(Item(vals, sid, platform_of(s), (ctx.host_rank(sid),), 6000 + i * 1000 + j))
    return out


# ----------------------------------------------------------------------- connectivity
_PATH = _names("path", "index", "kind", "initiator", "initiator_name", "initiator_label", "initiator_ip",
               "initiator_wwpn", "target", "target_name", "target_label", "target_ip", "target_wwpn",
               "target_controller", "array", "fabric", "multipath", "persistent", "preferred", "iface", "volumes")
_MPHOST = _HOST | _names("host", "path_count", "path_kinds", "portals", "arrays")


def _paths_by_host(ctx: _Ctx) -> dict[str, list[tuple[int, Any]]]:
    out: dict[str, list[tuple[int, Any]]] = {}
    for n, p in enumerate(ctx.bed.paths):
        out.setdefault(p.host, []).append((n, p))
    return out


def _ip_of(pr: Any) -> str:
    """The IP of a port (validated by ipaddress, so safe to use as a bare token)."""
    i = _iface(getattr(pr.port, "address", "") if pr is not None else "")
    return str(i.ip) if i is not None else ""


def _mp_host_vals(ctx: _Ctx, host_id: str, paths: list[tuple[int, Any]]) -> Values:
    comp = ctx.server_or_vm(host_id)
    vals = ctx.host_vals(comp) if comp is not None else {}
    if comp is None:
        _put(vals, "host.id", _text(host_id, "paths.host"))
    _put(vals, "host.path_count", _num(len(paths), "paths"))
    _put(vals, "host.path_kinds", _list(sorted({p.kind for _, p in paths}), "paths"))
    portals, arrays = [], []
    for _, p in paths:
        pr = ctx.idx.ports.get(p.target)
        ip = _ip_of(pr)
        if ip and ip not in portals:
            portals.append(ip)
        if pr is not None and pr.device.id not in arrays:
            arrays.append(pr.device.id)
    _put(vals, "host.portals", _list(portals, "paths"))
    _put(vals, "host.arrays", _list(arrays, "paths"))
    return vals


def _host_items(ctx: _Ctx, sub: int, fn: Callable[[str, list[tuple[int, Any]], Values], Iterable[Values]]
                ) -> list[Item]:
    out = []
    for host_id, paths in _paths_by_host(ctx).items():
        comp = ctx.server_or_vm(host_id)
        base = ctx.cached(("mp_host", host_id), lambda: _mp_host_vals(ctx, host_id, paths))
        for j, vals in enumerate(fn(host_id, paths, base)):
            out.append(Item(vals, host_id, platform_of(comp), (ctx.host_rank(host_id),), sub + j))
    return out


@_domain("mp_host", _MPHOST, "each server or VM with storage paths")
def _mp_hosts(ctx: _Ctx) -> list[Item]:
    return _host_items(ctx, 0, lambda h, paths, base: [base])


@_domain("portal", _MPHOST | _names("portal", "ip", "ref", "label", "array", "initiator_ip", "index"),
         "each iSCSI target portal a host discovers (in path order)")
def _portals(ctx: _Ctx) -> list[Item]:
    def per(host_id: str, paths: list[tuple[int, Any]], base: Values):
        seen: set = set()
        k = 0
        for n, p in paths:
            if p.kind != "iscsi":
                continue
            pr = ctx.idx.ports.get(p.target)
            ip = _ip_of(pr)
            key = ip or p.target
            if key in seen:
                continue
            seen.add(key)
            k += 1
            vals = dict(base)
            _put(vals, "portal.ip", _token(ip, f"{p.target}.address"))
            _put(vals, "portal.ref", _text(p.target, f"paths[{n}].target"))
            if pr is not None:
                _put(vals, "portal.label", _text(getattr(pr.port, "label", "") or pr.port.name, f"{p.target}.label"))
                _put(vals, "portal.array", _text(pr.device.id, f"paths[{n}].target"))
            ipr = ctx.idx.port(p.initiator)
            _put(vals, "portal.initiator_ip", _token(_ip_of(ipr), f"{p.initiator}.address"))
            _put(vals, "portal.index", _num(k))
            yield vals
    return _host_items(ctx, 100, per)


@_domain("path", _MPHOST | _PATH, "each storage path (iSCSI session / FC path): initiator port to target port")
def _paths(ctx: _Ctx) -> list[Item]:
    def per(host_id: str, paths: list[tuple[int, Any]], base: Values):
        for k, (n, p) in enumerate(paths, 1):
            vals = dict(base)
            src = f"paths[{n}]"
            ipr = ctx.idx.port(p.initiator)
            tpr = ctx.idx.ports.get(p.target)
            _put(vals, "path.index", _num(k))
            _put(vals, "path.kind", _token(p.kind, f"{src}.kind"))
            _put(vals, "path.initiator", _text(p.initiator, f"{src}.initiator"))
            _put(vals, "path.target", _text(p.target, f"{src}.target"))
            if ipr is not None:
                _put(vals, "path.initiator_name", _text(ipr.port.name, f"{src}.initiator"))
                _put(vals, "path.initiator_label", _text(getattr(ipr.port, "label", "") or ipr.port.name,
                                                         f"{p.initiator}.label"))
                _put(vals, "path.initiator_ip", _token(_ip_of(ipr), f"{p.initiator}.address"))
                _put(vals, "path.initiator_wwpn", _text(getattr(ipr.port, "wwpn", ""), f"{p.initiator}.wwpn"))
                _put(vals, "path.iface", _text(f"iface-{ipr.port.name}", f"{src}.initiator"))
                _put(vals, "path.fabric", _text(getattr(ipr.port, "fabric", ""), f"{p.initiator}.fabric"))
            if tpr is not None:
                _put(vals, "path.target_name", _text(tpr.port.name, f"{src}.target"))
                _put(vals, "path.target_label", _text(getattr(tpr.port, "label", "") or tpr.port.name,
                                                      f"{p.target}.label"))
                _put(vals, "path.target_ip", _token(_ip_of(tpr), f"{p.target}.address"))
                _put(vals, "path.target_wwpn", _text(getattr(tpr.port, "wwpn", ""), f"{p.target}.wwpn"))
                if tpr.controller is not None:
                    _put(vals, "path.target_controller", _text(tpr.controller.name, f"{p.target}"))
                _put(vals, "path.array", _text(tpr.device.id, f"{src}.target"))
            _put(vals, "path.multipath", _bool(p.multipath, f"{src}.multipath"))
            _put(vals, "path.persistent", _bool(p.persistent, f"{src}.persistent"))
            _put(vals, "path.preferred", _bool(p.preferred, f"{src}.preferred"))
            _put(vals, "path.volumes", _list(p.volumes, f"{src}.volumes"))
            yield vals
    return _host_items(ctx, 1000, per)


# ----------------------------------------------------------------------- cluster
def _cluster_vals(ctx: _Ctx, c: Any) -> Values:
    out: Values = {}
    r = c.id
    _put(out, "cluster.id", _text(c.id, f"{r}.id"))
    _put(out, "cluster.nodes", _list(c.nodes, f"{r}.nodes"))
    _put(out, "cluster.node_count", _num(len(c.nodes), f"{r}.nodes") if c.nodes else None)
    _put(out, "cluster.first_node", _text(c.nodes[0] if c.nodes else "", f"{r}.nodes"))
    _put(out, "cluster.address", _text(c.address, f"{r}.address"))
    i = _iface(c.address)
    if i is not None:
        _put(out, "cluster.ip", _token(str(i.ip), f"{r}.address"))
        if "/" in c.address:
            _put(out, "cluster.prefix", _num(i.network.prefixlen, f"{r}.address"))
            if i.version == 4:
                _put(out, "cluster.mask", _token(str(i.netmask), f"{r}.address"))
    nets = [ctx.idx.networks.get(n) for n in c.excluded_networks]
    if nets and all(n is not None and n.cidr for n in nets):
        _put(out, "cluster.ignore_networks", _list([n.cidr for n in nets], f"{r}.excluded_networks"))
    _put(out, "cluster.ignore_network_names", _list(c.excluded_networks, f"{r}.excluded_networks"))
    lm = [ctx.idx.networks.get(n) for n in c.live_migration_networks]
    if lm and all(n is not None and n.cidr for n in lm):
        _put(out, "cluster.lm_networks", _list([n.cidr for n in lm], f"{r}.live_migration_networks"))
    _put(out, "cluster.lm_network_names", _list(c.live_migration_networks, f"{r}.live_migration_networks"))
    _put(out, "cluster.quorum", _token(c.quorum, f"{r}.quorum"))
    _put(out, "cluster.quorum_text", _text(_QUORUM_TEXT.get(c.quorum, _humanize(c.quorum)), f"{r}.quorum"))
    _put(out, "cluster.witness", _text(c.witness, f"{r}.witness"))
    _put(out, "cluster.witness_name", _text(c.witness.rpartition(":")[2], f"{r}.witness"))
    _put(out, "cluster.shared_volumes", _list([v.rpartition(":")[2] for v in c.shared_volumes],
                                              f"{r}.shared_volumes"))
    disks = ([c.witness] if c.witness and ":" in c.witness else []) + list(c.shared_volumes)
    _put(out, "cluster.disks", _list([v.rpartition(":")[2] for v in disks], f"{r}.shared_volumes"))
    for k, v in c.settings.items():
        _put(out, f"cluster.settings.{k}", _any_val(v, f"{r}.settings.{k}"))
    return out


def _cluster_platform(ctx: _Ctx, c: Any) -> str:
    for n in c.nodes:
        s = ctx.idx.servers.get(n)
        if s is not None and platform_of(s):
            return platform_of(s)
    return ""


_CLUSTER = _names("cluster", *CLUSTER_FIELDS)


@_domain("cluster", _CLUSTER, "each cluster (commands run on its first node)")
def _clusters(ctx: _Ctx) -> list[Item]:
    return [Item(_cluster_vals(ctx, c), c.nodes[0] if c.nodes else c.id, _cluster_platform(ctx, c), (i,), 0)
            for i, c in enumerate(ctx.bed.clusters)]


@_domain("cluster_disk", _CLUSTER | _names("disk", "name", "volume", "role", "lun_pattern"),
         "each disk a cluster takes (witness first, then shared volumes)")
def _cluster_disks(ctx: _Ctx) -> list[Item]:
    out = []
    for i, c in enumerate(ctx.bed.clusters):
        base = _cluster_vals(ctx, c)
        disks = ([(c.witness, "witness")] if c.witness and ":" in c.witness else []) + \
                [(v, "cluster shared volume") for v in c.shared_volumes]
        for j, (ref, role) in enumerate(disks):
            vals = dict(base)
            _put(vals, "disk.name", _text(ref.rpartition(":")[2], f"{c.id}.shared_volumes"))
            _put(vals, "disk.volume", _text(ref, f"{c.id}.shared_volumes"))
            _put(vals, "disk.role", _text(role))
            if ref in ctx.lun:
                _put(vals, "disk.lun_pattern", _text(f"LUN {ctx.lun[ref]}$", f"{ref.partition(':')[0]}.mappings"))
            out.append(Item(vals, c.nodes[0] if c.nodes else c.id, _cluster_platform(ctx, c), (i,), 100 + j))
    return out


@_domain("csv", _CLUSTER | _names("csv", "name", "volume", "index", "path"), "each cluster shared volume")
def _csvs(ctx: _Ctx) -> list[Item]:
    out = []
    for i, c in enumerate(ctx.bed.clusters):
        base = _cluster_vals(ctx, c)
        for j, ref in enumerate(c.shared_volumes, 1):
            vals = dict(base)
            _put(vals, "csv.name", _text(ref.rpartition(":")[2], f"{c.id}.shared_volumes"))
            _put(vals, "csv.volume", _text(ref, f"{c.id}.shared_volumes"))
            _put(vals, "csv.index", _num(j))
            _put(vals, "csv.path", _text(f"C:\\ClusterStorage\\Volume{j}", f"{c.id}.shared_volumes"))
            out.append(Item(vals, c.nodes[0] if c.nodes else c.id, _cluster_platform(ctx, c), (i,), 200 + j))
    return out


# ----------------------------------------------------------------------- virtual machines
def _vm_base(ctx: _Ctx, vm: VM, n: int, host: Server | None) -> Values:
    base = _vm_vals(ctx, vm, n)
    base.update(ctx.host_vals(host))
    if host is None:
        _put(base, "host.id", _text(vm.host, f"{vm.id}.host"))
    return base


def _vm_vals(ctx: _Ctx, vm: VM, index: int) -> Values:
    out: Values = {}
    r = vm.id
    _put(out, "vm.id", _text(vm.id, f"{r}.id"))
    _put(out, "vm.host", _text(vm.host, f"{r}.host"))
    _put(out, "vm.role", _text(vm.role, f"{r}.role"))
    _put(out, "vm.vcpu", _num(vm.vcpu, f"{r}.vcpu"))
    mem = vm.memory_gb
    if isinstance(mem, (int, float)) and not isinstance(mem, bool):
        _put(out, "vm.memory_gb", _num(mem, f"{r}.memory_gb"))
        _put(out, "vm.memory_mb", _num(round(mem * 1024), f"{r}.memory_gb"))
    dm = vm.dynamic_memory
    _put(out, "vm.dynamic_memory", _bool(dm is not None, f"{r}.dynamic_memory"))
    if dm is not None:
        for key, val in (("startup_mb", dm.startup_gb), ("min_mb", dm.min_gb), ("max_mb", dm.max_gb)):
            if val is not None:
                _put(out, f"vm.{key}", _num(round(val * 1024), f"{r}.dynamic_memory"))
    _put(out, "vm.guest_os", _text(vm.guest_os, f"{r}.guest_os"))
    _put(out, "vm.guest_platform", _token(platform_of(vm), f"{r}.guest_os"))
    _put(out, "vm.ha", _bool(vm.highly_available, f"{r}.highly_available"))
    c = ctx.cluster_of.get(vm.host)
    if c is not None:
        _put(out, "vm.cluster", _text(c.id, f"{c.id}.nodes"))
    for nic in vm.nics:
        vs = ctx.vswitch_by_id.get(nic.vswitch)
        if vs is not None:
            _put(out, "vm.vswitch", _text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
            break
    folder = _vm_folder(ctx, vm)
    if folder:
        _put(out, "vm.path", _text(folder[0], folder[1]))
    _put(out, "vm.production", _bool(vm.production, f"{r}.production"))
    _put(out, "vm.under_load", _bool(vm.under_load, f"{r}.under_load"))
    _put(out, "vm.storage_access", _token(vm.storage_access, f"{r}.storage_access"))
    _put(out, "vm.index", _num(index + 1))
    return out


def _disk_folder(ctx: _Ctx, vm: VM, d: Any) -> tuple[str, str] | None:
    if d.path:
        return d.path, f"{vm.id}.disks.{d.name}.path"
    if d.volume in ctx.csv_path:
        path, _, c = ctx.csv_path[d.volume]
        return path, f"{c.id}.shared_volumes"
    host = ctx.idx.servers.get(vm.host)
    if host is not None:
        for key in ("hyperv_default_paths", "vm_path", "default_vm_path"):
            if host.settings.get(key):
                return str(host.settings[key]), f"{host.id}.settings.{key}"
    return None


def _vm_folder(ctx: _Ctx, vm: VM) -> tuple[str, str] | None:
    for d in vm.disks:
        f = _disk_folder(ctx, vm, d)
        if f:
            return f
    return None


_VM = _names("vm", *VM_FIELDS) | _HOST


def _vm_items(ctx: _Ctx, sub: int, per_vm: Callable[[VM, Values], Iterable[tuple[Values, str, str]]]) -> list[Item]:
    out = []
    for n, vm in enumerate(ctx.bed.vms):
        host = ctx.idx.servers.get(vm.host)
        base = ctx.cached(("vm", id(vm)), lambda: _vm_base(ctx, vm, n, host))
        for j, (vals, target, platform) in enumerate(per_vm(vm, base)):
            out.append(Item(vals, target, platform, (ctx.host_rank(vm.host), n), sub + j))
    return out


@_domain("vm_host", _HOST | _names("host", "vm_path", "vm_count"), "each server that hosts VMs")
def _vm_hosts(ctx: _Ctx) -> list[Item]:
    counts: dict[str, int] = {}
    for vm in ctx.bed.vms:
        counts[vm.host] = counts.get(vm.host, 0) + 1
    out = []
    for i, s in enumerate(ctx.bed.servers):
        if s.id not in counts:
            continue
        vals = ctx.host_vals(s)
        for key in ("hyperv_default_paths", "vm_path", "default_vm_path"):
            if s.settings.get(key):
                _put(vals, "host.vm_path", _text(str(s.settings[key]), f"{s.id}.settings.{key}"))
                break
        _put(vals, "host.vm_count", _num(counts[s.id], f"{s.id}"))
        out.append(Item(vals, s.id, platform_of(s), (i,), 0))
    return out


@_domain("vm", _VM, "each virtual machine (commands run on its host)")
def _vms(ctx: _Ctx) -> list[Item]:
    return _vm_items(ctx, 0, lambda vm, base: [(base, vm.host, platform_of(ctx.idx.servers.get(vm.host)))])


@_domain("vm_guest", _VM, "each virtual machine, inside the guest (commands run in the VM)")
def _vm_guests(ctx: _Ctx) -> list[Item]:
    return _vm_items(ctx, 500, lambda vm, base: [(base, vm.id, platform_of(vm))])


@_domain("vm_software", _VM | _names("software", "name", "index"),
         "each software item listed on each VM (inside the guest)")
def _vm_software(ctx: _Ctx) -> list[Item]:
    def per(vm: VM, base: Values):
        for k, name in enumerate(vm.software):
            vals = dict(base)
            _put(vals, "software.name", _text(name, f"{vm.id}.software[{k}]"))
            _put(vals, "software.index", _num(k + 1))
            yield vals, vm.id, platform_of(vm)
    return _vm_items(ctx, 700, per)


@_domain("vm_disk", _VM | _names("disk", *VDISK_FIELDS), "each virtual disk of each VM")
def _vm_disks(ctx: _Ctx) -> list[Item]:
    def per(vm: VM, base: Values):
        for k, d in enumerate(vm.disks):
            vals = dict(base)
            src = f"{vm.id}.disks.{d.name}"
            _put(vals, "disk.name", _text(d.name, f"{src}.name"))
            _put(vals, "disk.size_gb", _num(d.size_gb, f"{src}.size_gb"))
            _put(vals, "disk.size_text", _text(_size_text(d.size_gb), f"{src}.size_gb"))
            fmt = d.format or ""
            _put(vals, "disk.format", _token(fmt, f"{src}.format"))
            _put(vals, "disk.format_text", _text(fmt.upper(), f"{src}.format"))
            _put(vals, "disk.type", _token(d.type, f"{src}.type"))
            _put(vals, "disk.type_text", _text({"fixed": "fixed-size", "dynamic": "dynamically expanding",
                                                "differencing": "differencing",
                                                "passthrough": "pass-through"}.get(d.type, d.type), f"{src}.type"))
            if d.type == "fixed":
                _put(vals, "disk.fixed", _bool(True, f"{src}.type"))
            if d.type == "dynamic":
                _put(vals, "disk.dynamic", _bool(True, f"{src}.type"))
            _put(vals, "disk.volume", _text(d.volume, f"{src}.volume"))
            _put(vals, "disk.volume_name", _text(d.volume.rpartition(":")[2], f"{src}.volume"))
            folder = _disk_folder(ctx, vm, d)
            if folder:
                _put(vals, "disk.folder", _text(folder[0], folder[1]))
                ext = fmt or "vhdx"
                sep = "/" if "/" in folder[0] and "\\" not in folder[0] else "\\"
                _put(vals, "disk.file", _text(f"{folder[0].rstrip(sep)}{sep}{vm.id}-{d.name}.{ext}", folder[1]))
            _put(vals, "disk.controller", _text(d.controller, f"{src}.controller"))
            _put(vals, "disk.local", _bool(d.local, f"{src}.local"))
            _put(vals, "disk.index", _num(k + 1))
            _put(vals, "disk.first", _bool(k == 0))
            yield vals, vm.host, platform_of(ctx.idx.servers.get(vm.host))
    return _vm_items(ctx, 100, per)


def _vnic_vals(ctx: _Ctx, vm: VM, nic: Any, k: int) -> Values:
    vals: Values = {}
    src = f"{vm.id}:{nic.name}"
    _put(vals, "nic.name", _text(nic.name, f"{src}.name"))
    vs = ctx.vswitch_by_id.get(nic.vswitch)
    if vs is not None:
        _put(vals, "nic.vswitch", _text(vs.label or vs.id, f"{vs.id}.label" if vs.label else f"{vs.id}.id"))
    _put(vals, "nic.role", _text(_ROLE_TEXT.get(nic.role, nic.role), f"{src}.role"))
    _put(vals, "nic.address", _text(nic.address, f"{src}.address"))
    i = _iface(nic.address)
    if i is not None:
        _put(vals, "nic.ip", _token(str(i.ip), f"{src}.address"))
        if "/" in nic.address:
            _put(vals, "nic.prefix", _num(i.network.prefixlen, f"{src}.address"))
            if i.version == 4:
                _put(vals, "nic.mask", _token(str(i.netmask), f"{src}.address"))
    _put(vals, "nic.network", _text(nic.network, f"{src}.network"))
    _put(vals, "nic.mtu", _num(nic.mtu, f"{src}.mtu"))
    _put(vals, "nic.index", _num(k + 1))
    _put(vals, "nic.first", _bool(k == 0))
    if nic.role in ("lan", "management"):
        bed_dns = ctx.bed_vals()
        if "bed.dns" in bed_dns:
            vals["nic.dns"] = bed_dns["bed.dns"]
            vals["nic.dns_csv"] = bed_dns["bed.dns_csv"]
    return vals


@_domain("vm_nic", _VM | _names("nic", *VNIC_FIELDS), "each virtual NIC of each VM (on the host)")
def _vm_nics(ctx: _Ctx) -> list[Item]:
    def per(vm: VM, base: Values):
        for k, nic in enumerate(vm.nics):
            vals = dict(base)
            vals.update(ctx.cached(("nic", id(nic)), lambda: _vnic_vals(ctx, vm, nic, k)))
            yield vals, vm.host, platform_of(ctx.idx.servers.get(vm.host))
    return _vm_items(ctx, 200, per)


@_domain("guest_nic", _VM | _names("nic", *VNIC_FIELDS), "each virtual NIC of each VM (inside the guest)")
def _guest_nics(ctx: _Ctx) -> list[Item]:
    def per(vm: VM, base: Values):
        for k, nic in enumerate(vm.nics):
            vals = dict(base)
            vals.update(ctx.cached(("nic", id(nic)), lambda: _vnic_vals(ctx, vm, nic, k)))
            yield vals, vm.id, platform_of(vm)
    return _vm_items(ctx, 600, per)


# ----------------------------------------------------------------------- workloads
def _workload_vals(ctx: _Ctx, w: Any) -> Values:
    out: Values = {}
    r = w.id
    _put(out, "workload.id", _text(w.id, f"{r}.id"))
    # the id as a plain file name: a workload called `../x` must not write outside the host's folder
    _put(out, "workload.report_file", _text(file_name_for(str(w.id)) + ".json", f"{r}.id"))
    _put(out, "workload.tool", _text(w.tool, f"{r}.tool"))
    _put(out, "workload.targets", _list(w.targets, f"{r}.targets"))
    _put(out, "workload.driver", _text(w.driver, f"{r}.driver"))
    _put(out, "workload.note", _text(w.note, f"{r}.note"))
    params = w.parameters
    dur = None
    for key in ("run_time_minutes", "duration_minutes", "runtime_minutes"):
        if isinstance(params.get(key), (int, float)) and not isinstance(params.get(key), bool):
            dur = (params[key], f"{r}.parameters.{key}")
            break
    if dur is None and ctx.bed.run_plan is not None and ctx.bed.run_plan.duration_minutes:
        dur = (ctx.bed.run_plan.duration_minutes, "run_plan.duration_minutes")
    if dur is not None:
        _put(out, "workload.duration_minutes", _num(dur[0], dur[1]))
        _put(out, "workload.duration_s", _num(round(dur[0] * 60), dur[1]))
    _put(out, "workload.demand_iops", _num(w.demand_iops, f"{r}.demand_iops"))
    for k, v in params.items():
        _put(out, f"workload.parameters.{k}", _any_val(v, f"{r}.parameters.{k}"))
    if w.access:
        _put(out, "workload.access_count", _num(len(w.access), f"{r}.access"))
        total = sum(a.share_pct for a in w.access) or 1
        read = sum(a.share_pct * a.read_pct for a in w.access) / total
        rand = sum(a.share_pct * a.random_pct for a in w.access) / total
        _put(out, "workload.rwmixread", _num(round(read), f"{r}.access"))
        rw = ("randrw" if rand >= 50 else "rw") if 0 < read < 100 else \
             ("randread" if read >= 100 else "randwrite") if rand >= 50 else ("read" if read >= 100 else "write")
        _put(out, "workload.fio_rw", _token(rw, f"{r}.access"))

        def kb(x: float) -> str:
            return f"{int(x * 1024)}" if x < 1 else f"{_fmt_number(x)}k"
        split = ":".join(f"{kb(a.block_kb)}/{_fmt_number(a.share_pct)}" for a in w.access)
        _put(out, "workload.fio_bssplit", _token(split, f"{r}.access"))
    read_pct = w.read_pct if w.read_pct is not None else None
    _put(out, "workload.read_pct", _num(read_pct, f"{r}.read_pct"))
    crit = [f"{c.metric} {_COMPARISON_TEXT.get(c.comparison, c.comparison)} {_fmt_number(c.threshold)}"
            + (f"–{_fmt_number(c.upper)}" if c.comparison == "between" and c.upper is not None else "")
            + (f" {c.unit}" if c.unit else "") for c in w.criteria]
    _put(out, "workload.criteria_text", _text("; ".join(crit), f"{r}.criteria"))
    return out


def _runners(ctx: _Ctx, w: Any) -> list[str]:
    """Where a workload's tool runs: its driver, else each target that is a machine."""
    if w.driver:
        return [w.driver]
    out = [t for t in w.targets if t in ctx.idx.servers or t in ctx.idx.vms]
    return out or [""]


_WORKLOAD = _names("workload", *WORKLOAD_FIELDS)
_RUNNER = _names("runner", "id", "platform", "kind", "index")


def _runner_vals(ctx: _Ctx, rid: str, k: int) -> Values:
    vals: Values = {}
    comp = ctx.server_or_vm(rid)
    _put(vals, "runner.id", _text(rid, "workload.driver"))
    _put(vals, "runner.platform", _token(platform_of(comp)))
    _put(vals, "runner.kind", _token("vm" if isinstance(comp, VM) else "server" if comp is not None else ""))
    _put(vals, "runner.index", _num(k + 1))
    return vals


@_domain("workload", _WORKLOAD | _RUNNER | _names("workload", "runners"),
         "each workload (target: the machine that drives it, or its first target)")
def _workloads(ctx: _Ctx) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        vals = _workload_vals(ctx, w)
        runners = _runners(ctx, w)
        _put(vals, "workload.runners", _list(runners, f"{w.id}.driver" if w.driver else f"{w.id}.targets"))
        vals.update(_runner_vals(ctx, runners[0], 0))
        out.append(Item(vals, runners[0], platform_of(ctx.server_or_vm(runners[0])), (i,), 0))
    return out


@_domain("workload_runner", _WORKLOAD | _RUNNER, "each machine each workload's tool runs on")
def _workload_runners(ctx: _Ctx) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        base = _workload_vals(ctx, w)
        for k, rid in enumerate(_runners(ctx, w)):
            vals = dict(base)
            vals.update(_runner_vals(ctx, rid, k))
            out.append(Item(vals, rid, platform_of(ctx.server_or_vm(rid)), (i,), 10 + k))
    return out


@_domain("workload_param", _WORKLOAD | _names("param", "name", "label", "value", "index"),
         "each parameter of each workload")
def _workload_params(ctx: _Ctx) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        base = _workload_vals(ctx, w)
        runner = _runners(ctx, w)[0]
        for k, (key, v) in enumerate(w.parameters.items()):
            vals = dict(base)
            src = f"{w.id}.parameters.{key}"
            _put(vals, "param.name", _text(key, src))
            _put(vals, "param.label", _text(_humanize(key), src))
            _put(vals, "param.value", _text(_plain(v), src))
            _put(vals, "param.index", _num(k + 1))
            out.append(Item(vals, runner, platform_of(ctx.server_or_vm(runner)), (i,), 100 + k))
    return out


@_domain("access_spec", _WORKLOAD | _names("spec", "n", "share_pct", "block_kb", "read_pct", "write_pct",
                                           "random_pct", "sequential_pct"),
         "each access-specification line of each workload")
def _access_specs(ctx: _Ctx) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        base = _workload_vals(ctx, w)
        runner = _runners(ctx, w)[0]
        for k, a in enumerate(w.access):
            vals = dict(base)
            src = f"{w.id}.access[{k}]"
            _put(vals, "spec.n", _num(k + 1))
            _put(vals, "spec.share_pct", _num(a.share_pct, f"{src}.share_pct"))
            _put(vals, "spec.block_kb", _num(a.block_kb, f"{src}.block_kb"))
            _put(vals, "spec.read_pct", _num(a.read_pct, f"{src}.read_pct"))
            _put(vals, "spec.write_pct", _num(100 - a.read_pct if a.read_pct is not None else None, f"{src}.read_pct"))
            _put(vals, "spec.random_pct", _num(a.random_pct, f"{src}.random_pct"))
            _put(vals, "spec.sequential_pct",
                 _num(100 - a.random_pct if a.random_pct is not None else None, f"{src}.random_pct"))
            out.append(Item(vals, runner, platform_of(ctx.server_or_vm(runner)), (i,), 500 + k))
    return out


@_domain("criterion", _WORKLOAD | _names("criterion", "metric", "comparison", "comparison_text", "threshold",
                                         "upper", "unit", "source", "note"),
         "each pass criterion of each workload")
def _criteria(ctx: _Ctx) -> list[Item]:
    out = []
    for i, w in enumerate(ctx.bed.workloads):
        base = _workload_vals(ctx, w)
        for k, c in enumerate(w.criteria):
            vals = dict(base)
            src = f"{w.id}.criteria[{k}]"
            _put(vals, "criterion.metric", _text(c.metric, f"{src}.metric"))
            _put(vals, "criterion.comparison", _text(c.comparison, f"{src}.comparison"))
            _put(vals, "criterion.comparison_text", _text(_COMPARISON_TEXT.get(c.comparison, c.comparison),
                                                          f"{src}.comparison"))
            _put(vals, "criterion.threshold", _num(c.threshold, f"{src}.threshold"))
            _put(vals, "criterion.upper", _num(c.upper, f"{src}.upper"))
            _put(vals, "criterion.unit", _text(c.unit, f"{src}.unit"))
            _put(vals, "criterion.source", _text(c.source, f"{src}.source"))
            _put(vals, "criterion.note", _text(c.note, f"{src}.note"))
            out.append(Item(vals, "", "", (i,), 900 + k))
    return out


# ----------------------------------------------------------------------- run
_RESTART = re.compile(r"\b(restart|reboot)", re.I)


def _run_vals(ctx: _Ctx) -> Values:
    rp = ctx.bed.run_plan
    out: Values = {}
    _put(out, "run.present", _bool(rp is not None))
    if rp is None:
        return out
    _put(out, "run.repetitions", _num(rp.repetitions, "run_plan.repetitions"))
    if rp.repetitions:
        _put(out, "run.repeat_more", _num(rp.repetitions - 1, "run_plan.repetitions"))
    _put(out, "run.score", _token(rp.score, "run_plan.score"))
    _put(out, "run.score_text", _text({"median": "median run", "mean": "mean of the runs", "max": "best run",
                                       "min": "worst run", "last": "last run"}.get(rp.score, rp.score),
                                      "run_plan.score"))
    _put(out, "run.reboot", _bool(rp.reboot, "run_plan.reboot"))
    _put(out, "run.needs_reboot", _bool(rp.reboot and not any(_RESTART.search(s) for s in rp.reset_steps),
                                        "run_plan.reboot"))
    _put(out, "run.idle_minutes", _num(rp.idle_minutes, "run_plan.idle_minutes"))
    if rp.idle_minutes:
        # the lab's own procedure may already hold the idle wait ("Wait 10 minutes")
        idle = re.compile(rf"\b(wait|idle)\b.*\b{_fmt_number(rp.idle_minutes)}\s*min", re.I)
        _put(out, "run.needs_idle", _bool(not any(idle.search(str(s)) for s in rp.procedure), "run_plan.idle_minutes"))
    if rp.idle_minutes is not None:
        _put(out, "run.idle_s", _num(round(rp.idle_minutes * 60), "run_plan.idle_minutes"))
    _put(out, "run.duration_minutes", _num(rp.duration_minutes, "run_plan.duration_minutes"))
    if rp.duration_minutes is not None:
        _put(out, "run.duration_s", _num(round(rp.duration_minutes * 60), "run_plan.duration_minutes"))
    _put(out, "run.counters", _list(rp.counters, "run_plan.counters"))
    _put(out, "run.counter_hosts", _list(rp.counter_hosts, "run_plan.counter_hosts"))
    _put(out, "run.sample_interval_s", _num(rp.sample_interval_s, "run_plan.sample_interval_s"))
    _put(out, "run.has_procedure", _bool(bool(rp.procedure), "run_plan.procedure"))
    loads = []
    for w in ctx.bed.workloads:
        runners = [r for r in _runners(ctx, w) if r]
        loads.append(f"{w.tool} on {', '.join(runners)}" if runners else w.tool)
    _put(out, "run.loads", _list(loads, "workloads"))
    _put(out, "run.note", _text(rp.note, "run_plan.note"))
    return out


@_domain("run", set(), "the run plan (one item when the bed has one, else one item with run.present = false)")
def _run(ctx: _Ctx) -> list[Item]:
    return [Item({}, "", "", (), 0)]


@_domain("matrix", _names("matrix", "id", "variable", "levels", "scenarios", "workloads", "constants", "criteria",
                          "note"), "each entry of the test matrix")
def _matrix(ctx: _Ctx) -> list[Item]:
    out = []
    for k, m in enumerate(ctx.bed.test_matrix):
        vals: Values = {}
        src = f"test_matrix.{m.id}"
        _put(vals, "matrix.id", _text(m.id, f"{src}.id"))
        _put(vals, "matrix.variable", _text(m.variable, f"{src}.variable"))
        _put(vals, "matrix.levels", _list([_plain(x) for x in m.levels], f"{src}.levels"))
        _put(vals, "matrix.scenarios", _list(m.scenarios, f"{src}.scenarios"))
        _put(vals, "matrix.workloads", _list(m.workloads, f"{src}.workloads"))
        _put(vals, "matrix.constants", _text(_plain(m.constants), f"{src}.constants"))
        _put(vals, "matrix.criteria", _text(m.criteria, f"{src}.criteria"))
        _put(vals, "matrix.note", _text(m.note, f"{src}.note"))
        out.append(Item(vals, "", "", (), k))
    return out


@_domain("scenario", _names("scenario", "id", "description", "failed", "excluded", "placement", "reference",
                            "how", "note"), "each scenario (state) of the bed")
def _scenarios(ctx: _Ctx) -> list[Item]:
    out = []
    for k, s in enumerate(ctx.bed.scenarios):
        vals: Values = {}
        src = f"scenarios.{s.id}"
        _put(vals, "scenario.id", _text(s.id, f"{src}.id"))
        _put(vals, "scenario.description", _text(s.description, f"{src}.description"))
        _put(vals, "scenario.failed", _list(s.failed, f"{src}.failed"))
        _put(vals, "scenario.excluded", _list(s.excluded, f"{src}.excluded"))
        _put(vals, "scenario.placement", _text(", ".join(f"{v} on {h}" for v, h in s.placement.items()),
                                               f"{src}.placement"))
        _put(vals, "scenario.reference", _bool(s.reference, f"{src}.reference"))
        _put(vals, "scenario.how", _text(_plain(s.settings.get("how", "")), f"{src}.settings.how"))
        _put(vals, "scenario.note", _text(s.note, f"{src}.note"))
        for key, v in s.settings.items():
            _put(vals, f"scenario.settings.{key}", _any_val(v, f"{src}.settings.{key}"))
        out.append(Item(vals, "", "", (), 100 + k))
    return out


@_domain("reset_step", _names("reset", "text", "index"), "each reset step of the run plan")
def _reset_steps(ctx: _Ctx) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    return [Item({"reset.text": Val(str(t).strip().rstrip("."), f"run_plan.reset_steps[{k}]"), "reset.index": Val(str(k + 1), "", "number")},
                 "", "", (), 200 + k) for k, t in enumerate(rp.reset_steps) if str(t).strip()]


@_domain("procedure_step", _names("procedure", "text", "index"), "each step of the run plan's own procedure")
def _procedure_steps(ctx: _Ctx) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    return [Item({"procedure.text": Val(str(t).strip().rstrip("."), f"run_plan.procedure[{k}]"),
                  "procedure.index": Val(str(k + 1), "", "number")}, "", "", (), 600 + k)
            for k, t in enumerate(rp.procedure) if str(t).strip()]


def _machines_under_test(ctx: _Ctx) -> list[str]:
    rp = ctx.bed.run_plan
    hosts = [h for h in (rp.counter_hosts if rp else []) if h in ctx.idx.servers]
    if not hosts:
        hosts = [s.id for s in ctx.bed.servers if s.role == "hypervisor" and not s.simulated]
    return hosts


@_domain("reboot_host", _HOST, "each server restarted before a run (the counter hosts, else the hypervisors)")
def _reboot_hosts(ctx: _Ctx) -> list[Item]:
    return [Item(ctx.host_vals(ctx.idx.servers[h]), h, platform_of(ctx.idx.servers[h]), (), 300 + k)
            for k, h in enumerate(_machines_under_test(ctx))]


@_domain("counter_host", _HOST, "each server performance counters are collected on")
def _counter_hosts(ctx: _Ctx) -> list[Item]:
    rp = ctx.bed.run_plan
    if rp is None:
        return []
    out = []
    for k, h in enumerate(rp.counter_hosts):
        comp = ctx.server_or_vm(h)
        vals = ctx.host_vals(comp) if comp is not None else {"host.id": Val(h, "run_plan.counter_hosts")}
        out.append(Item(vals, h, platform_of(comp), (), 400 + k))
    return out


# ========================================================================== templates

class TemplateError(BedFileError):
    """A step template could not be used: every problem with its file and line."""

    def __init__(self, problems: list[Problem], filename: str = ""):
        super().__init__(problems, filename)


def _template_error(path: Path | str, line: int | None, message: str, hint: str = "") -> TemplateError:
    return TemplateError([Problem(message, hint, line)], str(path))


@dataclass(slots=True)
class _Ref:
    name: str


@dataclass(slots=True)
class _StepRef:
    step_ids: tuple[str, ...]     # the first of these that produced a step
    last: bool


@dataclass(slots=True)
class _Opt:
    pieces: list
    required: tuple = ()          # the value names directly inside (not in nested optional parts)


@dataclass
class _Tpl:
    """A parsed template string: literal text, value references, optional groups, step references."""
    pieces: list
    line: int
    code: tuple = ()              # the pieces as (kind, ...) tuples: what `_render` runs

    def __post_init__(self) -> None:
        self.code = _compile(self.pieces)

    def names(self) -> Iterator[str]:
        def walk(pieces: list) -> Iterator[str]:
            for p in pieces:
                if isinstance(p, _Ref):
                    yield p.name
                elif isinstance(p, _Opt):
                    yield from walk(p.pieces)
        return walk(self.pieces)

    def step_refs(self) -> Iterator[_StepRef]:
        def walk(pieces: list) -> Iterator[_StepRef]:
            for p in pieces:
                if isinstance(p, _StepRef):
                    yield p
                elif isinstance(p, _Opt):
                    yield from walk(p.pieces)
        return walk(self.pieces)


_LIT, _REF, _OPT, _STEP = range(4)


def _compile(pieces: list) -> tuple:
    out = []
    for p in pieces:
        if isinstance(p, str):
            out.append((_LIT, p))
        elif isinstance(p, _Ref):
            out.append((_REF, p.name))
        elif isinstance(p, _Opt):
            out.append((_OPT, p.required, _compile(p.pieces)))
        else:
            out.append((_STEP, f"\x00{'|'.join(p.step_ids)}{':last' if p.last else ''}\x00"))
    return tuple(out)


_NAME = re.compile(r"^[A-Za-z_]\w*(\.[^{}]+)+$")
_STEPREF = re.compile(r"^@([\w-]+(?:\|[\w-]+)*)(:last)?$")


def _parse_template(text: str, line: int, where: str, path: Path, command: bool) -> _Tpl:
    """Parse `{name}`, `{? ... ?}`, `{@step}`, `{{`, `}}`; errors name the line the problem is on."""
    stack: list[list] = [[]]
    buf: list[str] = []
    i, n = 0, len(text)

    def here(k: int) -> int:
        return line + text.count("\n", 0, k)

    def flush() -> None:
        if buf:
            stack[-1].append("".join(buf))
            buf.clear()

    while i < n:
        ch = text[i]
        two = text[i:i + 2]
        if two == "{{":
            buf.append("{")
            i += 2
        elif two == "}}" and not (len(stack) > 1 and text[i - 1:i] == "?"):
            buf.append("}")
            i += 2
        elif two == "{?":
            flush()
            stack.append([])
            i += 2
        elif two == "?}" and len(stack) > 1:
            flush()
            inner = stack.pop()
            stack[-1].append(_Opt(inner, tuple(p.name for p in inner if isinstance(p, _Ref))))
            i += 2
        elif ch == "{":
            end = text.find("}", i + 1)
            if end < 0:
                raise _template_error(path, here(i), f"{where}: '{{' is not closed",
                                      "write {name} for a value, or {{ for a literal brace")
            name = text[i + 1:end].strip()
            flush()
            m = _STEPREF.match(name)
            if m:
                if command:
                    raise _template_error(path, here(i), f"{where}: step references ({{{name}}}) belong in the text",
                                          "refer to step numbers in the step text only")
                stack[-1].append(_StepRef(tuple(m.group(1).split("|")), bool(m.group(2))))
            elif _NAME.match(name):
                if command:
                    before, after = text[i - 1:i], text[end + 1:end + 2]
                    if before in ("'", '"') or after in ("'", '"'):
                        raise _template_error(
                            path, here(i), f"{where}: placeholder {{{name}}} is written inside quotes",
                            "leave placeholders unquoted in commands: the generator quotes every value for its shell")
                stack[-1].append(_Ref(name))
            else:
                raise _template_error(path, here(i), f"{where}: {{{name}}} is not a value name",
                                      "value names look like {port.ip}; write {{ and }} for literal braces")
            i = end + 1
        elif ch == "}":
            raise _template_error(path, here(i), f"{where}: a lone '}}'", "write }} for a literal brace")
        else:
            buf.append(ch)
            i += 1
    flush()
    if len(stack) > 1:
        raise _template_error(path, here(n), f"{where}: an optional part '{{?' is not closed with '?}}'")
    return _Tpl(stack[0], line)


# ------------------------------------------------------------------ YAML with lines

class _LDict(dict):
    line: int = 0
    key_line: dict
    key_style: dict


class _LList(list):
    line: int = 0


def _compose(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _template_error(path, None, f"cannot read the template: {exc}") from None
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        # an unclosed bracket or quote is found only where the file ends: name the line it opened on
        mark = exc.context_mark or exc.problem_mark
        where = ""
        if exc.context_mark and exc.problem_mark and exc.problem_mark.line != exc.context_mark.line:
            where = f" (noticed on line {exc.problem_mark.line + 1})"
        what = f"{exc.context}, {exc.problem}" if exc.context else f"{exc.problem or exc}"
        raise _template_error(path, mark.line + 1 if mark else None, f"not valid YAML: {what}{where}") from None
    except yaml.YAMLError as exc:
        raise _template_error(path, None, f"not valid YAML: {exc}") from None
    if root is None:
        raise _template_error(path, 1, "the template is empty", "a template has `section:` and `steps:`")

    def conv(node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            d = _LDict()
            d.line = node.start_mark.line + 1
            d.key_line, d.key_style = {}, {}
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    raise _template_error(path, k.start_mark.line + 1, "a key must be plain text")
                key = k.value
                if key in d:
                    raise _template_error(path, k.start_mark.line + 1, f"key {key!r} appears twice")
                d[key] = conv(v)
                # a block scalar's text starts on the line after its indicator
                d.key_line[key] = v.start_mark.line + 1 + (1 if getattr(v, "style", None) in ("|", ">") else 0)
                d.key_style[key] = getattr(v, "style", None)
            return d
        if isinstance(node, yaml.SequenceNode):
            lst = _LList(conv(x) for x in node.value)
            lst.line = node.start_mark.line + 1
            return lst
        value = node.value
        if node.tag.endswith(":bool") and node.style is None:
            return {"true": True, "false": False}.get(value.lower(), value)
        if node.tag.endswith(":int") and node.style is None:
            try:
                return int(value)
            except ValueError:
                return value
        return value
    return conv(root)


# ------------------------------------------------------------------ template model

@dataclass
class _Derive:
    name: str
    source: str
    rules: list[tuple[re.Pattern, str]]
    default: str | None


@dataclass
class _CommandTpl:
    shell: str
    script: _Tpl
    verify: _Tpl | None
    platform: str
    note: str
    when: list[tuple[str, re.Pattern]]
    invoke: _Tpl | None = None


@dataclass
class _StepTpl:
    id: str
    domain: str
    text: _Tpl
    when: list[tuple[str, re.Pattern]]
    commands: list[_CommandTpl]
    file: "_TemplateFile"
    order: int = 0


@dataclass
class _TemplateFile:
    path: Path
    rel: str                     # "windows/network.yaml"
    platform: str
    section: str
    title: str
    match: list[tuple[str, re.Pattern]]
    derives: dict[str, _Derive]
    steps: list[_StepTpl]
    rank: int = 0                # later directories win


_STEP_KEYS = {"id", "foreach", "when", "text", "automation", "note"}
_COMMAND_KEYS = {"shell", "script", "verify", "platform", "note", "when", "invoke"}
_FILE_KEYS = {"section", "title", "match", "derive", "steps", "description"}


def _conditions(path: Path, d: _LDict, key: str, known: Callable[[str], bool], where: str
                ) -> list[tuple[str, re.Pattern]]:
    raw = d.get(key)
    if raw is None:
        return []
    line = d.key_line.get(key, d.line)
    if not isinstance(raw, dict):
        raise _template_error(path, line, f"{where}: `{key}` must map value names to patterns",
                              "e.g. when: {port.roles: iscsi}")
    out = []
    for name, pattern in raw.items():
        ln = raw.key_line.get(name, line) if isinstance(raw, _LDict) else line
        if not known(name):
            raise _template_error(path, ln, f"{where}: `{key}` uses unknown value {name!r}")
        try:
            out.append((name, re.compile(str(pattern), re.I)))
        except re.error as exc:
            raise _template_error(path, ln, f"{where}: pattern {pattern!r} for {name} is not a valid "
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


def _load_file(path: Path, rel: str, platform: str) -> _TemplateFile:
    data = _compose(path)
    if not isinstance(data, _LDict):
        raise _template_error(path, getattr(data, "line", 1), "a template is a mapping with `section:` and `steps:`")
    for key in data:
        if key not in _FILE_KEYS:
            raise _template_error(path, data.key_line[key], f"unknown key {key!r}",
                                  f"a template file has: {', '.join(sorted(_FILE_KEYS))}")
    section = data.get("section")
    if section not in SECTION_KEYS:
        raise _template_error(path, data.key_line.get("section", data.line),
                              f"`section` must be one of {', '.join(SECTION_KEYS)}"
                              + (f" (found {section!r})" if section is not None else " (it is missing)"))
    steps_raw = data.get("steps")
    if not isinstance(steps_raw, list):
        raise _template_error(path, data.key_line.get("steps", data.line), "`steps` must be a list of steps")
    derives: dict[str, _Derive] = {}
    raw_derive = data.get("derive") or {}
    if not isinstance(raw_derive, dict):
        raise _template_error(path, data.key_line.get("derive", data.line), "`derive` must be a mapping")
    for name, spec in raw_derive.items():
        ln = raw_derive.key_line.get(name, data.line) if isinstance(raw_derive, _LDict) else data.line
        if not isinstance(spec, dict) or "from" not in spec or not isinstance(spec.get("map"), dict):
            raise _template_error(path, ln, f"derive {name!r} needs `from:` and `map:`",
                                  "e.g. derive: {group.smcli_raid: {from: group.raid, map: {raid10: '1'}}}")
        if "." not in name or any(name in d.names for d in DOMAINS.values()):
            raise _template_error(path, ln, f"derive {name!r} must be a new dotted name",
                                  "pick a name the generator does not already give, e.g. group.smcli_raid")
        rules = []
        for pat, value in spec["map"].items():
            try:
                rules.append((re.compile(str(pat), re.I), str(value)))
            except re.error as exc:
                raise _template_error(path, ln, f"derive {name!r}: pattern {pat!r} is not valid ({exc})") from None
        default = spec.get("default")
        derives[name] = _Derive(name, str(spec["from"]), rules, None if default is None else str(default))
    match: list[tuple[str, re.Pattern]] = []
    tf = _TemplateFile(path, rel, platform, section, str(data.get("title") or ""), match, derives, [])
    seen: set = set()
    for k, raw in enumerate(steps_raw):
        line = getattr(raw, "line", steps_raw.line if isinstance(steps_raw, _LList) else data.line)
        if not isinstance(raw, _LDict):
            raise _template_error(path, line, f"step {k + 1} must be a mapping with id, foreach and text")
        for key in raw:
            if key not in _STEP_KEYS:
                raise _template_error(path, raw.key_line[key], f"step {raw.get('id', k + 1)!r}: unknown key {key!r}",
                                      f"a step has: {', '.join(sorted(_STEP_KEYS))}")
        for key in ("id", "foreach", "text"):
            if not raw.get(key) or not isinstance(raw.get(key), str):
                raise _template_error(path, raw.key_line.get(key, raw.line),
                                      f"step {raw.get('id', k + 1)!r}: `{key}` is missing or not text",
                                      "every step needs id, foreach and text")
        sid = raw["id"]
        where = f"step {sid!r}"
        if sid in seen:
            raise _template_error(path, raw.key_line["id"], f"{where}: the id is used twice in this file")
        seen.add(sid)
        domain = DOMAINS.get(raw["foreach"])
        if domain is None:
            raise _template_error(path, raw.key_line["foreach"], f"{where}: unknown foreach {raw['foreach']!r}",
                                  f"one of: {', '.join(sorted(DOMAINS))}")
        derived = {n for n, d in derives.items()}
        known = _known(domain, derived)
        text = _parse_template(raw["text"], raw.key_line["text"], where, path, command=False)
        _check_names(path, text, known, where, domain, derives)
        when = _conditions(path, raw, "when", known, where)
        commands = []
        autos = raw.get("automation") or []
        if not isinstance(autos, list):
            raise _template_error(path, raw.key_line.get("automation", raw.line), f"{where}: `automation` must be a list")
        for c in autos:
            cl = getattr(c, "line", raw.line)
            if not isinstance(c, _LDict):
                raise _template_error(path, cl, f"{where}: each automation entry is a mapping with shell and script")
            for key in c:
                if key not in _COMMAND_KEYS:
                    raise _template_error(path, c.key_line[key], f"{where}: unknown automation key {key!r}",
                                          f"an automation entry has: {', '.join(sorted(_COMMAND_KEYS))}")
            shell = c.get("shell")
            if shell not in quoting.SHELLS:
                raise _template_error(path, c.key_line.get("shell", cl),
                                      f"{where}: shell must be one of {', '.join(quoting.SHELLS)}")
            if not isinstance(c.get("script"), str) or not c["script"].strip():
                raise _template_error(path, c.key_line.get("script", cl), f"{where}: automation needs a `script`")
            script = _parse_template(c["script"].rstrip("\n"), c.key_line["script"], where, path, command=True)
            _check_names(path, script, known, where, domain, derives)
            verify = None
            if c.get("verify"):
                verify = _parse_template(str(c["verify"]).rstrip("\n"), c.key_line["verify"], where, path, command=True)
                _check_names(path, verify, known, where, domain, derives)
            cwhen = _conditions(path, c, "when", known, where)
            invoke = None
            if c.get("invoke"):
                if shell != "vendor-cli":
                    raise _template_error(path, c.key_line["invoke"], f"{where}: `invoke` is for vendor-cli commands only")
                # a bash command line: its values are quoted for bash, the statements stay in their file
                invoke = _parse_template(str(c["invoke"]).strip(), c.key_line["invoke"], where, path, command=True)
                _check_names(path, invoke, known, where, domain, derives)
            commands.append(_CommandTpl(shell, script, verify, str(c.get("platform") or
                                                                   ("array" if shell == "vendor-cli" else platform)),
                                        str(c.get("note") or "").strip(), cwhen, invoke))
        tf.steps.append(_StepTpl(sid, domain.name, text, when, commands, tf, k))
    # `match:` is checked against the names of the file's first domain (all steps of a vendor file share one)
    if "match" in data:
        if not tf.steps:
            raise _template_error(path, data.key_line["match"], "`match` needs at least one step")
        dom = DOMAINS[tf.steps[0].domain]
        tf.match.extend(_conditions(path, data, "match", _known(dom, set(derives)), "match"))
    for d in derives.values():
        doms = {DOMAINS[s.domain] for s in tf.steps}
        if doms and not any(_known(dm, set(derives))(d.source) for dm in doms):
            raise _template_error(path, data.key_line.get("derive", data.line),
                                  f"derive {d.name!r}: unknown source value {d.source!r}")
    return tf


def _check_names(path: Path, tpl: _Tpl, known: Callable[[str], bool], where: str, domain: Domain,
                 derives: dict[str, _Derive]) -> None:
    for name in tpl.names():
        if not known(name):
            close = sorted(n for n in domain.names if n.split(".")[0] == name.split(".")[0])[:12]
            raise _template_error(
                path, tpl.line, f"{where}: unknown value {{{name}}} for foreach {domain.name!r}",
                f"known here: {', '.join(close) if close else ', '.join(sorted(domain.names)[:12])}")


_CACHE: dict[tuple[str, int, int], _TemplateFile] = {}


def _cached_load(path: Path, rel: str, platform: str) -> _TemplateFile:
    try:
        st = path.stat()
    except OSError as exc:
        raise _template_error(path, None, f"cannot read the template: {exc}") from None
    key = (str(path), st.st_mtime_ns, st.st_size)
    tf = _CACHE.get(key)
    if tf is None:
        tf = _load_file(path, rel, platform)
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[key] = tf
    return tf


def load_templates(templates_dir: str | os.PathLike | None = None,
                   extra_dirs: Sequence[str | os.PathLike] = ()) -> list[_TemplateFile]:
    """Every template file, built-in first; a file in a later directory with the same relative
    path replaces the earlier one.  Raises TemplateError for the first broken file."""
    dirs = [Path(templates_dir) if templates_dir is not None else TEMPLATES_DIR] + [Path(d) for d in extra_dirs]
    chosen: dict[str, tuple[int, Path]] = {}
    for rank, base in enumerate(dirs):
        if not base.is_dir():
            if rank == 0 and templates_dir is None:
                raise _template_error(base, None, "the built-in template directory is missing")
            raise _template_error(base, None, "template directory not found",
                                  "pass a directory holding <platform>/<section>.yaml files")
        for path in sorted(base.rglob("*.yaml")) + sorted(base.rglob("*.yml")):
            rel = path.relative_to(base).as_posix()
            parts = rel.split("/")
            if len(parts) != 2 or parts[0] not in PLATFORMS:
                raise _template_error(path, None, f"template {rel!r} is not under a platform directory",
                                      f"put it in one of: {', '.join(PLATFORMS)} (e.g. windows/network.yaml)")
            chosen[rel] = (rank, path)
    out = []
    for rel, (rank, path) in sorted(chosen.items()):
        tf = _cached_load(path, rel, rel.split("/")[0])
        tf.rank = rank
        out.append(tf)
    return out


# ========================================================================== generation

def _apply_derives(tf: _TemplateFile, base: Any) -> Any:
    if not tf.derives:
        return base
    vals: Values = {}
    for d in tf.derives.values():
        src = base.get(d.source)
        text = src.match_text() if src is not None else ""
        value = None
        if src is not None:
            for pat, out in d.rules:
                if pat.search(text):
                    value = out
                    break
        if value is None:
            value = d.default
        if value is not None and value != "":
            # the output is the template's own literal, as trusted as its script: inserted bare
            vals[d.name] = Val(value, src.source if src is not None else "", "literal")
    return _Layers(vals, base)


def _matches(conds: list[tuple[str, re.Pattern]], vals: Any) -> bool:
    for name, pat in conds:
        v = vals.get(name)
        if not pat.search(v.match_text() if v is not None else ""):
            return False
    return True


def _render(code: tuple, get: Callable[[str], Val | None], shell: str | None, used: dict[str, Val],
            missing: list[str]) -> str:
    """Fill a compiled template: prose as is, commands with every value quoted for `shell`."""
    out: list[str] = []
    append = out.append
    for p in code:
        kind = p[0]
        if kind == _LIT:
            append(p[1])
        elif kind == _REF:
            name = p[1]
            v = get(name)
            if v is None:
                if name not in missing:
                    missing.append(name)
                marker = MISSING.format(name)
                append(quoting.quote(shell, marker) if shell else marker)
                continue
            used[name] = v
            if shell is None:
                append(v.text)
            else:
                try:
                    append(v.shell_text(shell))
                except ValueError:  # a NUL in a bed value: cannot be a command argument
                    if name not in missing:
                        missing.append(name)
                    append(quoting.quote(shell, MISSING.format(name)))
        elif kind == _OPT:
            # an optional part is dropped as soon as one of its own values is missing
            for name in p[1]:
                if get(name) is None:
                    break
            else:
                inner_missing: list[str] = []
                text = _render(p[2], get, shell, used, inner_missing)
                if not inner_missing:
                    append(text)
        else:
            append(p[1])
    return "".join(out)


def _specificity(tf: _TemplateFile) -> tuple[int, int, int]:
    return (0 if tf.platform == "common" else 1, 1 if tf.match else 0, tf.rank)


@dataclass
class _Plan:
    """The step ids of one section in order, and each id's candidate definitions."""
    order: list[str] = field(default_factory=list)
    defs: dict[str, list[_StepTpl]] = field(default_factory=dict)
    title: str = ""


def _plans(files: list[_TemplateFile]) -> dict[str, _Plan]:
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
                        raise _template_error(st.file.path, st.text.line,
                                              f"step {st.id!r}: {{@{'|'.join(ref.step_ids)}}} names no step "
                                              f"of section {st.file.section!r} ({', '.join(unknown)})",
                                              f"steps there: {', '.join(plan.order)}")
    return plans


_SEQUENCE_SECTIONS = {"run"}   # steps in template order across all items (a timeline), not grouped per object


def generate(bed: Bed, templates_dir: str | os.PathLike | None = None,
             extra_dirs: Sequence[str | os.PathLike] = (), findings: list | None = None) -> Methodology:
    """The methodology of `bed`.  `findings`: validation findings already at hand (else validated
    here).  Raises TemplateError when a template is broken; never fails on a bed's missing values."""
    files = load_templates(templates_dir, extra_dirs)
    plans = _plans(files)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # tens of thousands of small, long-lived objects: the collector's rescans only cost time
    try:
        return _generate(bed, plans, findings)
    finally:
        if gc_was_enabled:
            gc.enable()


def _generate(bed: Bed, plans: dict[str, "_Plan"], findings: list | None) -> Methodology:
    ctx = _Ctx(bed)
    globals_ = ctx.bed_vals()
    globals_.update(_run_vals(ctx))
    domain_items: dict[str, list[Item]] = {}

    def items_of(name: str) -> list[Item]:
        if name not in domain_items:
            items = DOMAINS[name].build(ctx)
            for it in items:  # one flat lookup per item: rendering then reads plain dicts
                it.values = {**globals_, **it.values}
            domain_items[name] = items
        return domain_items[name]

    meth = Methodology(bed_name=(bed.bed.name if bed.bed is not None else "") or "untitled bed")
    number = 0
    for key, default_title in SECTIONS:
        plan = plans[key]
        produced: list[tuple[tuple, Step, str, list]] = []
        for order, sid in enumerate(plan.order):
            defs = plan.defs[sid]
            domain = defs[0].domain
            for item in items_of(domain):
                st = _choose(defs, item, globals_)
                if st is None:
                    continue
                vals = _apply_derives(st.file, item.values)
                if not _matches(st.when, vals):
                    continue
                step = _make_step(st, vals, item)
                sort = (order, item.group, item.sub) if key in _SEQUENCE_SECTIONS else (item.group, order, item.sub)
                produced.append((sort, step, sid, []))
        if not produced:
            continue
        produced.sort(key=lambda t: t[0])
        number += 1
        section = Section(str(number), plan.title or default_title, key=key)
        first: dict[str, str] = {}
        last: dict[str, str] = {}
        for k, (_, step, sid, _) in enumerate(produced, 1):
            step.number = f"{number}.{k}"
            first.setdefault(sid, step.number)
            last[sid] = step.number
            section.steps.append(step)
        def number_of(m: re.Match) -> str:
            table = last if m.group(2) else first
            for sid in m.group(1).split("|"):
                if sid in table:
                    return table[sid]
            return MISSING.format("step " + m.group(1))
        for step in section.steps:
            if "\x00" in step.text:
                step.text = re.sub("\x00([^\x00:]+)(:last)?\x00", number_of, step.text)
        meth.sections.append(section)
    meth.findings_summary = _summary(bed, findings, meth)
    return meth


def _choose(defs: list[_StepTpl], item: Item, globals_: Values) -> _StepTpl | None:
    """The most specific definition whose platform and `match:` fit the item."""
    for st in defs:
        tf = st.file
        if tf.platform != "common" and tf.platform != item.platform:
            continue
        if tf.match:
            vals = _apply_derives(tf, item.values)
            if not _matches(tf.match, vals):
                continue
        return st
    return None


def _make_step(st: _StepTpl, vals: Values, item: Item) -> Step:
    used: dict[str, Val] = {}
    missing: list[str] = []
    get = vals.get
    text = _render(st.text.code, get, None, used, missing)
    commands = []
    for ct in st.commands:
        if not _matches(ct.when, vals):
            continue
        script = _tidy(_render(ct.script.code, get, ct.shell, used, missing))
        if not script:
            continue  # every line was optional and the bed gives none of them
        verify = _tidy(_render(ct.verify.code, get, ct.shell, used, missing)) if ct.verify is not None else None
        invoke = None
        if ct.invoke is not None:
            # without its values (the array's addresses) the CLI cannot be run; the statements still print
            invoke_missing: list[str] = []
            invoke = _tidy(_render(ct.invoke.code, get, "bash", used, invoke_missing))
            invoke = None if invoke_missing else invoke
        commands.append(Command(ct.shell, script, verify or None, ct.platform, ct.note, invoke=invoke or None))
    sources = {}
    for v in used.values():
        if v.source and v.text:
            sources.setdefault(v.text, v.source)
    return Step("", " ".join(text.split()), item.target, commands,
                not commands, sources, missing, f"{st.file.rel}#{st.id}")


def _tidy(script: str) -> str:
    """Drop the lines an optional part emptied."""
    return "\n".join(line.rstrip() for line in script.split("\n") if line.strip())


def _summary(bed: Bed, findings: list | None, meth: Methodology) -> list[str]:
    out: list[str] = []
    if findings is None:
        try:
            from topology.validation import validate
            findings = validate(bed)
        except Exception as exc:  # noqa: BLE001 - a bed the validator cannot check still gets its procedure
            out.append(f"The bed could not be validated ({type(exc).__name__}: {exc}); check it before use.")
            findings = []
    for f in findings:
        if getattr(f, "accepted", False) or f.severity not in ("error", "warning"):
            continue
        subjects = ", ".join(f.subjects)
        out.append(f"{f.severity.upper()} {f.code}: {f.message}" + (f" ({subjects})" if subjects else ""))
    incomplete = [s for s in meth.steps() if s.unresolved]
    if incomplete:
        names = sorted({n for s in incomplete for n in s.unresolved})
        out.append(f"{len(incomplete)} step(s) need values the bed does not give ({', '.join(names[:8])}"
                   f"{', …' if len(names) > 8 else ''}); they are marked «missing: …» and are not run automatically.")
    return out


# ========================================================================== markdown

_FENCE_LANG = {"powershell": "powershell", "bash": "bash", "vendor-cli": "text"}
_SHELL_LABEL = {"powershell": "PowerShell", "bash": "bash", "vendor-cli": "vendor CLI"}


def _fence(code: str, lang: str) -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}{lang}\n{code}\n{ticks}"


def _md_escape(text: str) -> str:
    """Stop values from turning into markup (a name like *x*, <b> or [link]) while keeping Windows
    paths and snake_case names readable: only what CommonMark would interpret is escaped."""
    text = re.sub(r"\\(?=[!-/:-@\[-`{-~])", r"\\\\", text)
    text = re.sub(r"[*`<\[\]]", lambda m: "\\" + m.group(0), text)
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)


def to_markdown(m: Methodology) -> str:
    """The `methodology` command's Markdown: findings first, then the numbered sections."""
    lines = [f"# Test methodology: {_md_escape(m.bed_name)}", ""]
    if m.findings_summary:
        lines += ["> **The bed has problems.** The procedure below was generated anyway; values the bed does not",
                  "> give are marked «missing: …» and those steps are not run automatically.", ">"]
        lines += [f"> - {_md_escape(f)}" for f in m.findings_summary]
        lines.append("")
    total = sum(len(s.steps) for s in m.sections)
    auto = sum(1 for s in m.steps() if s.automation)
    lines += [f"{total} steps in {len(m.sections)} sections; {auto} with automation, {total - auto} manual.", ""]
    for sec in m.sections:
        lines += [f"## {sec.number}. {_md_escape(sec.title)}", ""]
        for st in sec.steps:
            where = f" *(on {_md_escape(st.target)})*" if st.target else ""
            lines.append(f"**{st.number}** {_md_escape(st.text)}{where}")
            lines.append("")
            if not st.automation:
                lines += ["*Manual step.*", ""]
            for c in st.automation:
                label = _SHELL_LABEL.get(c.shell, c.shell)
                head = f"{label}" + (f" on {_md_escape(c.target)}" if c.target else "")
                if c.note:
                    head += f" — {_md_escape(c.note)}"
                lines += [f"{head}:", "", _fence(c.script, _FENCE_LANG.get(c.shell, "text")), ""]
                if c.verify:
                    lines += ["Verify:", "", _fence(c.verify, _FENCE_LANG.get(c.shell, "text")), ""]
    return "\n".join(lines).rstrip() + "\n"


def domain_reference() -> str:
    """Every foreach domain and the values it gives: the reference for template authors."""
    out = []
    for name in sorted(DOMAINS):
        d = DOMAINS[name]
        own = sorted(n for n in d.names if n not in GLOBAL_NAMES)
        out.append(f"{name}: {d.doc}\n    " + ", ".join(own))
    out.append("everywhere: " + ", ".join(sorted(GLOBAL_NAMES)))
    out.append("free-form: " + ", ".join(w + "KEY" for w in WILDCARDS))
    return "\n".join(out)
