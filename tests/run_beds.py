"""Linux beds for the run tests: N servers, each reached by a given access entry, with the
step templates of tests/run_templates (hello, mark, work, cabling)."""
from __future__ import annotations

from pathlib import Path

import yaml

TEMPLATES = str(Path(__file__).parent / "run_templates")


def linux_bed_text(hosts: list[dict], mark_dir: Path, work_s: float = 0, manual_check: bool = False) -> str:
    """`hosts`: dicts with `id` and the access fields (transport, address, port, user, key_file...)."""
    servers, access = [], []
    for h in hosts:
        servers.append({"id": h["id"], "role": "load_client", "platform": "linux", "os": "Debian 12",
                        "settings": {"mark_dir": str(mark_dir), "work_s": work_s,
                                     "manual_check": manual_check}})
        access.append({k: v for k, v in h.items() if k != "id"} | {"host": h["id"]})
    doc = {"format_version": 1, "bed": {"name": "run test bed"}, "servers": servers, "access": access}
    return yaml.safe_dump(doc, sort_keys=False)


def write_bed(path: Path, hosts: list[dict], **kw) -> Path:
    path.write_text(linux_bed_text(hosts, **kw), encoding="utf-8")
    return path


def write_fio_bed(path: Path, host: str, data_file: Path, access: dict, minutes: float = 0.05) -> Path:
    """One load client running the built-in fio load step (70 % random reads, 4 KB) on
    `data_file`, judged on a 20 ms read-latency criterion; `access` says how it is reached."""
    doc = {"format_version": 1, "bed": {"name": f"fio on {host}"},
           "servers": [{"id": host, "role": "load_client", "platform": "linux", "os": "Debian 12"}],
           "workloads": [{"id": "oltp", "tool": "fio", "driver": host, "targets": [host],
                          "parameters": {"filename": str(data_file), "size": "16m", "duration_minutes": minutes},
                          "access": [{"block_kb": 4, "read_pct": 70, "random_pct": 100}],
                          "criteria": [{"metric": "read_latency_avg_ms", "comparison": "<", "threshold": 20,
                                        "unit": "ms"}]}],
           "run_plan": {"repetitions": 1, "score": "median", "sample_interval_s": 1},
           "access": [{"host": host} | access]}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def with_a_formatted_volume(bed_file: Path) -> Path:
    """A bed of `write_fio_bed` with a LUN mapped to its load client, which formats it (a step that writes)."""
    doc = yaml.safe_load(bed_file.read_text())
    doc["servers"][0] |= {"software": ["fio", "sysstat", "open-iscsi"], "domain": "lab.example",
                          "multipath": "dm-multipath"}
    doc["arrays"] = [{"id": "array1", "model": "Linux SCSI target framework (tgt)", "connectivity": "iscsi",
                      "volumes": [{"name": "data", "size_gb": 1, "serial": "beaf12",
                                   "target": "iqn.2026-11.lab:array1", "drive": "/srv/data",
                                   "file_system": "ext4"}],
                      "hosts": [{"name": "client1", "server": "client1"}],
                      "mappings": [{"volume": "data", "to": "client1", "lun": 2}]}]
    bed_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    return bed_file
