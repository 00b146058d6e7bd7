"""The other files the application reads or writes, for `make fuzz` (tests/fuzz_pipeline.py):

- result files: `parse` on mutated real captures (tests/data/captures, tests/data/metrics): any
  bytes give figures (with JSON that never holds NaN or Infinity) or a ResultFileError; the same
  bytes attached to a run are kept or refused the same way;
- inventories and host sheets: `import` on mutated files (tests/data/inventories and a CSV
  sheet): a plan or problems with lines; a plan applied, saved and loaded back;
- exports: a bed that loads is written as draw.io, GraphML and SVG and each is parsed back.

Anything else raised is a crash.
"""
from __future__ import annotations

import json
import random
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_TOOL_OF_FOLDER = {"fio": "fio", "iostat": "iostat", "diskspd": "diskspd", "dvdstore": "dvdstore",
                   "iometer": "iometer", "jetstress": "jetstress", "sqlio": "sqlio", "counters": None}

CSV_SHEET = """host,role,model,memory_gb,adapter,port,address,network,roles,mtu
R710-3,hypervisor,Dell PowerEdge R710,96,NIC1,SAN1,192.168.130.203/24,,iscsi,9000
R710-3,,,,NIC1,LAN1,10.0.0.3/24,,lan,1500
loadgen-9,load_client,,16,,,,,,
"""


# ---------------------------------------------------------------------- byte mutations

_BYTE_CHUNKS = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"1.5e3", b"9" * 5000, b"inf", b"-inf", b"NaN",
                b"Infinity", b"1e400", b"-1", b"0", b"\x00", b"\xff\xfe", b"\xfe\xff", b"\xd8\x00", b"\r\n", b"\n",
                b"<", b">", b"</Target>", b"<Target>", b"<ReadCount>", b"<!DOCTYPE x [<!ENTITY a 'aaaaaaaa'>]>",
                b"&a;", b"|", b"total:", b"Final:", b" et= ", b" opm= ", b"IOs/sec:", b"'Target Type,",
                b"(PDH-CSV 4.0)", b'"jobs": 7', b'"jobs": [7]', b'"disk": [', b"\\", b"\\u0000", b"\xed\xa0\x80",
                b"[" * 3000, b"{" * 3000, b"h[1:99999999999999999999999999999]", b"[group:children]", b"---",
                b"&anchor", b"*anchor", b"!!python/object:os.system", b"ansible_port=70000", b"=",
                b"\t", b"\x1b[31m", b"\x07"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    if rng.random() < 0.35:
        numbers = list(_NUMBER.finditer(raw[:200_000]))
        for _ in range(rng.randint(1, 4)):
            if numbers:
                m = rng.choice(numbers)
                value = rng.choice([b"1.5e3", b"9" * rng.choice((20, 400, 5000)), b"-1", b"0", b"1e400", b"inf",
                                    b"nan", b"-0", b"0.0000001", b"18446744073709551616", b"abc", b""])
                raw = raw[:m.start()] + value + raw[m.end():]
                numbers = list(_NUMBER.finditer(raw[:200_000]))
        return raw
    for _ in range(rng.randint(1, 6)):
        pos = rng.randint(0, len(raw))
        chunk = rng.choice(_BYTE_CHUNKS) if rng.random() < 0.7 else bytes(rng.randrange(256)
                                                                           for _ in range(rng.randint(1, 8)))
        action = rng.choice(("delete", "insert", "replace", "cut"))
        if action == "delete":
            raw = raw[:pos] + raw[pos + len(chunk):]
        elif action == "insert":
            raw = raw[:pos] + chunk + raw[pos:]
        elif action == "replace":
            raw = raw[:pos] + chunk + raw[pos + len(chunk):]
        else:
            raw = raw[:pos]          # a file cut short (the tool was killed)
    return raw


# ---------------------------------------------------------------------- parse

def capture_seeds() -> list[tuple[str | None, bytes]]:
    """(tool or None when told from the content, bytes) of every real capture and sample."""
    out: list[tuple[str | None, bytes]] = []
    for path in sorted((ROOT / "tests" / "data" / "captures").rglob("*")):
        if path.is_file() and path.name != "README.md":
            out.append((_TOOL_OF_FOLDER.get(path.parent.name), path.read_bytes()))
    for path in sorted((ROOT / "tests" / "data" / "metrics").glob("*")):
        if path.is_file():
            out.append((None, path.read_bytes()))
    return out


def run_parse(raw: bytes, tool: str | None, run_dir: Path) -> bool:
    """True when figures were read, False when the file was refused with a ResultFileError."""
    from app.metrics.parsed import ResultFileError
    from app.metrics.registry import parse_text
    from app.metrics.run_results import attach, attached, decode
    try:
        result = parse_text(decode(raw), tool)
    except ResultFileError as exc:
        assert str(exc), "a refusal says why"
        read = False
    else:
        json.dumps(result.as_dict(), allow_nan=False)       # ValueError: NaN or Infinity in the JSON
        result.as_text()
        read = True
    try:
        attach(run_dir, raw, "fuzz:result", tool=tool)
    except ResultFileError:
        pass
    for rec in attached(run_dir):
        json.dumps(rec.figures, allow_nan=False)
        rec.figure("iops")
    return read


# ---------------------------------------------------------------------- import

def inventory_seeds() -> list[tuple[str, str]]:
    """(file name, text) of every real inventory, and a host sheet."""
    folder = ROOT / "tests" / "data" / "inventories"
    out = [(p.name, p.read_text()) for p in sorted(folder.iterdir()) if p.is_file() and p.name != "README.md"]
    return out + [("hosts.csv", CSV_SHEET)]


def run_import(name: str, raw: bytes, bed_text: str, work: Path) -> bool:
    """True when the import planned and its result saved and loaded back equal, False when refused."""
    from topology import roundtrip
    from topology.fileformat import loads
    from topology.importing import plan_file
    source = work / name
    source.write_bytes(raw)
    bed_path = work / "bed.yaml"
    bed_path.write_text(bed_text)
    bed, text = roundtrip.load(bed_path)
    plan = plan_file(bed, source)
    if plan.problems:
        assert all(p.message for p in plan.problems)
        return False
    if plan.edit is None:
        return True
    plan.edit.apply()
    roundtrip.save(bed, bed_path, text)
    again = loads(bed_path.read_text(), "imported.yaml")
    assert again == bed, "an imported bed must load back equal"
    plan.edit.revert()
    return True


# ---------------------------------------------------------------------- exports

def export_and_parse_back(bed, out_dir: Path, svg: bool) -> None:
    """draw.io, GraphML (and SVG) written and opened again: each must be well-formed."""
    import networkx

    from app.diagram.export import export_diagram
    for fmt in ("drawio", "graphml") + (("svg",) if svg else ()):
        target = out_dir / f"diagram.{fmt}"
        try:
            export_diagram(bed, target, fmt)
        except OSError as exc:
            # refused before anything was written: only for a character XML cannot carry
            assert "would not be well-formed XML" in str(exc), exc
            continue
        ET.parse(target)
        if fmt == "graphml":
            networkx.read_graphml(target)


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
