"""The words the product prints for the bed's keys and values: acronyms written the way the
industry writes them (iSCSI, MTU, NIC ...), port roles, server roles, connectivity and RAID
levels.  The procedure, the appendix, the forms and the edit messages all read them from
here, so one setting prints the same label everywhere ("CPU power mode", never "Cpu power mode").
"""
from __future__ import annotations

import re
from typing import Any

from topology.unknown import MARKER, NOT_STATED

ACRONYMS = {
    "ad": "AD", "bdm": "BDM", "bios": "BIOS", "cidr": "CIDR", "cpu": "CPU", "csv": "CSV", "dag": "DAG",
    "db": "DB", "dc": "DC", "dcb": "DCB", "dns": "DNS", "ds2": "DS2", "dsm": "DSM", "ese": "ESE", "fc": "FC",
    "fsct": "FSCT", "gb": "GB", "ha": "HA", "hba": "HBA", "hyperv": "Hyper-V", "id": "ID", "iis": "IIS",
    "io": "I/O", "iops": "IOPS", "ip": "IP", "iscsi": "iSCSI", "kb": "KB", "lacp": "LACP", "lag": "LAG",
    "lan": "LAN", "lldp": "LLDP", "lso": "LSO", "lun": "LUN", "mb": "MB", "mpio": "MPIO", "ms": "ms",
    "mtu": "MTU", "nic": "NIC", "nics": "NICs", "numa": "NUMA", "odx": "ODX", "opm": "OPM", "os": "OS",
    "pct": "(%)", "raid": "RAID", "rpm": "RPM", "rss": "RSS", "rstp": "RSTP", "san": "SAN", "sql": "SQL",
    "sriov": "SR-IOV", "ssd": "SSD", "stp": "STP", "tb": "TB", "url": "URL", "vhd": "VHD", "vhdx": "VHDX",
    "vlan": "VLAN", "vlans": "VLANs", "vm": "VM", "vmq": "VMQ", "vms": "VMs", "vt": "VT", "wwn": "WWN", "wwpn": "WWPN",
}

# Port roles as a label or a table cell names them.
ROLE_NAMES = {"iscsi": "iSCSI", "lan": "LAN", "heartbeat": "heartbeat", "live_migration": "live migration",
              "management": "management", "vm": "VM traffic", "fc": "FC", "replication": "replication",
              "unused": "unused"}
# Port roles inside a sentence of the procedure ("a client/LAN port", "the cluster heartbeat network").
ROLE_PROSE = {"iscsi": "iSCSI", "lan": "client/LAN", "heartbeat": "cluster heartbeat",
              "live_migration": "live migration", "management": "management", "vm": "virtual machine traffic",
              "fc": "Fibre Channel", "replication": "replication", "unused": "unused"}
SERVER_ROLE_NAMES = {"hypervisor": "Hypervisor host", "infrastructure": "Infrastructure server",
                     "load_client": "Load client", "test_controller": "Test controller",
                     "management": "Management server", "application": "Application server"}
CONNECTIVITY_NAMES = {"iscsi": "iSCSI", "fc": "Fibre Channel", "sas": "SAS", "nfs": "NFS", "smb": "SMB"}
RAID_NAMES = {"raid0": "RAID 0", "raid1": "RAID 1", "raid10": "RAID 10", "raid5": "RAID 5",
              "raid6": "RAID 6", "raid50": "RAID 50", "raid60": "RAID 60"}
# the units the live and printed charts print (a rate of I/O is "IO/s"; "IOPS" names the metric)
UNITS = {"iops": "IO/s", "ms": "ms", "mbps": "MB/s"}


def raid_name(level: str) -> str:
    """'raid10' -> 'RAID 10'; a level the product does not know is shown as written, in capitals."""
    if level is NOT_STATED:
        return MARKER
    return RAID_NAMES.get(level, level.upper() if level else "")


def choice_label(value: str) -> str:
    """A choice as a list or menu shows it: 'raid10' -> 'RAID 10', 'load_client' -> 'load client',
    'hyperv' -> 'Hyper-V'."""
    return RAID_NAMES.get(value) or words(value)


def metric_words(metric: str, unit: str = "") -> str:
    """A criterion's metric key as words, without the unit its threshold carries:
    'db_read_latency_avg_ms' with unit 'ms' -> 'DB read latency avg'."""
    parts = [p for p in re.split(r"[_\-]+", str(metric)) if p]
    kept = [p for p in parts if not unit or p.lower() != unit.lower()] or parts
    return " ".join(ACRONYMS.get(p.lower(), p) for p in kept)


def criterion_words(metric: str, comparison: str, threshold: Any, unit: str = "") -> str:
    """'DB read latency avg < 20 ms' (the live page, the results, the verdicts)."""
    value = f"{threshold:g}" if isinstance(threshold, (int, float)) else str(threshold)     # or "not stated"
    return f"{metric_words(metric, unit)} {comparison} {value}" + (f" {unit}" if unit else "")


def words(key: str) -> str:
    """A key as words inside a sentence: 'live_migration' -> 'live migration', 'iscsi' -> 'iSCSI'."""
    return " ".join(ACRONYMS.get(w.lower(), w) for w in re.split(r"[_\-]+", str(key)) if w)


def humanize(key: Any) -> str:
    """A key as a label: 'iscsi_optimization' -> 'iSCSI optimization', 'cpu_power_mode' ->
    'CPU power mode'; a label already written by a person (spaces or capitals) is kept."""
    text = str(key)
    if " " in text or any(ch.isupper() for ch in text):
        return text
    out = [ACRONYMS.get(w.lower(), w) for w in re.split(r"[_\-]+", text) if w]
    if out and out[0] == out[0].lower():
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)
